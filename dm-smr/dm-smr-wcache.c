// SPDX-License-Identifier: GPL-2.0
/*
 * A drive's volatile write cache, of data: dm-smr-wcache.h says what it
 * promises. Locking: wc->lock (irqsave: destage completions take it)
 * guards the copies, the waiters and the counters. Nothing walks more
 * than SMR_WC_BATCH copies with it held, and held I/O is released by a
 * splice, never a walk.
 */
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "dm-smr-wcache.h"

#define SMR_WC_BATCH	64

/* Tests set it long, to look at what the cache holds before it destages. */
static unsigned int write_cache_age_ms = SMR_WC_AGE_MS;
module_param(write_cache_age_ms, uint, 0600);
MODULE_PARM_DESC(write_cache_age_ms, "how long a cached write may wait before it goes home, in ms (1 to 600000; default 1000)");

static unsigned long smr_wc_age(void)
{
	return msecs_to_jiffies(clamp(READ_ONCE(write_cache_age_ms), 1U,
				      600000U));
}

/* One write's data, not yet home. */
struct smr_wc_copy {
	struct interval_tree_node node;	/* backing sectors, in wc->tree */
	struct list_head all;		/* wc->all, by seq */
	struct list_head dirty;		/* wc->dirty until it is sent */
	struct smr_wc *wc;
	u64 seq;
	unsigned long born;		/* jiffies */
	unsigned int bytes;
	unsigned int nr_pages;
	struct page *pages[];
};

/*
 * The cache's pages are allocated once, when it is made: the I/O path
 * takes them from this pool and gives them back, never allocating one.
 * wc->lock held; n at most SMR_WC_MAX_WRITE / PAGE_SIZE pointers copied.
 */
static bool smr_wc_pages_get(struct smr_wc *wc, struct smr_wc_copy *c,
			     unsigned int n)
{
	if (wc->pool_free < n)
		return false;
	wc->pool_free -= n;
	memcpy(c->pages, &wc->pool[wc->pool_free], n * sizeof(*c->pages));
	c->nr_pages = n;
	return true;
}

static void smr_wc_pages_put(struct smr_wc *wc, struct smr_wc_copy *c)
{
	memcpy(&wc->pool[wc->pool_free], c->pages,
	       c->nr_pages * sizeof(*c->pages));
	wc->pool_free += c->nr_pages;
	c->nr_pages = 0;
}

/* A copy leaves the cache: sent home, or lost. wc->lock held. */
static void smr_wc_forget(struct smr_wc *wc, struct smr_wc_copy *c)
{
	interval_tree_remove(&c->node, &wc->tree);
	list_del(&c->all);
	smr_wc_pages_put(wc, c);
	wc->bytes -= c->bytes;
}

/* Copy @bio's data into @c's pages (its own: no one else sees @c yet). */
static void smr_wc_copy_data(struct smr_wc_copy *c, struct bio *bio)
{
	struct bvec_iter iter;
	struct bio_vec bv;
	size_t off = 0;

	bio_for_each_segment(bv, bio, iter) {
		/* A copy: the loop advances by bv's own length. */
		struct bio_vec part = bv;

		while (part.bv_len) {
			unsigned int in = offset_in_page(off);
			unsigned int len = min_t(unsigned int, part.bv_len,
						 PAGE_SIZE - in);
			void *src = bvec_kmap_local(&part);

			memcpy(page_address(c->pages[off >> PAGE_SHIFT]) + in,
			       src, len);
			kunmap_local(src);
			part.bv_offset += len;
			part.bv_len -= len;
			off += len;
		}
	}
}

static void smr_wc_endio(struct bio *bio)
{
	struct smr_wc_copy *c = bio->bi_private;
	struct smr_wc *wc = c->wc;
	blk_status_t sts = bio->bi_status;
	unsigned long flags;

	bio_put(bio);
	spin_lock_irqsave(&wc->lock, flags);
	smr_wc_forget(wc, c);
	wc->writing--;
	if (sts) {
		/*
		 * An acknowledged write is lost: the cache fails as at a
		 * power cut, so that no later flush or commit claims it
		 * and no read returns what was under it.
		 */
		if (!wc->failed)
			pr_err("%s: write cache: a destage of %u sectors at %llu failed (%d): the drive fails all I/O until its table is loaded again\n",
			       wc->name, c->bytes >> SECTOR_SHIFT,
			       (unsigned long long)c->node.start,
			       blk_status_to_errno(sts));
		wc->failed = true;
		wc->cut = true;
		wc->stats.failed_sectors += c->bytes >> SECTOR_SHIFT;
		queue_work(wc->wq, &wc->work);
	} else {
		wc->stats.destaged_sectors += c->bytes >> SECTOR_SHIFT;
	}
	/* Held I/O goes once nothing is cached (smr_wc_work()). */
	if (!list_empty(&wc->waiters) && RB_EMPTY_ROOT(&wc->tree.rb_root))
		queue_work(wc->wq, &wc->work);
	/* Under the lock: smr_wc_exit() may free @wc once it is dropped. */
	wake_up_all(&wc->wait);
	spin_unlock_irqrestore(&wc->lock, flags);
	kfree(c);
}

static void smr_wc_send(struct smr_wc *wc, struct smr_wc_copy *c)
{
	struct bio *bio;
	unsigned int i, left = c->bytes;

	/* From the bioset: waits only for one of our destages to end. */
	bio = bio_alloc_bioset(wc->bdev, c->nr_pages, REQ_OP_WRITE, GFP_NOIO,
			       &wc->bs);
	for (i = 0; i < c->nr_pages; i++) {
		unsigned int len = min_t(unsigned int, left, PAGE_SIZE);

		__bio_add_page(bio, c->pages[i], len, 0);
		left -= len;
	}
	bio->bi_iter.bi_sector = c->node.start;
	bio->bi_private = c;
	bio->bi_end_io = smr_wc_endio;
	submit_bio(bio);
}

/* Should the oldest copy not yet sent, @c, go home now? Lock held. */
static bool smr_wc_due(struct smr_wc *wc, struct smr_wc_copy *c)
{
	return wc->urgent || c->seq <= wc->drain_to ||
		wc->dirty_bytes > wc->max_bytes / 4 ||
		time_after_eq(jiffies, c->born + smr_wc_age());
}

/*
 * The worker: send what is due home (after a cut: drop what is not
 * sent), then release the I/O that waited for it. In batches, so that
 * the lock is never held across more than SMR_WC_BATCH copies.
 */
static void smr_wc_work(struct work_struct *work)
{
	struct smr_wc *wc = container_of(work, struct smr_wc, work);
	struct smr_wc_copy *c, *batch[SMR_WC_BATCH];
	struct smr_wc_wait *w, *wn;
	LIST_HEAD(go);
	unsigned int n, i;
	bool cut, more;

	do {
		n = 0;
		spin_lock_irq(&wc->lock);
		cut = wc->cut;
		while (n < SMR_WC_BATCH && !list_empty(&wc->dirty)) {
			c = list_first_entry(&wc->dirty, struct smr_wc_copy,
					     dirty);
			if (!cut && !smr_wc_due(wc, c))
				break;
			list_del_init(&c->dirty);
			wc->dirty_bytes -= c->bytes;
			if (cut) {
				/* Lost with the power, as a drive's cache is. */
				smr_wc_forget(wc, c);
				wc->stats.lost_sectors += c->bytes >> SECTOR_SHIFT;
			} else {
				wc->writing++;
			}
			batch[n++] = c;
		}
		more = n == SMR_WC_BATCH;
		if (!more && list_empty(&wc->dirty))
			wc->urgent = false;
		if (cut)
			wake_up_all(&wc->wait);
		spin_unlock_irq(&wc->lock);
		for (i = 0; i < n; i++) {
			if (cut)
				kfree(batch[i]);
			else
				smr_wc_send(wc, batch[i]);
		}
		cond_resched();
	} while (more);

	/*
	 * Held I/O goes once nothing is cached, all of it at once (a splice:
	 * no walk of it with interrupts off), or fails after a cut. No
	 * write is cached while any I/O is held (smr_wc_submit()), so the
	 * cache only empties meanwhile: the wait is bounded by its size.
	 */
	spin_lock_irq(&wc->lock);
	cut = wc->cut;
	if (cut || RB_EMPTY_ROOT(&wc->tree.rb_root))
		list_splice_init(&wc->waiters, &go);
	more = !list_empty(&wc->dirty);
	spin_unlock_irq(&wc->lock);
	list_for_each_entry_safe(w, wn, &go, node) {
		list_del_init(&w->node);
		w->release(w, cut ? BLK_STS_IOERR : BLK_STS_OK);
	}
	/* What is left goes home with age. */
	if (more && !cut)
		queue_delayed_work(wc->wq, &wc->age_work,
				   max(smr_wc_age() / 4, 1UL));
}

static void smr_wc_age_work(struct work_struct *work)
{
	struct smr_wc *wc = container_of(to_delayed_work(work), struct smr_wc,
					 age_work);

	queue_work(wc->wq, &wc->work);
}

enum smr_wc_verdict smr_wc_submit(struct smr_wc *wc, struct bio *bio,
				  struct smr_wc_wait *w)
{
	unsigned int size = bio->bi_iter.bi_size;
	unsigned long first = bio->bi_iter.bi_sector, last, flags;
	unsigned int n = DIV_ROUND_UP(size, PAGE_SIZE);
	struct smr_wc_copy *c = NULL;
	bool kick;

	if (!size)
		return SMR_WC_PASS;	/* a flush: the caller drained first */
	last = first + (size >> SECTOR_SHIFT) - 1;
	/* Unlocked looks, to spare an allocation that would not be used. */
	if (bio_op(bio) == REQ_OP_WRITE &&
	    !(bio->bi_opf & (REQ_FUA | REQ_PREFLUSH)) &&
	    size <= SMR_WC_MAX_WRITE && !READ_ONCE(wc->cut) &&
	    READ_ONCE(wc->pool_free) >= n && list_empty_careful(&wc->waiters))
		c = kzalloc(struct_size(c, pages, n),
			    GFP_NOWAIT | __GFP_NOWARN | __GFP_NOMEMALLOC);

	spin_lock_irqsave(&wc->lock, flags);
	if (wc->cut)
		goto cut;
	if (interval_tree_iter_first(&wc->tree, first, last))
		goto hold;
	if (!c || !list_empty(&wc->waiters) || !smr_wc_pages_get(wc, c, n)) {
		if (bio_op(bio) == REQ_OP_WRITE)
			wc->stats.through_writes++;
		spin_unlock_irqrestore(&wc->lock, flags);
		kfree(c);
		return SMR_WC_PASS;
	}
	spin_unlock_irqrestore(&wc->lock, flags);

	smr_wc_copy_data(c, bio);
	c->wc = wc;
	c->bytes = size;
	c->node.start = first;
	c->node.last = last;
	c->born = jiffies;

	spin_lock_irqsave(&wc->lock, flags);
	if (wc->cut || interval_tree_iter_first(&wc->tree, first, last) ||
	    !list_empty(&wc->waiters)) {
		/* Meanwhile: a cut, a write of the same sectors, held I/O. */
		smr_wc_pages_put(wc, c);
		if (wc->cut)
			goto cut;
		if (interval_tree_iter_first(&wc->tree, first, last))
			goto hold;
		wc->stats.through_writes++;
		spin_unlock_irqrestore(&wc->lock, flags);
		kfree(c);
		return SMR_WC_PASS;
	}
	interval_tree_insert(&c->node, &wc->tree);
	c->seq = ++wc->seq;
	list_add_tail(&c->all, &wc->all);
	list_add_tail(&c->dirty, &wc->dirty);
	wc->bytes += size;
	wc->dirty_bytes += size;
	wc->stats.cached_writes++;
	wc->stats.cached_sectors += size >> SECTOR_SHIFT;
	kick = wc->dirty_bytes > wc->max_bytes / 2;
	if (kick)
		queue_work(wc->wq, &wc->work);
	else
		queue_delayed_work(wc->wq, &wc->age_work, smr_wc_age());
	spin_unlock_irqrestore(&wc->lock, flags);
	bio_endio(bio);
	return SMR_WC_TAKEN;

cut:
	spin_unlock_irqrestore(&wc->lock, flags);
	kfree(c);
	bio_io_error(bio);
	return SMR_WC_TAKEN;
hold:
	/* After the copy it overlaps, which goes home now. */
	w->bio = bio;
	w->first = first;
	w->last = last;
	list_add_tail(&w->node, &wc->waiters);
	wc->urgent = true;
	wc->stats.held++;
	queue_work(wc->wq, &wc->work);
	spin_unlock_irqrestore(&wc->lock, flags);
	kfree(c);
	return SMR_WC_HELD;
}

/* Is every copy up to @seq home? (Or the power cut: nothing will be.) */
static bool smr_wc_drained(struct smr_wc *wc, u64 seq)
{
	struct smr_wc_copy *c;
	bool done;

	spin_lock_irq(&wc->lock);
	c = list_first_entry_or_null(&wc->all, struct smr_wc_copy, all);
	done = wc->cut || !c || c->seq > seq;
	spin_unlock_irq(&wc->lock);
	return done;
}

int smr_wc_drain(struct smr_wc *wc)
{
	int ret = 0;
	u64 seq;

	might_sleep();
	spin_lock_irq(&wc->lock);
	seq = wc->seq;
	wc->drain_to = max(wc->drain_to, seq);
	wc->stats.drains++;
	spin_unlock_irq(&wc->lock);
	queue_work(wc->wq, &wc->work);
	/* Bounded by the backing device's writes of at most max_bytes. */
	wait_event(wc->wait, smr_wc_drained(wc, seq));

	/* After a cut or a failed destage nothing is durable any more. */
	if (READ_ONCE(wc->cut))
		ret = -EIO;
	return ret;
}

void smr_wc_cut(struct smr_wc *wc)
{
	unsigned long flags;

	spin_lock_irqsave(&wc->lock, flags);
	wc->cut = true;
	queue_work(wc->wq, &wc->work);
	wake_up_all(&wc->wait);
	spin_unlock_irqrestore(&wc->lock, flags);
}

static bool smr_wc_idle(struct smr_wc *wc)
{
	bool idle;

	spin_lock_irq(&wc->lock);
	idle = !wc->writing && list_empty(&wc->dirty) &&
		list_empty(&wc->waiters);
	spin_unlock_irq(&wc->lock);
	return idle;
}

int smr_wc_settle(struct smr_wc *wc)
{
	flush_work(&wc->work);
	if (!wait_event_timeout(wc->wait, smr_wc_idle(wc), 30 * HZ))
		return -ETIMEDOUT;
	return 0;
}

/* The pool's pages and the pool; @done: every copy is gone. */
static void smr_wc_pool_free(struct smr_wc *wc, bool done)
{
	if (done && wc->pool_free != wc->pool_nr)
		pr_err("%s: write cache: %u of %u pages not back in the pool at removal\n",
		       wc->name, wc->pool_nr - wc->pool_free, wc->pool_nr);
	while (wc->pool_free)
		__free_page(wc->pool[--wc->pool_free]);
	kvfree(wc->pool);
	wc->pool = NULL;
}

int smr_wc_init(struct smr_wc *wc, const char *name,
		struct block_device *bdev, u32 kib)
{
	int ret;

	memset(wc, 0, sizeof(*wc));
	INIT_LIST_HEAD(&wc->dirty);
	wc->name = name;
	wc->bdev = bdev;
	wc->max_bytes = (u64)kib << 10;
	spin_lock_init(&wc->lock);
	wc->tree = RB_ROOT_CACHED;
	INIT_LIST_HEAD(&wc->all);
	INIT_LIST_HEAD(&wc->waiters);
	init_waitqueue_head(&wc->wait);
	INIT_WORK(&wc->work, smr_wc_work);
	INIT_DELAYED_WORK(&wc->age_work, smr_wc_age_work);
	/* The pages, all of them now: none is allocated on the I/O path. */
	wc->pool_nr = wc->max_bytes >> PAGE_SHIFT;
	wc->pool = kvmalloc_array(wc->pool_nr, sizeof(*wc->pool), GFP_KERNEL);
	if (!wc->pool)
		return -ENOMEM;
	for (wc->pool_free = 0; wc->pool_free < wc->pool_nr; wc->pool_free++) {
		wc->pool[wc->pool_free] = alloc_page(GFP_KERNEL | __GFP_NOWARN);
		if (!wc->pool[wc->pool_free]) {
			ret = -ENOMEM;
			goto fail;
		}
		if (!(wc->pool_free % 1024))
			cond_resched();
	}
	ret = bioset_init(&wc->bs, BIO_POOL_SIZE, 0, BIOSET_NEED_BVECS);
	if (ret)
		goto fail;
	/* Destage is writeback's way out: it must run under memory pressure. */
	wc->wq = alloc_ordered_workqueue("smr-wc-%s", WQ_MEM_RECLAIM, name);
	if (!wc->wq) {
		ret = -ENOMEM;
		goto fail;
	}
	return 0;
fail:
	bioset_exit(&wc->bs);
	smr_wc_pool_free(wc, false);
	return ret;
}

void smr_wc_exit(struct smr_wc *wc)
{
	if (!wc->wq)
		return;
	spin_lock_irq(&wc->lock);
	if (wc->bytes && !wc->cut)
		pr_warn("%s: write cache: %llu bytes not drained at removal are dropped\n",
			wc->name, (unsigned long long)wc->bytes);
	wc->cut = true;
	spin_unlock_irq(&wc->lock);
	cancel_delayed_work_sync(&wc->age_work);
	queue_work(wc->wq, &wc->work);
	flush_work(&wc->work);
	/*
	 * smr_wc_idle() reads under wc->lock, and every waker changes what
	 * it reads and wakes within one hold of that lock: once it says
	 * idle, the last waker has let go of wc (smr_wc_endio() gives its
	 * bio back to wc->bs before it takes the lock, and frees only its
	 * copy after).
	 */
	wait_event(wc->wait, smr_wc_idle(wc));
	destroy_workqueue(wc->wq);
	bioset_exit(&wc->bs);
	smr_wc_pool_free(wc, true);
	wc->wq = NULL;
}

static void smr_wc_get_stats(struct smr_wc *wc, struct smr_wc_stats *st,
			     u64 *bytes)
{
	spin_lock_irq(&wc->lock);
	*st = wc->stats;
	*bytes = wc->bytes;
	spin_unlock_irq(&wc->lock);
}

void smr_wc_emit(struct smr_wc *wc, char *result, unsigned int maxlen)
{
	struct smr_wc_stats st;
	u64 bytes;

	smr_wc_get_stats(wc, &st, &bytes);
	scnprintf(result, maxlen,
		  "state=%s kib=%llu held_kib=%llu cached_writes=%llu cached_sectors=%llu through_writes=%llu destaged_sectors=%llu held=%llu drains=%llu lost_sectors=%llu failed_sectors=%llu",
		  READ_ONCE(wc->failed) ? "failed" : READ_ONCE(wc->cut) ? "cut" : "on",
		  wc->max_bytes >> 10, bytes >> 10, st.cached_writes,
		  st.cached_sectors, st.through_writes, st.destaged_sectors,
		  st.held, st.drains, st.lost_sectors, st.failed_sectors);
}
