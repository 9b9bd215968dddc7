/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A drive's volatile write cache, of data (dm-smr-wcache.c): the
 * table option write_cache_kib <KiB> (write_cache <MiB> before) of
 * dm-smr's host-managed and drive-managed modes.
 *
 * dm-caveat's write_cache_kib is a cache of its own (dm-caveat-wc.c), not
 * this one: a caveat copy may go home only after the damage its write
 * does is durable, and a write that damages nothing is not copied at
 * all. This cache sends a copy home whenever it is due and orders
 * nothing but copies of the same sectors, so it stays with dm-smr.
 *
 * It sits between a model and its backing device. A plain write the
 * model sends to the backing device is copied into memory and ends at
 * once, before the backing device has it, as a drive acknowledges a
 * write its cache holds; the copy goes home later (destage). What a host
 * relies on, the cache keeps:
 *
 *  - a flush covers every write acknowledged before it: the model calls
 *    smr_wc_drain() before it flushes the backing device or commits its
 *    metadata (every commit does, through smr_slots_ops.data_home);
 *  - I/O sees what was acknowledged: a read, or a write, that overlaps
 *    a copy not yet home waits until it is (smr_wc_submit() holds it),
 *    so reads return the newest data and copies of the same sectors
 *    reach the disk in order. Held I/O goes once the cache is empty, and
 *    no write is cached while any is held, so the wait is bounded;
 *  - a FUA write, or one with a preflush, that reaches the cache goes
 *    past it to the backing device (a drive-managed write, a write to a
 *    host-managed conventional zone). The host-managed engine sends a
 *    sequential zone's FUA or preflush write on as a plain write, which
 *    the cache may take, and acknowledges it after a commit, which drains
 *    the cache first: durable either way when acknowledged.
 *
 * A power cut (smr_wc_cut()) drops every copy not yet sent home: those
 * writes are lost, as a drive's cache is. A copy that fails to reach
 * home cuts the cache the same way (smr_wc_failed()): every drain fails
 * from then on, so no flush or commit claims the lost write, and all
 * I/O through the cache fails, so no read returns what was under it.
 *
 * Memory: write_cache_kib KiB of pages, allocated when the cache is made
 * and kept in a pool; a copy takes its pages from it (at most
 * SMR_WC_MAX_WRITE bytes) and a small record (GFP_NOWAIT). When either is
 * short the write goes to the backing device as without the cache.
 * Copies destage when older than SMR_WC_AGE_MS, when the cache is over
 * half full, and when something waits for them (the module
 * parameter write_cache_age_ms changes the age).
 */
#ifndef SMR_WCACHE_H
#define SMR_WCACHE_H

#include <linux/bio.h>
#include <linux/interval_tree.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

/* The cache's size, KiB: 1 MiB (a largest write) to 1 GiB, whole pages. */
#define SMR_WC_MIN_KIB		1024
#define SMR_WC_MAX_KIB		(1024 * 1024)
#define SMR_WC_MAX_WRITE	(1U << 20)
#define SMR_WC_AGE_MS		1000

/* A bio the cache holds until what it overlaps is home (the caller's). */
struct smr_wc_wait {
	struct list_head node;
	struct bio *bio;
	/*
	 * Backing sectors. Interval tree keys are unsigned long: 64 bits on
	 * the 64-bit kernels this module is built for.
	 */
	unsigned long first, last;
	/* From the cache's worker: send @bio on, or end it with @sts. */
	void (*release)(struct smr_wc_wait *w, blk_status_t sts);
};

struct smr_wc_stats {
	u64 cached_writes, cached_sectors;	/* acknowledged from memory */
	u64 through_writes;	/* plain writes sent on: no room or too large */
	u64 destaged_sectors;
	u64 held;		/* I/Os that waited for a copy to go home */
	u64 drains;
	u64 lost_sectors;	/* dropped by a power cut */
	u64 failed_sectors;	/* a destage that failed */
};

struct smr_wc {
	const char *name;		/* for the log */
	struct block_device *bdev;
	u64 max_bytes;

	spinlock_t lock;		/* everything below; taken from completions */
	struct rb_root_cached tree;	/* copies not yet home, by backing sector */
	struct list_head all;		/* the same, oldest first */
	struct list_head dirty;		/* those not sent yet, oldest first */
	u64 dirty_bytes;		/* held by those */
	struct list_head waiters;	/* struct smr_wc_wait */
	u64 bytes;			/* held by those copies */
	struct page **pool;		/* pages no copy holds: pool[0..pool_free) */
	u32 pool_free;
	u32 pool_nr;			/* max_bytes of pages, allocated at init */
	u32 writing;			/* destages in flight */
	u64 seq;			/* of the newest copy */
	u64 drain_to;			/* destage every copy up to this one */
	bool urgent;			/* something waits: destage all */
	bool cut;			/* power cut: take nothing, send nothing */
	bool failed;			/* a destage failed: cut since */
	struct smr_wc_stats stats;

	wait_queue_head_t wait;		/* drains, settle */
	struct workqueue_struct *wq;
	struct work_struct work;	/* destage, release held I/O */
	struct delayed_work age_work;
	struct bio_set bs;
};

enum smr_wc_verdict {
	SMR_WC_PASS,	/* not the cache's: the caller sends it on */
	SMR_WC_TAKEN,	/* ended (a cached write, or failed after a cut) */
	SMR_WC_HELD,	/* @w->release() sends it on later */
};

/* A cache of @mib MiB for @bdev. Returns 0 or -ENOMEM. */
int smr_wc_init(struct smr_wc *wc, const char *name,
		struct block_device *bdev, u32 kib);
/* Every copy still held is dropped: drain or cut first. */
void smr_wc_exit(struct smr_wc *wc);

/*
 * @bio is aimed at the backing device (bi_sector set) with its end_io
 * set, and not yet sent. Any context that may submit I/O.
 */
enum smr_wc_verdict smr_wc_submit(struct smr_wc *wc, struct bio *bio,
				  struct smr_wc_wait *w);

/*
 * Sleep until every copy taken before the call is home. Returns 0, or
 * -EIO if a destage failed since the last drain or the power is cut.
 */
int smr_wc_drain(struct smr_wc *wc);

/* Power cut, from any context: drop what is not sent, fail what waits. */
void smr_wc_cut(struct smr_wc *wc);
/* A destage failed (the cache is cut since). */
static inline bool smr_wc_failed(struct smr_wc *wc)
{
	return READ_ONCE(wc->failed);
}

/* After a cut: wait (bounded) for destages in flight. */
int smr_wc_settle(struct smr_wc *wc);

/* The "write_cache" message's line. */
void smr_wc_emit(struct smr_wc *wc, char *result, unsigned int maxlen);

#endif /* SMR_WCACHE_H */
