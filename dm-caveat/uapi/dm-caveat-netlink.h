/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dm-caveat generic netlink protocol (family "dm-caveat", version 1).
 *
 * Shared by the kernel module and userspace (smrd, smrctl): include it as
 * "dm-caveat-netlink.h" with -I dm-caveat/uapi. Documented in
 * docs/smrd.rst.
 *
 * Commands:
 *   CV_CMD_GET_DEV    dump: one message per caveat device with
 *                     CV_A_DEV_NAME, CV_A_DEV_MAJOR, CV_A_DEV_MINOR and
 *                     a nest CV_A_STATS of CV_S_* counters; doit with
 *                     CV_A_DEV_NAME: that device only.
 *   CV_CMD_GET_STATS  doit: the family's event counters.
 *   CV_CMD_SET        doit, CAP_NET_ADMIN: CV_A_EVENT_RATE,
 *                     CV_A_RESET_COUNTERS (family), or with CV_A_DEV_NAME
 *                     and CV_A_CLEAR_STATS: zero that device's counters.
 * Events, multicast on group "events":
 *   CV_CMD_EV_DAMAGE  a write destroyed live data: CV_A_WRITE_FIRST/LAST
 *                     (the writer's blocks), CV_A_VICTIM_FIRST/LAST (the
 *                     first and last valid block it damaged),
 *                     CV_A_DAMAGE_FIRST/LAST (its whole damage range),
 *                     CV_A_LIVE_BLOCKS (valid blocks lost).
 */
#ifndef _UAPI_DM_CAVEAT_NETLINK_H
#define _UAPI_DM_CAVEAT_NETLINK_H

#define CV_GENL_NAME		"dm-caveat"
#define CV_GENL_VERSION		1
#define CV_GENL_MCGRP_EVENTS	"events"

#define CV_NL_NAME_MAX		128
#define CV_NL_RATE_MAX		1000000

enum cv_nl_cmd {
	CV_CMD_UNSPEC,
	CV_CMD_GET_DEV,
	CV_CMD_GET_STATS,
	CV_CMD_SET,
	CV_CMD_EV_DAMAGE,
	__CV_CMD_MAX,
};
#define CV_CMD_MAX (__CV_CMD_MAX - 1)

enum cv_nl_attr {
	CV_A_UNSPEC,
	CV_A_PAD,
	CV_A_DEV_NAME,		/* string */
	CV_A_DEV_MAJOR,		/* u32 */
	CV_A_DEV_MINOR,		/* u32 */
	CV_A_STATS,		/* nest of CV_S_* */
	CV_A_WRITE_FIRST,	/* u64, blocks */
	CV_A_WRITE_LAST,	/* u64 */
	CV_A_VICTIM_FIRST,	/* u64 */
	CV_A_VICTIM_LAST,	/* u64 */
	CV_A_DAMAGE_FIRST,	/* u64 */
	CV_A_DAMAGE_LAST,	/* u64 */
	CV_A_LIVE_BLOCKS,	/* u64 */
	CV_A_EVENT_RATE,	/* u32, events per second; 0 = no events */
	CV_A_RESET_COUNTERS,	/* flag */
	CV_A_CLEAR_STATS,	/* flag, with CV_A_DEV_NAME */
	CV_A_EVENTS_SENT,	/* u64 */
	CV_A_EVENTS_DROPPED,	/* u64 */
	__CV_A_MAX,
};
#define CV_A_MAX (__CV_A_MAX - 1)

/* Device counters: the "dmsetup status" fields and geometry; all u64. */
enum cv_nl_stat {
	CV_S_UNSPEC,
	CV_S_PAD,
	CV_S_NR_BLOCKS,
	CV_S_BLOCK_SIZE,
	CV_S_DID,
	CV_S_DNOR,
	CV_S_UNSHINGLED,
	CV_S_WRITES,
	CV_S_DAMAGING_WRITES,
	CV_S_DAMAGED_BLOCKS,
	CV_S_LIVE_DAMAGE_WRITES,
	CV_S_LIVE_DAMAGED_BLOCKS,
	CV_S_DAMAGED_READS,
	CV_S_VALID_BLOCKS,
	CV_S_COMMITS,
	CV_S_MEM_BYTES,
	CV_S_JOURNAL_WRITES,	/* damage journal blocks written */
	CV_S_MODEL_BUSY_MS,	/* the timing model's busy time (docs/timing.md) */
	CV_S_MODEL_LAG_MS,	/* how far the backing fell behind it */
	CV_S_CACHED_WRITES,	/* writes the write cache completed early */
	/* Media faults (docs/dm-smr.rst, "Media faults"). */
	CV_S_BAD_READ_ERRORS,
	CV_S_BAD_WRITE_ERRORS,
	CV_S_BAD_REMAPS,
	CV_S_TRANSIENT_ERRORS,
	CV_S_DELAYED_IOS,
	/* The power switch: 0 on, 1 armed, 2 cut; commands left when armed. */
	CV_S_POWER,
	CV_S_POWER_LEFT,
	__CV_S_MAX,
};
#define CV_S_MAX (__CV_S_MAX - 1)

#endif /* _UAPI_DM_CAVEAT_NETLINK_H */
