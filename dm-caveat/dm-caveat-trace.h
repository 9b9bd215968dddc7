/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-caveat tracepoints (trace system "dm_caveat"); docs/tracing.md shows
 * them with trace-cmd and bpftrace. Devices are named in the fixed array
 * of common/smr-trace.h (by their dm name). Defined once, in
 * dm-caveat-target.c (CREATE_TRACE_POINTS).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dm_caveat

#if !defined(DM_CAVEAT_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define DM_CAVEAT_TRACE_H

#include <linux/tracepoint.h>
#include "smr-trace.h"

/* A write made blocks d0..d1 maybe damaged; @live of them held data. */
TRACE_EVENT(cv_damage,
	TP_PROTO(const char *dev, u64 first, u64 last, u64 d0, u64 d1, u64 live),
	TP_ARGS(dev, first, last, d0, d1, live),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u64, first)
		__field(u64, last)
		__field(u64, d0)
		__field(u64, d1)
		__field(u64, live)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->first = first;
		__entry->last = last;
		__entry->d0 = d0;
		__entry->d1 = d1;
		__entry->live = live;
	),
	TP_printk("%s write=%llu..%llu damaged=%llu..%llu live=%llu",
		  __entry->dev, __entry->first, __entry->last, __entry->d0,
		  __entry->d1, __entry->live)
);

/*
 * One step of a write whose damage range is mapped in steps (a large
 * did): blocks a..b of it counted, or cleared (made maybe damaged), in one
 * hold of the lock.
 */
TRACE_EVENT(cv_damage_step,
	TP_PROTO(const char *dev, u64 a, u64 b, bool cleared),
	TP_ARGS(dev, a, b, cleared),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u64, a)
		__field(u64, b)
		__field(bool, cleared)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->a = a;
		__entry->b = b;
		__entry->cleared = cleared;
	),
	TP_printk("%s blocks=%llu..%llu %s", __entry->dev, __entry->a,
		  __entry->b, __entry->cleared ? "cleared" : "counted")
);

/* A read of blocks first..last touched a maybe-damaged block. */
TRACE_EVENT(cv_damaged_read,
	TP_PROTO(const char *dev, u64 first, u64 last, bool zeroed),
	TP_ARGS(dev, first, last, zeroed),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u64, first)
		__field(u64, last)
		__field(bool, zeroed)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->first = first;
		__entry->last = last;
		__entry->zeroed = zeroed;
	),
	TP_printk("%s read=%llu..%llu %s", __entry->dev, __entry->first,
		  __entry->last, __entry->zeroed ? "zeroed" : "failed")
);

SMR_TRACE_MD_COMMIT(cv_md_commit);

/* A media fault fired (common/smr-faults.h, docs/tracing.md). */
SMR_TRACE_FAULT(cv_fault);

/*
 * A damage journal block was written (FUA): @records damages, the last
 * stamped @stamp, at ring block @block; the writes waiting for them are
 * then issued (or failed, err != 0, after a whole commit was tried).
 */
TRACE_EVENT(cv_jr_write,
	TP_PROTO(const char *dev, u32 block, u32 records, u64 stamp, int err,
		 u64 ns),
	TP_ARGS(dev, block, records, stamp, err, ns),
	TP_STRUCT__entry(
		SMR_TP_DEV
		__field(u32, block)
		__field(u32, records)
		__field(u64, stamp)
		__field(int, err)
		__field(u64, ns)
	),
	TP_fast_assign(
		SMR_TP_ASSIGN_DEV;
		__entry->block = block;
		__entry->records = records;
		__entry->stamp = stamp;
		__entry->err = err;
		__entry->ns = ns;
	),
	TP_printk("%s block=%u records=%u stamp=%llu err=%d us=%llu",
		  __entry->dev, __entry->block, __entry->records,
		  __entry->stamp, __entry->err, __entry->ns / 1000)
);

#endif /* DM_CAVEAT_TRACE_H */

/* Out of tree: define_trace.h finds this file on the module's -I$(src). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE dm-caveat-trace
#include <trace/define_trace.h>
