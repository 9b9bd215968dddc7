/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers of the library module smr-common (smr-lib.c) that the
 * targets and the rest of common/ share.
 */
#ifndef SMR_LIB_H
#define SMR_LIB_H

#include <linux/device-mapper.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

/*
 * A workqueue made on first use, for work a table may never need (a
 * fault's delay, a clean timeout), so a table that does not use it has
 * no worker thread of it. Process context (a constructor, a message);
 * of two callers at once one makes it, the other's is destroyed. Named
 * @prefix and the table's device ("253:0"); WQ_MEM_RECLAIM, since the
 * work ends host I/O; WQ_UNBOUND, since none wants a CPU (and since
 * WQ_PERCPU appeared, 7.x, __alloc_workqueue() warns when a caller names
 * neither). Published in *@wqp under @lock,
 * the lock under which readers see the setting that makes them use it.
 * Returns 0 (made now or before) or -ENOMEM.
 */
int smr_wq_once(struct workqueue_struct **wqp, spinlock_t *lock,
		const char *prefix, struct dm_target *ti);

#endif /* SMR_LIB_H */
