// SPDX-License-Identifier: GPL-2.0
/*
 * The drive's buffer in the timing model (smr-timing-buffer.h;
 * docs/timing.md, "The volatile write cache" and "The read cache"). Part
 * of the library module smr-common. Everything here runs under tm->lock,
 * from smr-timing.c, and touches at most SMR_TM_WC_SEGS write segments
 * or read_segments (32) read segments.
 *
 * The write cache: the bytes of host writes acknowledged and not yet
 * destaged, as a ring of segments in destage order.
 *
 * The read cache: segments each what one host read from the media left
 * there, [start, ready) at @since; the newest such read's segment goes
 * on reading ahead (tm->rc_reading) at the media rate until @stop while
 * the actuator has nothing else to do.
 */
#include <linux/kernel.h>
#include <linux/minmax.h>

#include "smr-timing-buffer.h"

/* The write cache: forget the segments destaged by @now. */
void smr_tm_wc_drain(struct smr_tm *tm, u64 now)
{
	struct smr_tm_wc_seg *s;

	while (tm->wc_nr) {
		s = &tm->wc[tm->wc_head];
		if (s->end > now)
			break;
		tm->wc_bytes -= s->bytes;
		tm->wc_head = (tm->wc_head + 1) % SMR_TM_WC_SEGS;
		tm->wc_nr--;
	}
}

/*
 * When @need bytes more of the cache will have been destaged: the end of
 * the oldest segments that free them (ends rise along the ring).
 */
u64 smr_tm_wc_room(struct smr_tm *tm, u64 need)
{
	unsigned int i, k = tm->wc_head;
	u64 freed = 0, t = 0;

	for (i = 0; i < tm->wc_nr && freed < need; i++) {
		freed += tm->wc[k].bytes;
		t = tm->wc[k].end;
		k = (k + 1) % SMR_TM_WC_SEGS;
	}
	return t;
}

/*
 * Add a write of @bytes destaged at @end. The newest segment takes it
 * while it holds less than a quantum (an eighth of the cache), so that
 * room is freed in steps of about an eighth whatever the writes' size;
 * with the ring full, the newest takes it whatever it holds.
 */
void smr_tm_wc_add(struct smr_tm *tm, u64 end, u64 bytes)
{
	struct smr_tm_wc_seg *s = NULL;

	if (tm->wc_nr)
		s = &tm->wc[(tm->wc_head + tm->wc_nr - 1) % SMR_TM_WC_SEGS];
	if (!s || (s->bytes >= tm->wc_cap / 8 &&
		   tm->wc_nr < SMR_TM_WC_SEGS)) {
		s = &tm->wc[(tm->wc_head + tm->wc_nr) % SMR_TM_WC_SEGS];
		s->bytes = 0;
		tm->wc_nr++;
	}
	s->end = end;
	s->bytes += bytes;
	tm->wc_bytes += bytes;
}

/*
 * The read cache. How far segment @s holds data at @t: its look-ahead
 * reads on from @ready at the media rate there until @stop. No product
 * here exceeds (stop - ready) * 512 * 10^6: a look-ahead of 16 MiB plus
 * one bio, far below 2^64.
 */
static sector_t smr_tm_rseg_ready(struct smr_tm *tm, struct smr_tm_rseg *s,
				  u64 t)
{
	u64 kbps, dt;

	if (!s->reading || t <= s->since || s->ready >= s->stop)
		return s->ready;
	kbps = smr_tm_kbps(tm, s->ready);
	dt = t - s->since;
	if (dt >= smr_tm_xfer_ns(s->stop - s->ready, kbps))
		return s->stop;
	return s->ready + div64_u64(dt * kbps, SECTOR_SIZE * 1000000ULL);
}

/*
 * Under tm->lock: the look-ahead at @t. Stopped (the actuator takes other
 * work at @t) or run to its end by @t, the segment holds [start, ready)
 * and no more, and the head is where the look-ahead got to.
 */
static void smr_tm_rc_settle(struct smr_tm *tm, u64 t, bool stop)
{
	struct smr_tm_rseg *s = tm->rc_reading;
	sector_t ready;

	if (!s)
		return;
	/* Running on: @ready stays where it was at @since. */
	ready = smr_tm_rseg_ready(tm, s, t);
	if (!stop && ready < s->stop)
		return;
	s->ready = ready;
	s->stop = ready;
	s->reading = false;
	tm->rc_reading = NULL;
	tm->head = s->ready;
}

/*
 * Under tm->lock: the actuator takes other work at @start. The look-ahead
 * stops where it got to; segments over the sectors [@pos, @pos + @nsect)
 * are dropped (a write changes them, a read refills them).
 * O(read_segments).
 */
void smr_tm_rc_take(struct smr_tm *tm, u64 start, sector_t pos,
		    sector_t nsect)
{
	struct smr_tm_rseg *s;
	unsigned int i;

	smr_tm_rc_settle(tm, start, true);
	for (i = 0; i < tm->nr_rsegs; i++) {
		s = &tm->rsegs[i];
		if (s->used && pos < s->stop && s->start < pos + nsect)
			s->used = 0;
	}
}

/*
 * Under tm->lock: a host read of [@pos, @pos + @nsect) at @now that a
 * segment holds, or that starts within its running look-ahead: answered
 * from it over the interface, without the actuator; its end, or 0 when
 * no segment has it. A segment reading ahead reads on past it.
 * O(read_segments).
 */
u64 smr_tm_rc_hit(struct smr_tm *tm, u64 now, sector_t pos, sector_t nsect)
{
	u64 ready_at, end;
	struct smr_tm_rseg *s;
	unsigned int i;

	smr_tm_rc_settle(tm, now, false);
	for (i = 0; i < tm->nr_rsegs; i++) {
		s = &tm->rsegs[i];
		/*
		 * Held, or starting within a look-ahead still running (the
		 * drive reads on to its end: a stream of reads longer than
		 * the look-ahead streams too); a look-ahead that ended holds
		 * what it read and no more.
		 */
		if (!s->used || pos < s->start ||
		    (s->reading ? pos > s->stop : pos + nsect > s->ready))
			continue;
		/*
		 * The command's overhead and its transfer over the interface,
		 * one command after another there (as the write cache's
		 * acknowledgements); not before the segment holds its last
		 * sector: [start, ready) from @since (a read still in service
		 * until then, or one before), the rest as the look-ahead
		 * reaches it at the media rate. So a read that came before its
		 * data did (the pieces of one large read, a second read of a
		 * block in flight) waits for it.
		 */
		end = smr_tm_link_end(tm, now, nsect);
		ready_at = s->since;
		if (pos + nsect > s->ready)
			ready_at += smr_tm_xfer_ns(pos + nsect - s->ready,
						   smr_tm_kbps(tm, s->ready));
		end = max(end, ready_at);
		tm->link_until = end;
		if (s->reading) {
			/*
			 * It reads on from here: what it holds at @end, which
			 * the actuator is committed to (smr_tm_charge_locked()
			 * starts nothing before @since), and its stop moves on.
			 */
			s->ready = max(smr_tm_rseg_ready(tm, s, end), pos + nsect);
			s->stop = min_t(sector_t, tm->span,
					max(s->stop, pos + nsect + tm->ahead));
			s->since = end;
		}
		s->used = ++tm->rc_clock;
		return end;
	}
	return 0;
}

/*
 * Under tm->lock: a host read of [@pos, @pos + @nsect) from the media,
 * served until @end, fills a segment (a free one, else the least
 * recently used), whose look-ahead starts there. O(read_segments).
 */
void smr_tm_rc_fill(struct smr_tm *tm, u64 end, sector_t pos,
		    sector_t nsect)
{
	struct smr_tm_rseg *s = &tm->rsegs[0];
	unsigned int i;

	for (i = 1; i < tm->nr_rsegs && s->used; i++)
		if (tm->rsegs[i].used < s->used)
			s = &tm->rsegs[i];
	s->start = pos;
	s->ready = pos + nsect;
	s->stop = min_t(sector_t, tm->span, s->ready + tm->ahead);
	s->since = end;
	s->used = ++tm->rc_clock;
	s->reading = s->stop > s->ready;
	if (s->reading)
		tm->rc_reading = s;
}

void smr_tm_rc_empty(struct smr_tm *tm)
{
	unsigned int i;

	for (i = 0; i < tm->nr_rsegs; i++)
		tm->rsegs[i].used = 0;
	tm->rc_reading = NULL;
}
