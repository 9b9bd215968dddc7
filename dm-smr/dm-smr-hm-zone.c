// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr host-managed mode: the zone state machine. Zone conditions and
 * their counts, the open/active resource rules (closing the oldest
 * implicitly open zone to make room), open, close, finish and reset, the
 * "set_zone" message, and a zone's report. The I/O path that drives it is
 * dm-smr-hm.c; everything here runs under zc->d.lock unless it says not.
 */
#include "dm-smr.h"
#include "dm-smr-nl.h"
#include "dm-smr-trace.h"

const char *smr_cond_name(u8 cond)
{
	switch (cond) {
	case BLK_ZONE_COND_NOT_WP:	return "nw";
	case BLK_ZONE_COND_EMPTY:	return "em";
	case BLK_ZONE_COND_IMP_OPEN:	return "oi";
	case BLK_ZONE_COND_EXP_OPEN:	return "oe";
	case BLK_ZONE_COND_CLOSED:	return "cl";
	case BLK_ZONE_COND_FULL:	return "fu";
	case BLK_ZONE_COND_READONLY:	return "ro";
	case BLK_ZONE_COND_OFFLINE:	return "of";
	default:			return "??";
	}
}

/* Recompute the resource counters; open zones become closed (on load). */
void smr_hm_recount(struct smr_zoned *zc)
{
	u32 z;

	zc->nr_imp_open = zc->nr_exp_open = zc->nr_closed = 0;
	for (z = zc->geo.nr_conv; z < zc->geo.nr_zones; z++) {
		struct smr_zone *zone = &zc->zones[z];

		if (zone->cond == BLK_ZONE_COND_IMP_OPEN ||
		    zone->cond == BLK_ZONE_COND_EXP_OPEN)
			zone->cond = zone->wp ? BLK_ZONE_COND_CLOSED :
				BLK_ZONE_COND_EMPTY;
		if (zone->cond == BLK_ZONE_COND_CLOSED)
			zc->nr_closed++;
		zone->in_imp_ring = 0;
	}
	zc->imp_head = zc->imp_count = 0;
}

/* Resource accounting, all under zc->d.lock. */

static void smr_cond_leave(struct smr_zoned *zc, struct smr_zone *z)
{
	switch (z->cond) {
	case BLK_ZONE_COND_IMP_OPEN:
		zc->nr_imp_open--;
		break;
	case BLK_ZONE_COND_EXP_OPEN:
		zc->nr_exp_open--;
		break;
	case BLK_ZONE_COND_CLOSED:
		zc->nr_closed--;
		break;
	}
}

/*
 * A move to or from OFFLINE must be made inside zc->cond_seq's write
 * section (smr_hm_set_cond() is the one place that makes it): the
 * lock-free read (smr_hm_read_remap()) relies on it.
 */
void smr_cond_enter(struct smr_zoned *zc, struct smr_zone *z, u8 cond)
{
	if (z->cond != cond)
		trace_smr_zone_cond(zc->d.label, z - zc->zones, z->cond, cond);
	smr_cond_leave(zc, z);
	WRITE_ONCE(z->cond, cond);	/* read locklessly too */
	switch (cond) {
	case BLK_ZONE_COND_IMP_OPEN:
		zc->nr_imp_open++;
		if (zc->imp_ring && !z->in_imp_ring) {
			/* Each zone at most once: the ring cannot overflow. */
			zc->imp_ring[(zc->imp_head + zc->imp_count++) % zc->geo.nr_zones] =
				z - zc->zones;
			z->in_imp_ring = 1;
		}
		break;
	case BLK_ZONE_COND_EXP_OPEN:
		zc->nr_exp_open++;
		break;
	case BLK_ZONE_COND_CLOSED:
		zc->nr_closed++;
		break;
	}
}

/* Close an open zone: EMPTY again if nothing was written, else CLOSED. */
static void smr_close(struct smr_zoned *zc, struct smr_zone *z)
{
	smr_cond_enter(zc, z, z->wp ? BLK_ZONE_COND_CLOSED :
		       BLK_ZONE_COND_EMPTY);
}

/*
 * Close the oldest implicitly open zone (the caller saw nr_imp_open > 0,
 * so the ring holds one). Entries of zones no longer implicitly open are
 * dropped on the way: each was pushed once, so this is O(1) amortized.
 */
static void smr_close_one_imp_open(struct smr_zoned *zc)
{
	while (zc->imp_count) {
		struct smr_zone *z = &zc->zones[zc->imp_ring[zc->imp_head]];

		zc->imp_head = (zc->imp_head + 1) % zc->geo.nr_zones;
		zc->imp_count--;
		z->in_imp_ring = 0;
		if (z->cond == BLK_ZONE_COND_IMP_OPEN) {
			smr_close(zc, z);
			zc->stats.imp_closes++;
			return;
		}
	}
}

bool smr_active_at_limit(struct smr_zoned *zc)
{
	return zc->geo.eff_max_active &&
		zc->nr_imp_open + zc->nr_exp_open + zc->nr_closed >=
		zc->geo.eff_max_active;
}

static blk_status_t smr_check_active(struct smr_zoned *zc)
{
	return smr_active_at_limit(zc) ? BLK_STS_ZONE_ACTIVE_RESOURCE :
		BLK_STS_OK;
}

static blk_status_t smr_check_open(struct smr_zoned *zc)
{
	if (!zc->geo.eff_max_open ||
	    zc->nr_imp_open + zc->nr_exp_open < zc->geo.eff_max_open)
		return BLK_STS_OK;
	if (zc->nr_imp_open) {
		smr_close_one_imp_open(zc);
		return BLK_STS_OK;
	}
	return BLK_STS_ZONE_OPEN_RESOURCE;
}

/* May zone @z (EMPTY or CLOSED) become open? May close another zone. */
blk_status_t smr_check_resources(struct smr_zoned *zc, struct smr_zone *z)
{
	blk_status_t sts;

	if (z->cond == BLK_ZONE_COND_EMPTY) {
		sts = smr_check_active(zc);
		if (sts)
			return sts;
	}
	return smr_check_open(zc);
}

blk_status_t smr_zone_usable(struct smr_zone *z)
{
	if (z->cond == BLK_ZONE_COND_READONLY ||
	    z->cond == BLK_ZONE_COND_OFFLINE)
		return BLK_STS_IOERR;
	return BLK_STS_OK;
}

/* Zone management operations. Caller holds zc->d.lock. */

blk_status_t smr_zone_open(struct smr_zoned *zc, struct smr_zone *z)
{
	blk_status_t sts = smr_zone_usable(z);

	if (sts)
		return sts;
	switch (z->cond) {
	case BLK_ZONE_COND_EXP_OPEN:
		return BLK_STS_OK;
	case BLK_ZONE_COND_IMP_OPEN:
		break;
	case BLK_ZONE_COND_EMPTY:
	case BLK_ZONE_COND_CLOSED:
		sts = smr_check_resources(zc, z);
		if (sts)
			return sts;
		break;
	default:	/* FULL */
		return BLK_STS_IOERR;
	}
	smr_cond_enter(zc, z, BLK_ZONE_COND_EXP_OPEN);
	zc->stats.opens++;
	return BLK_STS_OK;
}

blk_status_t smr_zone_close(struct smr_zoned *zc, struct smr_zone *z)
{
	blk_status_t sts = smr_zone_usable(z);

	if (sts)
		return sts;
	/* Closing a zone that is not open changes nothing (ZBC). */
	if (z->cond == BLK_ZONE_COND_IMP_OPEN ||
	    z->cond == BLK_ZONE_COND_EXP_OPEN) {
		smr_close(zc, z);
		zc->stats.closes++;
	}
	return BLK_STS_OK;
}

blk_status_t smr_zone_finish(struct smr_zoned *zc, u32 zno)
{
	struct smr_zone *z = &zc->zones[zno];
	blk_status_t sts = smr_zone_usable(z);

	if (sts)
		return sts;
	if (z->cond == BLK_ZONE_COND_FULL)
		return BLK_STS_OK;
	if (z->cond == BLK_ZONE_COND_EMPTY) {
		sts = smr_check_resources(zc, z);
		if (sts)
			return sts;
	}
	smr_cond_enter(zc, z, BLK_ZONE_COND_FULL);
	z->wp = zc->geo.zone_capacity;
	z->finished = 1;
	smr_hm_zone_dirty(zc, zno);
	zc->stats.finishes++;
	return BLK_STS_OK;
}

/*
 * Make the writes in flight in a zone stale: they complete without
 * touching it; @orphan: and fail. Caller holds zc->d.lock.
 */
void smr_zone_orphan(struct smr_zoned *zc, struct smr_zone *z, bool orphan)
{
	struct smr_hm_io *io;

	list_for_each_entry(io, &z->fifo, node) {
		if (io->gen != z->gen)
			continue;
		io->orphan = orphan;
		zc->stale_inflight++;
	}
	z->gen++;
}

/* Is a write of an older generation still in flight in @z? */
bool smr_zone_has_stale(struct smr_zone *z)
{
	struct smr_hm_io *io = list_first_entry_or_null(&z->fifo,
							struct smr_hm_io, node);

	return io && io->gen != z->gen;
}

/* Drop a zone's data (reset, fault injection). Caller holds zc->d.lock. */
static void smr_zone_forget(struct smr_zoned *zc, struct smr_zone *z)
{
	smr_zone_orphan(zc, z, false);
	z->wp = 0;
	WRITE_ONCE(z->dend, 0);		/* read locklessly too */
	z->finished = 0;
}

blk_status_t smr_zone_reset(struct smr_zoned *zc, u32 zno)
{
	struct smr_zone *z = &zc->zones[zno];
	blk_status_t sts = smr_zone_usable(z);

	if (sts)
		return sts;
	smr_cond_enter(zc, z, BLK_ZONE_COND_EMPTY);
	smr_zone_forget(zc, z);
	smr_hm_zone_dirty(zc, zno);
	zc->stats.resets++;
	return BLK_STS_OK;
}

/*
 * Reset every sequential zone that can be (REQ_OP_ZONE_RESET_ALL). Not
 * under zc->d.lock: takes it one zone at a time and may sleep between zones.
 */
void smr_hm_reset_all(struct smr_zoned *zc)
{
	u32 z;

	for (z = zc->geo.nr_conv; z < zc->geo.nr_zones; z++) {
		spin_lock_irq(&zc->d.lock);
		/* Read-only and offline zones keep their condition. */
		if (smr_zone_usable(&zc->zones[z]) == BLK_STS_OK &&
		    zc->zones[z].cond != BLK_ZONE_COND_EMPTY)
			smr_zone_reset(zc, z);
		spin_unlock_irq(&zc->d.lock);
		cond_resched();
	}
}

/*
 * Fault injection (message "zone_cond"): force a sequential zone
 * read-only or offline, or back to empty (its data is then gone).
 */
int smr_hm_set_cond(struct smr_zoned *zc, u32 zno, const char *cond)
{
	struct smr_zone *z;
	u8 c;

	if (!strcasecmp(cond, "readonly"))
		c = BLK_ZONE_COND_READONLY;
	else if (!strcasecmp(cond, "offline"))
		c = BLK_ZONE_COND_OFFLINE;
	else if (!strcasecmp(cond, "empty"))
		c = BLK_ZONE_COND_EMPTY;
	else
		return -EINVAL;

	spin_lock_irq(&zc->d.lock);
	z = &zc->zones[zno];
	/*
	 * The only way to or from OFFLINE: in the write section the
	 * lock-free read checks for (smr_hm_read_remap()).
	 */
	write_seqcount_begin(&zc->cond_seq);
	smr_cond_enter(zc, z, c);
	if (c == BLK_ZONE_COND_EMPTY)
		smr_zone_forget(zc, z);
	write_seqcount_end(&zc->cond_seq);
	z->finished = 0;
	smr_hm_zone_dirty(zc, zno);
	spin_unlock_irq(&zc->d.lock);
	return smr_md_commit(&zc->d);
}

/*
 * Describe zone @zno as a report does (the engine's report_zones).
 * Conventional zones are NOT_WP with the write pointer at their end;
 * full, read-only and offline zones carry no valid write pointer.
 */
void smr_hm_fill_zone(struct smr_zoned *zc, u32 zno, struct blk_zone *blkz)
{
	struct smr_zone *z = &zc->zones[zno];

	memset(blkz, 0, sizeof(*blkz));
	blkz->start = smr_zone_start(zc, zno);
	blkz->len = zc->geo.zone_sectors;
	spin_lock_irq(&zc->d.lock);
	blkz->cond = z->cond;
	if (smr_zone_is_conv(zc, zno)) {
		blkz->type = BLK_ZONE_TYPE_CONVENTIONAL;
		blkz->capacity = zc->geo.zone_sectors;
		blkz->wp = blkz->start + zc->geo.zone_sectors;
	} else {
		blkz->type = BLK_ZONE_TYPE_SEQWRITE_REQ;
		blkz->capacity = zc->geo.zone_capacity;
		switch (z->cond) {
		case BLK_ZONE_COND_FULL:
			blkz->wp = blkz->start + zc->geo.zone_sectors;
			break;
		case BLK_ZONE_COND_READONLY:
		case BLK_ZONE_COND_OFFLINE:
			blkz->wp = (sector_t)-1;
			break;
		default:
			blkz->wp = blkz->start + z->wp;
		}
	}
	spin_unlock_irq(&zc->d.lock);
}

/* A consistent copy of the status counters of engine @zc. */
void smr_hm_snapshot(struct smr_zoned *zc, struct smr_hm_snap *s)
{
	struct smr_hm_stats st;
	struct smr_io_count rd;
	u32 z;

	memset(s, 0, sizeof(*s));
	smr_count_sum(zc->rd, &rd);	/* not with interrupts off: a loop over CPUs */
	spin_lock_irq(&zc->d.lock);
	st = zc->stats;
	s->reads = smr_count_since(rd.ios, zc->rd_base.ios);
	s->read_sectors = smr_count_since(rd.sectors, zc->rd_base.sectors);
	s->errors = zc->d.errors;
	s->commits = zc->d.commits;
	s->imp_open = zc->nr_imp_open;
	s->exp_open = zc->nr_exp_open;
	s->closed = zc->nr_closed;
	spin_unlock_irq(&zc->d.lock);
	for (z = zc->geo.nr_conv; z < zc->geo.nr_zones; z++) {
		u8 c = READ_ONCE(zc->zones[z].cond);

		s->full += c == BLK_ZONE_COND_FULL;
		s->readonly += c == BLK_ZONE_COND_READONLY;
		s->offline += c == BLK_ZONE_COND_OFFLINE;
	}
	s->nr_zones = zc->geo.nr_zones;
	s->conv_zones = zc->geo.nr_conv;
	s->writes = st.writes;
	s->write_sectors = st.write_sectors;
	s->resets = st.resets;
	s->finishes = st.finishes;
	s->opens = st.opens;
	s->closes = st.closes;
	s->imp_closes = st.imp_closes;
	s->wp_errors = st.wp_errors;
	s->mem_bytes = zc->d.mem_bytes;
	smr_power_get(&zc->d.power, &s->power, &s->power_left);
	if (zc->d.tm) {
		struct smr_tm_stats ts;

		smr_tm_get_stats(zc->d.tm, &ts);
		s->model_busy_ms = div_u64(ts.busy_ns, NSEC_PER_MSEC);
		s->model_lag_ms = div_u64(ts.lag_ns, NSEC_PER_MSEC);
	}
}
