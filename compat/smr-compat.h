/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences for dm-smr and dm-caveat, decided once, here.
 *
 * generated/config.h is written by compat/probe.sh (run by the top-level
 * Makefile before every build, DKMS included): one HAVE_* macro per
 * snippet in compat/probes/ that compiled against the kernel being built
 * for. The code tests those macros, never LINUX_VERSION_CODE, because
 * distributions backport (Debian's 6.1 has the 6.9 dm_io() prototype).
 * docs/dm-smr.rst, "Kernel differences", says what a user sees differ.
 */
#ifndef SMR_COMPAT_H
#define SMR_COMPAT_H

#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/dm-io.h>
#include <linux/hrtimer.h>
#include <linux/ioprio.h>
#include <linux/workqueue.h>

#include "generated/config.h"

#ifndef HAVE_CANARY
#error "compat/generated/config.h is not a probe result: run make from the top-level directory"
#endif
#ifndef CONFIG_BLK_DEV_ZONED
#error "dm-smr needs a kernel built with CONFIG_BLK_DEV_ZONED"
#endif

/* May the table write? (6.5 replaced fmode_t with blk_mode_t.) */
static inline bool smr_table_writable(struct dm_target *ti)
{
#ifdef HAVE_BLK_OPEN_WRITE
	return dm_table_get_mode(ti->table) & BLK_OPEN_WRITE;
#else
	return dm_table_get_mode(ti->table) & FMODE_WRITE;
#endif
}

/*
 * The unbound system workqueue: 6.17 named it system_dfl_wq, and newer
 * kernels warn once when work is queued under the old name (7.3:
 * "enqueued on deprecated workqueue").
 */
static inline struct workqueue_struct *smr_unbound_wq(void)
{
#ifdef HAVE_SYSTEM_DFL_WQ
	return system_dfl_wq;
#else
	return system_unbound_wq;
#endif
}

/* A timer with its callback (6.13 added hrtimer_setup(), 6.15 removed hrtimer_init()). */
static inline void smr_hrtimer_setup(struct hrtimer *t,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#ifdef HAVE_HRTIMER_SETUP
	hrtimer_setup(t, fn, clock, mode);
#else
	hrtimer_init(t, clock, mode);
	t->function = fn;
#endif
}

/* Synchronous dm_io() (7.x added the unsupported-op bits). */
static inline int smr_dm_io_call(struct dm_io_request *req, unsigned int n,
			    struct dm_io_region *where,
			    unsigned long *error_bits)
{
#if defined(HAVE_DM_IO_UNSUP_BITS)
	return dm_io(req, n, where, error_bits, NULL, IOPRIO_DEFAULT);
#elif defined(HAVE_DM_IO_IOPRIO)
	return dm_io(req, n, where, error_bits, IOPRIO_DEFAULT);
#else
	return dm_io(req, n, where, error_bits);
#endif
}

/*
 * Completion callback of an asynchronous dm_io() (7.x passes the
 * unsupported-op bits too): SMR_IO_NOTIFY(fn, error, context) { ... }
 */
#ifdef HAVE_IO_NOTIFY_UNSUP
#define SMR_IO_NOTIFY(fn, err, ctx) \
	void fn(unsigned long err, unsigned long unsup_bits, void *ctx)
#else
#define SMR_IO_NOTIFY(fn, err, ctx) void fn(unsigned long err, void *ctx)
#endif

/*
 * Queue limits of a device that is not zoned (drive-managed mode stacks
 * over a disk that may report more than it keeps).
 */
static inline void smr_limits_clear_zoned(struct queue_limits *lim)
{
#if defined(HAVE_BLK_FEAT_ZONED)
	lim->features &= ~BLK_FEAT_ZONED;
#elif defined(HAVE_QL_ZONED_ENUM)
	lim->zoned = BLK_ZONED_NONE;
#else
	lim->zoned = false;
#endif
}

#endif /* SMR_COMPAT_H */
