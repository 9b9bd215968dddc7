// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr host-managed mode: the table (struct smr_hm_target). It parses
 * the table line, checks the geometry against the backing device, and
 * maps to the zoned device whose engine (dm-smr-zdev.c, struct
 * smr_zoned) keeps the zone state: the table is a dm-linear over that
 * device, with the line printed back, the status and the messages.
 *
 *   smr <dev> host-managed <zone_sectors> [<#opt_args> <opt_args>...]
 *
 *   conv_zones <n>          conventional zones at the start (default 0)
 *   zone_capacity <sectors> usable sectors of a sequential zone
 *                           (default zone_sectors)
 *   max_open <n>            open zone limit (default 0: none)
 *   max_active <n>          active zone limit (default 0: none)
 *   write_cache_kib <KiB>   a volatile write cache (dm-smr-wcache.h)
 *   format                  initialise the backing device (destroys data)
 *   and the timing model's keys (common/smr-timing.h)
 */
#include "dm-smr.h"

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

static int smr_hm_parse_opts(struct smr_hm_target *ht, struct dm_arg_set *as)
{
	struct smr_hm_geo *g = &ht->geo;
	char **error = &ht->t.ti->error;
	u64 v[ARRAY_SIZE(smr_hm_opts)];
	unsigned long given;
	int ret;

	ret = smr_parse_opts(&smr_hm_opt_table, as, &given, v, error);
	if (ret)
		return ret;
	/* The timing model, without drive-managed mode's cache position. */
	ret = smr_tm_parse(as, SMR_TM_KEYS_NO_CACHE, &ht->tm_params, error);
	if (ret)
		return ret;
	ret = smr_wc_parse_opt(&ht->t, &given, SMR_OPT_WCACHE,
			       SMR_OPT_WCACHE_MIB, v[5], v[6], error);
	if (ret)
		return ret;
	ht->opt_mask = given & ~SMR_OPT_FORMAT;
	if (given & SMR_OPT_CONV)
		g->nr_conv = v[0];
	if (given & SMR_OPT_CAP)
		g->zone_capacity = v[1];
	if (given & SMR_OPT_OPEN)
		g->max_open = v[2];
	if (given & SMR_OPT_ACTIVE)
		g->max_active = v[3];
	ht->t.format = given & SMR_OPT_FORMAT;
	return 0;
}

/* Check the geometry and derive the effective limits (as null_blk does). */
static int smr_hm_check_geometry(struct smr_hm_target *ht)
{
	struct dm_target *ti = ht->t.ti;
	struct smr_hm_geo *g = &ht->geo;
	u64 nr_zones, nr_seq;
	sector_t md, need, have;

	if (!is_power_of_2(g->zone_sectors) ||
	    g->zone_sectors < SMR_BLOCK_SECTORS ||
	    g->zone_sectors > SMR_MAX_ZONE_SECTORS) {
		ti->error = "zone_sectors must be a power of two from 8 (4 KiB) to 2^31";
		return -EINVAL;
	}
	g->zone_shift = ilog2(g->zone_sectors);
	if (!(ht->opt_mask & SMR_OPT_CAP))
		g->zone_capacity = g->zone_sectors;
	if (!g->zone_capacity || g->zone_capacity > g->zone_sectors ||
	    g->zone_capacity & (SMR_BLOCK_SECTORS - 1)) {
		ti->error = "zone_capacity must be a non-zero multiple of 8 sectors, at most zone_sectors";
		return -EINVAL;
	}
	if (!ti->len || ti->len & (g->zone_sectors - 1)) {
		ti->error = "Target length must be a non-zero multiple of zone_sectors";
		return -EINVAL;
	}
	nr_zones = ti->len >> g->zone_shift;
	if (nr_zones > SMR_MAX_ZONES) {
		DMERR("%llu zones; at most %u fit in memory", nr_zones,
		      SMR_MAX_ZONES);
		ti->error = "Too many zones (the log gives the limit): use larger zones";
		return -EINVAL;
	}
	g->nr_zones = nr_zones;
	if (g->nr_conv >= g->nr_zones) {
		ti->error = "conv_zones must leave at least one sequential zone";
		return -EINVAL;
	}
	nr_seq = g->nr_zones - g->nr_conv;

	g->eff_max_active = g->max_active >= nr_seq ? 0 : g->max_active;
	g->eff_max_open = g->max_open >= nr_seq ? 0 : g->max_open;
	if (g->eff_max_active && (!g->eff_max_open ||
				  g->eff_max_open > g->eff_max_active))
		g->eff_max_open = g->eff_max_active;

	md = smr_slots_sectors(smr_hm_md_blocks(g->nr_zones));
	need = md + smr_hm_data_sectors(g);
	have = bdev_nr_sectors(ht->t.dev->bdev);
	if (need > have) {
		DMERR("backing device %s has %llu sectors; %llu are needed (metadata %llu + data %llu)",
		      ht->t.dev->name, (unsigned long long)have,
		      (unsigned long long)need,
		      (unsigned long long)md,
		      (unsigned long long)smr_hm_data_sectors(g));
		ti->error = "Backing device too small for this geometry (sizes in the kernel log)";
		return -ENOSPC;
	}
	return 0;
}

/*
 * The rest of the table line, after the mode: parse it, check it, claim
 * the backing device and map to its engine. On failure the caller frees
 * what was set up (smr_hm_free()).
 */
int smr_hm_ctr(struct smr_hm_target *ht, struct dm_arg_set *as)
{
	struct dm_target *ti = ht->t.ti;
	char zname[16];
	int ret;

	if (bdev_is_zoned(ht->t.dev->bdev)) {
		ti->error = "host-managed mode needs a backing device that is not zoned (for a zoned disk, use dm-linear)";
		return -EINVAL;
	}
	if (smr_parse_u64(dm_shift_arg(as), &ht->geo.zone_sectors)) {
		ti->error = "Invalid zone_sectors";
		return -EINVAL;
	}
	ret = smr_hm_parse_opts(ht, as);
	if (ret)
		return ret;
	ret = smr_hm_check_geometry(ht);
	if (ret)
		return ret;
	ret = smr_claim_backing(&ht->t.claim, ti, ht->t.dev->bdev,
				ht->t.format, &ti->error);
	if (ret)
		return ret;

	/* The zoned disk this table maps to (dm-smr-zdev.c). */
	ht->zdev = smr_zdev_get(ht, &ti->error);
	if (IS_ERR(ht->zdev)) {
		ret = PTR_ERR(ht->zdev);
		ht->zdev = NULL;
		return ret;
	}
	ht->zc = smr_zdev_ctx(ht->zdev);
	format_dev_t(zname, smr_zdev_devt(ht->zdev));
	ret = dm_get_device(ti, zname, dm_table_get_mode(ti->table),
			    &ht->zdev_dev);
	if (ret) {
		ti->error = "Cannot open the zoned device";
		return ret;
	}
	/*
	 * No max_io_len: a bio crossing a zone needs no cut from dm.
	 * smr_hm_read_remap() refuses it, and smr_zdev_map() sends it the
	 * long way, through the disk, whose chunk_sectors (the zone size)
	 * split it. With one set, dm's max_io_len() (drivers/md/dm.c, the
	 * same on 6.1, 6.12 and 7.3) works it out for every bio and also
	 * cuts each at the mapped queue's max_sectors: 19 of the about 150
	 * instructions a random 4 KiB read cost over dm-linear
	 * (docs/benchmarks-log.md, 2026-12-02).
	 */
	ti->num_flush_bios = 1;
	ti->flush_supported = true;
	/* The zoned device appends natively: dm passes zone appends on. */
	ti->emulate_zone_append = false;
	return 0;
}

/* The end of the destructor, or of a constructor that failed. */
void smr_hm_free(struct smr_hm_target *ht)
{
	if (ht->zdev_dev)
		dm_put_device(ht->t.ti, ht->zdev_dev);
	if (ht->zdev)
		smr_zdev_put(ht->zdev);
}

/* What the netlink dump reads of a host-managed table. */
void smr_hm_counters(struct smr_table *t, struct smr_hm_snap *s)
{
	struct smr_hm_target *ht = smr_hmt(t);

	smr_hm_snapshot(smr_zdev_ctx(ht->zdev), s);
	smr_faults_counts(&t->faults, &s->faults);
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
void smr_hm_status(struct smr_hm_target *ht, status_type_t type,
		   char *result, unsigned int maxlen)
{
	struct smr_zoned *zc = smr_zdev_ctx(ht->zdev);
	const struct smr_hm_geo *g = &ht->geo;
	struct smr_hm_snap s;
	unsigned int sz = 0;
	int nopt;

	switch (type) {
	case STATUSTYPE_INFO:
		smr_hm_snapshot(zc, &s);
		DMEMIT("host-managed %u %u %u %u %u %u %u %u %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		       s.nr_zones, s.conv_zones, s.imp_open, s.exp_open,
		       s.closed, s.full, s.readonly, s.offline, s.writes,
		       s.write_sectors, s.reads, s.read_sectors, s.resets,
		       s.finishes, s.opens, s.closes, s.imp_closes,
		       s.wp_errors, s.errors, s.commits, s.mem_bytes,
		       s.model_busy_ms, s.model_lag_ms);
		smr_faults_status(&ht->t.faults, result, maxlen, &sz);
		smr_power_status(&zc->d.power, result, maxlen, &sz);
		break;

	case STATUSTYPE_TABLE:
		/* The table line as given, less "format" (reloading must not wipe). */
		nopt = 2 * hweight32(ht->opt_mask);
		DMEMIT("%s host-managed %llu", ht->t.dev->name, g->zone_sectors);
		if (nopt || ht->tm_params.given)
			DMEMIT(" %d", nopt);
		if (ht->opt_mask & SMR_OPT_CONV)
			DMEMIT(" conv_zones %u", g->nr_conv);
		if (ht->opt_mask & SMR_OPT_CAP)
			DMEMIT(" zone_capacity %llu", g->zone_capacity);
		if (ht->opt_mask & SMR_OPT_OPEN)
			DMEMIT(" max_open %u", g->max_open);
		if (ht->opt_mask & SMR_OPT_ACTIVE)
			DMEMIT(" max_active %u", g->max_active);
		if (ht->opt_mask & SMR_OPT_WCACHE)
			DMEMIT(" write_cache_kib %u", ht->t.wc_kib);
		smr_tm_emit(&ht->tm_params, result, maxlen, &sz);
		break;

	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ht->t.ti->type);
		DMEMIT(",mode=host-managed,zone_sectors=%llu,zone_capacity=%llu,nr_zones=%u,conv_zones=%u,max_open=%u,max_active=%u;",
		       g->zone_sectors, g->zone_capacity, g->nr_zones,
		       g->nr_conv, g->eff_max_open, g->eff_max_active);
		break;
	}
}

/* Zone of a message argument: a sector in the device, zone-aligned. */
static int smr_msg_zone(struct smr_zoned *zc, const char *arg, u32 *zno)
{
	u64 sector;

	if (smr_parse_u64(arg, &sector) || sector >= zc->d.dev_sectors) {
		DMERR("zone start sector %s is not within the device", arg);
		return -EINVAL;
	}
	if (sector & (zc->geo.zone_sectors - 1)) {
		DMERR("sector %llu is not the start of a zone", sector);
		return -EINVAL;
	}
	*zno = smr_zone_of(zc, sector);
	return 0;
}

/*
 * Host-managed messages (the ones either mode takes are dm-smr-target.c's):
 *   zone_cond <zone_start_sector> readonly|offline|empty
 *       fault injection on a sequential zone; "empty" restores it (its
 *       data is dropped). Persisted.
 *   zone_info <zone_start_sector>
 *       prints "<type> <cond> <wp_sectors> <data_end_sectors>"
 *   clear_stats
 */
int smr_hm_message(struct smr_hm_target *ht, unsigned int argc, char **argv,
		   char *result, unsigned int maxlen)
{
	struct smr_zoned *zc = smr_zdev_ctx(ht->zdev);
	unsigned int sz = 0;
	u32 zno;
	int ret;

	if (argc == 1 && !strcasecmp(argv[0], "clear_stats")) {
		struct smr_io_count rd;

		smr_count_sum(zc->rd, &rd);
		spin_lock_irq(&zc->d.lock);
		memset(&zc->stats, 0, sizeof(zc->stats));
		zc->rd_base = rd;
		zc->d.errors = 0;
		zc->d.commits = 0;
		spin_unlock_irq(&zc->d.lock);
		if (zc->d.tm)
			smr_tm_clear_stats(zc->d.tm);
		return 0;
	}
	if (argc == 3 && !strcasecmp(argv[0], "zone_cond")) {
		ret = smr_msg_zone(zc, argv[1], &zno);
		if (ret)
			return ret;
		if (smr_zone_is_conv(zc, zno)) {
			DMERR("zone_cond: zone %u is conventional", zno);
			return -EINVAL;
		}
		ret = smr_hm_set_cond(zc, zno, argv[2]);
		if (ret == -EINVAL)
			DMERR("zone_cond: condition must be readonly, offline or empty");
		return ret;
	}
	if (argc == 2 && !strcasecmp(argv[0], "zone_info")) {
		struct smr_zone z;

		ret = smr_msg_zone(zc, argv[1], &zno);
		if (ret)
			return ret;
		spin_lock_irq(&zc->d.lock);
		z = zc->zones[zno];
		spin_unlock_irq(&zc->d.lock);
		DMEMIT("%s %s %u %u", smr_zone_is_conv(zc, zno) ? "conv" : "seq",
		       smr_cond_name(z.cond), z.wp, z.dend);
		return 1;
	}
	DMERR("unknown message or wrong arguments: %s (argc %u)", argv[0], argc);
	return -EINVAL;
}
