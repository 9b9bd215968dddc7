// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat: the write cache (table option write_cache_kib). The I/O path
 * (dm-caveat-io.c) decides which writes it takes and issues the copies;
 * this file keeps them: taking a write, the interval tree reads and
 * writes are checked against, completion, and the waits of flushes,
 * suspend and messages.
 */
#include <linux/gfp.h>
#include <linux/interval_tree.h>

#include "dm-caveat.h"

/*
 * The write cache (table option write_cache_kib). A write that must wait for
 * its damage to be durable (a journal block) is copied, and the copy waits
 * instead: the host's write completes at once, as a drive's volatile cache
 * completes a write before the medium has it. Nothing of the rule
 * changes: the damage was applied when the write was mapped, and the
 * copy, like the write, reaches its home only after the damage is
 * durable, so the map is never falsely clean. What the host must be able
 * to rely on, a disk with a volatile cache gives too:
 *  - a flush covers every write completed before it: the worker puts
 *    every copy on the disk before the commit that ends the flush
 *    (cv_wc_drain());
 *  - a read sees a completed write: a read overlapping a copy not yet
 *    home waits in held_bios until it is, and so does a write (it must
 *    land after it);
 *  - a copy that fails to reach its home fails the flush that covers
 *    its write, the first one issued after the write was acknowledged,
 *    once (its blocks keep the state they had before it, as a failed
 *    write's do). A flush issued before the acknowledgement does not
 *    cover it, even one still being handled when the copy fails.
 * Its memory is bounded: at most CV_WC_MAX_WRITES writes and wc_max
 * blocks, taken without waiting (GFP_NOWAIT); when either is short the
 * write waits in the worker as it would without a cache. FUA writes are
 * not cached. The table requires a backing device with a volatile cache,
 * so the device advertises one and file systems send flushes.
 */

/*
 * Blocks of @d0..@d1 that cached writes hold, are not valid yet and no
 * later write damaged: the host was told those writes completed, so a
 * write damaging them loses live data, as one damaging valid blocks does.
 * Lock held (interrupts off). @lo, @hi: the first and last victim, merged
 * with those of the @have valid blocks found before. Cached writes never
 * overlap (a write overlapping one waits). Run by run, as
 * cv_count_valid() is: the runs of blocks not valid (cv_run_end()), and
 * in each the runs a copy still holds (its tmap's clear bits), a word at a
 * time, not a block at a time.
 */
u64 cv_wc_live(struct cv_target *sc, u64 d0, u64 d1, u64 have,
		      u64 *lo, u64 *hi)
{
	struct interval_tree_node *n;
	u64 live = 0;

	if (RB_EMPTY_ROOT(&sc->wc_tree.rb_root))
		return 0;
	for (n = interval_tree_iter_first(&sc->wc_tree, d0, d1); n;
	     n = interval_tree_iter_next(n, d0, d1)) {
		struct cv_wc *wc = container_of(n, struct cv_wc, node);
		u64 pos = max(d0, (u64)n->start), end = min(d1, (u64)n->last) + 1;

		while (pos < end) {
			bool valid;
			u64 run = cv_run_end(sc, pos, end, &valid);
			unsigned long z, o, stop = run - n->start;

			if (valid) {
				pos = run;
				continue;
			}
			/* Not valid from pos to run: the copy's clear bits count. */
			for (z = find_next_zero_bit(wc->tmap, stop, pos - n->start);
			     z < stop; z = find_next_zero_bit(wc->tmap, stop, o)) {
				o = find_next_bit(wc->tmap, stop, z);
				if (!have && !live) {
					*lo = n->start + z;
					*hi = n->start + o - 1;
				} else {
					*lo = min(*lo, (u64)(n->start + z));
					*hi = max(*hi, (u64)(n->start + o - 1));
				}
				live += o - z;
			}
			pos = run;
		}
	}
	return live;
}

/* Room for this write in the cache? Lock held; reserves it. */
bool cv_wc_reserve(struct cv_target *sc, struct bio *bio,
			  struct cv_io *io)
{
	u64 n = io->last - io->first + 1;

	if (!sc->wc_max || io->fua ||
	    bio->bi_iter.bi_size > CV_WC_MAX_BIO_PAGES * PAGE_SIZE ||
	    sc->wc_nr >= CV_WC_MAX_WRITES || sc->wc_blocks + n > sc->wc_max)
		return false;
	WRITE_ONCE(sc->wc_nr, sc->wc_nr + 1);	/* read unlocked in map() */
	sc->wc_blocks += n;
	return true;
}

void cv_wc_unreserve(struct cv_target *sc, struct cv_io *io)
{
	WRITE_ONCE(sc->wc_nr, sc->wc_nr - 1);
	sc->wc_blocks -= io->last - io->first + 1;
}

/*
 * A copy taken into the cache when flush_seq was @gen is lost. Every
 * flush mapped since, up to the next one to be mapped, fails: numbers
 * @gen + 1 to flush_seq + 1. Those mapped before the host saw the write
 * complete do not cover it, but which those are is not known here (the
 * host sees it only when its whole request ends), and failing one more
 * flush is safe where failing one too few is not. Lock held. wc_fail[]
 * holds such ranges, ascending and apart; when it is full, the last one
 * grows to take the new one in (more flushes fail, never fewer).
 */
static void cv_wc_fail_add(struct cv_target *sc, u64 gen)
{
	u64 lo = gen + 1, hi = sc->flush_seq + 1;
	unsigned int i, j, n = sc->wc_nr_fail;

	/* Ranges wholly below, then those that meet [lo, hi]: merged. */
	for (i = 0; i < n && sc->wc_fail[i].hi + 1 < lo; i++)
		;
	for (j = i; j < n && sc->wc_fail[j].lo <= hi + 1; j++) {
		lo = min(lo, sc->wc_fail[j].lo);
		hi = max(hi, sc->wc_fail[j].hi);
	}
	if (i == j && n == CV_WC_FAIL_MAX) {
		/* No room: widen the last range (or the one above) to cover. */
		i = min(i, n - 1);
		j = i + 1;
		lo = min(lo, sc->wc_fail[i].lo);
		hi = max(hi, sc->wc_fail[i].hi);
	}
	/* Replace ranges i..j-1 with [lo, hi]. */
	memmove(&sc->wc_fail[i + 1], &sc->wc_fail[j],
		(n - j) * sizeof(sc->wc_fail[0]));
	sc->wc_fail[i].lo = lo;
	sc->wc_fail[i].hi = hi;
	sc->wc_nr_fail = n - (j - i) + 1;
}

/*
 * Flush number @flush ends: does it fail for a lost copy? It covers the
 * copies acknowledged before it was issued, and the worker put all of
 * them home (or lost them) before it ends it, so their errors are known
 * by now. Flushes end in the order of their numbers, so ranges that end
 * at or below @flush are done with.
 */
bool cv_wc_flush_fails(struct cv_target *sc, u64 flush)
{
	unsigned int i;
	bool fail = false;

	spin_lock_irq(&sc->lock);
	for (i = 0; i < sc->wc_nr_fail && sc->wc_fail[i].lo <= flush; i++)
		if (flush <= sc->wc_fail[i].hi)
			fail = true;
	/* Drop the ranges this flush finished (hi <= flush). */
	for (i = 0; i < sc->wc_nr_fail && sc->wc_fail[i].hi <= flush; i++)
		;
	sc->wc_nr_fail -= i;
	memmove(&sc->wc_fail[0], &sc->wc_fail[i],
		sc->wc_nr_fail * sizeof(sc->wc_fail[0]));
	spin_unlock_irq(&sc->lock);
	return fail;
}

/*
 * A copy is done with: home (or failed, @sts). Its blocks become valid as
 * a host write's would, it leaves the cache, and what waited on it is
 * mapped again by the worker. From bio completion too.
 */
void cv_wc_done(struct cv_target *sc, struct cv_wc *wc,
		       blk_status_t sts)
{
	struct bio *copy = &wc->bio;
	unsigned long flags;
	bool held, empty;

	if (sts)
		DMERR_LIMIT("%s: cached write of blocks %llu+%llu failed (%d); the next flush issued after it fails",
			    cv_name(sc), wc->io.first,
			    wc->io.last - wc->io.first + 1,
			    blk_status_to_errno(sts));
	spin_lock_irqsave(&sc->lock, flags);
	__cv_write_done(sc, &wc->io, sts);
	interval_tree_remove(&wc->node, &sc->wc_tree);
	cv_wc_unreserve(sc, &wc->io);
	sc->wc_pages -= copy->bi_vcnt;
	if (sts)
		cv_wc_fail_add(sc, wc->flush_gen);
	held = !bio_list_empty(&sc->held_bios);
	empty = !sc->wc_nr;
	spin_unlock_irqrestore(&sc->lock, flags);
	bio_free_pages(copy);
	bio_put(copy);
	if (held)
		queue_work(sc->wq, &sc->work);
	if (empty)
		wake_up(&sc->wc_wait);
}

static void cv_wc_endio(struct bio *copy)
{
	struct cv_wc *wc = container_of(copy, struct cv_wc, bio);
	struct cv_target *sc = wc->sc;

	cv_wc_done(sc, wc, copy->bi_status);
	/*
	 * Last: wake_up_var() uses sc's address only as a key, so suspend
	 * (and the destructor after it) may free sc once the count reads 0.
	 */
	atomic_dec_and_wake_up(&sc->wc_issued);
}

/*
 * Take a reserved write into the cache: copy its data, put the copy in
 * its place (on the inflight list, in the wal list) and complete the
 * write. False, with nothing changed, if memory is short.
 */
bool cv_wc_take(struct cv_target *sc, struct bio *bio,
		       struct cv_io *io)
{
	unsigned int left = bio->bi_iter.bi_size;
	unsigned int i, nr = DIV_ROUND_UP(left, PAGE_SIZE);
	struct bio *copy;
	struct cv_wc *wc;

	copy = bio_alloc_bioset(sc->dev->bdev, nr, REQ_OP_WRITE,
				GFP_NOWAIT | __GFP_NOWARN, &sc->wc_bs);
	if (!copy)
		return false;
	for (i = 0; i < nr; i++) {
		unsigned int len = min_t(unsigned int, left, PAGE_SIZE);
		struct page *page = alloc_page(GFP_NOWAIT | __GFP_NOWARN);

		if (!page) {
			bio_free_pages(copy);
			bio_put(copy);
			return false;
		}
		__bio_add_page(copy, page, len, 0);
		left -= len;
	}
	bio_copy_data(copy, bio);
	copy->bi_iter.bi_sector = sc->data_start +
		dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	copy->bi_end_io = cv_wc_endio;
	wc = container_of(copy, struct cv_wc, bio);
	wc->sc = sc;
	wc->node.start = io->first;
	wc->node.last = io->last;

	spin_lock_irq(&sc->lock);
	/* Writes mapped since may have tainted io: copy it under the lock. */
	wc->io = *io;
	wc->flush_gen = sc->flush_seq;
	list_replace(&io->list, &wc->io.list);
	bitmap_zero(wc->tmap, CV_WC_MAX_BLOCKS);
	if (io->t0 <= io->t1)
		bitmap_set(wc->tmap, io->t0 - io->first, io->t1 - io->t0 + 1);
	wc->io.tmap = wc->tmap;
	interval_tree_insert(&wc->node, &sc->wc_tree);
	sc->wc_pages += nr;
	sc->stats.cached_writes++;
	bio_list_add(&sc->wal_bios, copy);
	spin_unlock_irq(&sc->lock);
	bio_endio(bio);
	return true;
}

/*
 * For a flush and for suspend: every copy issued so far is home. The
 * worker issued them (cv_issue_wal()) and issues no more while it waits;
 * each completes on its own, so the wait ends when the backing device
 * ends those writes.
 */
void cv_wc_drain(struct cv_target *sc)
{
	wait_var_event(&sc->wc_issued, !atomic_read(&sc->wc_issued));
}

/*
 * dump and query report what the medium holds, and a cached write is
 * valid there only once it is home: let the cache empty first. Bounded,
 * as writes may keep coming; the answer is then as of that moment.
 */
void cv_wc_settle(struct cv_target *sc)
{
	if (sc->wc_max)
		wait_event_timeout(sc->wc_wait, !READ_ONCE(sc->wc_nr),
				   msecs_to_jiffies(CV_WC_SETTLE_MS));
}
