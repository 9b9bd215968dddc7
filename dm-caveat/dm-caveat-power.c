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

/*
 * After the library's steps (the store halted, the model quiet and what
 * it held ended): the worker fails what waits for it.
 */
static void cv_cut_work(void *owner)
{
	struct cv_target *sc = owner;

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

	flush_workqueue(sc->wq);
	/* cv_wc_endio() touches nothing of sc after its last decrement. */
	if (!wait_var_event_timeout(&sc->wc_issued,
				    !atomic_read(&sc->wc_issued),
				    CV_SETTLE_TIMEOUT))
		ret = -ETIMEDOUT;
	/* A commit under way finishes (none starts: the store is halted). */
	mutex_lock(&sc->commit_mutex);
	mutex_unlock(&sc->commit_mutex);
	return ret;
}

static const struct smr_power_ops cv_power_ops = {
	.cut_work = cv_cut_work,
	.settle = cv_power_settle,
};

/* The constructor: the switch is on. */
void cv_power_setup(struct cv_target *sc)
{
	smr_power_init(&sc->power, sc->nl.name, &cv_power_ops, sc, &sc->md,
		       &sc->tm);
}
