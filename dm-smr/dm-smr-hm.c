// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr host-managed mode: a zoned block device over a non-zoned disk.
 *
 * Zone conditions, write pointer checks and open/active resource rules
 * follow the ZBC/ZNS model as null_blk implements it. The dm core (6.1)
 * emulates zone append for us and holds a per-zone write lock from map
 * until the dm clone completes, so at most one write, reset or finish per
 * sequential zone is in flight. Two consequences shape this file:
 *
 *  - The lock is released in clone_endio() only when the completing clone
 *    points at a zoned device. A clone remapped to our non-zoned backing
 *    disk would never release it, so writes to sequential zones are sent
 *    as a separate clone of our own and the dm clone completes on the dm
 *    device (DM_MAPIO_SUBMITTED).
 *  - A locked clone must not complete inside map(): dm_zone_map_bio()
 *    would then finish it a second time. Map-time failures of such bios
 *    are completed by the commit worker instead.
 *
 * Reads at or past a zone's durable data end return zeros.
 */
#include <linux/slab.h>

#include "dm-smr.h"
#include "dm-smr-nl.h"

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
void smr_hm_recount(struct smr_target *sc)
{
	u32 z;

	sc->nr_imp_open = sc->nr_exp_open = sc->nr_closed = 0;
	for (z = sc->nr_conv; z < sc->nr_zones; z++) {
		struct smr_zone *zone = &sc->zones[z];

		if (zone->cond == BLK_ZONE_COND_IMP_OPEN ||
		    zone->cond == BLK_ZONE_COND_EXP_OPEN)
			zone->cond = zone->wp ? BLK_ZONE_COND_CLOSED :
				BLK_ZONE_COND_EMPTY;
		if (zone->cond == BLK_ZONE_COND_CLOSED)
			sc->nr_closed++;
	}
	sc->imp_close_next = sc->nr_conv;
}

/* Resource accounting, all under sc->lock. */

static void smr_cond_leave(struct smr_target *sc, struct smr_zone *z)
{
	switch (z->cond) {
	case BLK_ZONE_COND_IMP_OPEN:
		sc->nr_imp_open--;
		break;
	case BLK_ZONE_COND_EXP_OPEN:
		sc->nr_exp_open--;
		break;
	case BLK_ZONE_COND_CLOSED:
		sc->nr_closed--;
		break;
	}
}

static void smr_cond_enter(struct smr_target *sc, struct smr_zone *z, u8 cond)
{
	smr_cond_leave(sc, z);
	z->cond = cond;
	switch (cond) {
	case BLK_ZONE_COND_IMP_OPEN:
		sc->nr_imp_open++;
		break;
	case BLK_ZONE_COND_EXP_OPEN:
		sc->nr_exp_open++;
		break;
	case BLK_ZONE_COND_CLOSED:
		sc->nr_closed++;
		break;
	}
}

/* Close an open zone: EMPTY again if nothing was written, else CLOSED. */
static void smr_close(struct smr_target *sc, struct smr_zone *z)
{
	smr_cond_enter(sc, z, z->wp ? BLK_ZONE_COND_CLOSED :
		       BLK_ZONE_COND_EMPTY);
}

static void smr_close_one_imp_open(struct smr_target *sc)
{
	u32 z = sc->imp_close_next, i;

	for (i = sc->nr_conv; i < sc->nr_zones; i++) {
		if (z >= sc->nr_zones)
			z = sc->nr_conv;
		if (sc->zones[z].cond == BLK_ZONE_COND_IMP_OPEN) {
			smr_close(sc, &sc->zones[z]);
			sc->imp_close_next = z + 1;
			sc->stats.imp_closes++;
			return;
		}
		z++;
	}
}

static blk_status_t smr_check_active(struct smr_target *sc)
{
	if (!sc->eff_max_active ||
	    sc->nr_imp_open + sc->nr_exp_open + sc->nr_closed <
	    sc->eff_max_active)
		return BLK_STS_OK;
	return BLK_STS_ZONE_ACTIVE_RESOURCE;
}

static blk_status_t smr_check_open(struct smr_target *sc)
{
	if (!sc->eff_max_open ||
	    sc->nr_imp_open + sc->nr_exp_open < sc->eff_max_open)
		return BLK_STS_OK;
	if (sc->nr_imp_open) {
		smr_close_one_imp_open(sc);
		return BLK_STS_OK;
	}
	return BLK_STS_ZONE_OPEN_RESOURCE;
}

/* May zone @z (EMPTY or CLOSED) become open? May close another zone. */
static blk_status_t smr_check_resources(struct smr_target *sc,
					struct smr_zone *z)
{
	blk_status_t sts;

	if (z->cond == BLK_ZONE_COND_EMPTY) {
		sts = smr_check_active(sc);
		if (sts)
			return sts;
	}
	return smr_check_open(sc);
}

static blk_status_t smr_zone_usable(struct smr_zone *z)
{
	if (z->cond == BLK_ZONE_COND_READONLY ||
	    z->cond == BLK_ZONE_COND_OFFLINE)
		return BLK_STS_IOERR;
	return BLK_STS_OK;
}

/* Zone management operations. Caller holds sc->lock. */

static blk_status_t smr_zone_open(struct smr_target *sc, struct smr_zone *z)
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
		sts = smr_check_resources(sc, z);
		if (sts)
			return sts;
		break;
	default:	/* FULL */
		return BLK_STS_IOERR;
	}
	smr_cond_enter(sc, z, BLK_ZONE_COND_EXP_OPEN);
	sc->stats.opens++;
	return BLK_STS_OK;
}

static blk_status_t smr_zone_close(struct smr_target *sc, struct smr_zone *z)
{
	blk_status_t sts = smr_zone_usable(z);

	if (sts)
		return sts;
	/* Closing a zone that is not open changes nothing (ZBC). */
	if (z->cond == BLK_ZONE_COND_IMP_OPEN ||
	    z->cond == BLK_ZONE_COND_EXP_OPEN) {
		smr_close(sc, z);
		sc->stats.closes++;
	}
	return BLK_STS_OK;
}

static blk_status_t smr_zone_finish(struct smr_target *sc, u32 zno)
{
	struct smr_zone *z = &sc->zones[zno];
	blk_status_t sts = smr_zone_usable(z);

	if (sts)
		return sts;
	if (z->cond == BLK_ZONE_COND_FULL)
		return BLK_STS_OK;
	if (z->cond == BLK_ZONE_COND_EMPTY) {
		sts = smr_check_resources(sc, z);
		if (sts)
			return sts;
	}
	smr_cond_enter(sc, z, BLK_ZONE_COND_FULL);
	z->wp = sc->zone_capacity;
	z->finished = 1;
	smr_md_mark_dirty(sc, zno);
	sc->stats.finishes++;
	return BLK_STS_OK;
}

static blk_status_t smr_zone_reset(struct smr_target *sc, u32 zno)
{
	struct smr_zone *z = &sc->zones[zno];
	blk_status_t sts = smr_zone_usable(z);

	if (sts)
		return sts;
	smr_cond_enter(sc, z, BLK_ZONE_COND_EMPTY);
	z->wp = z->dend = 0;
	z->finished = 0;
	smr_md_mark_dirty(sc, zno);
	sc->stats.resets++;
	return BLK_STS_OK;
}

/*
 * Fault injection (message "zone_cond"): force a sequential zone
 * read-only or offline, or back to empty (its data is then gone).
 */
int smr_hm_set_cond(struct smr_target *sc, u32 zno, const char *cond)
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

	spin_lock_irq(&sc->lock);
	z = &sc->zones[zno];
	smr_cond_enter(sc, z, c);
	if (c == BLK_ZONE_COND_EMPTY)
		z->wp = z->dend = 0;
	z->finished = 0;
	smr_md_mark_dirty(sc, zno);
	spin_unlock_irq(&sc->lock);
	return smr_md_commit(sc);
}

/* Hand a bio to the commit worker, to complete after the next commit. */
static void smr_defer(struct smr_target *sc, struct bio_list *list,
		      struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->lock, flags);
	bio_list_add(list, bio);
	spin_unlock_irqrestore(&sc->lock, flags);
	queue_work(sc->wq, &sc->commit_work);
}

/* Fail a bio that holds the dm zone write lock, from the worker. */
static int smr_fail_locked(struct smr_target *sc, struct bio *bio,
			   blk_status_t sts)
{
	struct smr_io *io = dm_per_bio_data(bio, sizeof(struct smr_io));

	io->status = sts;
	smr_defer(sc, &sc->error_bios, bio);
	return DM_MAPIO_SUBMITTED;
}

static void smr_write_endio(struct bio *bbio)
{
	struct bio *bio = bbio->bi_private;
	struct smr_target *sc = container_of(bbio->bi_pool, struct smr_target, bs);
	struct smr_io *io = dm_per_bio_data(bio, sizeof(struct smr_io));
	blk_status_t sts = bbio->bi_status;
	unsigned long flags;
	struct smr_zone *z;

	bio_put(bbio);

	spin_lock_irqsave(&sc->lock, flags);
	z = &sc->zones[io->zone];
	if (sts) {
		/*
		 * Nothing after this write can be in flight in the zone (the
		 * dm zone lock), so rewind the write pointer to where the
		 * failed write started: the host sees the zone as it was.
		 */
		if (z->wp == io->end) {
			z->wp = io->start;
			/*
			 * A zone the write filled, or that the write opened
			 * implicitly (and may since have been closed), goes
			 * back to what its write pointer says it is.
			 */
			if (z->cond == BLK_ZONE_COND_FULL ||
			    (!z->wp && (z->cond == BLK_ZONE_COND_IMP_OPEN ||
					z->cond == BLK_ZONE_COND_CLOSED)))
				smr_cond_enter(sc, z, z->wp ?
					       BLK_ZONE_COND_CLOSED :
					       BLK_ZONE_COND_EMPTY);
		}
		sc->stats.errors++;
	} else {
		z->dend = max(z->dend, io->end);
		smr_md_mark_dirty(sc, io->zone);
	}
	spin_unlock_irqrestore(&sc->lock, flags);

	if (!sts && io->fua) {
		io->status = BLK_STS_OK;
		smr_defer(sc, &sc->commit_bios, bio);
		return;
	}
	bio->bi_status = sts;
	bio_endio(bio);
}

static int smr_hm_write_seq(struct smr_target *sc, struct bio *bio, u32 zno,
			    u32 off, u32 nr)
{
	struct smr_io *io = dm_per_bio_data(bio, sizeof(struct smr_io));
	struct smr_zone *z = &sc->zones[zno];
	blk_status_t sts;
	struct bio *bbio;
	u32 wp;
	u8 cond;

	spin_lock_irq(&sc->lock);
	sts = smr_zone_usable(z);
	if (sts)
		goto fail;
	if (z->cond == BLK_ZONE_COND_FULL || off != z->wp ||
	    off + nr > sc->zone_capacity) {
		sc->stats.wp_errors++;
		sts = BLK_STS_IOERR;
		goto fail;
	}
	if (z->cond == BLK_ZONE_COND_EMPTY || z->cond == BLK_ZONE_COND_CLOSED) {
		sts = smr_check_resources(sc, z);
		if (sts)
			goto fail;
		smr_cond_enter(sc, z, BLK_ZONE_COND_IMP_OPEN);
	}
	z->wp += nr;
	if (z->wp == sc->zone_capacity)
		smr_cond_enter(sc, z, BLK_ZONE_COND_FULL);
	sc->stats.writes++;
	sc->stats.write_sectors += nr;
	spin_unlock_irq(&sc->lock);

	io->zone = zno;
	io->start = off;
	io->end = off + nr;
	io->fua = bio->bi_opf & REQ_FUA;

	bbio = bio_alloc_clone(sc->dev->bdev, bio, GFP_NOIO, &sc->bs);
	bbio->bi_iter.bi_sector = smr_backing_sector(sc, zno, off);
	/* The commit worker flushes before it acknowledges a FUA write. */
	bbio->bi_opf &= ~REQ_FUA;
	bbio->bi_private = bio;
	bbio->bi_end_io = smr_write_endio;
	dm_submit_bio_remap(bio, bbio);
	return DM_MAPIO_SUBMITTED;

fail:
	sc->stats.errors++;
	wp = z->wp;
	cond = z->cond;
	spin_unlock_irq(&sc->lock);
	smr_nl_zone_error(sc, zno, cond, smr_zone_start(sc, zno) + off, nr,
			  smr_zone_start(sc, zno) + wp);
	return smr_fail_locked(sc, bio, sts);
}

static int smr_hm_zone_mgmt(struct smr_target *sc, struct bio *bio)
{
	sector_t sector = bio->bi_iter.bi_sector - sc->ti->begin;
	u32 zno = smr_zone_of(sc, sector);
	bool locked = bio_op(bio) == REQ_OP_ZONE_RESET ||
		bio_op(bio) == REQ_OP_ZONE_FINISH;
	blk_status_t sts;

	if (sector != smr_zone_start(sc, zno) || smr_zone_is_conv(sc, zno)) {
		sts = BLK_STS_IOERR;
		goto fail;
	}

	spin_lock_irq(&sc->lock);
	switch (bio_op(bio)) {
	case REQ_OP_ZONE_OPEN:
		sts = smr_zone_open(sc, &sc->zones[zno]);
		break;
	case REQ_OP_ZONE_CLOSE:
		sts = smr_zone_close(sc, &sc->zones[zno]);
		break;
	case REQ_OP_ZONE_FINISH:
		sts = smr_zone_finish(sc, zno);
		break;
	default:	/* REQ_OP_ZONE_RESET */
		sts = smr_zone_reset(sc, zno);
		break;
	}
	if (sts)
		sc->stats.errors++;
	spin_unlock_irq(&sc->lock);
	if (sts)
		goto fail;

	if (locked) {
		/* Acknowledge a reset or finish once it is durable. */
		struct smr_io *io = dm_per_bio_data(bio, sizeof(struct smr_io));

		io->status = BLK_STS_OK;
		smr_defer(sc, &sc->commit_bios, bio);
		return DM_MAPIO_SUBMITTED;
	}
	/* Open and close are not persisted: zones come back closed. */
	bio_endio(bio);
	return DM_MAPIO_SUBMITTED;

fail:
	if (locked)
		return smr_fail_locked(sc, bio, sts);
	bio->bi_status = sts;
	bio_endio(bio);
	return DM_MAPIO_SUBMITTED;
}

static int smr_hm_read(struct smr_target *sc, struct bio *bio, sector_t sector)
{
	u32 zno = smr_zone_of(sc, sector);
	u32 off = sector - smr_zone_start(sc, zno);
	u32 nr = bio_sectors(bio);
	struct smr_zone *z = &sc->zones[zno];
	u32 limit;
	u8 cond;

	if (smr_zone_is_conv(sc, zno)) {
		spin_lock_irq(&sc->lock);
		sc->stats.reads++;
		sc->stats.read_sectors += nr;
		spin_unlock_irq(&sc->lock);
		/* Conventional zones are contiguous on the backing device. */
		sector_t conv_end = (sector_t)sc->nr_conv << sc->zone_shift;

		if (sector + nr > conv_end)
			dm_accept_partial_bio(bio, conv_end - sector);
		goto remap;
	}

	if (off + nr > sc->zone_sectors) {
		nr = sc->zone_sectors - off;
		dm_accept_partial_bio(bio, nr);
	}
	spin_lock_irq(&sc->lock);
	limit = z->dend;
	cond = z->cond;
	sc->stats.reads++;
	sc->stats.read_sectors += nr;
	if (cond == BLK_ZONE_COND_OFFLINE)
		sc->stats.errors++;
	spin_unlock_irq(&sc->lock);

	if (cond == BLK_ZONE_COND_OFFLINE)
		return DM_MAPIO_KILL;
	if (off >= limit) {
		/* Nothing written there: read zeros, as after a reset. */
		zero_fill_bio(bio);
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (off + nr > limit)
		dm_accept_partial_bio(bio, limit - off);
remap:
	bio_set_dev(bio, sc->dev->bdev);
	bio->bi_iter.bi_sector = smr_backing_sector(sc, zno, off);
	return DM_MAPIO_REMAPPED;
}

int smr_hm_map(struct smr_target *sc, struct bio *bio)
{
	sector_t sector = bio->bi_iter.bi_sector - sc->ti->begin;
	u32 nr = bio_sectors(bio);
	u32 zno, off;

	if (unlikely(bio->bi_opf & REQ_PREFLUSH) && !nr) {
		smr_defer(sc, &sc->flush_bios, bio);
		return DM_MAPIO_SUBMITTED;
	}

	switch (bio_op(bio)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		break;
	case REQ_OP_ZONE_OPEN:
	case REQ_OP_ZONE_CLOSE:
	case REQ_OP_ZONE_FINISH:
	case REQ_OP_ZONE_RESET:
		return smr_hm_zone_mgmt(sc, bio);
	default:
		return DM_MAPIO_KILL;
	}

	zno = smr_zone_of(sc, sector);
	off = sector - smr_zone_start(sc, zno);
	if (unlikely((sector | nr) & (SMR_BLOCK_SECTORS - 1)))
		goto kill;
	if (bio_op(bio) == REQ_OP_READ)
		return smr_hm_read(sc, bio, sector);

	if (smr_zone_is_conv(sc, zno)) {
		/* A write may span conventional zones, not enter a sequential one. */
		if (sector + nr > ((sector_t)sc->nr_conv << sc->zone_shift))
			goto kill;
		spin_lock_irq(&sc->lock);
		sc->stats.writes++;
		sc->stats.write_sectors += nr;
		spin_unlock_irq(&sc->lock);
		bio_set_dev(bio, sc->dev->bdev);
		bio->bi_iter.bi_sector = smr_backing_sector(sc, zno, off);
		return DM_MAPIO_REMAPPED;
	}
	/* Crossing into the next zone is a write boundary violation. */
	if (off + nr > sc->zone_sectors) {
		u32 wp;
		u8 cond;

		spin_lock_irq(&sc->lock);
		sc->stats.wp_errors++;
		wp = sc->zones[zno].wp;
		cond = sc->zones[zno].cond;
		spin_unlock_irq(&sc->lock);
		smr_nl_zone_error(sc, zno, cond, sector, nr,
				  smr_zone_start(sc, zno) + wp);
		goto kill;
	}
	return smr_hm_write_seq(sc, bio, zno, off, nr);

kill:
	spin_lock_irq(&sc->lock);
	sc->stats.errors++;
	spin_unlock_irq(&sc->lock);
	/* A write to a sequential zone holds the dm zone write lock. */
	if (bio_op(bio) == REQ_OP_WRITE && !smr_zone_is_conv(sc, zno))
		return smr_fail_locked(sc, bio, BLK_STS_IOERR);
	return DM_MAPIO_KILL;
}

/*
 * Complete what waits for a commit: flushes, FUA writes, resets and
 * finishes; and map-time failures of bios holding the zone write lock.
 */
void smr_hm_commit_work(struct work_struct *work)
{
	struct smr_target *sc = container_of(work, struct smr_target,
					     commit_work);
	struct bio_list flushes, commits, errors;
	blk_status_t sts = BLK_STS_OK;
	struct bio *bio;

	spin_lock_irq(&sc->lock);
	flushes = sc->flush_bios;
	commits = sc->commit_bios;
	errors = sc->error_bios;
	bio_list_init(&sc->flush_bios);
	bio_list_init(&sc->commit_bios);
	bio_list_init(&sc->error_bios);
	spin_unlock_irq(&sc->lock);

	while ((bio = bio_list_pop(&errors))) {
		struct smr_io *io = dm_per_bio_data(bio, sizeof(struct smr_io));

		bio->bi_status = io->status;
		bio_endio(bio);
	}

	if (bio_list_empty(&flushes) && bio_list_empty(&commits))
		return;
	if (smr_md_commit(sc))
		sts = BLK_STS_IOERR;

	while ((bio = bio_list_pop(&flushes))) {
		bio->bi_status = sts;
		bio_endio(bio);
	}
	while ((bio = bio_list_pop(&commits))) {
		struct smr_io *io = dm_per_bio_data(bio, sizeof(struct smr_io));

		bio->bi_status = sts ? sts : io->status;
		bio_endio(bio);
	}
}

/* Report zones from the zone table; see dm_report_zones_cb(). */
int smr_hm_report_zones(struct dm_target *ti, struct dm_report_zones_args *args,
			unsigned int nr_zones)
{
	struct smr_target *sc = ti->private;
	sector_t sector = args->next_sector - ti->begin;
	u32 zno = smr_zone_of(sc, sector);
	int ret;

	args->start = ti->begin;
	for (; zno < sc->nr_zones && args->zone_idx < nr_zones; zno++) {
		struct blk_zone blkz = {
			.start = ti->begin + smr_zone_start(sc, zno),
			.len = sc->zone_sectors,
		};
		struct smr_zone *z = &sc->zones[zno];

		spin_lock_irq(&sc->lock);
		blkz.cond = z->cond;
		if (smr_zone_is_conv(sc, zno)) {
			blkz.type = BLK_ZONE_TYPE_CONVENTIONAL;
			blkz.capacity = sc->zone_sectors;
			blkz.wp = blkz.start + sc->zone_sectors;
		} else {
			blkz.type = BLK_ZONE_TYPE_SEQWRITE_REQ;
			blkz.capacity = sc->zone_capacity;
			switch (z->cond) {
			case BLK_ZONE_COND_FULL:
				blkz.wp = blkz.start + sc->zone_sectors;
				break;
			case BLK_ZONE_COND_READONLY:
			case BLK_ZONE_COND_OFFLINE:
				blkz.wp = (sector_t)-1;
				break;
			default:
				blkz.wp = blkz.start + z->wp;
			}
		}
		spin_unlock_irq(&sc->lock);

		args->next_sector = blkz.start + blkz.len;
		ret = args->orig_cb(&blkz, args->zone_idx++, args->orig_data);
		if (ret)
			return ret;
	}
	return 0;
}
