// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr: emulated shingled (SMR) disks as a device-mapper target.
 *
 * Table lines (all sizes in 512-byte sectors):
 *
 *   smr <dev> host-managed <zone_sectors> [<#opt_args> <opt_args>...]
 *   smr <dev> drive-managed <band_sectors> [<#opt_args> <opt_args>...]
 *
 * This file is the target type: it reads the mode, sets up what either
 * mode's table has (struct smr_table: the backing device, the media
 * faults, its place among the live tables) and hands each dm callback to
 * the mode's table, dm-smr-hm-target.c or dm-smr-dm.c, where the options
 * are described.
 * docs/dm-smr.rst describes the status fields, messages and on-disk format.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dm-smr.h"
#include "dm-smr-nl.h"
#include "dm-smr-test.h"

#define CREATE_TRACE_POINTS
#include "dm-smr-trace.h"

/* What the netlink dump reads (dm-smr-nl.c calls no engine itself). */
static const struct smr_nl_counters smr_nl_counters = {
	.hm = smr_hm_counters,
	.dm = smr_dm_snapshot,
};

/* The end of the destructor, or of a constructor that failed. */
static void smr_free(struct smr_table *t)
{
	if (!list_empty(&t->table_node))
		smr_leave_table(t);
	if (t->mode == SMR_MODE_DRIVE_MANAGED)
		smr_dm_free(smr_dmt(t));
	else
		smr_hm_free(smr_hmt(t));
	smr_claim_release(&t->claim);
	if (t->dev)
		dm_put_device(t->ti, t->dev);
	smr_faults_exit(&t->faults);
	if (t->mode == SMR_MODE_DRIVE_MANAGED)
		kfree(smr_dmt(t));
	else
		kfree(smr_hmt(t));
}

static int smr_map_bio(struct dm_target *ti, struct bio *bio);

/* A media fault fired: traced in this module's system (smr:smr_fault). */
static void smr_fault_traced(const char *dev, int kind, u64 sector,
			     u32 nsect, bool write)
{
	trace_smr_fault(dev, kind, sector, nsect, write);
}

static int smr_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct smr_dm_target *dmt = NULL;
	struct smr_hm_target *ht = NULL;
	enum smr_mode mode = 0;
	struct smr_table *t;
	void *p;
	int ret;

	/*
	 * The mode says which table to allocate: look at it first (an
	 * unknown one is refused once the device is open, as before).
	 */
	if (argc >= 2 && !strcasecmp(argv[1], "drive-managed"))
		mode = SMR_MODE_DRIVE_MANAGED;
	else if (argc >= 2 && !strcasecmp(argv[1], "host-managed"))
		mode = SMR_MODE_HOST_MANAGED;
	p = smr_ctr_alloc(ti, argc, 3,
			  "Usage: <dev> host-managed <zone_sectors> | drive-managed <band_sectors> [<#opt_args> <opt_args>...]",
			  mode == SMR_MODE_DRIVE_MANAGED ? sizeof(*dmt) :
			  sizeof(*ht));
	if (IS_ERR(p))
		return PTR_ERR(p);
	if (mode == SMR_MODE_DRIVE_MANAGED) {
		dmt = p;
		t = &dmt->t;
	} else {
		ht = p;
		t = &ht->t;
	}
	t->ti = ti;
	t->mode = mode ? mode : SMR_MODE_HOST_MANAGED;
	strscpy(t->name, dm_table_device_name(ti->table), sizeof(t->name));
	INIT_LIST_HEAD(&t->table_node);
	ret = smr_faults_init(&t->faults, ti, smr_map_bio, smr_fault_traced);
	if (ret) {
		ti->error = "Cannot allocate the media fault state";
		goto bad;
	}

	ret = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			    &t->dev);
	if (ret) {
		ti->error = "Cannot open the backing device";
		goto bad;
	}
	dm_shift_arg(&as);	/* the mode */
	if (!mode) {
		ti->error = "Mode must be host-managed or drive-managed";
		ret = -EINVAL;
		goto bad;
	}
	if (smr_join_table(t)) {
		ti->error = "A table cannot mix host-managed and drive-managed smr targets (use one device for each)";
		ret = -EINVAL;
		goto bad;
	}
	if (dmt) {
		ret = smr_dm_ctr(dmt, &as);
		if (ret)
			goto bad;
		smr_dm_power_setup(dmt);
		/* A read may be split where cache and band meet: in map(). */
		smr_faults_map_reads_first(&t->faults, smr_dm_read_delayed);
		smr_faults_per_io(ti);
		ti->private = t;
		smr_nl_register(t, &dmt->d, &smr_nl_counters);
		return 0;
	}
	ret = smr_hm_ctr(ht, &as);
	if (ret)
		goto bad;
	ti->private = t;
	/* A delayed write keeps its zone's later writes behind it. */
	smr_faults_order_writes(&t->faults, ht->geo.zone_sectors);
	smr_faults_per_io(ti);
	smr_nl_register(t, &smr_zdev_ctx(ht->zdev)->d, &smr_nl_counters);
	return 0;

bad:
	smr_free(t);
	return ret;
}

static void smr_dtr(struct dm_target *ti)
{
	struct smr_table *t = ti->private;
	struct smr_dm_target *sc;

	smr_nl_unregister(t);
	if (t->mode == SMR_MODE_DRIVE_MANAGED) {
		sc = smr_dmt(t);
		/* A cut's work queues the worker: it goes first. */
		smr_power_exit(&sc->d.power);
		flush_workqueue(sc->d.wq);
		/*
		 * No commit otherwise: a table that was live committed in
		 * postsuspend, and by now a successor table may own the
		 * backing device. A commit that failed at suspend and that
		 * no resume retried: a last try (no other table has read the
		 * disk since, see smr_commit_predecessor()); failing that,
		 * say what is lost.
		 */
		if (sc->commit_pending && !smr_drive_lost(&sc->d) &&
		    smr_md_commit(&sc->d))
			DMERR("%s: metadata commit failed again at removal: acknowledged writes since the last flush are lost",
			      t->name);
	}
	smr_free(t);
}

/*
 * Host-managed: the zoned device does the work. Its sectors are the
 * target's, as dm-linear would map them to a zoned disk. A read of
 * durable data goes to the backing device as dm-linear would send it
 * (smr_hm_read_remap()); any other bio goes to the engine directly
 * (smr_zdev_map(): no second trip through the block layer). Inline in
 * both callers: a random read's whole cost over dm-linear is under 200
 * instructions, and a call and its return take 10 to 20 of them.
 */
static __always_inline int smr_hm_map(struct dm_target *ti,
				      struct smr_hm_target *ht, struct bio *bio)
{
	if (bio_sectors(bio) || op_is_zone_mgmt(bio_op(bio)))
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	if (bio_op(bio) == REQ_OP_READ && smr_hm_read_remap(ht->zc, bio))
		return DM_MAPIO_REMAPPED;
	return smr_zdev_map(ht->zdev, bio);
}

/* map() after the media faults: the delayed bios they release. */
static int smr_map_bio(struct dm_target *ti, struct bio *bio)
{
	struct smr_table *t = ti->private;

	if (t->mode == SMR_MODE_DRIVE_MANAGED)
		return smr_dm_map(smr_dmt(t), bio);
	return smr_hm_map(ti, smr_hmt(t), bio);
}

/* map() of a host-managed table: its faults, then the bio. */
static noinline int smr_hm_map_host(struct dm_target *ti, struct smr_table *t,
				    struct bio *bio)
{
	int r = smr_faults_map(&t->faults, bio);

	return r == SMR_FAULT_PASS ? smr_hm_map(ti, smr_hmt(t), bio) : r;
}

/*
 * Each mode's map() in a function of its own, both reached by a jump:
 * with the host-managed one inline here, every drive-managed bio paid
 * for the registers that one saves (8 instructions of a read's 200 over
 * dm-linear; docs/benchmarks-log.md, 2026-12-02 (5)).
 */
static int smr_map(struct dm_target *ti, struct bio *bio)
{
	struct smr_table *t = ti->private;

	/* Its power and faults too, with the bio's per-bio data at hand. */
	if (t->mode == SMR_MODE_DRIVE_MANAGED)
		return smr_dm_map_host(smr_dmt(t), bio);
	return smr_hm_map_host(ti, t, bio);
}

static int smr_end_io(struct dm_target *ti, struct bio *bio,
		      blk_status_t *error)
{
	struct smr_table *t = ti->private;

	/* Drive-managed: the power's check is there too. */
	if (t->mode == SMR_MODE_DRIVE_MANAGED)
		return smr_dm_end_io(smr_dmt(t), bio, error);
	/*
	 * A read smr_hm_read_remap() sent to the backing device itself,
	 * ending after a power cut: the drive never said it was done (the
	 * engine's own bios already fail so).
	 */
	if (bio_op(bio) == REQ_OP_READ &&
	    unlikely(smr_power_is_cut(&smr_hmt(t)->zc->d.power)))
		*error = BLK_STS_IOERR;
	return DM_ENDIO_DONE;
}

/*
 * Drive-managed mode loads its cache state before going live. Host-managed
 * mode has nothing to reload: a reloaded table shares the zoned device,
 * whose memory is the one copy of the zone state.
 */
static int smr_preresume(struct dm_target *ti)
{
	struct smr_table *t = ti->private;
	int ret;

	/*
	 * A drive without power (or whose write cache failed) stays so: its
	 * I/O fails, nothing loads.
	 */
	if (t->mode != SMR_MODE_DRIVE_MANAGED || smr_drive_lost(smr_drive_of(t)))
		return 0;
	ret = smr_dm_preresume(smr_dmt(t));
	if (ret)
		DMERR("%s: cannot load the cache state: %d", t->name, ret);
	return ret;
}

/*
 * The timing model: from here on until resume nothing waits for modelled
 * time, so that suspend and remove take the backing's time only. Bios
 * already on a timer end on their own, within the modelled queue.
 */
static void smr_presuspend(struct dm_target *ti)
{
	struct smr_table *t = ti->private;
	struct smr_drive *d = smr_drive_of(t);

	smr_faults_presuspend(&t->faults);
	if (d->tm)
		smr_tm_set_quiet(d->tm, true);
}

static void smr_presuspend_undo(struct dm_target *ti)
{
	struct smr_table *t = ti->private;
	struct smr_drive *d = smr_drive_of(t);

	smr_faults_resume(&t->faults);
	/* A drive without power stays quiet. */
	if (d->tm)
		smr_power_if_on(&d->power, smr_tm_wake, d->tm);
}

static void smr_postsuspend(struct dm_target *ti)
{
	struct smr_table *t = ti->private;

	if (t->mode == SMR_MODE_DRIVE_MANAGED) {
		smr_dm_postsuspend(smr_dmt(t));
		return;
	}
	/* This table's I/O is done: make the zone table durable. */
	smr_md_commit(smr_drive_of(t));
}

static void smr_resume(struct dm_target *ti)
{
	struct smr_table *t = ti->private;
	struct smr_drive *d = smr_drive_of(t);

	smr_faults_resume(&t->faults);
	/* Not when the power is cut, even by a cut racing this resume. */
	if (d->tm)
		smr_power_if_on(&d->power, smr_tm_wake, d->tm);
	if (t->mode == SMR_MODE_DRIVE_MANAGED)
		smr_dm_resume(smr_dmt(t));
}

/* Status: the mode's (dm-smr-hm-target.c, dm-smr-dm-status.c). */
static void smr_status(struct dm_target *ti, status_type_t type,
		       unsigned int status_flags, char *result,
		       unsigned int maxlen)
{
	struct smr_table *t = ti->private;

	if (t->mode == SMR_MODE_DRIVE_MANAGED)
		smr_dm_status(smr_dmt(t), type, result, maxlen);
	else
		smr_hm_status(smr_hmt(t), type, result, maxlen);
}

/*
 * Messages either mode takes; the mode's own follow (smr_hm_message(),
 * smr_dm_message()):
 *   badblocks ..., transient ..., delay ..., faults
 *       media faults (common/smr-faults.c)
 *   power_cut [after|random|off ...]
 *       cut the drive's power, now or at a command (common/smr-power.h)
 *   write_cache
 *       the volatile write cache's figures (dm-smr-wcache.h)
 *   clear_stats
 *       the table's fault counters, then the mode's
 */
static int smr_message(struct dm_target *ti, unsigned int argc, char **argv,
		       char *result, unsigned int maxlen)
{
	struct smr_table *t = ti->private;
	struct smr_drive *d = smr_drive_of(t);

	if (argc && smr_faults_is_message(argv[0]))
		return smr_faults_message(&t->faults, argc, argv, result, maxlen);
	/* The drive's: a drive-managed table's, a host-managed engine's. */
	if (argc && smr_power_is_message(argv[0]))
		return smr_power_message(&d->power, argc, argv, result, maxlen);
	if (argc && !strcasecmp(argv[0], "write_cache"))
		return smr_wc_message(d, argc, argv, result, maxlen);
	if (argc == 1 && !strcasecmp(argv[0], "clear_stats"))
		smr_faults_clear_stats(&t->faults);
	if (t->mode == SMR_MODE_DRIVE_MANAGED)
		return smr_dm_message(smr_dmt(t), argc, argv, result, maxlen);
	return smr_hm_message(smr_hmt(t), argc, argv, result, maxlen);
}

static int smr_iterate_devices(struct dm_target *ti,
			       iterate_devices_callout_fn fn, void *data)
{
	struct smr_table *t = ti->private;

	/* Host-managed: only the zoned device, never the plain backing one. */
	if (t->mode == SMR_MODE_HOST_MANAGED)
		return fn(ti, smr_hmt(t)->zdev_dev, 0, ti->len, data);
	return fn(ti, t->dev, 0, bdev_nr_sectors(t->dev->bdev), data);
}

static void smr_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct smr_table *t = ti->private;

	if (t->mode == SMR_MODE_DRIVE_MANAGED) {
		smr_dm_io_hints(smr_dmt(t), limits);
		return;
	}
	/*
	 * Host-managed: dm stacks the zoned device's limits. Before 6.9 it
	 * does not publish the open/active limits on the mapped device, so
	 * tools would overrun them: set them on its gendisk ourselves. From
	 * 6.11 on dm computes them from the zoned device (HAVE_DM_ZONE_RESET_ALL
	 * marks that series; 6.9 and 6.10 cannot publish them at all).
	 */
#ifdef HAVE_DISK_SET_MAX_OPEN_ZONES
	{
		struct gendisk *disk = dm_disk(dm_table_get_md(ti->table));
		const struct smr_hm_geo *g = &smr_hmt(t)->geo;

		disk_set_max_open_zones(disk, g->eff_max_open);
		disk_set_max_active_zones(disk, g->eff_max_active);
	}
#endif
}

/* Report the zoned device's zones, remapped; see dm-linear. */
static int smr_report_zones(struct dm_target *ti,
			    struct dm_report_zones_args *args,
			    unsigned int nr_zones)
{
	struct smr_table *t = ti->private;

	if (t->mode != SMR_MODE_HOST_MANAGED)
		return -EOPNOTSUPP;
	return dm_report_zones(smr_hmt(t)->zdev_dev->bdev, 0,
			       dm_target_offset(ti, args->next_sector),
			       args, nr_zones);
}

static struct target_type smr_target_type = {
	.name = "smr",
	.version = {0, 3, 0},
	.features = DM_TARGET_MIXED_ZONED_MODEL,
	.module = THIS_MODULE,
	.ctr = smr_ctr,
	.dtr = smr_dtr,
	.map = smr_map,
	.end_io = smr_end_io,
	.preresume = smr_preresume,
	.presuspend = smr_presuspend,
	.presuspend_undo = smr_presuspend_undo,
	.postsuspend = smr_postsuspend,
	.resume = smr_resume,
	.status = smr_status,
	.message = smr_message,
	.iterate_devices = smr_iterate_devices,
	.io_hints = smr_io_hints,
	.report_zones = smr_report_zones,
};

static int __init smr_init(void)
{
	int ret;

	smr_test_hooks_init();
	ret = smr_genl_register_target(&smr_target_type, smr_nl_init,
				       smr_nl_exit);
	if (ret)
		smr_test_hooks_exit();
	return ret;
}
module_init(smr_init);

/*
 * The tables are gone (each held the module), but a zoned device's last
 * reference may still be an opener's: its ->free_disk runs this module's
 * code after the block layer dropped the module reference the open took.
 */
static void __exit smr_exit(void)
{
	smr_genl_unregister_target(&smr_target_type, smr_nl_exit);
	smr_zdev_wait_freed();
	smr_test_hooks_exit();
}
module_exit(smr_exit);

MODULE_DESCRIPTION(DM_NAME " target emulating shingled (SMR) disks");
MODULE_LICENSE("GPL");
