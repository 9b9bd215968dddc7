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

/* The "dmsetup status" counters and the geometry, for the dump. */
struct cv_nl_snap {
	u64 nr_blocks, block_size, did, dnor, unshingled;
	u64 writes, damaging_writes, damaged_blocks, live_damage_writes,
	    live_damaged_blocks, damaged_reads, valid_blocks, commits,
	    mem_bytes;
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
