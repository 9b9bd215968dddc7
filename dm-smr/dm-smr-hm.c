// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr host-managed mode: a zoned block device over a non-zoned disk.
 *
 * Zone conditions, write pointer checks and open/active resource rules
 * follow the ZBC/ZNS model as null_blk implements it. This file runs the
 * state machine for the engine's gendisk (dm-smr-zdev.c): bios arrive
 * here already split at zone boundaries, on every kernel, from the disk's
 * submit_bio or straight from the smr target's map() (smr_zdev_map()),
 * which sends reads of durable data to the backing device itself
 * (smr_hm_read_remap()).
 *
 * Ordering. No block layer zone write plugging is used (the disk
 * supports zone append natively, so 6.10+ allocates no plugs, and 6.1
 * has none for bio-based disks): a write is checked against the write
 * pointer when it is submitted, the pointer advances at once, and several
 * writes may be in flight in one zone. They complete to the host in write
 * pointer order (the zone's fifo). A failed write rewinds the pointer to
 * where it started and fails the writes queued behind it, as a drive
 * does; acknowledged writes are therefore always the zone's durable
 * prefix, and a commit never records data that is not on the medium.
 *
 * Stale writes. A reset (or a write failure) does not wait for the writes
 * in flight in its zone: it bumps the zone's generation, and a write of an
 * older generation leaves the zone alone when it completes. Such a write
 * may still land on the medium, over the space the zone hands out again,
 * so while one is in flight the zone takes no new write (EIO), and a
 * reset is acknowledged only once none is: a host that waits for its
 * reset never sees the refusal, and no acknowledged write is ever
 * overwritten by a stale one.
 *
 * Reads at or past a zone's durable data end return zeros.
 *
 * The zone state machine this path drives is in dm-smr-hm-zone.c.
 */
#include <linux/slab.h>

#include "dm-smr.h"
#include "dm-smr-nl.h"
#include "dm-smr-trace.h"

/* ------------------------------------------------------------------ */
/* I/O.                                                                */
/* ------------------------------------------------------------------ */

/*
 * End a host bio and drop it from the in-flight count. The last one wakes
 * whoever waits for none (smr_zdev_put(), the settle after a power cut)
 * through wake_up_var(), which uses sc's address only as a key: the
 * engine may be freed as soon as the count reads 0.
 */
static void smr_hm_end(struct smr_target *sc, struct bio *bio, blk_status_t sts)
{
	bio->bi_status = sts;
	bio_endio(bio);
	atomic_dec_and_wake_up(&sc->inflight);
}

/* Hand a bio to the commit worker. */
static void smr_defer(struct smr_target *sc, struct bio_list *list,
		      struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->lock, flags);
	bio_list_add(list, bio);
	spin_unlock_irqrestore(&sc->lock, flags);
	queue_work(sc->wq, &sc->commit_work);
}

/* Zero @bio from byte @from to its end (a read past durable data). */
static void smr_zero_tail(struct bio *bio, u32 from)
{
	struct bvec_iter iter = bio->bi_iter;
	struct bio_vec bv;

	bio_advance_iter(bio, &iter, from);
	while (iter.bi_size) {
		bv = bio_iter_iovec(bio, iter);
		memzero_bvec(&bv);
		bio_advance_iter_single(bio, &iter, bv.bv_len);
	}
}

/*
 * Rewind a zone to @start after the write that started there failed: the
 * host sees the zone as it was before that write. Caller holds sc->lock.
 */
static void smr_rewind(struct smr_target *sc, struct smr_zone *z, u32 start)
{
	/*
	 * A zone the write filled gave up its active resource when it became
	 * FULL, and another zone may hold it by now: closed again, it would
	 * be one active zone over the limit. It stays FULL then, finished
	 * after its durable data (reads past that return zeros), as a finish
	 * would leave it: the host sees the write fail and the zone full.
	 */
	if (z->cond == BLK_ZONE_COND_FULL && start && smr_active_at_limit(sc)) {
		z->finished = 1;
		smr_hm_zone_dirty(sc, z - sc->zones);
		return;
	}
	z->wp = start;
	/*
	 * A zone the write filled, or that the write opened implicitly (and
	 * may since have been closed), goes back to what its write pointer
	 * says it is.
	 */
	if (z->cond == BLK_ZONE_COND_FULL ||
	    (!z->wp && (z->cond == BLK_ZONE_COND_IMP_OPEN ||
			z->cond == BLK_ZONE_COND_CLOSED)))
		smr_cond_enter(sc, z, z->wp ? BLK_ZONE_COND_CLOSED :
			       BLK_ZONE_COND_EMPTY);
}

/*
 * Retire the completed writes at the head of a zone's fifo onto @done, in
 * write pointer order. Caller holds sc->lock.
 */
static void smr_zone_retire(struct smr_target *sc, u32 zno,
			    struct list_head *done)
{
	struct smr_zone *z = &sc->zones[zno];
	struct smr_hm_io *io;

	while ((io = list_first_entry_or_null(&z->fifo, struct smr_hm_io,
					      node)) && io->done) {
		list_move_tail(&io->node, done);
		if (io->gen != z->gen) {
			/* Submitted before a reset or a failure: not the zone's. */
			sc->stale_inflight--;
			if (io->orphan) {
				io->status = BLK_STS_IOERR;
				sc->stats.errors++;
			}
			continue;
		}
		if (io->start != z->dend || io->status) {
			/*
			 * The write failed (the other case cannot happen: a
			 * failure orphans what follows). The zone goes back
			 * to where it started, and the writes behind it, in
			 * flight, fail as on a drive.
			 */
			if (!io->status)
				io->status = BLK_STS_IOERR;
			if (!z->finished)
				smr_rewind(sc, z, io->start);
			smr_zone_orphan(sc, z, true);
			sc->stats.errors++;
			continue;
		}
		z->dend = io->end;
		smr_hm_zone_dirty(sc, zno);
	}
}

/* A clone's I/O is done, at its modelled end with the timing model. */
static void smr_hm_io_done(struct bio *clone)
{
	struct smr_hm_io *io = container_of(clone, struct smr_hm_io, clone);
	struct smr_target *sc = io->sc;
	blk_status_t sts = clone->bi_status;
	struct bio *orig = io->orig;
	struct smr_hm_io *pos, *next;
	unsigned long flags;
	LIST_HEAD(done);

	/*
	 * Ending without the model (a failure): off its queue first. A
	 * success came through the model, which took it off its queue.
	 */
	if (sc->tm && sts)
		smr_tm_cancel(sc->tm, &io->tb);
	/* The power went before the drive said it was done: it never was. */
	if (unlikely(smr_power_is_cut(&sc->power)))
		sts = BLK_STS_IOERR;

	if (io->kind != SMR_IO_SEQ_WRITE) {
		if (!sts && io->zero_from)
			smr_zero_tail(orig, io->zero_from);
		bio_put(clone);
		smr_hm_end(sc, orig, sts);
		return;
	}

	spin_lock_irqsave(&sc->lock, flags);
	io->done = true;
	io->status = sts;
	smr_zone_retire(sc, io->zone, &done);
	/*
	 * Under the lock: once it is dropped another completion may retire
	 * and end this write, and the engine may go with the last bio.
	 */
	if (!bio_list_empty(&sc->reset_wait))
		queue_work(sc->wq, &sc->commit_work);
	spin_unlock_irqrestore(&sc->lock, flags);

	list_for_each_entry_safe(pos, next, &done, node) {
		struct bio *bio = pos->orig;

		sts = pos->status;
		if (!sts && bio_op(bio) == REQ_OP_ZONE_APPEND)
			bio->bi_iter.bi_sector =
				smr_zone_start(sc, pos->zone) + pos->start;
		if (!sts && pos->fua) {
			bio_put(&pos->clone);
			smr_defer(sc, &sc->commit_bios, bio);
			continue;
		}
		bio_put(&pos->clone);
		smr_hm_end(sc, bio, sts);
	}
}

static enum hrtimer_restart smr_hm_timed_done(struct hrtimer *t)
{
	struct smr_hm_io *io = container_of(t, struct smr_hm_io, tb.timer);

	/* The clone, and the timer with it, may be freed in there. */
	smr_hm_io_done(&io->clone);
	return HRTIMER_NORESTART;
}

/*
 * The backing finished a clone. With the timing model its completion
 * waits for the modelled end: the zone's write pointer order is kept by
 * smr_zone_retire(), which only retires writes marked done here.
 */
static void smr_hm_clone_endio(struct bio *clone)
{
	struct smr_hm_io *io = container_of(clone, struct smr_hm_io, clone);
	struct smr_tm *tm = io->sc->tm;

	if (tm && !clone->bi_status &&
	    smr_tm_defer(tm, &io->tb, smr_hm_timed_done))
		return;
	smr_hm_io_done(clone);
}

/*
 * Aim a clone at @bsector of the backing device; @pos is its device
 * sector, where the timing model puts it.
 */
static void smr_hm_prep(struct smr_hm_io *io, sector_t bsector, sector_t pos)
{
	struct bio *clone = &io->clone;

	/* Sequential writes were handed over in write pointer order already. */
	if (io->sc->tm && !io->tb.charged)
		smr_tm_host(io->sc->tm, &io->tb, smr_tm_pos(io->sc->tm, pos),
			    bio_sectors(clone), io->orig->bi_opf);
	clone->bi_iter.bi_sector = bsector;
	clone->bi_end_io = smr_hm_clone_endio;
}

static void smr_hm_issue(struct smr_hm_io *io, sector_t bsector,
			 sector_t pos)
{
	smr_hm_prep(io, bsector, pos);
	smr_hm_send(io);
}

static struct smr_hm_io *smr_hm_clone(struct smr_target *sc, struct bio *bio,
				      u8 kind)
{
	struct bio *clone = bio_alloc_clone(sc->bdev, bio, GFP_NOIO, &sc->bs);
	struct smr_hm_io *io = container_of(clone, struct smr_hm_io, clone);

	io->sc = sc;
	io->orig = bio;
	io->kind = kind;
	io->zero_from = 0;
	io->done = false;
	io->fua = false;
	io->orphan = false;
	io->status = BLK_STS_OK;
	smr_tm_bio_init(&io->tb);
	return io;
}

/*
 * A write to sequential zone @zno: checked against the write pointer and
 * placed (the pointer advances) now, in submission order, so that writes
 * pipelined behind it find the pointer where it leaves it. With
 * @preflush it is issued only after the flush it asks for: the commit
 * worker sends it on (smr_hm_commit_work()).
 */
static void smr_hm_write_seq(struct smr_target *sc, struct bio *bio, u32 zno,
			     u32 off, u32 nr, bool preflush)
{
	bool append = bio_op(bio) == REQ_OP_ZONE_APPEND;
	struct smr_zone *z = &sc->zones[zno];
	struct smr_hm_io *io;
	blk_status_t sts;
	u32 wp;
	u8 cond;

	/* Allocate first: a mempool allocation may sleep. */
	io = smr_hm_clone(sc, bio, SMR_IO_SEQ_WRITE);

	spin_lock_irq(&sc->lock);
	sts = smr_zone_usable(z);
	if (sts)
		goto fail;
	if (smr_zone_has_stale(z)) {
		/* A write from before a reset or failure may still land. */
		sts = BLK_STS_IOERR;
		goto fail;
	}
	if (append)
		off = z->wp;
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
	io->zone = zno;
	io->start = off;
	io->end = off + nr;
	io->gen = z->gen;
	io->fua = bio->bi_opf & REQ_FUA;
	list_add_tail(&io->node, &z->fifo);
	/*
	 * Handed to the model in write pointer order, as a drive takes a
	 * zone's writes (with queue_depth it may serve them in another).
	 */
	if (sc->tm)
		smr_tm_host(sc->tm, &io->tb,
			    smr_tm_pos(sc->tm, smr_zone_start(sc, zno) + off),
			    nr, bio->bi_opf);
	z->wp += nr;
	if (z->wp == sc->zone_capacity)
		smr_cond_enter(sc, z, BLK_ZONE_COND_FULL);
	sc->stats.writes++;
	sc->stats.write_sectors += nr;
	spin_unlock_irq(&sc->lock);

	/*
	 * A plain write (the commit worker flushes before acknowledging FUA)
	 * with the clone's flags: bio_alloc_clone() dropped REQ_ALLOC_CACHE,
	 * for which sc->bs has no per-cpu cache (put into one anyway: 7.3).
	 */
	io->clone.bi_opf = REQ_OP_WRITE |
		(io->clone.bi_opf & ~(REQ_OP_MASK | REQ_FUA | REQ_PREFLUSH));
	trace_smr_hm_write(sc->label, zno, off, nr, append);
	if (preflush) {
		smr_hm_prep(io, smr_backing_sector(sc, zno, off),
			    smr_zone_start(sc, zno) + off);
		smr_defer(sc, &sc->preflush_clones, &io->clone);
		return;
	}
	smr_hm_issue(io, smr_backing_sector(sc, zno, off),
		     smr_zone_start(sc, zno) + off);
	return;

fail:
	sc->stats.errors++;
	wp = z->wp;
	cond = z->cond;
	spin_unlock_irq(&sc->lock);
	bio_put(&io->clone);
	smr_nl_zone_error(sc, zno, cond, smr_zone_start(sc, zno) + off, nr,
			  smr_zone_start(sc, zno) + wp);
	smr_hm_end(sc, bio, sts);
}

static void smr_hm_zone_mgmt(struct smr_target *sc, struct bio *bio)
{
	sector_t sector = bio->bi_iter.bi_sector;
	u32 zno = smr_zone_of(sc, sector);
	blk_status_t sts;

	/* Past the last zone: the block layer checks, in-kernel callers may not. */
	if (zno >= sc->nr_zones || sector != smr_zone_start(sc, zno) ||
	    smr_zone_is_conv(sc, zno)) {
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

	if (bio_op(bio) == REQ_OP_ZONE_RESET ||
	    bio_op(bio) == REQ_OP_ZONE_FINISH) {
		/* Acknowledge a reset or finish once it is durable. */
		smr_defer(sc, &sc->commit_bios, bio);
		return;
	}
	/* Open and close are not persisted: zones come back closed. */
	smr_hm_end(sc, bio, BLK_STS_OK);
	return;
fail:
	smr_hm_end(sc, bio, sts);
}

/*
 * Where a zone's readable data ends: a conventional zone's whole size, a
 * sequential zone's durable end (reads past it return zeros). Caller
 * holds sc->lock.
 */
static u32 smr_read_limit(struct smr_target *sc, u32 zno)
{
	return smr_zone_is_conv(sc, zno) ? sc->zone_sectors : sc->zones[zno].dend;
}

static void smr_hm_read(struct smr_target *sc, struct bio *bio, u32 zno,
			u32 off, u32 nr)
{
	struct smr_zone *z = &sc->zones[zno];
	struct smr_hm_io *io;
	u32 limit;
	u8 cond;

	spin_lock_irq(&sc->lock);
	limit = smr_read_limit(sc, zno);
	cond = z->cond;
	sc->stats.reads++;
	sc->stats.read_sectors += nr;
	if (cond == BLK_ZONE_COND_OFFLINE)
		sc->stats.errors++;
	spin_unlock_irq(&sc->lock);

	if (cond == BLK_ZONE_COND_OFFLINE) {
		smr_hm_end(sc, bio, BLK_STS_IOERR);
		return;
	}
	if (off >= limit) {
		/* Nothing written there: read zeros, as after a reset. */
		zero_fill_bio(bio);
		smr_hm_end(sc, bio, BLK_STS_OK);
		return;
	}
	io = smr_hm_clone(sc, bio, SMR_IO_READ);
	if (off + nr > limit) {
		/* Read the data, zero the rest: nothing past it on the backing. */
		io->zero_from = (limit - off) << SECTOR_SHIFT;
		io->clone.bi_iter.bi_size = io->zero_from;
	}
	smr_hm_issue(io, smr_backing_sector(sc, zno, off),
		     smr_zone_start(sc, zno) + off);
}

/*
 * A read the smr target may send to the backing device itself, as
 * dm-linear would: whole blocks of one zone, all of it durable data
 * (nothing to zero), with no timing model and no write cache (either
 * would have to see it), the power on. Counted as smr_hm_read() counts a
 * read. On true @bio is aimed at the backing device; on false it is
 * untouched and goes through smr_hm_submit().
 *
 * What it skips, per 4 KiB read: the engine's clone and a second pass
 * through the block layer (a bio time stamp, the split) for a bio that
 * needs neither (docs/benchmarks-log.md, 2026-11-28).
 *
 * It holds nothing of the engine once it returns, so it is not counted
 * in sc->inflight, and the settle after a power cut (smr_power_settle())
 * does not wait for it: a read that found the power on may still reach
 * the backing device after the cut. That is the one thing a cut drive
 * still sends, and it changes nothing there, so what the next engine
 * loads is the same; the read itself fails at the target's end_io().
 */
bool smr_hm_read_remap(struct smr_target *sc, struct bio *bio)
{
	sector_t sector = bio->bi_iter.bi_sector;
	u32 nr = bio_sectors(bio);
	struct smr_zone *z;
	u32 zno, off, limit;

	if (sc->tm || sc->wc || bio_op(bio) != REQ_OP_READ || !nr ||
	    (sector | nr) & (SMR_BLOCK_SECTORS - 1))
		return false;
	zno = smr_zone_of(sc, sector);
	off = sector - smr_zone_start(sc, zno);
	if (zno >= sc->nr_zones || off + nr > sc->zone_sectors)
		return false;
	z = &sc->zones[zno];

	spin_lock_irq(&sc->lock);
	limit = smr_read_limit(sc, zno);
	if (off + nr > limit || z->cond == BLK_ZONE_COND_OFFLINE ||
	    !smr_power_is_on(&sc->power)) {
		spin_unlock_irq(&sc->lock);
		return false;
	}
	sc->stats.reads++;
	sc->stats.read_sectors += nr;
	spin_unlock_irq(&sc->lock);

	bio_set_dev(bio, sc->bdev);
	bio->bi_iter.bi_sector = smr_backing_sector(sc, zno, off);
	return true;
}

/*
 * Entry point for a host bio, split to the disk's limits (so within one
 * zone) and counted in sc->inflight: it ends through smr_hm_end().
 */
void smr_hm_submit(struct smr_target *sc, struct bio *bio)
{
	sector_t sector = bio->bi_iter.bi_sector;
	u32 nr = bio_sectors(bio);
	bool preflush = bio->bi_opf & REQ_PREFLUSH;
	struct smr_hm_io *io;
	u32 zno, off;

	/* Also a write a preflush held, sent on after the cut. */
	if (unlikely(smr_power_is_cut(&sc->power))) {
		smr_hm_power_fail(sc, bio);
		return;
	}
	if (unlikely(!nr && bio_op(bio) == REQ_OP_WRITE)) {
		/*
		 * An empty write (an empty FUA one) is a flush too. Zone
		 * management is not, flag or not: resets and finishes are
		 * committed before they complete anyway.
		 */
		smr_defer(sc, &sc->flush_bios, bio);
		return;
	}

	switch (bio_op(bio)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
	case REQ_OP_ZONE_APPEND:
		break;
	case REQ_OP_ZONE_OPEN:
	case REQ_OP_ZONE_CLOSE:
	case REQ_OP_ZONE_FINISH:
	case REQ_OP_ZONE_RESET:
		smr_hm_zone_mgmt(sc, bio);
		return;
	case REQ_OP_ZONE_RESET_ALL:
		smr_defer(sc, &sc->reset_all_bios, bio);
		return;
	default:
		smr_hm_end(sc, bio, BLK_STS_NOTSUPP);
		return;
	}

	zno = smr_zone_of(sc, sector);
	off = sector - smr_zone_start(sc, zno);
	if (unlikely((sector | nr) & (SMR_BLOCK_SECTORS - 1) || !nr ||
		     zno >= sc->nr_zones || off + nr > sc->zone_sectors)) {
		spin_lock_irq(&sc->lock);
		sc->stats.errors++;
		spin_unlock_irq(&sc->lock);
		smr_hm_end(sc, bio, BLK_STS_IOERR);
		return;
	}
	if (bio_op(bio) == REQ_OP_READ) {
		smr_hm_read(sc, bio, zno, off, nr);
		return;
	}
	if (!smr_zone_is_conv(sc, zno)) {
		smr_hm_write_seq(sc, bio, zno, off, nr, preflush);
		return;
	}
	if (unlikely(preflush)) {
		/* The commit worker flushes, then submits it again without. */
		smr_defer(sc, &sc->preflush_bios, bio);
		return;
	}
	if (bio_op(bio) == REQ_OP_ZONE_APPEND) {
		/* The block layer refuses these too; say so if one gets here. */
		smr_hm_end(sc, bio, BLK_STS_IOERR);
		return;
	}
	spin_lock_irq(&sc->lock);
	sc->stats.writes++;
	sc->stats.write_sectors += nr;
	spin_unlock_irq(&sc->lock);
	/* Conventional zones are contiguous on the backing device; FUA passes. */
	io = smr_hm_clone(sc, bio, SMR_IO_CONV_WRITE);
	smr_hm_issue(io, smr_backing_sector(sc, zno, off),
		     smr_zone_start(sc, zno) + off);
}

static bool op_is_zone_reset(struct bio *bio)
{
	return bio_op(bio) == REQ_OP_ZONE_RESET ||
		bio_op(bio) == REQ_OP_ZONE_RESET_ALL;
}

/* Is a write that reset @bio overtook still in flight? Holds sc->lock. */
static bool smr_reset_overtakes(struct smr_target *sc, struct bio *bio)
{
	if (bio_op(bio) == REQ_OP_ZONE_RESET_ALL)
		return sc->stale_inflight;
	return smr_zone_has_stale(&sc->zones[smr_zone_of(sc,
						bio->bi_iter.bi_sector)]);
}

/*
 * Complete what waits for a commit: flushes, FUA writes, resets and
 * finishes; submit writes that carried a preflush; acknowledge resets
 * once no write they overtook is in flight.
 */
static void smr_hm_commit_work(struct work_struct *work)
{
	struct smr_target *sc = container_of(work, struct smr_target,
					     commit_work);
	struct bio_list flushes, commits, preflush, reset_all, ready, released;
	struct bio_list waiting, clones;
	blk_status_t sts = BLK_STS_OK;
	struct bio *bio;

	spin_lock_irq(&sc->lock);
	flushes = sc->flush_bios;
	commits = sc->commit_bios;
	preflush = sc->preflush_bios;
	reset_all = sc->reset_all_bios;
	clones = sc->preflush_clones;
	bio_list_init(&sc->preflush_clones);
	bio_list_init(&sc->flush_bios);
	bio_list_init(&sc->commit_bios);
	bio_list_init(&sc->preflush_bios);
	bio_list_init(&sc->reset_all_bios);
	spin_unlock_irq(&sc->lock);

	if (!bio_list_empty(&reset_all))
		smr_hm_reset_all(sc);
	if (!bio_list_empty(&flushes) || !bio_list_empty(&commits) ||
	    !bio_list_empty(&preflush) || !bio_list_empty(&reset_all) ||
	    !bio_list_empty(&clones)) {
		if (smr_md_commit(sc))
			sts = BLK_STS_IOERR;
	}
	/*
	 * The timing model's write cache: a flush (a FUA write, a preflush)
	 * ends once the cache is destaged. Bounded by the destage time of
	 * wcache_mib; at once when suspending.
	 */
	if (sc->tm && !sts && (!bio_list_empty(&flushes) || !bio_list_empty(&commits) ||
		       !bio_list_empty(&preflush) || !bio_list_empty(&clones))) {
		u64 end = smr_tm_flush_end(sc->tm);

		if (end)
			smr_tm_wait(sc->tm, end);
	}
	/* Cut while it waited for the destage: the drive never finished. */
	if (!sts && smr_power_is_cut(&sc->power))
		sts = BLK_STS_IOERR;

	/*
	 * Sequential writes placed at submission, now past their flush. One
	 * whose flush failed fails as a write does: its zone rewinds to it,
	 * and the writes placed behind it fail too.
	 */
	while ((bio = bio_list_pop(&clones))) {
		/* Nothing reaches the medium after a power cut. */
		if (sts || smr_power_is_cut(&sc->power)) {
			bio->bi_status = sts ?: BLK_STS_IOERR;
			smr_hm_io_done(bio);
		} else {
			smr_hm_send(container_of(bio, struct smr_hm_io, clone));
		}
	}

	while ((bio = bio_list_pop(&flushes)))
		smr_hm_end(sc, bio, sts);
	while ((bio = bio_list_pop(&preflush))) {
		if (sts) {
			smr_hm_end(sc, bio, sts);
			continue;
		}
		bio->bi_opf &= ~REQ_PREFLUSH;
		smr_hm_submit(sc, bio);
	}
	bio_list_merge(&commits, &reset_all);
	bio_list_init(&ready);
	bio_list_init(&released);
	spin_lock_irq(&sc->lock);
	while ((bio = bio_list_pop(&commits))) {
		if (!sts && op_is_zone_reset(bio))
			bio_list_add(&sc->reset_wait, bio);
		else
			bio_list_add(&ready, bio);
	}
	/* Committed resets, released once no write they overtook is in flight. */
	waiting = sc->reset_wait;
	bio_list_init(&sc->reset_wait);
	while ((bio = bio_list_pop(&waiting))) {
		if (smr_reset_overtakes(sc, bio))
			bio_list_add(&sc->reset_wait, bio);
		else
			bio_list_add(&released, bio);
	}
	spin_unlock_irq(&sc->lock);
	while ((bio = bio_list_pop(&ready)))
		smr_hm_end(sc, bio, sts);
	/* After a power cut nothing more is acknowledged. */
	sts = smr_power_is_cut(&sc->power) ? BLK_STS_IOERR : BLK_STS_OK;
	while ((bio = bio_list_pop(&released)))
		smr_hm_end(sc, bio, sts);
}

/*
 * A host bio that arrived after a power cut (dm-smr-power.c), or the one
 * that cut it: it never reaches the drive.
 */
void smr_hm_power_fail(struct smr_target *sc, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->lock, flags);
	sc->stats.errors++;
	spin_unlock_irqrestore(&sc->lock, flags);
	smr_hm_end(sc, bio, BLK_STS_IOERR);
}

/* Allocate the zone context's I/O resources (engine creation). */
int smr_hm_ctx_init(struct smr_target *sc)
{
	u32 z;
	int ret;

	spin_lock_init(&sc->lock);
	bio_list_init(&sc->flush_bios);
	bio_list_init(&sc->commit_bios);
	bio_list_init(&sc->preflush_bios);
	bio_list_init(&sc->preflush_clones);
	bio_list_init(&sc->reset_all_bios);
	bio_list_init(&sc->reset_wait);
	atomic_set(&sc->inflight, 0);
	INIT_WORK(&sc->commit_work, smr_hm_commit_work);
	smr_hm_power_setup(sc);

	sc->zones = kvcalloc(sc->nr_zones, sizeof(*sc->zones), GFP_KERNEL);
	if (!sc->zones)
		return -ENOMEM;
	for (z = 0; z < sc->nr_zones; z++)
		INIT_LIST_HEAD(&sc->zones[z].fifo);
	sc->mem_bytes = sizeof(*sc) + (size_t)sc->nr_zones * sizeof(*sc->zones);
	if (sc->eff_max_open) {
		/* Only an open limit ever closes a zone to make room. */
		sc->imp_ring = kvcalloc(sc->nr_zones, sizeof(u32), GFP_KERNEL);
		if (!sc->imp_ring)
			return -ENOMEM;
		sc->mem_bytes += (size_t)sc->nr_zones * sizeof(u32);
	}
	ret = smr_md_init(sc, &smr_hm_md_mode, smr_hm_md_blocks(sc->nr_zones));
	if (ret)
		return ret;
	ret = bioset_init(&sc->bs, BIO_POOL_SIZE,
			  offsetof(struct smr_hm_io, clone), 0);
	if (ret)
		return ret;
	sc->wq = alloc_ordered_workqueue("dm-smr-%s", WQ_MEM_RECLAIM, sc->name);
	if (!sc->wq)
		return -ENOMEM;
	return 0;
}

void smr_hm_ctx_exit(struct smr_target *sc)
{
	/* A cut's work queues the commit work: before the queue goes. */
	smr_power_exit(&sc->power);
	/*
	 * Drained by the last commit, or dropped by a power cut; held I/O,
	 * if any, would end through the worker: before the queue goes.
	 */
	smr_wc_teardown(sc);
	if (sc->wq)
		destroy_workqueue(sc->wq);
	bioset_exit(&sc->bs);
	smr_md_exit(sc);
	kvfree(sc->imp_ring);
	kvfree(sc->zones);
}
