/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One emulated drive per backing device (common/smr-claim.c).
 *
 * dm lets any number of mapped devices, and any number of targets in one
 * table, open the same backing device: they all hold it with dm's one
 * claim pointer. The models here keep a superblock and metadata on the
 * backing device and their state in memory, so two drives over one
 * backing device would overwrite each other's metadata, and a table that
 * formats while another table of the same device is live wipes a drive
 * that is still committing. A target therefore claims its backing device
 * in its constructor, once its table line is parsed, and releases it in
 * its destructor. Beside a claim only one other claim is allowed: a table
 * of the same mapped device (a reload: dm constructs the new table while
 * the old one is live), and that one may not format.
 *
 * One registry for both targets (it lives in the library module
 * smr-common): an smr drive and a caveat drive over one backing device
 * refuse each other as two drives of one target do.
 */
#ifndef SMR_CLAIM_H
#define SMR_CLAIM_H

#include <linux/device-mapper.h>
#include <linux/dm-ioctl.h>
#include <linux/list.h>
#include <linux/types.h>

struct smr_claim {
	struct list_head node;		/* the module's claims; empty if none */
	dev_t backing;
	struct mapped_device *md;
	struct dm_table *table;
	char name[DM_NAME_LEN];		/* the device's, when it claimed */
};

/*
 * Claim @bdev for @ti's table. Returns 0, or -EBUSY with *@error set and
 * the other device named in the kernel log when another device, another
 * target of the same table, or (with @format) a live table of the same
 * device holds it. Process context; smr_claim_release() undoes it.
 */
int smr_claim_backing(struct smr_claim *c, struct dm_target *ti,
		      struct block_device *bdev, bool format, char **error);
/* Release @c; does nothing if it holds no claim (or is all zero). */
void smr_claim_release(struct smr_claim *c);

#endif /* SMR_CLAIM_H */
