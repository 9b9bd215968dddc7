// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: band read-modify-write and crash recovery.
 * It owns the rewrite of one band through the spare band (merging its
 * cached blocks in, then copying it back), freeing the band's slots and
 * letting its writes go afterwards, and, when the state is loaded at
 * resume, finishing a rewrite a crash interrupted and rebuilding the
 * cache index from the slot records. Which band, and when, is the
 * cleaner's (dm-smr-dm-clean.c).
 *
 * Cleaning band B (crash-safe through the spare band):
 *   1. stop new writes to B (they wait), let writes in flight finish;
 *      S = next sequence number: every cached block of B is older;
 *   2. copy B with its cached blocks merged in to the spare band; flush;
 *   3. commit the intent "spare holds B as of S";
 *   4. copy the spare band over B; flush;
 *   5. drop B's index, set B's clean sequence to S (cache records of B
 *      older than S are dead), clear the intent; wait for reads from B's
 *      slots to finish; commit; free B's slots; let B's writes go.
 * A crash before 3 leaves B and the cache as they were; after 3 the
 * recovery copies the spare band over B again and completes 5. Nothing
 * but the spare band is written before the intent is durable, and the
 * spare band is not reused before the intent is cleared durably.
 */
#include <linux/blkdev.h>
#include <linux/completion.h>
#include <linux/dm-io.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "dm-smr-dm.h"
#include "dm-smr-test.h"
#include "dm-smr-trace.h"

/* ------------------------------------------------------------------ */
/* Band read-modify-write.                                             */
/* ------------------------------------------------------------------ */

static int smr_dm_io_raw(struct smr_dm_target *sc, blk_opf_t opf, sector_t sector,
			 sector_t count, void *buf)
{
	struct dm_io_region region = {
		.bdev = sc->d.bdev,
		.sector = sector,
		.count = count,
	};
	struct dm_io_request req = {
		.bi_opf = opf,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = buf,
		.client = sc->dm->io_client,
	};
	unsigned long error_bits = 0;

	return smr_dm_io_call(&req, 1, &region, &error_bits);
}

/*
 * The timing model: charge the cleaner's I/O of @count at backing @sector,
 * as cleaning time. Returns its modelled end, 0 without the model.
 */
static u64 smr_dm_tm_clean(struct smr_dm_target *sc, sector_t sector,
			   sector_t count)
{
	struct smr_dm *dm = sc->dm;
	u64 end, svc;

	if (!sc->d.tm)
		return 0;
	end = smr_tm_charge(sc->d.tm, smr_dm_tm_pos(dm, sector), count, &svc);
	spin_lock_irq(&sc->d.lock);
	dm->tm_clean_ns += svc;
	spin_unlock_irq(&sc->d.lock);
	return end;
}

/* The cleaner waits for the modelled end of its step (smr_tm_wait()). */
static void smr_dm_tm_wait(struct smr_dm_target *sc, u64 end)
{
	if (sc->d.tm && end)
		smr_tm_wait(sc->d.tm, end);
}

/* One synchronous step of the cleaner, taking the drive's time with the model. */
static int smr_dm_io(struct smr_dm_target *sc, blk_opf_t opf, sector_t sector,
		     sector_t count, void *buf)
{
	u64 end;
	int ret;

	/* After a power cut the cleaner stops at its next step, quietly. */
	if (smr_power_is_cut(&sc->d.power))
		return -EIO;
	end = smr_dm_tm_clean(sc, sector, count);
	ret = smr_dm_io_raw(sc, opf, sector, count, buf);
	if (!ret)
		smr_dm_tm_wait(sc, end);
	return ret;
}

/* Reads issued together and waited for once (the cached runs of a chunk). */
struct smr_dm_batch {
	atomic_t pending;
	int error;
	struct completion done;
};

/* One read of the batch (or the submitter's own reference) is done. */
static void smr_dm_batch_put(struct smr_dm_batch *bt, bool failed)
{
	if (failed)
		WRITE_ONCE(bt->error, -EIO);
	if (atomic_dec_and_test(&bt->pending))
		complete(&bt->done);
}

static SMR_IO_NOTIFY(smr_dm_batch_end, error, context)
{
	smr_dm_batch_put(context, error);
}

static void smr_dm_batch_read(struct smr_dm_target *sc, struct smr_dm_batch *bt,
			      sector_t sector, sector_t count, void *buf)
{
	struct dm_io_region region = {
		.bdev = sc->d.bdev,
		.sector = sector,
		.count = count,
	};
	struct dm_io_request req = {
		.bi_opf = REQ_OP_READ,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = buf,
		.notify.fn = smr_dm_batch_end,
		.notify.context = bt,
		.client = sc->dm->io_client,
	};

	atomic_inc(&bt->pending);
	if (smr_dm_io_call(&req, 1, &region, NULL))
		smr_dm_batch_put(bt, true);
}

/* Copy @band's chunk at @c, cached blocks merged in, to the spare band. */
static int smr_dm_merge_chunk(struct smr_dm_target *sc, u32 band, u32 c,
			      u32 len, u64 *rd, u64 *wr)
{
	struct smr_dm *dm = sc->dm;
	struct smr_band *b = &dm->bands[band];
	u32 first = c >> 3, nblk = len >> 3, nr = 0, i;
	struct smr_ext_node *x;
	struct smr_dm_batch bt;
	u64 end = 0;
	int ret;

	ret = smr_dm_io(sc, REQ_OP_READ, smr_band_sector(dm, band) + c, len,
			dm->buf);
	if (ret)
		return ret;
	*rd += len;

	/* The band's index is stable: its writes are held back. */
	spin_lock_irq(&sc->d.lock);
	for (x = smr_ext_find(b, first); x && x->e.off < first + nblk;
	     x = rb_entry_safe(rb_next(&x->rb), struct smr_ext_node, rb)) {
		struct smr_ext *e = &x->e;
		u32 s = max_t(u32, e->off, first);
		u32 t = min_t(u32, e->off + e->len, first + nblk);

		dm->runs[nr].slot = e->slot + (s - e->off);
		dm->runs[nr].off = s - first;
		dm->runs[nr++].len = t - s;
	}
	spin_unlock_irq(&sc->d.lock);

	/* The cached runs are small and scattered: read them all at once. */
	atomic_set(&bt.pending, 1);
	bt.error = 0;
	init_completion(&bt.done);
	for (i = 0; i < nr; i++) {
		struct smr_ext *r = &dm->runs[i];

		end = max(end, smr_dm_tm_clean(sc, smr_slot_sector_dm(dm, r->slot),
						 (sector_t)r->len << 3));
		smr_dm_batch_read(sc, &bt, smr_slot_sector_dm(dm, r->slot),
				  (sector_t)r->len << 3,
				  dm->buf + ((size_t)r->off << SMR_BLOCK_SHIFT));
		*rd += (u64)r->len << 3;
	}
	smr_dm_batch_put(&bt, false);
	wait_for_completion_io(&bt.done);
	if (bt.error)
		return bt.error;
	smr_dm_tm_wait(sc, end);
	ret = smr_dm_io(sc, REQ_OP_WRITE, dm->spare_start + c, len, dm->buf);
	if (!ret)
		*wr += len;
	return ret;
}

/* Step 4: the spare band over @band. Also used by recovery. */
static int smr_dm_copy_back(struct smr_dm_target *sc, u32 band, u64 *rd,
			    u64 *wr)
{
	struct smr_dm *dm = sc->dm;
	u32 c, len;
	int ret;

	for (c = 0; c < dm->band_sectors; c += len) {
		len = min_t(u32, SMR_DM_CHUNK_SECTORS, dm->band_sectors - c);
		ret = smr_dm_io(sc, REQ_OP_READ, dm->spare_start + c, len,
				dm->buf);
		if (ret)
			return ret;
		ret = smr_dm_io(sc, REQ_OP_WRITE,
				smr_band_sector(dm, band) + c, len, dm->buf);
		if (ret)
			return ret;
		*rd += len;
		*wr += len;
	}
	return blkdev_issue_flush(sc->d.bdev);
}

/*
 * Free the slots of a cleaned band, walking its own slot list, at most
 * smr_test.free_batch_slots slots (4096 but in tests) per hold of
 * sc->d.lock: a hot band can hold a large part of the cache in superseded
 * copies, and the lock is taken with interrupts off. Between batches the list is stable: the band is
 * still flagged SMR_BAND_CLEANING, so writes to it are held, and the
 * writes admitted before the flag have all completed (b->writers was 0),
 * so none of its slots is in flight and smr_slot_release() cannot run
 * for it. A slot found in flight all the same is not freed: it is kept
 * aside and put back as the band's list at the end. Returns with
 * sc->d.lock held.
 */
static void smr_dm_free_band_slots(struct smr_dm_target *sc, u32 band)
	__acquires(&sc->d.lock)
{
	struct smr_dm *dm = sc->dm;
	struct smr_band *b = &dm->bands[band];
	u32 batch = clamp_t(u32, READ_ONCE(smr_test.free_batch_slots), 1, 4096);
	u32 keep = SMR_SLOT_FREE, *tail = &keep;

	spin_lock_irq(&sc->d.lock);
	while (b->slot_head != SMR_SLOT_FREE) {
		u32 freed = 0, n;

		for (n = 0; n < batch && b->slot_head != SMR_SLOT_FREE; n++) {
			u32 s = b->slot_head;

			b->slot_head = dm->slot_next[s];
			if (test_bit(s, dm->slot_inflight)) {
				*tail = s;
				tail = &dm->slot_next[s];
			} else {
				smr_slot_free(dm, s, 1);
				freed++;
			}
		}
		if (freed)
			smr_band_lose(dm, band, freed);
		if (b->slot_head == SMR_SLOT_FREE)
			break;
		spin_unlock_irq(&sc->d.lock);
		cond_resched();
		spin_lock_irq(&sc->d.lock);
	}
	*tail = SMR_SLOT_FREE;
	b->slot_head = keep;
}

void smr_dm_release_parked(struct smr_dm_target *sc)
{
	struct smr_dm *dm = sc->dm;

	/*
	 * Writes that waited for cleaning are host I/O arriving now: the
	 * host was not idle while it waited, so background cleaning must
	 * not start at once after a long foreground one.
	 */
	if (!bio_list_empty(&dm->held) || !bio_list_empty(&dm->parked))
		WRITE_ONCE(dm->last_io, jiffies);
	bio_list_merge_head(&dm->queue, &dm->held);
	bio_list_init(&dm->held);
	bio_list_merge_head(&dm->queue, &dm->parked);
	bio_list_init(&dm->parked);
}

/* A cleaning that stopped early: its end, timed only when traced. */
static void smr_trace_clean_failed(struct smr_dm_target *sc, u32 band,
				   enum smr_clean_reason reason, int ret,
				   u64 rd, u64 wr, u64 t0)
{
	if (trace_smr_clean_end_enabled())
		trace_smr_clean_end(sc->d.label, band, reason, ret,
				    rd << SECTOR_SHIFT, wr << SECTOR_SHIFT,
				    ktime_get_ns() - t0);
}

/*
 * Should a cleaning that started at @start stop now? At a suspend always;
 * background cleaning also when host I/O came since it started.
 */
static bool smr_dm_should_yield(struct smr_dm *dm, enum smr_clean_reason r,
				unsigned long start)
{
	if (READ_ONCE(dm->stop))
		return true;
	return r == SMR_CLEAN_IDLE &&
		time_after(READ_ONCE(dm->last_io), start);
}

/* A metadata commit of the cleaner, taking the drive's time with the model. */
static int smr_dm_clean_commit(struct smr_dm_target *sc)
{
	int ret = smr_md_commit(&sc->d);

	if (!ret && sc->d.tm)
		smr_tm_wait(sc->d.tm, smr_dm_tm_commit(sc, true));
	return ret;
}

/*
 * Read-modify-write of one band through the spare band; see the top of
 * this file. Returns -EAGAIN when background cleaning gave way to host
 * I/O before anything but the spare band was written.
 */
int smr_dm_clean_band(struct smr_dm_target *sc, u32 band,
		      enum smr_clean_reason reason, u64 pick_ns)
{
	struct smr_dm *dm = sc->dm;
	struct smr_band *b = &dm->bands[band];
	unsigned long start = jiffies;
	u64 t0 = ktime_get_ns(), rd = 0, wr = 0, ns, us, ms;
	struct rb_root old;
	u32 c, len;
	u64 seq;
	int ret;

	spin_lock_irq(&sc->d.lock);
	b->flags |= SMR_BAND_CLEANING;
	dm->state = reason == SMR_CLEAN_IDLE ? SMR_DM_CLEAN_BG :
		reason == SMR_CLEAN_FOREGROUND ? SMR_DM_CLEAN_FG :
		SMR_DM_CLEAN_MANUAL;
	spin_unlock_irq(&sc->d.lock);
	smr_nl_clean_start(&sc->d, band, reason);
	trace_smr_clean_start(sc->d.label, band, reason, pick_ns);

	/* Writes to the band admitted before the flag finish first. */
	wait_event(dm->wait, READ_ONCE(b->writers) == 0);
	/* And reach the disk, for the reads below (dm-smr-wc.c). */
	ret = smr_md_data_home(&sc->d);
	if (ret)
		goto fail_undo;
	spin_lock_irq(&sc->d.lock);
	seq = dm->next_seq;
	spin_unlock_irq(&sc->d.lock);

	for (c = 0; c < dm->band_sectors; c += len) {
		if (smr_dm_should_yield(dm, reason, start)) {
			ret = -EAGAIN;
			goto undo;
		}
		len = min_t(u32, SMR_DM_CHUNK_SECTORS, dm->band_sectors - c);
		ret = smr_dm_merge_chunk(sc, band, c, len, &rd, &wr);
		if (ret)
			goto fail_undo;
	}
	ret = blkdev_issue_flush(sc->d.bdev);
	if (ret)
		goto fail_undo;

	spin_lock_irq(&sc->d.lock);
	dm->intent_state = SMR_INTENT_SPARE_FULL;
	dm->intent_band = band;
	dm->intent_seq = seq;
	smr_slots_mark_dirty(&sc->d.md, 0);
	spin_unlock_irq(&sc->d.lock);
	ret = smr_dm_clean_commit(sc);
	if (ret)
		goto fail;

	ret = smr_dm_copy_back(sc, band, &rd, &wr);
	if (ret)
		goto fail;

	spin_lock_irq(&sc->d.lock);
	old = smr_ext_drop(dm, b);
	b->clean_seq = seq;
	smr_mark_band_dirty(sc, band);
	dm->intent_state = SMR_INTENT_NONE;
	smr_slots_mark_dirty(&sc->d.md, 0);
	spin_unlock_irq(&sc->d.lock);
	smr_ext_free(&old);

	/* Reads already sent to the band's slots finish before they go. */
	wait_event(dm->wait, atomic_read(&b->readers) == 0);
	ret = smr_dm_clean_commit(sc);
	if (ret)
		goto fail;

	ns = ktime_get_ns() - t0;
	us = div_u64(ns, NSEC_PER_USEC);
	ms = div_u64(us + 500, USEC_PER_MSEC);
	/* Before the writes it held are released, which trace their waits. */
	trace_smr_clean_end(sc->d.label, band, reason, 0, rd << SECTOR_SHIFT,
			    wr << SECTOR_SHIFT, ns);
	smr_dm_free_band_slots(sc, band);
	b->flags &= ~SMR_BAND_CLEANING;
	b->seq_next = 0;
	dm->state = SMR_DM_IDLE;
	dm->stats.rmw[reason]++;
	dm->stats.clean_read_sectors += rd;
	dm->stats.clean_write_sectors += wr;
	if (reason == SMR_CLEAN_FOREGROUND) {
		dm->stats.clean_ms_fg += ms;
	} else {
		dm->stats.clean_ms_bg += ms;
		/* Counted only while no host write came since it started. */
		if (!time_after(dm->last_write, start))
			dm->since_busy_ms += ms;
	}
	smr_dm_release_parked(sc);
	spin_unlock_irq(&sc->d.lock);
	queue_work(sc->d.wq, &sc->d.commit_work);

	smr_nl_clean_done(&sc->d, band, reason, rd << SECTOR_SHIFT,
			  wr << SECTOR_SHIFT, us);
	smr_dm_levels(sc);
	return 0;

fail_undo:
	if (!smr_power_is_cut(&sc->d.power))
		DMERR("%s: cleaning band %u failed before its intent: %d",
		      smr_dm_name(sc), band, ret);
	spin_lock_irq(&sc->d.lock);
	dm->failed = true;
	spin_unlock_irq(&sc->d.lock);
undo:
	spin_lock_irq(&sc->d.lock);
	b->flags &= ~SMR_BAND_CLEANING;
	dm->state = SMR_DM_IDLE;
	if (ret == -EAGAIN)
		dm->stats.bg_aborts++;
	dm->stats.clean_read_sectors += rd;
	dm->stats.clean_write_sectors += wr;
	smr_dm_release_parked(sc);
	spin_unlock_irq(&sc->d.lock);
	queue_work(sc->d.wq, &sc->d.commit_work);
	smr_trace_clean_failed(sc, band, reason, ret, rd, wr, t0);
	return ret;

fail:
	/*
	 * The band may be half rewritten: the durable intent lets the next
	 * activation finish it. Until then writes fail; reads are served.
	 */
	if (!smr_power_is_cut(&sc->d.power))
		DMERR("%s: cleaning band %u failed: %d; writes fail until the device is reactivated",
		      smr_dm_name(sc), band, ret);
	spin_lock_irq(&sc->d.lock);
	dm->failed = true;
	dm->state = SMR_DM_IDLE;
	smr_dm_release_parked(sc);
	spin_unlock_irq(&sc->d.lock);
	queue_work(sc->d.wq, &sc->d.commit_work);
	smr_trace_clean_failed(sc, band, reason, ret, rd, wr, t0);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Recovery at load.                                                   */
/* ------------------------------------------------------------------ */

static int smr_u16_cmp(const void *a, const void *b)
{
	return (int)*(const u16 *)a - (int)*(const u16 *)b;
}

/*
 * Build the index from the loaded slot records: a record is alive if it
 * is newer than its band's clean sequence; of several alive copies of a
 * block the newest wins, the others stay allocated (superseded) until
 * their band is cleaned.
 *
 * First every live record joins its band (slot list, counts), in one
 * pass over the slots. Then each band walks its own slot list once,
 * keeping the newest slot of each offset in @best (one entry per block
 * of a band) and each offset seen once in @offs, and indexes the offsets
 * in order. Only the distinct offsets are sorted, at most a band's
 * blocks (SMR_DM_MAX_BAND / 8), however many superseded copies a hot
 * band holds: the work per band is its slots plus d log d for its d
 * distinct blocks, the memory a fixed 6 bytes per block of a band, and
 * the walks yield the CPU every 64 Ki slots and between bands.
 */
static int smr_dm_rebuild(struct smr_dm_target *sc)
{
	struct smr_dm *dm = sc->dm;
	struct smr_band *b;
	u64 max_seq = 0;
	u32 *best, i, last_slot = 0, walked = 0;
	u16 *offs;
	int ret = 0;

	smr_dm_drop_index(dm);
	dm->loading = true;
	for (i = 0; i < dm->nr_bands; i++)
		max_seq = max(max_seq, dm->bands[i].clean_seq);
	max_seq = max(max_seq, dm->intent_seq);

	for (i = 0; i < dm->nr_slots; i++) {
		u64 lba = dm->slot_lba[i], seq = dm->slot_seq[i];
		u32 band;

		if (!(i & 0xffff))
			cond_resched();
		if (lba == SMR_LBA_FREE)
			continue;
		band = smr_band_of_block(dm, lba);
		b = &dm->bands[band];
		if (seq < b->clean_seq) {
			/* Its band was cleaned after it was written: dead. */
			dm->slot_lba[i] = SMR_LBA_FREE;
			continue;
		}
		if (!b->slots || seq < b->first_seq)
			b->first_seq = seq;
		set_bit(i, dm->slot_used);
		dm->used++;
		smr_band_gain(dm, band, i, 1);
		if (seq >= max_seq) {
			max_seq = seq;
			last_slot = i;
		}
	}

	best = kvmalloc_array(dm->band_blocks, sizeof(*best), GFP_KERNEL);
	offs = kvmalloc_array(dm->band_blocks, sizeof(*offs), GFP_KERNEL);
	if (!best || !offs) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; i < dm->band_blocks; i++)
		best[i] = SMR_SLOT_FREE;
	list_for_each_entry(b, &dm->dirty_list, dirty_node) {
		u64 first = smr_band_block(dm, b - dm->bands);
		u32 n = 0, s;

		for (s = b->slot_head; s != SMR_SLOT_FREE; s = dm->slot_next[s]) {
			u32 off = dm->slot_lba[s] - first;

			if (best[off] == SMR_SLOT_FREE) {
				best[off] = s;
				offs[n++] = off;
			} else if (dm->slot_seq[s] > dm->slot_seq[best[off]]) {
				best[off] = s;
			}
			if (!(++walked & 0xffff))
				cond_resched();
		}
		sort(offs, n, sizeof(*offs), smr_u16_cmp, NULL);
		for (i = 0; i < n; i++) {
			u32 off = offs[i];

			/* Offsets arrive in order: append, merging runs. */
			ret = smr_ext_index(sc, b, off, 1, best[off]);
			if (ret)
				goto out;
			best[off] = SMR_SLOT_FREE;
		}
		cond_resched();
	}
	/* first_seq settled only now: put the bands in fifo order. */
	smr_dm_order_bands(dm);
	dm->next_seq = max_seq + 1;
	dm->cursor = dm->used ? (last_slot + 1) % dm->nr_slots : 0;
	dm->level = 0;
out:
	kvfree(offs);
	kvfree(best);
	return ret;
}

/* Finish a band rewrite that a crash interrupted after its intent. */
static int smr_dm_recover_intent(struct smr_dm_target *sc)
{
	struct smr_dm *dm = sc->dm;
	u64 rd = 0, wr = 0;
	int ret;

	if (dm->intent_state != SMR_INTENT_SPARE_FULL)
		return 0;
	DMINFO("%s: finishing the interrupted cleaning of band %u",
	       smr_dm_name(sc), dm->intent_band);
	ret = smr_dm_copy_back(sc, dm->intent_band, &rd, &wr);
	if (ret)
		return ret;
	spin_lock_irq(&sc->d.lock);
	dm->bands[dm->intent_band].clean_seq = dm->intent_seq;
	smr_mark_band_dirty(sc, dm->intent_band);
	dm->intent_state = SMR_INTENT_NONE;
	smr_slots_mark_dirty(&sc->d.md, 0);
	spin_unlock_irq(&sc->d.lock);
	return smr_md_commit(&sc->d);
}

/*
 * Read the cache state from disk on the first resume of a table (and
 * after a failed cleaning, see smr_dm_preresume()) only:
 * the constructor ran while the previous table was still live and could
 * still write, so its copy may be stale, but from then on this table's
 * memory is the newest state. Reading it again on a later resume would
 * throw away what a failed commit left in memory: acknowledged writes.
 *
 * The device is suspended here: no allocation may wait for I/O to it.
 */
int smr_dm_load(struct smr_dm_target *sc)
{
	unsigned int noio;
	int ret;

	noio = memalloc_noio_save();
	ret = smr_md_load(&sc->d);
	if (!ret)
		ret = smr_dm_recover_intent(sc);
	if (!ret)
		ret = smr_dm_rebuild(sc);
	memalloc_noio_restore(noio);
	return ret;
}
