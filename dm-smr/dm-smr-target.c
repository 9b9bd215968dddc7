// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr: emulated shingled (SMR) disks as a device-mapper target.
 *
 * Table lines (all sizes in 512-byte sectors):
 *
 *   smr <dev> host-managed <zone_sectors> [<#opt_args> <opt_args>...]
 *   smr <dev> drive-managed <band_sectors> [<#opt_args> <opt_args>...]
 *
 * (drive-managed options: see dm-smr-dm.c)
 *
 * host-managed:
 *
 *   optional arguments:
 *     conv_zones <n>          conventional zones at the start (default 0)
 *     zone_capacity <sectors> usable sectors of a sequential zone
 *                             (default zone_sectors)
 *     max_open <n>            open zone limit (default 0: none)
 *     max_active <n>          active zone limit (default 0: none)
 *     format                  initialise the backing device (destroys data)
 *
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

/* Optional arguments of host-managed mode, in opt_mask bit order. */
enum {
	SMR_OPT_CONV = 1 << 0,
	SMR_OPT_CAP = 1 << 1,
	SMR_OPT_OPEN = 1 << 2,
	SMR_OPT_ACTIVE = 1 << 3,
	SMR_OPT_FORMAT = 1 << 4,
	SMR_OPT_WCACHE = 1 << 5,	/* write_cache_kib */
	SMR_OPT_WCACHE_MIB = 1 << 6,	/* write_cache, its old spelling */
};

static const struct smr_opt smr_hm_opts[] = {
	{ .name = "conv_zones", .max = U32_MAX, .bad = "Invalid conv_zones" },
	{ .name = "zone_capacity", .max = U64_MAX, .bad = "Invalid zone_capacity" },
	{ .name = "max_open", .max = U32_MAX, .bad = "Invalid max_open" },
	{ .name = "max_active", .max = U32_MAX, .bad = "Invalid max_active" },
	{ .name = "format", .flag = true },
	SMR_WC_OPT_KIB,
	SMR_WC_OPT_MIB,
};

static const struct smr_opt_table smr_hm_opt_table = {
	.opts = smr_hm_opts,
	.nr = ARRAY_SIZE(smr_hm_opts),
	.count_error = "Invalid number of optional arguments (at most 11)",
	.max_words = 11,
	.unknown_error = "Unknown optional argument",
	.group = SMR_TM_GROUP,
};

static int smr_parse_opts_hm(struct smr_target *sc, struct dm_arg_set *as)
{
	u64 v[ARRAY_SIZE(smr_hm_opts)];
	unsigned long given;
	int ret;

	ret = smr_parse_opts(&smr_hm_opt_table, as, &given, v, &sc->ti->error);
	if (ret)
		return ret;
	/* The timing model, without drive-managed mode's cache position. */
	ret = smr_tm_parse(as, SMR_TM_KEYS_NO_CACHE, &sc->tm_params,
			   &sc->ti->error);
	if (ret)
		return ret;
	ret = smr_wc_parse_opt(sc, &given, SMR_OPT_WCACHE, SMR_OPT_WCACHE_MIB,
			       v[5], v[6], &sc->ti->error);
	if (ret)
		return ret;
	sc->opt_mask = given & ~SMR_OPT_FORMAT;
	if (given & SMR_OPT_CONV)
		sc->nr_conv = v[0];
	if (given & SMR_OPT_CAP)
		sc->zone_capacity = v[1];
	if (given & SMR_OPT_OPEN)
		sc->max_open = v[2];
	if (given & SMR_OPT_ACTIVE)
		sc->max_active = v[3];
	sc->format = given & SMR_OPT_FORMAT;
	return 0;
}

/* Check the geometry and derive the effective limits (as null_blk does). */
static int smr_check_geometry(struct smr_target *sc)
{
	struct dm_target *ti = sc->ti;
	u64 nr_zones, nr_seq;
	sector_t md, need, have;

	if (!is_power_of_2(sc->zone_sectors) ||
	    sc->zone_sectors < SMR_BLOCK_SECTORS ||
	    sc->zone_sectors > SMR_MAX_ZONE_SECTORS) {
		ti->error = "zone_sectors must be a power of two from 8 (4 KiB) to 2^31";
		return -EINVAL;
	}
	sc->zone_shift = ilog2(sc->zone_sectors);
	if (!(sc->opt_mask & SMR_OPT_CAP))
		sc->zone_capacity = sc->zone_sectors;
	if (!sc->zone_capacity || sc->zone_capacity > sc->zone_sectors ||
	    sc->zone_capacity & (SMR_BLOCK_SECTORS - 1)) {
		ti->error = "zone_capacity must be a non-zero multiple of 8 sectors, at most zone_sectors";
		return -EINVAL;
	}
	if (!ti->len || ti->len & (sc->zone_sectors - 1)) {
		ti->error = "Target length must be a non-zero multiple of zone_sectors";
		return -EINVAL;
	}
	nr_zones = ti->len >> sc->zone_shift;
	if (nr_zones > SMR_MAX_ZONES) {
		DMERR("%llu zones; at most %u fit in memory", nr_zones,
		      SMR_MAX_ZONES);
		ti->error = "Too many zones (the log gives the limit): use larger zones";
		return -EINVAL;
	}
	sc->nr_zones = nr_zones;
	if (sc->nr_conv >= sc->nr_zones) {
		ti->error = "conv_zones must leave at least one sequential zone";
		return -EINVAL;
	}
	nr_seq = sc->nr_zones - sc->nr_conv;

	sc->eff_max_active = sc->max_active >= nr_seq ? 0 : sc->max_active;
	sc->eff_max_open = sc->max_open >= nr_seq ? 0 : sc->max_open;
	if (sc->eff_max_active && (!sc->eff_max_open ||
				   sc->eff_max_open > sc->eff_max_active))
		sc->eff_max_open = sc->eff_max_active;

	md = smr_slots_sectors(smr_hm_md_blocks(sc->nr_zones));
	need = md + smr_data_sectors(sc);
	have = bdev_nr_sectors(sc->dev->bdev);
	if (need > have) {
		DMERR("backing device %s has %llu sectors; %llu are needed (metadata %llu + data %llu)",
		      sc->dev->name, (unsigned long long)have,
		      (unsigned long long)need,
		      (unsigned long long)md,
		      (unsigned long long)smr_data_sectors(sc));
		ti->error = "Backing device too small for this geometry (sizes in the kernel log)";
		return -ENOSPC;
	}
	return 0;
}

static void smr_hm_counters(struct smr_target *sc, struct smr_hm_snap *s)
{
	smr_hm_snapshot(smr_zones_of(sc), s);
	smr_faults_counts(&sc->faults, &s->faults);
}

/* What the netlink dump reads (dm-smr-nl.c calls no engine itself). */
static const struct smr_nl_counters smr_nl_counters = {
	.hm = smr_hm_counters,
	.dm = smr_dm_snapshot,
};

static void smr_free(struct smr_target *sc)
{
	if (!list_empty(&sc->table_node))
		smr_leave_table(sc);
	if (sc->zdev_dev)
		dm_put_device(sc->ti, sc->zdev_dev);
	if (sc->zdev)
		smr_zdev_put(sc->zdev);
	/*
	 * A drive-managed table's cut work queues its worker, which uses
	 * sc->dm: the cut work first, then the worker, then what it uses.
	 */
	smr_power_exit(&sc->power);
	if (sc->wq)
		flush_workqueue(sc->wq);
	smr_dm_free(sc);
	if (sc->wq)
		destroy_workqueue(sc->wq);
	bioset_exit(&sc->bs);
	smr_md_exit(sc);
	kvfree(sc->zones);
	smr_claim_release(&sc->claim);
	if (sc->dev)
		dm_put_device(sc->ti, sc->dev);
	smr_faults_exit(&sc->faults);
	kfree(sc);
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
	struct smr_target *sc;
	char zname[16], dmname[DM_NAME_LEN];
	const char *mode;
	dev_t devt;
	int ret;

	sc = smr_ctr_alloc(ti, argc, 3,
			   "Usage: <dev> host-managed <zone_sectors> | drive-managed <band_sectors> [<#opt_args> <opt_args>...]",
			   sizeof(*sc));
	if (IS_ERR(sc))
		return PTR_ERR(sc);
	sc->ti = ti;
	sc->dev_sectors = ti->len;
	strscpy(sc->name, dm_table_device_name(ti->table), sizeof(sc->name));
	smr_genl_dev_name(ti, dmname, &devt);
	strscpy(sc->label, dmname, sizeof(sc->label));
	spin_lock_init(&sc->lock);
	INIT_LIST_HEAD(&sc->table_node);
	ret = smr_faults_init(&sc->faults, ti, smr_map_bio, smr_fault_traced);
	if (ret) {
		ti->error = "Cannot allocate the media fault state";
		goto bad;
	}

	ret = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			    &sc->dev);
	if (ret) {
		ti->error = "Cannot open the backing device";
		goto bad;
	}
	sc->bdev = sc->dev->bdev;

	ret = -EINVAL;
	mode = dm_shift_arg(&as);
	if (!strcasecmp(mode, "host-managed")) {
		sc->mode = SMR_MODE_HOST_MANAGED;
	} else if (!strcasecmp(mode, "drive-managed")) {
		sc->mode = SMR_MODE_DRIVE_MANAGED;
	} else {
		ti->error = "Mode must be host-managed or drive-managed";
		goto bad;
	}
	if (smr_join_table(sc)) {
		ti->error = "A table cannot mix host-managed and drive-managed smr targets (use one device for each)";
		goto bad;
	}
	if (sc->mode == SMR_MODE_DRIVE_MANAGED) {
		ret = smr_dm_ctr(sc, &as);
		if (ret)
			goto bad;
		smr_dm_power_setup(sc);
		/* A read may be split where cache and band meet: in map(). */
		smr_faults_map_reads_first(&sc->faults, smr_dm_read_delayed);
		smr_faults_per_io(ti);
		ti->private = sc;
		smr_nl_register(sc, smr_zones_of(sc), &smr_nl_counters);
		return 0;
	}
	if (bdev_is_zoned(sc->bdev)) {
		ti->error = "host-managed mode needs a backing device that is not zoned (for a zoned disk, use dm-linear)";
		goto bad;
	}
	if (smr_parse_u64(dm_shift_arg(&as), &sc->zone_sectors)) {
		ti->error = "Invalid zone_sectors";
		goto bad;
	}
	ret = smr_parse_opts_hm(sc, &as);
	if (ret)
		goto bad;
	ret = smr_check_geometry(sc);
	if (ret)
		goto bad;
	ret = smr_claim_backing(&sc->claim, ti, sc->bdev, sc->format, &ti->error);
	if (ret)
		goto bad;

	/* The zoned disk this table maps to (dm-smr-zdev.c). */
	sc->zdev = smr_zdev_get(sc, &ti->error);
	if (IS_ERR(sc->zdev)) {
		ret = PTR_ERR(sc->zdev);
		sc->zdev = NULL;
		goto bad;
	}
	format_dev_t(zname, smr_zdev_devt(sc->zdev));
	ret = dm_get_device(ti, zname, dm_table_get_mode(ti->table),
			    &sc->zdev_dev);
	if (ret) {
		ti->error = "Cannot open the zoned device";
		goto bad;
	}
	ret = dm_set_target_max_io_len(ti, sc->zone_sectors);
	if (ret)
		goto bad;

	ti->private = sc;
	ti->num_flush_bios = 1;
	ti->flush_supported = true;
	/* The zoned device appends natively: dm passes zone appends on. */
	ti->emulate_zone_append = false;
	/* A delayed write keeps its zone's later writes behind it. */
	smr_faults_order_writes(&sc->faults, sc->zone_sectors);
	smr_faults_per_io(ti);
	smr_nl_register(sc, smr_zones_of(sc), &smr_nl_counters);
	return 0;

bad:
	smr_free(sc);
	return ret;
}

static void smr_dtr(struct dm_target *ti)
{
	struct smr_target *sc = ti->private;

	/*
	 * No commit here: a table that was live committed in postsuspend,
	 * and by now a successor table may own the backing device.
	 */
	smr_nl_unregister(sc);
	/* A cut's work (drive-managed) queues the worker: it goes first. */
	smr_power_exit(&sc->power);
	if (sc->wq)
		flush_workqueue(sc->wq);
	/*
	 * A commit that failed at suspend and that no resume retried: a
	 * last try (no other table has read the disk since, see
	 * smr_commit_predecessor()); failing that, say what is lost.
	 */
	if (sc->commit_pending && !smr_drive_lost(sc) &&
	    smr_md_commit(sc))
		DMERR("%s: metadata commit failed again at removal: acknowledged writes since the last flush are lost",
		      sc->name);
	smr_free(sc);
}

/* map() after the media faults (and the delayed bios they release). */
static int smr_map_bio(struct dm_target *ti, struct bio *bio)
{
	struct smr_target *sc = ti->private;

	if (sc->mode == SMR_MODE_DRIVE_MANAGED)
		return smr_dm_map(sc, bio);
	/*
	 * Host-managed: the zoned device does the work. Its sectors are the
	 * target's, as dm-linear would map them to a zoned disk; the bio
	 * goes to its engine directly (smr_zdev_map(): no second trip
	 * through the block layer).
	 */
	if (bio_sectors(bio) || op_is_zone_mgmt(bio_op(bio)))
		bio->bi_iter.bi_sector = dm_target_offset(ti, bio->bi_iter.bi_sector);
	return smr_zdev_map(sc->zdev, bio);
}

static int smr_map(struct dm_target *ti, struct bio *bio)
{
	struct smr_target *sc = ti->private;
	int r;

	if (sc->mode == SMR_MODE_DRIVE_MANAGED) {
		/* smr_dm_end_io() looks at it for a bio a fault ended too. */
		smr_dm_io_reset(bio);
		/* A command the drive takes; the engine counts host-managed ones. */
		if (unlikely(smr_power_io(&sc->power, bio->bi_opf,
					  bio->bi_iter.bi_size))) {
			spin_lock_irq(&sc->lock);
			sc->stats.errors++;
			spin_unlock_irq(&sc->lock);
			return DM_MAPIO_KILL;
		}
	}
	r = smr_faults_map(&sc->faults, bio);
	if (r == SMR_FAULT_HOLD)	/* a delayed drive-managed read */
		return smr_dm_read_hold(sc, bio);
	return r == SMR_FAULT_PASS ? smr_map_bio(ti, bio) : r;
}

static int smr_end_io(struct dm_target *ti, struct bio *bio,
		      blk_status_t *error)
{
	struct smr_target *sc = ti->private;

	if (sc->mode != SMR_MODE_DRIVE_MANAGED) {
		/*
		 * A read smr_zdev_map() sent to the backing device itself,
		 * ending after a power cut: the drive never said it was
		 * done (the engine's own bios already fail so).
		 */
		if (bio_op(bio) == REQ_OP_READ &&
		    smr_power_is_cut(&smr_zones_of(sc)->power))
			*error = BLK_STS_IOERR;
		return DM_ENDIO_DONE;
	}
	/* The power went before the drive said it was done: it never was. */
	if (unlikely(smr_power_is_cut(&sc->power)))
		*error = BLK_STS_IOERR;
	return smr_dm_end_io(sc, bio, error);
}

/*
 * Drive-managed mode loads its cache state before going live. Host-managed
 * mode has nothing to reload: a reloaded table shares the zoned device,
 * whose memory is the one copy of the zone state.
 */
static int smr_preresume(struct dm_target *ti)
{
	struct smr_target *sc = ti->private;
	int ret;

	/*
	 * A drive without power (or whose write cache failed) stays so: its
	 * I/O fails, nothing loads.
	 */
	if (sc->mode != SMR_MODE_DRIVE_MANAGED || smr_drive_lost(sc))
		return 0;
	ret = smr_dm_preresume(sc);
	if (ret)
		DMERR("%s: cannot load the cache state: %d",
		      dm_table_device_name(ti->table), ret);
	return ret;
}

/*
 * The timing model: from here on until resume nothing waits for modelled
 * time, so that suspend and remove take the backing's time only. Bios
 * already on a timer end on their own, within the modelled queue.
 */
static void smr_presuspend(struct dm_target *ti)
{
	struct smr_target *sc = smr_zones_of(ti->private);

	smr_faults_presuspend(&((struct smr_target *)ti->private)->faults);
	if (sc->tm)
		smr_tm_set_quiet(sc->tm, true);
}

static void smr_presuspend_undo(struct dm_target *ti)
{
	struct smr_target *sc = smr_zones_of(ti->private);

	smr_faults_resume(&((struct smr_target *)ti->private)->faults);
	/* A drive without power stays quiet. */
	if (sc->tm)
		smr_power_if_on(&sc->power, smr_tm_wake, sc->tm);
}

static void smr_postsuspend(struct dm_target *ti)
{
	struct smr_target *sc = ti->private;

	if (sc->mode == SMR_MODE_DRIVE_MANAGED) {
		smr_dm_postsuspend(sc);
		return;
	}
	/* This table's I/O is done: make the zone table durable. */
	smr_md_commit(smr_zones_of(sc));
}

static void smr_resume(struct dm_target *ti)
{
	struct smr_target *sc = ti->private;

	smr_faults_resume(&sc->faults);
	/* Not when the power is cut, even by a cut racing this resume. */
	if (smr_zones_of(sc)->tm)
		smr_power_if_on(&smr_zones_of(sc)->power, smr_tm_wake,
				smr_zones_of(sc)->tm);
	if (sc->mode == SMR_MODE_DRIVE_MANAGED)
		smr_dm_resume(sc);
}

/*
 * STATUSTYPE_INFO, host-managed mode (one line, space separated):
 *
 *   host-managed <nr_zones> <conv_zones> <imp_open> <exp_open> <closed>
 *   <full> <readonly> <offline> <writes> <write_sectors> <reads>
 *   <read_sectors> <resets> <finishes> <opens> <closes> <imp_closes>
 *   <wp_errors> <errors> <commits> <mem_bytes> <model_busy_ms>
 *   <model_lag_ms> <bad_read_errors> <bad_write_errors> <bad_remaps>
 *   <transient_errors> <delayed_ios> <power> <power_left>
 *
 * counts of zones by condition, then counters since creation (or the last
 * clear_stats message): writes/reads are bios seen by the target,
 * wp_errors are writes refused for not being at the write pointer or past
 * the zone capacity, errors every I/O the target failed, commits metadata
 * commits; mem_bytes is the memory the target holds for this device;
 * model_busy_ms and model_lag_ms are the timing model's (smr-timing.h), 0
 * without it. The next five count the media faults this table fired
 * (smr-faults.h; added last, so parsers of the older line still work);
 * power and power_left are the drive's power switch (smr-power.h: on,
 * armed or cut, and the commands an armed cut still lets pass).
 */
static void smr_status(struct dm_target *ti, status_type_t type,
		       unsigned int status_flags, char *result,
		       unsigned int maxlen)
{
	struct smr_target *sc = ti->private;
	struct smr_hm_snap s;
	unsigned int sz = 0;
	int nopt;

	if (sc->mode == SMR_MODE_DRIVE_MANAGED) {
		smr_dm_status(sc, type, result, maxlen);
		return;
	}
	switch (type) {
	case STATUSTYPE_INFO:
		smr_hm_snapshot(smr_zones_of(sc), &s);
		DMEMIT("host-managed %u %u %u %u %u %u %u %u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		       s.nr_zones, s.conv_zones, s.imp_open, s.exp_open,
		       s.closed, s.full, s.readonly, s.offline, s.writes,
		       s.write_sectors, s.reads, s.read_sectors, s.resets,
		       s.finishes, s.opens, s.closes, s.imp_closes,
		       s.wp_errors, s.errors, s.commits, s.mem_bytes,
		       s.model_busy_ms, s.model_lag_ms);
		smr_faults_status(&sc->faults, result, maxlen, &sz);
		smr_power_status(&smr_zones_of(sc)->power, result, maxlen, &sz);
		break;

	case STATUSTYPE_TABLE:
		/* The table line as given, less "format" (reloading must not wipe). */
		nopt = 2 * hweight32(sc->opt_mask);
		DMEMIT("%s host-managed %llu", sc->dev->name, sc->zone_sectors);
		if (nopt || sc->tm_params.given)
			DMEMIT(" %d", nopt);
		if (sc->opt_mask & SMR_OPT_CONV)
			DMEMIT(" conv_zones %u", sc->nr_conv);
		if (sc->opt_mask & SMR_OPT_CAP)
			DMEMIT(" zone_capacity %llu", sc->zone_capacity);
		if (sc->opt_mask & SMR_OPT_OPEN)
			DMEMIT(" max_open %u", sc->max_open);
		if (sc->opt_mask & SMR_OPT_ACTIVE)
			DMEMIT(" max_active %u", sc->max_active);
		if (sc->opt_mask & SMR_OPT_WCACHE)
			DMEMIT(" write_cache_kib %u", sc->wc_kib);
		smr_tm_emit(&sc->tm_params, result, maxlen, &sz);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",mode=host-managed,zone_sectors=%llu,zone_capacity=%llu,nr_zones=%u,conv_zones=%u,max_open=%u,max_active=%u;",
		       sc->zone_sectors, sc->zone_capacity, sc->nr_zones,
		       sc->nr_conv, sc->eff_max_open, sc->eff_max_active);
		break;
	}
}

/* Zone of a message argument: a sector in the device, zone-aligned. */
static int smr_msg_zone(struct smr_target *sc, const char *arg, u32 *zno)
{
	u64 sector;

	if (smr_parse_u64(arg, &sector) || sector >= sc->dev_sectors) {
		DMERR("zone start sector %s is not within the device", arg);
		return -EINVAL;
	}
	if (sector & (sc->zone_sectors - 1)) {
		DMERR("sector %llu is not the start of a zone", sector);
		return -EINVAL;
	}
	*zno = smr_zone_of(sc, sector);
	return 0;
}

/*
 * Messages:
 *   zone_cond <zone_start_sector> readonly|offline|empty
 *       fault injection on a sequential zone; "empty" restores it (its
 *       data is dropped). Persisted.
 *   zone_info <zone_start_sector>
 *       prints "<type> <cond> <wp_sectors> <data_end_sectors>"
 *   clear_stats
 *   badblocks ..., transient ..., delay ..., faults
 *       media faults, either mode (common/smr-faults.c)
 *   power_cut [after|random|off ...]
 *       cut the drive's power, now or at a command (common/smr-power.h)
 *   write_cache
 *       the volatile write cache's figures (dm-smr-wcache.h)
 */
static int smr_message(struct dm_target *ti, unsigned int argc, char **argv,
		       char *result, unsigned int maxlen)
{
	struct smr_target *sc = ti->private;
	unsigned int sz = 0;
	u32 zno;
	int ret;

	if (argc && smr_faults_is_message(argv[0]))
		return smr_faults_message(&sc->faults, argc, argv, result, maxlen);
	/* The drive's: a drive-managed table's, a host-managed engine's. */
	if (argc && smr_power_is_message(argv[0]))
		return smr_power_message(&smr_zones_of(sc)->power, argc, argv,
					 result, maxlen);
	/* Also the drive's. */
	if (argc && !strcasecmp(argv[0], "write_cache"))
		return smr_wc_message(smr_zones_of(sc), argc, argv, result,
				      maxlen);
	if (argc == 1 && !strcasecmp(argv[0], "clear_stats"))
		smr_faults_clear_stats(&sc->faults);
	if (sc->mode == SMR_MODE_DRIVE_MANAGED)
		return smr_dm_message(sc, argc, argv, result, maxlen);
	sc = smr_zones_of(sc);
	if (argc == 1 && !strcasecmp(argv[0], "clear_stats")) {
		spin_lock_irq(&sc->lock);
		memset(&sc->stats, 0, sizeof(sc->stats));
		spin_unlock_irq(&sc->lock);
		if (sc->tm)
			smr_tm_clear_stats(sc->tm);
		return 0;
	}
	if (argc == 3 && !strcasecmp(argv[0], "zone_cond")) {
		ret = smr_msg_zone(sc, argv[1], &zno);
		if (ret)
			return ret;
		if (smr_zone_is_conv(sc, zno)) {
			DMERR("zone_cond: zone %u is conventional", zno);
			return -EINVAL;
		}
		ret = smr_hm_set_cond(sc, zno, argv[2]);
		if (ret == -EINVAL)
			DMERR("zone_cond: condition must be readonly, offline or empty");
		return ret;
	}
	if (argc == 2 && !strcasecmp(argv[0], "zone_info")) {
		struct smr_zone z;

		ret = smr_msg_zone(sc, argv[1], &zno);
		if (ret)
			return ret;
		spin_lock_irq(&sc->lock);
		z = sc->zones[zno];
		spin_unlock_irq(&sc->lock);
		DMEMIT("%s %s %u %u", smr_zone_is_conv(sc, zno) ? "conv" : "seq",
		       smr_cond_name(z.cond), z.wp, z.dend);
		return 1;
	}
	DMERR("unknown message or wrong arguments: %s (argc %u)", argv[0], argc);
	return -EINVAL;
}

static int smr_iterate_devices(struct dm_target *ti,
			       iterate_devices_callout_fn fn, void *data)
{
	struct smr_target *sc = ti->private;

	/* Host-managed: only the zoned device, never the plain backing one. */
	if (sc->zdev_dev)
		return fn(ti, sc->zdev_dev, 0, ti->len, data);
	return fn(ti, sc->dev, 0, bdev_nr_sectors(sc->bdev), data);
}

static void smr_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct smr_target *sc = ti->private;

	if (sc->mode == SMR_MODE_DRIVE_MANAGED) {
		smr_dm_io_hints(sc, limits);
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

		disk_set_max_open_zones(disk, sc->eff_max_open);
		disk_set_max_active_zones(disk, sc->eff_max_active);
	}
#endif
}

/* Report the zoned device's zones, remapped; see dm-linear. */
static int smr_report_zones(struct dm_target *ti,
			    struct dm_report_zones_args *args,
			    unsigned int nr_zones)
{
	struct smr_target *sc = ti->private;

	if (!sc->zdev_dev)
		return -EOPNOTSUPP;
	return dm_report_zones(sc->zdev_dev->bdev, 0,
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
