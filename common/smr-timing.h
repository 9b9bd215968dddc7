/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The timing model (common/smr-timing.c, the drive's buffer in
 * smr-timing-buffer.c), shared by dm-smr and dm-caveat.
 *
 * An optional disk model per target, given on the table line as
 *
 *   timing <#words> <key> <value> [<key> <value>...]
 *
 * after the target's optional arguments. It makes the emulated drive take
 * the time a drive of its kind takes, whenever the backing device is
 * faster than that drive:
 *
 *   - one actuator: every I/O the drive performs (host I/O and its own:
 *     cache appends, band rewrites, metadata) is charged a service time,
 *     one after the other in the order they are charged (FIFO, no
 *     reordering): a seek from where the last one ended, half a
 *     revolution on average, and the transfer at the media rate of that
 *     radius, plus a fixed command overhead;
 *   - a host bio completes no earlier than the modelled end of its I/O
 *     (smr_tm_end_bio(): a per-bio timer), and the drive's own work waits
 *     for the modelled end of each step (smr_tm_wait()), so the wall clock
 *     of the host follows the modelled clock of the drive;
 *   - optionally command queueing (queue_depth): host I/O waits in a
 *     queue and the actuator, driven by a timer at the end of each
 *     service, takes the one of the oldest queue_depth requests it can
 *     reach first, except that no request is overtaken by more than
 *     queue_depth later ones (smr_tm_host()). The drive's own work
 *     (smr_tm_charge()) is served first;
 *   - optionally the drive's buffer used as a volatile write cache
 *     (buffer_mib; wcache_mib before it was named apart from the
 *     targets' data cache, write_cache_kib): a host write is
 *     acknowledged at interface speed while the cache has room, and
 *     destaged by the actuator in the order charged; a flush or a FUA
 *     write waits for the destage (smr_tm_charge_host(),
 *     smr_tm_flush_end()). Timing only;
 *   - optionally a read cache (read_segments, read_ahead_kib): each host
 *     read from the media keeps what it read in a segment of the drive's
 *     buffer, the least recently used reused, and the drive reads on
 *     after it at the media rate, read_ahead_kib at most, while the
 *     actuator has nothing else to do. A host read inside what a
 *     segment holds, or starting inside a running look-ahead (which it
 *     moves on), is answered from it at interface speed, without the
 *     actuator, once the segment has its last sector; any other work
 *     stops the look-ahead, and a charge over a segment's sectors drops
 *     the segment. Timing only;
 *   - the real I/O is issued to the backing as without the model, so data,
 *     flushes and crash safety do not change.
 *
 * Positions are "platter" sectors of the whole drive, in [0, span): the
 * caller maps its backing layout onto them with smr_tm_pos() (the device
 * starts at start_mb on a drive of drive_mb; without drive_mb the drive
 * is the device itself) and drive-managed mode puts its cache at
 * cache_at of the drive. docs/timing.md describes the model, its keys and
 * its limits.
 */
#ifndef SMR_TIMING_H
#define SMR_TIMING_H

#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/wait.h>

/* The keys, in the order the table line prints them back. */
enum smr_tm_key {
	SMR_TM_RPM,		/* rpm: spindle speed */
	SMR_TM_T2T,		/* seek_t2t_us: track-to-track seek */
	SMR_TM_AVG,		/* seek_avg_us: average seek (random pairs) */
	SMR_TM_FULL,		/* seek_full_us: full-stroke seek */
	SMR_TM_OD,		/* od_mbps: media rate at the outer diameter, MB/s */
	SMR_TM_ID,		/* id_mbps: media rate at the inner diameter, MB/s */
	SMR_TM_OVERHEAD,	/* overhead_us: per command (optional, 0) */
	SMR_TM_CACHE_AT,	/* cache_at: drive-managed cache position, per
				   mille of the stroke from the outer edge
				   (optional, 0) */
	SMR_TM_DRIVE_MB,	/* drive_mb: the whole drive's capacity, decimal
				   MB (optional: the device is the drive) */
	SMR_TM_START_MB,	/* start_mb: where the device starts on that
				   drive, decimal MB (optional, 0) */
	SMR_TM_BUFFER,		/* buffer_mib: the drive's buffer, used as a
				   volatile write cache, MiB; modelled
				   time only (optional, 0: none) */
	SMR_TM_QDEPTH,		/* queue_depth: reorder host I/O within the
				   oldest this many (optional, 0: arrival
				   order, no queue) */
	SMR_TM_RSEGS,		/* read_segments: the read cache's segments
				   (optional, 0: no read cache) */
	SMR_TM_AHEAD,		/* read_ahead_kib: how far the drive reads on
				   after a read, while idle (optional, 0) */
	SMR_TM_NR_KEYS
};

/* Keys a target may leave out; the others are required. */
#define SMR_TM_OPTIONAL		(BIT(SMR_TM_OVERHEAD) | BIT(SMR_TM_CACHE_AT) | \
				 BIT(SMR_TM_DRIVE_MB) | BIT(SMR_TM_START_MB) | \
				 BIT(SMR_TM_BUFFER) | BIT(SMR_TM_QDEPTH) | \
				 BIT(SMR_TM_RSEGS) | BIT(SMR_TM_AHEAD))
/* The keys a model takes: all of them, or all but the cache position. */
#define SMR_TM_KEYS_ALL		(BIT(SMR_TM_NR_KEYS) - 1)
#define SMR_TM_KEYS_NO_CACHE	(SMR_TM_KEYS_ALL & ~BIT(SMR_TM_CACHE_AT))

struct smr_tm_params {
	u32 v[SMR_TM_NR_KEYS];
	unsigned int given;	/* bit per key given; 0: no timing group */
};

struct smr_tm_stats {
	u64 busy_ns;		/* modelled service time, all I/O */
	u64 lag_ns;		/* how far backing completions came after the
				   modelled ends, summed */
	u64 late;		/* I/Os whose backing completion came late */
	u64 ios;		/* I/Os charged */
	u64 reordered;		/* queued I/Os served before an older one */
	u64 forced;		/* served first because queue_depth later
				   ones had overtaken it */
};

/*
 * The write cache's contents, as few segments: each the bytes of one or
 * more host writes whose destage ends at @end (the newest write's). A
 * segment takes writes until it holds an eighth of the cache; the cache
 * holds at most its size (plus the writes waiting for room), so 16
 * segments are enough, and with all in use the newest takes the rest.
 */
#define SMR_TM_WC_SEGS		16
struct smr_tm_wc_seg {
	u64 end;
	u64 bytes;
};

/*
 * A segment of the read cache: what one read from the media left in the
 * drive's buffer, [start, ready) at @since, and, while @reading, the
 * look-ahead that goes on filling it at the media rate up to @stop while
 * the actuator has nothing else to do. @used orders the segments for
 * reuse (least recently used first); 0 is a free one.
 */
struct smr_tm_rseg {
	sector_t start, ready, stop;
	u64 since;
	u64 used;
	bool reading;
};

struct smr_tm {
	struct smr_tm_params p;
	sector_t span;		/* platter sectors: the whole drive */
	sector_t base;		/* the device's first sector on it */
	/* Derived at creation, in ns. */
	u64 t2t_ns, a_ns, b_ns;	/* seek(d) = t2t + a sqrt(d) + b d, d in [0, 1] */
	u64 half_rev_ns;
	u64 overhead_ns;
	u32 od_kbps, id_kbps;	/* kB/s */

	spinlock_t lock;	/* taken from completions: irqsave */
	u64 busy_until;		/* ktime_get_ns() at which the actuator is free */
	sector_t head;		/* where the last I/O ended */
	bool quiet;		/* suspending: nothing waits for the model */
	struct list_head armed;	/* smr_tm_bio timers pending, under lock */
	/*
	 * The volatile write cache (wc_cap 0: none), under lock: a ring of
	 * segments, oldest at wc_head, in destage order; full, the newest
	 * takes the next write in.
	 */
	u64 wc_cap;		/* bytes */
	u64 wc_bytes;		/* in the ring */
	u64 link_until;		/* the host interface is busy until */
	unsigned int wc_head, wc_nr;
	struct smr_tm_wc_seg wc[SMR_TM_WC_SEGS];
	/*
	 * Command queueing (qd 0: none), under lock: host I/O not served
	 * yet, in arrival order; the actuator's timer fires at the end of
	 * each service and serves the next (act_armed while it is set).
	 */
	unsigned int qd;
	struct list_head queue;
	struct hrtimer act;
	bool act_armed;
	/*
	 * The read cache (nr_rsegs 0: none), under lock: host reads from
	 * the media each fill a segment; at most one segment reads ahead,
	 * rc_reading (NULL: none), and it stops when the actuator takes
	 * other work, where the head then is.
	 */
	unsigned int nr_rsegs;
	sector_t ahead;		/* read_ahead_kib, in sectors */
	u64 rc_clock;		/* the last segment's @used */
	struct smr_tm_rseg *rc_reading;
	struct smr_tm_rseg *rsegs;
	wait_queue_head_t quiet_wait;	/* smr_tm_wait() sleepers */
	struct smr_tm_stats st;
};

/*
 * Per bio that the model delays: in the target's per-bio data. Set by
 * smr_tm_charge_bio() (or by the caller: @end from smr_tm_charge()).
 */
struct smr_tm_bio {
	struct hrtimer timer;
	struct list_head node;	/* in tm->armed while the timer is */
	enum hrtimer_restart (*fn)(struct hrtimer *);	/* what it calls */
	struct smr_tm *tm;
	struct bio *bio;
	u64 end;		/* modelled completion, ktime_get_ns() */
	/* Command queueing (smr_tm_host()), under tm->lock. */
	struct list_head qnode;	/* in tm->queue while queued */
	sector_t pos;
	sector_t nsect;
	u64 qend;		/* the end of its service, once served */
	unsigned int overtaken;	/* by later requests, while queued */
	bool read;		/* a read: the read cache may keep it */
	bool queued;		/* waiting for the actuator: no end yet */
	bool waiting;		/* its I/O is done: fn runs at its end */
	bool charged;		/* handed to the model (smr_tm_host()) */
};

/* A bio's smr_tm_bio, before the model sees it (from map()). */
static inline void smr_tm_bio_init(struct smr_tm_bio *tb)
{
	tb->end = 0;
	tb->qend = 0;
	tb->queued = false;
	tb->waiting = false;
	tb->charged = false;
}

/*
 * The end of a table line: if the next word of @as is "timing", read its
 * group into @p (keys outside @allowed are refused); then no word may be
 * left. Returns 0 (p->given is 0 without a group), or -EINVAL with
 * *@error set.
 */
int smr_tm_parse(struct dm_arg_set *as, unsigned int allowed,
		 struct smr_tm_params *p, char **error);

/* The word that starts a timing group on a table line. */
#define SMR_TM_GROUP "timing"

/* Is @as's next word a timing group? */
bool smr_tm_next(struct dm_arg_set *as);

/*
 * A model for a device of @len sectors: on a drive of drive_mb from
 * start_mb if the group gives them, else over [0, @len). ERR_PTR with
 * *@error set.
 */
struct smr_tm *smr_tm_create(const struct smr_tm_params *p, sector_t len,
			     char **error);
void smr_tm_destroy(struct smr_tm *tm);

/* " timing <n> <key> <value>..." for STATUSTYPE_TABLE, or nothing. */
void smr_tm_emit(const struct smr_tm_params *p, char *result,
		 unsigned int maxlen, unsigned int *sz);

/* The parameters of @tm, or NULL without a model (for smr_tm_emit()). */
static inline const struct smr_tm_params *smr_tm_params_of(struct smr_tm *tm)
{
	return tm ? &tm->p : NULL;
}

/* The platter position of the device's sector @s. */
static inline sector_t smr_tm_pos(struct smr_tm *tm, sector_t s)
{
	return tm->base + s;
}

/*
 * Charge an I/O of @nsect sectors at platter sector @pos: returns its
 * modelled end (ktime_get_ns()); its service time in *@svc_ns if not
 * NULL. O(read_segments), any context.
 */
u64 smr_tm_charge(struct smr_tm *tm, sector_t pos, sector_t nsect,
		  u64 *svc_ns);

/*
 * Charge a host I/O of @nsect at @pos with the flags @opf of its bio:
 * as smr_tm_charge(), but with a write cache a write (not FUA) is
 * acknowledged from the cache: returns when (ktime_get_ns()) the host
 * sees it end; with a read cache a read it holds is answered from it.
 * O(SMR_TM_WC_SEGS + read_segments), any context.
 */
u64 smr_tm_charge_host(struct smr_tm *tm, sector_t pos, sector_t nsect,
		       blk_opf_t opf);

/*
 * A host I/O of @nsect at @pos, whose completion will wait for the model
 * through @tb (smr_tm_end_bio() / smr_tm_defer()): without queueing,
 * charged now (tb->end from smr_tm_charge_host()); with it, queued for
 * the actuator unless it is a write the write cache takes or a read the
 * read cache answers. O(queue_depth + read_segments)
 * under the lock, any context.
 */
void smr_tm_host(struct smr_tm *tm, struct smr_tm_bio *tb, sector_t pos,
		 sector_t nsect, blk_opf_t opf);

/*
 * @tb's bio ends without waiting for the model (an error): take it off
 * the queue. Every path that ends a bio given to smr_tm_host() other
 * than through smr_tm_end_bio() / smr_tm_defer() calls this first.
 */
void smr_tm_cancel(struct smr_tm *tm, struct smr_tm_bio *tb);

/*
 * When the write cache's contents are destaged (ktime_get_ns()), for a
 * flush to wait for; 0 when it holds nothing (or there is none).
 */
u64 smr_tm_flush_end(struct smr_tm *tm);

/* The modelled end of everything charged so far. */
u64 smr_tm_busy_until(struct smr_tm *tm);

/*
 * End @bio (whose I/O is done) at tb->end: now if that has passed or the
 * model is quiet, else from a timer. Any context.
 */
void smr_tm_end_bio(struct smr_tm *tm, struct smr_tm_bio *tb,
		    struct bio *bio);

/*
 * A target's host bio whose I/O is done, with or without a model (@tm
 * NULL): a success ends at its modelled end, a failure now, off the
 * model's queue. Any context.
 */
static inline void smr_tm_bio_done(struct smr_tm *tm, struct smr_tm_bio *tb,
				   struct bio *bio)
{
	if (tm && !bio->bi_status) {
		smr_tm_end_bio(tm, tb, bio);
		return;
	}
	if (tm)
		smr_tm_cancel(tm, tb);
	bio_endio(bio);
}

/*
 * A completion that is not a bio's end (host-managed mode finishes its
 * own I/O records): if tb->end is still ahead and the model is not
 * quiet, start tb's timer to call @fn at tb->end and return true; else
 * return false and the caller completes now. Any context.
 */
bool smr_tm_defer(struct smr_tm *tm, struct smr_tm_bio *tb,
		  enum hrtimer_restart (*fn)(struct hrtimer *));

/*
 * Send @bio to @sector of @bdev through a clone from @bs, charged at
 * platter sector @pos; @bio ends at the modelled end (tb is its per-bio
 * data). For a dm target's bio, from map() or a worker; may sleep in the
 * bioset only, for one of our clones in flight to come back.
 */
void smr_tm_submit(struct smr_tm *tm, struct smr_tm_bio *tb, struct bio *bio,
		   struct bio_set *bs, struct block_device *bdev,
		   sector_t sector, sector_t pos);

/*
 * The drive's own work: sleep until @end, the modelled end of a step
 * whose I/O is done. Bounded by that step's service time; returns at once
 * when the model is quiet. Process context.
 */
void smr_tm_wait(struct smr_tm *tm, u64 end);

/*
 * Suspending (on): from now nothing waits for the model; pending timers
 * are cancelled and their completions run now, sleepers in smr_tm_wait()
 * wake. Live again (off): the backlog charged meanwhile is dropped, so
 * the first I/O after a resume does not wait for time nobody waited (the
 * write cache's contents with it).
 * Process context.
 */
void smr_tm_set_quiet(struct smr_tm *tm, bool quiet);
/*
 * smr_tm_set_quiet(@tm, false), which sleeps nowhere: any context, and a
 * callback's signature (smr_power_if_on()).
 */
void smr_tm_wake(void *tm);
/*
 * The part of smr_tm_set_quiet(tm, true) that may run in any context:
 * nothing new waits for modelled time and smr_tm_wait() sleepers wake.
 * smr_tm_set_quiet() must follow, in process context, to end what the
 * model holds queued or on timers.
 */
void smr_tm_quiet_now(struct smr_tm *tm);

void smr_tm_get_stats(struct smr_tm *tm, struct smr_tm_stats *st);
void smr_tm_clear_stats(struct smr_tm *tm);

#endif /* SMR_TIMING_H */
