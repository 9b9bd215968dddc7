// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr host-managed mode: a zoned block device over a non-zoned disk.
 *
 * Zone conditions, write pointer checks and open/active resource rules
 * follow the ZBC/ZNS model as null_blk implements it. This file runs the
 * state machine for the engine's gendisk (dm-smr-zdev.c): bios arrive
 * here already split at zone boundaries, on every kernel, from the disk's
 * submit_bio or straight from the smr target's map() (smr_hm_map() in
 * dm-smr-target.c, through smr_zdev_map()); map() sends reads of durable
 * data to the backing device itself first (smr_hm_read_remap(), inline
 * in dm-smr.h).
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
 *
 * Why this file is long: the write completion here carries the store
 * the lock-free read (smr_hm_read_remap(), dm-smr.h, with its ordering
 * argument) pairs with.
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
 * through wake_up_var(), which uses zc's address only as a key: the
 * engine may be freed as soon as the count reads 0.
 */
static void smr_hm_end(struct smr_zoned *zc, struct bio *bio, blk_status_t sts)
{
	bio->bi_status = sts;
	bio_endio(bio);
	atomic_dec_and_wake_up(&zc->inflight);
}

/* Hand a bio to the commit worker. */
static void smr_defer(struct smr_zoned *zc, struct bio_list *list,
		      struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&zc->d.lock, flags);
	bio_list_add(list, bio);
	spin_unlock_irqrestore(&zc->d.lock, flags);
	queue_work(zc->d.wq, &zc->d.commit_work);
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
 * host sees the zone as it was before that write. Caller holds zc->d.lock.
 */
static void smr_rewind(struct smr_zoned *zc, struct smr_zone *z, u32 start)
{
	/*
	 * A zone the write filled gave up its active resource when it became
	 * FULL, and another zone may hold it by now: closed again, it would
	 * be one active zone over the limit. It stays FULL then, finished
	 * after its durable data (reads past that return zeros), as a finish
	 * would leave it: the host sees the write fail and the zone full.
	 */
	if (z->cond == BLK_ZONE_COND_FULL && start && smr_active_at_limit(zc)) {
		z->finished = 1;
		smr_hm_zone_dirty(zc, z - zc->zones);
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
		smr_cond_enter(zc, z, z->wp ? BLK_ZONE_COND_CLOSED :
			       BLK_ZONE_COND_EMPTY);
}

/*
 * Retire the completed writes at the head of a zone's fifo onto @done, in
 * write pointer order. Caller holds zc->d.lock.
 */
static void smr_zone_retire(struct smr_zoned *zc, u32 zno,
			    struct list_head *done)
{
	struct smr_zone *z = &zc->zones[zno];
	struct smr_hm_io *io;

	while ((io = list_first_entry_or_null(&z->fifo, struct smr_hm_io,
					      node)) && io->done) {
		list_move_tail(&io->node, done);
		if (io->gen != z->gen) {
			/* Submitted before a reset or a failure: not the zone's. */
			zc->stale_inflight--;
			if (io->orphan) {
				io->status = BLK_STS_IOERR;
				zc->d.errors++;
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
				smr_rewind(zc, z, io->start);
			smr_zone_orphan(zc, z, true);
			zc->d.errors++;
			continue;
		}
		/*
		 * Release: the lock-free read (smr_hm_read_remap()) that
		 * sees the new end also sees this write's data on the
		 * backing device, whose completion came before.
		 */
		smp_store_release(&z->dend, io->end);
		smr_hm_zone_dirty(zc, zno);
	}
}

/* A clone's I/O is done, at its modelled end with the timing model. */
static void smr_hm_io_done(struct bio *clone)
{
	struct smr_hm_io *io = container_of(clone, struct smr_hm_io, clone);
	struct smr_zoned *zc = io->zc;
	blk_status_t sts = clone->bi_status;
	struct bio *orig = io->orig;
	struct smr_hm_io *pos, *next;
	unsigned long flags;
	LIST_HEAD(done);

	/*
	 * Ending without the model (a failure): off its queue first. A
	 * success came through the model, which took it off its queue.
	 */
	if (zc->d.tm && sts)
		smr_tm_cancel(zc->d.tm, &io->tb);
	/* The power went before the drive said it was done: it never was. */
	if (unlikely(smr_power_is_cut(&zc->d.power)))
		sts = BLK_STS_IOERR;

	if (io->kind != SMR_IO_SEQ_WRITE) {
		if (!sts && io->zero_from)
			smr_zero_tail(orig, io->zero_from);
		bio_put(clone);
		smr_hm_end(zc, orig, sts);
		return;
	}

	spin_lock_irqsave(&zc->d.lock, flags);
	io->done = true;
	io->status = sts;
	smr_zone_retire(zc, io->zone, &done);
	/*
	 * Under the lock: once it is dropped another completion may retire
	 * and end this write, and the engine may go with the last bio.
	 */
	if (!bio_list_empty(&zc->reset_wait))
		queue_work(zc->d.wq, &zc->d.commit_work);
	spin_unlock_irqrestore(&zc->d.lock, flags);

	list_for_each_entry_safe(pos, next, &done, node) {
		struct bio *bio = pos->orig;

		sts = pos->status;
		if (!sts && bio_op(bio) == REQ_OP_ZONE_APPEND)
			bio->bi_iter.bi_sector =
				smr_zone_start(zc, pos->zone) + pos->start;
		if (!sts && pos->fua) {
			bio_put(&pos->clone);
			smr_defer(zc, &zc->commit_bios, bio);
			continue;
		}
		bio_put(&pos->clone);
		smr_hm_end(zc, bio, sts);
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
	struct smr_tm *tm = io->zc->d.tm;

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
	if (io->zc->d.tm && !io->tb.charged)
		smr_tm_host(io->zc->d.tm, &io->tb, smr_tm_pos(io->zc->d.tm, pos),
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

static struct smr_hm_io *smr_hm_clone(struct smr_zoned *zc, struct bio *bio,
				      u8 kind)
{
	struct bio *clone = bio_alloc_clone(zc->d.bdev, bio, GFP_NOIO, &zc->d.bs);
	struct smr_hm_io *io = container_of(clone, struct smr_hm_io, clone);

	io->zc = zc;
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
static void smr_hm_write_seq(struct smr_zoned *zc, struct bio *bio, u32 zno,
			     u32 off, u32 nr, bool preflush)
{
	bool append = bio_op(bio) == REQ_OP_ZONE_APPEND;
	struct smr_zone *z = &zc->zones[zno];
	struct smr_hm_io *io;
	blk_status_t sts;
	u32 wp;
	u8 cond;

	/* Allocate first: a mempool allocation may sleep. */
	io = smr_hm_clone(zc, bio, SMR_IO_SEQ_WRITE);

	spin_lock_irq(&zc->d.lock);
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
	    off + nr > zc->geo.zone_capacity) {
		zc->stats.wp_errors++;
		sts = BLK_STS_IOERR;
		goto fail;
	}
	if (z->cond == BLK_ZONE_COND_EMPTY || z->cond == BLK_ZONE_COND_CLOSED) {
		sts = smr_check_resources(zc, z);
		if (sts)
			goto fail;
		smr_cond_enter(zc, z, BLK_ZONE_COND_IMP_OPEN);
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
	if (zc->d.tm)
		smr_tm_host(zc->d.tm, &io->tb,
			    smr_tm_pos(zc->d.tm, smr_zone_start(zc, zno) + off),
			    nr, bio->bi_opf);
	z->wp += nr;
	if (z->wp == zc->geo.zone_capacity)
		smr_cond_enter(zc, z, BLK_ZONE_COND_FULL);
	zc->stats.writes++;
	zc->stats.write_sectors += nr;
	spin_unlock_irq(&zc->d.lock);

	/*
	 * A plain write (the commit worker flushes before acknowledging FUA)
	 * with the clone's flags: bio_alloc_clone() dropped REQ_ALLOC_CACHE,
	 * for which zc->d.bs has no per-cpu cache (put into one anyway: 7.3).
	 */
	io->clone.bi_opf = REQ_OP_WRITE |
		(io->clone.bi_opf & ~(REQ_OP_MASK | REQ_FUA | REQ_PREFLUSH));
	trace_smr_hm_write(zc->d.label, zno, off, nr, append);
	if (preflush) {
		smr_hm_prep(io, smr_backing_sector(zc, zno, off),
			    smr_zone_start(zc, zno) + off);
		smr_defer(zc, &zc->preflush_clones, &io->clone);
		return;
	}
	smr_hm_issue(io, smr_backing_sector(zc, zno, off),
		     smr_zone_start(zc, zno) + off);
	return;

fail:
	zc->d.errors++;
	wp = z->wp;
	cond = z->cond;
	spin_unlock_irq(&zc->d.lock);
	bio_put(&io->clone);
	smr_nl_zone_error(&zc->d, zno, cond, smr_zone_start(zc, zno) + off, nr,
			  smr_zone_start(zc, zno) + wp);
	smr_hm_end(zc, bio, sts);
}

static void smr_hm_zone_mgmt(struct smr_zoned *zc, struct bio *bio)
{
	sector_t sector = bio->bi_iter.bi_sector;
	u32 zno = smr_zone_of(zc, sector);
	blk_status_t sts;

	/* Past the last zone: the block layer checks, in-kernel callers may not. */
	if (zno >= zc->geo.nr_zones || sector != smr_zone_start(zc, zno) ||
	    smr_zone_is_conv(zc, zno)) {
		sts = BLK_STS_IOERR;
		goto fail;
	}

	spin_lock_irq(&zc->d.lock);
	switch (bio_op(bio)) {
	case REQ_OP_ZONE_OPEN:
		sts = smr_zone_open(zc, &zc->zones[zno]);
		break;
	case REQ_OP_ZONE_CLOSE:
		sts = smr_zone_close(zc, &zc->zones[zno]);
		break;
	case REQ_OP_ZONE_FINISH:
		sts = smr_zone_finish(zc, zno);
		break;
	default:	/* REQ_OP_ZONE_RESET */
		sts = smr_zone_reset(zc, zno);
		break;
	}
	if (sts)
		zc->d.errors++;
	spin_unlock_irq(&zc->d.lock);
	if (sts)
		goto fail;

	if (bio_op(bio) == REQ_OP_ZONE_RESET ||
	    bio_op(bio) == REQ_OP_ZONE_FINISH) {
		/* Acknowledge a reset or finish once it is durable. */
		smr_defer(zc, &zc->commit_bios, bio);
		return;
	}
	/* Open and close are not persisted: zones come back closed. */
	smr_hm_end(zc, bio, BLK_STS_OK);
	return;
fail:
	smr_hm_end(zc, bio, sts);
}

/*
 * Where a zone's readable data ends: a conventional zone's whole size, a
 * sequential zone's durable end (reads past it return zeros). Caller
 * holds zc->d.lock.
 */
static u32 smr_read_limit(struct smr_zoned *zc, u32 zno)
{
	return smr_zone_is_conv(zc, zno) ? zc->geo.zone_sectors : zc->zones[zno].dend;
}

static void smr_hm_read(struct smr_zoned *zc, struct bio *bio, u32 zno,
			u32 off, u32 nr)
{
	struct smr_zone *z = &zc->zones[zno];
	struct smr_hm_io *io;
	u32 limit;
	u8 cond;

	smr_count_add(zc->rd, nr);
	spin_lock_irq(&zc->d.lock);
	limit = smr_read_limit(zc, zno);
	cond = z->cond;
	if (cond == BLK_ZONE_COND_OFFLINE)
		zc->d.errors++;
	spin_unlock_irq(&zc->d.lock);

	if (cond == BLK_ZONE_COND_OFFLINE) {
		smr_hm_end(zc, bio, BLK_STS_IOERR);
		return;
	}
	if (off >= limit) {
		/* Nothing written there: read zeros, as after a reset. */
		zero_fill_bio(bio);
		smr_hm_end(zc, bio, BLK_STS_OK);
		return;
	}
	io = smr_hm_clone(zc, bio, SMR_IO_READ);
	if (off + nr > limit) {
		/* Read the data, zero the rest: nothing past it on the backing. */
		io->zero_from = (limit - off) << SECTOR_SHIFT;
		io->clone.bi_iter.bi_size = io->zero_from;
	}
	smr_hm_issue(io, smr_backing_sector(zc, zno, off),
		     smr_zone_start(zc, zno) + off);
}

/*
 * Entry point for a host bio, split to the disk's limits (so within one
 * zone) and counted in zc->inflight: it ends through smr_hm_end().
 */
void smr_hm_submit(struct smr_zoned *zc, struct bio *bio)
{
	sector_t sector = bio->bi_iter.bi_sector;
	u32 nr = bio_sectors(bio);
	bool preflush = bio->bi_opf & REQ_PREFLUSH;
	struct smr_hm_io *io;
	u32 zno, off;

	/* Also a write a preflush held, sent on after the cut. */
	if (unlikely(smr_power_is_cut(&zc->d.power))) {
		smr_hm_power_fail(zc, bio);
		return;
	}
	if (unlikely(!nr && bio_op(bio) == REQ_OP_WRITE)) {
		/*
		 * An empty write (an empty FUA one) is a flush too. Zone
		 * management is not, flag or not: resets and finishes are
		 * committed before they complete anyway.
		 */
		smr_defer(zc, &zc->flush_bios, bio);
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
		smr_hm_zone_mgmt(zc, bio);
		return;
	case REQ_OP_ZONE_RESET_ALL:
		smr_defer(zc, &zc->reset_all_bios, bio);
		return;
	default:
		smr_hm_end(zc, bio, BLK_STS_NOTSUPP);
		return;
	}

	zno = smr_zone_of(zc, sector);
	off = sector - smr_zone_start(zc, zno);
	if (unlikely((sector | nr) & (SMR_BLOCK_SECTORS - 1) || !nr ||
		     zno >= zc->geo.nr_zones || off + nr > zc->geo.zone_sectors)) {
		spin_lock_irq(&zc->d.lock);
		zc->d.errors++;
		spin_unlock_irq(&zc->d.lock);
		smr_hm_end(zc, bio, BLK_STS_IOERR);
		return;
	}
	if (bio_op(bio) == REQ_OP_READ) {
		smr_hm_read(zc, bio, zno, off, nr);
		return;
	}
	if (!smr_zone_is_conv(zc, zno)) {
		smr_hm_write_seq(zc, bio, zno, off, nr, preflush);
		return;
	}
	if (unlikely(preflush)) {
		/* The commit worker flushes, then submits it again without. */
		smr_defer(zc, &zc->preflush_bios, bio);
		return;
	}
	if (bio_op(bio) == REQ_OP_ZONE_APPEND) {
		/* The block layer refuses these too; say so if one gets here. */
		smr_hm_end(zc, bio, BLK_STS_IOERR);
		return;
	}
	spin_lock_irq(&zc->d.lock);
	zc->stats.writes++;
	zc->stats.write_sectors += nr;
	spin_unlock_irq(&zc->d.lock);
	/* Conventional zones are contiguous on the backing device; FUA passes. */
	io = smr_hm_clone(zc, bio, SMR_IO_CONV_WRITE);
	smr_hm_issue(io, smr_backing_sector(zc, zno, off),
		     smr_zone_start(zc, zno) + off);
}

static bool op_is_zone_reset(struct bio *bio)
{
	return bio_op(bio) == REQ_OP_ZONE_RESET ||
		bio_op(bio) == REQ_OP_ZONE_RESET_ALL;
}

/* Is a write that reset @bio overtook still in flight? Holds zc->d.lock. */
static bool smr_reset_overtakes(struct smr_zoned *zc, struct bio *bio)
{
	if (bio_op(bio) == REQ_OP_ZONE_RESET_ALL)
		return zc->stale_inflight;
	return smr_zone_has_stale(&zc->zones[smr_zone_of(zc,
						bio->bi_iter.bi_sector)]);
}

/*
 * Complete what waits for a commit: flushes, FUA writes, resets and
 * finishes; submit writes that carried a preflush; acknowledge resets
 * once no write they overtook is in flight.
 */
static void smr_hm_commit_work(struct work_struct *work)
{
	struct smr_zoned *zc = container_of(work, struct smr_zoned,
					    d.commit_work);
	struct bio_list flushes, commits, preflush, reset_all, ready, released;
	struct bio_list waiting, clones;
	blk_status_t sts = BLK_STS_OK;
	struct bio *bio;

	spin_lock_irq(&zc->d.lock);
	flushes = zc->flush_bios;
	commits = zc->commit_bios;
	preflush = zc->preflush_bios;
	reset_all = zc->reset_all_bios;
	clones = zc->preflush_clones;
	bio_list_init(&zc->preflush_clones);
	bio_list_init(&zc->flush_bios);
	bio_list_init(&zc->commit_bios);
	bio_list_init(&zc->preflush_bios);
	bio_list_init(&zc->reset_all_bios);
	spin_unlock_irq(&zc->d.lock);

	if (!bio_list_empty(&reset_all))
		smr_hm_reset_all(zc);
	if (!bio_list_empty(&flushes) || !bio_list_empty(&commits) ||
	    !bio_list_empty(&preflush) || !bio_list_empty(&reset_all) ||
	    !bio_list_empty(&clones)) {
		if (smr_md_commit(&zc->d))
			sts = BLK_STS_IOERR;
	}
	/*
	 * The timing model's write cache: a flush (a FUA write, a preflush)
	 * ends once the cache is destaged. Bounded by the destage time of
	 * wcache_mib; at once when suspending.
	 */
	if (zc->d.tm && !sts && (!bio_list_empty(&flushes) || !bio_list_empty(&commits) ||
		       !bio_list_empty(&preflush) || !bio_list_empty(&clones))) {
		u64 end = smr_tm_flush_end(zc->d.tm);

		if (end)
			smr_tm_wait(zc->d.tm, end);
	}
	/* Cut while it waited for the destage: the drive never finished. */
	if (!sts && smr_power_is_cut(&zc->d.power))
		sts = BLK_STS_IOERR;

	/*
	 * Sequential writes placed at submission, now past their flush. One
	 * whose flush failed fails as a write does: its zone rewinds to it,
	 * and the writes placed behind it fail too.
	 */
	while ((bio = bio_list_pop(&clones))) {
		/* Nothing reaches the medium after a power cut. */
		if (sts || smr_power_is_cut(&zc->d.power)) {
			bio->bi_status = sts ?: BLK_STS_IOERR;
			smr_hm_io_done(bio);
		} else {
			smr_hm_send(container_of(bio, struct smr_hm_io, clone));
		}
	}

	while ((bio = bio_list_pop(&flushes)))
		smr_hm_end(zc, bio, sts);
	while ((bio = bio_list_pop(&preflush))) {
		if (sts) {
			smr_hm_end(zc, bio, sts);
			continue;
		}
		bio->bi_opf &= ~REQ_PREFLUSH;
		smr_hm_submit(zc, bio);
	}
	bio_list_merge(&commits, &reset_all);
	bio_list_init(&ready);
	bio_list_init(&released);
	spin_lock_irq(&zc->d.lock);
	while ((bio = bio_list_pop(&commits))) {
		if (!sts && op_is_zone_reset(bio))
			bio_list_add(&zc->reset_wait, bio);
		else
			bio_list_add(&ready, bio);
	}
	/* Committed resets, released once no write they overtook is in flight. */
	waiting = zc->reset_wait;
	bio_list_init(&zc->reset_wait);
	while ((bio = bio_list_pop(&waiting))) {
		if (smr_reset_overtakes(zc, bio))
			bio_list_add(&zc->reset_wait, bio);
		else
			bio_list_add(&released, bio);
	}
	spin_unlock_irq(&zc->d.lock);
	while ((bio = bio_list_pop(&ready)))
		smr_hm_end(zc, bio, sts);
	/* After a power cut nothing more is acknowledged. */
	sts = smr_power_is_cut(&zc->d.power) ? BLK_STS_IOERR : BLK_STS_OK;
	while ((bio = bio_list_pop(&released)))
		smr_hm_end(zc, bio, sts);
}

/*
 * A host bio that arrived after a power cut (dm-smr-power.c), or the one
 * that cut it: it never reaches the drive.
 */
void smr_hm_power_fail(struct smr_zoned *zc, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&zc->d.lock, flags);
	zc->d.errors++;
	spin_unlock_irqrestore(&zc->d.lock, flags);
	smr_hm_end(zc, bio, BLK_STS_IOERR);
}

/* Allocate the engine's zone state and I/O resources (its creation). */
int smr_hm_ctx_init(struct smr_zoned *zc)
{
	u32 z;
	int ret;

	spin_lock_init(&zc->d.lock);
	seqcount_spinlock_init(&zc->cond_seq, &zc->d.lock);
	bio_list_init(&zc->flush_bios);
	bio_list_init(&zc->commit_bios);
	bio_list_init(&zc->preflush_bios);
	bio_list_init(&zc->preflush_clones);
	bio_list_init(&zc->reset_all_bios);
	bio_list_init(&zc->reset_wait);
	atomic_set(&zc->inflight, 0);
	INIT_WORK(&zc->d.commit_work, smr_hm_commit_work);
	smr_hm_power_setup(zc);

	zc->zones = kvcalloc(zc->geo.nr_zones, sizeof(*zc->zones), GFP_KERNEL);
	if (!zc->zones)
		return -ENOMEM;
	for (z = 0; z < zc->geo.nr_zones; z++)
		INIT_LIST_HEAD(&zc->zones[z].fifo);
	zc->rd = alloc_percpu(struct smr_io_count);
	if (!zc->rd)
		return -ENOMEM;
	zc->d.mem_bytes = sizeof(*zc) +
		(size_t)zc->geo.nr_zones * sizeof(*zc->zones) +
		num_possible_cpus() * sizeof(struct smr_io_count);
	if (zc->geo.eff_max_open) {
		/* Only an open limit ever closes a zone to make room. */
		zc->imp_ring = kvcalloc(zc->geo.nr_zones, sizeof(u32), GFP_KERNEL);
		if (!zc->imp_ring)
			return -ENOMEM;
		zc->d.mem_bytes += (size_t)zc->geo.nr_zones * sizeof(u32);
	}
	ret = smr_md_init(&zc->d, &smr_hm_md_mode,
			  smr_hm_md_blocks(zc->geo.nr_zones));
	if (ret)
		return ret;
	ret = bioset_init(&zc->d.bs, BIO_POOL_SIZE,
			  offsetof(struct smr_hm_io, clone), 0);
	if (ret)
		return ret;
	zc->d.wq = alloc_ordered_workqueue("dm-smr-%s", WQ_MEM_RECLAIM,
					   zc->d.name);
	if (!zc->d.wq)
		return -ENOMEM;
	return 0;
}

void smr_hm_ctx_exit(struct smr_zoned *zc)
{
	/* A cut's work queues the commit work: before the queue goes. */
	smr_power_exit(&zc->d.power);
	/*
	 * Drained by the last commit, or dropped by a power cut; held I/O,
	 * if any, would end through the worker: before the queue goes.
	 */
	smr_wc_teardown(&zc->d);
	if (zc->d.wq)
		destroy_workqueue(zc->d.wq);
	bioset_exit(&zc->d.bs);
	smr_md_exit(&zc->d);
	kvfree(zc->imp_ring);
	kvfree(zc->zones);
	free_percpu(zc->rd);
}
