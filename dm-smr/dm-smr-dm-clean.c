// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: the cleaner. It owns when a band is cleaned
 * (foreground when a write finds the cache full, manual on a message,
 * background after idle_ms without host I/O), when background cleaning
 * gives way to host I/O, and the policies that pick the band: one
 * struct smr_clean_policy each, in smr_clean_policies[]. Cleaning a band
 * is dm-smr-dm-rewrite.c's. And the writes that wait for it longer than
 * clean_timeout_ms: they fail.
 */
#include <linux/jiffies.h>
#include <linux/sched.h>

#include "smr-lib.h"
#include "dm-smr-dm.h"
#include "dm-smr-trace.h"

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
 * cost-benefit's score, slots x age, exactly: up to 2^28 slots times an
 * age of up to 2^64 cache writes needs 92 bits, and a product wrapped
 * at 2^64 would rank a long-cold band below young ones. Kept as
 * hi * 2^32 + lo with lo < 2^32 (hi < 2^64: (2^32 - 1)^2 + 2^32 - 1).
 */
struct smr_cb_score {
	u64 hi, lo;
};

static struct smr_cb_score smr_cb_score(u32 slots, u64 age)
{
	u64 lo = (u64)slots * (u32)age;

	return (struct smr_cb_score){
		.hi = (u64)slots * (age >> 32) + (lo >> 32),
		.lo = lo & U32_MAX,
	};
}

static int smr_cb_cmp(struct smr_cb_score a, struct smr_cb_score b)
{
	if (a.hi != b.hi)
		return a.hi < b.hi ? -1 : 1;
	if (a.lo != b.lo)
		return a.lo < b.lo ? -1 : 1;
	return 0;
}

/*
 * cost-benefit: the most slots freed times how long they have been cold
 * (slots x age, age counted in cache writes since the band's oldest
 * slot; compared exactly, smr_cb_score()). Every score moves with every
 * write, so no order by score can be
 * kept; the bands are kept instead in buckets by slot count, powers of
 * two, each oldest first (dm-smr-dm-bands.c). The oldest band of a bucket
 * has the highest age there and at least half the slots of any other, so
 * the best of the buckets' oldest bands scores at least half the best
 * score of all: a pick looks at SMR_CB_BUCKETS bands, whatever the size.
 * Ties go to the lower band number.
 */
static u32 smr_cost_benefit_pick(struct smr_dm *dm)
{
	struct smr_cb_score best_score = { 0, 0 }, score;
	u64 now = dm->next_seq;
	u32 best = SMR_BAND_NONE, k;
	int c;

	for (k = 0; k < SMR_CB_BUCKETS; k++) {
		struct rb_node *n = rb_first_cached(&dm->cb[k]);
		struct smr_band *b;
		u32 band;

		if (!n)
			continue;
		b = rb_entry(n, struct smr_band, cb_node);
		band = b - dm->bands;
		score = smr_cb_score(b->slots,
				     now > b->first_seq ? now - b->first_seq : 0);
		c = smr_cb_cmp(score, best_score);
		if (best == SMR_BAND_NONE || c > 0 || (c == 0 && band < best)) {
			best = band;
			best_score = score;
		}
	}
	return best;
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
	struct smr_dm_target *sc = dm->sc;
	const struct smr_clean_policy *policy;
	enum smr_clean_reason reason;
	bool cleaned_idle = false;
	u64 since = 0, t, pick_ns;
	u32 band;
	int ret;

	for (;;) {
		spin_lock_irq(&sc->d.lock);
		if (dm->stop || dm->failed || smr_power_is_cut(&sc->d.power)) {
			spin_unlock_irq(&sc->d.lock);
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
			if (sc->d.tm) {
				u64 now = ktime_get_ns(),
				    busy = smr_tm_busy_until(sc->d.tm);

				if (busy > now &&
				    time_before(due, jiffies + nsecs_to_jiffies(busy - now) +
						msecs_to_jiffies(dm->idle_ms)))
					due = jiffies + nsecs_to_jiffies(busy - now) +
						msecs_to_jiffies(dm->idle_ms);
			}

			if (time_before(jiffies, due)) {
				spin_unlock_irq(&sc->d.lock);
				queue_delayed_work(dm->clean_wq, &dm->clean_dwork,
						   due - jiffies);
				break;
			}
			reason = SMR_CLEAN_IDLE;
		} else {
			spin_unlock_irq(&sc->d.lock);
			break;
		}
		policy = &smr_clean_policies[dm->policy];
		t = ktime_get_ns();
		band = policy->pick(dm);
		pick_ns = ktime_get_ns() - t;
		if (band == SMR_BAND_NONE) {
			/* Nothing left to clean: let any parked write retry. */
			dm->fg_wanted = false;
			dm->manual = false;
			smr_dm_release_parked(sc);
			spin_unlock_irq(&sc->d.lock);
			queue_work(sc->d.wq, &sc->d.commit_work);
			break;
		}
		if (reason == SMR_CLEAN_FOREGROUND)
			dm->fg_wanted = false;	/* the worker asks again */
		spin_unlock_irq(&sc->d.lock);

		ret = smr_dm_clean_band(sc, band, reason, pick_ns);
		if (ret && ret != -EAGAIN)
			break;
		if (!ret && reason != SMR_CLEAN_FOREGROUND)
			cleaned_idle = true;
		cond_resched();
	}

	spin_lock_irq(&sc->d.lock);
	if (cleaned_idle && !dm->used) {
		since = dm->since_busy_ms;
		dm->manual = false;
	} else {
		cleaned_idle = false;
	}
	spin_unlock_irq(&sc->d.lock);
	if (cleaned_idle)
		smr_nl_idle_clean(&sc->d, since);
}

/* ------------------------------------------------------------------ */
/* Writes that wait for cleaning too long (clean_timeout_ms).          */
/* ------------------------------------------------------------------ */

/* A parked write that waited longer than clean_timeout_ms: fail it. */
void smr_dm_timed_out(struct smr_dm_target *sc, struct bio *bio)
{
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	sector_t sector = dm_target_offset(sc->t.ti, bio->bi_iter.bi_sector);

	if (io->wait_since_ns)
		trace_smr_dm_write_waited(sc->d.label, sector, bio_sectors(bio),
					  io->wait_why,
					  ktime_get_ns() - io->wait_since_ns,
					  -ETIMEDOUT);
	smr_faults_note(&sc->t.faults, SMR_FAULT_CLEAN_TIMEOUT, sector,
			bio_sectors(bio), true);
	DMWARN_LIMIT("%s: write at sector %llu waited for cleaning over %u ms: failed",
		     smr_dm_name(sc), (unsigned long long)sector,
		     READ_ONCE(sc->dm->clean_timeout_ms));
	bio->bi_status = BLK_STS_IOERR;
	bio_endio(bio);
}

/*
 * End the parked writes that have waited clean_timeout_ms, oldest first
 * (the list is in parking order, near enough: a write released by a
 * cleaning and parked again behind a newer one fails when it comes back
 * from the next cleaning, or when the one ahead expires). Each is looked
 * at once: no scan of the list with interrupts off.
 */
void smr_dm_park_work(struct work_struct *work)
{
	struct smr_dm *dm = container_of(to_delayed_work(work), struct smr_dm,
					 park_dwork);
	struct smr_dm_target *sc = dm->sc;
	struct bio_list late;
	struct bio *bio;

	bio_list_init(&late);
	spin_lock_irq(&sc->d.lock);
	while (dm->clean_timeout_ms && (bio = bio_list_peek(&dm->parked))) {
		struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(*io));
		unsigned long t = io->parked_at +
			msecs_to_jiffies(dm->clean_timeout_ms);

		if (time_before(jiffies, t)) {
			queue_delayed_work(dm->park_wq, &dm->park_dwork,
					   t - jiffies);
			break;
		}
		bio_list_add(&late, bio_list_pop(&dm->parked));
		dm->stats.clean_timeouts++;
	}
	spin_unlock_irq(&sc->d.lock);
	while ((bio = bio_list_pop(&late)))
		smr_dm_timed_out(sc, bio);
}

/* No workqueue: the timeout was never set, so no write waits on it. */
void smr_dm_arm_park_timeout(struct smr_dm_target *sc)
{
	if (sc->dm->park_wq)
		mod_delayed_work(sc->dm->park_wq, &sc->dm->park_dwork, 0);
}

/*
 * The workqueue that fails writes parked too long, made once (the
 * constructor, the clean_timeout message), before clean_timeout_ms is set
 * non-zero. Its own: the worker and the cleaner may be what the parked
 * writes wait behind.
 */
int smr_dm_make_park_wq(struct smr_dm_target *sc)
{
	return smr_wq_once(&sc->dm->park_wq, &sc->d.lock, "dm-smr-park-", sc->t.ti);
}
