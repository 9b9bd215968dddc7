// SPDX-License-Identifier: GPL-2.0
/*
 * smr-common: what dm-smr and dm-caveat share, as a library module (as
 * dm-bufio and dm-bio-prison are for their targets). It holds no devices
 * of its own and needs no set-up: the only state across devices is the
 * claim registry (smr-claim.c), one for both targets, so an smr and a
 * caveat drive over one backing device refuse each other.
 *
 * Floors (docs/tree.md draws them): smr-power calls smr-timing and
 * smr-slots (a cut halts the store and quiets the model); smr-timing
 * calls smr-args; smr-faults calls smr-genl and this file
 * (smr_wq_once()). Nothing else here calls another file, and nothing
 * calls into a target: the targets hand in callbacks (smr_slots_ops,
 * smr_power_ops, the fault trace).
 */
#include <linux/module.h>
#include <linux/device-mapper.h>

#include "smr-lib.h"

int smr_wq_once(struct workqueue_struct **wqp, spinlock_t *lock,
		const char *prefix, struct dm_target *ti)
{
	struct workqueue_struct *wq;

	if (*wqp)
		return 0;
	wq = alloc_workqueue("%s%s", WQ_UNBOUND | WQ_MEM_RECLAIM, 1, prefix,
			     dm_table_device_name(ti->table));
	if (!wq)
		return -ENOMEM;
	spin_lock_irq(lock);
	if (!*wqp) {
		*wqp = wq;
		wq = NULL;
	}
	spin_unlock_irq(lock);
	/* Another caller made it meanwhile (two messages at once). */
	if (wq)
		destroy_workqueue(wq);
	return 0;
}
EXPORT_SYMBOL_GPL(smr_wq_once);

MODULE_DESCRIPTION(DM_NAME " library shared by the smr and caveat targets");
MODULE_LICENSE("GPL");
