// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr-zdev.c: the zoned block device host-managed mode runs on.
 *
 * Since 6.11 the dm core takes a mapped device's zones and zone limits
 * from its zoned lower devices only: it reports the zones of every device
 * a target's iterate_devices names, refuses the table when one is not
 * zoned (-EOPNOTSUPP from blkdev_report_zones), and drops open/active
 * limits a target sets in io_hints. A target can therefore no longer
 * publish zones of its own over a plain disk. Instead this module owns a
 * bio-based, host-managed zoned gendisk per backing device, "smrhm<N>"
 * (the engine): it runs the zone state machine of dm-smr-hm.c over the
 * backing disk, and the smr target maps to it the way dm-linear maps to
 * a real SMR drive. dm then sees a zoned lower device on every kernel,
 * 6.1 included, so there is one host-managed path (docs/dm-smr.rst,
 * "Design of host-managed mode"). The target's bios reach the engine by
 * a function call, not a second submission (smr_zdev_map()).
 *
 * The engine belongs to the tables that use it: the constructor creates
 * it, or finds it again by backing device on a reload (the new table's
 * constructor runs while the old table is live), and the last table's
 * destructor removes it. Its disk supports zone append natively, so no
 * kernel emulates append for it and none allocates zone write plugs;
 * dm-smr-hm.c keeps completions in write pointer order itself.
 *
 * Kernel differences used here (compat/probes/):
 *  - 6.9+ allocates the disk with its queue_limits; before, setters.
 *  - 6.11+ marks it zoned in limits.features; 6.8-6.10 limits.zoned; 6.1
 *    disk_set_zoned(). 6.9+ keeps the open/active limits in queue_limits.
 *  - 6.10+ lets bio-based disks call blk_revalidate_disk_zones(), which
 *    sets nr_zones and the conventional zone bitmap; 6.1 only allows it
 *    for blk-mq, and a bio-based driver sets nr_zones itself (dm does).
 *  - 6.19+ report_zones takes struct blk_report_zones_args.
 */
#include <linux/idr.h>
#include <linux/kdev_t.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "dm-smr.h"

struct smr_zdev {
	struct smr_zoned zc;		/* the engine: zone state, its drive */
	struct gendisk *disk;
	struct list_head node;		/* smr_zdevs */
	unsigned int tables;		/* tables using it, smr_zdev_lock */
	bool settled;			/* lost, and nothing in flight any more */
	int id;
	dev_t backing;
};

static LIST_HEAD(smr_zdevs);
static DEFINE_MUTEX(smr_zdev_lock);
static DEFINE_IDA(smr_zdev_ida);
/*
 * Engines allocated and not yet freed, for module exit. The last one
 * wakes exit under smr_zdevs_alive_lock, which exit takes after its wait:
 * the waker is then done with the waitqueue (in this module's data).
 */
static atomic_t smr_zdevs_alive = ATOMIC_INIT(0);
static DECLARE_WAIT_QUEUE_HEAD(smr_zdevs_freed);
static DEFINE_SPINLOCK(smr_zdevs_alive_lock);

static void smr_zdev_gone(void)
{
	spin_lock(&smr_zdevs_alive_lock);
	if (atomic_dec_and_test(&smr_zdevs_alive))
		wake_up(&smr_zdevs_freed);
	spin_unlock(&smr_zdevs_alive_lock);
}

struct smr_zoned *smr_zdev_ctx(struct smr_zdev *zdev)
{
	return &zdev->zc;
}

dev_t smr_zdev_devt(struct smr_zdev *zdev)
{
	return disk_devt(zdev->disk);
}

/*
 * A host bio after a power cut, failed before it is counted in
 * zc->inflight (smr_hm_power_fail() ends one that was): a host that keeps
 * sending would keep the count above 0 for good, and the settle that
 * waits for 0 (the power coming back) would time out.
 */
static void smr_zdev_refuse(struct smr_zoned *zc, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&zc->d.lock, flags);
	zc->d.errors++;
	spin_unlock_irqrestore(&zc->d.lock, flags);
	bio_io_error(bio);
}

/* The engine takes @bio, within one zone and SMR_ZDEV_MAX_SECTORS. */
static void smr_zdev_take(struct smr_zdev *zdev, struct bio *bio)
{
	if (unlikely(smr_power_is_cut(&zdev->zc.d.power))) {
		smr_zdev_refuse(&zdev->zc, bio);
		return;
	}
	atomic_inc(&zdev->zc.inflight);
	/*
	 * Counted before the power is looked at: a settle that finds none
	 * in flight must not miss a command that found the power on.
	 */
	smp_mb__after_atomic();
	/* Each command the drive takes counts toward an armed power cut. */
	if (unlikely(smr_power_io(&zdev->zc.d.power, bio->bi_opf,
				  bio->bi_iter.bi_size))) {
		smr_hm_power_fail(&zdev->zc, bio);
		return;
	}
	smr_hm_submit(&zdev->zc, bio);
}

static void smr_zdev_submit_bio(struct bio *bio)
{
	struct smr_zdev *zdev = bio->bi_bdev->bd_disk->private_data;

	/* Within one zone from here on (chunk_sectors is the zone size). */
	bio = bio_split_to_limits(bio);
	if (bio)
		smr_zdev_take(zdev, bio);
}

#ifdef HAVE_REPORT_ZONES_ARGS
static int smr_zdev_report_zones(struct gendisk *disk, sector_t sector,
				 unsigned int nr_zones,
				 struct blk_report_zones_args *args)
#else
static int smr_zdev_report_zones(struct gendisk *disk, sector_t sector,
				 unsigned int nr_zones, report_zones_cb cb,
				 void *data)
#endif
{
	struct smr_zdev *zdev = disk->private_data;
	struct smr_zoned *zc = &zdev->zc;
	u32 zno = smr_zone_of(zc, sector);
	unsigned int i;
	int ret;

	for (i = 0; i < nr_zones && zno < zc->geo.nr_zones; i++, zno++) {
		struct blk_zone blkz;

		smr_hm_fill_zone(zc, zno, &blkz);
#ifdef HAVE_REPORT_ZONES_ARGS
		ret = disk_report_zone(disk, &blkz, i, args);
#else
		ret = cb(&blkz, i, data);
#endif
		if (ret)
			return ret;
	}
	return i;
}

static void smr_zdev_free(struct smr_zdev *zdev);

/*
 * The last reference to the disk is gone (an opener of /dev/smrhmN may
 * hold one past smr_zdev_put()): only now may the zone state go.
 */
static void smr_zdev_free_disk(struct gendisk *disk)
{
	smr_zdev_free(disk->private_data);
}

static const struct block_device_operations smr_zdev_fops = {
	.owner = THIS_MODULE,
	.submit_bio = smr_zdev_submit_bio,
	.report_zones = smr_zdev_report_zones,
	.free_disk = smr_zdev_free_disk,
};

/*
 * Largest bio the engine takes in one piece (it splits the rest), and so
 * the largest zone append: at most the block layer's default max_sectors
 * (1280 KiB), which 6.1 applies to appends too (bio_split_rw() must never
 * have to split one).
 */
#define SMR_ZDEV_MAX_SECTORS	(SZ_1M >> SECTOR_SHIFT)

/*
 * The smr target's map() for a bio it aimed at this engine's disk
 * (remapped to the disk's sectors): the engine takes it here, without a
 * second trip through the block layer. That trip cost a bio time stamp
 * (under TCG an emulated clock read), the split, a queue reference, and
 * for a read the engine's clone; docs/benchmarks-log.md (2026-11-28) has
 * the figures.
 *
 * The dm core cuts bios only at the table's targets (the target sets no
 * max_io_len; 6.1 splits only discards and write-zeroes to the queue
 * limits, later kernels also zone-crossing bios of a device that
 * emulates zone append, which this one does not), so a bio may cross a
 * zone or be larger than the engine takes in one piece. A read of durable data never comes here: the target aimed it at
 * the backing device already, whatever its size (smr_hm_read_remap();
 * that device splits for itself). Anything else larger than
 * SMR_ZDEV_MAX_SECTORS, or crossing a zone, goes the long way, through
 * the disk, which splits it.
 *
 * A bio the engine takes keeps the bi_bdev dm gave its clone, the dm
 * disk (dm's alloc_tio() sets it, 6.1 to 7.x): dm's completion applies a
 * zone append's result only for a clone of a zoned bi_bdev, which that
 * disk is (dm_zone_endio()). The engine itself never looks at it.
 *
 * Returns DM_MAPIO_REMAPPED (the long way: aimed at the disk) or
 * DM_MAPIO_SUBMITTED (the engine ends it).
 */
int smr_zdev_map(struct smr_zdev *zdev, struct bio *bio)
{
	struct smr_zoned *zc = &zdev->zc;
	sector_t sector = bio->bi_iter.bi_sector;
	u32 nr = bio_sectors(bio);
	bool one_zone = !nr ||
		smr_zone_of(zc, sector) == smr_zone_of(zc, sector + nr - 1);

	if (!one_zone || nr > SMR_ZDEV_MAX_SECTORS) {
		bio_set_dev(bio, zdev->disk->part0);
		return DM_MAPIO_REMAPPED;
	}
	smr_zdev_take(zdev, bio);
	return DM_MAPIO_SUBMITTED;
}

static struct gendisk *smr_zdev_alloc_disk(const struct smr_hm_geo *g)
{
	u32 append = min_t(u64, g->zone_capacity, SMR_ZDEV_MAX_SECTORS);
#ifdef HAVE_BLK_ALLOC_DISK_LIMITS
	struct queue_limits lim = {
		.logical_block_size = SMR_BLOCK_SIZE,
		.physical_block_size = SMR_BLOCK_SIZE,
		.io_min = SMR_BLOCK_SIZE,
		.max_hw_sectors = SMR_ZDEV_MAX_SECTORS,
		.max_segments = USHRT_MAX,
		.max_segment_size = UINT_MAX,
		.chunk_sectors = g->zone_sectors,
		.zone_write_granularity = SMR_BLOCK_SIZE,
		.max_open_zones = g->eff_max_open,
		.max_active_zones = g->eff_max_active,
	};

#ifdef HAVE_QL_MAX_HW_ZONE_APPEND
	lim.max_hw_zone_append_sectors = append;
#else
	lim.max_zone_append_sectors = append;
#endif
#ifdef HAVE_BLK_FEAT_ZONED
	lim.features = BLK_FEAT_ZONED | BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA;
#else
	lim.zoned = true;
#endif
	return blk_alloc_disk(&lim, NUMA_NO_NODE);
#else
	struct gendisk *disk = blk_alloc_disk(NUMA_NO_NODE);
	struct request_queue *q;

	if (!disk)
		return ERR_PTR(-ENOMEM);
	q = disk->queue;
	blk_queue_logical_block_size(q, SMR_BLOCK_SIZE);
	blk_queue_physical_block_size(q, SMR_BLOCK_SIZE);
	blk_queue_io_min(q, SMR_BLOCK_SIZE);
	blk_queue_max_hw_sectors(q, SMR_ZDEV_MAX_SECTORS);
	blk_queue_max_segments(q, USHRT_MAX);
	blk_queue_max_segment_size(q, UINT_MAX);
	blk_queue_chunk_sectors(q, g->zone_sectors);
	disk_set_zoned(disk, BLK_ZONED_HM);
	blk_queue_max_zone_append_sectors(q, append);
	blk_queue_zone_write_granularity(q, SMR_BLOCK_SIZE);
	disk_set_max_open_zones(disk, g->eff_max_open);
	disk_set_max_active_zones(disk, g->eff_max_active);
	blk_queue_write_cache(q, true, true);
	return disk;
#endif
}

static void smr_zdev_free(struct smr_zdev *zdev)
{
	/* The engine's worker looks at the model: it goes first. */
	smr_hm_ctx_exit(&zdev->zc);
	smr_tm_destroy(zdev->zc.d.tm);
	zdev->zc.d.tm = NULL;
	if (zdev->id >= 0)
		ida_free(&smr_zdev_ida, zdev->id);
	kfree(zdev);
	smr_zdev_gone();	/* last: module exit may proceed */
}

/*
 * Module exit: wait until every engine's disk is released. Its last
 * reference (an opener's, or a sysfs reader's) goes within moments of
 * the module reference, so this is a short wait; say so if it is not.
 */
void smr_zdev_wait_freed(void)
{
	while (!wait_event_timeout(smr_zdevs_freed,
				   !atomic_read(&smr_zdevs_alive), 10 * HZ))
		DMWARN("module exit waits for %d zoned device(s) to be released",
		       atomic_read(&smr_zdevs_alive));
	/* The last waker has left the waitqueue. */
	spin_lock(&smr_zdevs_alive_lock);
	spin_unlock(&smr_zdevs_alive_lock);
}

/* Does the table line of @ht describe the drive @zdev emulates? */
static bool smr_zdev_matches(struct smr_zdev *zdev, struct smr_hm_target *ht)
{
	struct smr_zoned *zc = &zdev->zc;
	const struct smr_hm_geo *a = &zc->geo, *b = &ht->geo;

	return zc->d.dev_sectors == ht->t.ti->len &&
		a->zone_sectors == b->zone_sectors &&
		a->zone_capacity == b->zone_capacity &&
		a->nr_conv == b->nr_conv &&
		a->eff_max_open == b->eff_max_open &&
		a->eff_max_active == b->eff_max_active &&
		/* The same model, whether a default was written out or not. */
		!zc->tm_params.given == !ht->tm_params.given &&
		!memcmp(zc->tm_params.v, ht->tm_params.v,
			sizeof(zc->tm_params.v)) &&
		zc->wc_kib == ht->t.wc_kib;
}

static struct smr_zdev *smr_zdev_create(struct smr_hm_target *ht,
					char **error)
{
	struct block_device *bdev = ht->t.dev->bdev;
	struct smr_zdev *zdev;
	struct smr_zoned *zc;
	struct gendisk *disk;
	int ret;

	zdev = kzalloc(sizeof(*zdev), GFP_KERNEL);
	if (!zdev) {
		*error = "Cannot allocate the zoned device";
		return ERR_PTR(-ENOMEM);
	}
	atomic_inc(&smr_zdevs_alive);	/* smr_zdev_free() drops it */
	zdev->backing = bdev->bd_dev;
	zdev->id = ida_alloc(&smr_zdev_ida, GFP_KERNEL);
	if (zdev->id < 0) {
		kfree(zdev);
		smr_zdev_gone();
		*error = "Cannot allocate a zoned device number";
		return ERR_PTR(-ENOMEM);
	}

	/* The engine: the table's geometry, its own state. */
	zc = &zdev->zc;
	zc->d.mode = SMR_MODE_HOST_MANAGED;
	zc->d.bdev = bdev;
	zc->d.dev_sectors = ht->t.ti->len;
	zc->geo = ht->geo;
	/* What the superblock records: the zones (no cache). */
	zc->d.sb_geo.zone_sectors = zc->geo.zone_sectors;
	zc->d.sb_geo.zone_capacity = zc->geo.zone_capacity;
	zc->d.sb_geo.nr_zones = zc->geo.nr_zones;
	zc->d.sb_geo.nr_conv = zc->geo.nr_conv;
	snprintf(zc->d.name, sizeof(zc->d.name), "smrhm%d", zdev->id);
	strscpy(zc->d.label, zc->d.name, sizeof(zc->d.label));

	ret = smr_hm_ctx_init(zc);
	if (ret) {
		*error = "Cannot allocate the zone state";
		goto fail;
	}
	/* The timing model: the engine's, as the zone state (docs/timing.md). */
	zc->tm_params = ht->tm_params;
	if (zc->tm_params.given) {
		struct smr_tm *tm = smr_tm_create(&zc->tm_params,
						  zc->d.dev_sectors, error);

		if (IS_ERR(tm)) {
			ret = PTR_ERR(tm);
			goto fail;
		}
		zc->d.tm = tm;
	}
	/* The write cache: the engine's too, before anything is written. */
	zc->wc_kib = ht->t.wc_kib;
	ret = smr_wc_setup(&zc->d, zc->wc_kib, error);
	if (ret)
		goto fail;
	ret = smr_md_load_or_format(&zc->d, ht->t.format);
	if (ret) {
		*error = zc->d.error;
		goto fail;
	}
	smr_hm_recount(zc);
	/* Counters describe the device's use, not its formatting. */
	memset(&zc->stats, 0, sizeof(zc->stats));
	zc->d.errors = 0;
	zc->d.commits = 0;

	disk = smr_zdev_alloc_disk(&zc->geo);
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		*error = "Cannot allocate the zoned disk";
		goto fail;
	}
	strscpy(disk->disk_name, zc->d.name, sizeof(disk->disk_name));
	disk->fops = &smr_zdev_fops;
	disk->private_data = zdev;
	disk->flags |= GENHD_FL_NO_PART;
	set_capacity(disk, zc->d.dev_sectors);
#ifdef HAVE_REVALIDATE_ZONES_NOCB
	ret = blk_revalidate_disk_zones(disk);
	if (ret) {
		*error = "Cannot validate the zones of the zoned disk";
		goto fail_disk;
	}
#else
	disk->nr_zones = zc->geo.nr_zones;
#endif
	ret = add_disk(disk);
	if (ret) {
		*error = "Cannot add the zoned disk";
		goto fail_disk;
	}
	zdev->disk = disk;
	return zdev;

fail_disk:
	/* Never added: the disk's release does not call free_disk. */
	put_disk(disk);
fail:
	smr_zdev_free(zdev);
	return ERR_PTR(ret);
}

/*
 * The engine for table @ht (parsed, geometry checked, backing open):
 * the one already running over the same backing device, or a new one.
 */
struct smr_zdev *smr_zdev_get(struct smr_hm_target *ht, char **error)
{
	struct smr_zdev *zdev;
	int ret;

	mutex_lock(&smr_zdev_lock);
again:
	list_for_each_entry(zdev, &smr_zdevs, node) {
		if (zdev->backing != ht->t.dev->bdev->bd_dev)
			continue;
		if (smr_drive_lost(&zdev->zc.d)) {
			/*
			 * A drive whose power was cut (or whose write cache
			 * failed) is never used again: this table is the power
			 * coming back, a new engine that loads what the backing
			 * device kept, once the old one has nothing in flight
			 * to it. The old one stays listed (and failing) until
			 * its last table goes. The settle is bounded (the
			 * backing device's I/O in flight, SMR_SETTLE_TIMEOUT)
			 * and runs without smr_zdev_lock, which every table of
			 * every engine takes to load or go: the engine is held
			 * as a table holds it, so that no put frees it
			 * meanwhile, and dropped as a table drops it.
			 */
			if (READ_ONCE(zdev->settled))
				continue;
			zdev->tables++;
			mutex_unlock(&smr_zdev_lock);
			ret = smr_power_settle(&zdev->zc.d.power);
			if (!ret)
				WRITE_ONCE(zdev->settled, true);
			smr_zdev_put(zdev);
			if (ret) {
				*error = "The drive's power was cut (or its write cache failed) and I/O it issued before is still in flight to the backing device; try again";
				return ERR_PTR(-EBUSY);
			}
			/* The list may have changed meanwhile. */
			mutex_lock(&smr_zdev_lock);
			goto again;
		}
		if (ht->t.format) {
			zdev = ERR_PTR(-EBUSY);
			*error = "Cannot format: a live table uses this backing device";
		} else if (!smr_zdev_matches(zdev, ht)) {
			/*
			 * The dm core stacks the zoned device's limits when a
			 * table goes live, after this; changing them now would
			 * bind the live table to limits it does not show, and
			 * nothing could undo them if the new table never
			 * goes live. Remove and create the device instead.
			 */
			zdev = ERR_PTR(-EBUSY);
			*error = "A live table uses this backing device with another geometry, other zone limits, another timing model or write cache; remove the device, then create it with the new table";
		} else {
			zdev->tables++;
		}
		goto out;
	}
	zdev = smr_zdev_create(ht, error);
	if (!IS_ERR(zdev)) {
		zdev->tables = 1;
		list_add(&zdev->node, &smr_zdevs);
	}
out:
	mutex_unlock(&smr_zdev_lock);
	return zdev;
}

/*
 * A table is done with @zdev (its destructor, after dm_put_device()).
 * The last one removes the disk, waits for whatever I/O others had in
 * flight on it, and makes the zone state durable. All of it under
 * smr_zdev_lock: a constructor for the same backing device must not load
 * the zone table from disk before this final commit. The zone state
 * itself goes with the disk's last reference (smr_zdev_free_disk).
 */
void smr_zdev_put(struct smr_zdev *zdev)
{
	struct smr_zoned *zc = &zdev->zc;

	mutex_lock(&smr_zdev_lock);
	if (--zdev->tables) {
		mutex_unlock(&smr_zdev_lock);
		return;
	}
	list_del(&zdev->node);

	del_gendisk(zdev->disk);
	/* smr_hm_end() touches nothing of zc after its last decrement. */
	wait_var_event(&zc->inflight, !atomic_read(&zc->inflight));
	flush_workqueue(zc->d.wq);
	/* After a power cut this commits nothing (smr_slots_halt()). */
	smr_md_commit(&zc->d);
	mutex_unlock(&smr_zdev_lock);
	put_disk(zdev->disk);
}
