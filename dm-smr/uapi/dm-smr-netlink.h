/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dm-smr generic netlink protocol (family "dm-smr", version 1).
 *
 * Shared by the kernel module and userspace (smrd, smrctl): include it as
 * "dm-smr-netlink.h" with -I dm-smr/uapi. Documented in docs/smrd.rst.
 *
 * Commands:
 *   SMR_CMD_GET_DEV    dump: one message per smr device; each carries
 *                      SMR_A_DEV_NAME, SMR_A_DEV_MAJOR, SMR_A_DEV_MINOR,
 *                      SMR_A_MODE and a nest of counters, SMR_A_HM_STATS
 *                      (SMR_HM_*) or SMR_A_DM_STATS (SMR_DM_*).
 *                      doit with SMR_A_DEV_NAME: that device only.
 *   SMR_CMD_GET_STATS  doit: the family's event counters (SMR_A_EVENTS_*,
 *                      SMR_A_EVENT_RATE).
 *   SMR_CMD_SET        doit, CAP_NET_ADMIN: SMR_A_EVENT_RATE (events per
 *                      second, all devices together) and/or
 *                      SMR_A_RESET_COUNTERS.
 * Events, multicast on group SMR_MCGRP_EVENTS ("events"), each with the
 * device attributes (name, major, minor):
 *   SMR_CMD_EV_CLEAN_START  SMR_A_BAND, SMR_A_REASON
 *   SMR_CMD_EV_CLEAN_DONE   SMR_A_BAND, SMR_A_REASON, SMR_A_READ_BYTES,
 *                           SMR_A_WRITE_BYTES, SMR_A_DURATION_US
 *   SMR_CMD_EV_CACHE_LEVEL  SMR_A_CACHE_PCT (25/50/75/100 crossed upward,
 *                           0 = the cache became empty)
 *   SMR_CMD_EV_IDLE_CLEAN   SMR_A_CLEAN_MS (cleaning time since the device
 *                           was last written)
 *   SMR_CMD_EV_ZONE_ERROR   SMR_A_ZONE, SMR_A_ZONE_COND, SMR_A_SECTOR,
 *                           SMR_A_SECTORS, SMR_A_ZONE_WP (host-managed: a
 *                           write the target refused for the zone's
 *                           condition or write pointer; writes the dm core
 *                           refuses first send none)
 * Events are rate limited (SMR_A_EVENT_RATE per second); what does not fit
 * is counted in SMR_A_EVENTS_DROPPED.
 */
#ifndef _UAPI_DM_SMR_NETLINK_H
#define _UAPI_DM_SMR_NETLINK_H

#define SMR_GENL_NAME		"dm-smr"
#define SMR_GENL_VERSION	1
#define SMR_GENL_MCGRP_EVENTS	"events"

/* Longest device name, with its NUL (DM_NAME_LEN). */
#define SMR_NL_NAME_MAX		128
/* Largest SMR_A_EVENT_RATE. */
#define SMR_NL_RATE_MAX		1000000

enum smr_nl_cmd {
	SMR_CMD_UNSPEC,
	SMR_CMD_GET_DEV,
	SMR_CMD_GET_STATS,
	SMR_CMD_SET,
	SMR_CMD_EV_CLEAN_START,
	SMR_CMD_EV_CLEAN_DONE,
	SMR_CMD_EV_CACHE_LEVEL,
	SMR_CMD_EV_IDLE_CLEAN,
	SMR_CMD_EV_ZONE_ERROR,
	SMR_CMD_EV_COMMIT_ERROR,
	__SMR_CMD_MAX,
};
#define SMR_CMD_MAX (__SMR_CMD_MAX - 1)

enum smr_nl_mode {
	SMR_NL_MODE_HOST_MANAGED = 1,
	SMR_NL_MODE_DRIVE_MANAGED = 2,
};

enum smr_nl_reason {
	SMR_NL_REASON_IDLE = 1,
	SMR_NL_REASON_FOREGROUND = 2,
	SMR_NL_REASON_MANUAL = 3,
};

enum smr_nl_attr {
	SMR_A_UNSPEC,
	SMR_A_PAD,
	SMR_A_DEV_NAME,		/* string */
	SMR_A_DEV_MAJOR,	/* u32 */
	SMR_A_DEV_MINOR,	/* u32 */
	SMR_A_MODE,		/* u8, enum smr_nl_mode */
	SMR_A_HM_STATS,		/* nest of SMR_HM_* */
	SMR_A_DM_STATS,		/* nest of SMR_DM_* */
	SMR_A_BAND,		/* u32 */
	SMR_A_REASON,		/* u8, enum smr_nl_reason */
	SMR_A_READ_BYTES,	/* u64 */
	SMR_A_WRITE_BYTES,	/* u64 */
	SMR_A_DURATION_US,	/* u64 */
	SMR_A_CACHE_PCT,	/* u32 */
	SMR_A_CLEAN_MS,		/* u64 */
	SMR_A_ZONE,		/* u32 */
	SMR_A_ZONE_COND,	/* u8, BLK_ZONE_COND_* */
	SMR_A_SECTOR,		/* u64, sector of the dm device */
	SMR_A_SECTORS,		/* u32 */
	SMR_A_ZONE_WP,		/* u64, sector of the dm device */
	SMR_A_EVENT_RATE,	/* u32, events per second; 0 = no events */
	SMR_A_RESET_COUNTERS,	/* flag */
	SMR_A_EVENTS_SENT,	/* u64 */
	SMR_A_EVENTS_DROPPED,	/* u64 */
	SMR_A_ERRNO,		/* u32, a positive errno */
	__SMR_A_MAX,
};
#define SMR_A_MAX (__SMR_A_MAX - 1)

/* Host-managed counters, as the "dmsetup status" fields; all u64. */
enum smr_nl_hm_attr {
	SMR_HM_UNSPEC,
	SMR_HM_PAD,
	SMR_HM_NR_ZONES,
	SMR_HM_CONV_ZONES,
	SMR_HM_IMP_OPEN,
	SMR_HM_EXP_OPEN,
	SMR_HM_CLOSED,
	SMR_HM_FULL,
	SMR_HM_READONLY,
	SMR_HM_OFFLINE,
	SMR_HM_WRITES,
	SMR_HM_WRITE_SECTORS,
	SMR_HM_READS,
	SMR_HM_READ_SECTORS,
	SMR_HM_RESETS,
	SMR_HM_FINISHES,
	SMR_HM_OPENS,
	SMR_HM_CLOSES,
	SMR_HM_IMP_CLOSES,
	SMR_HM_WP_ERRORS,
	SMR_HM_ERRORS,
	SMR_HM_COMMITS,
	SMR_HM_MEM_BYTES,
	/* The timing model's, ms (0 without one; docs/timing.md). */
	SMR_HM_MODEL_BUSY_MS,
	SMR_HM_MODEL_LAG_MS,
	/* Media faults (docs/dm-smr.rst, "Media faults"). */
	SMR_HM_BAD_READ_ERRORS,
	SMR_HM_BAD_WRITE_ERRORS,
	SMR_HM_BAD_REMAPS,
	SMR_HM_TRANSIENT_ERRORS,
	SMR_HM_DELAYED_IOS,
	/* The drive's power: 0 on, 1 armed, 2 cut; commands left when armed. */
	SMR_HM_POWER,
	SMR_HM_POWER_LEFT,
	__SMR_HM_MAX,
};
#define SMR_HM_MAX (__SMR_HM_MAX - 1)

/*
 * Drive-managed counters, as the "dmsetup status" fields; all u64
 * (SMR_DM_WA_MILLI is write amplification x 1000, SMR_DM_STATE 0 idle,
 * 1 clean-bg, 2 clean-fg, 3 clean-manual, SMR_DM_POLICY 0 fifo, 1 greedy,
 * 2 cost-benefit).
 */
enum smr_nl_dm_attr {
	SMR_DM_UNSPEC,
	SMR_DM_PAD,
	SMR_DM_NR_BANDS,
	SMR_DM_BAND_SECTORS,
	SMR_DM_CACHE_USED,
	SMR_DM_CACHE_TOTAL,
	SMR_DM_CACHE_LIVE,
	SMR_DM_INDEX_EXTENTS,
	SMR_DM_INDEX_BYTES,
	SMR_DM_DIRTY_BANDS,
	SMR_DM_RMW_BG,
	SMR_DM_RMW_FG,
	SMR_DM_RMW_MANUAL,
	SMR_DM_BG_ABORTS,
	SMR_DM_CLEAN_READ_SECTORS,
	SMR_DM_CLEAN_WRITE_SECTORS,
	SMR_DM_CLEAN_MS_BG,
	SMR_DM_CLEAN_MS_FG,
	SMR_DM_CLEAN_MS_SINCE_BUSY,
	SMR_DM_HOST_READ_SECTORS,
	SMR_DM_HOST_WRITE_SECTORS,
	SMR_DM_CACHE_WRITE_SECTORS,
	SMR_DM_BYPASS_WRITE_SECTORS,
	SMR_DM_WA_MILLI,
	SMR_DM_STATE,
	SMR_DM_POLICY,
	SMR_DM_COMMITS,
	SMR_DM_ERRORS,
	SMR_DM_MEM_BYTES,
	/* The timing model's, ms (0 without one; docs/timing.md). */
	SMR_DM_MODEL_BUSY_MS,
	SMR_DM_MODEL_CLEAN_MS,
	SMR_DM_MODEL_LAG_MS,
	/* Media faults (docs/dm-smr.rst, "Media faults"). */
	SMR_DM_BAD_READ_ERRORS,
	SMR_DM_BAD_WRITE_ERRORS,
	SMR_DM_BAD_REMAPS,
	SMR_DM_TRANSIENT_ERRORS,
	SMR_DM_DELAYED_IOS,
	SMR_DM_CLEAN_TIMEOUTS,	/* writes failed waiting for cleaning */
	/* The drive's power: 0 on, 1 armed, 2 cut; commands left when armed. */
	SMR_DM_POWER,
	SMR_DM_POWER_LEFT,
	__SMR_DM_MAX,
};
#define SMR_DM_MAX (__SMR_DM_MAX - 1)

#endif /* _UAPI_DM_SMR_NETLINK_H */
