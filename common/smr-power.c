// SPDX-License-Identifier: GPL-2.0
/*
 * A power cut on demand (smr-power.h): the switch and its triggers.
 *
 * Part of the library module smr-common (common/Kbuild). The state is
 * read without the lock on the I/O path; it changes under the lock. The
 * cut's first half runs once, under the lock, before the state says
 * cut; its second half (smr_power_cut_work()) on the unbound system
 * workqueue (smr_unbound_wq()).
 */
#include <linux/device-mapper.h>
#include <linux/kernel.h>
#include <linux/module.h>

#include "smr-compat.h"
#include "smr-power.h"
#include "smr-slots.h"
#include "smr-timing.h"

static const char *const smr_power_states[] = {
	[SMR_POWER_ON] = "on",
	[SMR_POWER_ARMED] = "armed",
	[SMR_POWER_CUT] = "cut",
};

static const char *const smr_power_whats[] = {
	[SMR_POWER_WRITES] = "writes",
	[SMR_POWER_FLUSHES] = "flushes",
	[SMR_POWER_IOS] = "ios",
};

/*
 * The cut's second half, in process context: the model ends what it holds
 * (its timers end their bios now), and the drive fails what waits.
 */
static void smr_power_cut_work(struct work_struct *work)
{
	struct smr_power *p = container_of(work, struct smr_power, cut_work);
	struct smr_tm *tm = *p->tmp;

	DMWARN("%s: power cut: writes since the last flush may be lost; I/O fails until the table is loaded again",
	       p->name);
	if (tm)
		smr_tm_set_quiet(tm, true);
	p->ops->cut_work(p->owner);
}

void smr_power_init(struct smr_power *p, const char *name,
		    const struct smr_power_ops *ops, void *owner,
		    struct smr_slots *slots, struct smr_tm **tmp)
{
	p->name = name;
	p->ops = ops;
	p->owner = owner;
	p->slots = slots;
	p->tmp = tmp;
	spin_lock_init(&p->lock);
	p->state = SMR_POWER_ON;
	p->left = 0;
	INIT_WORK(&p->cut_work, smr_power_cut_work);
}
EXPORT_SYMBOL_GPL(smr_power_init);

void smr_power_exit(struct smr_power *p)
{
	if (p->ops)
		flush_work(&p->cut_work);
}
EXPORT_SYMBOL_GPL(smr_power_exit);

/* Does a command count as @what? */
static bool smr_power_counts(u8 what, blk_opf_t opf, unsigned int size)
{
	enum req_op op = opf & REQ_OP_MASK;

	switch (what) {
	case SMR_POWER_WRITES:
		return size && (op == REQ_OP_WRITE || op == REQ_OP_ZONE_APPEND);
	case SMR_POWER_FLUSHES:
		return (opf & REQ_PREFLUSH) || (op == REQ_OP_WRITE && !size);
	default:
		return true;
	}
}

/*
 * Cut, under p->lock. The cut's first half runs before the state changes,
 * so that whoever sees the state cut (the I/O path reads it without the
 * lock) also sees what the cut did: the commits halted, the timing model
 * quiet.
 */
static void smr_power_cut_locked(struct smr_power *p)
{
	if (p->state == SMR_POWER_CUT)
		return;
	smr_slots_halt(p->slots);
	if (p->ops->halt)
		p->ops->halt(p->owner);
	if (*p->tmp)
		smr_tm_quiet_now(*p->tmp);
	queue_work(smr_unbound_wq(), &p->cut_work);
	smp_wmb();	/* the cut's effects before the state */
	WRITE_ONCE(p->state, SMR_POWER_CUT);
	p->left = 0;
}

bool __smr_power_io(struct smr_power *p, blk_opf_t opf, unsigned int size)
{
	unsigned long flags;
	bool fail;

	spin_lock_irqsave(&p->lock, flags);
	if (p->state == SMR_POWER_ARMED && smr_power_counts(p->what, opf, size)) {
		if (p->left)
			p->left--;
		else
			smr_power_cut_locked(p);
	}
	fail = p->state == SMR_POWER_CUT;
	spin_unlock_irqrestore(&p->lock, flags);
	return fail;
}
EXPORT_SYMBOL_GPL(__smr_power_io);

bool smr_power_is_message(const char *word)
{
	return !strcasecmp(word, "power_cut");
}
EXPORT_SYMBOL_GPL(smr_power_is_message);

static int smr_power_what(struct smr_power *p, const char *s, u8 *what)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(smr_power_whats); i++) {
		if (!strcasecmp(s, smr_power_whats[i])) {
			*what = i;
			return 0;
		}
	}
	DMERR("%s: power_cut: count writes, flushes or ios, not '%s'",
	      p->name, s);
	return -EINVAL;
}

static int smr_power_u64(struct smr_power *p, const char *what, const char *s,
			 u64 *v)
{
	if (kstrtoull(s, 10, v)) {
		DMERR("%s: power_cut: %s must be a decimal number, not '%s'",
		      p->name, what, s);
		return -EINVAL;
	}
	return 0;
}

/* Arm a countdown: the next @n commands counted as @what pass. */
static int smr_power_arm(struct smr_power *p, u64 n, u8 what)
{
	int ret = 0;

	spin_lock_irq(&p->lock);
	if (p->state == SMR_POWER_CUT) {
		ret = -EIO;
	} else {
		p->left = n;
		p->what = what;
		WRITE_ONCE(p->state, SMR_POWER_ARMED);
	}
	spin_unlock_irq(&p->lock);
	if (ret)
		DMERR("%s: power_cut: the power is already cut; reload the table to bring it back",
		      p->name);
	return ret;
}

bool smr_power_if_on(struct smr_power *p, void (*fn)(void *arg), void *arg)
{
	unsigned long flags;
	bool on;

	spin_lock_irqsave(&p->lock, flags);
	on = p->state != SMR_POWER_CUT;
	if (on)
		fn(arg);
	spin_unlock_irqrestore(&p->lock, flags);
	return on;
}
EXPORT_SYMBOL_GPL(smr_power_if_on);

int smr_power_settle(struct smr_power *p)
{
	might_sleep();
	flush_work(&p->cut_work);
	return p->ops->settle(p->owner);
}
EXPORT_SYMBOL_GPL(smr_power_settle);

int smr_power_message(struct smr_power *p, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct rnd_state rnd;
	unsigned int sz = 0;
	u64 n, max, seed;
	int i, ret;
	u8 what;

	if (argc == 1) {
		spin_lock_irq(&p->lock);
		smr_power_cut_locked(p);
		spin_unlock_irq(&p->lock);
		/* Once this returns, the backing device holds what it keeps. */
		ret = smr_power_settle(p);
		if (ret)
			DMERR("%s: power_cut: I/O issued before the cut is still in flight to the backing device",
			      p->name);
		return ret;
	}
	if (argc == 2 && !strcasecmp(argv[1], "off")) {
		spin_lock_irq(&p->lock);
		if (p->state == SMR_POWER_ARMED)
			WRITE_ONCE(p->state, SMR_POWER_ON);
		ret = p->state == SMR_POWER_CUT ? -EIO : 0;
		spin_unlock_irq(&p->lock);
		if (ret)
			DMERR("%s: power_cut off: the power is already cut; reload the table to bring it back",
			      p->name);
		return ret;
	}
	if (argc == 4 && !strcasecmp(argv[1], "after")) {
		if (smr_power_u64(p, "the number of commands", argv[2], &n) ||
		    smr_power_what(p, argv[3], &what))
			return -EINVAL;
		return smr_power_arm(p, n, what);
	}
	if (argc == 5 && !strcasecmp(argv[1], "random")) {
		if (smr_power_u64(p, "the largest number of commands", argv[2],
				  &max) ||
		    smr_power_u64(p, "the seed", argv[3], &seed) ||
		    smr_power_what(p, argv[4], &what))
			return -EINVAL;
		if (max >= U32_MAX) {
			DMERR("%s: power_cut random: the largest number of commands must be below %u",
			      p->name, U32_MAX);
			return -EINVAL;
		}
		/* prandom_seed_state() does not mix a small seed: run it in. */
		prandom_seed_state(&rnd, seed);
		for (i = 0; i < 10; i++)
			prandom_u32_state(&rnd);
		n = prandom_u32_state(&rnd) % (max + 1);
		ret = smr_power_arm(p, n, what);
		if (ret)
			return ret;
		DMEMIT("after %llu %s", n, smr_power_whats[what]);
		return 1;
	}
	DMERR("%s: power_cut: expected no argument, after <n> writes|flushes|ios, random <max> <seed> writes|flushes|ios, or off",
	      p->name);
	return -EINVAL;
}
EXPORT_SYMBOL_GPL(smr_power_message);

void smr_power_get(struct smr_power *p, u8 *state, u64 *left)
{
	unsigned long flags;

	spin_lock_irqsave(&p->lock, flags);
	*state = p->state;
	*left = p->state == SMR_POWER_ARMED ? p->left : 0;
	spin_unlock_irqrestore(&p->lock, flags);
}
EXPORT_SYMBOL_GPL(smr_power_get);

void smr_power_status(struct smr_power *p, char *result, unsigned int maxlen,
		      unsigned int *szp)
{
	unsigned int sz = *szp;
	u64 left;
	u8 state;

	smr_power_get(p, &state, &left);
	DMEMIT(" %s %llu", smr_power_states[state], left);
	*szp = sz;
}
EXPORT_SYMBOL_GPL(smr_power_status);
