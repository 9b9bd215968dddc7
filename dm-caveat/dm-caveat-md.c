// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat: persistence of the damage set. What it persists is the
 * valid-block bitmap, CV_MD_BITS blocks to a page (format in
 * smr-ondisk.h); the slots, commits and superblock steps are the shared
 * store's (common/smr-slots.c). This file fills pages from the chunks
 * (records out), takes them back at load (records in), writes and checks
 * the superblock, and ties commits to the damage sequence.
 */
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "dm-caveat.h"
#include "dm-caveat-trace.h"

static u32 cv_page_bits(void *owner, u32 k)
{
	struct cv_target *sc = owner;

	return min_t(u64, CV_MD_BITS, sc->nr_blocks - (u64)k * CV_MD_BITS);
}

/* sc->lock held: the bits of page @k from the chunks. */
static void cv_build_page(void *owner, u32 k, void *buf)
{
	struct cv_target *sc = owner;
	__le64 *w = buf + CV_MD_HDR;
	u64 base = (u64)k * CV_MD_BITS;
	u32 nbits = cv_page_bits(sc, k);
	u32 i;

	/* It holds every damage stamped so far (dm-caveat-journal.c). */
	*(__le64 *)(buf + CV_MD_STAMP) = cpu_to_le64(sc->damage_seq);
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

/*
 * Set the valid bits of page @k in the chunks. @buf NULL: the page was
 * never written since format, or both copies are torn; its blocks stay
 * "maybe damaged", the safe state.
 */
static int cv_load_page(void *owner, u32 k, const void *buf)
{
	struct cv_target *sc = owner;
	const __le64 *w = buf + CV_MD_HDR;
	u64 base = (u64)k * CV_MD_BITS;
	u32 nbits = cv_page_bits(sc, k);
	u32 i;

	if (!buf)
		return 0;
	sc->ld_stamps[k] = le64_to_cpu(*(const __le64 *)(buf + CV_MD_STAMP));
	sc->damage_seq = max(sc->damage_seq, sc->ld_stamps[k]);
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

static const struct smr_slots_ops cv_md_ops = {
	.build = cv_build_page,
	.records = cv_page_bits,
	.load = cv_load_page,
};

/* Bitmap pages for @nr_blocks blocks. */
u64 cv_md_pages(u64 nr_blocks)
{
	return div_u64(nr_blocks + CV_MD_BITS - 1, CV_MD_BITS);
}

/* The store for sc->md_pages pages; the caller calls cv_md_exit() on failure. */
int cv_md_init(struct cv_target *sc)
{
	struct smr_slots *md = &sc->md;

	md->bdev = sc->dev->bdev;
	md->name = cv_name(sc);
	md->what = "bitmap page";
	md->magic = CV_MD_MAGIC;
	md->nr_blocks = sc->md_pages;
	md->missing_ok = true;
	md->state_lock = &sc->lock;
	md->ops = &cv_md_ops;
	md->owner = sc;
	return smr_slots_init(md);
}

void cv_md_exit(struct cv_target *sc)
{
	smr_slots_exit(&sc->md);
}

/*
 * Make the state so far durable: every write completed before the call
 * and every damage applied before it. commit_mutex held.
 */
int __cv_commit(struct cv_target *sc)
{
	u64 seq, t0;
	int ret;

	lockdep_assert_held(&sc->commit_mutex);
	spin_lock_irq(&sc->lock);
	seq = sc->damage_seq;
	/* Damage the journal could not take is in the pages this writes. */
	sc->jr_overflow = false;
	spin_unlock_irq(&sc->lock);
	t0 = trace_cv_md_commit_enabled() ? ktime_get_ns() : 0;
	ret = smr_slots_commit(&sc->md);
	if (t0)
		trace_cv_md_commit(sc->nl.name, READ_ONCE(sc->md.gen), ret,
				   ktime_get_ns() - t0);
	spin_lock_irq(&sc->lock);
	if (ret) {
		sc->jr_overflow = true;
		spin_unlock_irq(&sc->lock);
		return ret;
	}
	sc->stats.commits++;
	if (sc->durable_seq < seq)
		sc->durable_seq = seq;
	spin_unlock_irq(&sc->lock);
	cv_jr_committed(sc, seq);
	return 0;
}

int cv_commit(struct cv_target *sc)
{
	int ret;

	mutex_lock(&sc->commit_mutex);
	ret = __cv_commit(sc);
	mutex_unlock(&sc->commit_mutex);
	return ret;
}

static void cv_fill_super(struct cv_target *sc, struct cv_super *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->version = cpu_to_le32(CV_VERSION);
	sb->block_size = cpu_to_le32(sc->block_size);
	sb->format_id = cpu_to_le64(sc->md.format_id);
	sb->nr_blocks = cpu_to_le64(sc->nr_blocks);
	sb->did = cpu_to_le64(sc->did);
	sb->dnor = cpu_to_le64(sc->dnor);
	sb->unshingled = cpu_to_le64(sc->unshingled);
	sb->data_start = cpu_to_le64(sc->data_start);
	sb->md_pages = cpu_to_le32(sc->md_pages);
	sb->bits_per_page = cpu_to_le32(CV_MD_BITS);
	sb->journal_blocks = cpu_to_le32(sc->jr_blocks);
}

/* Only the superblock is written: a page never written reads as damaged. */
static int cv_format(struct cv_target *sc)
{
	int ret;

	/* Invalidate the old superblock before anything else changes. */
	ret = smr_sb_invalidate(&sc->md);
	if (ret)
		return ret;
	/* Bitmap pages of an older format carry another format_id. */
	smr_slots_new_format(&sc->md, false);
	cv_fill_super(sc, page_address(sc->md.pages[0]));
	return smr_sb_write(&sc->md, CV_SB_MAGIC);
}

/*
 * Read every page into the chunks, then apply the damage journal (not
 * live yet: no lock), then count.
 */
int cv_load_bitmap(struct cv_target *sc)
{
	u64 c;
	int ret;

	sc->ld_stamps = kvcalloc(sc->md_pages, sizeof(u64), GFP_KERNEL);
	if (!sc->ld_stamps)
		return -ENOMEM;
	/* Stamps continue from the newest on disk (pages and journal). */
	sc->damage_seq = 0;
	ret = smr_slots_load(&sc->md);
	if (!ret && sc->jr_blocks)
		ret = cv_jr_replay(sc);
	kvfree(sc->ld_stamps);
	sc->ld_stamps = NULL;
	if (ret)
		return ret;
	sc->durable_seq = sc->damage_seq;
	/* The one full count of the chunks. */
	sc->nr_valid = 0;
	for (c = 0; c < sc->nr_chunks; c++) {
		sc->nr_valid += cv_chunk_loaded(sc, c);
		if (!(c % 1024))
			cond_resched();
	}
	return 0;
}

/* Where the journal and the data lie, for @jr_blocks of journal. */
static void cv_set_layout(struct cv_target *sc, u32 jr_blocks)
{
	sc->jr_blocks = jr_blocks;
	sc->jr_start = smr_slots_end(sc->md_pages);
	sc->data_start = smr_slots_sectors_plus(sc->md_pages, jr_blocks);
}

/* Sets ti->error if the backing device cannot hold this layout. */
static int cv_check_size(struct cv_target *sc)
{
	struct dm_target *ti = sc->ti;
	sector_t need = sc->data_start + ti->len;
	sector_t have = bdev_nr_sectors(sc->dev->bdev);

	if (have >= need)
		return 0;
	DMERR("backing device has %llu sectors, needs %llu (%llu of metadata + %llu of data)",
	      (unsigned long long)have, (unsigned long long)need,
	      (unsigned long long)sc->data_start, (unsigned long long)ti->len);
	ti->error = "Backing device too small for this table (sizes in the kernel log)";
	return -EINVAL;
}

/*
 * Read the superblock; format an all-zero (new) device or when asked to;
 * otherwise check the table's geometry against it. A version 1 device
 * (no journal) is used as it is; format makes it version 2. The bitmap
 * is loaded when the table goes live (cv_preresume()). Sets ti->error on
 * failure.
 */
int cv_md_load_or_format(struct cv_target *sc)
{
	struct dm_target *ti = sc->ti;
	struct cv_super *sb = page_address(sc->md.pages[0]);
	u32 version, jr;
	int ret;

	ret = smr_sb_open(&sc->md, CV_SB_MAGIC, sc->format,
			  "Backing device holds no valid dm-caveat superblock; add 'format' to initialise it (destroys its data)",
			  &ti->error);
	if (ret < 0)
		return ret;
	if (ret) {
		cv_set_layout(sc, CV_JOURNAL_BLOCKS);
		ret = cv_check_size(sc);
		if (ret)
			return ret;
		ret = cv_format(sc);
		if (ret)
			ti->error = "Cannot format the backing device";
		sc->loaded = !ret;
		return ret;
	}
	version = le32_to_cpu(sb->version);
	jr = le32_to_cpu(sb->journal_blocks);
	if (version != CV_VERSION && version != CV_VERSION_NOJOURNAL) {
		ti->error = "Unsupported on-disk format version";
		return -EINVAL;
	}
	if ((version == CV_VERSION_NOJOURNAL && jr) ||
	    (version == CV_VERSION && (!jr || jr > CV_JOURNAL_MAX))) {
		ti->error = "Superblock holds an impossible journal size";
		return -EINVAL;
	}
	cv_set_layout(sc, jr);
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
	ret = cv_check_size(sc);
	if (ret)
		return ret;
	if (!jr)
		DMINFO("%s: on-disk format version 1, without a damage journal: each damaging write waits for a whole commit ('format' upgrades, destroying data)",
		       cv_name(sc));
	sc->md.format_id = le64_to_cpu(sb->format_id);
	return 0;
}
