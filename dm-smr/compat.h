/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel API differences, as feature macros. Everything version-dependent
 * is decided here, once; the rest of the code tests SMR_HAVE_* only.
 *
 * 6.1 LTS (Debian 12) is the kernel the project is tested on. Newer
 * kernels moved the zoned model and the open/active zone limits into
 * struct queue_limits (6.9+) and replaced zone append emulation with zone
 * write plugging; those paths compile but are untested.
 */
#ifndef DM_SMR_COMPAT_H
#define DM_SMR_COMPAT_H

#include <linux/version.h>
#include <linux/blkdev.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "dm-smr needs Linux 6.1 or newer"
#endif

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 9, 0)
/* queue_limits.zoned is enum blk_zoned_model; limits live on the gendisk. */
#define SMR_HAVE_ZONED_MODEL_ENUM	1
#define SMR_HAVE_DISK_SET_MAX_OPEN_ZONES 1
#endif

#ifndef CONFIG_BLK_DEV_ZONED
#error "dm-smr needs a kernel built with CONFIG_BLK_DEV_ZONED"
#endif

#endif /* DM_SMR_COMPAT_H */
