// SPDX-License-Identifier: GPL-2.0
/*
 * One emulated drive per backing device; see smr-claim.h.
 */
#include <linux/blkdev.h>
#include <linux/module.h>
#include <linux/mutex.h>

#include "smr-claim.h"

static LIST_HEAD(smr_claims);
static DEFINE_MUTEX(smr_claims_lock);

int smr_claim_backing(struct smr_claim *c, struct dm_target *ti,
		      struct block_device *bdev, bool format, char **error)
{
	struct mapped_device *md = dm_table_get_md(ti->table);
	struct smr_claim *o;
	int ret = 0;

	INIT_LIST_HEAD(&c->node);
	/*
	 * The name for messages, looked up now: not under smr_claims_lock,
	 * which a destructor takes with dm's name lock held.
	 */
	if (dm_copy_name_and_uuid(md, c->name, NULL))
		strscpy(c->name, dm_device_name(md), sizeof(c->name));
	c->backing = bdev->bd_dev;
	c->md = md;
	c->table = ti->table;

	mutex_lock(&smr_claims_lock);
	list_for_each_entry(o, &smr_claims, node) {
		if (o->backing != c->backing)
			continue;
		ret = -EBUSY;
		if (o->md != md) {
			DMERR("%s: backing device %pg is in use by device %s",
			      c->name, bdev, o->name);
			*error = "The backing device is in use by another device (named in the kernel log): one emulated drive per backing device";
		} else if (o->table == ti->table) {
			*error = "Two targets of one table cannot share a backing device";
		} else if (format) {
			*error = "Cannot format: a live table of this device uses the backing device; remove the device, then create it with 'format'";
		} else {
			/* A reload of the same device: allowed. */
			ret = 0;
			continue;
		}
		break;
	}
	if (!ret)
		list_add(&c->node, &smr_claims);
	mutex_unlock(&smr_claims_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(smr_claim_backing);

void smr_claim_release(struct smr_claim *c)
{
	/* A zeroed claim (the constructor failed before claiming) holds none. */
	if (!c->node.next)
		return;
	mutex_lock(&smr_claims_lock);
	list_del_init(&c->node);
	mutex_unlock(&smr_claims_lock);
}
EXPORT_SYMBOL_GPL(smr_claim_release);
