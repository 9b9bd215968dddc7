/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-disk formats of every model, in one place (as dm-zoned keeps its
 * in struct dmz_super). All fields little endian; offsets in bytes.
 *
 * Both modules lay the backing device out the same way:
 *
 *   4 KiB block 0          superblock (struct smr_super or struct cv_super)
 *   4 KiB blocks 1..2N     N metadata blocks, each with two slots (A at
 *                          block 1 + 2k, B at 2 + 2k) written alternately;
 *                          each starts with struct smr_blk_header
 *   then (caveat, v2)      the damage journal: J 4 KiB blocks, a ring
 *   data_start (sectors)   the emulated disk, aligned to 1 MiB
 *
 * The slots, the generation and the checksum are common/smr-slots.c's
 * job; what the records after the header mean is each model's:
 *
 *   host-managed      one struct smr_zt_rec per zone
 *   drive-managed     block 0: struct smr_intent_rec; then blocks of
 *                     struct smr_slot_rec (one per cache slot); then
 *                     blocks of __le64 (one clean sequence per band)
 *   caveat            a 32-byte pad, then the valid-block bitmap
 *                     (CV_MD_BITS bits, bit set = valid)
 *
 * A superblock is written last at format, with its magic, over a zeroed
 * one: a crash while formatting leaves a device that reads as blank.
 */
#ifndef SMR_ONDISK_H
#define SMR_ONDISK_H

#include <linux/types.h>

#define SMR_MD_BLOCK_SIZE	4096

/* The header of every metadata block (32 bytes). */
struct smr_blk_header {
	__le32 magic;		/*  0: SMR_ZT_MAGIC or CV_MD_MAGIC */
	__le32 crc;		/*  4: crc32 of the block seeded with gen, this field 0 */
	__le64 gen;		/*  8: commit generation; the newest valid slot wins */
	__le64 format_id;	/* 16: must match the superblock */
	__le32 index;		/* 24: block number k */
	__le32 nr;		/* 28: records (caveat: bits) the block describes */
} __packed;

/* ------------------------------------------------------- dm-smr ------- */

#define SMR_SB_MAGIC		0x64524d53	/* "SMRd" */
#define SMR_ZT_MAGIC		0x745a4d53	/* "SMZt" */
#define SMR_VERSION		1

struct smr_super {
	__le32 magic;		/*   0: SMR_SB_MAGIC, written last at format */
	__le32 crc;		/*   4: crc32 of the 4 KiB block, this field 0 */
	__le32 version;		/*   8: SMR_VERSION */
	__le32 mode;		/*  12: enum smr_mode (1 host-, 2 drive-managed) */
	__le64 format_id;	/*  16: random, identifies this format */
	__le64 dev_sectors;	/*  24: emulated capacity */
	__le64 zone_sectors;	/*  32: zone (band) size */
	__le64 zone_capacity;	/*  40: sequential zone capacity */
	__le32 nr_zones;	/*  48: zones (bands) */
	__le32 nr_conv;		/*  52: conventional zones, at the start */
	__le32 table_blocks;	/*  56: N, metadata blocks (2N slots) */
	__le32 zones_per_block;	/*  60: SMR_ZT_PER_BLOCK */
	__le64 data_start;	/*  64: first data sector on the backing dev */
	__le64 cache_sectors;	/*  72: drive-managed: cache size; else 0 */
	__u8 reserved[4016];	/*  80: zero */
} __packed;

/*
 * Host-managed: persisted zone state. cond is EMPTY, CLOSED, FULL,
 * READONLY or OFFLINE (open zones are persisted as CLOSED, as a drive
 * reports them after a power cycle). dend is the end of durable data
 * (sectors from zone start); the write pointer is 0 for EMPTY, dend for
 * CLOSED, the capacity for FULL.
 */
struct smr_zt_rec {
	__le32 dend;		/* 0 */
	__u8 cond;		/* 4: enum blk_zone_cond */
	__u8 pad[3];		/* 5: zero */
} __packed;

#define SMR_ZT_PER_BLOCK \
	((SMR_MD_BLOCK_SIZE - sizeof(struct smr_blk_header)) / sizeof(struct smr_zt_rec))

/*
 * Drive-managed: one per cache slot; the newest valid copy of a block
 * wins. The block number is 56 bits: its low 32 in lba, the rest in the
 * top 24 bits of flags. Devices under 16 TiB (all that existed before)
 * have those bits zero, so their records read the same.
 */
struct smr_slot_rec {
	__le64 seq;		/* 0: sequence number of the write */
	__le32 lba;		/* 8: device block (4 KiB) it holds, low 32 bits */
	__le32 flags;		/* 12: SMR_SLOT_VALID; bits 8-31: lba bits 32-55 */
} __packed;
#define SMR_SLOT_VALID		1
#define SMR_SLOT_LBA_HI_SHIFT	8

/* Drive-managed: the band rewrite in progress (metadata block 0). */
struct smr_intent_rec {
	__le32 state;		/* 0: SMR_INTENT_* */
	__le32 band;		/* 4 */
	__le64 seq;		/* 8: clean sequence the band gets */
} __packed;
#define SMR_INTENT_NONE		0
#define SMR_INTENT_SPARE_FULL	1	/* the spare band holds @band as of @seq */

#define SMR_SLOTS_PER_BLOCK \
	((SMR_MD_BLOCK_SIZE - sizeof(struct smr_blk_header)) / sizeof(struct smr_slot_rec))
#define SMR_BANDS_PER_BLOCK \
	((SMR_MD_BLOCK_SIZE - sizeof(struct smr_blk_header)) / sizeof(__le64))

/* ----------------------------------------------------- dm-caveat ------ */

#define CV_SB_MAGIC		0x74764163	/* "cAvt" */
#define CV_MD_MAGIC		0x6d764163	/* "cAvm" */
#define CV_JR_MAGIC		0x6a764163	/* "cAvj" */
/*
 * Version 2 added the damage journal after the slots (journal_blocks);
 * version 1 devices have none and load as before (every damage is made
 * durable by a whole commit). Bitmap pages are the same in both.
 */
#define CV_VERSION		2
#define CV_VERSION_NOJOURNAL	1

struct cv_super {
	__le32 magic;		/*   0: CV_SB_MAGIC, written last at format */
	__le32 crc;		/*   4: crc32 of the 4 KiB block, this field 0 */
	__le32 version;		/*   8: CV_VERSION */
	__le32 block_size;	/*  12: bytes */
	__le64 format_id;	/*  16: random, identifies this format */
	__le64 nr_blocks;	/*  24: capacity in blocks */
	__le64 did;		/*  32 */
	__le64 dnor;		/*  40 */
	__le64 unshingled;	/*  48: blocks */
	__le64 data_start;	/*  56: first data sector on the backing dev */
	__le32 md_pages;	/*  64: N, bitmap pages (2N slots) */
	__le32 bits_per_page;	/*  68: CV_MD_BITS */
	__le32 journal_blocks;	/*  72: J (version 2; 0 in version 1) */
	__u8 reserved[4020];	/*  76: zero */
} __packed;

/*
 * A bitmap page: the common header (nr = bits it describes), the page's
 * stamp (__le64 at CV_MD_STAMP: the damage stamp when it was built, so
 * it holds every damage with a stamp up to this one; 0 in pages written
 * by version 1), 24 bytes of zeros, then CV_MD_WORDS little-endian
 * 64-bit words. A page with no valid slot (never written since format,
 * or both copies torn) reads as "every block maybe damaged", the safe
 * state; format therefore writes only the superblock.
 */
#define CV_MD_STAMP		32
#define CV_MD_HDR		64
#define CV_MD_WORDS		((SMR_MD_BLOCK_SIZE - CV_MD_HDR) / 8)	/* 504 */
#define CV_MD_BITS		(CV_MD_WORDS * 64)			/* 32256 */

/*
 * The damage journal (version 2): a ring of J blocks, each written once
 * with FUA by a batch of writes whose damage must be durable before they
 * are issued. Header: struct smr_blk_header with magic CV_JR_MAGIC, gen
 * the highest stamp in the block (it seeds the crc), index the block's
 * place in the ring, nr the records that follow it. A record is one
 * damage: blocks first..first+len-1 made maybe damaged, stamped with the
 * damage sequence number it got in memory. At load a record is applied
 * to each bitmap page it touches whose stamp is lower; a page built
 * after the damage already holds it (and maybe a later rewrite, which
 * replaying would undo). Blocks that are torn or of another format are
 * skipped: the writes they were for were never issued.
 */
struct cv_jr_rec {
	__le64 first;		/*  0: first block damaged */
	__le64 stamp;		/*  8: damage sequence number */
	__le64 len;		/* 16: blocks, at least 1 */
} __packed;

#define CV_JR_RECS \
	((SMR_MD_BLOCK_SIZE - sizeof(struct smr_blk_header)) / sizeof(struct cv_jr_rec))
/*
 * J. With the superblock and the slots of up to 15 bitmap pages (devices
 * up to about 1.9 GiB at 4 KiB blocks) it still ends in the first MiB.
 */
#define CV_JOURNAL_BLOCKS	224
#define CV_JOURNAL_MAX		65536	/* what a superblock may say */

#endif /* SMR_ONDISK_H */
