// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: the cleaner. It owns when a band is cleaned
 * (foreground when a write finds the cache full, manual on a message,
 * background after idle_ms without host I/O), when background cleaning
 * gives way to host I/O, and the policies that pick the band: one
 * struct smr_clean_policy each, in smr_clean_policies[]. Cleaning a band
 * is dm-smr-dm-rewrite.c's.
 */
#include <linux/jiffies.h>
#include <linux/sched.h>

#include "dm-smr-dm.h"

/* Run the cleaner @delay jiffies from now (sooner or later than planned). */
void smr_dm_kick_cleaner(struct smr_dm *dm, unsigned long delay)
{
	mod_delayed_work(dm->clean_wq, &dm->clean_dwork, delay);
}

/* ------------------------------------------------------------------ */
/* Policies.                                                           */
/* ------------------------------------------------------------------ */

/* fifo: the band holding the oldest slot, the lowest numbered of equals. */
static u32 smr_fifo_pick(struct smr_dm *dm)
{
	struct smr_band *b = list_first_entry_or_null(&dm->dirty_list,
						      struct smr_band, dirty_node);

	return b ? b - dm->bands : SMR_BAND_NONE;
}

/* greedy: the band holding the most slots, the lowest numbered of equals. */
static u32 smr_greedy_pick(struct smr_dm *dm)
{
	return dm->heap_len ? dm->heap[0] : SMR_BAND_NONE;
}

/*
 * cost-benefit: slots freed, times how long they have been cold. Every
 * band's score moves as the sequence advances, so no order can be kept:
 * the scan looks at every band, without the lock and with interrupts on,
 * yielding the CPU as it goes; pick() takes its choice if that band still
 * holds slots (a race with a cleaning or a load), else the oldest band.
 */
static void smr_cost_benefit_scan(struct smr_dm *dm)
{
	u64 now = READ_ONCE(dm->next_seq), best_score = 0, first, score;
	u32 best = SMR_BAND_NONE, i, slots;

	for (i = 0; i < dm->nr_bands; i++) {
		struct smr_band *b = &dm->bands[i];

		if (!(i & 4095))
			cond_resched();
		slots = READ_ONCE(b->slots);
		if (!slots)
			continue;
		first = READ_ONCE(b->first_seq);
		score = (u64)slots * (now > first ? now - first : 0);
		if (best == SMR_BAND_NONE || score > best_score) {
			best = i;
			best_score = score;
		}
	}
	WRITE_ONCE(dm->hint, best);
}

static u32 smr_cost_benefit_pick(struct smr_dm *dm)
{
	u32 band = dm->hint;

	dm->hint = SMR_BAND_NONE;
	if (band != SMR_BAND_NONE && dm->bands[band].slots)
		return band;
	return smr_fifo_pick(dm);
}

/* By enum smr_dm_policy: dm->policy indexes it. */
const struct smr_clean_policy smr_clean_policies[] = {
	[SMR_POLICY_FIFO] = {
		.name = "fifo",
		.pick = smr_fifo_pick,
	},
	[SMR_POLICY_GREEDY] = {
		.name = "greedy",
		.pick = smr_greedy_pick,
	},
	[SMR_POLICY_COST_BENEFIT] = {
		.name = "cost-benefit",
		.pick = smr_cost_benefit_pick,
		.scan = smr_cost_benefit_scan,
	},
};

/* The policy named @s (any case) into @v (its enum smr_dm_policy). */
int smr_dm_parse_policy(const char *s, u64 *v)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(smr_clean_policies); i++) {
		if (!strcasecmp(s, smr_clean_policies[i].name)) {
			*v = i;
			return 0;
		}
	}
	return -EINVAL;
}

/* ------------------------------------------------------------------ */
/* The cleaning work.                                                  */
/* ------------------------------------------------------------------ */

void smr_dm_clean_work(struct work_struct *work)
{
	struct smr_dm *dm = container_of(to_delayed_work(work), struct smr_dm,
					 clean_dwork);
	struct smr_target *sc = dm->sc;
	const struct smr_clean_policy *policy;
	enum smr_clean_reason reason;
	bool cleaned_idle = false, scanned = false;
	u64 since = 0;
	u32 band;
	int ret;

	for (;;) {
		spin_lock_irq(&sc->lock);
		if (dm->stop || dm->failed) {
			spin_unlock_irq(&sc->lock);
			break;
		}
		if (dm->fg_wanted) {
			reason = SMR_CLEAN_FOREGROUND;
		} else if (dm->manual) {
			reason = SMR_CLEAN_MANUAL;
		} else if (dm->idle_ms && dm->dirty_bands) {
			unsigned long due = READ_ONCE(dm->last_io) +
				msecs_to_jiffies(dm->idle_ms);

			/* With the timing model: idle once the drive is. */
			if (sc->tm) {
				u64 now = ktime_get_ns(),
				    busy = smr_tm_busy_until(sc->tm);

				if (busy > now &&
				    time_before(due, jiffies + nsecs_to_jiffies(busy - now) +
						msecs_to_jiffies(dm->idle_ms)))
					due = jiffies + nsecs_to_jiffies(busy - now) +
						msecs_to_jiffies(dm->idle_ms);
			}

			if (time_before(jiffies, due)) {
				spin_unlock_irq(&sc->lock);
				queue_delayed_work(dm->clean_wq, &dm->clean_dwork,
						   due - jiffies);
				break;
			}
			reason = SMR_CLEAN_IDLE;
		} else {
			spin_unlock_irq(&sc->lock);
			break;
		}
		policy = &smr_clean_policies[dm->policy];
		if (policy->scan && !scanned) {
			/* Look at every band with interrupts on, then decide. */
			spin_unlock_irq(&sc->lock);
			policy->scan(dm);
			scanned = true;
			continue;
		}
		scanned = false;
		band = policy->pick(dm);
		if (band == SMR_BAND_NONE) {
			/* Nothing left to clean: let any parked write retry. */
			dm->fg_wanted = false;
			dm->manual = false;
			smr_dm_release_parked(sc);
			spin_unlock_irq(&sc->lock);
			queue_work(sc->wq, &sc->commit_work);
			break;
		}
		if (reason == SMR_CLEAN_FOREGROUND)
			dm->fg_wanted = false;	/* the worker asks again */
		spin_unlock_irq(&sc->lock);

		ret = smr_dm_clean_band(sc, band, reason);
		if (ret && ret != -EAGAIN)
			break;
		if (!ret && reason != SMR_CLEAN_FOREGROUND)
			cleaned_idle = true;
		cond_resched();
	}

	spin_lock_irq(&sc->lock);
	if (cleaned_idle && !dm->used) {
		since = dm->since_busy_ms;
		dm->manual = false;
	} else {
		cleaned_idle = false;
	}
	spin_unlock_irq(&sc->lock);
	if (cleaned_idle)
		smr_nl_idle_clean(sc, since);
}
