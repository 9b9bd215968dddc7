/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the two modules' trace headers (dm-smr/dm-smr-trace.h,
 * dm-caveat/dm-caveat-trace.h) share: the device name field, and the
 * metadata commit event both define in their own trace system. Included
 * from those headers; the macros expand on each define_trace.h pass.
 */
#ifndef SMR_TRACE_COMMON_H
#define SMR_TRACE_COMMON_H

/*
 * The device name, in a fixed array: __string/__assign_str changed their
 * arguments in 6.10, a fixed array is the same everywhere. Padded, so no
 * stale bytes reach the ring buffer.
 */
#define SMR_TRACE_NAME_LEN 32
#define SMR_TP_DEV		__array(char, dev, SMR_TRACE_NAME_LEN)
#define SMR_TP_ASSIGN_DEV	strscpy_pad(__entry->dev, dev, SMR_TRACE_NAME_LEN)

/*
 * A metadata commit returned: @gen is the store's newest generation then,
 * @ns the time it took, including the wait for a commit already running.
 */
#define SMR_TRACE_MD_COMMIT(event)					\
TRACE_EVENT(event,							\
	TP_PROTO(const char *dev, u64 gen, int err, u64 ns),		\
	TP_ARGS(dev, gen, err, ns),					\
	TP_STRUCT__entry(						\
		SMR_TP_DEV						\
		__field(u64, gen)					\
		__field(int, err)					\
		__field(u64, ns)					\
	),								\
	TP_fast_assign(							\
		SMR_TP_ASSIGN_DEV;					\
		__entry->gen = gen;					\
		__entry->err = err;					\
		__entry->ns = ns;					\
	),								\
	TP_printk("%s gen=%llu err=%d us=%llu", __entry->dev,		\
		  __entry->gen, __entry->err, __entry->ns / 1000)	\
)

/*
 * A media fault fired (smr-faults.h): @kind is enum smr_fault_kind, on
 * the host I/O at @sector (device sectors), @nsect long.
 */
#define SMR_TRACE_FAULT(event)						\
TRACE_EVENT(event,							\
	TP_PROTO(const char *dev, int kind, u64 sector, u32 nsect,	\
		 bool write),						\
	TP_ARGS(dev, kind, sector, nsect, write),			\
	TP_STRUCT__entry(						\
		SMR_TP_DEV						\
		__field(int, kind)					\
		__field(u64, sector)					\
		__field(u32, nsect)					\
		__field(bool, write)					\
	),								\
	TP_fast_assign(							\
		SMR_TP_ASSIGN_DEV;					\
		__entry->kind = kind;					\
		__entry->sector = sector;				\
		__entry->nsect = nsect;					\
		__entry->write = write;					\
	),								\
	TP_printk("%s %s %s sector=%llu nsect=%u", __entry->dev,	\
		  __print_symbolic(__entry->kind,			\
				   { 0, "bad_read" }, { 1, "bad_write" }, \
				   { 2, "remap" }, { 3, "transient" },	\
				   { 4, "delay" }, { 5, "clean_timeout" }), \
		  __entry->write ? "write" : "read",			\
		  __entry->sector, __entry->nsect)			\
)

#endif /* SMR_TRACE_COMMON_H */
