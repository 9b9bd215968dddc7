// SPDX-License-Identifier: GPL-2.0
/*
 * Crash-safe metadata blocks in two alternating slots, and the superblock
 * steps both formats share. The protocol is described in smr-slots.h,
 * the layout in smr-ondisk.h. Compiled into dm-smr and dm-caveat.
 */
#include <linux/bitmap.h>
#include <linux/crc32.h>
#include <linux/device-mapper.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "smr-foreign.h"
#include "smr-slots.h"

#define SMR_SLOTS_BLOCK_SECTORS	(SMR_MD_BLOCK_SIZE >> SECTOR_SHIFT)
#define SMR_SLOTS_ALIGN_SECTORS	2048	/* data starts on a 1 MiB boundary */

sector_t smr_slots_end(u32 nr_blocks)
{
	return (1 + 2 * (sector_t)nr_blocks) * SMR_SLOTS_BLOCK_SECTORS;
}
EXPORT_SYMBOL_GPL(smr_slots_end);

sector_t smr_slots_sectors_plus(u32 nr_blocks, u32 extra_blocks)
{
	return round_up(smr_slots_end(nr_blocks) +
			(sector_t)extra_blocks * SMR_SLOTS_BLOCK_SECTORS,
			SMR_SLOTS_ALIGN_SECTORS);
}
EXPORT_SYMBOL_GPL(smr_slots_sectors_plus);

sector_t smr_slots_sectors(u32 nr_blocks)
{
	return smr_slots_sectors_plus(nr_blocks, 0);
}
EXPORT_SYMBOL_GPL(smr_slots_sectors);

/* Block @k, slot @b (0 = A, 1 = B). */
static sector_t smr_slots_sector(u32 k, int b)
{
	return (1 + 2 * (sector_t)k + b) * SMR_SLOTS_BLOCK_SECTORS;
}

int smr_slots_init(struct smr_slots *ss)
{
	int i;

	mutex_init(&ss->commit_lock);
	/* Large for a large device: not kmalloc's bitmap_zalloc(). */
	ss->slot_b = kvcalloc(BITS_TO_LONGS(ss->nr_blocks), sizeof(long),
			      GFP_KERNEL);
	ss->dirty = kvcalloc(BITS_TO_LONGS(ss->nr_blocks), sizeof(long),
			     GFP_KERNEL);
	if (!ss->slot_b || !ss->dirty)
		return -ENOMEM;
	for (i = 0; i < SMR_SLOTS_BATCH; i++) {
		ss->pages[i] = alloc_page(GFP_KERNEL);
		if (!ss->pages[i])
			return -ENOMEM;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(smr_slots_init);

/* Safe on a store whose init failed part way, or never ran. */
void smr_slots_exit(struct smr_slots *ss)
{
	int i;

	for (i = 0; i < SMR_SLOTS_BATCH; i++) {
		if (ss->pages[i])
			__free_page(ss->pages[i]);
		ss->pages[i] = NULL;
	}
	kvfree(ss->slot_b);
	kvfree(ss->dirty);
	ss->slot_b = ss->dirty = NULL;
}
EXPORT_SYMBOL_GPL(smr_slots_exit);

size_t smr_slots_mem_bytes(const struct smr_slots *ss)
{
	return 2 * BITS_TO_LONGS(ss->nr_blocks) * sizeof(long) +
		SMR_SLOTS_BATCH * PAGE_SIZE;
}
EXPORT_SYMBOL_GPL(smr_slots_mem_bytes);

int smr_slots_rw(struct smr_slots *ss, blk_opf_t opf, sector_t sector,
		 struct page **pages, unsigned int nr)
{
	struct bio *bio;
	unsigned int i;
	int ret;

	bio = bio_alloc(ss->bdev, nr, opf | REQ_SYNC | REQ_META, GFP_NOIO);
	bio->bi_iter.bi_sector = sector;
	for (i = 0; i < nr; i++)
		__bio_add_page(bio, pages[i], SMR_MD_BLOCK_SIZE, 0);
	ret = submit_bio_wait(bio);
	bio_put(bio);
	return ret;
}
EXPORT_SYMBOL_GPL(smr_slots_rw);

static u32 smr_blk_crc(const void *buf, u64 gen)
{
	return crc32_le((u32)gen, buf, SMR_MD_BLOCK_SIZE);
}

void smr_blk_header(void *buf, u32 magic, u64 format_id, u32 index, u32 nr)
{
	struct smr_blk_header *hdr = buf;

	hdr->magic = cpu_to_le32(magic);
	hdr->format_id = cpu_to_le64(format_id);
	hdr->index = cpu_to_le32(index);
	hdr->nr = cpu_to_le32(nr);
}
EXPORT_SYMBOL_GPL(smr_blk_header);

void smr_blk_seal(void *buf, u64 gen)
{
	struct smr_blk_header *hdr = buf;

	hdr->gen = cpu_to_le64(gen);
	hdr->crc = 0;
	hdr->crc = cpu_to_le32(smr_blk_crc(buf, gen));
}
EXPORT_SYMBOL_GPL(smr_blk_seal);

bool smr_blk_sealed(void *buf, u32 magic, u64 format_id, u32 index)
{
	struct smr_blk_header *hdr = buf;
	u32 crc = le32_to_cpu(hdr->crc);
	bool ok;

	if (le32_to_cpu(hdr->magic) != magic ||
	    le64_to_cpu(hdr->format_id) != format_id ||
	    le32_to_cpu(hdr->index) != index)
		return false;
	hdr->crc = 0;
	ok = smr_blk_crc(buf, le64_to_cpu(hdr->gen)) == crc;
	hdr->crc = cpu_to_le32(crc);
	return ok;
}
EXPORT_SYMBOL_GPL(smr_blk_sealed);

/* State lock held: block @k into @buf, header and records, not sealed. */
static void smr_slots_build(struct smr_slots *ss, u32 k, void *buf)
{
	memset(buf, 0, SMR_MD_BLOCK_SIZE);
	ss->ops->build(ss->owner, k, buf);
	smr_blk_header(buf, ss->magic, ss->format_id, k,
		       ss->ops->records(ss->owner, k));
}

/*
 * Make every change marked so far durable. Callable from any process
 * context (a worker, a message, suspend); commits are serialised.
 */
int smr_slots_commit(struct smr_slots *ss)
{
	u32 idx[SMR_SLOTS_BATCH];
	unsigned int n, i;
	unsigned long k = 0;
	int ret;

	mutex_lock(&ss->commit_lock);
	do {
		if (READ_ONCE(ss->halt)) {
			/* Power cut: what is not durable yet never will be. */
			mutex_unlock(&ss->commit_lock);
			return -EIO;
		}
		/*
		 * The next batch's blocks, from where the last batch ended,
		 * found before taking the state lock: searching the bitmap
		 * under it would do so with interrupts off, over 676,000 bits
		 * for a large drive-managed cache. Only a commit clears dirty
		 * bits, and it holds commit_lock, so a bit seen set here is
		 * still set below. A block marked dirty behind the search
		 * once the commit has begun is the next commit's.
		 */
		for (n = 0, k = find_next_bit(ss->dirty, ss->nr_blocks, k);
		     k < ss->nr_blocks && n < SMR_SLOTS_BATCH;
		     k = find_next_bit(ss->dirty, ss->nr_blocks, k + 1))
			idx[n++] = k;
		spin_lock_irq(ss->state_lock);
		for (i = 0; i < n; i++) {
			smr_slots_build(ss, idx[i], page_address(ss->pages[i]));
			clear_bit(idx[i], ss->dirty);
		}
		spin_unlock_irq(ss->state_lock);

		/* Data the snapshot counts as written must be durable first. */
		ret = ss->ops->data_home ? ss->ops->data_home(ss->owner) : 0;
		if (!ret)
			ret = blkdev_issue_flush(ss->bdev);
		if (ret)
			goto fail;
		if (!n)
			break;

		for (i = 0; i < n; i++) {
			int b = !test_bit(idx[i], ss->slot_b);

			smr_blk_seal(page_address(ss->pages[i]), ++ss->gen);
			ret = smr_slots_rw(ss, REQ_OP_WRITE,
					   smr_slots_sector(idx[i], b),
					   &ss->pages[i], 1);
			if (ret)
				goto fail;
		}
		/*
		 * Each batch is made durable before the next one is built,
		 * and only then does each block's current copy change slots:
		 * until the flush succeeds, the other slot still holds the
		 * last durable copy, and the block stays dirty.
		 */
		ret = blkdev_issue_flush(ss->bdev);
		if (ret)
			goto fail;
		for (i = 0; i < n; i++)
			change_bit(idx[i], ss->slot_b);
	} while (n == SMR_SLOTS_BATCH);
	mutex_unlock(&ss->commit_lock);
	return 0;

fail:
	/*
	 * Whatever was not made durable is retried by the next commit. Under
	 * the state lock: owners may set dirty bits with non-atomic bitmap
	 * operations under it.
	 */
	spin_lock_irq(ss->state_lock);
	for (i = 0; i < n; i++)
		set_bit(idx[i], ss->dirty);
	spin_unlock_irq(ss->state_lock);
	mutex_unlock(&ss->commit_lock);
	DMERR_LIMIT("%s: metadata commit failed: %d", ss->name, ret);
	return ret;
}
EXPORT_SYMBOL_GPL(smr_slots_commit);

/*
 * Write every block of a new format at once, after smr_slots_new_format()
 * with write_all: slot A of each block as built, slot B zeroed, so that a
 * bio covers both slots of SMR_SLOTS_BATCH / 2 blocks, and a single flush
 * at the end. A commit would write one block per bio and flush twice per
 * SMR_SLOTS_BATCH blocks, which is the right price for a live device but
 * buys nothing here: the superblock is invalid until the format is done,
 * so a crash part way leaves a blank device whatever was written. On an
 * error the blocks stay dirty and a commit writes them again.
 */
int smr_slots_write_all(struct smr_slots *ss)
{
	const u32 per_io = SMR_SLOTS_BATCH / 2;
	struct page *pv[SMR_SLOTS_BATCH];
	u32 k, j, n;
	int ret = 0;

	mutex_lock(&ss->commit_lock);
	for (k = 0; k < ss->nr_blocks; k += n) {
		n = min(per_io, ss->nr_blocks - k);
		spin_lock_irq(ss->state_lock);
		for (j = 0; j < n; j++)
			smr_slots_build(ss, k + j, page_address(ss->pages[j]));
		spin_unlock_irq(ss->state_lock);
		for (j = 0; j < n; j++) {
			smr_blk_seal(page_address(ss->pages[j]), ++ss->gen);
			pv[2 * j] = ss->pages[j];
			pv[2 * j + 1] = ZERO_PAGE(0);
		}
		ret = smr_slots_rw(ss, REQ_OP_WRITE, smr_slots_sector(k, 0),
				   pv, 2 * n);
		if (ret)
			goto out;
		cond_resched();
	}
	ret = blkdev_issue_flush(ss->bdev);
	if (ret)
		goto out;
	/* Every current copy is in slot A now, and nothing is pending. */
	spin_lock_irq(ss->state_lock);
	bitmap_zero(ss->slot_b, ss->nr_blocks);
	bitmap_zero(ss->dirty, ss->nr_blocks);
	spin_unlock_irq(ss->state_lock);
out:
	mutex_unlock(&ss->commit_lock);
	if (ret)
		DMERR_LIMIT("%s: writing the new format's %s failed: %d",
			    ss->name, ss->what, ret);
	return ret;
}
EXPORT_SYMBOL_GPL(smr_slots_write_all);

void smr_slots_new_format(struct smr_slots *ss, bool write_all)
{
	ss->format_id = get_random_u64();
	ss->gen = 0;
	if (write_all) {
		/* The first commit goes to slot A. */
		bitmap_fill(ss->slot_b, ss->nr_blocks);
		bitmap_fill(ss->dirty, ss->nr_blocks);
	} else {
		bitmap_zero(ss->slot_b, ss->nr_blocks);
		bitmap_zero(ss->dirty, ss->nr_blocks);
	}
}
EXPORT_SYMBOL_GPL(smr_slots_new_format);

/* Is @buf a sealed copy of block @k of this format? */
static bool smr_slots_valid(struct smr_slots *ss, void *buf, u32 k)
{
	struct smr_blk_header *hdr = buf;

	return le32_to_cpu(hdr->nr) == ss->ops->records(ss->owner, k) &&
		smr_blk_sealed(buf, ss->magic, ss->format_id, k);
}

/* Read every block, newest valid slot first, and hand each to the owner. */
int smr_slots_load(struct smr_slots *ss)
{
	const u32 per_io = SMR_SLOTS_BATCH / 2;
	u32 k, j;
	int ret;

	ss->gen = 0;
	bitmap_zero(ss->dirty, ss->nr_blocks);
	for (k = 0; k < ss->nr_blocks; k += per_io) {
		u32 n = min(per_io, ss->nr_blocks - k);

		ret = smr_slots_rw(ss, REQ_OP_READ, smr_slots_sector(k, 0),
				   ss->pages, 2 * n);
		if (ret)
			return ret;
		for (j = 0; j < n; j++) {
			void *a = page_address(ss->pages[2 * j]);
			void *b = page_address(ss->pages[2 * j + 1]);
			bool va = smr_slots_valid(ss, a, k + j);
			bool vb = smr_slots_valid(ss, b, k + j);
			u64 ga = va ? le64_to_cpu(((struct smr_blk_header *)a)->gen) : 0;
			u64 gb = vb ? le64_to_cpu(((struct smr_blk_header *)b)->gen) : 0;
			bool use_b = vb && (!va || gb > ga);

			if (!va && !vb && !ss->missing_ok) {
				DMERR("%s: %s %u is corrupt in both copies",
				      ss->name, ss->what, k + j);
				return -EUCLEAN;
			}
			if (use_b)
				set_bit(k + j, ss->slot_b);
			else
				clear_bit(k + j, ss->slot_b);
			ss->gen = max3(ss->gen, ga, gb);
			ret = ss->ops->load(ss->owner, k + j,
					    va || vb ? (use_b ? b : a) : NULL);
			if (ret == -EUCLEAN)
				DMERR("%s: %s %u holds an impossible state",
				      ss->name, ss->what, k + j);
			if (ret)
				return ret;
		}
		cond_resched();
	}
	return 0;
}
EXPORT_SYMBOL_GPL(smr_slots_load);

/* ---------------------------------------------------- superblock --- */

static u32 smr_sb_crc(const void *sb, u32 magic)
{
	return crc32_le(magic, sb, SMR_MD_BLOCK_SIZE);
}

int smr_sb_open(struct smr_slots *ss, u32 magic, bool format,
		char *no_sb, char **error)
{
	struct page *page = ss->pages[0];
	__le32 *sb = page_address(page);
	bool blank;
	u32 crc;
	int ret;

	ret = smr_slots_rw(ss, REQ_OP_READ, 0, &page, 1);
	if (ret) {
		*error = "Cannot read the superblock";
		return ret;
	}
	blank = !memchr_inv(sb, 0, SMR_MD_BLOCK_SIZE);
	if (blank && !format) {
		/* Blank at the start; maybe not further in. */
		const char *found = smr_foreign_signature(ss->bdev, page);

		if (IS_ERR(found)) {
			*error = "Cannot read the backing device";
			return PTR_ERR(found);
		}
		if (found) {
			DMERR("%s: the backing device holds %s", ss->name, found);
			*error = "Backing device holds another format (see the kernel log); add 'format' to initialise it anyway (destroys its data)";
			return -EINVAL;
		}
	}
	if (format || blank)
		return 1;

	crc = le32_to_cpu(sb[1]);
	sb[1] = 0;
	if (le32_to_cpu(sb[0]) != magic || smr_sb_crc(sb, magic) != crc) {
		*error = no_sb;
		return -EINVAL;
	}
	sb[1] = cpu_to_le32(crc);
	return 0;
}
EXPORT_SYMBOL_GPL(smr_sb_open);

int smr_sb_invalidate(struct smr_slots *ss)
{
	struct page *page = ss->pages[0];

	memset(page_address(page), 0, SMR_MD_BLOCK_SIZE);
	return smr_slots_rw(ss, REQ_OP_WRITE | REQ_FUA, 0, &page, 1);
}
EXPORT_SYMBOL_GPL(smr_sb_invalidate);

int smr_sb_write(struct smr_slots *ss, u32 magic)
{
	__le32 *sb = page_address(ss->pages[0]);

	sb[0] = cpu_to_le32(magic);
	sb[1] = 0;
	sb[1] = cpu_to_le32(smr_sb_crc(sb, magic));
	return smr_slots_rw(ss, REQ_OP_WRITE | REQ_FUA | REQ_PREFLUSH, 0,
			    &ss->pages[0], 1);
}
EXPORT_SYMBOL_GPL(smr_sb_write);
