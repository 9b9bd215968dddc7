// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr: the smr targets alive, by table and backing device. The
 * constructor joins, the destructor leaves; a table that would mix modes
 * is refused, and a new drive-managed table's first resume retries the
 * commit its predecessor on the same backing device could not make.
 */
#include <linux/wait.h>

#include "dm-smr.h"

/*
 * The smr targets constructed and not yet destroyed, with the table each
 * belongs to. A table may hold several host-managed smr targets (each
 * maps a zoned device) or several drive-managed ones, but not both: dm
 * makes a table zoned if any target is, and a drive-managed target has no
 * zones to report. dm does refuse such a table, but late and with an
 * error that names neither target nor cause ("Count <disk> zones failed"
 * since 6.11, a failed zone revalidation before), so refuse it here.
 * Targets are constructed one after the other under the table's load,
 * so the second target of a table always sees the first.
 */
static LIST_HEAD(smr_tables);
static DEFINE_MUTEX(smr_tables_lock);
static DECLARE_WAIT_QUEUE_HEAD(smr_tables_unpinned);

int smr_join_table(struct smr_table *t)
{
	struct smr_table *other;
	int ret = 0;

	mutex_lock(&smr_tables_lock);
	list_for_each_entry(other, &smr_tables, table_node) {
		if (other->ti->table == t->ti->table && other->mode != t->mode) {
			ret = -EINVAL;
			break;
		}
	}
	if (!ret)
		list_add(&t->table_node, &smr_tables);
	mutex_unlock(&smr_tables_lock);
	return ret;
}

/*
 * A new table's first resume (drive-managed), before it reads the disk,
 * against the tables it replaces on the same backing device. dm destroys
 * the old table only after the new one resumed, so it is still here.
 *  - One whose power was cut (or whose write cache failed): this table is
 *    the power coming back. What that table sent before the cut may still
 *    be in flight, its write cache's destages among them; landing after
 *    this table hands out the same cache slots, they would overwrite data
 *    acknowledged since. Wait for them (bounded: SMR_SETTLE_TIMEOUT for
 *    each step), once: a settled table is not waited for again (by the
 *    tables of another device over the same backing; one device's old
 *    table is destroyed after its successor's resume, whatever it
 *    returned).
 *  - One that failed its commit at suspend: its memory is newer than the
 *    disk; retry the commit.
 * Both run without smr_tables_lock, which every smr table takes to load
 * and to go: the old table is pinned meanwhile (smr_leave_table() waits
 * for its pins), and the list is walked again after.
 * Returns 0, the commit's error, or -EBUSY when the old table's I/O is
 * still in flight; the caller then refuses to resume rather than read a
 * stale state.
 */
int smr_commit_predecessor(struct smr_dm_target *sc)
{
	struct smr_dm_target *old;
	struct smr_table *t;
	bool lost;
	int ret;

	mutex_lock(&smr_tables_lock);
again:
	list_for_each_entry(t, &smr_tables, table_node) {
		if (t == &sc->t || t->mode != SMR_MODE_DRIVE_MANAGED)
			continue;
		/* The table's dm_dev is set before it joins; its drive's bdev later. */
		if (t->dev->bdev->bd_dev != sc->t.dev->bdev->bd_dev)
			continue;
		old = smr_dmt(t);
		lost = smr_drive_lost(&old->d);
		if (lost ? t->table_settled : !old->commit_pending)
			continue;
		WRITE_ONCE(t->table_pins, t->table_pins + 1);
		mutex_unlock(&smr_tables_lock);
		/* What it did not commit is lost; what it sent lands. */
		ret = lost ? smr_power_settle(&old->d.power) :
			smr_md_commit(&old->d);
		mutex_lock(&smr_tables_lock);
		if (!ret) {
			if (lost)
				t->table_settled = true;
			else
				old->commit_pending = false;
		}
		WRITE_ONCE(t->table_pins, t->table_pins - 1);
		if (!t->table_pins)
			wake_up_all(&smr_tables_unpinned);
		if (ret) {
			if (lost) {
				DMERR("%s: the previous table lost its power (or its write cache failed) and I/O it issued is still in flight to the backing device; not resuming over it, try again",
				      sc->t.name);
				ret = -EBUSY;
			} else {
				DMERR("%s: the previous table's state is not on disk (its commit failed again: %d); not resuming over it",
				      sc->t.name, ret);
			}
			goto out;
		}
		/* The list may have changed meanwhile. */
		goto again;
	}
	ret = 0;
out:
	mutex_unlock(&smr_tables_lock);
	return ret;
}

/*
 * smr_free(), first: a successor working on this table (pinned, see
 * smr_commit_predecessor()) finishes before anything it uses goes. Its
 * work is bounded, so this wait is too. No pin is taken once the table
 * is off the list. The destructor's own last commit and flushes come
 * before, with the table still listed: a successor resuming meanwhile
 * then commits or settles it too rather than read the disk under them.
 */
void smr_leave_table(struct smr_table *t)
{
	mutex_lock(&smr_tables_lock);
	while (t->table_pins) {
		mutex_unlock(&smr_tables_lock);
		wait_event(smr_tables_unpinned, !READ_ONCE(t->table_pins));
		mutex_lock(&smr_tables_lock);
	}
	list_del_init(&t->table_node);
	mutex_unlock(&smr_tables_lock);
}
