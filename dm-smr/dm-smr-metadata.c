// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr on-disk metadata: superblock and zone table.
 *
 * The zone table is written block by block, each 4 KiB block alternating
 * between two slots with a generation number and a checksum, so a torn or
 * lost write leaves the previous copy of that block valid. A commit takes
 * a snapshot of the dirty blocks first, then flushes the backing device
 * (so every write the snapshot counts as done is durable), then writes
 * the blocks and flushes again. The metadata therefore never claims data
 * that is not on the medium.
 *
 * Format order: the old superblock is zeroed first, then the zone table
 * is written and flushed, then the new superblock (magic last, FUA). A
 * crash while formatting leaves an unformatted device, never a mix.
 */
#include <linux/crc32.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "smr-foreign.h"
#include "dm-smr.h"

#define SMR_MD_ALIGN_SECTORS	2048	/* data starts on a 1 MiB boundary */

static u32 smr_table_blocks(u32 nr_zones)
{
	return DIV_ROUND_UP(nr_zones, (u32)SMR_ZT_PER_BLOCK);
}

sector_t smr_md_sectors_for(u32 table_blocks)
{
	sector_t blocks = 1 + 2 * (sector_t)table_blocks;

	return round_up(blocks * SMR_BLOCK_SECTORS, SMR_MD_ALIGN_SECTORS);
}

sector_t smr_md_sectors(u32 nr_zones)
{
	return smr_md_sectors_for(smr_table_blocks(nr_zones));
}

sector_t smr_data_sectors(struct smr_target *sc)
{
	return ((sector_t)sc->nr_conv << sc->zone_shift) +
		(sector_t)(sc->nr_zones - sc->nr_conv) * sc->zone_capacity;
}

/* Table block @k, slot @b (0 = A, 1 = B), in 4 KiB blocks. */
static sector_t smr_slot_sector(u32 k, int b)
{
	return (sector_t)(1 + 2 * k + b) * SMR_BLOCK_SECTORS;
}

int smr_md_init(struct smr_target *sc)
{
	int i;

	/* Drive-managed mode sized its table in smr_dm_ctr(). */
	if (sc->mode == SMR_MODE_HOST_MANAGED)
		sc->table_blocks = smr_table_blocks(sc->nr_zones);
	sc->data_start = smr_md_sectors_for(sc->table_blocks);
	mutex_init(&sc->commit_lock);

	sc->slot_b = bitmap_zalloc(sc->table_blocks, GFP_KERNEL);
	sc->dirty = bitmap_zalloc(sc->table_blocks, GFP_KERNEL);
	if (!sc->slot_b || !sc->dirty)
		return -ENOMEM;
	for (i = 0; i < SMR_MD_BATCH; i++) {
		sc->md_pages[i] = alloc_page(GFP_KERNEL);
		if (!sc->md_pages[i])
			return -ENOMEM;
	}
	sc->mem_bytes += 2 * BITS_TO_LONGS(sc->table_blocks) * sizeof(long) +
		SMR_MD_BATCH * PAGE_SIZE;
	return 0;
}

void smr_md_exit(struct smr_target *sc)
{
	int i;

	for (i = 0; i < SMR_MD_BATCH; i++)
		if (sc->md_pages[i])
			__free_page(sc->md_pages[i]);
	bitmap_free(sc->slot_b);
	bitmap_free(sc->dirty);
}

/* Synchronous I/O of @nr pages at @sector of the backing device. */
int smr_md_rw(struct smr_target *sc, blk_opf_t opf, sector_t sector,
		     struct page **pages, unsigned int nr)
{
	struct bio *bio;
	unsigned int i;
	int ret;

	bio = bio_alloc(sc->bdev, nr, opf | REQ_SYNC | REQ_META, GFP_NOIO);
	bio->bi_iter.bi_sector = sector;
	for (i = 0; i < nr; i++)
		__bio_add_page(bio, pages[i], SMR_BLOCK_SIZE, 0);
	ret = submit_bio_wait(bio);
	bio_put(bio);
	return ret;
}

void smr_md_mark_dirty(struct smr_target *sc, u32 zno)
{
	set_bit(zno / SMR_ZT_PER_BLOCK, sc->dirty);
}

/* The condition a zone is persisted with; see struct smr_zt_rec. */
static u8 smr_persist_cond(struct smr_zone *z, u32 cap)
{
	switch (z->cond) {
	case BLK_ZONE_COND_NOT_WP:
	case BLK_ZONE_COND_READONLY:
	case BLK_ZONE_COND_OFFLINE:
		return z->cond;
	case BLK_ZONE_COND_FULL:
		if (z->finished || z->dend >= cap)
			return BLK_ZONE_COND_FULL;
		fallthrough;
	default:
		return z->dend ? BLK_ZONE_COND_CLOSED : BLK_ZONE_COND_EMPTY;
	}
}

/* Fill @page with table block @k from the zone array. Caller holds lock. */
static void smr_build_block(struct smr_target *sc, u32 k, void *buf)
{
	struct smr_blk_header *hdr = buf;
	struct smr_zt_rec *rec = buf + sizeof(*hdr);
	u32 first = k * SMR_ZT_PER_BLOCK;
	u32 nr;
	u32 i;

	if (sc->mode == SMR_MODE_DRIVE_MANAGED) {
		smr_dm_build_block(sc, k, buf);
		return;
	}
	nr = min_t(u32, SMR_ZT_PER_BLOCK, sc->nr_zones - first);
	memset(buf, 0, SMR_BLOCK_SIZE);
	hdr->magic = cpu_to_le32(SMR_ZT_MAGIC);
	hdr->format_id = cpu_to_le64(sc->format_id);
	hdr->index = cpu_to_le32(k);
	hdr->nr = cpu_to_le32(nr);
	for (i = 0; i < nr; i++) {
		struct smr_zone *z = &sc->zones[first + i];

		rec[i].dend = cpu_to_le32(z->dend);
		rec[i].cond = smr_persist_cond(z, smr_zone_cap(sc, first + i));
	}
}

static void smr_seal_block(void *buf, u64 gen)
{
	struct smr_blk_header *hdr = buf;

	hdr->gen = cpu_to_le64(gen);
	hdr->crc = 0;
	hdr->crc = cpu_to_le32(crc32_le((u32)gen, buf, SMR_BLOCK_SIZE));
}

/*
 * Make every zone state change so far durable. Safe to call from the
 * commit worker, a message or suspend; serialised by commit_lock.
 */
int smr_md_commit(struct smr_target *sc)
{
	u32 idx[SMR_MD_BATCH];
	unsigned int n, i;
	unsigned long k;
	int ret;

	mutex_lock(&sc->commit_lock);
	do {
		n = 0;
		spin_lock_irq(&sc->lock);
		for_each_set_bit(k, sc->dirty, sc->table_blocks) {
			smr_build_block(sc, k, page_address(sc->md_pages[n]));
			clear_bit(k, sc->dirty);
			idx[n++] = k;
			if (n == SMR_MD_BATCH)
				break;
		}
		spin_unlock_irq(&sc->lock);

		/* Data the snapshot counts as written must be durable first. */
		ret = blkdev_issue_flush(sc->bdev);
		if (ret)
			goto fail;
		if (!n)
			break;

		for (i = 0; i < n; i++) {
			int b = !test_bit(idx[i], sc->slot_b);

			smr_seal_block(page_address(sc->md_pages[i]),
				       ++sc->md_gen);
			ret = smr_md_rw(sc, REQ_OP_WRITE,
					smr_slot_sector(idx[i], b),
					&sc->md_pages[i], 1);
			if (ret)
				goto fail;
		}
		/*
		 * Each batch is made durable before the next one is built,
		 * and only then does each block's current copy change slots:
		 * until the flush succeeds, the other slot still holds the
		 * last durable copy, and the block stays dirty.
		 */
		ret = blkdev_issue_flush(sc->bdev);
		if (ret)
			goto fail;
		for (i = 0; i < n; i++)
			change_bit(idx[i], sc->slot_b);
	} while (n == SMR_MD_BATCH);

	spin_lock_irq(&sc->lock);
	sc->stats.commits++;
	spin_unlock_irq(&sc->lock);
	mutex_unlock(&sc->commit_lock);
	return 0;

fail:
	/* Whatever was not made durable is retried by the next commit. */
	for (i = 0; i < n; i++)
		set_bit(idx[i], sc->dirty);
	mutex_unlock(&sc->commit_lock);
	DMERR_LIMIT("%s: metadata commit failed: %d", sc->name, ret);
	return ret;
}

static void smr_fill_super(struct smr_target *sc, struct smr_super *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->version = cpu_to_le32(SMR_VERSION);
	sb->mode = cpu_to_le32(sc->mode);
	sb->format_id = cpu_to_le64(sc->format_id);
	sb->dev_sectors = cpu_to_le64(sc->dev_sectors);
	sb->zone_sectors = cpu_to_le64(sc->zone_sectors);
	sb->zone_capacity = cpu_to_le64(sc->zone_capacity);
	sb->nr_zones = cpu_to_le32(sc->nr_zones);
	sb->nr_conv = cpu_to_le32(sc->nr_conv);
	sb->table_blocks = cpu_to_le32(sc->table_blocks);
	sb->zones_per_block = cpu_to_le32(SMR_ZT_PER_BLOCK);
	sb->data_start = cpu_to_le64(sc->data_start);
	sb->cache_sectors = cpu_to_le64(smr_cache_sectors(sc));
	sb->magic = cpu_to_le32(SMR_SB_MAGIC);
	sb->crc = cpu_to_le32(crc32_le(SMR_SB_MAGIC, (void *)sb, sizeof(*sb)));
}

static int smr_format(struct smr_target *sc)
{
	struct page *page = sc->md_pages[0];
	u32 z;
	int ret;

	/* Invalidate the old superblock before anything else changes. */
	memset(page_address(page), 0, SMR_BLOCK_SIZE);
	ret = smr_md_rw(sc, REQ_OP_WRITE | REQ_FUA, 0,
			&page, 1);
	if (ret)
		return ret;

	sc->format_id = get_random_u64();
	sc->md_gen = 0;
	if (sc->mode == SMR_MODE_DRIVE_MANAGED)
		smr_dm_reset(sc);
	for (z = 0; sc->mode == SMR_MODE_HOST_MANAGED && z < sc->nr_zones; z++) {
		struct smr_zone *zone = &sc->zones[z];

		zone->wp = zone->dend = 0;
		zone->finished = 0;
		zone->cond = smr_zone_is_conv(sc, z) ? BLK_ZONE_COND_NOT_WP :
			BLK_ZONE_COND_EMPTY;
	}
	/* First commit goes to slot A; stale slots carry another format_id. */
	bitmap_fill(sc->slot_b, sc->table_blocks);
	bitmap_fill(sc->dirty, sc->table_blocks);
	ret = smr_md_commit(sc);
	if (ret)
		return ret;

	smr_fill_super(sc, page_address(page));
	return smr_md_rw(sc, REQ_OP_WRITE | REQ_FUA | REQ_PREFLUSH,
			 0, &page, 1);
}

static bool smr_block_valid(struct smr_target *sc, void *buf, u32 k)
{
	struct smr_blk_header *hdr = buf;
	u32 crc = le32_to_cpu(hdr->crc);
	u64 gen = le64_to_cpu(hdr->gen);
	u32 nr = sc->mode == SMR_MODE_DRIVE_MANAGED ?
		smr_dm_block_records(sc, k) :
		min_t(u32, SMR_ZT_PER_BLOCK, sc->nr_zones - k * SMR_ZT_PER_BLOCK);

	if (le32_to_cpu(hdr->magic) != SMR_ZT_MAGIC ||
	    le64_to_cpu(hdr->format_id) != sc->format_id ||
	    le32_to_cpu(hdr->index) != k || le32_to_cpu(hdr->nr) != nr)
		return false;
	hdr->crc = 0;
	if (crc32_le((u32)gen, buf, SMR_BLOCK_SIZE) != crc)
		return false;
	hdr->crc = cpu_to_le32(crc);
	return true;
}

static int smr_load_block(struct smr_target *sc, u32 k, void *buf)
{
	struct smr_zt_rec *rec = buf + sizeof(struct smr_blk_header);
	u32 first = k * SMR_ZT_PER_BLOCK;
	u32 nr = le32_to_cpu(((struct smr_blk_header *)buf)->nr);
	u32 i;

	if (sc->mode == SMR_MODE_DRIVE_MANAGED)
		return smr_dm_load_block(sc, k, buf);

	for (i = 0; i < nr; i++) {
		u32 zno = first + i;
		struct smr_zone *z = &sc->zones[zno];
		u32 cap = smr_zone_cap(sc, zno);
		u32 dend = le32_to_cpu(rec[i].dend);
		u8 cond = rec[i].cond;

		/* Nothing is in flight while the table loads. */
		z->wp = z->dend = 0;
		z->finished = 0;
		if (smr_zone_is_conv(sc, zno)) {
			z->cond = BLK_ZONE_COND_NOT_WP;
			continue;
		}
		if (dend > cap)
			return -EUCLEAN;
		z->dend = dend;
		z->cond = cond;
		switch (cond) {
		case BLK_ZONE_COND_EMPTY:
			if (dend)
				return -EUCLEAN;
			z->wp = 0;
			break;
		case BLK_ZONE_COND_CLOSED:
			if (!dend)
				return -EUCLEAN;
			z->wp = dend;
			break;
		case BLK_ZONE_COND_FULL:
			z->wp = cap;
			z->finished = dend < cap;
			break;
		case BLK_ZONE_COND_READONLY:
		case BLK_ZONE_COND_OFFLINE:
			z->wp = dend;
			break;
		default:
			return -EUCLEAN;
		}
	}
	return 0;
}

int smr_md_load_table(struct smr_target *sc)
{
	const u32 per_io = SMR_MD_BATCH / 2;
	u32 k, j;
	int ret;

	sc->md_gen = 0;
	bitmap_zero(sc->dirty, sc->table_blocks);
	for (k = 0; k < sc->table_blocks; k += per_io) {
		u32 n = min(per_io, sc->table_blocks - k);

		ret = smr_md_rw(sc, REQ_OP_READ,
				smr_slot_sector(k, 0),
				sc->md_pages, 2 * n);
		if (ret)
			return ret;
		for (j = 0; j < n; j++) {
			void *a = page_address(sc->md_pages[2 * j]);
			void *b = page_address(sc->md_pages[2 * j + 1]);
			bool va = smr_block_valid(sc, a, k + j);
			bool vb = smr_block_valid(sc, b, k + j);
			u64 ga = va ? le64_to_cpu(((struct smr_blk_header *)a)->gen) : 0;
			u64 gb = vb ? le64_to_cpu(((struct smr_blk_header *)b)->gen) : 0;
			bool use_b;

			if (!va && !vb) {
				DMERR("zone table block %u is corrupt in both copies",
				      k + j);
				return -EUCLEAN;
			}
			use_b = vb && (!va || gb > ga);
			if (use_b)
				set_bit(k + j, sc->slot_b);
			else
				clear_bit(k + j, sc->slot_b);
			sc->md_gen = max3(sc->md_gen, ga, gb);
			ret = smr_load_block(sc, k + j, use_b ? b : a);
			if (ret) {
				DMERR("zone table block %u holds an impossible zone state",
				      k + j);
				return ret;
			}
		}
	}
	return 0;
}

static bool smr_all_zero(const void *buf, size_t len)
{
	return !memchr_inv(buf, 0, len);
}

/*
 * Read the superblock; format an all-zero (new) device or when asked to;
 * otherwise check the table's geometry against the disk and load the zone
 * table. Sets sc->error on failure.
 */
int smr_md_load_or_format(struct smr_target *sc)
{
	struct page *page = sc->md_pages[0];
	struct smr_super *sb = page_address(page);
	bool blank;
	u32 crc;
	int ret;

	ret = smr_md_rw(sc, REQ_OP_READ, 0, &page, 1);
	if (ret) {
		sc->error = "Cannot read the superblock";
		return ret;
	}
	blank = smr_all_zero(sb, SMR_BLOCK_SIZE);
	if (blank && !sc->format) {
		/* Blank at the start; maybe not further in. */
		const char *what = smr_foreign_signature(sc->bdev, page);

		if (IS_ERR(what)) {
			sc->error = "Cannot read the backing device";
			return PTR_ERR(what);
		}
		if (what) {
			DMERR("%s: the backing device holds %s", sc->name, what);
			sc->error = "Backing device holds another format (see the kernel log); add 'format' to initialise it anyway (destroys its data)";
			return -EINVAL;
		}
	}
	if (sc->format || blank) {
		ret = smr_format(sc);
		if (ret)
			sc->error = "Cannot format the backing device";
		return ret;
	}

	crc = le32_to_cpu(sb->crc);
	sb->crc = 0;
	if (le32_to_cpu(sb->magic) != SMR_SB_MAGIC ||
	    crc32_le(SMR_SB_MAGIC, (void *)sb, sizeof(*sb)) != crc) {
		sc->error = "Backing device holds no valid dm-smr superblock; add 'format' to initialise it (destroys its data)";
		return -EINVAL;
	}
	if (le32_to_cpu(sb->version) != SMR_VERSION) {
		sc->error = "Unsupported on-disk format version";
		return -EINVAL;
	}
	if (le32_to_cpu(sb->mode) != sc->mode ||
	    le64_to_cpu(sb->dev_sectors) != sc->dev_sectors ||
	    le64_to_cpu(sb->zone_sectors) != sc->zone_sectors ||
	    le64_to_cpu(sb->zone_capacity) != sc->zone_capacity ||
	    le32_to_cpu(sb->nr_zones) != sc->nr_zones ||
	    le32_to_cpu(sb->nr_conv) != sc->nr_conv ||
	    le32_to_cpu(sb->table_blocks) != sc->table_blocks ||
	    le32_to_cpu(sb->zones_per_block) != SMR_ZT_PER_BLOCK ||
	    le64_to_cpu(sb->data_start) != sc->data_start ||
	    le64_to_cpu(sb->cache_sectors) != smr_cache_sectors(sc)) {
		DMERR("on-disk geometry: mode %u, %llu sectors, zone/band sectors %llu, zone_capacity %llu, conv_zones %u, cache_sectors %llu",
		      le32_to_cpu(sb->mode), le64_to_cpu(sb->dev_sectors),
		      le64_to_cpu(sb->zone_sectors),
		      le64_to_cpu(sb->zone_capacity), le32_to_cpu(sb->nr_conv),
		      le64_to_cpu(sb->cache_sectors));
		sc->error = "Table geometry differs from the on-disk superblock (see the kernel log); use the matching table or add 'format' (destroys data)";
		return -EINVAL;
	}
	sc->format_id = le64_to_cpu(sb->format_id);

	/* Drive-managed state is loaded (and recovered) in preresume. */
	if (sc->mode == SMR_MODE_DRIVE_MANAGED)
		return 0;
	ret = smr_md_load_table(sc);
	if (ret)
		sc->error = "Cannot load the zone table";
	return ret;
}
