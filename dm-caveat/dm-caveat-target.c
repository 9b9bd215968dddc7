// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat: a Caveat Scriptor shingled disk as a device-mapper target.
 *
 * The model (Caveat Scriptor, as in the CMU thesis on cleaning algorithms
 * for SMR disks): a disk of <capacity> blocks with parameters DID (drive
 * isolation distance) and DNOR (drive no overlap range), 0 <= DNOR <= DID.
 * Writing blocks i..j makes them "written" and makes blocks
 * max(i + 1 + DNOR, j + 1) .. j + DID "maybe damaged" (clipped to the
 * device, never inside the unshingled region at the start; a write that
 * lies wholly in the unshingled region damages nothing). Initially every
 * block is maybe damaged. A read that touches a maybe-damaged block fails
 * with BLK_STS_MEDIUM (or reads zeros there with "on_damaged_read zero").
 *
 * "Written" and "maybe damaged" are complements, so one set is kept: the
 * set of valid blocks. In memory it is chunked: 2^15 blocks per chunk,
 * each chunk either empty (NULL), full (CV_FULL) or a 4 KiB bitmap page.
 * Memory is therefore at most one bit per block plus 16 bytes per chunk,
 * and a few pages for a sequentially written disk.
 *
 * Crash safety, "never falsely clean":
 *  - a write whose damage range holds valid blocks (live data) applies the
 *    damage in memory at map time and is deferred to the worker, which
 *    makes the damage durable (metadata commit) before it issues the write;
 *    while such damage is not yet durable, every write with a non-empty
 *    damage range takes the same path;
 *  - valid marks are applied when a write completes successfully and are
 *    made durable by the next flush or FUA (commit = snapshot the dirty
 *    metadata pages, flush the backing device, write them, flush again);
 *  - the emulated medium applies writes in map order: a write damages the
 *    blocks of writes still in flight that lie in its damage range (they
 *    do not become valid when they complete).
 *
 * Table line:
 *   caveat <dev> <did> <dnor> [<#opt_args> <opt_args>...]
 *   opt_args: block_size <bytes>  power of two, 512..65536, default 4096
 *             unshingled <blocks> conventional region at the start
 *             on_damaged_read error|zero
 *             scramble            overwrite live blocks on the backing
 *                                 device when they are damaged
 *             format              start over: every block maybe damaged
 */
#include <linux/module.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/crc32.h>
#include <linux/device-mapper.h>
#include <linux/highmem.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/ctype.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "smr-fault.h"
#include "smr-foreign.h"
#include "smr-compat.h"
#include "smr-ondisk.h"
#include "dm-caveat-nl.h"

#define DM_MSG_PREFIX "caveat"

#if BITS_PER_LONG != 64
#error "dm-caveat stores bitmaps as 64-bit words; 64-bit kernels only"
#endif

/* In-memory chunks of the valid-block set: one 4 KiB bitmap at most. */
#define CV_CHUNK_SHIFT		15
#define CV_CHUNK_BLOCKS		(1ULL << CV_CHUNK_SHIFT)
#define CV_FULL			((unsigned long *)1UL)
#define CV_SPARE_MAX		8
#define CV_NOMEM_RETRY_MS	10	/* a write waiting for a map page */

/* Limits of the table arguments. */
#define CV_MIN_BLOCK_SIZE	512
#define CV_MAX_BLOCK_SIZE	65536
#define CV_MAX_DID		(1ULL << 32)

/* The on-disk format (superblock, bitmap pages) is in smr-ondisk.h. */
#define CV_MD_SIZE		SMR_MD_BLOCK_SIZE
#define CV_MD_SECTORS		(CV_MD_SIZE >> SECTOR_SHIFT)
#define CV_MD_BATCH		8
#define CV_ALIGN_SECTORS	2048

struct cv_chunk {
	unsigned long *bits;	/* NULL: none valid, CV_FULL: all, else bitmap */
	unsigned int pins;	/* writes in flight that will set bits here */
};

/* Counters shown by "dmsetup status"; protected by cv_target.lock. */
struct cv_stats {
	u64 writes;
	u64 damaging_writes;	/* writes with a non-empty damage range */
	u64 damaged_blocks;	/* sum of those ranges (blocks made maybe damaged) */
	u64 live_damage_writes;	/* writes that damaged valid blocks */
	u64 live_damaged_blocks; /* valid blocks they damaged: data lost */
	u64 damaged_reads;	/* reads touching maybe-damaged blocks */
	u64 commits;
};

struct cv_target {
	struct dm_target *ti;
	struct dm_dev *dev;

	/* Table arguments, kept to print the table line back. */
	u64 did;
	u64 dnor;
	u64 unshingled;
	u32 block_size;
	bool zero_reads;
	bool scramble;
	bool format;
	unsigned int opt_mask;
	unsigned int bshift;	/* log2 of sectors per block */
	u64 nr_blocks;

	/* Metadata. */
	u64 format_id;
	u32 md_pages;
	sector_t data_start;
	u64 md_gen;
	unsigned long *slot_b;	/* per page: current copy in slot B */
	unsigned long *dirty;	/* per page: needs a commit */
	struct page *md_page[CV_MD_BATCH];
	struct mutex commit_lock;
	bool loaded;		/* the damage map is this table's (first resume) */

	/* State, protected by lock (taken from bio completion too). */
	spinlock_t lock;
	struct cv_chunk *chunks;
	u64 nr_chunks;
	u64 nr_bitmaps;
	u64 nr_valid;		/* valid blocks, kept by cv_set/clear_range */
	unsigned long *spare[CV_SPARE_MAX];
	unsigned int nr_spare;
	struct list_head inflight;	/* writes mapped and not completed */
	u64 damage_seq;			/* live damage applied in memory */
	u64 durable_seq;		/* ... and made durable */
	/*
	 * scramble: writes whose damage range is still to be overwritten.
	 * While any is, every write waits in the wal list behind them: a
	 * write landing in such a range before the scramble would be
	 * scrambled over, while the map says it is valid.
	 */
	unsigned int scrambles_pending;
	struct cv_stats stats;

	/* Deferred work. */
	struct bio_list wal_bios;	/* writes waiting for their damage to be durable */
	struct bio_list commit_bios;	/* completed FUA writes */
	struct bio_list nomem_bios;	/* writes map() found no pages for */
	struct delayed_work nomem_dwork; /* ... and the worker neither: retry */
	struct bio_list flush_bios;	/* empty flushes */
	struct workqueue_struct *wq;
	struct work_struct work;
	struct bio_set bs;
	struct page *scramble_page;

	struct cv_nl_dev nl;		/* dm-caveat-nl.c registry and events */
};

enum { CV_IO_NONE, CV_IO_WRITE, CV_IO_READ_ZERO };

#define CV_OPT_BLOCK_SIZE	1
#define CV_OPT_UNSHINGLED	2
#define CV_OPT_ODR		4
#define CV_OPT_SCRAMBLE		8
#define CV_OPT_FORMAT		16

/* Per bio data. */
struct cv_io {
	struct list_head list;
	u64 first, last;	/* blocks written */
	u64 d0, d1;		/* damage range; d0 > d1: none */
	u64 t0, t1;		/* not to be marked valid; t0 > t1: none */
	struct bvec_iter iter;	/* partially damaged read, zero mode */
	u8 kind;
	bool fua;
	bool live;		/* damaged valid blocks (scramble them) */
	blk_status_t status;
};

static const char *cv_name(struct cv_target *sc)
{
	return dm_device_name(dm_table_get_md(sc->ti->table));
}

/* ------------------------------------------------------------ chunks --- */

static u64 cv_chunk_nbits(struct cv_target *sc, u64 c)
{
	return min_t(u64, CV_CHUNK_BLOCKS, sc->nr_blocks - (c << CV_CHUNK_SHIFT));
}

static bool cv_is_bitmap(unsigned long *bits)
{
	return bits && bits != CV_FULL;
}

static void cv_put_bitmap(struct cv_target *sc, unsigned long *p)
{
	sc->nr_bitmaps--;
	if (sc->nr_spare < CV_SPARE_MAX)
		sc->spare[sc->nr_spare++] = p;
	else
		free_page((unsigned long)p);
}

/* Lock held, a spare page available: make chunk @c a bitmap. */
static void cv_to_bitmap(struct cv_target *sc, u64 c)
{
	struct cv_chunk *ch = &sc->chunks[c];
	unsigned long *p;

	/* Callers counted the pages they need (cv_edge_need). */
	if (cv_is_bitmap(ch->bits) || !sc->nr_spare)
		return;
	p = sc->spare[--sc->nr_spare];
	if (ch->bits == CV_FULL)
		bitmap_fill(p, CV_CHUNK_BLOCKS);
	else
		bitmap_zero(p, CV_CHUNK_BLOCKS);
	ch->bits = p;
	sc->nr_bitmaps++;
}

/*
 * Set bits lo..hi (inclusive) of a bitmap: whole words through
 * hweight_long, so the cost follows the range, not the chunk.
 */
static u64 cv_bits_weight(const unsigned long *bits, u64 lo, u64 hi)
{
	u64 n = 0;

	for (; lo <= hi && lo % BITS_PER_LONG; lo++)
		n += test_bit(lo, bits);
	for (; lo + BITS_PER_LONG - 1 <= hi; lo += BITS_PER_LONG)
		n += hweight_long(bits[lo / BITS_PER_LONG]);
	for (; lo <= hi; lo++)
		n += test_bit(lo, bits);
	return n;
}

/* Lock held: valid blocks among blocks lo..hi (from its start) of chunk @c. */
static u64 cv_chunk_valid(struct cv_target *sc, u64 c, u64 lo, u64 hi)
{
	unsigned long *bits = sc->chunks[c].bits;

	if (!bits)
		return 0;
	if (bits == CV_FULL)
		return hi - lo + 1;
	return cv_bits_weight(bits, lo, hi);
}

/* Lock held: a bitmap chunk that is all set or (unpinned) all clear. */
static void cv_compact(struct cv_target *sc, u64 c)
{
	struct cv_chunk *ch = &sc->chunks[c];
	u64 nb = cv_chunk_nbits(sc, c);

	if (!cv_is_bitmap(ch->bits))
		return;
	if (bitmap_full(ch->bits, nb)) {
		cv_put_bitmap(sc, ch->bits);
		ch->bits = CV_FULL;
	} else if (!ch->pins && bitmap_empty(ch->bits, nb)) {
		cv_put_bitmap(sc, ch->bits);
		ch->bits = NULL;
	}
}

static bool cv_block_valid(struct cv_target *sc, u64 b)
{
	struct cv_chunk *ch = &sc->chunks[b >> CV_CHUNK_SHIFT];

	if (!ch->bits)
		return false;
	if (ch->bits == CV_FULL)
		return true;
	return test_bit(b & (CV_CHUNK_BLOCKS - 1), ch->bits);
}

/*
 * Lock held. The run of blocks in the same state as block @pos: returns
 * its end (exclusive, at most @end), its state in *@valid.
 */
static u64 cv_run_end(struct cv_target *sc, u64 pos, u64 end, bool *valid)
{
	bool v = cv_block_valid(sc, pos);

	*valid = v;
	while (pos < end) {
		u64 c = pos >> CV_CHUNK_SHIFT;
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = min(cs + cv_chunk_nbits(sc, c), end);
		struct cv_chunk *ch = &sc->chunks[c];
		unsigned long nx;

		if (!ch->bits) {
			if (v)
				return pos;
		} else if (ch->bits == CV_FULL) {
			if (!v)
				return pos;
		} else {
			nx = v ? find_next_zero_bit(ch->bits, ce - cs, pos - cs) :
				find_next_bit(ch->bits, ce - cs, pos - cs);
			if (nx < ce - cs)
				return cs + nx;
		}
		pos = ce;
	}
	return end;
}

/* Lock held: valid blocks in a..b, the first and last of them. */
static u64 cv_count_valid(struct cv_target *sc, u64 a, u64 b, u64 *lo, u64 *hi)
{
	u64 n = 0, pos = a, e;
	bool v;

	while (pos <= b) {
		e = cv_run_end(sc, pos, b + 1, &v);
		if (v) {
			if (!n)
				*lo = pos;
			*hi = e - 1;
			n += e - pos;
		}
		pos = e;
	}
	return n;
}

static bool cv_all_valid(struct cv_target *sc, u64 a, u64 b)
{
	bool v;

	return cv_run_end(sc, a, b + 1, &v) == b + 1 && v;
}

static void cv_mark_dirty(struct cv_target *sc, u64 a, u64 b)
{
	u64 p0 = div_u64(a, CV_MD_BITS), p1 = div_u64(b, CV_MD_BITS);

	bitmap_set(sc->dirty, p0, p1 - p0 + 1);
}

/* Lock held: mark a..b valid. Partially covered chunks are not NULL. */
static void cv_set_range(struct cv_target *sc, u64 a, u64 b)
{
	u64 c;

	for (c = a >> CV_CHUNK_SHIFT; c <= b >> CV_CHUNK_SHIFT; c++) {
		struct cv_chunk *ch = &sc->chunks[c];
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = cs + cv_chunk_nbits(sc, c) - 1;
		u64 lo = max(a, cs), hi = min(b, ce);

		if (lo == cs && hi == ce) {
			sc->nr_valid += ce - cs + 1 -
				cv_chunk_valid(sc, c, 0, ce - cs);
			if (cv_is_bitmap(ch->bits))
				cv_put_bitmap(sc, ch->bits);
			ch->bits = CV_FULL;
		} else if (cv_is_bitmap(ch->bits)) {
			sc->nr_valid += hi - lo + 1 -
				cv_bits_weight(ch->bits, lo - cs, hi - cs);
			bitmap_set(ch->bits, lo - cs, hi - lo + 1);
		}
		/* NULL here: damaged meanwhile by a racing write; keep it so. */
	}
	cv_mark_dirty(sc, a, b);
}

/* Lock held, spare pages for the two edge chunks: mark a..b damaged. */
static void cv_clear_range(struct cv_target *sc, u64 a, u64 b)
{
	u64 c;

	for (c = a >> CV_CHUNK_SHIFT; c <= b >> CV_CHUNK_SHIFT; c++) {
		struct cv_chunk *ch = &sc->chunks[c];
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = cs + cv_chunk_nbits(sc, c) - 1;
		u64 lo = max(a, cs), hi = min(b, ce);

		if (!ch->bits)
			continue;
		if (lo == cs && hi == ce) {
			/*
			 * A write in flight that pinned this chunk overlaps
			 * this range, so it was tainted and sets no bit here.
			 */
			sc->nr_valid -= cv_chunk_valid(sc, c, 0, ce - cs);
			if (cv_is_bitmap(ch->bits))
				cv_put_bitmap(sc, ch->bits);
			ch->bits = NULL;
			continue;
		}
		cv_to_bitmap(sc, c);
		if (!cv_is_bitmap(ch->bits))
			continue;
		sc->nr_valid -= cv_bits_weight(ch->bits, lo - cs, hi - cs);
		bitmap_clear(ch->bits, lo - cs, hi - lo + 1);
		cv_compact(sc, c);
	}
	cv_mark_dirty(sc, a, b);
}

/* Pages cv_set_range (prepared here) and cv_clear_range may need. */
static unsigned int cv_edge_need(struct cv_target *sc, u64 a, u64 b, bool set)
{
	u64 edge[2] = { a >> CV_CHUNK_SHIFT, b >> CV_CHUNK_SHIFT };
	unsigned int need = 0, i;

	for (i = 0; i < 2; i++) {
		u64 c = edge[i];
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = cs + cv_chunk_nbits(sc, c) - 1;
		unsigned long *bits = sc->chunks[c].bits;

		if (i == 1 && edge[1] == edge[0])
			break;
		if (max(a, cs) == cs && min(b, ce) == ce)
			continue;
		if (set ? !bits : bits == CV_FULL)
			need++;
	}
	return need;
}

/* Lock held: pin the edge chunks of a write, bitmaps where it covers part. */
static void cv_prepare_set(struct cv_target *sc, u64 a, u64 b)
{
	u64 edge[2] = { a >> CV_CHUNK_SHIFT, b >> CV_CHUNK_SHIFT };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		u64 c = edge[i];
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = cs + cv_chunk_nbits(sc, c) - 1;

		if (i == 1 && edge[1] == edge[0])
			break;
		sc->chunks[c].pins++;
		if ((max(a, cs) != cs || min(b, ce) != ce) && !sc->chunks[c].bits)
			cv_to_bitmap(sc, c);
	}
}

static void cv_unpin(struct cv_target *sc, u64 a, u64 b)
{
	u64 c0 = a >> CV_CHUNK_SHIFT, c1 = b >> CV_CHUNK_SHIFT;

	sc->chunks[c0].pins--;
	cv_compact(sc, c0);
	if (c1 != c0) {
		sc->chunks[c1].pins--;
		cv_compact(sc, c1);
	}
}

static void cv_free_chunks(struct cv_target *sc)
{
	u64 c;

	if (sc->chunks) {
		for (c = 0; c < sc->nr_chunks; c++)
			if (cv_is_bitmap(sc->chunks[c].bits))
				free_page((unsigned long)sc->chunks[c].bits);
		kvfree(sc->chunks);
	}
	while (sc->nr_spare)
		free_page((unsigned long)sc->spare[--sc->nr_spare]);
}

/* ---------------------------------------------------------- metadata --- */

static sector_t cv_slot_sector(u32 k, int b)
{
	return (sector_t)(1 + 2 * (u64)k + b) * CV_MD_SECTORS;
}

static int cv_md_rw(struct cv_target *sc, blk_opf_t opf, sector_t sector,
		    struct page *page)
{
	struct bio *bio;
	int ret;

	bio = bio_alloc(sc->dev->bdev, 1, opf | REQ_SYNC | REQ_META, GFP_NOIO);
	bio->bi_iter.bi_sector = sector;
	__bio_add_page(bio, page, CV_MD_SIZE, 0);
	ret = submit_bio_wait(bio);
	bio_put(bio);
	return ret;
}

static u32 cv_page_bits(struct cv_target *sc, u32 k)
{
	return min_t(u64, CV_MD_BITS, sc->nr_blocks - (u64)k * CV_MD_BITS);
}

/* Lock held: fill @buf with bitmap page @k from the chunks. */
static void cv_build_page(struct cv_target *sc, u32 k, void *buf)
{
	struct smr_blk_header *hdr = buf;
	__le64 *w = buf + CV_MD_HDR;
	u64 base = (u64)k * CV_MD_BITS;
	u32 nbits = cv_page_bits(sc, k);
	u32 i;

	memset(buf, 0, CV_MD_SIZE);
	hdr->magic = cpu_to_le32(CV_MD_MAGIC);
	hdr->format_id = cpu_to_le64(sc->format_id);
	hdr->index = cpu_to_le32(k);
	hdr->nr = cpu_to_le32(nbits);
	for (i = 0; i * 64 < nbits; i++) {
		u64 b = base + (u64)i * 64;	/* a multiple of 64 */
		struct cv_chunk *ch = &sc->chunks[b >> CV_CHUNK_SHIFT];
		u64 v;

		if (!ch->bits)
			v = 0;
		else if (ch->bits == CV_FULL)
			v = ~0ULL;
		else
			v = ch->bits[(b & (CV_CHUNK_BLOCKS - 1)) / 64];
		if (nbits - i * 64 < 64)
			v &= (1ULL << (nbits - i * 64)) - 1;
		w[i] = cpu_to_le64(v);
	}
}

static void cv_seal_page(void *buf, u64 gen)
{
	struct smr_blk_header *hdr = buf;

	hdr->gen = cpu_to_le64(gen);
	hdr->crc = 0;
	hdr->crc = cpu_to_le32(crc32_le((u32)gen, buf, CV_MD_SIZE));
}

/*
 * Make the state so far durable: every write completed before the call
 * and every damage applied before it. Serialised by commit_lock.
 */
static int cv_commit(struct cv_target *sc)
{
	u32 idx[CV_MD_BATCH];
	unsigned int n, i;
	unsigned long k;
	u64 seq;
	int ret;

	mutex_lock(&sc->commit_lock);
	spin_lock_irq(&sc->lock);
	seq = sc->damage_seq;
	spin_unlock_irq(&sc->lock);
	do {
		n = 0;
		spin_lock_irq(&sc->lock);
		for_each_set_bit(k, sc->dirty, sc->md_pages) {
			cv_build_page(sc, k, page_address(sc->md_page[n]));
			clear_bit(k, sc->dirty);
			idx[n++] = k;
			if (n == CV_MD_BATCH)
				break;
		}
		spin_unlock_irq(&sc->lock);

		/* Data the snapshot counts as written must be durable first. */
		ret = blkdev_issue_flush(sc->dev->bdev);
		if (ret)
			goto fail;
		if (!n)
			break;
		for (i = 0; i < n; i++) {
			int b = !test_bit(idx[i], sc->slot_b);

			cv_seal_page(page_address(sc->md_page[i]), ++sc->md_gen);
			ret = cv_md_rw(sc, REQ_OP_WRITE, cv_slot_sector(idx[i], b),
				       sc->md_page[i]);
			if (ret)
				goto fail;
		}
		/*
		 * The batch durable before a page's current copy changes
		 * slots; until then the other slot keeps the last durable
		 * copy and the page stays dirty (as in dm-smr's commit).
		 */
		ret = blkdev_issue_flush(sc->dev->bdev);
		if (ret)
			goto fail;
		for (i = 0; i < n; i++)
			change_bit(idx[i], sc->slot_b);
	} while (n == CV_MD_BATCH);

	spin_lock_irq(&sc->lock);
	sc->stats.commits++;
	if (sc->durable_seq < seq)
		sc->durable_seq = seq;
	spin_unlock_irq(&sc->lock);
	mutex_unlock(&sc->commit_lock);
	return 0;

fail:
	/* Whatever was not made durable is retried by the next commit. */
	spin_lock_irq(&sc->lock);
	for (i = 0; i < n; i++)
		set_bit(idx[i], sc->dirty);
	spin_unlock_irq(&sc->lock);
	mutex_unlock(&sc->commit_lock);
	DMERR_LIMIT("%s: metadata commit failed: %d", cv_name(sc), ret);
	return ret;
}

static void cv_fill_super(struct cv_target *sc, struct cv_super *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->version = cpu_to_le32(CV_VERSION);
	sb->block_size = cpu_to_le32(sc->block_size);
	sb->format_id = cpu_to_le64(sc->format_id);
	sb->nr_blocks = cpu_to_le64(sc->nr_blocks);
	sb->did = cpu_to_le64(sc->did);
	sb->dnor = cpu_to_le64(sc->dnor);
	sb->unshingled = cpu_to_le64(sc->unshingled);
	sb->data_start = cpu_to_le64(sc->data_start);
	sb->md_pages = cpu_to_le32(sc->md_pages);
	sb->bits_per_page = cpu_to_le32(CV_MD_BITS);
	sb->magic = cpu_to_le32(CV_SB_MAGIC);
	sb->crc = cpu_to_le32(crc32_le(CV_SB_MAGIC, (void *)sb, sizeof(*sb)));
}

static int cv_format(struct cv_target *sc)
{
	struct page *page = sc->md_page[0];
	int ret;

	/* Invalidate the old superblock before anything else changes. */
	memset(page_address(page), 0, CV_MD_SIZE);
	ret = cv_md_rw(sc, REQ_OP_WRITE | REQ_FUA, 0, page);
	if (ret)
		return ret;
	/* Bitmap pages of an older format carry another format_id. */
	sc->format_id = get_random_u64();
	sc->md_gen = 0;
	bitmap_zero(sc->slot_b, sc->md_pages);
	bitmap_zero(sc->dirty, sc->md_pages);
	cv_fill_super(sc, page_address(page));
	return cv_md_rw(sc, REQ_OP_WRITE | REQ_FUA | REQ_PREFLUSH, 0, page);
}

static bool cv_page_valid(struct cv_target *sc, void *buf, u32 k)
{
	struct smr_blk_header *hdr = buf;
	u32 crc = le32_to_cpu(hdr->crc);
	u64 gen = le64_to_cpu(hdr->gen);
	bool ok;

	if (le32_to_cpu(hdr->magic) != CV_MD_MAGIC ||
	    le64_to_cpu(hdr->format_id) != sc->format_id ||
	    le32_to_cpu(hdr->index) != k ||
	    le32_to_cpu(hdr->nr) != cv_page_bits(sc, k))
		return false;
	hdr->crc = 0;
	ok = crc32_le((u32)gen, buf, CV_MD_SIZE) == crc;
	hdr->crc = cpu_to_le32(crc);
	return ok;
}

/* Set the valid bits of page @k (already checked) in the chunks. */
static int cv_load_page(struct cv_target *sc, u32 k, void *buf)
{
	__le64 *w = buf + CV_MD_HDR;
	u64 base = (u64)k * CV_MD_BITS;
	u32 nbits = cv_page_bits(sc, k);
	u32 i;

	for (i = 0; i * 64 < nbits; i++) {
		u64 v = le64_to_cpu(w[i]);
		u64 b = base + (u64)i * 64;
		struct cv_chunk *ch = &sc->chunks[b >> CV_CHUNK_SHIFT];

		if (nbits - i * 64 < 64)
			v &= (1ULL << (nbits - i * 64)) - 1;
		if (!v)
			continue;
		if (!ch->bits) {
			ch->bits = (unsigned long *)get_zeroed_page(GFP_KERNEL);
			if (!ch->bits)
				return -ENOMEM;
			sc->nr_bitmaps++;
		}
		ch->bits[(b & (CV_CHUNK_BLOCKS - 1)) / 64] = v;
	}
	return 0;
}

static int cv_load_bitmap(struct cv_target *sc)
{
	void *a = page_address(sc->md_page[0]);
	void *b = page_address(sc->md_page[1]);
	u64 c;
	u32 k;
	int ret;

	sc->md_gen = 0;
	for (k = 0; k < sc->md_pages; k++) {
		bool va, vb, use_b;
		u64 ga, gb;

		ret = cv_md_rw(sc, REQ_OP_READ, cv_slot_sector(k, 0), sc->md_page[0]);
		if (!ret)
			ret = cv_md_rw(sc, REQ_OP_READ, cv_slot_sector(k, 1),
				       sc->md_page[1]);
		if (ret)
			return ret;
		va = cv_page_valid(sc, a, k);
		vb = cv_page_valid(sc, b, k);
		ga = va ? le64_to_cpu(((struct smr_blk_header *)a)->gen) : 0;
		gb = vb ? le64_to_cpu(((struct smr_blk_header *)b)->gen) : 0;
		sc->md_gen = max3(sc->md_gen, ga, gb);
		/* Neither: never written since format (all maybe damaged). */
		use_b = vb && (!va || gb > ga);
		if (use_b)
			set_bit(k, sc->slot_b);
		else
			clear_bit(k, sc->slot_b);
		if (va || vb) {
			ret = cv_load_page(sc, k, use_b ? b : a);
			if (ret)
				return ret;
		}
		cond_resched();
	}
	/* Not live yet: no lock, and the one full count of the chunks. */
	sc->nr_valid = 0;
	for (c = 0; c < sc->nr_chunks; c++) {
		cv_compact(sc, c);
		sc->nr_valid += cv_chunk_valid(sc, c, 0, cv_chunk_nbits(sc, c) - 1);
		if (!(c % 1024))
			cond_resched();
	}
	return 0;
}

/*
 * Read the superblock; format an all-zero (new) device or when asked to;
 * otherwise check the table's geometry against it and load the bitmap.
 * Sets ti->error on failure.
 */
static int cv_md_load_or_format(struct cv_target *sc)
{
	struct dm_target *ti = sc->ti;
	struct page *page = sc->md_page[0];
	struct cv_super *sb = page_address(page);
	bool blank;
	u32 crc;
	int ret;

	ret = cv_md_rw(sc, REQ_OP_READ, 0, page);
	if (ret) {
		ti->error = "Cannot read the superblock";
		return ret;
	}
	blank = !memchr_inv(sb, 0, CV_MD_SIZE);
	if (blank && !sc->format) {
		/* Blank at the start; maybe not further in. */
		const char *what = smr_foreign_signature(sc->dev->bdev, page);

		if (IS_ERR(what)) {
			ti->error = "Cannot read the backing device";
			return PTR_ERR(what);
		}
		if (what) {
			DMERR("%s: the backing device holds %s", cv_name(sc), what);
			ti->error = "Backing device holds another format (see the kernel log); add 'format' to initialise it anyway (destroys its data)";
			return -EINVAL;
		}
	}
	if (sc->format || blank) {
		ret = cv_format(sc);
		if (ret)
			ti->error = "Cannot format the backing device";
		sc->loaded = !ret;
		return ret;
	}
	crc = le32_to_cpu(sb->crc);
	sb->crc = 0;
	if (le32_to_cpu(sb->magic) != CV_SB_MAGIC ||
	    crc32_le(CV_SB_MAGIC, (void *)sb, sizeof(*sb)) != crc) {
		ti->error = "Backing device holds no valid dm-caveat superblock; add 'format' to initialise it (destroys its data)";
		return -EINVAL;
	}
	if (le32_to_cpu(sb->version) != CV_VERSION) {
		ti->error = "Unsupported on-disk format version";
		return -EINVAL;
	}
	if (le32_to_cpu(sb->block_size) != sc->block_size ||
	    le64_to_cpu(sb->nr_blocks) != sc->nr_blocks ||
	    le64_to_cpu(sb->did) != sc->did ||
	    le64_to_cpu(sb->dnor) != sc->dnor ||
	    le64_to_cpu(sb->unshingled) != sc->unshingled ||
	    le64_to_cpu(sb->data_start) != sc->data_start ||
	    le32_to_cpu(sb->md_pages) != sc->md_pages ||
	    le32_to_cpu(sb->bits_per_page) != CV_MD_BITS) {
		DMERR("on-disk geometry: %llu blocks of %u bytes, did %llu, dnor %llu, unshingled %llu",
		      le64_to_cpu(sb->nr_blocks), le32_to_cpu(sb->block_size),
		      le64_to_cpu(sb->did), le64_to_cpu(sb->dnor),
		      le64_to_cpu(sb->unshingled));
		ti->error = "Table geometry differs from the on-disk superblock (see the kernel log); use the matching table or add 'format' (destroys data)";
		return -EINVAL;
	}
	sc->format_id = le64_to_cpu(sb->format_id);
	/* The bitmap is loaded when the table goes live: cv_preresume(). */
	return 0;
}

/* ---------------------------------------------------------------- I/O --- */

/* The damage range of a write of blocks first..last; false if empty. */
static bool cv_damage_range(struct cv_target *sc, u64 first, u64 last,
			    u64 *d0, u64 *d1)
{
	u64 a, b;

	if (last < sc->unshingled || !sc->did)
		return false;
	a = max3(first + 1 + sc->dnor, last + 1, sc->unshingled);
	b = min(last + sc->did, sc->nr_blocks - 1);
	if (a > b)
		return false;
	*d0 = a;
	*d1 = b;
	return true;
}

static void cv_taint(struct cv_io *io, u64 a, u64 b)
{
	if (io->t0 > io->t1) {
		io->t0 = a;
		io->t1 = b;
	} else {
		io->t0 = min(io->t0, a);
		io->t1 = max(io->t1, b);
	}
}

/*
 * Lock held. The emulated medium applies writes in the order they are
 * mapped: a write mapped now damages the blocks of writes still in flight
 * that lie in its damage range, so those do not become valid when they
 * complete. (A write in flight that was mapped earlier damages nothing of
 * this one: this one overwrites its damage.)
 */
static void cv_check_inflight(struct cv_target *sc, struct cv_io *io)
{
	struct cv_io *x;

	if (io->d0 > io->d1)
		return;
	list_for_each_entry(x, &sc->inflight, list)
		if (io->d0 <= x->last && x->first <= io->d1)
			cv_taint(x, max(io->d0, x->first), min(io->d1, x->last));
}

static void cv_defer(struct cv_target *sc, struct bio_list *list, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->lock, flags);
	bio_list_add(list, bio);
	spin_unlock_irqrestore(&sc->lock, flags);
	queue_work(sc->wq, &sc->work);
}

/* A write finished (or failed before it was issued). */
static void cv_write_done(struct cv_target *sc, struct cv_io *io,
			  blk_status_t sts)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->lock, flags);
	list_del(&io->list);
	if (!sts) {
		if (io->t0 > io->t1 || io->t1 < io->first || io->t0 > io->last) {
			cv_set_range(sc, io->first, io->last);
		} else {
			if (io->t0 > io->first)
				cv_set_range(sc, io->first, io->t0 - 1);
			if (io->t1 < io->last)
				cv_set_range(sc, io->t1 + 1, io->last);
		}
	}
	cv_unpin(sc, io->first, io->last);
	spin_unlock_irqrestore(&sc->lock, flags);
}

static void cv_write_endio(struct bio *clone)
{
	struct bio *bio = clone->bi_private;
	struct cv_target *sc = container_of(clone->bi_pool, struct cv_target, bs);
	struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));
	blk_status_t sts = clone->bi_status;

	bio_put(clone);
	cv_write_done(sc, io, sts);
	if (!sts && io->fua) {
		/* Acknowledged once the commit made it durable. */
		io->status = BLK_STS_OK;
		cv_defer(sc, &sc->commit_bios, bio);
		return;
	}
	bio->bi_status = sts;
	bio_endio(bio);
}

static void cv_submit_write(struct cv_target *sc, struct bio *bio)
{
	struct bio *clone;

	clone = bio_alloc_clone(sc->dev->bdev, bio, GFP_NOIO, &sc->bs);
	clone->bi_iter.bi_sector = sc->data_start +
		dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	/* The worker commits before it acknowledges a FUA write. */
	clone->bi_opf &= ~REQ_FUA;
	/* dm polls only the bios it submits itself (as in dm-smr). */
	bio_clear_polled(clone);
	clone->bi_private = bio;
	clone->bi_end_io = cv_write_endio;
	dm_submit_bio_remap(bio, clone);
}

/* With scramble: overwrite the damage range on the backing device. */
static int cv_scramble_range(struct cv_target *sc, u64 d0, u64 d1)
{
	sector_t sector = sc->data_start + (d0 << sc->bshift);
	u64 left = (d1 - d0 + 1) << (sc->bshift + SECTOR_SHIFT);
	int ret = 0;

	while (left && !ret) {
		struct bio *bio = bio_alloc(sc->dev->bdev, BIO_MAX_VECS,
					    REQ_OP_WRITE | REQ_SYNC, GFP_NOIO);
		unsigned int i;

		bio->bi_iter.bi_sector = sector;
		for (i = 0; i < BIO_MAX_VECS && left; i++) {
			unsigned int len = min_t(u64, left, PAGE_SIZE);

			__bio_add_page(bio, sc->scramble_page, len, 0);
			left -= len;
		}
		sector += bio_sectors(bio);
		ret = submit_bio_wait(bio);
		bio_put(bio);
	}
	return ret;
}

static int cv_map_write(struct cv_target *sc, struct bio *bio,
			struct cv_io *io, bool in_map);

/* Writes that found no memory in the worker either: try again. */
static void cv_nomem_work(struct work_struct *work)
{
	struct cv_target *sc = container_of(to_delayed_work(work),
					    struct cv_target, nomem_dwork);

	queue_work(sc->wq, &sc->work);
}

static void cv_work(struct work_struct *work)
{
	struct cv_target *sc = container_of(work, struct cv_target, work);
	struct bio_list wal, commits, flushes, nomem;
	blk_status_t sts = BLK_STS_OK;
	struct bio *bio;

	/* Writes map() found no pages for: map them here, where we may wait. */
	spin_lock_irq(&sc->lock);
	nomem = sc->nomem_bios;
	bio_list_init(&sc->nomem_bios);
	spin_unlock_irq(&sc->lock);
	while ((bio = bio_list_pop(&nomem))) {
		struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));

		if (cv_map_write(sc, bio, io, false) == DM_MAPIO_KILL)
			bio_io_error(bio);
	}

	spin_lock_irq(&sc->lock);
	wal = sc->wal_bios;
	commits = sc->commit_bios;
	flushes = sc->flush_bios;
	bio_list_init(&sc->wal_bios);
	bio_list_init(&sc->commit_bios);
	bio_list_init(&sc->flush_bios);
	spin_unlock_irq(&sc->lock);

	if (bio_list_empty(&wal) && bio_list_empty(&commits) &&
	    bio_list_empty(&flushes))
		return;
	if (cv_commit(sc))
		sts = BLK_STS_IOERR;

	while ((bio = bio_list_pop(&flushes))) {
		bio->bi_status = sts;
		bio_endio(bio);
	}
	while ((bio = bio_list_pop(&commits))) {
		struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));

		bio->bi_status = sts ? sts : io->status;
		bio_endio(bio);
	}
	while ((bio = bio_list_pop(&wal))) {
		struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));
		blk_status_t s = sts;

		/* The damage is durable: the write may now destroy the data. */
		if (sc->scramble && io->live) {
			if (!s && cv_scramble_range(sc, io->d0, io->d1))
				s = BLK_STS_IOERR;
			/* Writes queued behind it are submitted after it. */
			spin_lock_irq(&sc->lock);
			sc->scrambles_pending--;
			spin_unlock_irq(&sc->lock);
		}
		if (s) {
			cv_write_done(sc, io, s);
			bio->bi_status = s;
			bio_endio(bio);
			continue;
		}
		cv_submit_write(sc, bio);
	}
}

/*
 * Test only: fail this many of the next page allocations in map(), as
 * memory pressure would (tests/test_cv_04_writers.sh). 0: none.
 */
static unsigned int fail_map_allocs;
module_param(fail_map_allocs, uint, 0600);
MODULE_PARM_DESC(fail_map_allocs, "test only: fail this many of the next page allocations in map()");

/*
 * Add @need pages to the spares. From map() (@in_map) without waiting:
 * false if memory is short, and the worker maps the write instead. From
 * the worker with GFP_NOIO, which may reclaim but not loop forever: false
 * again, and the worker tries again in CV_NOMEM_RETRY_MS (it also does
 * every commit and scramble, which must not wait behind one write).
 */
static bool cv_refill_spares(struct cv_target *sc, unsigned int need,
			     bool in_map)
{
	while (need--) {
		unsigned long p;

		if (in_map)
			p = smr_fault_take(&fail_map_allocs) ? 0 :
				__get_free_page(GFP_NOWAIT | __GFP_NOWARN);
		else
			p = __get_free_page(GFP_NOIO | __GFP_NOWARN);
		if (!p)
			return false;
		spin_lock_irq(&sc->lock);
		if (sc->nr_spare < CV_SPARE_MAX)
			sc->spare[sc->nr_spare++] = (unsigned long *)p;
		else
			free_page(p);
		spin_unlock_irq(&sc->lock);
	}
	return true;
}

/*
 * Map a write, from map() (@in_map) or from the worker (a write map()
 * found no pages for). Returns the DM_MAPIO_* value map() should return.
 */
static int cv_map_write(struct cv_target *sc, struct bio *bio,
			struct cv_io *io, bool in_map)
{
	sector_t sector = dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	unsigned int nr = bio_sectors(bio);
	u64 lo = 0, hi = 0, live = 0;
	unsigned int need;
	bool dmg, defer;

	if (unlikely((sector | nr) & ((1U << sc->bshift) - 1))) {
		DMERR_LIMIT("%s: write of %u sectors at sector %llu is not aligned to the %u-byte block size",
			    cv_name(sc), nr, (unsigned long long)sector,
			    sc->block_size);
		return DM_MAPIO_KILL;
	}
	io->kind = CV_IO_WRITE;
	io->first = sector >> sc->bshift;
	io->last = io->first + (nr >> sc->bshift) - 1;
	io->fua = bio->bi_opf & REQ_FUA;
	io->t0 = 1;
	io->t1 = 0;
	io->live = false;
	dmg = cv_damage_range(sc, io->first, io->last, &io->d0, &io->d1);
	if (!dmg) {
		io->d0 = 1;
		io->d1 = 0;
	}

	for (;;) {
		spin_lock_irq(&sc->lock);
		live = dmg ? cv_count_valid(sc, io->d0, io->d1, &lo, &hi) : 0;
		need = cv_edge_need(sc, io->first, io->last, true);
		if (live)
			need += cv_edge_need(sc, io->d0, io->d1, false);
		if (need <= sc->nr_spare)
			break;
		spin_unlock_irq(&sc->lock);
		if (!cv_refill_spares(sc, need, in_map)) {
			if (in_map) {
				/* map() must not wait for memory: the worker may. */
				cv_defer(sc, &sc->nomem_bios, bio);
				return DM_MAPIO_SUBMITTED;
			}
			spin_lock_irq(&sc->lock);
			bio_list_add(&sc->nomem_bios, bio);
			spin_unlock_irq(&sc->lock);
			DMWARN_LIMIT("%s: no memory for the damage map; retrying a write",
				     cv_name(sc));
			queue_delayed_work(sc->wq, &sc->nomem_dwork,
					   msecs_to_jiffies(CV_NOMEM_RETRY_MS));
			return DM_MAPIO_SUBMITTED;
		}
	}
	cv_prepare_set(sc, io->first, io->last);
	cv_check_inflight(sc, io);
	list_add_tail(&io->list, &sc->inflight);
	sc->stats.writes++;
	if (dmg) {
		sc->stats.damaging_writes++;
		sc->stats.damaged_blocks += io->d1 - io->d0 + 1;
	}
	if (live) {
		cv_clear_range(sc, io->d0, io->d1);
		sc->damage_seq++;
		sc->stats.live_damage_writes++;
		sc->stats.live_damaged_blocks += live;
		io->live = true;
	}
	defer = dmg && (live || sc->damage_seq != sc->durable_seq);
	if (sc->scramble) {
		if (sc->scrambles_pending)
			defer = true;
		if (live)
			sc->scrambles_pending++;
	}
	if (defer)
		bio_list_add(&sc->wal_bios, bio);
	spin_unlock_irq(&sc->lock);

	if (live) {
		cv_nl_damage(&sc->nl, io->first, io->last, lo, hi, io->d0,
			     io->d1, live);
		DMINFO_LIMIT("%s: write of blocks %llu+%llu damaged %llu live blocks in %llu..%llu (damage range %llu..%llu)",
			     cv_name(sc), io->first, io->last - io->first + 1,
			     live, lo, hi, io->d0, io->d1);
	}
	if (defer)
		queue_work(sc->wq, &sc->work);
	else
		cv_submit_write(sc, bio);
	return DM_MAPIO_SUBMITTED;
}

static int cv_map_read(struct cv_target *sc, struct bio *bio, struct cv_io *io)
{
	sector_t sector = dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	u64 first = sector >> sc->bshift;
	u64 last = (sector + bio_sectors(bio) - 1) >> sc->bshift;
	bool ok, any = true;

	spin_lock_irq(&sc->lock);
	ok = cv_all_valid(sc, first, last);
	if (!ok) {
		sc->stats.damaged_reads++;
		if (sc->zero_reads) {
			bool v;
			u64 e = cv_run_end(sc, first, last + 1, &v);

			/* Any valid block to read at all? */
			any = v || e != last + 1;
		}
	}
	spin_unlock_irq(&sc->lock);

	if (!ok && !sc->zero_reads) {
		bio->bi_status = BLK_STS_MEDIUM;
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (!ok && !any) {
		/* Every block is damaged: nothing to read. */
		zero_fill_bio(bio);
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	if (!ok) {
		io->kind = CV_IO_READ_ZERO;
		io->iter = bio->bi_iter;
	}
	bio_set_dev(bio, sc->dev->bdev);
	bio->bi_iter.bi_sector = sc->data_start + sector;
	return DM_MAPIO_REMAPPED;
}

static int cv_map(struct dm_target *ti, struct bio *bio)
{
	struct cv_target *sc = ti->private;
	struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));

	io->kind = CV_IO_NONE;
	if (unlikely(bio->bi_opf & REQ_PREFLUSH) && !bio_sectors(bio)) {
		cv_defer(sc, &sc->flush_bios, bio);
		return DM_MAPIO_SUBMITTED;
	}
	/*
	 * Nothing else without data touches a block; the block arithmetic
	 * below would index before block 0. Neither the page cache nor
	 * direct I/O sends one; this guards other kernel callers.
	 */
	if (unlikely(!bio_sectors(bio))) {
		bio_endio(bio);
		return DM_MAPIO_SUBMITTED;
	}
	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return cv_map_read(sc, bio, io);
	case REQ_OP_WRITE:
		return cv_map_write(sc, bio, io, true);
	default:
		return DM_MAPIO_KILL;
	}
}

/* Zero mode, a read that touched damaged blocks: zero them. */
static int cv_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error)
{
	struct cv_target *sc = ti->private;
	struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));
	u64 pos, bsize = sc->block_size;
	struct bvec_iter iter;
	struct bio_vec bv;
	unsigned long flags;

	if (io->kind != CV_IO_READ_ZERO || *error)
		return DM_ENDIO_DONE;
	pos = (u64)dm_target_offset(ti, io->iter.bi_sector) << SECTOR_SHIFT;
	spin_lock_irqsave(&sc->lock, flags);
	__bio_for_each_segment(bv, bio, iter, io->iter) {
		unsigned int off = 0;

		while (off < bv.bv_len) {
			unsigned int len = min_t(u64, bv.bv_len - off,
						 bsize - (pos & (bsize - 1)));

			if (!cv_block_valid(sc, pos >> (sc->bshift + SECTOR_SHIFT)))
				memzero_page(bv.bv_page, bv.bv_offset + off, len);
			off += len;
			pos += len;
		}
	}
	spin_unlock_irqrestore(&sc->lock, flags);
	return DM_ENDIO_DONE;
}

/* --------------------------------------------------------------- ctr --- */

static int cv_parse_u64(const char *s, u64 *v)
{
	/* Unlike sscanf, kstrtoull refuses values that overflow. */
	if (!s || !isdigit(*s) || kstrtoull(s, 10, v))
		return -EINVAL;
	return 0;
}

static int cv_parse_opts(struct cv_target *sc, struct dm_arg_set *as)
{
	static const struct dm_arg _args[] = {
		{0, 8, "Invalid number of optional arguments"},
	};
	struct dm_target *ti = sc->ti;
	unsigned int argc, bit;
	const char *name, *val;
	u64 v;
	int ret;

	if (!as->argc)
		return 0;
	ret = dm_read_arg_group(_args, as, &argc, &ti->error);
	if (ret)
		return ret;
	while (argc) {
		name = dm_shift_arg(as);
		argc--;
		if (!strcasecmp(name, "format"))
			bit = CV_OPT_FORMAT;
		else if (!strcasecmp(name, "scramble"))
			bit = CV_OPT_SCRAMBLE;
		else if (!strcasecmp(name, "block_size"))
			bit = CV_OPT_BLOCK_SIZE;
		else if (!strcasecmp(name, "unshingled"))
			bit = CV_OPT_UNSHINGLED;
		else if (!strcasecmp(name, "on_damaged_read"))
			bit = CV_OPT_ODR;
		else {
			ti->error = "Unknown optional argument (block_size, unshingled, on_damaged_read, scramble, format)";
			return -EINVAL;
		}
		if (sc->opt_mask & bit) {
			ti->error = "Optional argument given twice";
			return -EINVAL;
		}
		sc->opt_mask |= bit;
		if (bit == CV_OPT_FORMAT) {
			sc->format = true;
			continue;
		}
		if (bit == CV_OPT_SCRAMBLE) {
			sc->scramble = true;
			continue;
		}
		if (!argc) {
			ti->error = "Optional argument is missing its value";
			return -EINVAL;
		}
		val = dm_shift_arg(as);
		argc--;
		switch (bit) {
		case CV_OPT_BLOCK_SIZE:
			if (cv_parse_u64(val, &v) || v < CV_MIN_BLOCK_SIZE ||
			    v > CV_MAX_BLOCK_SIZE || !is_power_of_2(v)) {
				ti->error = "block_size must be a power of two from 512 to 65536 bytes";
				return -EINVAL;
			}
			sc->block_size = v;
			break;
		case CV_OPT_UNSHINGLED:
			if (cv_parse_u64(val, &sc->unshingled)) {
				ti->error = "Invalid unshingled (a number of blocks)";
				return -EINVAL;
			}
			break;
		case CV_OPT_ODR:
			if (!strcasecmp(val, "error")) {
				sc->zero_reads = false;
			} else if (!strcasecmp(val, "zero")) {
				sc->zero_reads = true;
			} else {
				ti->error = "on_damaged_read must be error or zero";
				return -EINVAL;
			}
			break;
		}
	}
	if (as->argc) {
		ti->error = "Too many arguments";
		return -EINVAL;
	}
	return 0;
}

static int cv_check_geometry(struct cv_target *sc)
{
	struct dm_target *ti = sc->ti;
	sector_t bsect = sc->block_size >> SECTOR_SHIFT;
	sector_t need, have;

	sc->bshift = ilog2(bsect);
	if (!ti->len || (ti->len & (bsect - 1))) {
		ti->error = "Target length must be a non-zero multiple of block_size";
		return -EINVAL;
	}
	sc->nr_blocks = ti->len >> sc->bshift;
	if (sc->dnor > sc->did) {
		ti->error = "DNOR must not exceed DID (0 <= DNOR <= DID)";
		return -EINVAL;
	}
	if (sc->did > CV_MAX_DID) {
		ti->error = "DID too large (at most 2^32 blocks)";
		return -EINVAL;
	}
	if (sc->unshingled > sc->nr_blocks) {
		ti->error = "unshingled exceeds the capacity in blocks";
		return -EINVAL;
	}
	if (div_u64(sc->nr_blocks + CV_MD_BITS - 1, CV_MD_BITS) > (U32_MAX >> 2)) {
		ti->error = "Device too large";
		return -EINVAL;
	}
	sc->md_pages = div_u64(sc->nr_blocks + CV_MD_BITS - 1, CV_MD_BITS);
	sc->data_start = round_up(cv_slot_sector(sc->md_pages, 0),
				  CV_ALIGN_SECTORS);
	sc->nr_chunks = DIV_ROUND_UP_ULL(sc->nr_blocks, CV_CHUNK_BLOCKS);
	need = sc->data_start + ti->len;
	have = bdev_nr_sectors(sc->dev->bdev);
	if (have < need) {
		DMERR("backing device has %llu sectors, needs %llu (%llu of metadata + %llu of data)",
		      (unsigned long long)have, (unsigned long long)need,
		      (unsigned long long)sc->data_start,
		      (unsigned long long)ti->len);
		ti->error = "Backing device too small for this table (sizes in the kernel log)";
		return -EINVAL;
	}
	return 0;
}

static void cv_free(struct cv_target *sc)
{
	int i;

	/* Nothing is in flight by now: no write waits for memory. */
	cancel_delayed_work_sync(&sc->nomem_dwork);
	if (sc->wq)
		destroy_workqueue(sc->wq);
	bioset_exit(&sc->bs);
	for (i = 0; i < CV_MD_BATCH; i++)
		if (sc->md_page[i])
			__free_page(sc->md_page[i]);
	if (sc->scramble_page)
		__free_page(sc->scramble_page);
	bitmap_free(sc->slot_b);
	bitmap_free(sc->dirty);
	cv_free_chunks(sc);
	if (sc->dev)
		dm_put_device(sc->ti, sc->dev);
	kfree(sc);
}

static int cv_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct cv_target *sc;
	int ret, i;

	if (argc < 3) {
		ti->error = "Usage: <dev> <did> <dnor> [<#opt_args> <opt_args>...]";
		return -EINVAL;
	}
	if (!smr_table_writable(ti)) {
		ti->error = "A read-only table is not supported";
		return -EINVAL;
	}
	sc = kzalloc(sizeof(*sc), GFP_KERNEL);
	if (!sc) {
		ti->error = "Cannot allocate the target context";
		return -ENOMEM;
	}
	sc->ti = ti;
	sc->block_size = 4096;
	spin_lock_init(&sc->lock);
	mutex_init(&sc->commit_lock);
	INIT_LIST_HEAD(&sc->inflight);
	bio_list_init(&sc->wal_bios);
	bio_list_init(&sc->commit_bios);
	bio_list_init(&sc->flush_bios);
	bio_list_init(&sc->nomem_bios);
	INIT_WORK(&sc->work, cv_work);
	INIT_DELAYED_WORK(&sc->nomem_dwork, cv_nomem_work);

	ret = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			    &sc->dev);
	if (ret) {
		ti->error = "Cannot open the backing device";
		goto bad;
	}
	ret = -EINVAL;
	if (cv_parse_u64(dm_shift_arg(&as), &sc->did)) {
		ti->error = "Invalid DID (a number of blocks)";
		goto bad;
	}
	if (cv_parse_u64(dm_shift_arg(&as), &sc->dnor)) {
		ti->error = "Invalid DNOR (a number of blocks)";
		goto bad;
	}
	ret = cv_parse_opts(sc, &as);
	if (ret)
		goto bad;
	ret = cv_check_geometry(sc);
	if (ret)
		goto bad;

	ret = -ENOMEM;
	sc->chunks = kvcalloc(sc->nr_chunks, sizeof(*sc->chunks), GFP_KERNEL);
	sc->slot_b = bitmap_zalloc(sc->md_pages, GFP_KERNEL);
	sc->dirty = bitmap_zalloc(sc->md_pages, GFP_KERNEL);
	if (!sc->chunks || !sc->slot_b || !sc->dirty) {
		ti->error = "Cannot allocate the damage map";
		goto bad;
	}
	for (i = 0; i < CV_MD_BATCH; i++) {
		sc->md_page[i] = alloc_page(GFP_KERNEL);
		if (!sc->md_page[i]) {
			ti->error = "Cannot allocate metadata buffers";
			goto bad;
		}
	}
	if (sc->scramble) {
		sc->scramble_page = alloc_page(GFP_KERNEL);
		if (!sc->scramble_page) {
			ti->error = "Cannot allocate the scramble buffer";
			goto bad;
		}
		memset(page_address(sc->scramble_page), 0xdb, PAGE_SIZE);
	}
	ret = bioset_init(&sc->bs, BIO_POOL_SIZE, 0, 0);
	if (ret) {
		ti->error = "Cannot allocate the bio set";
		goto bad;
	}
	sc->wq = alloc_ordered_workqueue("dm-caveat-%s", WQ_MEM_RECLAIM,
					 dm_table_device_name(ti->table));
	if (!sc->wq) {
		ret = -ENOMEM;
		ti->error = "Cannot allocate the workqueue";
		goto bad;
	}
	ret = cv_md_load_or_format(sc);
	if (ret)
		goto bad;

	ti->private = sc;
	ti->num_flush_bios = 1;
	ti->flush_supported = true;
	ti->per_io_data_size = sizeof(struct cv_io);
	cv_nl_register(&sc->nl, ti);
	return 0;

bad:
	cv_free(sc);
	return ret;
}

/*
 * No commit here: a table that was live committed in postsuspend (dm
 * suspends a live table before destroying it), a successor table may own
 * the damage map by now, and one that never went live has nothing of its
 * own to write.
 */
static void cv_dtr(struct dm_target *ti)
{
	struct cv_target *sc = ti->private;

	cv_nl_unregister(&sc->nl);
	flush_workqueue(sc->wq);
	cv_free(sc);
}

/*
 * Load the damage map when the table first goes live. Not in the
 * constructor: when a table is loaded over a live one, the live table
 * keeps writing, and commits, until it is suspended; only then, just
 * before this, is the map on disk the last word. The device is suspended
 * here, so the allocations must not recurse into I/O.
 */
static int cv_preresume(struct dm_target *ti)
{
	struct cv_target *sc = ti->private;
	unsigned int noio;
	int ret;

	if (sc->loaded)
		return 0;
	noio = memalloc_noio_save();
	ret = cv_load_bitmap(sc);
	memalloc_noio_restore(noio);
	if (ret) {
		DMERR("%s: cannot load the damage bitmap: %d", cv_name(sc), ret);
		return ret;
	}
	sc->loaded = true;
	return 0;
}

static void cv_postsuspend(struct dm_target *ti)
{
	struct cv_target *sc = ti->private;

	/* No I/O is in flight now: make the damage map durable. */
	flush_workqueue(sc->wq);
	cv_commit(sc);
}

/* ------------------------------------------------- status, messages --- */

static size_t cv_mem_bytes(struct cv_target *sc)
{
	return sizeof(*sc) + sc->nr_chunks * sizeof(struct cv_chunk) +
		(sc->nr_bitmaps + sc->nr_spare) * PAGE_SIZE +
		2 * BITS_TO_LONGS(sc->md_pages) * sizeof(long) +
		(CV_MD_BATCH + !!sc->scramble_page) * PAGE_SIZE;
}

/*
 * STATUSTYPE_INFO (one line, space separated):
 *
 *   <writes> <damaging_writes> <damaged_blocks> <live_damage_writes>
 *   <live_damaged_blocks> <damaged_reads> <valid_blocks> <commits>
 *   <mem_bytes>
 *
 * Counters since creation or the last clear_stats message: writes are
 * write bios; damaging_writes those whose damage range (after clipping)
 * is not empty, damaged_blocks the sum of those ranges in blocks (blocks
 * made maybe damaged, whether or not they already were); live_damage_writes
 * the writes that damaged valid blocks (written, not damaged since) and
 * live_damaged_blocks how many: the data lost; damaged_reads the reads
 * that touched maybe-damaged blocks (failed with a medium error, or read
 * zeros there with on_damaged_read zero); commits metadata commits.
 * valid_blocks is the current number of valid blocks, mem_bytes the
 * memory this device holds (damage map and buffers).
 */
static void cv_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result,
		      unsigned int maxlen)
{
	struct cv_target *sc = ti->private;
	struct cv_stats st;
	unsigned int sz = 0, nopt;
	size_t mem;
	u64 valid;

	switch (type) {
	case STATUSTYPE_INFO:
		spin_lock_irq(&sc->lock);
		st = sc->stats;
		valid = sc->nr_valid;
		mem = cv_mem_bytes(sc);
		spin_unlock_irq(&sc->lock);
		DMEMIT("%llu %llu %llu %llu %llu %llu %llu %llu %zu",
		       st.writes, st.damaging_writes, st.damaged_blocks,
		       st.live_damage_writes, st.live_damaged_blocks,
		       st.damaged_reads, valid, st.commits, mem);
		break;
	case STATUSTYPE_TABLE:
		/* "format" is not printed back: reloading must not format. */
		DMEMIT("%s %llu %llu", sc->dev->name, sc->did, sc->dnor);
		nopt = 2 * !!(sc->opt_mask & CV_OPT_BLOCK_SIZE) +
			2 * !!(sc->opt_mask & CV_OPT_UNSHINGLED) +
			2 * !!(sc->opt_mask & CV_OPT_ODR) +
			!!(sc->opt_mask & CV_OPT_SCRAMBLE);
		if (nopt)
			DMEMIT(" %u", nopt);
		if (sc->opt_mask & CV_OPT_BLOCK_SIZE)
			DMEMIT(" block_size %u", sc->block_size);
		if (sc->opt_mask & CV_OPT_UNSHINGLED)
			DMEMIT(" unshingled %llu", sc->unshingled);
		if (sc->opt_mask & CV_OPT_ODR)
			DMEMIT(" on_damaged_read %s",
			       sc->zero_reads ? "zero" : "error");
		if (sc->opt_mask & CV_OPT_SCRAMBLE)
			DMEMIT(" scramble");
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",capacity=%llu,block_size=%u,did=%llu,dnor=%llu,unshingled=%llu,on_damaged_read=%s,scramble=%c;",
		       sc->nr_blocks, sc->block_size, sc->did, sc->dnor,
		       sc->unshingled, sc->zero_reads ? "zero" : "error",
		       sc->scramble ? 'y' : 'n');
		break;
	}
}

/* For the netlink dump: the status counters and the geometry. */
void cv_nl_snapshot(struct cv_nl_dev *d, struct cv_nl_snap *s)
{
	struct cv_target *sc = container_of(d, struct cv_target, nl);
	struct cv_stats st;

	spin_lock_irq(&sc->lock);
	st = sc->stats;
	s->valid_blocks = sc->nr_valid;
	s->mem_bytes = cv_mem_bytes(sc);
	spin_unlock_irq(&sc->lock);
	s->nr_blocks = sc->nr_blocks;
	s->block_size = sc->block_size;
	s->did = sc->did;
	s->dnor = sc->dnor;
	s->unshingled = sc->unshingled;
	s->writes = st.writes;
	s->damaging_writes = st.damaging_writes;
	s->damaged_blocks = st.damaged_blocks;
	s->live_damage_writes = st.live_damage_writes;
	s->live_damaged_blocks = st.live_damaged_blocks;
	s->damaged_reads = st.damaged_reads;
	s->commits = st.commits;
}

void cv_nl_clear_stats(struct cv_nl_dev *d)
{
	struct cv_target *sc = container_of(d, struct cv_target, nl);

	spin_lock_irq(&sc->lock);
	memset(&sc->stats, 0, sizeof(sc->stats));
	spin_unlock_irq(&sc->lock);
}

/* dump [<start> <count>]: maybe-damaged extents as "start+len" tokens. */
static int cv_msg_dump(struct cv_target *sc, unsigned int argc, char **argv,
		       char *result, unsigned int maxlen)
{
	u64 start = 0, count = sc->nr_blocks, pos, end, e;
	unsigned int sz = 0;
	bool v, first = true;

	if (argc != 1 && argc != 3) {
		DMERR("%s: usage: dump [<start> <count>]", cv_name(sc));
		return -EINVAL;
	}
	if (argc == 3 && (cv_parse_u64(argv[1], &start) ||
			  cv_parse_u64(argv[2], &count))) {
		DMERR("%s: dump: start and count must be numbers of blocks",
		      cv_name(sc));
		return -EINVAL;
	}
	if (!count || start >= sc->nr_blocks || count > sc->nr_blocks - start) {
		DMERR("%s: dump: range %llu+%llu is empty or past the end (%llu blocks)",
		      cv_name(sc), start, count, sc->nr_blocks);
		return -EINVAL;
	}
	end = start + count;
	spin_lock_irq(&sc->lock);
	for (pos = start; pos < end; pos = e) {
		e = cv_run_end(sc, pos, end, &v);
		if (v)
			continue;
		/* Keep room for the marker: the output is never cut silently. */
		if (maxlen - sz < 64) {
			DMEMIT("%struncated next=%llu", first ? "" : " ", pos);
			break;
		}
		DMEMIT("%s%llu+%llu", first ? "" : " ", pos, e - pos);
		first = false;
	}
	spin_unlock_irq(&sc->lock);
	return 1;
}

static int cv_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct cv_target *sc = ti->private;
	unsigned int sz = 0;
	u64 b;
	bool v;

	if (!argc) {
		DMERR("%s: empty message", cv_name(sc));
		return -EINVAL;
	}
	if (!strcasecmp(argv[0], "modsense")) {
		if (argc != 1)
			goto usage;
		DMEMIT("capacity %llu block_size %u did %llu dnor %llu unshingled %llu",
		       sc->nr_blocks, sc->block_size, sc->did, sc->dnor,
		       sc->unshingled);
		return 1;
	}
	if (!strcasecmp(argv[0], "dump"))
		return cv_msg_dump(sc, argc, argv, result, maxlen);
	if (!strcasecmp(argv[0], "query")) {
		if (argc != 2)
			goto usage;
		if (cv_parse_u64(argv[1], &b) || b >= sc->nr_blocks) {
			DMERR("%s: query: block must be a number below %llu",
			      cv_name(sc), sc->nr_blocks);
			return -EINVAL;
		}
		spin_lock_irq(&sc->lock);
		v = cv_block_valid(sc, b);
		spin_unlock_irq(&sc->lock);
		DMEMIT("%s", v ? "valid" : "damaged");
		return 1;
	}
	if (!strcasecmp(argv[0], "clear_stats")) {
		if (argc != 1)
			goto usage;
		cv_nl_clear_stats(&sc->nl);
		return 0;
	}
	DMERR("%s: unrecognised message '%s' (modsense, dump, query, clear_stats)",
	      cv_name(sc), argv[0]);
	return -EINVAL;
usage:
	DMERR("%s: wrong number of arguments for '%s' (modsense; dump [<start> <count>]; query <block>; clear_stats)",
	      cv_name(sc), argv[0]);
	return -EINVAL;
}

static int cv_iterate_devices(struct dm_target *ti,
			      iterate_devices_callout_fn fn, void *data)
{
	struct cv_target *sc = ti->private;

	return fn(ti, sc->dev, sc->data_start, ti->len, data);
}

static void cv_io_hints(struct dm_target *ti, struct queue_limits *limits)
{
	struct cv_target *sc = ti->private;
	unsigned int lbs = min_t(unsigned int, sc->block_size, PAGE_SIZE);

	limits->logical_block_size = max(limits->logical_block_size, lbs);
	limits->physical_block_size = max(limits->physical_block_size, lbs);
	limits->io_min = max_t(unsigned int, limits->io_min, sc->block_size);
	limits->max_discard_sectors = 0;
	limits->max_hw_discard_sectors = 0;
	limits->max_write_zeroes_sectors = 0;
}

static struct target_type cv_target_type = {
	.name = "caveat",
	.version = {0, 1, 0},
	.module = THIS_MODULE,
	.ctr = cv_ctr,
	.dtr = cv_dtr,
	.map = cv_map,
	.end_io = cv_end_io,
	.preresume = cv_preresume,
	.postsuspend = cv_postsuspend,
	.status = cv_status,
	.message = cv_message,
	.iterate_devices = cv_iterate_devices,
	.io_hints = cv_io_hints,
};

static int __init dm_caveat_init(void)
{
	int ret;

	ret = cv_nl_init();
	if (ret)
		return ret;
	ret = dm_register_target(&cv_target_type);
	if (ret)
		cv_nl_exit();
	return ret;
}

/* The targets are gone (each holds the module): the family goes last. */
static void __exit dm_caveat_exit(void)
{
	dm_unregister_target(&cv_target_type);
	cv_nl_exit();
}

module_init(dm_caveat_init);
module_exit(dm_caveat_exit);

MODULE_DESCRIPTION(DM_NAME " target emulating a Caveat Scriptor shingled disk");
MODULE_LICENSE("GPL");
