// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr: the smr targets alive, by table and backing device. The
 * constructor joins, the destructor leaves; a table that would mix modes
 * is refused, and a new drive-managed table's first resume retries the
 * commit its predecessor on the same backing device could not make.
 */
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

int smr_join_table(struct smr_target *sc)
{
	struct smr_target *other;
	int ret = 0;

	mutex_lock(&smr_tables_lock);
	list_for_each_entry(other, &smr_tables, table_node) {
		if (other->ti->table == sc->ti->table && other->mode != sc->mode) {
			ret = -EINVAL;
			break;
		}
	}
	if (!ret)
		list_add(&sc->table_node, &smr_tables);
	mutex_unlock(&smr_tables_lock);
	return ret;
}

/*
 * A new table's first resume (drive-managed): if the table it replaces
 * failed its commit at suspend, that table's memory is newer than the
 * disk. dm destroys the old table only after the new one resumed, so it
 * is still here: retry its commit before the new table reads the disk.
 * Returns the commit's error; the caller then refuses to resume rather
 * than read a stale state.
 */
int smr_commit_predecessor(struct smr_target *sc)
{
	struct smr_target *old;
	int ret = 0;

	mutex_lock(&smr_tables_lock);
	list_for_each_entry(old, &smr_tables, table_node) {
		if (old == sc || !old->commit_pending ||
		    old->bdev->bd_dev != sc->bdev->bd_dev)
			continue;
		/* Its power was cut (or cache failed): what it did not commit is lost. */
		if (smr_drive_lost(old))
			break;
		ret = smr_md_commit(old);
		if (!ret)
			old->commit_pending = false;
		break;
	}
	mutex_unlock(&smr_tables_lock);
	return ret;
}

void smr_leave_table(struct smr_target *sc)
{
	mutex_lock(&smr_tables_lock);
	list_del_init(&sc->table_node);
	mutex_unlock(&smr_tables_lock);
}
