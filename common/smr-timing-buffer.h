/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Inside the timing model (smr-timing.c): the media's arithmetic, which
 * the model and the drive's buffer share, and the buffer's write and
 * read caches (smr-timing-buffer.c), which the model calls under its
 * lock. Not for the targets: they see smr-timing.h only.
 */
#ifndef SMR_TIMING_BUFFER_H
#define SMR_TIMING_BUFFER_H

#include <linux/blk_types.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/types.h>

#include "smr-timing.h"

/* Fixed point for fractions of the span: 20 bits. */
#define SMR_TM_FRAC_SHIFT	20

/*
 * The host interface a cached write is acknowledged at: SATA 6 Gb/s,
 * 600 MB/s after 8b/10b coding (SAS 12 Gb/s drives are twice that; the
 * difference is a few microseconds per 4 KiB write). In kB/s.
 */
#define SMR_TM_LINK_KBPS	600000

/* @x of the span, in 2^-20. */
static inline u64 smr_tm_frac(struct smr_tm *tm, sector_t x)
{
	return div64_u64(min_t(u64, x, tm->span) << SMR_TM_FRAC_SHIFT,
			 tm->span);
}

/* The media rate at @pos, kB/s: it falls linearly from the outer edge in. */
static inline u64 smr_tm_kbps(struct smr_tm *tm, sector_t pos)
{
	return tm->od_kbps - (((u64)(tm->od_kbps - tm->id_kbps) *
			       smr_tm_frac(tm, pos)) >> SMR_TM_FRAC_SHIFT);
}

/* ns to move @nsect at @kbps: bytes / (kB/s) = bytes * 10^6 / kbps ns. */
static inline u64 smr_tm_xfer_ns(sector_t nsect, u64 kbps)
{
	return div64_u64((u64)nsect * SECTOR_SIZE * 1000000, kbps);
}

/*
 * Under tm->lock: when a command of @nsect that may start at @t ends on
 * the host interface, one command after another there: its overhead and
 * its transfer at the interface's rate (a write the write cache takes, a
 * read the read cache answers). The caller moves tm->link_until on.
 */
static inline u64 smr_tm_link_end(struct smr_tm *tm, u64 t, sector_t nsect)
{
	return max(t, tm->link_until) + tm->overhead_ns +
		smr_tm_xfer_ns(nsect, SMR_TM_LINK_KBPS);
}

/*
 * The write cache, each under tm->lock and O(SMR_TM_WC_SEGS):
 * smr_tm_wc_drain() forgets the segments destaged by @now;
 * smr_tm_wc_room() is when @need bytes more will have been destaged;
 * smr_tm_wc_add() adds a write of @bytes destaged at @end.
 */
void smr_tm_wc_drain(struct smr_tm *tm, u64 now);
u64 smr_tm_wc_room(struct smr_tm *tm, u64 need);
void smr_tm_wc_add(struct smr_tm *tm, u64 end, u64 bytes);

/* A read of data, the kind of I/O the read cache keeps. */
static inline bool smr_tm_is_read(blk_opf_t opf, sector_t nsect)
{
	return (opf & REQ_OP_MASK) == REQ_OP_READ && nsect;
}

/*
 * The read cache, each under tm->lock and O(read_segments):
 * smr_tm_rc_take() when the actuator takes other work at @start (the
 * look-ahead stops, segments over the sectors go); smr_tm_rc_hit() a
 * host read it answers, its end, or 0; smr_tm_rc_fill() a host read
 * from the media, served until @end, fills a segment; smr_tm_rc_empty()
 * forgets everything (a resume).
 */
void smr_tm_rc_take(struct smr_tm *tm, u64 start, sector_t pos,
		    sector_t nsect);
u64 smr_tm_rc_hit(struct smr_tm *tm, u64 now, sector_t pos, sector_t nsect);
void smr_tm_rc_fill(struct smr_tm *tm, u64 end, sector_t pos,
		    sector_t nsect);
void smr_tm_rc_empty(struct smr_tm *tm);

#endif /* SMR_TIMING_BUFFER_H */
