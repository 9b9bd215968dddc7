/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smr-foreign.h - is a backing device whose first 4 KiB are zero really
 * blank? Shared by dm-smr and dm-caveat, which format such a device
 * without being asked to.
 *
 * Some formats leave the first 4 KiB zero and put their signature further
 * in; formatting over them would destroy a RAID member, a pool or a file
 * system. The ones looked for (offsets in bytes from the device start):
 *   - Linux md, superblock 1.2: magic 0xa92b4efc (le32) at 4096;
 *   - bcache: its 16-byte magic at 4096 + 24;
 *   - btrfs: "_BHRfS_M" at 65536 + 64;
 *   - ZFS: uberblocks (magic 0x00bab10c, either byte order) at two or
 *     more 1 KiB steps of the uberblock ring of vdev label 0, 128..256
 *     KiB (a pool writes one per transaction group; one hit alone could
 *     be a counter in our own interrupted format's tables).
 * What starts within the first 4 KiB (ext2/3/4, XFS, f2fs, LVM2, LUKS,
 * swap, GPT, MBR, a dm-smr or dm-caveat superblock) makes them non-zero
 * and is refused by the callers anyway.
 *
 * Called from a constructor only (it sleeps).
 */
#ifndef SMR_FOREIGN_H
#define SMR_FOREIGN_H

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/highmem.h>
#include <linux/string.h>

#define SMR_FOREIGN_BLOCK	4096

static inline int smr_foreign_read(struct block_device *bdev, u64 pos,
				   struct page *page)
{
	struct bio_vec bv;
	struct bio bio;
	int ret;

	bio_init(&bio, bdev, &bv, 1, REQ_OP_READ);
	bio.bi_iter.bi_sector = pos >> SECTOR_SHIFT;
	__bio_add_page(&bio, page, SMR_FOREIGN_BLOCK, 0);
	ret = submit_bio_wait(&bio);
	bio_uninit(&bio);
	return ret;
}

/*
 * Returns the name of the format found, NULL if none, or an ERR_PTR if a
 * read failed. @page: a scratch page. A device too small to hold a
 * signature's block is not looked at there.
 */
static inline const char *smr_foreign_signature(struct block_device *bdev,
						 struct page *page)
{
	static const u8 bcache_magic[16] = {
		0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca,
		0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
	};
	u64 size = bdev_nr_bytes(bdev);
	const u8 *p = page_address(page);
	int ret, i, uberblocks = 0;
	u64 pos;

	if (size >= 4096 + SMR_FOREIGN_BLOCK) {
		ret = smr_foreign_read(bdev, 4096, page);
		if (ret)
			return ERR_PTR(ret);
		if (le32_to_cpup((const __le32 *)p) == 0xa92b4efc)
			return "a Linux md (RAID) member, superblock 1.2";
		if (!memcmp(p + 24, bcache_magic, sizeof(bcache_magic)))
			return "a bcache device";
	}
	if (size >= 65536 + SMR_FOREIGN_BLOCK) {
		ret = smr_foreign_read(bdev, 65536, page);
		if (ret)
			return ERR_PTR(ret);
		if (!memcmp(p + 64, "_BHRfS_M", 8))
			return "a btrfs file system";
	}
	for (pos = 131072; pos < 262144 && pos + SMR_FOREIGN_BLOCK <= size;
	     pos += SMR_FOREIGN_BLOCK) {
		ret = smr_foreign_read(bdev, pos, page);
		if (ret)
			return ERR_PTR(ret);
		for (i = 0; i < SMR_FOREIGN_BLOCK; i += 1024) {
			/* Page-aligned, so 1 KiB steps are aligned too. */
			if (le64_to_cpup((const __le64 *)(p + i)) == 0x00bab10cULL ||
			    be64_to_cpup((const __be64 *)(p + i)) == 0x00bab10cULL)
				uberblocks++;
		}
		if (uberblocks >= 2)
			return "a ZFS vdev";
	}
	return NULL;
}

#endif /* SMR_FOREIGN_H */
