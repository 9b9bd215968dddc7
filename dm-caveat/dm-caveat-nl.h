/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-caveat: generic netlink family "dm-caveat" (dm-caveat-nl.c).
 *
 * Each target embeds a struct cv_nl_dev; the family lists the registered
 * ones in its dump and sends damage events for them. Event hooks never
 * sleep and never fail: what cannot be sent is counted as dropped.
 */
#ifndef DM_CAVEAT_NL_H
#define DM_CAVEAT_NL_H

#include <linux/device-mapper.h>
#include <linux/list.h>
#include <linux/types.h>

#include "smr-faults.h"

/*
 * A target's counters (cv_target.stats, under its lock); "dmsetup status"
 * and the dump report them. Here, so that the family reads them without
 * knowing the target.
 */
struct cv_stats {
	u64 writes;
	u64 damaging_writes;	/* writes with a non-empty damage range */
	u64 damaged_blocks;	/* sum of those ranges (blocks made maybe damaged) */
	u64 live_damage_writes;	/* writes that damaged valid blocks */
	u64 live_damaged_blocks; /* valid blocks they damaged: data lost */
	u64 damaged_reads;	/* reads touching maybe-damaged blocks */
	u64 commits;		/* whole metadata commits */
	u64 journal_writes;	/* damage journal blocks written */
	u64 cached_writes;	/* writes acknowledged from the write cache */
};

/* The counters and the geometry, for the dump. */
struct cv_nl_snap {
	u64 nr_blocks, block_size, did, dnor, unshingled;
	struct cv_stats st;
	u64 valid_blocks, mem_bytes;
	u64 model_busy_ms, model_lag_ms;	/* the timing model's, 0 without */
	struct smr_fault_counts faults;
	u8 power;			/* enum smr_power_state */
	u64 power_left;
};

/*
 * The name is the device's when its table was loaded (looking it up
 * sleeps; events must not): after "dmsetup rename" the old name is
 * reported until the table is loaded again.
 */
struct cv_nl_dev {
	struct list_head node;
	struct dm_target *ti;
	dev_t devt;
	char name[DM_NAME_LEN];
};

int cv_nl_init(void);
void cv_nl_exit(void);
void cv_nl_register(struct cv_nl_dev *d, struct dm_target *ti);
void cv_nl_unregister(struct cv_nl_dev *d);
/*
 * A write of blocks @wfirst..@wlast destroyed @live valid blocks, the
 * first at @vfirst and the last at @vlast, in its damage range
 * @dfirst..@dlast. Callable from map(), with no lock held.
 */
void cv_nl_damage(struct cv_nl_dev *d, u64 wfirst, u64 wlast, u64 vfirst,
		  u64 vlast, u64 dfirst, u64 dlast, u64 live);

/* Defined in dm-caveat-status.c. */
void cv_nl_snapshot(struct cv_nl_dev *d, struct cv_nl_snap *s);
void cv_nl_clear_stats(struct cv_nl_dev *d);

#endif /* DM_CAVEAT_NL_H */
