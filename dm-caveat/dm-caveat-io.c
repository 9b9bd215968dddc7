// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat: the I/O path. map() and end_io(): reads checked against the
 * damage set (failed, or zeroed where damaged), writes mapped with their
 * damage applied; the worker, which commits for flushes and FUA writes,
 * writes the damage journal for writes whose damage must be durable
 * first, and maps the writes map() found no memory for; the write
 * completion; scramble; the write cache (write_cache_kib).
 *
 * Why this file is long: map(), end_io() and the worker share the
 * per-bio state and the lists between them, and the common read and
 * write keep their rare cases in functions of their own (so that the
 * common ones stay short). The worker, cv_map_held() to cv_work(), would
 * split off as dm-caveat-worker.c with cv_map_read(), cv_map_write() and
 * cv_submit_write() in the header.
 */
#include <linux/module.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/jiffies.h>

#include "smr-fault.h"
#include "dm-caveat.h"
#include "dm-caveat-test.h"
#include "dm-caveat-trace.h"

static void cv_defer(struct cv_target *sc, struct bio_list *list, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->lock, flags);
	bio_list_add(list, bio);
	spin_unlock_irqrestore(&sc->lock, flags);
	queue_work(sc->wq, &sc->work);
}

/* Aim @bio at the backing device's data, @sector of the target's on. */
static inline void cv_aim(struct cv_target *sc, struct bio *bio,
			  sector_t sector)
{
	bio_set_dev(bio, sc->dev->bdev);
	bio->bi_iter.bi_sector = sc->data_start + sector;
}

static void cv_write_endio(struct bio *clone)
{
	struct bio *bio = clone->bi_private;
	struct cv_target *sc = container_of(clone->bi_pool, struct cv_target, bs);
	struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));
	blk_status_t sts = clone->bi_status;

	bio_put(clone);
	if (io->kind != CV_IO_WRITE_NOMAP)
		cv_write_done(sc, io, sts);
	if (!sts && io->fua) {
		/* Acknowledged once the commit made it durable. */
		io->status = BLK_STS_OK;
		cv_defer(sc, &sc->commit_bios, bio);
		return;
	}
	bio->bi_status = sts;
	cv_end_bio(sc, bio);
}

/*
 * Send a mapped write to the backing device. A clone of our own carries
 * it when something must happen between the backing's completion and the
 * host's: a FUA write is acknowledged only after the commit, and with the
 * timing model the bio ends at its modelled end. Otherwise dm's clone goes
 * itself, as dm-linear's does, and cv_end_io() completes the write: the
 * second clone is a bio allocation and a completion per write.
 */
static void cv_submit_write(struct cv_target *sc, struct bio *bio)
{
	struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));
	sector_t sector = dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	struct bio *clone;

	if (!sc->tm && !io->fua) {
		if (io->kind == CV_IO_WRITE)
			io->kind = CV_IO_WRITE_DIRECT;
		cv_aim(sc, bio, sector);
		dm_submit_bio_remap(bio, NULL);
		return;
	}
	if (sc->tm)
		smr_tm_host(sc->tm, &io->tm, smr_tm_pos(sc->tm, sector),
			    bio_sectors(bio), bio->bi_opf);
	clone = bio_alloc_clone(sc->dev->bdev, bio, GFP_NOIO, &sc->bs);
	clone->bi_iter.bi_sector = sc->data_start + sector;
	/* The worker commits before it acknowledges a FUA write. */
	clone->bi_opf &= ~REQ_FUA;
	/* dm polls only the bios it submits itself (as in dm-smr). */
	bio_clear_polled(clone);
	clone->bi_private = bio;
	clone->bi_end_io = cv_write_endio;
	dm_submit_bio_remap(bio, clone);
}

static int cv_map_write(struct cv_target *sc, struct bio *bio,
			struct cv_io *io, bool in_map);
static int cv_map_read(struct cv_target *sc, struct bio *bio, struct cv_io *io,
		       bool in_map);

/* The write state of a bio of the wal list: a host write's or a copy's. */
static struct cv_io *cv_wal_io(struct cv_target *sc, struct bio *bio)
{
	if (cv_is_wc(sc, bio))
		return &container_of(bio, struct cv_wc, bio)->io;
	return dm_per_bio_data(bio, sizeof(struct cv_io));
}

/* Reads and writes that waited for a copy to reach its home: map again. */
static void cv_map_held(struct cv_target *sc)
{
	struct bio_list held;
	struct bio *bio;

	spin_lock_irq(&sc->lock);
	held = sc->held_bios;
	bio_list_init(&sc->held_bios);
	spin_unlock_irq(&sc->lock);
	while ((bio = bio_list_pop(&held))) {
		struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));
		int r;

		if (bio_op(bio) == REQ_OP_WRITE)
			r = cv_map_write(sc, bio, io, false);
		else
			r = cv_map_read(sc, bio, io, false);
		if (r == DM_MAPIO_KILL)
			bio_io_error(bio);
		else if (r == DM_MAPIO_REMAPPED)
			dm_submit_bio_remap(bio, NULL);
	}
}

/* With scramble: overwrite the damage range on the backing device. */
static int cv_scramble_range(struct cv_target *sc, u64 d0, u64 d1)
{
	sector_t sector = sc->data_start + (d0 << sc->bshift);
	u64 left = (d1 - d0 + 1) << (sc->bshift + SECTOR_SHIFT);
	int ret = 0;

	while (left && !ret) {
		struct bio *bio = bio_alloc(sc->dev->bdev, BIO_MAX_VECS,
					    REQ_OP_WRITE | REQ_SYNC, GFP_NOIO);
		unsigned int i;

		bio->bi_iter.bi_sector = sector;
		for (i = 0; i < BIO_MAX_VECS && left; i++) {
			unsigned int len = min_t(u64, left, PAGE_SIZE);

			__bio_add_page(bio, sc->scramble_page, len, 0);
			left -= len;
		}
		sector += bio_sectors(bio);
		ret = submit_bio_wait(bio);
		bio_put(bio);
	}
	return ret;
}

/*
 * Make every damage applied so far durable, for the writes waiting on it:
 * a journal block, or a whole commit where the journal cannot take it or
 * its write failed.
 */
static int cv_make_durable(struct cv_target *sc)
{
	int ret;

	/* After a power cut nothing more reaches the medium. */
	if (smr_power_is_cut(&sc->power))
		return -EIO;
	mutex_lock(&sc->commit_mutex);
	ret = cv_jr_write(sc);
	if (ret)
		ret = __cv_commit(sc);
	mutex_unlock(&sc->commit_mutex);
	return ret;
}

/* Writes that found no memory in the worker either: try again. */
void cv_nomem_work(struct work_struct *work)
{
	struct cv_target *sc = container_of(to_delayed_work(work),
					    struct cv_target, nomem_dwork);

	queue_work(sc->wq, &sc->work);
}

/*
 * The writes whose damage is durable now (or whose durability failed,
 * @sts): issue them, scrambling first where asked.
 */
static void cv_issue_wal(struct cv_target *sc, struct bio_list *wal,
			 blk_status_t sts)
{
	struct bio *bio;

	while ((bio = bio_list_pop(wal))) {
		struct cv_io *io = cv_wal_io(sc, bio);
		/* Durable before a power cut, not issued before it: never. */
		blk_status_t s = sts ?: (smr_power_is_cut(&sc->power) ?
					 BLK_STS_IOERR : BLK_STS_OK);

		/* The damage is durable: the write may now destroy the data. */
		if (sc->scramble && io->live) {
			if (!s && cv_scramble_range(sc, io->d0, io->d1))
				s = BLK_STS_IOERR;
			/* Writes queued behind it are submitted after it. */
			spin_lock_irq(&sc->lock);
			sc->scrambles_pending--;
			spin_unlock_irq(&sc->lock);
		}
		if (cv_is_wc(sc, bio)) {
			if (s) {
				cv_wc_done(sc, container_of(bio, struct cv_wc, bio), s);
			} else {
				atomic_inc(&sc->wc_issued);
				submit_bio(bio);
			}
			continue;
		}
		if (s) {
			cv_write_done(sc, io, s);
			bio->bi_status = s;
			bio_endio(bio);
			continue;
		}
		cv_submit_write(sc, bio);
	}
}

void cv_work(struct work_struct *work)
{
	struct cv_target *sc = container_of(work, struct cv_target, work);
	struct bio_list wal, commits, flushes, nomem;
	blk_status_t sts = BLK_STS_OK, fsts;
	struct bio *bio;
	u64 end;

	/* Writes map() found no pages for: map them here, where we may wait. */
	spin_lock_irq(&sc->lock);
	nomem = sc->nomem_bios;
	bio_list_init(&sc->nomem_bios);
	spin_unlock_irq(&sc->lock);
	while ((bio = bio_list_pop(&nomem))) {
		struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));

		if (cv_map_write(sc, bio, io, false) == DM_MAPIO_KILL)
			bio_io_error(bio);
	}
	cv_map_held(sc);

	spin_lock_irq(&sc->lock);
	wal = sc->wal_bios;
	commits = sc->commit_bios;
	flushes = sc->flush_bios;
	bio_list_init(&sc->wal_bios);
	bio_list_init(&sc->commit_bios);
	bio_list_init(&sc->flush_bios);
	spin_unlock_irq(&sc->lock);

	if (bio_list_empty(&wal) && bio_list_empty(&commits) &&
	    bio_list_empty(&flushes))
		return;
	/*
	 * A flush covers the writes the cache completed before it, and those
	 * are all in wal or issued by now: their damage is made durable and
	 * they go home before the commit below.
	 */
	if (sc->wc_max && !bio_list_empty(&flushes)) {
		cv_issue_wal(sc, &wal, cv_make_durable(sc) ?
			     BLK_STS_IOERR : BLK_STS_OK);
		cv_wc_drain(sc);
	}
	/*
	 * Flushes and FUA writes need everything durable: a whole commit.
	 * Writes waiting on damage need only the damage: the journal.
	 */
	if (!bio_list_empty(&commits) || !bio_list_empty(&flushes)) {
		if (cv_commit(sc))
			sts = BLK_STS_IOERR;
	} else if (cv_make_durable(sc)) {
		sts = BLK_STS_IOERR;
	}
	/* A flush ends when the drive has done all it was sent. */
	end = cv_tm_md(sc);

	/* ... and fails if a write the cache completed before it was lost. */
	while ((bio = bio_list_pop(&flushes))) {
		struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));

		fsts = cv_wc_flush_fails(sc, io->first) ? BLK_STS_IOERR : sts;
		bio->bi_status = fsts;
		io->tm.end = end;
		cv_end_bio(sc, bio);
	}
	while ((bio = bio_list_pop(&commits))) {
		struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));

		bio->bi_status = sts ? sts : io->status;
		/* (io->tm is set only with the model: __cv_map_bio()) */
		if (sc->tm)
			io->tm.end = max(io->tm.end, end);
		cv_end_bio(sc, bio);
	}
	cv_issue_wal(sc, &wal, sts);
}

/*
 * Add @need pages to the spares. From map() (@in_map) without waiting:
 * false if memory is short, and the worker maps the write instead. From
 * the worker with GFP_NOIO, which may reclaim but not loop forever: false
 * again, and the worker tries again in CV_NOMEM_RETRY_MS (it also does
 * every commit and scramble, which must not wait behind one write).
 */
static bool cv_refill_spares(struct cv_target *sc, unsigned int need,
			     bool in_map)
{
	while (need--) {
		unsigned long p;

		if (in_map)
			p = smr_fault_take(&cv_test.fail_map_allocs) ? 0 :
				__get_free_page(GFP_NOWAIT | __GFP_NOWARN);
		else
			p = __get_free_page(GFP_NOIO | __GFP_NOWARN);
		if (!p)
			return false;
		spin_lock_irq(&sc->lock);
		if (sc->nr_spare < CV_SPARE_MAX)
			sc->spare[sc->nr_spare++] = (unsigned long *)p;
		else
			free_page(p);
		spin_unlock_irq(&sc->lock);
	}
	return true;
}

/* A write that found no pages in the worker either: again in a while. */
static void cv_nomem_retry(struct cv_target *sc, struct bio *bio)
{
	spin_lock_irq(&sc->lock);
	bio_list_add(&sc->nomem_bios, bio);
	spin_unlock_irq(&sc->lock);
	DMWARN_LIMIT("%s: no memory for the damage map; retrying a write",
		     cv_name(sc));
	queue_delayed_work(sc->wq, &sc->nomem_dwork,
			   msecs_to_jiffies(CV_NOMEM_RETRY_MS));
}

/*
 * Lock held, the write mapped and its damage applied (@live valid blocks
 * lost): record it, and decide whether the write waits for its damage to
 * be durable (true: in the wal list or, *@wc, taken by the write cache).
 */
static bool cv_write_route(struct cv_target *sc, struct bio *bio,
			   struct cv_io *io, bool dmg, u64 live, bool *wc)
{
	bool defer;

	sc->stats.writes++;
	if (dmg) {
		sc->stats.damaging_writes++;
		sc->stats.damaged_blocks += io->d1 - io->d0 + 1;
	}
	if (live) {
		sc->damage_seq++;
		cv_jr_add(sc, io->d0, io->d1);
		sc->stats.live_damage_writes++;
		sc->stats.live_damaged_blocks += live;
		io->live = true;
	}
	defer = dmg && (live || sc->damage_seq != sc->durable_seq);
	if (sc->scramble) {
		if (sc->scrambles_pending)
			defer = true;
		if (live)
			sc->scrambles_pending++;
	}
	*wc = defer && cv_wc_reserve(sc, bio, io);
	if (defer && !*wc)
		bio_list_add(&sc->wal_bios, bio);
	return defer;
}

/* Lock not held: tell of the damage, then issue the write or let it wait. */
static void cv_write_issue(struct cv_target *sc, struct bio *bio,
			   struct cv_io *io, bool dmg, u64 live, u64 lo, u64 hi,
			   bool defer, bool wc)
{
	if (dmg)
		trace_cv_damage(sc->nl.name, io->first, io->last, io->d0, io->d1,
				live);
	if (live) {
		cv_nl_damage(&sc->nl, io->first, io->last, lo, hi, io->d0,
			     io->d1, live);
		DMINFO_LIMIT("%s: write of blocks %llu+%llu damaged %llu live blocks in %llu..%llu (damage range %llu..%llu)",
			     cv_name(sc), io->first, io->last - io->first + 1,
			     live, lo, hi, io->d0, io->d1);
	}
	/* Completed here, or waiting in the worker: in the wal list. */
	if (wc && !cv_wc_take(sc, bio, io)) {
		spin_lock_irq(&sc->lock);
		cv_wc_unreserve(sc, io);
		bio_list_add(&sc->wal_bios, bio);
		spin_unlock_irq(&sc->lock);
		wake_up(&sc->wc_wait);	/* cv_wc_settle() may wait for wc_nr 0 */
	}
	if (defer)
		queue_work(sc->wq, &sc->work);
	else
		cv_submit_write(sc, bio);
}

/* Merge the first and last victims of a step into those found before. */
static void cv_merge_victims(u64 n, u64 slo, u64 shi, u64 have, u64 *lo,
			     u64 *hi)
{
	if (!n)
		return;
	*lo = have ? min(*lo, slo) : slo;
	*hi = have ? max(*hi, shi) : shi;
}

/*
 * The worker maps a write whose damage range spans more than
 * CV_SCAN_CHUNKS chunks (a did of millions of blocks). Counting and
 * clearing such a range is work in proportion to it, too much for one
 * hold of the lock with interrupts off, so it is done CV_SCAN_BLOCKS at a
 * time (trace event cv_damage_step). Nothing may change the range between
 * the steps:
 *  - map() parks every read and write in held_bios while big_writes is
 *    not zero (this write counts from the map() that parked it until it
 *    is mapped here), and the worker, the only other mapper, is here;
 *  - the writes in flight that overlap the range are tainted in the
 *    first step (they complete without making a block of it valid);
 *  - commit_mutex keeps commits and journal writes out until the damage
 *    and its journal record are both in memory, as in one map() they are.
 * The first step also does the range's two edge chunks whole, with the
 * spare pages it checked for; the steps after it count, then clear,
 * whole chunks only, which needs no page.
 */
static void cv_map_write_big(struct cv_target *sc, struct bio *bio,
			     struct cv_io *io)
{
	u64 m0 = ((io->d0 >> CV_CHUNK_SHIFT) + 1) << CV_CHUNK_SHIFT;
	u64 m1 = (io->d1 >> CV_CHUNK_SHIFT) << CV_CHUNK_SHIFT;	/* exclusive */
	u64 live, lo = 0, hi = 0, n, slo = 0, shi = 0, a, b;
	unsigned int need;
	bool defer, wc;

	mutex_lock(&sc->commit_mutex);
	for (;;) {
		spin_lock_irq(&sc->lock);
		if (cv_wc_overlaps(sc, io->first, io->last)) {
			bio_list_add(&sc->held_bios, bio);
			spin_unlock_irq(&sc->lock);
			mutex_unlock(&sc->commit_mutex);
			return;
		}
		need = cv_edge_need(sc, io->first, io->last, true) +
		       cv_edge_need(sc, io->d0, io->d1, false);
		if (need <= sc->nr_spare)
			break;
		spin_unlock_irq(&sc->lock);
		if (!cv_refill_spares(sc, need, false)) {
			mutex_unlock(&sc->commit_mutex);
			cv_nomem_retry(sc, bio);
			return;
		}
	}
	/* Cached blocks it damages: counted before the taint hides them. */
	live = cv_wc_live(sc, io->d0, io->d1, 0, &lo, &hi);
	cv_prepare_set(sc, io->first, io->last);
	cv_check_inflight(sc, io);
	list_add_tail(&io->list, &sc->inflight);
	n = cv_count_valid(sc, io->d0, m0 - 1, &slo, &shi);
	cv_merge_victims(n, slo, shi, live, &lo, &hi);
	live += n;
	if (n)
		cv_clear_range(sc, io->d0, m0 - 1);
	n = cv_count_valid(sc, m1, io->d1, &slo, &shi);
	cv_merge_victims(n, slo, shi, live, &lo, &hi);
	live += n;
	if (n)
		cv_clear_range(sc, m1, io->d1);
	spin_unlock_irq(&sc->lock);

	for (a = m0; a < m1; a = b + 1) {
		b = min(a + CV_SCAN_BLOCKS, m1) - 1;
		spin_lock_irq(&sc->lock);
		n = cv_count_valid(sc, a, b, &slo, &shi);
		spin_unlock_irq(&sc->lock);
		trace_cv_damage_step(sc->nl.name, a, b, false);
		cv_merge_victims(n, slo, shi, live, &lo, &hi);
		live += n;
		cond_resched();
	}
	for (a = m0; live && a < m1; a = b + 1) {
		b = min(a + CV_SCAN_BLOCKS, m1) - 1;
		spin_lock_irq(&sc->lock);
		cv_clear_range(sc, a, b);
		spin_unlock_irq(&sc->lock);
		trace_cv_damage_step(sc->nl.name, a, b, true);
		cond_resched();
	}

	spin_lock_irq(&sc->lock);
	defer = cv_write_route(sc, bio, io, true, live, &wc);
	/* Reads and writes map() parked behind this one may go now. */
	WRITE_ONCE(sc->big_writes, sc->big_writes - 1);	/* read unlocked in map() */
	if (!bio_list_empty(&sc->held_bios))
		queue_work(sc->wq, &sc->work);
	spin_unlock_irq(&sc->lock);
	mutex_unlock(&sc->commit_mutex);
	cv_write_issue(sc, bio, io, true, live, lo, hi, defer, wc);
}

/* Does the damage range of @io span more chunks than one step scans? */
static bool cv_damage_big(struct cv_io *io)
{
	return (io->d1 >> CV_CHUNK_SHIFT) - (io->d0 >> CV_CHUNK_SHIFT) + 1 >
		CV_SCAN_CHUNKS;
}

/*
 * Map a write, from map() (@in_map) or from the worker (a write map()
 * found no pages for, or parked). Returns the DM_MAPIO_* value map()
 * should return.
 */
static int cv_map_write(struct cv_target *sc, struct bio *bio,
			struct cv_io *io, bool in_map)
{
	sector_t sector = dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	unsigned int nr = bio_sectors(bio);
	u64 lo = 0, hi = 0, live = 0;
	unsigned int need;
	bool dmg, defer, wc;

	/* Held or retried by the worker past a power cut: never issued. */
	if (unlikely(smr_power_is_cut(&sc->power)))
		return DM_MAPIO_KILL;
	if (unlikely((sector | nr) & ((1U << sc->bshift) - 1))) {
		DMERR_LIMIT("%s: write of %u sectors at sector %llu is not aligned to the %u-byte block size",
			    cv_name(sc), nr, (unsigned long long)sector,
			    sc->block_size);
		return DM_MAPIO_KILL;
	}
	io->kind = CV_IO_WRITE;
	io->first = sector >> sc->bshift;
	io->last = io->first + (nr >> sc->bshift) - 1;
	io->fua = bio->bi_opf & REQ_FUA;
	io->t0 = 1;
	io->t1 = 0;
	io->tmap = NULL;
	io->live = false;
	dmg = cv_damage_range(sc, io->first, io->last, &io->d0, &io->d1);
	if (!dmg) {
		io->d0 = 1;
		io->d1 = 0;
	}
	if (dmg && cv_damage_big(io)) {
		if (!in_map) {
			cv_map_write_big(sc, bio, io);
			return DM_MAPIO_SUBMITTED;
		}
		/* The worker maps it; what map() sees from now on waits. */
		spin_lock_irq(&sc->lock);
		WRITE_ONCE(sc->big_writes, sc->big_writes + 1);
		bio_list_add(&sc->held_bios, bio);
		spin_unlock_irq(&sc->lock);
		queue_work(sc->wq, &sc->work);
		return DM_MAPIO_SUBMITTED;
	}

	for (;;) {
		spin_lock_irq(&sc->lock);
		if (cv_wc_overlaps(sc, io->first, io->last) ||
		    (in_map && sc->big_writes)) {
			/* A cached write is still to land there, or a write
			 * before it is being mapped in steps: after it. */
			bio_list_add(&sc->held_bios, bio);
			spin_unlock_irq(&sc->lock);
			return DM_MAPIO_SUBMITTED;
		}
		/*
		 * With DID 0 no write damages another, and only damage
		 * clears valid blocks once the map is loaded: a chunk all
		 * valid stays so. A write inside one changes nothing when it
		 * completes, so it needs no pins, no place on the inflight
		 * list and no completion work (a conventional drive,
		 * cmr-7k500, writes so all the time).
		 */
		if (!sc->did && cv_in_full_chunk(sc, io->first, io->last)) {
			sc->stats.writes++;
			spin_unlock_irq(&sc->lock);
			io->kind = CV_IO_WRITE_NOMAP;
			cv_submit_write(sc, bio);
			return DM_MAPIO_SUBMITTED;
		}
		live = 0;
		if (dmg) {
			live = cv_count_valid(sc, io->d0, io->d1, &lo, &hi);
			live += cv_wc_live(sc, io->d0, io->d1, live, &lo, &hi);
		}
		need = cv_edge_need(sc, io->first, io->last, true);
		if (live)
			need += cv_edge_need(sc, io->d0, io->d1, false);
		if (need <= sc->nr_spare)
			break;
		spin_unlock_irq(&sc->lock);
		if (!cv_refill_spares(sc, need, in_map)) {
			if (in_map) {
				/* map() must not wait for memory: the worker may. */
				cv_defer(sc, &sc->nomem_bios, bio);
				return DM_MAPIO_SUBMITTED;
			}
			cv_nomem_retry(sc, bio);
			return DM_MAPIO_SUBMITTED;
		}
	}
	cv_prepare_set(sc, io->first, io->last);
	cv_check_inflight(sc, io);
	list_add_tail(&io->list, &sc->inflight);
	if (live)
		cv_clear_range(sc, io->d0, io->d1);
	defer = cv_write_route(sc, bio, io, dmg, live, &wc);
	spin_unlock_irq(&sc->lock);
	cv_write_issue(sc, bio, io, dmg, live, lo, hi, defer, wc);
	return DM_MAPIO_SUBMITTED;
}

/* A read the map lets through: to the backing device. */
static inline int cv_remap_read(struct cv_target *sc, struct bio *bio,
				struct cv_io *io, sector_t sector)
{
	cv_aim(sc, bio, sector);
	if (sc->tm) {
		smr_tm_submit(sc->tm, &io->tm, bio, &sc->bs, sc->dev->bdev,
			      bio->bi_iter.bi_sector, smr_tm_pos(sc->tm, sector));
		return DM_MAPIO_SUBMITTED;
	}
	return DM_MAPIO_REMAPPED;
}

/*
 * cv_map_read() under the lock. Apart, so that the common read does not
 * pay for this one's frame.
 */
static noinline int cv_map_read_locked(struct cv_target *sc, struct bio *bio,
				       struct cv_io *io, bool in_map,
				       sector_t sector, u64 first, u64 last)
{
	bool ok, any = true;

	spin_lock_irq(&sc->lock);
	if (cv_wc_overlaps(sc, first, last) || (in_map && sc->big_writes)) {
		/* A cached write is still to land there, or a write before
		 * it is being mapped in steps: read after it. */
		bio_list_add(&sc->held_bios, bio);
		spin_unlock_irq(&sc->lock);
		return DM_MAPIO_SUBMITTED;
	}
	ok = cv_all_valid(sc, first, last);
	if (!ok) {
		sc->stats.damaged_reads++;
		if (sc->zero_reads) {
			bool v;
			u64 e = cv_run_end(sc, first, last + 1, &v);

			/* Any valid block to read at all? */
			any = v || e != last + 1;
		}
	}
	spin_unlock_irq(&sc->lock);

	if (!ok)
		trace_cv_damaged_read(sc->nl.name, first, last, sc->zero_reads);
	if (!ok && !sc->zero_reads) {
		bio->bi_status = BLK_STS_MEDIUM;
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (!ok && !any) {
		/* Every block is damaged: nothing to read. */
		zero_fill_bio(bio);
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (!ok) {
		io->kind = CV_IO_READ_ZERO;
		io->iter = bio->bi_iter;
	}
	return cv_remap_read(sc, bio, io, sector);
}

/* A read, from map() (@in_map) or from the worker (parked before). */
static int cv_map_read(struct cv_target *sc, struct bio *bio, struct cv_io *io,
		       bool in_map)
{
	sector_t sector = dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	u64 first = sector >> sc->bshift;
	u64 last = (sector + bio_sectors(bio) - 1) >> sc->bshift;

	if (unlikely(smr_power_is_cut(&sc->power)))
		return DM_MAPIO_KILL;
	/*
	 * The common read, in map(): inside one chunk all valid, no copy in
	 * the write cache (wc_nr counts them from before they enter wc_tree
	 * until after they leave it) and no write being mapped in steps.
	 * Seen without the lock it is what the lock would have shown a
	 * moment earlier: those fields change only under it, so a write
	 * mapped before this read on this CPU, or completed before the read
	 * was sent, changed them already, and any other write may as well
	 * come after the read. A chunk's bits are compared, not followed.
	 * The three loads need no order among themselves: each stale value
	 * either sends the read the locked way or is one that the lock
	 * would have allowed too.
	 */
	if (in_map && !READ_ONCE(sc->wc_nr) && !READ_ONCE(sc->big_writes) &&
	    cv_in_full_chunk(sc, first, last))
		return cv_remap_read(sc, bio, io, sector);
	return cv_map_read_locked(sc, bio, io, in_map, sector, first, last);
}

/*
 * A write that changes nothing: DID 0 (it damages nothing), inside one
 * chunk all valid (it makes nothing valid), no timing model (nothing to
 * wait for), no FUA (no commit before its acknowledgement), no copy in
 * the write cache (wc_nr, as cv_map_read() reads it) and the power on.
 * It is sent on as dm-linear sends a write, counted per CPU, and its
 * completion does nothing (kind CV_IO_NONE). Without the lock, by
 * cv_map_read()'s argument: each field is what the lock would have shown
 * a moment earlier, and a stale one sends the write the locked way
 * (cv_map_write(), which checks all again) or is one the lock would have
 * allowed too. With DID 0 no write is mapped in steps (big_writes stays
 * 0). A DID 0 drive (cmr-7k500) writes so nearly all the time: the
 * locked way cost it 2.5 % of dm-linear's instructions a 4 KiB write on
 * 6.12 (docs/benchmarks-log.md, 2026-12-02).
 */
static __always_inline bool cv_write_plain(struct cv_target *sc,
					   struct bio *bio)
{
	sector_t sector = dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	unsigned int nr = bio_sectors(bio);

	if (sc->did || sc->tm || (bio->bi_opf & REQ_FUA) ||
	    ((sector | nr) & ((1U << sc->bshift) - 1)) ||
	    READ_ONCE(sc->wc_nr) ||
	    !cv_in_full_chunk(sc, sector >> sc->bshift,
			      (sector + nr - 1) >> sc->bshift) ||
	    smr_power_is_cut(&sc->power))
		return false;
	smr_count_add(sc->plain, nr);
	cv_aim(sc, bio, sector);
	return true;
}

/* map() after the media faults, with the bio's per-bio data. */
static int __cv_map_bio(struct cv_target *sc, struct bio *bio,
			struct cv_io *io)
{
	io->kind = CV_IO_NONE;
	/* Without the model nothing reads it (smr_tm_bio_done()). */
	if (sc->tm)
		smr_tm_bio_init(&io->tm);
	if (unlikely(bio->bi_opf & REQ_PREFLUSH) && !bio_sectors(bio)) {
		/* Numbered in the order they reach the list (cv_wc_flush_fails()). */
		spin_lock_irq(&sc->lock);
		io->first = ++sc->flush_seq;
		bio_list_add(&sc->flush_bios, bio);
		spin_unlock_irq(&sc->lock);
		queue_work(sc->wq, &sc->work);
		return DM_MAPIO_SUBMITTED;
	}
	/*
	 * Nothing else without data touches a block; the block arithmetic
	 * below would index before block 0. Neither the page cache nor
	 * direct I/O sends one; this guards other kernel callers.
	 */
	if (unlikely(!bio_sectors(bio))) {
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return cv_map_read(sc, bio, io, true);
	case REQ_OP_WRITE:
		if (cv_write_plain(sc, bio))
			return DM_MAPIO_REMAPPED;
		return cv_map_write(sc, bio, io, true);
	default:
		return DM_MAPIO_KILL;
	}
}

/* map() after the media faults (and the delayed bios they release). */
int cv_map_bio(struct dm_target *ti, struct bio *bio)
{
	return __cv_map_bio(ti->private, bio,
			    dm_per_bio_data(bio, sizeof(struct cv_io)));
}

int cv_map(struct dm_target *ti, struct bio *bio)
{
	struct cv_target *sc = ti->private;
	struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));
	int r;

	/* cv_end_io() looks at it for a bio a fault ended too. */
	io->kind = CV_IO_NONE;
	/* A command the drive takes: an armed power cut counts it. */
	if (unlikely(smr_power_io(&sc->power, bio->bi_opf, bio->bi_iter.bi_size)))
		return DM_MAPIO_KILL;
	r = smr_faults_map(&sc->faults, bio);
	return r == SMR_FAULT_PASS ? __cv_map_bio(sc, bio, io) : r;
}

/*
 * Zero mode, a read that touched damaged blocks: zero them. Apart from
 * cv_end_io(), which every bio passes through, so that its frame and
 * saved registers are this rare case's only.
 */
static noinline void cv_zero_damaged(struct cv_target *sc, struct bio *bio,
				     struct cv_io *io)
{
	u64 pos, bsize = sc->block_size;
	struct bvec_iter iter;
	struct bio_vec bv;
	unsigned long flags;

	pos = (u64)dm_target_offset(sc->ti, io->iter.bi_sector) << SECTOR_SHIFT;
	spin_lock_irqsave(&sc->lock, flags);
	__bio_for_each_segment(bv, bio, iter, io->iter) {
		unsigned int off = 0;

		while (off < bv.bv_len) {
			unsigned int len = min_t(u64, bv.bv_len - off,
						 bsize - (pos & (bsize - 1)));

			if (!cv_block_valid(sc, pos >> (sc->bshift + SECTOR_SHIFT)))
				memzero_page(bv.bv_page, bv.bv_offset + off, len);
			off += len;
			pos += len;
		}
	}
	spin_unlock_irqrestore(&sc->lock, flags);
}

/*
 * A write sent without a clone of our own (cv_submit_write()): done, as
 * cv_write_endio() does it. Zero mode, a read that touched damaged
 * blocks: zero them.
 */
int cv_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct cv_target *sc = ti->private;
	struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));

	/* With the backing's status, before a power cut overrides it. */
	if (io->kind == CV_IO_WRITE_DIRECT)
		cv_write_done(sc, io, *error);
	/* The power went before the drive said it was done: it never was. */
	if (unlikely(smr_power_is_cut(&sc->power)))
		*error = BLK_STS_IOERR;
	if (unlikely(io->kind == CV_IO_READ_ZERO) && !*error)
		cv_zero_damaged(sc, bio, io);
	return DM_ENDIO_DONE;
}
