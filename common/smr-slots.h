/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Crash-safe metadata blocks, shared by dm-smr and dm-caveat
 * (common/smr-slots.c; the layout is in smr-ondisk.h).
 *
 * A store is N 4 KiB blocks after a superblock. Each block has two slots
 * written alternately, with a generation and a checksum, so a torn or
 * lost write leaves the previous copy valid. The store knows nothing of
 * what a block holds: its owner fills blocks (records out) and takes them
 * back at load (records in) through struct smr_slots_ops.
 *
 * A commit snapshots the dirty blocks under the owner's state lock,
 * flushes the backing device (so everything the snapshot counts as
 * written is durable), writes each block to its other slot and flushes
 * again; only then does a block's current copy change slots. So the
 * metadata never describes data that is not on the medium, and a failed
 * commit leaves its blocks dirty for the next one.
 *
 * Part of the library module smr-common, which both targets use.
 */
#ifndef SMR_SLOTS_H
#define SMR_SLOTS_H

#include <linux/blkdev.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include "smr-ondisk.h"

#define SMR_SLOTS_BATCH		16	/* blocks written per backing flush */

struct smr_slots_ops {
	/*
	 * Fill the records of block @k into @buf, which is zeroed and whose
	 * header the store writes. Called with the owner's state lock held
	 * and interrupts off: no sleeping, no allocation.
	 */
	void (*build)(void *owner, u32 k, void *buf);
	/* Records (header field nr) block @k must hold: checked at load. */
	u32 (*records)(void *owner, u32 k);
	/*
	 * Take back block @k at load (the newest valid copy; nothing is
	 * live yet). @buf is NULL when neither slot is valid and the store
	 * allows that (missing_ok); the owner then keeps its safe default.
	 * A nonzero return fails the load.
	 */
	int (*load)(void *owner, u32 k, const void *buf);
	/*
	 * Optional: put on the backing device the data writes the owner has
	 * acknowledged (a volatile write cache in front of it), before a
	 * commit flushes and records them. May sleep. A nonzero return fails
	 * the commit.
	 */
	int (*data_home)(void *owner);
};

struct smr_slots {
	/* Set by the owner before smr_slots_init(). */
	struct block_device *bdev;
	const char *name;		/* device name, for messages */
	const char *what;		/* what a block is called in them */
	u32 magic;			/* smr_blk_header magic */
	u32 nr_blocks;			/* N */
	bool missing_ok;		/* a block with no valid slot loads as NULL */
	spinlock_t *state_lock;		/* held (irq) while blocks are built */
	const struct smr_slots_ops *ops;
	void *owner;

	/* The store's own state. */
	u64 format_id;
	u64 gen;			/* the newest generation written or read */
	unsigned long *slot_b;		/* per block: current copy in slot B */
	unsigned long *dirty;		/* per block: needs a commit */
	struct page *pages[SMR_SLOTS_BATCH];	/* [0] doubles as the superblock's */
	struct mutex commit_lock;
	/*
	 * The drive lost its power (smr-power.h): no batch is built from
	 * here on, so nothing after the cut reaches the medium; a batch in
	 * flight finishes, as a drive's last write before the power went.
	 */
	bool halt;
};

/* Sectors the superblock and N blocks take, rounded up to 1 MiB. */
sector_t smr_slots_sectors(u32 nr_blocks);
/*
 * The same with @extra_blocks of the owner's own after the slots (they
 * start at smr_slots_end(N), the first sector after the slots).
 */
sector_t smr_slots_sectors_plus(u32 nr_blocks, u32 extra_blocks);
sector_t smr_slots_end(u32 nr_blocks);

/*
 * Any block that starts with struct smr_blk_header, the store's or an
 * owner's own: fill its header; seal it (generation @gen, which seeds its
 * crc); check that it is a sealed block of @magic and @format_id at
 * @index (its nr is the caller's to check).
 */
void smr_blk_header(void *buf, u32 magic, u64 format_id, u32 index, u32 nr);
void smr_blk_seal(void *buf, u64 gen);
bool smr_blk_sealed(void *buf, u32 magic, u64 format_id, u32 index);
int smr_slots_init(struct smr_slots *ss);
void smr_slots_exit(struct smr_slots *ss);
size_t smr_slots_mem_bytes(const struct smr_slots *ss);

/*
 * Block @k changed: the next commit writes it. Any context; an owner that
 * sets dirty bits otherwise (bitmap_set) does so under state_lock.
 */
static inline void smr_slots_mark_dirty(struct smr_slots *ss, u32 k)
{
	set_bit(k, ss->dirty);
}

int smr_slots_commit(struct smr_slots *ss);

/* Stop every commit from now on (-EIO, quietly). Any context. */
static inline void smr_slots_halt(struct smr_slots *ss)
{
	WRITE_ONCE(ss->halt, true);
}
int smr_slots_load(struct smr_slots *ss);
/*
 * A new format: a new format_id (old copies stop counting), generation 0.
 * @write_all: every block is written by the next commit (to slot A);
 * otherwise no block is, and each loads as missing until it is.
 */
void smr_slots_new_format(struct smr_slots *ss, bool write_all);
/* After a new format with write_all: write every block now, quickly. */
int smr_slots_write_all(struct smr_slots *ss);

/* Synchronous I/O of @nr metadata blocks at @sector of the backing device. */
int smr_slots_rw(struct smr_slots *ss, blk_opf_t opf, sector_t sector,
		 struct page **pages, unsigned int nr);

/*
 * The superblock (block 0). Its first fields are common to both formats:
 * magic at 0, crc at 4 (crc32 of the block seeded with the magic, the
 * field 0), version at 8, format_id at 16.
 *
 * smr_sb_open() reads it into pages[0] and says what to do: 1 format (the
 * device is blank, or @format was asked), 0 load (a valid superblock of
 * @magic; version and geometry are the caller's to check), or an error
 * with *@error set (@no_sb where the superblock is not one of @magic).
 * A device blank at the start but holding a file system, partition table
 * or volume further in is refused unless @format.
 */
int smr_sb_open(struct smr_slots *ss, u32 magic, bool format,
		char *no_sb, char **error);
/* Zero the superblock (FUA): a format starts by invalidating the old one. */
int smr_sb_invalidate(struct smr_slots *ss);
/* Seal the superblock in pages[0] with @magic and write it (PREFLUSH|FUA). */
int smr_sb_write(struct smr_slots *ss, u32 magic);

#endif /* SMR_SLOTS_H */
