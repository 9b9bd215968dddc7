/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A power cut on demand (common/smr-power.c): the switch, its triggers
 * and the message and status field that drive it, the same for every
 * model. What a cut does to a drive is the model's (its ops): it stops
 * every write to the medium and every commit, fails what is queued and
 * what arrives, and leaves on the backing device what a drive would hold
 * after losing power (docs/crash-testing.md).
 *
 * The switch belongs to the drive: a drive-managed table's context, a
 * host-managed engine (which /dev/smrhmN openers use too, and which
 * outlives table reloads). A cut drive stays cut: reloading the table (a
 * new engine, a new load from the backing) is the power coming back.
 *
 * Messages (each model's message handler passes them on):
 *   power_cut                      cut now; returns once the drive has
 *                                  nothing of its own in flight
 *   power_cut after <n> writes|flushes|ios
 *                                  arm: the next <n> such commands pass,
 *                                  the one after them is not done and
 *                                  cuts the power
 *   power_cut random <max> <seed> writes|flushes|ios
 *                                  arm with <n> drawn from [0, <max>] by a
 *                                  seeded generator (the same seed draws
 *                                  the same <n>); prints "after <n> ..."
 *   power_cut off                  disarm (a cut cannot be undone)
 *
 * Counted, per command the drive takes (after splitting to its limits):
 * writes are data writes (zone appends included); flushes are empty
 * flushes and writes with a preflush (a preflush write counts as both);
 * ios are every command. A command counted after the cut fails.
 */
#ifndef SMR_POWER_H
#define SMR_POWER_H

#include <linux/blk_types.h>
#include <linux/prandom.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>

enum smr_power_state {
	SMR_POWER_ON,
	SMR_POWER_ARMED,	/* a countdown runs */
	SMR_POWER_CUT,
};

enum smr_power_what {
	SMR_POWER_WRITES,
	SMR_POWER_FLUSHES,
	SMR_POWER_IOS,
};

struct smr_slots;
struct smr_tm;

/*
 * What a cut does, the same for every model (smr-power.c): under the
 * switch's lock, in whatever context the cut comes from, the drive's
 * metadata store is halted (smr_slots_halt(): nothing more is committed),
 * ops->halt stops what else writes, and the timing model, if any, is made
 * quiet at once (a bio waiting for modelled time is not held longer);
 * then, in process context on a queue of the library's (the model's own
 * worker may be the one waiting), the cut is logged, the model ends what
 * it holds and ops->cut_work fails what waits. A settle waits for that
 * work, then for ops->settle.
 */
struct smr_power_ops {
	/*
	 * Optional. Under the switch's spinlock: any context, no sleeping
	 * (it may come from the I/O path). Stop writes to the medium the
	 * metadata store does not make (a data cache's destages).
	 */
	void (*halt)(void *owner);
	/*
	 * Process context, once, after the cut: fail what waits (hand it to
	 * the model's worker, which fails it). Must not wait for the cut
	 * work itself.
	 */
	void (*cut_work)(void *owner);
	/*
	 * Process context, after a cut and its cut_work: wait, bounded,
	 * until the drive's own work is done and nothing it issued before
	 * the cut is still in flight to the backing device (a drive-managed
	 * table's host bios are the dm core's: a suspend waits for them). 0,
	 * or -ETIMEDOUT.
	 */
	int (*settle)(void *owner);
};


struct smr_power {
	const char *name;		/* the drive, for log messages */
	const struct smr_power_ops *ops;
	void *owner;
	spinlock_t lock;
	u8 state;			/* enum smr_power_state; read locklessly */
	u8 what;			/* enum smr_power_what, when armed */
	u64 left;			/* commands to pass before the cut */
	struct smr_slots *slots;	/* halted at the cut */
	struct smr_tm **tmp;		/* the owner's model, quieted at the cut */
	struct work_struct cut_work;	/* the part after the cut */
};

/*
 * The switch, on, for the drive @owner whose metadata store is @slots
 * and whose timing model is *@tmp (NULL when it has none, or none yet:
 * the cut reads it then).
 */
void smr_power_init(struct smr_power *p, const char *name,
		    const struct smr_power_ops *ops, void *owner,
		    struct smr_slots *slots, struct smr_tm **tmp);
/* Before the owner goes: the cut's work has run (it queues the model's). */
void smr_power_exit(struct smr_power *p);

static inline bool smr_power_is_cut(const struct smr_power *p)
{
	return READ_ONCE(p->state) == SMR_POWER_CUT;
}

/* Neither armed nor cut: a command need not be counted. */
static inline bool smr_power_is_on(const struct smr_power *p)
{
	return READ_ONCE(p->state) == SMR_POWER_ON;
}

/*
 * The I/O path, once per command: true if the command must fail with an
 * I/O error because the power is off (this command may be the one that
 * cuts it). A single load and branch while nothing is armed.
 */
bool __smr_power_io(struct smr_power *p, blk_opf_t opf, unsigned int size);
static inline bool smr_power_io(struct smr_power *p, blk_opf_t opf,
				unsigned int size)
{
	if (likely(READ_ONCE(p->state) == SMR_POWER_ON))
		return false;
	return __smr_power_io(p, opf, size);
}

/*
 * After a cut: wait, bounded, until the drive issues nothing more to its
 * backing device (the cut's work, then ops->settle). 0, or -ETIMEDOUT.
 * Process context.
 */
int smr_power_settle(struct smr_power *p);

/*
 * @fn(@arg) under the switch's lock unless the power is cut: a cut then
 * comes wholly before (and @fn is not called) or wholly after (and undoes
 * it), never between the look and @fn. For waking a model at resume.
 * @fn must not sleep. Returns whether it ran.
 */
bool smr_power_if_on(struct smr_power *p, void (*fn)(void *arg), void *arg);

/* The state and, when armed, the commands still to pass (else 0). */
void smr_power_get(struct smr_power *p, u8 *state, u64 *left);

bool smr_power_is_message(const char *word);
int smr_power_message(struct smr_power *p, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen);

/*
 * The status fields, appended last: " <power> <power_left>", power one of
 * on, armed, cut; power_left the commands still to pass when armed, else 0.
 */
void smr_power_status(struct smr_power *p, char *result, unsigned int maxlen,
		      unsigned int *szp);

#endif /* SMR_POWER_H */
