// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: the persistent cache. It owns the log of
 * cache slots (allocation from the cursor, release), the index that maps
 * each band's cached blocks to slots (per band, a sorted array of
 * extents), each band's slot list, and a cache write from its submission
 * to its slots until it is indexed. Which bands hold slots, in the orders
 * the cleaner picks by, is dm-smr-dm-bands.c.
 *
 * Writes that are not sequential within their band are written to free
 * cache slots, found by a cursor that moves forward through the cache like
 * a log head and skips slots still in use. Every slot carries a sequence
 * number; the newest copy of a block wins. A slot stays in use until its
 * band is cleaned, even once a newer copy supersedes it, because a read
 * may still be in flight from it and because its record on disk must stay
 * shadowed by the newer one until the band's clean sequence retires both.
 */
#include <linux/log2.h>
#include <linux/slab.h>

#include "smr-fault.h"

#include "dm-smr-dm.h"
#include "dm-smr-test.h"

/* ------------------------------------------------------------------ */
/* The cache index: per band, a sorted array of extents.               */
/* ------------------------------------------------------------------ */

/* First extent of ext[0, nr) that ends after block @off. */
static u32 __smr_ext_find(const struct smr_ext *ext, u32 nr, u32 off)
{
	u32 lo = 0, hi = nr;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if ((u32)ext[mid].off + ext[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

u32 smr_ext_find(struct smr_band *b, u32 off)
{
	return __smr_ext_find(b->ext, b->nr_ext, off);
}

bool smr_ext_overlaps(struct smr_band *b, u32 off, u32 n)
{
	u32 i = smr_ext_find(b, off);

	return i < b->nr_ext && b->ext[i].off < off + n;
}

/*
 * Blocks from @off (at most @n) served by one source: the cache, from
 * *slot on, or the band (*slot = SMR_SLOT_FREE).
 */
u32 smr_ext_lookup(struct smr_band *b, u32 off, u32 n, u32 *slot)
{
	u32 i = smr_ext_find(b, off);

	if (i < b->nr_ext && b->ext[i].off <= off) {
		*slot = b->ext[i].slot + (off - b->ext[i].off);
		return min_t(u32, n, b->ext[i].off + b->ext[i].len - off);
	}
	*slot = SMR_SLOT_FREE;
	if (i < b->nr_ext)
		return min_t(u32, n, b->ext[i].off - off);
	return n;
}

/* Extents the band holds after inserting [off, off + n): an upper bound. */
static u32 smr_ext_need(struct smr_band *b, u32 off, u32 n)
{
	u32 end = off + n, i = smr_ext_find(b, off), j = i;

	while (j < b->nr_ext && b->ext[j].off < end)
		j++;
	return b->nr_ext - (j - i) + 3;
}

static void smr_dm_index_slots(struct smr_dm_target *sc, struct smr_dm_io *io);
static u32 __smr_ext_insert(struct smr_ext *ext, u32 *nr, u32 off, u32 n,
			    u32 slot);

/*
 * Give band @b's extent array room for @need extents (as a power of two,
 * so that it grows and shrinks by halves), and index @io's cache write
 * into it when @io is set. Worker only (and the load), in process
 * context: the copy and the insert, work that follows the band's
 * extents (up to 32K in a 256 MiB band), are done with interrupts on.
 *
 * While it runs the band is SMR_BAND_EXT_BUSY: completions of writes to
 * it leave their indexing to the worker (after this, in order), so the
 * array does not change under the copy, and readers use the old array
 * until the new one replaces it under the lock. The cleaner cannot drop
 * the array meanwhile: a write to the band is in flight (the caller's).
 * -ENOMEM, with nothing changed, if the array cannot be allocated.
 */
static int smr_ext_rebuild(struct smr_dm_target *sc, struct smr_band *b,
			   u32 need, struct smr_dm_io *io)
{
	struct smr_dm *dm = sc->dm;
	struct smr_ext *new = NULL, *old;
	u32 cap, nr, added = 0;

	spin_lock_irq(&sc->d.lock);
	b->flags |= SMR_BAND_EXT_BUSY;
	/* Writes indexed since the caller looked: the array is fixed now. */
	nr = b->nr_ext;
	if (io)
		need = max(need, smr_ext_need(b, io->off, io->nr));
	need = max(need, nr);
	old = b->ext;
	spin_unlock_irq(&sc->d.lock);

	cap = need ? roundup_pow_of_two(need) : 0;
	if (!io && cap == b->cap_ext) {
		spin_lock_irq(&sc->d.lock);
		b->flags &= ~SMR_BAND_EXT_BUSY;
		spin_unlock_irq(&sc->d.lock);
		return 0;
	}
	if (cap) {
		new = kvmalloc_array(cap, sizeof(*new), GFP_NOIO);
		if (!new) {
			spin_lock_irq(&sc->d.lock);
			b->flags &= ~SMR_BAND_EXT_BUSY;
			spin_unlock_irq(&sc->d.lock);
			return -ENOMEM;
		}
		memcpy(new, old, nr * sizeof(*new));
		if (io)
			added = __smr_ext_insert(new, &nr, io->off, io->nr,
						 io->slot);
	}

	spin_lock_irq(&sc->d.lock);
	dm->nr_ext += nr - b->nr_ext;
	dm->index_bytes -= (size_t)b->cap_ext * sizeof(*new);
	dm->index_bytes += (size_t)cap * sizeof(*new);
	b->ext = new;
	b->nr_ext = nr;
	b->cap_ext = cap;
	b->live += added;
	dm->live += added;
	if (io)
		smr_dm_index_slots(sc, io);
	b->flags &= ~SMR_BAND_EXT_BUSY;
	spin_unlock_irq(&sc->d.lock);
	kvfree(old);
	return 0;
}

/* Resize band @b's array to hold @need extents (see smr_ext_rebuild()). */
int smr_ext_resize(struct smr_dm_target *sc, struct smr_band *b, u32 need)
{
	u32 cap = need ? roundup_pow_of_two(need) : 0;

	if (cap == READ_ONCE(b->cap_ext))
		return 0;
	return smr_ext_rebuild(sc, b, need, NULL);
}

/* Merge extent @i of ext[0, *nr) into @i - 1 when they continue each other. */
static bool smr_ext_merge(struct smr_ext *ext, u32 *nr, u32 i)
{
	struct smr_ext *p, *e;

	if (!i || i >= *nr)
		return false;
	p = &ext[i - 1];
	e = &ext[i];
	if (p->off + p->len != e->off || p->slot + p->len != e->slot ||
	    p->len + e->len > SMR_EXT_MAX_LEN)
		return false;
	p->len += e->len;
	memmove(&ext[i], &ext[i + 1], (*nr - i - 1) * sizeof(*ext));
	(*nr)--;
	return true;
}

/*
 * Map blocks [off, off + n) to slots from @slot on in ext[0, *nr), which
 * has room for smr_ext_need() extents. Returns the blocks it maps that
 * it did not map before. It moves the extents after @off: at most
 * smr_ext_moves() of them.
 */
static u32 __smr_ext_insert(struct smr_ext *ext, u32 *nr, u32 off, u32 n,
			    u32 slot)
{
	struct smr_ext seg[3];
	u32 end = off + n, i = __smr_ext_find(ext, *nr, off), j = i, k, ns = 0;
	u32 covered = 0;

	while (j < *nr && ext[j].off < end) {
		struct smr_ext *e = &ext[j];

		covered += min_t(u32, end, e->off + e->len) - max_t(u32, off, e->off);
		j++;
	}
	if (i < j && ext[i].off < off) {
		seg[ns] = ext[i];
		seg[ns++].len = off - ext[i].off;
	}
	seg[ns].slot = slot;
	seg[ns].off = off;
	seg[ns++].len = n;
	if (i < j && ext[j - 1].off + ext[j - 1].len > end) {
		struct smr_ext *t = &ext[j - 1];

		seg[ns].slot = t->slot + (end - t->off);
		seg[ns].len = t->off + t->len - end;
		seg[ns++].off = end;
	}
	/* Replace ext[i, j) by seg[0, ns). */
	memmove(&ext[i + ns], &ext[j], (*nr - j) * sizeof(*ext));
	memcpy(&ext[i], seg, ns * sizeof(*seg));
	*nr += ns - (j - i);

	/* The new extent is at i, or i + 1 after a head piece. */
	k = i + (seg[0].off < off);
	if (k + 1 < *nr)
		smr_ext_merge(ext, nr, k + 1);
	smr_ext_merge(ext, nr, k);
	return n - covered;
}

/*
 * Extents of band @b that inserting at @off moves: the work
 * smr_ext_insert() does. Lock held.
 */
static u32 smr_ext_moves(struct smr_band *b, u32 off)
{
	return b->nr_ext - smr_ext_find(b, off);
}

/*
 * Map blocks [off, off + n) of band @b to slots from @slot on. Caller
 * holds sc->d.lock and made room for smr_ext_need() extents; with
 * interrupts off, callers keep smr_ext_moves() within
 * SMR_EXT_INLINE_MOVES, or are the load (the device suspended, offsets
 * arriving in order: nothing moves).
 */
void smr_ext_insert(struct smr_dm *dm, struct smr_band *b, u32 off,
		    u32 n, u32 slot)
{
	u32 nr = b->nr_ext, added;

	added = __smr_ext_insert(b->ext, &nr, off, n, slot);
	dm->nr_ext += nr - b->nr_ext;
	b->nr_ext = nr;
	b->live += added;
	dm->live += added;
}

/* Drop a band's whole index (cleaning). Returns the array to free. */
struct smr_ext *smr_ext_drop(struct smr_dm *dm, struct smr_band *b)
{
	struct smr_ext *old = b->ext;

	dm->live -= b->live;
	dm->nr_ext -= b->nr_ext;
	dm->index_bytes -= (size_t)b->cap_ext * sizeof(*old);
	b->ext = NULL;
	b->nr_ext = b->cap_ext = b->live = 0;
	return old;
}

/* ------------------------------------------------------------------ */
/* Cache slots.                                                        */
/* ------------------------------------------------------------------ */

/* A free run of @n slots starting in [@from, @to): its start, or -1UL. */
static unsigned long smr_slot_find(struct smr_dm *dm, u32 from, u32 to, u32 n)
{
	unsigned long size = min_t(u64, (u64)to + n - 1, dm->nr_slots);
	unsigned long s;

	s = bitmap_find_next_zero_area(dm->slot_used, size, from, n, 0);
	return s + n > size ? ULONG_MAX : s;
}

/*
 * Reserve @n contiguous free slots from the cursor on. Under sc->d.lock,
 * with interrupts off, so the search is bounded: it looks for a run that
 * starts within the SMR_DM_ALLOC_WINDOW slots from the cursor (wrapping),
 * a 128 KiB stretch of the bitmap, never at the whole of a large cache.
 * A cache of that many slots or fewer (4 GiB) is searched whole, as
 * before. Failing in a larger one, it moves the cursor past the window,
 * so that the next try (after the cleaning the caller's write waits for)
 * looks further on.
 */
int smr_slot_alloc(struct smr_dm *dm, u32 n, u32 *slot)
{
	/* At least the largest write, or some could never be placed. */
	u32 win = clamp_t(u32, READ_ONCE(smr_test.slot_search_window),
			  SMR_DM_IO_SECTORS / SMR_BLOCK_SECTORS,
			  SMR_DM_ALLOC_WINDOW);
	u64 end;
	unsigned long s;

	if (dm->nr_slots - dm->used < n)
		return -ENOSPC;
	win = min(win, dm->nr_slots);
	end = (u64)dm->cursor + win;
	if (end <= dm->nr_slots) {
		s = smr_slot_find(dm, dm->cursor, end, n);
	} else {
		/*
		 * Up to the end, then on from slot 0 (no run wraps around).
		 * With the whole cache as the window, the second part ends
		 * at the cursor and still finds a run across it.
		 */
		end -= dm->nr_slots;
		s = smr_slot_find(dm, dm->cursor, dm->nr_slots, n);
		if (s == ULONG_MAX)
			s = smr_slot_find(dm, 0, end, n);
	}
	if (s == ULONG_MAX) {
		dm->cursor = end == dm->nr_slots ? 0 : end;
		return -ENOSPC;
	}
	bitmap_set(dm->slot_used, s, n);
	bitmap_set(dm->slot_inflight, s, n);
	dm->used += n;
	dm->cursor = s + n == dm->nr_slots ? 0 : s + n;
	*slot = s;
	return 0;
}

/* Return slots @slot..@slot+n-1 to the free pool. Under sc->d.lock. */
void smr_slot_free(struct smr_dm *dm, u32 slot, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		dm->slot_lba[slot + i] = SMR_LBA_FREE;
	bitmap_clear(dm->slot_used, slot, n);
	bitmap_clear(dm->slot_inflight, slot, n);
	dm->used -= n;
}

/*
 * Band @band gives back the run @slot..@slot+n-1 it gained together
 * (smr_band_gain()), so adjacent in its slot list: unlink it there (a walk
 * of this band's slots only) and free it. Under sc->d.lock.
 */
void smr_slot_release(struct smr_dm *dm, u32 band, u32 slot, u32 n)
{
	u32 *link = &dm->bands[band].slot_head;

	while (*link != slot) {
		if (WARN_ON_ONCE(*link == SMR_SLOT_FREE))
			return;
		link = &dm->slot_next[*link];
	}
	*link = dm->slot_next[slot + n - 1];
	smr_slot_free(dm, slot, n);
	smr_band_lose(dm, band, n);
}

/* ------------------------------------------------------------------ */
/* Cache writes: sent to their slots, indexed when they complete.      */
/* ------------------------------------------------------------------ */

/*
 * Index a completed cache write: its blocks now read from its slots.
 * Under sc->d.lock, with room in the band's extent array.
 *
 * The slots' sequence numbers are taken here, not when the write was
 * mapped: recovery keeps the copy with the highest sequence number, and
 * the index keeps the copy indexed last, so both must follow the order
 * of indexing. (Two writes in flight to one block may complete in either
 * order; numbered at map time, the index and a reload could disagree.)
 * The loop is bounded by the largest write, SMR_DM_IO_SECTORS.
 */
static void smr_dm_index_slots(struct smr_dm_target *sc, struct smr_dm_io *io)
{
	struct smr_dm *dm = sc->dm;
	u32 i;

	/* The test hook: a jump as years of writes would make (0: none). */
	if (unlikely(READ_ONCE(smr_test.seq_jump)))
		dm->next_seq += xchg(&smr_test.seq_jump, 0);
	for (i = 0; i < io->nr; i++)
		dm->slot_seq[io->slot + i] = dm->next_seq++;
	bitmap_clear(dm->slot_inflight, io->slot, io->nr);
	smr_mark_slots_dirty(sc, io->slot, io->nr);
}

static void smr_dm_index(struct smr_dm_target *sc, struct smr_band *b,
			 struct smr_dm_io *io)
{
	smr_ext_insert(sc->dm, b, io->off, io->nr, io->slot);
	smr_dm_index_slots(sc, io);
}

/*
 * Can a completed cache write be indexed here, under the lock with
 * interrupts off? When the array has room and the insert moves few
 * extents; else smr_ext_rebuild() does it in the worker. Lock held.
 */
static bool smr_dm_index_inline(struct smr_band *b, struct smr_dm_io *io)
{
	return !(b->flags & SMR_BAND_EXT_BUSY) &&
		smr_ext_need(b, io->off, io->nr) <= b->cap_ext &&
		smr_ext_moves(b, io->off) <= SMR_EXT_INLINE_MOVES;
}

/* A cache write completed: index it, then end it (or after a commit). */
void smr_dm_write_done(struct smr_dm_target *sc, struct bio *bio,
		       struct bio_list *commit)
{
	struct smr_dm *dm = sc->dm;
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	struct smr_band *b = &dm->bands[io->band];
	blk_status_t status = io->status;
	u32 need;

	if (io->indexed) {
		/* Indexed in smr_dm_end_io(); here for a FUA commit or a shrink. */
		spin_lock_irq(&sc->d.lock);
		need = b->nr_ext;
		spin_unlock_irq(&sc->d.lock);
		goto shrink;
	}
	spin_lock_irq(&sc->d.lock);
	if (status) {
		smr_slot_release(dm, io->band, io->slot, io->nr);
		sc->d.errors++;
	} else if (smr_dm_index_inline(b, io)) {
		smr_dm_index(sc, b, io);
	} else {
		/*
		 * The array must grow, or the insert would move many
		 * extents: a new array, built with interrupts on.
		 */
		need = smr_ext_need(b, io->off, io->nr);
		if (need <= b->cap_ext)
			need = b->cap_ext;	/* the same size, rebuilt */
		else if (unlikely(smr_fault_take(&smr_test.fail_ext_allocs)))
			need = U32_MAX;		/* the test's failed growth */
		spin_unlock_irq(&sc->d.lock);
		if (need == U32_MAX || smr_ext_rebuild(sc, b, need, io)) {
			/*
			 * No memory now. The data is in the cache: never fail
			 * the write for that, try again in a while (the write
			 * keeps its slots and its band's writer count). Not
			 * in place in the old array, even with room there:
			 * that moves up to a band's extents with interrupts
			 * off.
			 */
			spin_lock_irq(&sc->d.lock);
			bio_list_add(&dm->nomem, bio);
			spin_unlock_irq(&sc->d.lock);
			DMWARN_LIMIT("%s: no memory to index a cache write; retrying",
				     smr_dm_name(sc));
			queue_delayed_work(sc->d.wq, &dm->nomem_dwork,
					   msecs_to_jiffies(SMR_DM_NOMEM_RETRY_MS));
			return;
		}
		spin_lock_irq(&sc->d.lock);
	}
	need = b->nr_ext;
	spin_unlock_irq(&sc->d.lock);

shrink:
	/*
	 * Keep the array at most twice the extents it holds (the bound in
	 * docs/dm-smr.rst), while our write still keeps the cleaner away.
	 */
	if (need && b->cap_ext > 2 * need)
		smr_ext_resize(sc, b, need);

	spin_lock_irq(&sc->d.lock);
	b->writers--;
	spin_unlock_irq(&sc->d.lock);
	wake_up(&dm->wait);

	bio->bi_status = status;
	if (io->fua && !status)
		bio_list_add(commit, bio);
	else
		smr_dm_end_bio(sc, bio);
}

/*
 * A cache write's clone completed (any context). Index the write now when
 * its band's extent array has room, the insert moves few extents
 * (smr_dm_index_inline()) and the array stays within twice its use, and
 * end it; otherwise the worker grows, shrinks or rebuilds the array (it
 * may allocate), indexes it and ends it. FUA writes end after a commit, in
 * the worker too. The write, dm's own clone, is ended exactly once.
 */
static void smr_dm_cache_endio(struct bio *clone)
{
	struct bio *bio = clone->bi_private;
	struct smr_dm_target *sc = container_of(clone->bi_pool,
						struct smr_dm_target, d.bs);
	struct smr_dm *dm = sc->dm;
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	struct smr_band *b = &dm->bands[io->band];
	blk_status_t status = clone->bi_status;
	unsigned long flags;

	/* After a power cut (dm-smr-power.c) no write completes. */
	if (unlikely(smr_power_is_cut(&sc->d.power)))
		status = BLK_STS_IOERR;
	bio_put(clone);
	io->status = status;
	spin_lock_irqsave(&sc->d.lock, flags);
	if (!status && smr_dm_index_inline(b, io)) {
		smr_dm_index(sc, b, io);
		io->indexed = true;
		if (!io->fua && b->cap_ext <= 2 * b->nr_ext) {
			b->writers--;
			spin_unlock_irqrestore(&sc->d.lock, flags);
			wake_up(&dm->wait);
			smr_dm_end_bio(sc, bio);
			return;
		}
	}
	bio_list_add(&dm->done, bio);
	spin_unlock_irqrestore(&sc->d.lock, flags);
	queue_work(sc->d.wq, &sc->d.commit_work);
}

/*
 * Send a cache write to its slots through a clone of our own, so that its
 * completion is ours to delay: returning DM_ENDIO_INCOMPLETE from end_io
 * and ending dm's clone again later would run the backing queue's
 * completion accounting (rq_qos_done_bio(): iocost, iolatency) twice.
 * The clone comes from a bioset, as dm-crypt's do: it may wait for one of
 * our clones in flight to come back, never for memory reclaim.
 */
void smr_dm_submit_cache(struct smr_dm_target *sc, struct bio *bio,
			 sector_t sector)
{
	struct bio *clone = bio_alloc_clone(sc->d.bdev, bio, GFP_NOIO, &sc->d.bs);
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));

	if (sc->d.tm)
		smr_tm_host(sc->d.tm, &io->tm, smr_dm_tm_pos(sc->dm, sector),
			    bio_sectors(bio), bio->bi_opf);
	clone->bi_iter.bi_sector = sector;
	/* Durability of a FUA write comes from the commit that ends it. */
	clone->bi_opf &= ~REQ_FUA;
	/*
	 * dm polls only the bios it submits itself: a polled clone of ours
	 * on a poll queue would wait for the driver's timeout to be reaped.
	 */
	bio_clear_polled(clone);
	clone->bi_private = bio;
	clone->bi_end_io = smr_dm_cache_endio;
	smr_dm_send_clone(sc, bio, clone);
}

/*
 * The timing model: a metadata commit costs one 4 KiB write by the cache
 * (the model does not count the blocks a commit writes). Returns its
 * modelled end; @cleaning counts it as cleaning time.
 */
u64 smr_dm_tm_commit(struct smr_dm_target *sc, bool cleaning)
{
	struct smr_dm *dm = sc->dm;
	u64 end, svc;

	end = smr_tm_charge(sc->d.tm, dm->tm_cache_pos, SMR_BLOCK_SECTORS, &svc);
	if (cleaning) {
		spin_lock_irq(&sc->d.lock);
		dm->tm_clean_ns += svc;
		spin_unlock_irq(&sc->d.lock);
	}
	return end;
}

/* Cache writes that found no memory to be indexed: try them again. */
void smr_dm_nomem_work(struct work_struct *work)
{
	struct smr_dm *dm = container_of(to_delayed_work(work), struct smr_dm,
					 nomem_dwork);
	struct smr_dm_target *sc = dm->sc;

	spin_lock_irq(&sc->d.lock);
	bio_list_merge(&dm->done, &dm->nomem);
	bio_list_init(&dm->nomem);
	spin_unlock_irq(&sc->d.lock);
	queue_work(sc->d.wq, &sc->d.commit_work);
}
