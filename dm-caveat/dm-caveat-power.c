// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat-power.c: what a power cut (common/smr-power.h) does to a
 * caveat drive. From the cut on nothing reaches the backing device: no
 * commit, no damage journal block, no write, no scramble, no copy of the
 * write cache; what is in flight finishes or not, as on a drive. New and
 * waiting I/O fails, and so does every completion after the cut.
 *
 * What the backing device keeps is what a crash leaves (test_cv_06): the
 * damage of every write that reached the medium was durable before it
 * did (the journal goes first), so the map is never falsely clean; a
 * flushed write is never lost; copies of the write cache that had not
 * reached their homes are lost, as a drive's volatile cache is.
 */
#include "dm-caveat.h"

/* Longest a settle waits for the write cache's copies in flight. */
#define CV_SETTLE_TIMEOUT	(30 * HZ)

/* Any context (the I/O path's countdown): halt, quiet, queue the rest. */
static void cv_power_cut(void *owner)
{
	struct cv_target *sc = owner;

	smr_slots_halt(&sc->md);
	if (sc->tm)
		smr_tm_quiet_now(sc->tm);
	queue_work(system_unbound_wq, &sc->cut_work);
}

/* The model ends what it holds; the worker fails what waits for it. */
static void cv_cut_work(struct work_struct *work)
{
	struct cv_target *sc = container_of(work, struct cv_target, cut_work);

	DMWARN("%s: power cut: writes since the last flush may be lost; I/O fails until the table is loaded again",
	       sc->nl.name);
	if (sc->tm)
		smr_tm_set_quiet(sc->tm, true);
	queue_work(sc->wq, &sc->work);
}

/*
 * The cut work and the worker have run, no copy of the write cache is in
 * flight, and no commit or journal write is under way. Host bios the dm
 * core has in flight are its to wait for (a suspend does).
 */
static int cv_power_settle(void *owner)
{
	struct cv_target *sc = owner;
	int ret = 0;

	flush_work(&sc->cut_work);
	flush_workqueue(sc->wq);
	if (!wait_event_timeout(sc->wc_wait, !atomic_read(&sc->wc_issued),
				CV_SETTLE_TIMEOUT))
		ret = -ETIMEDOUT;
	/* The last copy woke us under the lock (cv_wc_done()). */
	spin_lock_irq(&sc->lock);
	spin_unlock_irq(&sc->lock);
	mutex_lock(&sc->commit_mutex);
	mutex_unlock(&sc->commit_mutex);
	return ret;
}

static const struct smr_power_ops cv_power_ops = {
	.cut = cv_power_cut,
	.settle = cv_power_settle,
};

/* The constructor: the switch is on. */
void cv_power_setup(struct cv_target *sc)
{
	INIT_WORK(&sc->cut_work, cv_cut_work);
	smr_power_init(&sc->power, sc->nl.name, &cv_power_ops, sc);
}
