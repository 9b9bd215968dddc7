// SPDX-License-Identifier: GPL-2.0
/*
 * The timing model: see smr-timing.h and docs/timing.md. Part of the
 * library module smr-common.
 *
 * The seek curve. A data sheet gives three seek times: track-to-track
 * (t2t), average (avg) and full stroke (full). The model uses
 *
 *   seek(d) = t2t + a sqrt(d) + b d,   d = distance / span in (0, 1]
 *
 * the square root for the accelerate/decelerate phase of short seeks and
 * the linear term for the coast of long ones. seek(1) = full gives
 * a + b = full - t2t. Over random pairs of positions d has density
 * 2 (1 - d), so E[sqrt(d)] = 8/15 and E[d] = 1/3, and E[seek] = avg gives
 * (8/15) a + (1/3) b = avg - t2t. Hence, with F = full - t2t and
 * V = avg - t2t:
 *
 *   a = 5 V - 5 F / 3,   b = F - a
 *
 * Both are >= 0 when F / 3 <= V <= 8 F / 15; other figures are refused
 * (the curve cannot have that average with those ends).
 */
#include <linux/bio.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "smr-args.h"
#include "smr-compat.h"
#include "smr-timing.h"
#include "smr-timing-buffer.h"

/* Positions are shifted by that much: the span must stay below 2^43. */
#define SMR_TM_MAX_SPAN		(1ULL << 43)

/*
 * Each key's name, printed back in table lines, and the name it had
 * before, if any, which a table line may still give.
 */
static const struct {
	const char *name;
	const char *old_name;
	u32 min, max;
} smr_tm_keys[SMR_TM_NR_KEYS] = {
	[SMR_TM_RPM] = { .name = "rpm", .min = 1000, .max = 30000 },
	[SMR_TM_T2T] = { .name = "seek_t2t_us", .min = 0, .max = 100000 },
	[SMR_TM_AVG] = { .name = "seek_avg_us", .min = 1, .max = 100000 },
	[SMR_TM_FULL] = { .name = "seek_full_us", .min = 1, .max = 200000 },
	[SMR_TM_OD] = { .name = "od_mbps", .min = 1, .max = 100000 },
	[SMR_TM_ID] = { .name = "id_mbps", .min = 1, .max = 100000 },
	[SMR_TM_OVERHEAD] = { .name = "overhead_us", .min = 0, .max = 100000 },
	[SMR_TM_CACHE_AT] = { .name = "cache_at", .min = 0, .max = 1000 },
	/* Decimal MB: up to 4.29 PB, so the span stays below 2^43. */
	[SMR_TM_DRIVE_MB] = { .name = "drive_mb", .min = 1, .max = U32_MAX },
	[SMR_TM_START_MB] = { .name = "start_mb", .min = 0, .max = U32_MAX },
	/*
	 * Drives have 16 MiB to 1 GiB of DRAM; 0 is none. Named apart from
	 * the targets' data cache (write_cache_kib): this one is only time.
	 */
	[SMR_TM_BUFFER] = { .name = "buffer_mib", .old_name = "wcache_mib",
			     .min = 0, .max = 4096 },
	/* SATA NCQ takes 32 commands; 0 is no queue (arrival order). */
	[SMR_TM_QDEPTH] = { .name = "queue_depth", .min = 0, .max = 32 },
	/*
	 * Desktop drives keep 16-32 segments and read ahead up to a few MiB;
	 * the bounds keep a lookup short under the lock (as queue_depth's).
	 */
	[SMR_TM_RSEGS] = { .name = "read_segments", .min = 0, .max = 32 },
	[SMR_TM_AHEAD] = { .name = "read_ahead_kib", .min = 0, .max = 16384 },
};


/* Decimal MB to sectors, rounded down. */
static sector_t smr_tm_mb(u32 mb)
{
	return div_u64((u64)mb * 1000000, SECTOR_SIZE);
}

bool smr_tm_next(struct dm_arg_set *as)
{
	return smr_args_next_is(as, SMR_TM_GROUP);
}
EXPORT_SYMBOL_GPL(smr_tm_next);

int smr_tm_parse(struct dm_arg_set *as, unsigned int allowed,
		 struct smr_tm_params *p, char **error)
{
	static const struct dm_arg count = {
		2, 2 * SMR_TM_NR_KEYS,
		"timing: invalid number of words (2 per key, each key at most once)"
	};
	unsigned int argc, i, need;
	const char *name;
	u64 v;
	int ret;

	memset(p, 0, sizeof(*p));
	if (!smr_tm_next(as))
		goto end;
	dm_consume_args(as, 1);
	ret = dm_read_arg_group(&count, as, &argc, error);
	if (ret)
		return ret;
	if (argc & 1) {
		*error = "timing: every key needs a value";
		return -EINVAL;
	}
	for (; argc; argc -= 2) {
		name = dm_shift_arg(as);
		for (i = 0; i < SMR_TM_NR_KEYS; i++)
			if (!strcasecmp(name, smr_tm_keys[i].name) ||
			    (smr_tm_keys[i].old_name &&
			     !strcasecmp(name, smr_tm_keys[i].old_name)))
				break;
		if (i == SMR_TM_NR_KEYS || !(allowed & BIT(i))) {
			*error = i == SMR_TM_NR_KEYS ? "timing: unknown key" :
				"timing: key not used by this model";
			return -EINVAL;
		}
		if (p->given & BIT(i)) {
			*error = "timing: key given twice";
			return -EINVAL;
		}
		if (smr_parse_u64(dm_shift_arg(as), &v) ||
		    v < smr_tm_keys[i].min || v > smr_tm_keys[i].max) {
			*error = "timing: value out of range (docs/timing.md gives each key's range)";
			return -EINVAL;
		}
		p->v[i] = v;
		p->given |= BIT(i);
	}
	need = allowed & ~SMR_TM_OPTIONAL;
	if ((p->given & need) != need) {
		*error = "timing: rpm, seek_t2t_us, seek_avg_us, seek_full_us, od_mbps and id_mbps are required";
		return -EINVAL;
	}
	if (p->v[SMR_TM_ID] > p->v[SMR_TM_OD]) {
		*error = "timing: id_mbps must not exceed od_mbps";
		return -EINVAL;
	}
	if (p->v[SMR_TM_T2T] > p->v[SMR_TM_AVG] ||
	    p->v[SMR_TM_AVG] > p->v[SMR_TM_FULL]) {
		*error = "timing: seeks must satisfy seek_t2t_us <= seek_avg_us <= seek_full_us";
		return -EINVAL;
	}
	if (p->v[SMR_TM_AHEAD] && !p->v[SMR_TM_RSEGS]) {
		*error = "timing: read_ahead_kib reads into the read cache: give read_segments too";
		return -EINVAL;
	}
	if ((p->given & BIT(SMR_TM_START_MB)) && !(p->given & BIT(SMR_TM_DRIVE_MB))) {
		*error = "timing: start_mb places the device on a drive: give drive_mb too";
		return -EINVAL;
	}
end:
	if (as->argc) {
		*error = "Too many arguments";
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(smr_tm_parse);

static enum hrtimer_restart smr_tm_act_fire(struct hrtimer *t);

struct smr_tm *smr_tm_create(const struct smr_tm_params *p, sector_t len,
			     char **error)
{
	sector_t span = len, base = 0;
	u64 f = (u64)(p->v[SMR_TM_FULL] - p->v[SMR_TM_T2T]) * NSEC_PER_USEC;
	u64 v = (u64)(p->v[SMR_TM_AVG] - p->v[SMR_TM_T2T]) * NSEC_PER_USEC;
	struct smr_tm *tm;

	/* F / 3 <= V <= 8 F / 15, in integers: 5 F <= 15 V <= 8 F. */
	if (5 * f > 15 * v || 15 * v > 8 * f) {
		*error = "timing: seek_avg_us must lie from t2t + (full - t2t) / 3 to t2t + 8 (full - t2t) / 15 (docs/timing.md, the seek curve)";
		return ERR_PTR(-EINVAL);
	}
	if (p->given & BIT(SMR_TM_DRIVE_MB)) {
		span = smr_tm_mb(p->v[SMR_TM_DRIVE_MB]);
		base = smr_tm_mb(p->v[SMR_TM_START_MB]);
		/* @len is the table's: compare without adding it. */
		if (len > span || base > span - len) {
			*error = "timing: the device does not fit on the drive: start_mb plus the device's length exceeds drive_mb";
			return ERR_PTR(-EINVAL);
		}
	}
	if (!len || span >= SMR_TM_MAX_SPAN) {
		*error = "timing: the device must be smaller than 4 PiB";
		return ERR_PTR(-EINVAL);
	}
	tm = kzalloc(sizeof(*tm), GFP_KERNEL);
	if (!tm) {
		*error = "timing: cannot allocate the model";
		return ERR_PTR(-ENOMEM);
	}
	tm->p = *p;
	tm->span = span;
	tm->base = base;
	tm->t2t_ns = (u64)p->v[SMR_TM_T2T] * NSEC_PER_USEC;
	tm->a_ns = div_u64(15 * v - 5 * f, 3);
	tm->b_ns = f - tm->a_ns;
	tm->half_rev_ns = div_u64(30ULL * NSEC_PER_SEC, p->v[SMR_TM_RPM]);
	tm->overhead_ns = (u64)p->v[SMR_TM_OVERHEAD] * NSEC_PER_USEC;
	tm->od_kbps = p->v[SMR_TM_OD] * 1000;
	tm->id_kbps = p->v[SMR_TM_ID] * 1000;
	tm->wc_cap = (u64)p->v[SMR_TM_BUFFER] << 20;
	tm->qd = p->v[SMR_TM_QDEPTH];
	tm->nr_rsegs = p->v[SMR_TM_RSEGS];
	tm->ahead = (sector_t)p->v[SMR_TM_AHEAD] << (10 - SECTOR_SHIFT);
	if (tm->nr_rsegs) {
		tm->rsegs = kcalloc(tm->nr_rsegs, sizeof(*tm->rsegs), GFP_KERNEL);
		if (!tm->rsegs) {
			kfree(tm);
			*error = "timing: cannot allocate the read cache";
			return ERR_PTR(-ENOMEM);
		}
	}
	spin_lock_init(&tm->lock);
	INIT_LIST_HEAD(&tm->armed);
	INIT_LIST_HEAD(&tm->queue);
	smr_hrtimer_setup(&tm->act, smr_tm_act_fire, CLOCK_MONOTONIC,
			  HRTIMER_MODE_ABS_SOFT);
	init_waitqueue_head(&tm->quiet_wait);
	tm->busy_until = ktime_get_ns();
	return tm;
}
EXPORT_SYMBOL_GPL(smr_tm_create);

void smr_tm_destroy(struct smr_tm *tm)
{
	if (!tm)
		return;
	/*
	 * Nothing is queued or armed: a table quiets its model at presuspend,
	 * and a zoned device that never had a live table waited for its
	 * last I/O (smr_zdev_put()). So nothing re-arms the actuator.
	 */
	WARN_ON_ONCE(!list_empty(&tm->queue) || !list_empty(&tm->armed));
	hrtimer_cancel(&tm->act);
	kfree(tm->rsegs);
	kfree(tm);
}
EXPORT_SYMBOL_GPL(smr_tm_destroy);

void smr_tm_emit(const struct smr_tm_params *p, char *result,
		 unsigned int maxlen, unsigned int *psz)
{
	unsigned int sz = *psz, i;

	if (!p || !p->given)
		return;
	DMEMIT(" timing %u", 2 * hweight32(p->given));
	for (i = 0; i < SMR_TM_NR_KEYS; i++)
		if (p->given & BIT(i))
			DMEMIT(" %s %u", smr_tm_keys[i].name, p->v[i]);
	*psz = sz;
}
EXPORT_SYMBOL_GPL(smr_tm_emit);

/* Service time of @nsect at @pos with the head at @head (pure). */
static u64 smr_tm_service(struct smr_tm *tm, sector_t head, sector_t pos,
			  sector_t nsect)
{
	u64 t = tm->overhead_ns, d;

	if (pos != head) {
		d = smr_tm_frac(tm, pos > head ? pos - head : head - pos);
		t += tm->t2t_ns + tm->half_rev_ns +
			((tm->a_ns * int_sqrt64(d << SMR_TM_FRAC_SHIFT)) >>
			 SMR_TM_FRAC_SHIFT) +
			((tm->b_ns * d) >> SMR_TM_FRAC_SHIFT);
	}
	return t + smr_tm_xfer_ns(nsect, smr_tm_kbps(tm, pos));
}

/* Charge under tm->lock at @now: the actuator's end of the I/O. */
static u64 smr_tm_charge_locked(struct smr_tm *tm, u64 now, sector_t pos,
				sector_t nsect, u64 *svc_ns)
{
	u64 start = max(now, tm->busy_until), svc, end;

	if (tm->nr_rsegs) {
		/* A hit waiting for the look-ahead holds the actuator until then. */
		if (tm->rc_reading)
			start = max(start, tm->rc_reading->since);
		smr_tm_rc_take(tm, start, pos, nsect);
	}
	svc = smr_tm_service(tm, tm->head, pos, nsect);
	end = start + svc;
	tm->busy_until = end;
	tm->head = pos + nsect;
	tm->st.busy_ns += svc;
	tm->st.ios++;
	if (svc_ns)
		*svc_ns = svc;
	return end;
}

u64 smr_tm_charge(struct smr_tm *tm, sector_t pos, sector_t nsect,
		  u64 *svc_ns)
{
	u64 now = ktime_get_ns(), end;
	unsigned long flags;

	spin_lock_irqsave(&tm->lock, flags);
	end = smr_tm_charge_locked(tm, now, pos, nsect, svc_ns);
	spin_unlock_irqrestore(&tm->lock, flags);
	return end;
}
EXPORT_SYMBOL_GPL(smr_tm_charge);

/*
 * Under tm->lock, with a read cache: a host read at @now, answered from
 * the cache when it holds it (*@hit), else from the media, filling a
 * segment. Its end.
 */
static u64 smr_tm_read_locked(struct smr_tm *tm, u64 now, sector_t pos,
			      sector_t nsect, bool *hit)
{
	u64 end = smr_tm_rc_hit(tm, now, pos, nsect);

	*hit = end != 0;
	if (!end) {
		end = smr_tm_charge_locked(tm, now, pos, nsect, NULL);
		smr_tm_rc_fill(tm, end, pos, nsect);
	}
	return end;
}

u64 smr_tm_charge_host(struct smr_tm *tm, sector_t pos, sector_t nsect,
		       blk_opf_t opf)
{
	u64 now = ktime_get_ns(), bytes = (u64)nsect * SECTOR_SIZE;
	u64 end, ack, room;
	unsigned long flags;

	bool hit;

	spin_lock_irqsave(&tm->lock, flags);
	if (tm->nr_rsegs && smr_tm_is_read(opf, nsect)) {
		end = smr_tm_read_locked(tm, now, pos, nsect, &hit);
		spin_unlock_irqrestore(&tm->lock, flags);
		return end;
	}
	end = smr_tm_charge_locked(tm, now, pos, nsect, NULL);
	if (!tm->wc_cap || !op_is_write(opf) || (opf & REQ_FUA) ||
	    !bytes || bytes > tm->wc_cap) {
		spin_unlock_irqrestore(&tm->lock, flags);
		return end;
	}
	/*
	 * Acknowledged once the cache has room for it and the interface has
	 * carried it; destaged at @end (never acknowledged after that).
	 */
	smr_tm_wc_drain(tm, now);
	room = now;
	if (tm->wc_bytes + bytes > tm->wc_cap)
		room = max(room, smr_tm_wc_room(tm, tm->wc_bytes + bytes -
						 tm->wc_cap));
	ack = smr_tm_link_end(tm, room, nsect);
	tm->link_until = ack;
	smr_tm_wc_add(tm, end, bytes);
	spin_unlock_irqrestore(&tm->lock, flags);
	return min(ack, end);
}
EXPORT_SYMBOL_GPL(smr_tm_charge_host);

u64 smr_tm_flush_end(struct smr_tm *tm)
{
	unsigned long flags;
	u64 t = 0;

	spin_lock_irqsave(&tm->lock, flags);
	smr_tm_wc_drain(tm, ktime_get_ns());
	if (tm->wc_nr)
		t = tm->wc[(tm->wc_head + tm->wc_nr - 1) % SMR_TM_WC_SEGS].end;
	spin_unlock_irqrestore(&tm->lock, flags);
	return t;
}
EXPORT_SYMBOL_GPL(smr_tm_flush_end);

u64 smr_tm_busy_until(struct smr_tm *tm)
{
	unsigned long flags;
	u64 t;

	spin_lock_irqsave(&tm->lock, flags);
	t = tm->busy_until;
	spin_unlock_irqrestore(&tm->lock, flags);
	return t;
}
EXPORT_SYMBOL_GPL(smr_tm_busy_until);

/* The backing finished @now, after the modelled @end. */
static void smr_tm_late(struct smr_tm *tm, u64 now, u64 end)
{
	unsigned long flags;

	spin_lock_irqsave(&tm->lock, flags);
	tm->st.late++;
	tm->st.lag_ns += now - end;
	spin_unlock_irqrestore(&tm->lock, flags);
}

static enum hrtimer_restart smr_tm_fire(struct hrtimer *t)
{
	struct smr_tm_bio *tb = container_of(t, struct smr_tm_bio, timer);

	/* The bio, and tb with it (its per-bio data), may be gone after. */
	bio_endio(tb->bio);
	return HRTIMER_NORESTART;
}

/* Every armed timer runs this: off the armed list, then its job. */
static enum hrtimer_restart smr_tm_timer(struct hrtimer *t)
{
	struct smr_tm_bio *tb = container_of(t, struct smr_tm_bio, timer);
	enum hrtimer_restart (*fn)(struct hrtimer *) = tb->fn;
	struct smr_tm *tm = tb->tm;
	unsigned long flags;

	spin_lock_irqsave(&tm->lock, flags);
	list_del_init(&tb->node);	/* empty already if quiet took it */
	spin_unlock_irqrestore(&tm->lock, flags);
	return fn(t);
}

/*
 * Under tm->lock: tb's completion @fn at @end. Armed and listed together:
 * smr_tm_set_quiet() sees both.
 */
static void smr_tm_arm(struct smr_tm *tm, struct smr_tm_bio *tb, u64 end)
{
	tb->end = end;
	list_add_tail(&tb->node, &tm->armed);
	smr_hrtimer_setup(&tb->timer, smr_tm_timer, CLOCK_MONOTONIC,
			  HRTIMER_MODE_ABS_SOFT);
	hrtimer_start(&tb->timer, ns_to_ktime(end), HRTIMER_MODE_ABS_SOFT);
}

bool smr_tm_defer(struct smr_tm *tm, struct smr_tm_bio *tb,
		  enum hrtimer_restart (*fn)(struct hrtimer *))
{
	u64 now = ktime_get_ns(), end;
	unsigned long flags;

	spin_lock_irqsave(&tm->lock, flags);
	if (tb->queued) {
		/* Not served yet: smr_tm_dispatch() arms it at its end. */
		tb->tm = tm;
		tb->fn = fn;
		tb->waiting = true;
		spin_unlock_irqrestore(&tm->lock, flags);
		return true;
	}
	end = max(tb->end, tb->qend);
	if (now < end && !tm->quiet) {
		tb->tm = tm;
		tb->fn = fn;
		smr_tm_arm(tm, tb, end);
		spin_unlock_irqrestore(&tm->lock, flags);
		return true;
	}
	spin_unlock_irqrestore(&tm->lock, flags);
	if (end && now > end)
		smr_tm_late(tm, now, end);
	return false;
}
EXPORT_SYMBOL_GPL(smr_tm_defer);

/*
 * Under tm->lock, the actuator idle: serve the next queued request. The
 * candidates are the oldest tm->qd; the one whose service (positioning
 * and transfer from where the head is) is shortest goes first, and each
 * older candidate it passes counts one more overtaking. A request
 * overtaken tm->qd times goes first instead: the oldest is always the
 * most overtaken (every request that passed a younger one passed it
 * too), so that is the oldest. Hence no request is served after more
 * than qd requests that came after it: a request with k queued before
 * it is served within k + qd + 1 services. O(qd).
 */
static void smr_tm_dispatch(struct smr_tm *tm, u64 now)
{
	struct smr_tm_bio *tb, *best, *oldest;
	unsigned int i = 0;
	u64 t, bt = U64_MAX, end, act;
	bool hit;

	oldest = list_first_entry_or_null(&tm->queue, struct smr_tm_bio, qnode);
	if (!oldest)
		return;
	best = oldest;
	if (oldest->overtaken >= tm->qd) {
		tm->st.forced++;
	} else {
		list_for_each_entry(tb, &tm->queue, qnode) {
			if (i++ == tm->qd)
				break;
			t = smr_tm_service(tm, tm->head, tb->pos, tb->nsect);
			if (t < bt) {
				bt = t;
				best = tb;
			}
		}
		if (best != oldest) {
			tm->st.reordered++;
			list_for_each_entry(tb, &tm->queue, qnode) {
				if (tb == best)
					break;
				tb->overtaken++;
			}
		}
	}
	list_del_init(&best->qnode);
	best->queued = false;
	/*
	 * A read the read cache holds by now (a segment filled while it
	 * waited) is answered from it, and the actuator, still free, takes
	 * the next request at once: one per timer run, not a loop here.
	 */
	if (tm->nr_rsegs && best->read) {
		end = smr_tm_read_locked(tm, now, best->pos, best->nsect, &hit);
		act = hit ? now : end;
	} else {
		end = act = smr_tm_charge_locked(tm, now, best->pos,
						 best->nsect, NULL);
	}
	best->qend = end;
	if (best->waiting)
		smr_tm_arm(tm, best, max(best->end, end));
	tm->act_armed = true;
	hrtimer_start(&tm->act, ns_to_ktime(act), HRTIMER_MODE_ABS_SOFT);
}

/* The end of a service: the actuator takes the next queued request. */
static enum hrtimer_restart smr_tm_act_fire(struct hrtimer *t)
{
	struct smr_tm *tm = container_of(t, struct smr_tm, act);
	unsigned long flags;

	spin_lock_irqsave(&tm->lock, flags);
	tm->act_armed = false;
	/*
	 * Quiet: smr_tm_set_quiet() empties the queue. The next service
	 * starts when this one ended in the model, not when the timer ran:
	 * a softirq that runs late must not add its latency to every
	 * service of a deep queue (the lateness shows in model_lag_ms).
	 */
	if (!tm->quiet)
		smr_tm_dispatch(tm, min_t(u64, ktime_get_ns(),
					  ktime_to_ns(hrtimer_get_expires(t))));
	spin_unlock_irqrestore(&tm->lock, flags);
	return HRTIMER_NORESTART;
}

void smr_tm_host(struct smr_tm *tm, struct smr_tm_bio *tb, sector_t pos,
		 sector_t nsect, blk_opf_t opf)
{
	unsigned long flags;

	tb->tm = tm;
	tb->charged = true;
	/*
	 * No queue; or a write the cache takes now, destaged in order (one
	 * larger than the whole cache is not cached: it queues).
	 */
	if (!tm->qd || (tm->wc_cap && op_is_write(opf) && !(opf & REQ_FUA) &&
			(u64)nsect * SECTOR_SIZE <= tm->wc_cap)) {
		tb->end = smr_tm_charge_host(tm, pos, nsect, opf);
		return;
	}
	spin_lock_irqsave(&tm->lock, flags);
	if (tm->quiet) {
		/* Nothing waits for the model while suspending. */
		tb->end = smr_tm_charge_locked(tm, ktime_get_ns(), pos, nsect,
					       NULL);
		spin_unlock_irqrestore(&tm->lock, flags);
		return;
	}
	tb->read = smr_tm_is_read(opf, nsect);
	if (tm->nr_rsegs && tb->read && list_empty(&tm->queue)) {
		/*
		 * A read the read cache holds needs no place in the queue.
		 * Only with nothing queued: a read must not overtake a queued
		 * write of its sectors (it is looked up again when served).
		 */
		tb->end = smr_tm_rc_hit(tm, ktime_get_ns(), pos, nsect);
		if (tb->end) {
			spin_unlock_irqrestore(&tm->lock, flags);
			return;
		}
	}
	tb->pos = pos;
	tb->nsect = nsect;
	tb->qend = 0;
	tb->overtaken = 0;
	tb->waiting = false;
	tb->queued = true;
	list_add_tail(&tb->qnode, &tm->queue);
	if (!tm->act_armed)
		smr_tm_dispatch(tm, ktime_get_ns());
	spin_unlock_irqrestore(&tm->lock, flags);
}
EXPORT_SYMBOL_GPL(smr_tm_host);

void smr_tm_cancel(struct smr_tm *tm, struct smr_tm_bio *tb)
{
	unsigned long flags;

	if (!tm->qd)
		return;
	spin_lock_irqsave(&tm->lock, flags);
	if (tb->queued) {
		list_del_init(&tb->qnode);
		tb->queued = false;
	}
	spin_unlock_irqrestore(&tm->lock, flags);
}
EXPORT_SYMBOL_GPL(smr_tm_cancel);

void smr_tm_end_bio(struct smr_tm *tm, struct smr_tm_bio *tb,
		    struct bio *bio)
{
	tb->bio = bio;
	if (!smr_tm_defer(tm, tb, smr_tm_fire))
		bio_endio(bio);
}
EXPORT_SYMBOL_GPL(smr_tm_end_bio);

static void smr_tm_clone_endio(struct bio *clone)
{
	struct smr_tm_bio *tb = clone->bi_private;
	struct bio *bio = tb->bio;
	blk_status_t sts = clone->bi_status;

	bio_put(clone);
	if (sts) {
		/* A failure is not the drive's time: it ends now. */
		smr_tm_cancel(tb->tm, tb);
		bio->bi_status = sts;
		bio_endio(bio);
		return;
	}
	smr_tm_end_bio(tb->tm, tb, bio);
}

void smr_tm_submit(struct smr_tm *tm, struct smr_tm_bio *tb, struct bio *bio,
		   struct bio_set *bs, struct block_device *bdev,
		   sector_t sector, sector_t pos)
{
	struct bio *clone = bio_alloc_clone(bdev, bio, GFP_NOIO, bs);

	tb->bio = bio;
	smr_tm_host(tm, tb, pos, bio_sectors(bio), bio->bi_opf);
	clone->bi_iter.bi_sector = sector;
	/* dm polls only the bios it submits itself (see smr_dm_submit_cache()). */
	bio_clear_polled(clone);
	clone->bi_private = tb;
	clone->bi_end_io = smr_tm_clone_endio;
	dm_submit_bio_remap(bio, clone);
}
EXPORT_SYMBOL_GPL(smr_tm_submit);

void smr_tm_wait(struct smr_tm *tm, u64 end)
{
	u64 now = ktime_get_ns();

	if (now >= end) {
		if (now > end)
			smr_tm_late(tm, now, end);
		return;
	}
	/*
	 * Until @end, or until suspending makes the model quiet. TASK_IDLE:
	 * a flush behind a large write cache of scattered writes may wait
	 * minutes of modelled destage, as on a real drive; that is neither
	 * load nor a hung task.
	 */
	might_sleep();
	if (!READ_ONCE(tm->quiet))
		__wait_event_hrtimeout(tm->quiet_wait, READ_ONCE(tm->quiet),
				       ns_to_ktime(end - now), TASK_IDLE);
}
EXPORT_SYMBOL_GPL(smr_tm_wait);

void smr_tm_quiet_now(struct smr_tm *tm)
{
	unsigned long flags;

	spin_lock_irqsave(&tm->lock, flags);
	WRITE_ONCE(tm->quiet, true);
	spin_unlock_irqrestore(&tm->lock, flags);
	wake_up_all(&tm->quiet_wait);
}
EXPORT_SYMBOL_GPL(smr_tm_quiet_now);

void smr_tm_set_quiet(struct smr_tm *tm, bool quiet)
{
	struct smr_tm_bio *tb;
	unsigned long flags;
	u64 now;

	spin_lock_irqsave(&tm->lock, flags);
	WRITE_ONCE(tm->quiet, quiet);
	if (!quiet) {
		now = ktime_get_ns();
		tm->busy_until = min(tm->busy_until, now);
		tm->link_until = min(tm->link_until, now);
		tm->wc_head = 0;
		tm->wc_nr = 0;
		tm->wc_bytes = 0;
		/* The read cache too: its look-ahead's times are stale. */
		smr_tm_rc_empty(tm);
		spin_unlock_irqrestore(&tm->lock, flags);
		return;
	}
	spin_unlock_irqrestore(&tm->lock, flags);
	wake_up_all(&tm->quiet_wait);

	/*
	 * The queue: the actuator stops (its timer re-arms only when not
	 * quiet), then each queued request leaves, one per lock hold. One
	 * whose I/O is done completes now; the others complete when their
	 * I/O is (no end: smr_tm_defer() finds it passed).
	 */
	hrtimer_cancel(&tm->act);
	for (;;) {
		spin_lock_irqsave(&tm->lock, flags);
		tm->act_armed = false;
		tb = list_first_entry_or_null(&tm->queue, struct smr_tm_bio,
					      qnode);
		if (!tb) {
			spin_unlock_irqrestore(&tm->lock, flags);
			break;
		}
		list_del_init(&tb->qnode);
		tb->queued = false;
		if (!tb->waiting)
			tb = NULL;
		spin_unlock_irqrestore(&tm->lock, flags);
		if (tb)
			tb->fn(&tb->timer);
	}

	/*
	 * One timer per lock hold (no scan with interrupts off). Nothing is
	 * armed any more (quiet is set under the lock), so the list drains.
	 * A timer cancelled here is ours to complete; one whose callback
	 * already runs completes itself (it finds its node unlinked).
	 */
	for (;;) {
		spin_lock_irqsave(&tm->lock, flags);
		tb = list_first_entry_or_null(&tm->armed, struct smr_tm_bio,
					      node);
		if (!tb) {
			spin_unlock_irqrestore(&tm->lock, flags);
			break;
		}
		list_del_init(&tb->node);
		if (hrtimer_try_to_cancel(&tb->timer) != 1)
			tb = NULL;
		spin_unlock_irqrestore(&tm->lock, flags);
		if (tb)
			tb->fn(&tb->timer);
	}
}
EXPORT_SYMBOL_GPL(smr_tm_set_quiet);

void smr_tm_wake(void *tm)
{
	smr_tm_set_quiet(tm, false);
}
EXPORT_SYMBOL_GPL(smr_tm_wake);

void smr_tm_get_stats(struct smr_tm *tm, struct smr_tm_stats *st)
{
	unsigned long flags;

	spin_lock_irqsave(&tm->lock, flags);
	*st = tm->st;
	spin_unlock_irqrestore(&tm->lock, flags);
}
EXPORT_SYMBOL_GPL(smr_tm_get_stats);

void smr_tm_clear_stats(struct smr_tm *tm)
{
	unsigned long flags;

	spin_lock_irqsave(&tm->lock, flags);
	memset(&tm->st, 0, sizeof(tm->st));
	spin_unlock_irqrestore(&tm->lock, flags);
}
EXPORT_SYMBOL_GPL(smr_tm_clear_stats);
