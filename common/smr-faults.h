/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Media faults, the same for the three models (common/smr-faults.c):
 * bad sectors, transient errors and slow I/O on ranges of the emulated
 * device, set by target messages (docs/dm-smr.rst and docs/dm-caveat.rst,
 * "Media faults").
 *
 * Faults live in the host's sector space (what the dm device shows), not
 * on the backing device: a drive-managed write that lands in the
 * persistent cache still fails if its LBA is bad. Only host I/O meets
 * them; cleaning, metadata and the zoned device's own I/O do not. They
 * belong to the loaded table and are not persisted: a table reload, like
 * a new device, starts without faults.
 *
 * A target calls smr_faults_map() first in map(); SMR_FAULT_PASS means
 * "map it as usual". A delayed bio is mapped later, from a worker, by
 * the target's @remap (its map() without this check), except a read of
 * a target that maps reads first (smr_faults_map_reads_first()).
 */
#ifndef SMR_FAULTS_H
#define SMR_FAULTS_H

#include <linux/atomic.h>
#include <linux/badblocks.h>
#include <linux/bio.h>
#include <linux/device-mapper.h>
#include <linux/dm-ioctl.h>
#include <linux/mutex.h>
#include <linux/prandom.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

/* smr_faults_map(): no fault for this bio, map it. */
#define SMR_FAULT_PASS		(-1)
/*
 * smr_faults_map(): a read to delay, for a target that maps reads before
 * their delay (smr_faults_map_reads_first()): map it now, in map(), then
 * hand it to smr_faults_hold() instead of sending it.
 */
#define SMR_FAULT_HOLD		(-2)

/* Longest delay a message may set: suspend waits for delayed bios. */
#define SMR_FAULT_MAX_DELAY_MS	60000

/* What fired, for the trace event and the log (smr_fault_kind_names). */
enum smr_fault_kind {
	SMR_FAULT_BAD_READ,	/* read of a bad sector: medium error */
	SMR_FAULT_BAD_WRITE,	/* write of a bad sector, on_write fail */
	SMR_FAULT_REMAP,	/* write of a bad sector, on_write remap: cleared */
	SMR_FAULT_TRANSIENT,	/* transient next/prob: I/O error */
	SMR_FAULT_DELAY,	/* delay: held before mapping */
	SMR_FAULT_CLEAN_TIMEOUT, /* drive-managed: waited for cleaning too long */
};

/*
 * The target's trace event for a fault that fired: each target traces in
 * its own system (smr:smr_fault, caveat:cv_fault; docs/tracing.md), so
 * the library calls back rather than defining an event of its own.
 */
typedef void (*smr_fault_trace_fn)(const char *dev, int kind, u64 sector,
				   u32 nsect, bool write);

/* Which I/O a transient fault or a delay applies to. */
enum smr_fault_dir {
	SMR_FAULT_RW,
	SMR_FAULT_READ,
	SMR_FAULT_WRITE,
};

/* A range of the device, [start, end) in sectors, and whose I/O it takes. */
struct smr_fault_range {
	sector_t start;
	sector_t end;
	u8 dir;			/* enum smr_fault_dir */
};

/*
 * Per-bio data, first in the target's per-bio area: smr_faults_per_io()
 * adds its size to ti->per_io_data_size after the target set its own.
 */
struct smr_fault_bio {
	unsigned long due;	/* a delayed bio: jiffies when it is mapped */
	u32 zone;		/* a write counted in smr_faults.held[] */
	bool mapped;		/* mapped before the delay: @issue sends it */
	bool counted;		/* counted in held[zone] */
};

struct smr_fault_stats {
	atomic64_t bad_reads;	/* reads failed on a bad sector */
	atomic64_t bad_writes;	/* writes failed on a bad sector */
	atomic64_t remaps;	/* writes that cleared bad sectors */
	atomic64_t transient;	/* I/Os failed by a transient fault */
	atomic64_t delayed;	/* I/Os held by a delay */
};

/* A snapshot of the counters, for the netlink dumps. */
struct smr_fault_counts {
	u64 bad_reads, bad_writes, remaps, transient, delayed;
};

enum smr_transient_mode {
	SMR_TRANSIENT_OFF,
	SMR_TRANSIENT_NEXT,	/* the next tr_left I/Os fail */
	SMR_TRANSIENT_PROB,	/* each fails with probability tr_ppm / 10^6 */
};

struct smr_faults {
	struct dm_target *ti;
	char name[DM_NAME_LEN];		/* the dm name, for the trace event */
	int (*remap)(struct dm_target *ti, struct bio *bio);
	/* The target's trace event for a fault that fired (its own system). */
	smr_fault_trace_fn trace;
	/* Sends a read mapped before its delay; NULL: map when due. */
	void (*issue)(struct dm_target *ti, struct bio *bio);
	struct mutex msg_lock;		/* one message at a time */

	/*
	 * Bad sectors: the kernel's badblocks table (block/badblocks.c, as
	 * null_blk and md use). Its seqlock lets map() check without a lock;
	 * set/clear take the write side with interrupts off (6.1's clear
	 * with write_seqlock_irq(), so never call it with them off).
	 */
	struct badblocks bb;
	bool bb_ready;
	bool bb_fail_writes;		/* on_write fail, else remap */

	/* Transient faults and the delay; under @lock. */
	spinlock_t lock;
	u8 tr_mode;			/* enum smr_transient_mode */
	struct smr_fault_range tr;
	u32 tr_left;
	u32 tr_ppm;
	u64 tr_seed;
	struct rnd_state tr_rnd;	/* prandom, seeded: a run replays */
	struct smr_fault_range dl;
	u32 dl_ms;			/* 0: no delay */
	bool draining;			/* suspending: map delayed bios now */
	struct bio_list delayed;	/* in the order they came */
	/*
	 * A target that takes a zone's writes only in order (host-managed:
	 * smr_faults_order_writes()): a write goes on @delayed behind a
	 * write of its zone held there, as a drive with a slow sector still
	 * takes a zone's writes in order. @held counts each zone's writes on
	 * @delayed; allocated by the first delay message that takes writes.
	 */
	u64 order_sectors;		/* the zone size; 0: writes in any order */
	u32 *held;
	u32 held_writes;		/* their sum: map() looks while not 0 */
	struct workqueue_struct *wq;
	struct delayed_work dwork;

	bool armed;			/* any fault set: map() looks */
	struct smr_fault_stats stats;
};

int smr_faults_init(struct smr_faults *f, struct dm_target *ti,
		    int (*remap)(struct dm_target *ti, struct bio *bio),
		    smr_fault_trace_fn trace);
void smr_faults_exit(struct smr_faults *f);
void smr_faults_per_io(struct dm_target *ti);

/*
 * First thing in map(), interrupts on. Returns SMR_FAULT_PASS, or the
 * DM_MAPIO_* value for map() to return (the bio failed, or is delayed).
 * While no fault is set, a load or two and no call: every bio asks.
 */
int __smr_faults_map(struct smr_faults *f, struct bio *bio);
static inline int smr_faults_map(struct smr_faults *f, struct bio *bio)
{
	/* Writes held behind a delay keep their zone's later ones behind. */
	if (likely(!READ_ONCE(f->armed) && !READ_ONCE(f->held_writes)))
		return SMR_FAULT_PASS;
	return __smr_faults_map(f, bio);
}

/*
 * For a target whose map() may split a read (dm_accept_partial_bio()
 * works only in map(): it writes into dm's stack frame there): reads in a
 * delay range are mapped at once and held mapped; @issue sends one when
 * it is due, from the fault worker. Writes are still held unmapped.
 */
void smr_faults_map_reads_first(struct smr_faults *f,
				void (*issue)(struct dm_target *ti,
					      struct bio *bio));
/* Writes to one zone of @zone_sectors reach the target in their order. */
void smr_faults_order_writes(struct smr_faults *f, u64 zone_sectors);
/* A bio smr_faults_map() said SMR_FAULT_HOLD of, mapped: hold it. */
void smr_faults_hold(struct smr_faults *f, struct bio *bio);

/* Suspend maps the delayed bios at once; resume delays again. */
void smr_faults_presuspend(struct smr_faults *f);
void smr_faults_resume(struct smr_faults *f);

/* Is this a fault message (badblocks, transient, delay, faults)? */
bool smr_faults_is_message(const char *word);
int smr_faults_message(struct smr_faults *f, unsigned int argc, char **argv,
		       char *result, unsigned int maxlen);

/*
 * The status fields, appended last to each model's status line:
 * " <bad_read_errors> <bad_write_errors> <bad_remaps> <transient_errors>
 * <delayed_ios>".
 */
void smr_faults_status(struct smr_faults *f, char *result, unsigned int maxlen,
		       unsigned int *szp);
void smr_faults_clear_stats(struct smr_faults *f);
void smr_faults_counts(struct smr_faults *f, struct smr_fault_counts *c);

/* Count and trace a fault the target itself fired (a cleaning timeout). */
void smr_faults_note(struct smr_faults *f, enum smr_fault_kind kind,
		     sector_t sector, u32 nsect, bool write);

#endif /* SMR_FAULTS_H */
