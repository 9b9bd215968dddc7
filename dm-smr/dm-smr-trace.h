/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-smr tracepoints (trace system "dm_smr"); docs/tracing.md shows them
 * with trace-cmd and bpftrace.
 *
 * Every event names its device (struct smr_drive's label: the dm name,
 * or smrhm<N> for a host-managed engine; the first 31 bytes) in
 * the fixed array common/smr-trace.h defines for both modules, which also
 * holds the metadata commit event they share.
 * Off, each costs a static branch; the few that take a timestamp take it
 * only on paths that already sleep or wait (cleaning, commits, a write
 * that waited), never on a plain write.
 *
 * Defined once, in dm-smr-target.c (CREATE_TRACE_POINTS).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dm_smr

#if !defined(DM_SMR_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define DM_SMR_TRACE_H

#include <linux/tracepoint.h>
#include "smr-trace.h"


/* How a drive-managed write was placed. */
#define SMR_TRACE_CACHE		0
#define SMR_TRACE_BYPASS	1
#define smr_trace_placement(p)	__print_symbolic(p, \
	{ SMR_TRACE_CACHE, "cache" }, { SMR_TRACE_BYPASS, "bypass" })

/* Why a drive-managed write waited. */
#define SMR_TRACE_WAIT_CLEANING	0	/* its band was being cleaned */
#define SMR_TRACE_WAIT_CACHE	1	/* the cache was full */
#define smr_trace_wait(w)	__print_symbolic(w, \
	{ SMR_TRACE_WAIT_CLEANING, "band-cleaning" }, \
	{ SMR_TRACE_WAIT_CACHE, "cache-full" })

/* enum smr_clean_reason */
#define smr_trace_reason(r)	__print_symbolic(r, \
	{ 1, "idle" }, { 2, "foreground" }, { 3, "manual" })

/* BLK_ZONE_COND_* */
#define smr_trace_cond(c)	__print_symbolic(c, \
	{ 0x0, "nw" }, { 0x1, "empty" }, { 0x2, "imp_open" }, \
	{ 0x3, "exp_open" }, { 0x4, "closed" }, { 0xd, "ro" }, \
	{ 0xe, "full" }, { 0xf, "offline" })

TRACE_EVENT(smr_dm_write,
	TP_PROTO(const char *dev, u64 sector, u32 nr_sectors, u8 placement,
		 u32 band, u32 slot),
	TP_ARGS(dev, sector, nr_sectors, placement, band, slot),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u64, sector)
		__field(u32, nr_sectors)
		__field(u8, placement)
		__field(u32, band)
		__field(u32, slot)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->sector = sector;
		__entry->nr_sectors = nr_sectors;
		__entry->placement = placement;
		__entry->band = band;
		__entry->slot = slot;
	),
	TP_printk("%s sector=%llu nr=%u %s band=%u slot=%d", __entry->dev,
		  __entry->sector, __entry->nr_sectors,
		  smr_trace_placement(__entry->placement), __entry->band,
		  (int)__entry->slot)
);

/*
 * A write that waited, when it is placed (err 0) or failed (err -EIO: a
 * cleaning failed meanwhile). @why is the first reason it waited;
 * @waited_ns runs from then on, whatever it waited for after.
 */
TRACE_EVENT(smr_dm_write_waited,
	TP_PROTO(const char *dev, u64 sector, u32 nr_sectors, u8 why,
		 u64 waited_ns, int err),
	TP_ARGS(dev, sector, nr_sectors, why, waited_ns, err),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u64, sector)
		__field(u32, nr_sectors)
		__field(u8, why)
		__field(u64, waited_ns)
		__field(int, err)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->sector = sector;
		__entry->nr_sectors = nr_sectors;
		__entry->why = why;
		__entry->waited_ns = waited_ns;
		__entry->err = err;
	),
	TP_printk("%s sector=%llu nr=%u waited_us=%llu for=%s err=%d",
		  __entry->dev, __entry->sector, __entry->nr_sectors,
		  __entry->waited_ns / 1000, smr_trace_wait(__entry->why),
		  __entry->err)
);

/* pick_ns: how long the policy took to choose the band (its pick()). */
TRACE_EVENT(smr_clean_start,
	TP_PROTO(const char *dev, u32 band, u8 reason, u64 pick_ns),
	TP_ARGS(dev, band, reason, pick_ns),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u32, band)
		__field(u8, reason)
		__field(u64, pick_ns)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->band = band;
		__entry->reason = reason;
		__entry->pick_ns = pick_ns;
	),
	TP_printk("%s band=%u reason=%s pick_ns=%llu", __entry->dev,
		  __entry->band, smr_trace_reason(__entry->reason),
		  __entry->pick_ns)
);

TRACE_EVENT(smr_clean_end,
	TP_PROTO(const char *dev, u32 band, u8 reason, int err, u64 read_bytes,
		 u64 write_bytes, u64 ns),
	TP_ARGS(dev, band, reason, err, read_bytes, write_bytes, ns),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u32, band)
		__field(u8, reason)
		__field(int, err)
		__field(u64, read_bytes)
		__field(u64, write_bytes)
		__field(u64, ns)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->band = band;
		__entry->reason = reason;
		__entry->err = err;
		__entry->read_bytes = read_bytes;
		__entry->write_bytes = write_bytes;
		__entry->ns = ns;
	),
	TP_printk("%s band=%u reason=%s err=%d read=%llu written=%llu us=%llu",
		  __entry->dev, __entry->band, smr_trace_reason(__entry->reason),
		  __entry->err, __entry->read_bytes, __entry->write_bytes,
		  __entry->ns / 1000)
);

TRACE_EVENT(smr_hm_write,
	TP_PROTO(const char *dev, u32 zone, u32 wp, u32 nr_sectors, bool append),
	TP_ARGS(dev, zone, wp, nr_sectors, append),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u32, zone)
		__field(u32, wp)
		__field(u32, nr_sectors)
		__field(bool, append)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->zone = zone;
		__entry->wp = wp;
		__entry->nr_sectors = nr_sectors;
		__entry->append = append;
	),
	TP_printk("%s zone=%u wp=%u nr=%u%s", __entry->dev, __entry->zone,
		  __entry->wp, __entry->nr_sectors,
		  __entry->append ? " append" : "")
);

TRACE_EVENT(smr_zone_cond,
	TP_PROTO(const char *dev, u32 zone, u8 from, u8 to),
	TP_ARGS(dev, zone, from, to),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u32, zone)
		__field(u8, from)
		__field(u8, to)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->zone = zone;
		__entry->from = from;
		__entry->to = to;
	),
	TP_printk("%s zone=%u %s -> %s", __entry->dev, __entry->zone,
		  smr_trace_cond(__entry->from), smr_trace_cond(__entry->to))
);

SMR_TRACE_MD_COMMIT(smr_md_commit);

/* A media fault fired (common/smr-faults.h, docs/tracing.md). */
SMR_TRACE_FAULT(smr_fault);

#endif /* DM_SMR_TRACE_H */

/* Out of tree: define_trace.h finds this file on the module's -I$(src). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dm-smr-trace
#include <trace/define_trace.h>
