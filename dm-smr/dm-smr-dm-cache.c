// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: the persistent cache. It owns the log of
 * cache slots (allocation from the cursor, release), the index that maps
 * each band's cached blocks to slots (per band, a red-black tree of
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
/* The cache index: per band, a red-black tree of extents by offset.   */
/* ------------------------------------------------------------------ */

static struct smr_ext_node *smr_ext_of(struct rb_node *n)
{
	return rb_entry_safe(n, struct smr_ext_node, rb);
}

/* First extent of band @b that ends after block @off, or NULL. */
struct smr_ext_node *smr_ext_find(struct smr_band *b, u32 off)
{
	struct rb_node *n = b->ext.rb_node;
	struct smr_ext_node *first = NULL;

	while (n) {
		struct smr_ext_node *x = rb_entry(n, struct smr_ext_node, rb);

		if ((u32)x->e.off + x->e.len <= off) {
			n = n->rb_right;
		} else {
			first = x;
			n = n->rb_left;
		}
	}
	return first;
}

bool smr_ext_overlaps(struct smr_band *b, u32 off, u32 n)
{
	struct smr_ext_node *x = smr_ext_find(b, off);

	return x && x->e.off < off + n;
}

static void smr_dm_index_slots(struct smr_dm_target *sc, struct smr_dm_io *io);

/* Link @x, which overlaps none of them, into band @b's extents. */
static void smr_ext_link(struct smr_dm *dm, struct smr_band *b,
			 struct smr_ext_node *x)
{
	struct rb_node **link = &b->ext.rb_node, *parent = NULL;

	while (*link) {
		parent = *link;
		if (x->e.off < rb_entry(parent, struct smr_ext_node, rb)->e.off)
			link = &parent->rb_left;
		else
			link = &parent->rb_right;
	}
	rb_link_node(&x->rb, parent, link);
	rb_insert_color(&x->rb, &b->ext);
	b->nr_ext++;
	dm->nr_ext++;
}

/* Unlink @x from band @b's extents and keep it as a spare, or free it. */
static void smr_ext_unlink(struct smr_dm *dm, struct smr_band *b,
			   struct smr_ext_node *x)
{
	rb_erase(&x->rb, &b->ext);
	b->nr_ext--;
	dm->nr_ext--;
	if (dm->nr_ext_spare < SMR_EXT_SPARE)
		dm->ext_spare[dm->nr_ext_spare++] = x;
	else
		kfree(x);
}

/*
 * Have @nr spare nodes, allocating without waiting (GFP_NOWAIT: under
 * the lock, maybe with interrupts off). False if memory is short, or the
 * test hook fails the allocation (it fails the next inserts that need a
 * node, whether a spare is at hand or not, so that a test sees it).
 */
static bool smr_ext_reserve(struct smr_dm *dm, u32 nr, bool hook)
{
	if (hook && unlikely(READ_ONCE(smr_test.fail_ext_allocs)) &&
	    smr_fault_take(&smr_test.fail_ext_allocs))
		return false;
	while (dm->nr_ext_spare < nr) {
		struct smr_ext_node *x = kmalloc(sizeof(*x),
						 GFP_NOWAIT | __GFP_NOWARN);

		if (!x)
			return false;
		dm->ext_spare[dm->nr_ext_spare++] = x;
	}
	return true;
}

/* Merge @x into the extent before it when they continue each other. */
static struct smr_ext_node *smr_ext_merge(struct smr_dm *dm,
					  struct smr_band *b,
					  struct smr_ext_node *x)
{
	struct smr_ext_node *p = smr_ext_of(rb_prev(&x->rb));

	if (!p || p->e.off + p->e.len != x->e.off ||
	    p->e.slot + p->e.len != x->e.slot ||
	    p->e.len + x->e.len > SMR_EXT_MAX_LEN)
		return x;
	p->e.len += x->e.len;
	smr_ext_unlink(dm, b, x);
	return p;
}

/*
 * Map blocks [off, off + n) of band @b to slots from @slot on. Under
 * sc->d.lock, maybe with interrupts off: it walks O(log extents) nodes
 * plus the extents the write covers (at most its @n blocks, bounded by
 * SMR_DM_IO_SECTORS), and takes the nodes it needs (one, two when it
 * cuts an extent in three) from dm->ext_spare, allocating them with
 * GFP_NOWAIT when there are too few. -ENOMEM, with nothing changed,
 * when that fails, or when @hook and the test hook fail_ext_allocs says
 * so (a write's insert, at completion or in the worker; not the load's).
 */
static int smr_ext_insert(struct smr_dm *dm, struct smr_band *b, u32 off,
			  u32 n, u32 slot, bool hook)
{
	struct smr_ext_node *x = smr_ext_find(b, off), *nx, *t = NULL;
	u32 end = off + n, covered = 0, xend;
	bool cut = x && x->e.off < off && x->e.off + x->e.len > end;

	if (!smr_ext_reserve(dm, 1 + cut, hook))
		return -ENOMEM;
	if (x && x->e.off < off) {
		/* A head piece stays; in a cut, the tail becomes node @t. */
		xend = x->e.off + x->e.len;
		if (cut) {
			t = dm->ext_spare[--dm->nr_ext_spare];
			t->e.slot = x->e.slot + (end - x->e.off);
			t->e.off = end;
			t->e.len = xend - end;
			covered = n;
		} else {
			covered = xend - off;
		}
		x->e.len = off - x->e.off;
		x = cut ? NULL : smr_ext_of(rb_next(&x->rb));
	}
	while (x && x->e.off < end) {
		xend = x->e.off + x->e.len;
		if (xend > end) {
			/* A tail piece stays: its order among the rest holds. */
			covered += end - x->e.off;
			x->e.slot += end - x->e.off;
			x->e.len = xend - end;
			x->e.off = end;
			break;
		}
		covered += x->e.len;
		nx = smr_ext_of(rb_next(&x->rb));
		smr_ext_unlink(dm, b, x);
		x = nx;
	}
	if (t)
		smr_ext_link(dm, b, t);
	/* After the unlinks, which may have refilled the spares. */
	x = dm->ext_spare[--dm->nr_ext_spare];
	x->e.slot = slot;
	x->e.off = off;
	x->e.len = n;
	smr_ext_link(dm, b, x);
	x = smr_ext_merge(dm, b, x);
	nx = smr_ext_of(rb_next(&x->rb));
	if (nx)
		smr_ext_merge(dm, b, nx);
	b->live += n - covered;
	dm->live += n - covered;
	return 0;
}

/*
 * Map blocks [off, off + n) of band @b to slots from @slot on, allocating
 * what it needs with GFP_NOIO first (process context, no lock held: the
 * load, and the worker when an insert at completion found no memory).
 */
static int smr_ext_insert_noio(struct smr_dm_target *sc, struct smr_band *b,
			       u32 off, u32 n, u32 slot,
			       struct smr_dm_io *io)
{
	struct smr_dm *dm = sc->dm;
	struct smr_ext_node *pre[2], *left[2];
	u32 i, nl = 0;
	int ret;

	for (i = 0; i < 2; i++) {
		pre[i] = kmalloc(sizeof(*pre[i]), GFP_NOIO);
		if (!pre[i]) {
			kfree(pre[0]);
			return -ENOMEM;
		}
	}
	spin_lock_irq(&sc->d.lock);
	for (i = 0; i < 2; i++) {
		if (dm->nr_ext_spare < SMR_EXT_SPARE)
			dm->ext_spare[dm->nr_ext_spare++] = pre[i];
		else
			left[nl++] = pre[i];
	}
	/* Two spares at hand: this fails only by the test hook. */
	ret = smr_ext_insert(dm, b, off, n, slot, io != NULL);
	if (!ret && io)
		smr_dm_index_slots(sc, io);
	spin_unlock_irq(&sc->d.lock);
	for (i = 0; i < nl; i++)
		kfree(left[i]);
	return ret;
}

/* The load's insert (smr_dm_load()): the device is suspended. */
int smr_ext_index(struct smr_dm_target *sc, struct smr_band *b, u32 off,
		  u32 n, u32 slot)
{
	return smr_ext_insert_noio(sc, b, off, n, slot, NULL);
}

/* Drop a band's whole index (cleaning). Returns the tree to free. */
struct rb_root smr_ext_drop(struct smr_dm *dm, struct smr_band *b)
{
	struct rb_root old = b->ext;

	dm->live -= b->live;
	dm->nr_ext -= b->nr_ext;
	b->ext = RB_ROOT;
	b->nr_ext = b->live = 0;
	return old;
}

void smr_ext_free_spares(struct smr_dm *dm)
{
	while (dm->nr_ext_spare)
		kfree(dm->ext_spare[--dm->nr_ext_spare]);
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
 * Under sc->d.lock, once its extent is in the band's index.
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

/*
 * Index a completed cache write under sc->d.lock, maybe with interrupts
 * off (smr_ext_insert() is bounded). -ENOMEM, nothing changed, when it
 * found no memory without waiting: the worker tries again.
 */
static int smr_dm_index(struct smr_dm_target *sc, struct smr_band *b,
			struct smr_dm_io *io)
{
	int ret = smr_ext_insert(sc->dm, b, io->off, io->nr, io->slot, true);

	if (!ret)
		smr_dm_index_slots(sc, io);
	return ret;
}

/*
 * A cache write completed and not indexed at its completion, for want of
 * memory there (or it failed): index it with GFP_NOIO allocations, then
 * end it (or after a commit). Worker only.
 */
void smr_dm_write_done(struct smr_dm_target *sc, struct bio *bio,
		       struct bio_list *commit)
{
	struct smr_dm *dm = sc->dm;
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	struct smr_band *b = &dm->bands[io->band];
	blk_status_t status = io->status;

	if (status) {
		spin_lock_irq(&sc->d.lock);
		smr_slot_release(dm, io->band, io->slot, io->nr);
		sc->d.errors++;
		spin_unlock_irq(&sc->d.lock);
	} else if (!io->indexed &&
		   smr_ext_insert_noio(sc, b, io->off, io->nr, io->slot, io)) {
		/*
		 * No memory now. The data is in the cache: never fail the
		 * write for that, try again in a while (the write keeps its
		 * slots and its band's writer count).
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
 * A cache write's clone completed (any context). Index the write now and
 * end it; when that finds no memory without waiting, or the write failed,
 * the worker does it (smr_dm_write_done()). FUA writes end after a
 * commit, in the worker too. The write, dm's own clone, is ended exactly
 * once.
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
	if (!status && !smr_dm_index(sc, b, io)) {
		io->indexed = true;
		if (!io->fua) {
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
