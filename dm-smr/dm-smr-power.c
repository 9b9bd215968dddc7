// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr-power.c: what a power cut (common/smr-power.h) does to each
 * mode's drive. A drive whose power is cut issues nothing more to the
 * backing device and commits nothing more; what it has in flight
 * finishes or not, as on a drive. The backing device then holds the
 * state a drive has after losing power, and the next load reads it
 * (docs/crash-testing.md):
 *
 *  - host-managed (the engine): write pointers as of the last commit,
 *    which every flush, FUA write, reset and finish makes (a reset or
 *    finish is acknowledged once durable); data past them is not read.
 *    Conventional zones are written in place: an unflushed overwrite may
 *    or may not be there.
 *  - drive-managed (the table): the cache index as of the last commit
 *    (flush, FUA, a cleaning's steps); cache writes since are lost.
 *    Sequential bypass writes go to their band in place: they may or may
 *    not be there. A cleaning cut between its steps is finished by the
 *    next load from its durable intent.
 *  - with write_cache_kib (dm-smr-wc.c), in either mode: writes the cache
 *    had not sent home are lost; the ones it had sent may or may not be
 *    there. The overwrites above are then lost, not "may or may not".
 *
 * In both, a write acknowledged before the last successful flush is
 * never lost, and a block reads back either its old data or what a write
 * acknowledged (or in flight) since that flush wrote.
 *
 * The library does the steps every model shares (common/smr-power.h):
 * it halts the metadata store, makes the timing model quiet and, in
 * process context, ends what the model holds. What is this driver's:
 * the write cache sends nothing more (halt), the mode's worker fails what
 * waits for it (cut_work), and the settle waits for what the mode has in
 * flight. Completions after the cut fail too (dm-smr-hm.c, dm-smr-dm.c).
 */
#include "dm-smr-dm.h"

/* Longest a settle waits for I/O issued before the cut. */
#define SMR_SETTLE_TIMEOUT	(30 * HZ)

/* Either mode: what the write cache holds is lost; it sends nothing more. */
static void smr_power_halt(void *owner)
{
	struct smr_drive *d = owner;

	if (d->wc)
		smr_wc_cut(d->wc);
}

/* ---------------------------------------------------------- host-managed */

/* The commit worker fails what waits for it: its commit fails. */
static void smr_hm_cut_work(void *owner)
{
	struct smr_zoned *zc = smr_zoned_of(owner);

	queue_work(zc->d.wq, &zc->d.commit_work);
}

/*
 * After a cut: the cut work has run (smr_power_settle()), no host bio is
 * in flight (each holds its clone's backing I/O, and the deferred ones
 * wait for the worker, whose commit fails at once), and no commit is
 * between its batches. The backing device then holds what it keeps.
 * Bounded by the backing device's I/O in flight and SMR_SETTLE_TIMEOUT.
 */
static int smr_hm_power_settle(void *owner)
{
	struct smr_zoned *zc = smr_zoned_of(owner);

	/* smr_hm_end() wakes this without touching zc after its decrement. */
	if (!wait_var_event_timeout(&zc->inflight, !atomic_read(&zc->inflight),
				    SMR_SETTLE_TIMEOUT))
		return -ETIMEDOUT;
	/* A commit under way finishes its batch (none starts: halted). */
	mutex_lock(&zc->d.md.commit_lock);
	mutex_unlock(&zc->d.md.commit_lock);
	/* Destages the write cache sent before the cut. */
	return zc->d.wc ? smr_wc_settle(zc->d.wc) : 0;
}

static const struct smr_power_ops smr_hm_power_ops = {
	.halt = smr_power_halt,
	.cut_work = smr_hm_cut_work,
	.settle = smr_hm_power_settle,
};

/* The engine's switch, on (its creation). */
void smr_hm_power_setup(struct smr_zoned *zc)
{
	smr_power_init(&zc->d.power, zc->d.label, &smr_hm_power_ops, &zc->d,
		       &zc->d.md, &zc->d.tm);
}

/* --------------------------------------------------------- drive-managed */

/*
 * Writes waiting for the cache or for a cleaning go back to the worker,
 * which fails them (smr_dm_write()); the cleaner stops at its next step.
 */
static void smr_dm_cut_work(void *owner)
{
	struct smr_dm_target *sc = smr_dmt_of(owner);

	spin_lock_irq(&sc->d.lock);
	smr_dm_release_parked(sc);
	spin_unlock_irq(&sc->d.lock);
	queue_work(sc->d.wq, &sc->d.commit_work);
}

/*
 * After a cut and its cut work: the worker and the cleaner are done, and
 * no commit is between its batches. Host bios the dm core has in flight
 * to the backing device are its to wait for: a suspend does (the reload
 * that brings the power back suspends first).
 */
static int smr_dm_power_settle(void *owner)
{
	struct smr_dm_target *sc = smr_dmt_of(owner);

	flush_workqueue(sc->d.wq);
	flush_delayed_work(&sc->dm->clean_dwork);
	flush_workqueue(sc->d.wq);
	mutex_lock(&sc->d.md.commit_lock);
	mutex_unlock(&sc->d.md.commit_lock);
	return sc->d.wc ? smr_wc_settle(sc->d.wc) : 0;
}

static const struct smr_power_ops smr_dm_power_ops = {
	.halt = smr_power_halt,
	.cut_work = smr_dm_cut_work,
	.settle = smr_dm_power_settle,
};

/* A drive-managed table's switch, on (its constructor). */
void smr_dm_power_setup(struct smr_dm_target *sc)
{
	smr_power_init(&sc->d.power, sc->d.label, &smr_dm_power_ops, &sc->d,
		       &sc->d.md, &sc->d.tm);
}
