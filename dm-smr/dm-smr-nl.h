/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-smr: generic netlink events and device dumps (dm-smr-nl.c).
 *
 * Every hook is called from process context, never under smr_drive.lock;
 * none of them may sleep for long or fail the caller: an event that cannot
 * be sent is counted as dropped.
 */
#ifndef DM_SMR_NL_H
#define DM_SMR_NL_H

#include <linux/types.h>

struct smr_table;
struct smr_drive;
struct smr_hm_snap;
struct smr_dm_snap;

/*
 * Where the dump reads a device's counters: the target hands these over
 * when it registers, so the family never calls up into the engines that
 * send it events (dm-smr-target.c provides them).
 */
struct smr_nl_counters {
	void (*hm)(struct smr_table *t, struct smr_hm_snap *s);
	void (*dm)(struct smr_table *t, struct smr_dm_snap *s);
};

enum smr_clean_reason {
	SMR_CLEAN_IDLE = 1,
	SMR_CLEAN_FOREGROUND = 2,
	SMR_CLEAN_MANUAL = 3,
};

int smr_nl_init(void);
void smr_nl_exit(void);
/*
 * @drive: the drive events of table @t come from, its own (drive-managed)
 * or the engine's (host-managed). Events name the drive that sends them.
 */
void smr_nl_register(struct smr_table *t, struct smr_drive *drive,
		     const struct smr_nl_counters *c);
void smr_nl_unregister(struct smr_table *t);
void smr_nl_clean_start(struct smr_drive *src, u32 band,
			enum smr_clean_reason r);
void smr_nl_clean_done(struct smr_drive *src, u32 band,
		       enum smr_clean_reason r, u64 read_bytes,
		       u64 write_bytes, u64 duration_us);
/* pct 25/50/75/100: occupancy rose past it; 0: the cache became empty. */
void smr_nl_cache_level(struct smr_drive *src, unsigned int pct);
/* Idle and fully clean; clean_ms is the cleaning time since the last write. */
void smr_nl_idle_clean(struct smr_drive *src, u64 clean_ms);
/*
 * Host-managed: a write refused by the zone condition or write pointer
 * (@sector, @nr_sectors and @wp are dm device sectors). Callable from
 * map(), with no lock held.
 */
void smr_nl_zone_error(struct smr_drive *src, u32 zone, u8 cond,
		       sector_t sector, u32 nr_sectors, sector_t wp);
/*
 * A metadata commit failed where nothing reports it to a caller (at
 * suspend, at resume); @err is the negative errno. Process context.
 */
void smr_nl_commit_error(struct smr_drive *src, int err);

#endif /* DM_SMR_NL_H */
