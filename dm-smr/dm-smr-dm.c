// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: an ordinary disk outside; bands, a persistent
 * cache and band read-modify-write cleaning inside.
 *
 * Table line (sizes in 512-byte sectors):
 *
 *   smr <dev> drive-managed <band_sectors> [<#opt_args> <opt_args>...]
 *
 *   cache_sectors <n>     persistent cache size (default 1% of the length,
 *                         at least one band)
 *   idle_ms <n>           idle time before background cleaning (default
 *                         1000; 0 = never clean in the background)
 *   policy <name>         fifo | greedy | cost-benefit (default fifo)
 *   seq_bypass on|off     sequential writes go straight to their band
 *   format                initialise the backing device (destroys data)
 *
 * Backing device layout: superblock and metadata table, the cache (a log
 * of 4 KiB slots), one spare band, then the bands.
 *
 * Writes that are not sequential within their band are written to free
 * cache slots, found by a cursor that moves forward through the cache like
 * a log head and skips slots still in use. Every slot carries a sequence
 * number; the newest copy of a block wins. A slot stays in use until its
 * band is cleaned, even once a newer copy supersedes it, because a read
 * may still be in flight from it and because its record on disk must stay
 * shadowed by the newer one until the band's clean sequence retires both.
 *
 * Cleaning band B (crash-safe through the spare band):
 *   1. stop new writes to B (they wait), let writes in flight finish;
 *      S = next sequence number: every cached block of B is older;
 *   2. copy B with its cached blocks merged in to the spare band; flush;
 *   3. commit the intent "spare holds B as of S";
 *   4. copy the spare band over B; flush;
 *   5. drop B's index, set B's clean sequence to S (cache records of B
 *      older than S are dead), clear the intent; wait for reads from B's
 *      slots to finish; commit; free B's slots; let B's writes go.
 * A crash before 3 leaves B and the cache as they were; after 3 the
 * recovery copies the spare band over B again and completes 5. Nothing
 * but the spare band is written before the intent is durable, and the
 * spare band is not reused before the intent is cleared durably.
 *
 * Metadata (A/B slot commits as in host-managed mode, dm-smr-metadata.c):
 * table block 0 holds the intent, then one block per 254 cache slots
 * (sequence, block address, valid), then one per 508 bands (clean
 * sequence). A commit flushes the data first, so a record never claims a
 * slot whose data is not durable; slots whose writes are still in flight
 * are written as invalid.
 *
 * Concurrency: one ordered worker (sc->wq) handles writes, flushes and the
 * completion of cache writes, and is the only code that adds to the index.
 * The cleaner (clean_wq) removes a band's index only while no write to
 * that band is in flight or admitted. Reads are mapped in map() under
 * sc->lock, split with dm_accept_partial_bio() where cache and band meet.
 */
#include <linux/delay.h>
#include <linux/dm-io.h>
#include <linux/ioprio.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/log2.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include "smr-fault.h"
#include "dm-smr.h"
#include "dm-smr-nl.h"

#define SMR_DM_IO_SECTORS	2048	/* 1 MiB: largest host bio; bands are multiples */
#define SMR_DM_NOMEM_RETRY_MS	10	/* a write waiting for index memory */
#define SMR_DM_CHUNK_SECTORS	8192	/* 4 MiB: what cleaning copies at a time */
#define SMR_DM_CHUNK_BLOCKS	(SMR_DM_CHUNK_SECTORS / SMR_BLOCK_SECTORS)
#define SMR_DM_MIN_BAND		2048
#define SMR_DM_MAX_BAND		524288	/* 256 MiB: offsets fit in 16 bits */
#define SMR_DM_MAX_IDLE_MS	3600000
#define SMR_DM_DEFAULT_IDLE_MS	1000
#define SMR_SLOT_FREE		U32_MAX
#define SMR_BAND_NONE		U32_MAX
#define SMR_EXT_MAX_LEN		U16_MAX

#define SMR_DM_HDR		sizeof(struct smr_blk_header)

enum {
	SMR_DM_OPT_CACHE = 1 << 0,
	SMR_DM_OPT_IDLE = 1 << 1,
	SMR_DM_OPT_POLICY = 1 << 2,
	SMR_DM_OPT_BYPASS = 1 << 3,
};

/* A run of cached blocks of one band: 8 bytes. */
struct smr_ext {
	u32 slot;		/* cache slot of the first block */
	u16 off;		/* first block, from the band start */
	u16 len;		/* blocks */
};

#define SMR_BAND_CLEANING	1

struct smr_band {
	struct smr_ext *ext;	/* sorted by off, non-overlapping */
	u32 nr_ext;
	u32 cap_ext;
	u32 slots;		/* cache slots held, live or superseded */
	u32 live;		/* blocks the index maps */
	u32 writers;		/* host writes in flight to this band */
	u32 seq_next;		/* sequential stream: next sector, 0 = none */
	u64 first_seq;		/* oldest slot held */
	u64 clean_seq;		/* persisted: older slots of this band are dead */
	atomic_t readers;	/* reads in flight from its cache slots */
	u32 flags;
};

struct smr_dm_stats {
	u64 rmw[4];		/* by enum smr_clean_reason */
	u64 bg_aborts;
	u64 clean_read_sectors;
	u64 clean_write_sectors;
	u64 clean_ms_bg;
	u64 clean_ms_fg;
	u64 host_read_sectors;
	u64 host_write_sectors;
	u64 cache_write_sectors;
	u64 bypass_write_sectors;
	u64 discard_sectors;
};

struct smr_dm {
	struct smr_target *sc;

	/* Geometry and options. */
	u64 band_sectors;
	u32 band_blocks;
	u32 nr_bands;
	u64 cache_sectors;
	u32 nr_slots;
	u32 slot_blocks;	/* metadata blocks of slot records */
	sector_t cache_start;
	sector_t spare_start;
	sector_t bands_start;
	u32 idle_ms;
	u8 policy;
	bool seq_bypass;
	unsigned int opt_mask;

	/* State, under sc->lock. */
	struct smr_band *bands;
	u32 *slot_lba;
	u64 *slot_seq;
	unsigned long *slot_used;
	unsigned long *slot_inflight;
	u32 cursor;
	u32 used;
	u32 live;
	u32 nr_ext;
	u32 dirty_bands;
	size_t index_bytes;
	u64 next_seq;
	u32 intent_state;
	u32 intent_band;
	u64 intent_seq;
	bool failed;		/* an unrecoverable cleaning error */
	bool loaded;		/* state read from disk by a resume */

	/* The worker's queues, under sc->lock. */
	struct bio_list queue;	/* writes, flushes and discards to handle */
	struct bio_list parked;	/* writes waiting for cache space */
	struct bio_list held;	/* writes to the band being cleaned */
	struct bio_list done;	/* completed cache writes */

	/* Cleaning. */
	struct workqueue_struct *clean_wq;
	struct delayed_work clean_dwork;
	/* Cache writes waiting for memory to be indexed, and their retry. */
	struct bio_list nomem;
	struct delayed_work nomem_dwork;
	wait_queue_head_t wait;	/* writers/readers of a band draining */
	unsigned long last_io;	/* jiffies of the last host I/O */
	unsigned long last_write; /* jiffies of the last host write, under sc->lock */
	bool fg_wanted;
	bool manual;
	bool stop;
	u8 state;		/* enum smr_dm_state */
	u64 since_busy_ms;	/* idle/manual cleaning since the last host
				 * write (reads make no cleaning debt), under
				 * sc->lock */
	u32 level;		/* highest occupancy level reported */
	void *buf;		/* one chunk */
	struct dm_io_client *io_client;
	struct smr_ext runs[SMR_DM_CHUNK_BLOCKS];	/* cleaner's scratch */
	struct smr_dm_stats stats;
};

/* Per host bio. */
enum { SMR_IO_NONE, SMR_IO_READ_CACHE, SMR_IO_WRITE_BAND, SMR_IO_WRITE_CACHE };

struct smr_dm_io {
	u8 kind;
	bool indexed;		/* cache write: indexed at completion already */
	bool fua;
	blk_status_t status;
	u32 band;
	u32 off;		/* blocks from the band start */
	u32 nr;			/* blocks */
	u32 slot;
};

static const char * const smr_policy_names[] = {
	[SMR_POLICY_FIFO] = "fifo",
	[SMR_POLICY_GREEDY] = "greedy",
	[SMR_POLICY_COST_BENEFIT] = "cost-benefit",
};

static const char * const smr_state_names[] = {
	[SMR_DM_IDLE] = "idle",
	[SMR_DM_CLEAN_BG] = "clean-bg",
	[SMR_DM_CLEAN_FG] = "clean-fg",
	[SMR_DM_CLEAN_MANUAL] = "clean-manual",
};

static inline const char *smr_dm_name(struct smr_target *sc)
{
	return dm_table_device_name(sc->ti->table);
}

u64 smr_cache_sectors(struct smr_target *sc)
{
	return sc->dm ? sc->dm->cache_sectors : 0;
}

static inline u32 smr_band_of_block(struct smr_dm *dm, u32 lba)
{
	return lba / dm->band_blocks;
}

static inline sector_t smr_band_sector(struct smr_dm *dm, u32 band)
{
	return dm->bands_start + (sector_t)band * dm->band_sectors;
}

static inline sector_t smr_slot_sector_dm(struct smr_dm *dm, u32 slot)
{
	return dm->cache_start + (sector_t)slot * SMR_BLOCK_SECTORS;
}

static inline void smr_mark_slots_dirty(struct smr_target *sc, u32 slot, u32 n)
{
	u32 k;

	for (k = slot / SMR_SLOTS_PER_BLOCK; k <= (slot + n - 1) / SMR_SLOTS_PER_BLOCK; k++)
		set_bit(1 + k, sc->dirty);
}

static inline void smr_mark_band_dirty(struct smr_target *sc, u32 band)
{
	set_bit(1 + sc->dm->slot_blocks + band / SMR_BANDS_PER_BLOCK, sc->dirty);
}

/* ------------------------------------------------------------------ */
/* The cache index: per band, a sorted array of extents.               */
/* ------------------------------------------------------------------ */

/* First extent that ends after block @off. */
static u32 smr_ext_find(struct smr_band *b, u32 off)
{
	u32 lo = 0, hi = b->nr_ext;

	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if ((u32)b->ext[mid].off + b->ext[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool smr_ext_overlaps(struct smr_band *b, u32 off, u32 n)
{
	u32 i = smr_ext_find(b, off);

	return i < b->nr_ext && b->ext[i].off < off + n;
}

/*
 * Blocks from @off (at most @n) served by one source: the cache, from
 * *slot on, or the band (*slot = SMR_SLOT_FREE).
 */
static u32 smr_ext_lookup(struct smr_band *b, u32 off, u32 n, u32 *slot)
{
	u32 i = smr_ext_find(b, off);

	if (i < b->nr_ext && b->ext[i].off <= off) {
		*slot = b->ext[i].slot + (off - b->ext[i].off);
		return min_t(u32, n, b->ext[i].off + b->ext[i].len - off);
	}
	*slot = SMR_SLOT_FREE;
	if (i < b->nr_ext)
		return min_t(u32, n, b->ext[i].off - off);
	return n;
}

/* Extents the band holds after inserting [off, off + n): an upper bound. */
static u32 smr_ext_need(struct smr_band *b, u32 off, u32 n)
{
	u32 end = off + n, i = smr_ext_find(b, off), j = i;

	while (j < b->nr_ext && b->ext[j].off < end)
		j++;
	return b->nr_ext - (j - i) + 3;
}

/*
 * Resize a band's array to hold @need extents. Only the worker resizes,
 * and only while a write to that band is in flight, so the cleaner cannot
 * drop it meanwhile; completions may still insert into it (when it has
 * room), so the size is checked again under the lock: a shrink that no
 * longer fits is given up.
 */
/*
 * Test only: fail this many of the next extent array growths of a cache
 * write being indexed, as memory pressure would
 * (tests/test_dm_03_bad_input.sh). 0: none.
 */
static unsigned int fail_ext_allocs;
module_param(fail_ext_allocs, uint, 0600);
MODULE_PARM_DESC(fail_ext_allocs, "test only: fail this many of the next cache index allocations");

static int smr_ext_resize(struct smr_target *sc, struct smr_band *b, u32 need)
{
	struct smr_dm *dm = sc->dm;
	struct smr_ext *new, *old;
	u32 cap = need ? roundup_pow_of_two(need) : 0;

	if (cap == b->cap_ext)
		return 0;
	new = cap ? kvmalloc_array(cap, sizeof(*new), GFP_NOIO) : NULL;
	if (cap && !new)
		return -ENOMEM;
	spin_lock_irq(&sc->lock);
	if (b->nr_ext > cap) {
		spin_unlock_irq(&sc->lock);
		kvfree(new);
		return 0;
	}
	if (new)
		memcpy(new, b->ext, b->nr_ext * sizeof(*new));
	old = b->ext;
	dm->index_bytes -= (size_t)b->cap_ext * sizeof(*new);
	dm->index_bytes += (size_t)cap * sizeof(*new);
	b->ext = new;
	b->cap_ext = cap;
	spin_unlock_irq(&sc->lock);
	kvfree(old);
	return 0;
}

static void smr_ext_delete(struct smr_dm *dm, struct smr_band *b, u32 i)
{
	memmove(&b->ext[i], &b->ext[i + 1],
		(b->nr_ext - i - 1) * sizeof(*b->ext));
	b->nr_ext--;
	dm->nr_ext--;
}

/* Merge extent @i into @i - 1 when they continue each other. */
static bool smr_ext_merge(struct smr_dm *dm, struct smr_band *b, u32 i)
{
	struct smr_ext *p, *e;

	if (!i || i >= b->nr_ext)
		return false;
	p = &b->ext[i - 1];
	e = &b->ext[i];
	if (p->off + p->len != e->off || p->slot + p->len != e->slot ||
	    p->len + e->len > SMR_EXT_MAX_LEN)
		return false;
	p->len += e->len;
	smr_ext_delete(dm, b, i);
	return true;
}

/*
 * Map blocks [off, off + n) of band @b to slots from @slot on. Caller
 * holds sc->lock and made room for smr_ext_need() extents.
 */
static void smr_ext_insert(struct smr_dm *dm, struct smr_band *b, u32 off,
			   u32 n, u32 slot)
{
	struct smr_ext seg[3];
	u32 end = off + n, i = smr_ext_find(b, off), j = i, k, ns = 0;
	u32 covered = 0;

	while (j < b->nr_ext && b->ext[j].off < end) {
		struct smr_ext *e = &b->ext[j];

		covered += min_t(u32, end, e->off + e->len) - max_t(u32, off, e->off);
		j++;
	}
	if (i < j && b->ext[i].off < off) {
		seg[ns] = b->ext[i];
		seg[ns++].len = off - b->ext[i].off;
	}
	seg[ns].slot = slot;
	seg[ns].off = off;
	seg[ns++].len = n;
	if (i < j && b->ext[j - 1].off + b->ext[j - 1].len > end) {
		struct smr_ext *t = &b->ext[j - 1];

		seg[ns].slot = t->slot + (end - t->off);
		seg[ns].len = t->off + t->len - end;
		seg[ns++].off = end;
	}
	/* Replace ext[i, j) by seg[0, ns). */
	memmove(&b->ext[i + ns], &b->ext[j],
		(b->nr_ext - j) * sizeof(*b->ext));
	memcpy(&b->ext[i], seg, ns * sizeof(*seg));
	b->nr_ext += ns - (j - i);
	dm->nr_ext += ns - (j - i);
	b->live += n - covered;
	dm->live += n - covered;

	/* The new extent is at i, or i + 1 after a head piece. */
	k = i + (seg[0].off < off);
	if (k + 1 < b->nr_ext)
		smr_ext_merge(dm, b, k + 1);
	smr_ext_merge(dm, b, k);
}

/* Drop a band's whole index (cleaning). Returns the array to free. */
static struct smr_ext *smr_ext_drop(struct smr_dm *dm, struct smr_band *b)
{
	struct smr_ext *old = b->ext;

	dm->live -= b->live;
	dm->nr_ext -= b->nr_ext;
	dm->index_bytes -= (size_t)b->cap_ext * sizeof(*old);
	b->ext = NULL;
	b->nr_ext = b->cap_ext = b->live = 0;
	return old;
}

/* ------------------------------------------------------------------ */
/* Cache slots.                                                        */
/* ------------------------------------------------------------------ */

/* Reserve @n contiguous free slots from the cursor on. Under sc->lock. */
static int smr_slot_alloc(struct smr_dm *dm, u32 n, u32 *slot)
{
	unsigned long s;

	if (dm->nr_slots - dm->used < n)
		return -ENOSPC;
	s = bitmap_find_next_zero_area(dm->slot_used, dm->nr_slots,
				       dm->cursor, n, 0);
	if (s + n > dm->nr_slots)
		s = bitmap_find_next_zero_area(dm->slot_used, dm->nr_slots,
					       0, n, 0);
	if (s + n > dm->nr_slots)
		return -ENOSPC;
	bitmap_set(dm->slot_used, s, n);
	bitmap_set(dm->slot_inflight, s, n);
	dm->used += n;
	dm->cursor = s + n == dm->nr_slots ? 0 : s + n;
	*slot = s;
	return 0;
}

static void smr_slot_release(struct smr_dm *dm, struct smr_band *b,
			     u32 slot, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		dm->slot_lba[slot + i] = SMR_SLOT_FREE;
	bitmap_clear(dm->slot_used, slot, n);
	bitmap_clear(dm->slot_inflight, slot, n);
	dm->used -= n;
	b->slots -= n;
	if (!b->slots)
		dm->dirty_bands--;
}

/*
 * Occupancy events: rising past 25/50/75/100% (once each until the cache
 * empties again) and reaching empty. Computed under the lock, sent after.
 */
static void smr_dm_levels(struct smr_target *sc)
{
	static const u32 marks[] = { 25, 50, 75, 100 };
	struct smr_dm *dm = sc->dm;
	u32 send[ARRAY_SIZE(marks) + 1], nr = 0, pct, i;

	spin_lock_irq(&sc->lock);
	pct = (u32)div_u64((u64)dm->used * 100, dm->nr_slots);
	for (i = 0; i < ARRAY_SIZE(marks); i++) {
		if (pct >= marks[i] && dm->level < marks[i]) {
			send[nr++] = marks[i];
			dm->level = marks[i];
		}
	}
	if (!dm->used && dm->level) {
		send[nr++] = 0;
		dm->level = 0;
	}
	spin_unlock_irq(&sc->lock);
	for (i = 0; i < nr; i++)
		smr_nl_cache_level(sc, send[i]);
}

/* ------------------------------------------------------------------ */
/* The I/O path.                                                       */
/* ------------------------------------------------------------------ */

static void smr_dm_kick_cleaner(struct smr_dm *dm, unsigned long delay)
{
	mod_delayed_work(dm->clean_wq, &dm->clean_dwork, delay);
}

static int smr_dm_read(struct smr_target *sc, struct bio *bio,
		       struct smr_dm_io *io)
{
	struct smr_dm *dm = sc->dm;
	sector_t sector = dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	u32 osect, band, slot, run, n;
	struct smr_band *b;

	band = div_u64_rem(sector, dm->band_sectors, &osect);
	n = bio_sectors(bio) >> 3;
	if ((osect | bio_sectors(bio)) & (SMR_BLOCK_SECTORS - 1) || !n)
		return DM_MAPIO_KILL;
	b = &dm->bands[band];

	spin_lock_irq(&sc->lock);
	run = smr_ext_lookup(b, osect >> 3, n, &slot);
	if (slot != SMR_SLOT_FREE)
		atomic_inc(&b->readers);
	dm->stats.host_read_sectors += (u64)run << 3;
	spin_unlock_irq(&sc->lock);

	if (run < n)
		dm_accept_partial_bio(bio, run << 3);
	bio_set_dev(bio, sc->bdev);
	if (slot != SMR_SLOT_FREE) {
		io->kind = SMR_IO_READ_CACHE;
		io->band = band;
		bio->bi_iter.bi_sector = smr_slot_sector_dm(dm, slot);
	} else {
		bio->bi_iter.bi_sector = smr_band_sector(dm, band) + osect;
	}
	return DM_MAPIO_REMAPPED;
}

static int smr_dm_write(struct smr_target *sc, struct bio *bio, bool in_map);

int smr_dm_map(struct smr_target *sc, struct bio *bio)
{
	struct smr_dm *dm = sc->dm;
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	unsigned long now = jiffies;

	io->kind = SMR_IO_NONE;
	io->indexed = false;
	if (READ_ONCE(dm->last_io) != now)
		WRITE_ONCE(dm->last_io, now);

	switch (bio_op(bio)) {
	case REQ_OP_READ:
		return smr_dm_read(sc, bio, io);
	case REQ_OP_WRITE:
		if (bio_sectors(bio))
			return smr_dm_write(sc, bio, true);
		fallthrough;	/* an empty flush: the worker commits */
	case REQ_OP_DISCARD:
		spin_lock_irq(&sc->lock);
		bio_list_add(&dm->queue, bio);
		spin_unlock_irq(&sc->lock);
		queue_work(sc->wq, &sc->commit_work);
		return DM_MAPIO_SUBMITTED;
	default:
		return DM_MAPIO_KILL;
	}
}


/* Send a remapped write: from map() by returning, from the worker itself. */
static int smr_dm_issue(struct bio *bio, bool in_map)
{
	if (in_map)
		return DM_MAPIO_REMAPPED;
	dm_submit_bio_remap(bio, NULL);
	return DM_MAPIO_SUBMITTED;
}

static int smr_dm_fail(struct bio *bio, bool in_map)
{
	if (in_map)
		return DM_MAPIO_KILL;
	bio_io_error(bio);
	return DM_MAPIO_SUBMITTED;
}

static void smr_dm_submit_cache(struct smr_target *sc, struct bio *bio,
				sector_t sector);

/*
 * Handle one write, from map() (@in_map) or from the worker (a write that
 * waited). Returns the DM_MAPIO_* value map() should return. It sleeps
 * only in the bioset of a cache write's clone, for one of ours to return.
 */
static int smr_dm_write(struct smr_target *sc, struct bio *bio, bool in_map)
{
	struct smr_dm *dm = sc->dm;
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	sector_t sector = dm_target_offset(sc->ti, bio->bi_iter.bi_sector);
	u32 nsect = bio_sectors(bio), osect, band, off, n, slot, i;
	bool stream, kick = false, levels = false;
	struct smr_band *b;
	u32 next;

	band = div_u64_rem(sector, dm->band_sectors, &osect);
	if ((osect | nsect) & (SMR_BLOCK_SECTORS - 1) ||
	    osect + nsect > dm->band_sectors) {
		DMERR_LIMIT("%s: unaligned write at sector %llu (+%u)",
			    smr_dm_name(sc), (unsigned long long)sector, nsect);
		return smr_dm_fail(bio, in_map);
	}
	off = osect >> 3;
	n = nsect >> 3;
	b = &dm->bands[band];

	spin_lock_irq(&sc->lock);
	if (dm->failed) {
		spin_unlock_irq(&sc->lock);
		return smr_dm_fail(bio, in_map);
	}
	/* New cleaning debt: the time cleaning takes starts anew. */
	dm->last_write = jiffies;
	dm->since_busy_ms = 0;
	if (b->flags & SMR_BAND_CLEANING) {
		bio_list_add(&dm->held, bio);
		spin_unlock_irq(&sc->lock);
		return DM_MAPIO_SUBMITTED;
	}
	stream = osect == 0 || osect == b->seq_next;
	if (stream)
		b->seq_next = osect + nsect == dm->band_sectors ? 0 : osect + nsect;

	if (stream && dm->seq_bypass && !smr_ext_overlaps(b, off, n)) {
		b->writers++;
		dm->stats.host_write_sectors += nsect;
		dm->stats.bypass_write_sectors += nsect;
		spin_unlock_irq(&sc->lock);
		io->kind = SMR_IO_WRITE_BAND;
		io->band = band;
		bio_set_dev(bio, sc->bdev);
		bio->bi_iter.bi_sector = smr_band_sector(dm, band) + osect;
		return smr_dm_issue(bio, in_map);
	}

	if (!bio_list_empty(&dm->parked) || smr_slot_alloc(dm, n, &slot)) {
		/* Cache full: wait for a foreground cleaning, in order. */
		bio_list_add(&dm->parked, bio);
		dm->fg_wanted = true;
		spin_unlock_irq(&sc->lock);
		smr_dm_kick_cleaner(dm, 0);
		return DM_MAPIO_SUBMITTED;
	}
	/* Sequence numbers come when it is indexed (smr_dm_index()). */
	for (i = 0; i < n; i++)
		dm->slot_lba[slot + i] = band * dm->band_blocks + off + i;
	if (!b->slots) {
		b->first_seq = dm->next_seq;
		dm->dirty_bands++;
		kick = dm->idle_ms;
	}
	b->slots += n;
	b->writers++;
	dm->stats.host_write_sectors += nsect;
	dm->stats.cache_write_sectors += nsect;
	/* Occupancy rose past the next level: the worker reports it. */
	next = dm->level + 25;
	levels = next <= 100 && (u64)dm->used * 100 >= (u64)next * dm->nr_slots;
	spin_unlock_irq(&sc->lock);

	io->kind = SMR_IO_WRITE_CACHE;
	io->band = band;
	io->off = off;
	io->nr = n;
	io->slot = slot;
	io->fua = bio->bi_opf & REQ_FUA;
	if (kick && !delayed_work_pending(&dm->clean_dwork))
		queue_delayed_work(dm->clean_wq, &dm->clean_dwork,
				   msecs_to_jiffies(dm->idle_ms));
	if (levels)
		queue_work(sc->wq, &sc->commit_work);
	smr_dm_submit_cache(sc, bio, smr_slot_sector_dm(dm, slot));
	return DM_MAPIO_SUBMITTED;
}

/*
 * Index a completed cache write: its blocks now read from its slots.
 * Under sc->lock, with room in the band's extent array.
 *
 * The slots' sequence numbers are taken here, not when the write was
 * mapped: recovery keeps the copy with the highest sequence number, and
 * the index keeps the copy indexed last, so both must follow the order
 * of indexing. (Two writes in flight to one block may complete in either
 * order; numbered at map time, the index and a reload could disagree.)
 * The loop is bounded by the largest write, SMR_DM_IO_SECTORS.
 */
static void smr_dm_index(struct smr_target *sc, struct smr_band *b,
			 struct smr_dm_io *io)
{
	struct smr_dm *dm = sc->dm;
	u32 i;

	for (i = 0; i < io->nr; i++)
		dm->slot_seq[io->slot + i] = dm->next_seq++;
	smr_ext_insert(dm, b, io->off, io->nr, io->slot);
	bitmap_clear(dm->slot_inflight, io->slot, io->nr);
	smr_mark_slots_dirty(sc, io->slot, io->nr);
}

/* A cache write completed: index it, then end it (or after a commit). */
static void smr_dm_write_done(struct smr_target *sc, struct bio *bio,
			      struct bio_list *commit)
{
	struct smr_dm *dm = sc->dm;
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	struct smr_band *b = &dm->bands[io->band];
	blk_status_t status = io->status;
	u32 need;

	if (io->indexed) {
		/* Indexed in smr_dm_end_io(); here for a FUA commit or a shrink. */
		spin_lock_irq(&sc->lock);
		need = b->nr_ext;
		spin_unlock_irq(&sc->lock);
		goto shrink;
	}
	spin_lock_irq(&sc->lock);
	/* Completions of other writes to the band may insert meanwhile. */
	while (!status && (need = smr_ext_need(b, io->off, io->nr)) > b->cap_ext) {
		spin_unlock_irq(&sc->lock);
		if (unlikely(smr_fault_take(&fail_ext_allocs)) || smr_ext_resize(sc, b, need)) {
			/*
			 * No memory now. The data is in the cache: never fail
			 * the write for that, try again in a while (the write
			 * keeps its slots and its band's writer count).
			 */
			spin_lock_irq(&sc->lock);
			bio_list_add(&dm->nomem, bio);
			spin_unlock_irq(&sc->lock);
			DMWARN_LIMIT("%s: no memory to index a cache write; retrying",
				     smr_dm_name(sc));
			queue_delayed_work(sc->wq, &dm->nomem_dwork,
					   msecs_to_jiffies(SMR_DM_NOMEM_RETRY_MS));
			return;
		}
		spin_lock_irq(&sc->lock);
	}
	if (status) {
		smr_slot_release(dm, b, io->slot, io->nr);
		sc->stats.errors++;
	} else {
		smr_dm_index(sc, b, io);
	}
	need = b->nr_ext;
	spin_unlock_irq(&sc->lock);

shrink:
	/*
	 * Keep the array at most twice the extents it holds (the bound in
	 * docs/dm-smr.rst), while our write still keeps the cleaner away.
	 */
	if (need && b->cap_ext > 2 * need)
		smr_ext_resize(sc, b, need);

	spin_lock_irq(&sc->lock);
	b->writers--;
	spin_unlock_irq(&sc->lock);
	wake_up(&dm->wait);

	bio->bi_status = status;
	if (io->fua && !status)
		bio_list_add(commit, bio);
	else
		bio_endio(bio);
}

/*
 * A cache write's clone completed (any context). Index the write now when
 * its band's extent array has room and stays within twice its use, and
 * end it; otherwise the worker grows or shrinks the array (it may
 * allocate), indexes it and ends it. FUA writes end after a commit, in
 * the worker too. The write, dm's own clone, is ended exactly once.
 */
static void smr_dm_cache_endio(struct bio *clone)
{
	struct bio *bio = clone->bi_private;
	struct smr_target *sc = container_of(clone->bi_pool, struct smr_target, bs);
	struct smr_dm *dm = sc->dm;
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	struct smr_band *b = &dm->bands[io->band];
	blk_status_t status = clone->bi_status;
	unsigned long flags;

	bio_put(clone);
	io->status = status;
	spin_lock_irqsave(&sc->lock, flags);
	if (!status && smr_ext_need(b, io->off, io->nr) <= b->cap_ext) {
		smr_dm_index(sc, b, io);
		io->indexed = true;
		if (!io->fua && b->cap_ext <= 2 * b->nr_ext) {
			b->writers--;
			spin_unlock_irqrestore(&sc->lock, flags);
			wake_up(&dm->wait);
			bio_endio(bio);
			return;
		}
	}
	bio_list_add(&dm->done, bio);
	spin_unlock_irqrestore(&sc->lock, flags);
	queue_work(sc->wq, &sc->commit_work);
}

/*
 * Send a cache write to its slots through a clone of our own, so that its
 * completion is ours to delay: returning DM_ENDIO_INCOMPLETE from end_io
 * and ending dm's clone again later would run the backing queue's
 * completion accounting (rq_qos_done_bio(): iocost, iolatency) twice.
 * The clone comes from a bioset, as dm-crypt's do: it may wait for one of
 * our clones in flight to come back, never for memory reclaim.
 */
static void smr_dm_submit_cache(struct smr_target *sc, struct bio *bio,
				sector_t sector)
{
	struct bio *clone = bio_alloc_clone(sc->bdev, bio, GFP_NOIO, &sc->bs);

	clone->bi_iter.bi_sector = sector;
	/* Durability of a FUA write comes from the commit that ends it. */
	clone->bi_opf &= ~REQ_FUA;
	/*
	 * dm polls only the bios it submits itself: a polled clone of ours
	 * on a poll queue would wait for the driver's timeout to be reaped.
	 */
	bio_clear_polled(clone);
	clone->bi_private = bio;
	clone->bi_end_io = smr_dm_cache_endio;
	dm_submit_bio_remap(bio, clone);
}

int smr_dm_end_io(struct smr_target *sc, struct bio *bio, blk_status_t *error)
{
	struct smr_dm *dm = sc->dm;
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	struct smr_band *b;
	unsigned long flags;

	switch (io->kind) {
	case SMR_IO_WRITE_CACHE:
		/* Ended by smr_dm_cache_endio() or the worker, once. */
		break;
	case SMR_IO_WRITE_BAND:
		b = &dm->bands[io->band];
		spin_lock_irqsave(&sc->lock, flags);
		b->writers--;
		if (*error)
			sc->stats.errors++;
		spin_unlock_irqrestore(&sc->lock, flags);
		wake_up(&dm->wait);
		break;
	case SMR_IO_READ_CACHE:
		b = &dm->bands[io->band];
		if (atomic_dec_and_test(&b->readers))
			wake_up(&dm->wait);
		fallthrough;
	default:
		if (*error) {
			spin_lock_irqsave(&sc->lock, flags);
			sc->stats.errors++;
			spin_unlock_irqrestore(&sc->lock, flags);
		}
		break;
	}
	return DM_ENDIO_DONE;
}

/* Cache writes that found no memory to be indexed: try them again. */
static void smr_dm_nomem_work(struct work_struct *work)
{
	struct smr_dm *dm = container_of(to_delayed_work(work), struct smr_dm,
					 nomem_dwork);
	struct smr_target *sc = dm->sc;

	spin_lock_irq(&sc->lock);
	bio_list_merge(&dm->done, &dm->nomem);
	bio_list_init(&dm->nomem);
	spin_unlock_irq(&sc->lock);
	queue_work(sc->wq, &sc->commit_work);
}

/* The worker: completions first, then new writes, flushes, discards. */
static void smr_dm_work(struct work_struct *work)
{
	struct smr_target *sc = container_of(work, struct smr_target,
					     commit_work);
	struct smr_dm *dm = sc->dm;
	struct bio_list done, queue, commit;
	struct bio *bio;
	int ret;

	bio_list_init(&commit);
	spin_lock_irq(&sc->lock);
	done = dm->done;
	bio_list_init(&dm->done);
	queue = dm->queue;
	bio_list_init(&dm->queue);
	spin_unlock_irq(&sc->lock);

	while ((bio = bio_list_pop(&done)))
		smr_dm_write_done(sc, bio, &commit);

	while ((bio = bio_list_pop(&queue))) {
		if (bio_op(bio) == REQ_OP_DISCARD) {
			/* Accepted and ignored: the data stays readable. */
			spin_lock_irq(&sc->lock);
			dm->stats.discard_sectors += bio_sectors(bio);
			spin_unlock_irq(&sc->lock);
			bio_endio(bio);
		} else if (!bio_sectors(bio)) {
			bio_list_add(&commit, bio);	/* empty flush */
		} else {
			smr_dm_write(sc, bio, false);
		}
	}

	if (!bio_list_empty(&commit)) {
		ret = smr_md_commit(sc);
		while ((bio = bio_list_pop(&commit))) {
			if (ret)
				bio->bi_status = BLK_STS_IOERR;
			bio_endio(bio);
		}
	}
	smr_dm_levels(sc);
}

/* ------------------------------------------------------------------ */
/* Cleaning.                                                           */
/* ------------------------------------------------------------------ */

static int smr_dm_io(struct smr_target *sc, blk_opf_t opf, sector_t sector,
		     sector_t count, void *buf)
{
	struct dm_io_region region = {
		.bdev = sc->bdev,
		.sector = sector,
		.count = count,
	};
	struct dm_io_request req = {
		.bi_opf = opf,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = buf,
		.client = sc->dm->io_client,
	};
	unsigned long error_bits = 0;

	return smr_dm_io_call(&req, 1, &region, &error_bits);
}

/* Reads issued together and waited for once (the cached runs of a chunk). */
struct smr_dm_batch {
	atomic_t pending;
	int error;
	struct completion done;
};

/* One read of the batch (or the submitter's own reference) is done. */
static void smr_dm_batch_put(struct smr_dm_batch *bt, bool failed)
{
	if (failed)
		WRITE_ONCE(bt->error, -EIO);
	if (atomic_dec_and_test(&bt->pending))
		complete(&bt->done);
}

static SMR_IO_NOTIFY(smr_dm_batch_end, error, context)
{
	smr_dm_batch_put(context, error);
}

static void smr_dm_batch_read(struct smr_target *sc, struct smr_dm_batch *bt,
			      sector_t sector, sector_t count, void *buf)
{
	struct dm_io_region region = {
		.bdev = sc->bdev,
		.sector = sector,
		.count = count,
	};
	struct dm_io_request req = {
		.bi_opf = REQ_OP_READ,
		.mem.type = DM_IO_VMA,
		.mem.ptr.vma = buf,
		.notify.fn = smr_dm_batch_end,
		.notify.context = bt,
		.client = sc->dm->io_client,
	};

	atomic_inc(&bt->pending);
	if (smr_dm_io_call(&req, 1, &region, NULL))
		smr_dm_batch_put(bt, true);
}

/* Copy @band's chunk at @c, cached blocks merged in, to the spare band. */
static int smr_dm_merge_chunk(struct smr_target *sc, u32 band, u32 c,
			      u32 len, u64 *rd, u64 *wr)
{
	struct smr_dm *dm = sc->dm;
	struct smr_band *b = &dm->bands[band];
	u32 first = c >> 3, nblk = len >> 3, nr = 0, i;
	struct smr_dm_batch bt;
	int ret;

	ret = smr_dm_io(sc, REQ_OP_READ, smr_band_sector(dm, band) + c, len,
			dm->buf);
	if (ret)
		return ret;
	*rd += len;

	/* The band's index is stable: its writes are held back. */
	spin_lock_irq(&sc->lock);
	for (i = smr_ext_find(b, first); i < b->nr_ext &&
	     b->ext[i].off < first + nblk; i++) {
		struct smr_ext *e = &b->ext[i];
		u32 s = max_t(u32, e->off, first);
		u32 t = min_t(u32, e->off + e->len, first + nblk);

		dm->runs[nr].slot = e->slot + (s - e->off);
		dm->runs[nr].off = s - first;
		dm->runs[nr++].len = t - s;
	}
	spin_unlock_irq(&sc->lock);

	/* The cached runs are small and scattered: read them all at once. */
	atomic_set(&bt.pending, 1);
	bt.error = 0;
	init_completion(&bt.done);
	for (i = 0; i < nr; i++) {
		struct smr_ext *r = &dm->runs[i];

		smr_dm_batch_read(sc, &bt, smr_slot_sector_dm(dm, r->slot),
				  (sector_t)r->len << 3,
				  dm->buf + ((size_t)r->off << SMR_BLOCK_SHIFT));
		*rd += (u64)r->len << 3;
	}
	smr_dm_batch_put(&bt, false);
	wait_for_completion_io(&bt.done);
	if (bt.error)
		return bt.error;
	ret = smr_dm_io(sc, REQ_OP_WRITE, dm->spare_start + c, len, dm->buf);
	if (!ret)
		*wr += len;
	return ret;
}

/* Step 4: the spare band over @band. Also used by recovery. */
static int smr_dm_copy_back(struct smr_target *sc, u32 band, u64 *rd,
			    u64 *wr)
{
	struct smr_dm *dm = sc->dm;
	u32 c, len;
	int ret;

	for (c = 0; c < dm->band_sectors; c += len) {
		len = min_t(u32, SMR_DM_CHUNK_SECTORS, dm->band_sectors - c);
		ret = smr_dm_io(sc, REQ_OP_READ, dm->spare_start + c, len,
				dm->buf);
		if (ret)
			return ret;
		ret = smr_dm_io(sc, REQ_OP_WRITE,
				smr_band_sector(dm, band) + c, len, dm->buf);
		if (ret)
			return ret;
		*rd += len;
		*wr += len;
	}
	return blkdev_issue_flush(sc->bdev);
}

/* Free every slot of a cleaned band. Under sc->lock. */
static void smr_dm_free_band_slots(struct smr_dm *dm, u32 band)
{
	struct smr_band *b = &dm->bands[band];
	unsigned long s;

	for_each_set_bit(s, dm->slot_used, dm->nr_slots) {
		if (!b->slots)
			break;
		if (dm->slot_lba[s] != SMR_SLOT_FREE &&
		    smr_band_of_block(dm, dm->slot_lba[s]) == band &&
		    !test_bit(s, dm->slot_inflight))
			smr_slot_release(dm, b, s, 1);
	}
}

static void smr_dm_release_parked(struct smr_target *sc)
{
	struct smr_dm *dm = sc->dm;

	/*
	 * Writes that waited for cleaning are host I/O arriving now: the
	 * host was not idle while it waited, so background cleaning must
	 * not start at once after a long foreground one.
	 */
	if (!bio_list_empty(&dm->held) || !bio_list_empty(&dm->parked))
		WRITE_ONCE(dm->last_io, jiffies);
	bio_list_merge_head(&dm->queue, &dm->held);
	bio_list_init(&dm->held);
	bio_list_merge_head(&dm->queue, &dm->parked);
	bio_list_init(&dm->parked);
}

static bool smr_dm_should_yield(struct smr_dm *dm, enum smr_clean_reason r,
				unsigned long start)
{
	if (READ_ONCE(dm->stop))
		return true;
	return r == SMR_CLEAN_IDLE &&
		time_after(READ_ONCE(dm->last_io), start);
}

/*
 * Read-modify-write of one band through the spare band; see the top of
 * this file. Returns -EAGAIN when background cleaning gave way to host
 * I/O before anything but the spare band was written.
 */
static int smr_dm_clean_band(struct smr_target *sc, u32 band,
			     enum smr_clean_reason reason)
{
	struct smr_dm *dm = sc->dm;
	struct smr_band *b = &dm->bands[band];
	unsigned long start = jiffies;
	u64 t0 = ktime_get_ns(), rd = 0, wr = 0, us, ms;
	struct smr_ext *old;
	u32 c, len;
	u64 seq;
	int ret;

	spin_lock_irq(&sc->lock);
	b->flags |= SMR_BAND_CLEANING;
	dm->state = reason == SMR_CLEAN_IDLE ? SMR_DM_CLEAN_BG :
		reason == SMR_CLEAN_FOREGROUND ? SMR_DM_CLEAN_FG :
		SMR_DM_CLEAN_MANUAL;
	spin_unlock_irq(&sc->lock);
	smr_nl_clean_start(sc, band, reason);

	/* Writes to the band admitted before the flag finish first. */
	wait_event(dm->wait, READ_ONCE(b->writers) == 0);
	spin_lock_irq(&sc->lock);
	seq = dm->next_seq;
	spin_unlock_irq(&sc->lock);

	for (c = 0; c < dm->band_sectors; c += len) {
		if (smr_dm_should_yield(dm, reason, start)) {
			ret = -EAGAIN;
			goto undo;
		}
		len = min_t(u32, SMR_DM_CHUNK_SECTORS, dm->band_sectors - c);
		ret = smr_dm_merge_chunk(sc, band, c, len, &rd, &wr);
		if (ret)
			goto fail_undo;
	}
	ret = blkdev_issue_flush(sc->bdev);
	if (ret)
		goto fail_undo;

	spin_lock_irq(&sc->lock);
	dm->intent_state = SMR_INTENT_SPARE_FULL;
	dm->intent_band = band;
	dm->intent_seq = seq;
	set_bit(0, sc->dirty);
	spin_unlock_irq(&sc->lock);
	ret = smr_md_commit(sc);
	if (ret)
		goto fail;

	ret = smr_dm_copy_back(sc, band, &rd, &wr);
	if (ret)
		goto fail;

	spin_lock_irq(&sc->lock);
	old = smr_ext_drop(dm, b);
	b->clean_seq = seq;
	smr_mark_band_dirty(sc, band);
	dm->intent_state = SMR_INTENT_NONE;
	set_bit(0, sc->dirty);
	spin_unlock_irq(&sc->lock);
	kvfree(old);

	/* Reads already sent to the band's slots finish before they go. */
	wait_event(dm->wait, atomic_read(&b->readers) == 0);
	ret = smr_md_commit(sc);
	if (ret)
		goto fail;

	us = div_u64(ktime_get_ns() - t0, NSEC_PER_USEC);
	ms = div_u64(us + 500, USEC_PER_MSEC);
	spin_lock_irq(&sc->lock);
	smr_dm_free_band_slots(dm, band);
	b->flags &= ~SMR_BAND_CLEANING;
	b->seq_next = 0;
	dm->state = SMR_DM_IDLE;
	dm->stats.rmw[reason]++;
	dm->stats.clean_read_sectors += rd;
	dm->stats.clean_write_sectors += wr;
	if (reason == SMR_CLEAN_FOREGROUND) {
		dm->stats.clean_ms_fg += ms;
	} else {
		dm->stats.clean_ms_bg += ms;
		/* Counted only while no host write came since it started. */
		if (!time_after(dm->last_write, start))
			dm->since_busy_ms += ms;
	}
	smr_dm_release_parked(sc);
	spin_unlock_irq(&sc->lock);
	queue_work(sc->wq, &sc->commit_work);

	smr_nl_clean_done(sc, band, reason, rd << SECTOR_SHIFT,
			  wr << SECTOR_SHIFT, us);
	smr_dm_levels(sc);
	return 0;

fail_undo:
	DMERR("%s: cleaning band %u failed before its intent: %d",
	      smr_dm_name(sc), band, ret);
	spin_lock_irq(&sc->lock);
	dm->failed = true;
	spin_unlock_irq(&sc->lock);
undo:
	spin_lock_irq(&sc->lock);
	b->flags &= ~SMR_BAND_CLEANING;
	dm->state = SMR_DM_IDLE;
	if (ret == -EAGAIN)
		dm->stats.bg_aborts++;
	dm->stats.clean_read_sectors += rd;
	dm->stats.clean_write_sectors += wr;
	smr_dm_release_parked(sc);
	spin_unlock_irq(&sc->lock);
	queue_work(sc->wq, &sc->commit_work);
	return ret;

fail:
	/*
	 * The band may be half rewritten: the durable intent lets the next
	 * activation finish it. Until then writes fail; reads are served.
	 */
	DMERR("%s: cleaning band %u failed: %d; writes fail until the device is reactivated",
	      smr_dm_name(sc), band, ret);
	spin_lock_irq(&sc->lock);
	dm->failed = true;
	dm->state = SMR_DM_IDLE;
	smr_dm_release_parked(sc);
	spin_unlock_irq(&sc->lock);
	queue_work(sc->wq, &sc->commit_work);
	return ret;
}

/* The next band to clean, by policy; SMR_BAND_NONE if none. Under lock. */
static u32 smr_dm_pick(struct smr_dm *dm)
{
	u64 best_score = 0, score;
	u32 best = SMR_BAND_NONE, i;

	for (i = 0; i < dm->nr_bands; i++) {
		struct smr_band *b = &dm->bands[i];

		if (!b->slots)
			continue;
		switch (dm->policy) {
		case SMR_POLICY_GREEDY:
			score = b->slots;
			break;
		case SMR_POLICY_COST_BENEFIT:
			/* Slots freed, times how long they have been cold. */
			score = (u64)b->slots * (dm->next_seq - b->first_seq);
			break;
		default:
			score = U64_MAX - b->first_seq;
			break;
		}
		if (best == SMR_BAND_NONE || score > best_score) {
			best = i;
			best_score = score;
		}
	}
	return best;
}

static void smr_dm_clean_work(struct work_struct *work)
{
	struct smr_dm *dm = container_of(to_delayed_work(work), struct smr_dm,
					 clean_dwork);
	struct smr_target *sc = dm->sc;
	enum smr_clean_reason reason;
	bool cleaned_idle = false;
	u64 since = 0;
	u32 band;
	int ret;

	for (;;) {
		spin_lock_irq(&sc->lock);
		if (dm->stop || dm->failed) {
			spin_unlock_irq(&sc->lock);
			break;
		}
		if (dm->fg_wanted) {
			reason = SMR_CLEAN_FOREGROUND;
		} else if (dm->manual) {
			reason = SMR_CLEAN_MANUAL;
		} else if (dm->idle_ms && dm->dirty_bands) {
			unsigned long due = READ_ONCE(dm->last_io) +
				msecs_to_jiffies(dm->idle_ms);

			if (time_before(jiffies, due)) {
				spin_unlock_irq(&sc->lock);
				queue_delayed_work(dm->clean_wq, &dm->clean_dwork,
						   due - jiffies);
				break;
			}
			reason = SMR_CLEAN_IDLE;
		} else {
			spin_unlock_irq(&sc->lock);
			break;
		}
		band = smr_dm_pick(dm);
		if (band == SMR_BAND_NONE) {
			/* Nothing left to clean: let any parked write retry. */
			dm->fg_wanted = false;
			dm->manual = false;
			smr_dm_release_parked(sc);
			spin_unlock_irq(&sc->lock);
			queue_work(sc->wq, &sc->commit_work);
			break;
		}
		if (reason == SMR_CLEAN_FOREGROUND)
			dm->fg_wanted = false;	/* the worker asks again */
		spin_unlock_irq(&sc->lock);

		ret = smr_dm_clean_band(sc, band, reason);
		if (ret && ret != -EAGAIN)
			break;
		if (!ret && reason != SMR_CLEAN_FOREGROUND)
			cleaned_idle = true;
		cond_resched();
	}

	spin_lock_irq(&sc->lock);
	if (cleaned_idle && !dm->used) {
		since = dm->since_busy_ms;
		dm->manual = false;
	} else {
		cleaned_idle = false;
	}
	spin_unlock_irq(&sc->lock);
	if (cleaned_idle)
		smr_nl_idle_clean(sc, since);
}

/* ------------------------------------------------------------------ */
/* Metadata callbacks (dm-smr-metadata.c).                             */
/* ------------------------------------------------------------------ */

u32 smr_dm_block_records(struct smr_target *sc, u32 k)
{
	struct smr_dm *dm = sc->dm;

	if (k == 0)
		return 1;
	if (k <= dm->slot_blocks)
		return min_t(u32, SMR_SLOTS_PER_BLOCK,
			     dm->nr_slots - (k - 1) * SMR_SLOTS_PER_BLOCK);
	k -= 1 + dm->slot_blocks;
	return min_t(u32, SMR_BANDS_PER_BLOCK,
		     dm->nr_bands - k * SMR_BANDS_PER_BLOCK);
}

/* Fill table block @k from memory. Caller holds sc->lock. */
void smr_dm_build_block(struct smr_target *sc, u32 k, void *buf)
{
	struct smr_dm *dm = sc->dm;
	struct smr_blk_header *hdr = buf;
	void *rec = buf + SMR_DM_HDR;
	u32 nr = smr_dm_block_records(sc, k), i;

	memset(buf, 0, SMR_BLOCK_SIZE);
	hdr->magic = cpu_to_le32(SMR_ZT_MAGIC);
	hdr->format_id = cpu_to_le64(sc->format_id);
	hdr->index = cpu_to_le32(k);
	hdr->nr = cpu_to_le32(nr);

	if (k == 0) {
		struct smr_intent_rec *ir = rec;

		ir->state = cpu_to_le32(dm->intent_state);
		ir->band = cpu_to_le32(dm->intent_band);
		ir->seq = cpu_to_le64(dm->intent_seq);
	} else if (k <= dm->slot_blocks) {
		struct smr_slot_rec *sr = rec;
		u32 first = (k - 1) * SMR_SLOTS_PER_BLOCK;

		for (i = 0; i < nr; i++) {
			u32 s = first + i;

			if (dm->slot_lba[s] == SMR_SLOT_FREE ||
			    test_bit(s, dm->slot_inflight))
				continue;
			sr[i].seq = cpu_to_le64(dm->slot_seq[s]);
			sr[i].lba = cpu_to_le32(dm->slot_lba[s]);
			sr[i].flags = cpu_to_le32(SMR_SLOT_VALID);
		}
	} else {
		__le64 *cs = rec;
		u32 first = (k - 1 - dm->slot_blocks) * SMR_BANDS_PER_BLOCK;

		for (i = 0; i < nr; i++)
			cs[i] = cpu_to_le64(dm->bands[first + i].clean_seq);
	}
}

/* Load table block @k into the raw arrays; smr_dm_rebuild() follows. */
int smr_dm_load_block(struct smr_target *sc, u32 k, void *buf)
{
	struct smr_dm *dm = sc->dm;
	void *rec = buf + SMR_DM_HDR;
	u32 nr = smr_dm_block_records(sc, k), i;
	u32 nr_blocks = dm->nr_bands * dm->band_blocks;

	if (k == 0) {
		struct smr_intent_rec *ir = rec;

		dm->intent_state = le32_to_cpu(ir->state);
		dm->intent_band = le32_to_cpu(ir->band);
		dm->intent_seq = le64_to_cpu(ir->seq);
		if (dm->intent_state > SMR_INTENT_SPARE_FULL ||
		    (dm->intent_state && dm->intent_band >= dm->nr_bands))
			return -EUCLEAN;
	} else if (k <= dm->slot_blocks) {
		struct smr_slot_rec *sr = rec;
		u32 first = (k - 1) * SMR_SLOTS_PER_BLOCK;

		for (i = 0; i < nr; i++) {
			u32 s = first + i;

			dm->slot_lba[s] = SMR_SLOT_FREE;
			dm->slot_seq[s] = 0;
			if (!(le32_to_cpu(sr[i].flags) & SMR_SLOT_VALID))
				continue;
			if (le32_to_cpu(sr[i].lba) >= nr_blocks)
				return -EUCLEAN;
			dm->slot_lba[s] = le32_to_cpu(sr[i].lba);
			dm->slot_seq[s] = le64_to_cpu(sr[i].seq);
		}
	} else {
		__le64 *cs = rec;
		u32 first = (k - 1 - dm->slot_blocks) * SMR_BANDS_PER_BLOCK;

		for (i = 0; i < nr; i++)
			dm->bands[first + i].clean_seq = le64_to_cpu(cs[i]);
	}
	return 0;
}

static void smr_dm_drop_index(struct smr_dm *dm)
{
	u32 i;

	for (i = 0; i < dm->nr_bands; i++) {
		struct smr_band *b = &dm->bands[i];

		kvfree(b->ext);
		b->ext = NULL;
		b->nr_ext = b->cap_ext = b->live = b->slots = 0;
		b->writers = b->seq_next = b->flags = 0;
		b->first_seq = 0;
		atomic_set(&b->readers, 0);
	}
	dm->index_bytes = 0;
	dm->nr_ext = dm->live = dm->used = dm->dirty_bands = 0;
	dm->cursor = 0;
	bitmap_zero(dm->slot_used, dm->nr_slots);
	bitmap_zero(dm->slot_inflight, dm->nr_slots);
}

/* A new, empty format (called by smr_format() before its commit). */
void smr_dm_reset(struct smr_target *sc)
{
	struct smr_dm *dm = sc->dm;
	u32 i;

	smr_dm_drop_index(dm);
	for (i = 0; i < dm->nr_slots; i++) {
		dm->slot_lba[i] = SMR_SLOT_FREE;
		dm->slot_seq[i] = 0;
	}
	for (i = 0; i < dm->nr_bands; i++)
		dm->bands[i].clean_seq = 0;
	dm->intent_state = SMR_INTENT_NONE;
	dm->intent_band = 0;
	dm->intent_seq = 0;
	dm->next_seq = 1;
}

static int smr_u64_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/*
 * Build the index from the loaded slot records: a record is alive if it
 * is newer than its band's clean sequence; of several alive copies of a
 * block the newest wins, the others stay allocated (superseded) until
 * their band is cleaned.
 */
static int smr_dm_rebuild(struct smr_target *sc)
{
	struct smr_dm *dm = sc->dm;
	u64 *keys, max_seq = 0;
	u32 nr = 0, i, j, last_slot = 0;
	int ret = 0;

	smr_dm_drop_index(dm);
	for (i = 0; i < dm->nr_bands; i++)
		max_seq = max(max_seq, dm->bands[i].clean_seq);
	max_seq = max(max_seq, dm->intent_seq);

	keys = kvmalloc_array(max_t(u32, dm->nr_slots, 1), sizeof(*keys),
			      GFP_KERNEL);
	if (!keys)
		return -ENOMEM;
	for (i = 0; i < dm->nr_slots; i++) {
		u32 lba = dm->slot_lba[i];

		if (lba == SMR_SLOT_FREE)
			continue;
		if (dm->slot_seq[i] < dm->bands[smr_band_of_block(dm, lba)].clean_seq) {
			dm->slot_lba[i] = SMR_SLOT_FREE;
			continue;
		}
		keys[nr++] = (u64)lba << 32 | i;
		if (dm->slot_seq[i] >= max_seq) {
			max_seq = dm->slot_seq[i];
			last_slot = i;
		}
	}
	sort(keys, nr, sizeof(*keys), smr_u64_cmp, NULL);

	for (i = 0; i < nr; i = j) {
		u32 lba = keys[i] >> 32, best = (u32)keys[i];
		u32 band = smr_band_of_block(dm, lba);
		struct smr_band *b = &dm->bands[band];

		for (j = i; j < nr && (keys[j] >> 32) == lba; j++) {
			u32 s = (u32)keys[j];

			if (dm->slot_seq[s] > dm->slot_seq[best])
				best = s;
			set_bit(s, dm->slot_used);
			dm->used++;
			if (!b->slots++) {
				dm->dirty_bands++;
				b->first_seq = dm->slot_seq[s];
			}
			b->first_seq = min(b->first_seq, dm->slot_seq[s]);
		}
		/* Blocks arrive in order: append, merging runs. */
		if (b->nr_ext + 1 > b->cap_ext) {
			ret = smr_ext_resize(sc, b, b->nr_ext + 1);
			if (ret)
				goto out;
		}
		spin_lock_irq(&sc->lock);
		smr_ext_insert(dm, b, lba - band * dm->band_blocks, 1, best);
		spin_unlock_irq(&sc->lock);
	}
	dm->next_seq = max_seq + 1;
	dm->cursor = nr ? (last_slot + 1) % dm->nr_slots : 0;
	dm->level = 0;
out:
	kvfree(keys);
	return ret;
}

/* Finish a band rewrite that a crash interrupted after its intent. */
static int smr_dm_recover_intent(struct smr_target *sc)
{
	struct smr_dm *dm = sc->dm;
	u64 rd = 0, wr = 0;
	int ret;

	if (dm->intent_state != SMR_INTENT_SPARE_FULL)
		return 0;
	DMINFO("%s: finishing the interrupted cleaning of band %u",
	       smr_dm_name(sc), dm->intent_band);
	ret = smr_dm_copy_back(sc, dm->intent_band, &rd, &wr);
	if (ret)
		return ret;
	spin_lock_irq(&sc->lock);
	dm->bands[dm->intent_band].clean_seq = dm->intent_seq;
	smr_mark_band_dirty(sc, dm->intent_band);
	dm->intent_state = SMR_INTENT_NONE;
	set_bit(0, sc->dirty);
	spin_unlock_irq(&sc->lock);
	return smr_md_commit(sc);
}

/*
 * Read the cache state from disk on the first resume of a table (and
 * after a failed cleaning, see smr_dm_preresume()) only:
 * the constructor ran while the previous table was still live and could
 * still write, so its copy may be stale, but from then on this table's
 * memory is the newest state. Reading it again on a later resume would
 * throw away what a failed commit left in memory: acknowledged writes.
 *
 * The device is suspended here: no allocation may wait for I/O to it.
 */
static int smr_dm_load(struct smr_target *sc)
{
	unsigned int noio;
	int ret;

	noio = memalloc_noio_save();
	mutex_lock(&sc->commit_lock);
	ret = smr_md_load_table(sc);
	mutex_unlock(&sc->commit_lock);
	if (!ret)
		ret = smr_dm_recover_intent(sc);
	if (!ret)
		ret = smr_dm_rebuild(sc);
	memalloc_noio_restore(noio);
	return ret;
}

int smr_dm_preresume(struct smr_target *sc)
{
	struct smr_dm *dm = sc->dm;
	int ret;

	/*
	 * After a cleaning failed, memory may hold a half-done band rewrite:
	 * start over from disk, which finishes it (smr_dm_recover_intent()).
	 */
	if (!dm->loaded) {
		ret = smr_commit_predecessor(sc);
		if (ret) {
			DMERR("%s: the previous table's state is not on disk (its commit failed again: %d); not resuming over it",
			      smr_dm_name(sc), ret);
			smr_nl_commit_error(sc, ret);
			return ret;
		}
	} else if (dm->failed || sc->commit_pending) {
		/*
		 * Memory is newer than the disk (acknowledged writes; a failed
		 * cleaning leaves it consistent with the intent on disk).
		 */
		ret = smr_md_commit(sc);
		if (ret) {
			DMERR("%s: metadata commit at resume failed: %d; state kept in memory",
			      smr_dm_name(sc), ret);
			smr_nl_commit_error(sc, ret);
			if (dm->failed)
				return ret;	/* cannot start over from disk */
		} else {
			sc->commit_pending = false;
		}
	}
	if (!dm->loaded || dm->failed) {
		ret = smr_dm_load(sc);
		if (ret)
			return ret;
		dm->loaded = true;
	}
	spin_lock_irq(&sc->lock);
	dm->failed = false;
	dm->fg_wanted = dm->manual = false;
	dm->state = SMR_DM_IDLE;
	dm->last_io = dm->last_write = jiffies;
	spin_unlock_irq(&sc->lock);
	return 0;
}

void smr_dm_resume(struct smr_target *sc)
{
	struct smr_dm *dm = sc->dm;

	spin_lock_irq(&sc->lock);
	dm->stop = false;
	spin_unlock_irq(&sc->lock);
	if (dm->dirty_bands && dm->idle_ms)
		queue_delayed_work(dm->clean_wq, &dm->clean_dwork,
				   msecs_to_jiffies(dm->idle_ms));
}

void smr_dm_postsuspend(struct smr_target *sc)
{
	struct smr_dm *dm = sc->dm;
	int ret;

	/* No host I/O is in flight or parked now. */
	spin_lock_irq(&sc->lock);
	dm->stop = true;
	spin_unlock_irq(&sc->lock);
	cancel_delayed_work_sync(&dm->clean_dwork);
	flush_workqueue(sc->wq);
	/*
	 * A failed commit keeps its blocks dirty (smr_md_commit()): the
	 * state stays in memory, and preresume or the next flush retries.
	 */
	ret = smr_md_commit(sc);
	if (ret) {
		sc->commit_pending = true;
		spin_lock_irq(&sc->lock);
		sc->stats.errors++;
		spin_unlock_irq(&sc->lock);
		DMERR("%s: metadata commit at suspend failed; kept in memory, retried at resume",
		      smr_dm_name(sc));
		smr_nl_commit_error(sc, ret);
	}
}

/* ------------------------------------------------------------------ */
/* Construction.                                                       */
/* ------------------------------------------------------------------ */

static int smr_dm_parse_policy(const char *s)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(smr_policy_names); i++)
		if (!strcasecmp(s, smr_policy_names[i]))
			return i;
	return -EINVAL;
}

static int smr_dm_parse_opts(struct smr_target *sc, struct dm_arg_set *as)
{
	static const struct dm_arg _args[] = {
		{0, 9, "Invalid number of optional arguments (at most 9)"},
	};
	struct smr_dm *dm = sc->dm;
	struct dm_target *ti = sc->ti;
	const char *name, *val;
	unsigned int argc;
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
		if (!strcasecmp(name, "format")) {
			sc->format = true;
			continue;
		}
		if (!argc) {
			ti->error = "Optional argument is missing its value";
			return -EINVAL;
		}
		val = dm_shift_arg(as);
		argc--;
		if (!strcasecmp(name, "cache_sectors")) {
			if (smr_parse_u64(val, &dm->cache_sectors)) {
				ti->error = "Invalid cache_sectors";
				return -EINVAL;
			}
			dm->opt_mask |= SMR_DM_OPT_CACHE;
		} else if (!strcasecmp(name, "idle_ms")) {
			if (smr_parse_u64(val, &v) || v > SMR_DM_MAX_IDLE_MS) {
				ti->error = "idle_ms must be a number from 0 to 3600000";
				return -EINVAL;
			}
			dm->idle_ms = v;
			dm->opt_mask |= SMR_DM_OPT_IDLE;
		} else if (!strcasecmp(name, "policy")) {
			ret = smr_dm_parse_policy(val);
			if (ret < 0) {
				ti->error = "policy must be fifo, greedy or cost-benefit";
				return ret;
			}
			dm->policy = ret;
			dm->opt_mask |= SMR_DM_OPT_POLICY;
		} else if (!strcasecmp(name, "seq_bypass")) {
			if (!strcasecmp(val, "on")) {
				dm->seq_bypass = true;
			} else if (!strcasecmp(val, "off")) {
				dm->seq_bypass = false;
			} else {
				ti->error = "seq_bypass must be on or off";
				return -EINVAL;
			}
			dm->opt_mask |= SMR_DM_OPT_BYPASS;
		} else {
			ti->error = "Unknown optional argument";
			return -EINVAL;
		}
	}
	if (as->argc) {
		ti->error = "Too many arguments";
		return -EINVAL;
	}
	return 0;
}

static int smr_dm_geometry(struct smr_target *sc)
{
	struct smr_dm *dm = sc->dm;
	struct dm_target *ti = sc->ti;
	u64 nr_bands, slots;
	sector_t need, have, md;

	if (dm->band_sectors < SMR_DM_MIN_BAND ||
	    dm->band_sectors > SMR_DM_MAX_BAND ||
	    dm->band_sectors % SMR_DM_IO_SECTORS) {
		ti->error = "band_sectors must be a multiple of 2048 (1 MiB) from 2048 to 524288 (256 MiB)";
		return -EINVAL;
	}
	nr_bands = div64_u64(ti->len, dm->band_sectors);
	if (!ti->len || nr_bands * dm->band_sectors != ti->len) {
		ti->error = "Target length must be a non-zero multiple of band_sectors";
		return -EINVAL;
	}
	if ((ti->len >> 3) >= U32_MAX) {
		ti->error = "Target length must be under 16 TiB";
		return -EINVAL;
	}
	dm->nr_bands = nr_bands;
	dm->band_blocks = dm->band_sectors >> 3;

	if (!(dm->opt_mask & SMR_DM_OPT_CACHE))
		dm->cache_sectors = max_t(u64, round_up(div_u64(ti->len, 100),
							SMR_BLOCK_SECTORS),
					  dm->band_sectors);
	if (dm->cache_sectors < SMR_DM_IO_SECTORS ||
	    dm->cache_sectors & (SMR_BLOCK_SECTORS - 1) ||
	    (dm->cache_sectors >> 3) >= U32_MAX) {
		ti->error = "cache_sectors must be a multiple of 8, at least 2048 (1 MiB)";
		return -EINVAL;
	}
	slots = dm->cache_sectors >> 3;
	dm->nr_slots = slots;
	dm->slot_blocks = DIV_ROUND_UP(dm->nr_slots, (u32)SMR_SLOTS_PER_BLOCK);
	sc->table_blocks = 1 + dm->slot_blocks +
		DIV_ROUND_UP(dm->nr_bands, (u32)SMR_BANDS_PER_BLOCK);

	/* The superblock check compares these too. */
	sc->zone_sectors = dm->band_sectors;
	sc->zone_capacity = dm->band_sectors;
	sc->nr_zones = dm->nr_bands;
	sc->nr_conv = 0;

	md = smr_md_sectors_for(sc->table_blocks);
	dm->cache_start = md;
	dm->spare_start = dm->cache_start + dm->cache_sectors;
	dm->bands_start = dm->spare_start + dm->band_sectors;
	need = dm->bands_start + ti->len;
	have = bdev_nr_sectors(sc->bdev);
	if (need > have) {
		DMERR("backing device %s has %llu sectors; %llu are needed (metadata %llu + cache %llu + spare band %llu + data %llu)",
		      sc->dev->name, (unsigned long long)have,
		      (unsigned long long)need, (unsigned long long)md,
		      dm->cache_sectors, dm->band_sectors,
		      (unsigned long long)ti->len);
		ti->error = "Backing device too small for this geometry (sizes in the kernel log)";
		return -ENOSPC;
	}
	return 0;
}

int smr_dm_ctr(struct smr_target *sc, struct dm_arg_set *as)
{
	struct dm_target *ti = sc->ti;
	struct smr_dm *dm;
	int ret;

	dm = kvzalloc(sizeof(*dm), GFP_KERNEL);
	if (!dm) {
		ti->error = "Cannot allocate the drive-managed state";
		return -ENOMEM;
	}
	sc->dm = dm;
	dm->sc = sc;
	INIT_DELAYED_WORK(&dm->nomem_dwork, smr_dm_nomem_work);	/* smr_dm_free() */
	if (bdev_is_zoned(sc->bdev)) {
		ti->error = "drive-managed mode needs a backing device that is not zoned";
		return -EINVAL;
	}
	dm->idle_ms = SMR_DM_DEFAULT_IDLE_MS;
	dm->policy = SMR_POLICY_FIFO;
	dm->seq_bypass = true;
	bio_list_init(&dm->queue);
	bio_list_init(&dm->parked);
	bio_list_init(&dm->held);
	bio_list_init(&dm->done);
	bio_list_init(&dm->nomem);
	init_waitqueue_head(&dm->wait);
	INIT_DELAYED_WORK(&dm->clean_dwork, smr_dm_clean_work);
	INIT_WORK(&sc->commit_work, smr_dm_work);

	if (smr_parse_u64(dm_shift_arg(as), &dm->band_sectors)) {
		ti->error = "Invalid band_sectors";
		return -EINVAL;
	}
	ret = smr_dm_parse_opts(sc, as);
	if (ret)
		return ret;
	ret = smr_dm_geometry(sc);
	if (ret)
		return ret;

	ret = -ENOMEM;
	ti->error = "Cannot allocate the cache and band state";
	dm->bands = kvcalloc(dm->nr_bands, sizeof(*dm->bands), GFP_KERNEL);
	dm->slot_lba = kvmalloc_array(dm->nr_slots, sizeof(u32), GFP_KERNEL);
	dm->slot_seq = kvmalloc_array(dm->nr_slots, sizeof(u64), GFP_KERNEL);
	dm->slot_used = kvcalloc(BITS_TO_LONGS(dm->nr_slots), sizeof(long),
				 GFP_KERNEL);
	dm->slot_inflight = kvcalloc(BITS_TO_LONGS(dm->nr_slots),
				     sizeof(long), GFP_KERNEL);
	dm->buf = vmalloc(SMR_DM_CHUNK_SECTORS << SECTOR_SHIFT);
	if (!dm->bands || !dm->slot_lba || !dm->slot_seq || !dm->slot_used ||
	    !dm->slot_inflight || !dm->buf)
		return ret;
	sc->mem_bytes = sizeof(*sc) + sizeof(*dm) +
		(size_t)dm->nr_bands * sizeof(*dm->bands) +
		(size_t)dm->nr_slots * (sizeof(u32) + sizeof(u64)) +
		2 * BITS_TO_LONGS(dm->nr_slots) * sizeof(long) +
		(SMR_DM_CHUNK_SECTORS << SECTOR_SHIFT);

	dm->io_client = dm_io_client_create();
	if (IS_ERR(dm->io_client)) {
		ret = PTR_ERR(dm->io_client);
		dm->io_client = NULL;
		ti->error = "Cannot create the dm-io client";
		return ret;
	}
	ret = smr_md_init(sc);
	if (ret) {
		ti->error = "Cannot allocate metadata buffers";
		return ret;
	}
	/* Clones for cache writes (smr_dm_submit_cache()). */
	ret = bioset_init(&sc->bs, BIO_POOL_SIZE, 0, 0);
	if (ret) {
		ti->error = "Cannot allocate the bio set";
		return ret;
	}
	sc->wq = alloc_ordered_workqueue("dm-smr-%s", WQ_MEM_RECLAIM,
					 dm_table_device_name(ti->table));
	dm->clean_wq = alloc_ordered_workqueue("dm-smr-clean-%s",
					       WQ_MEM_RECLAIM,
					       dm_table_device_name(ti->table));
	if (!sc->wq || !dm->clean_wq) {
		ti->error = "Cannot allocate the workqueues";
		return -ENOMEM;
	}
	ret = smr_md_load_or_format(sc);
	if (ret) {
		ti->error = sc->error;
		return ret;
	}
	memset(&sc->stats, 0, sizeof(sc->stats));
	dm->stop = true;	/* until resume */

	ti->num_flush_bios = 1;
	ti->flush_supported = true;
	ti->num_discard_bios = 1;
	/*
	 * Discards end in the worker, never on the backing device: take them
	 * whether or not it could (else dm drops discard support when it
	 * cannot, and the device refuses what docs/dm-smr.rst accepts).
	 */
	ti->discards_supported = true;
	ti->per_io_data_size = sizeof(struct smr_dm_io);
	ti->accounts_remapped_io = true;
	return dm_set_target_max_io_len(ti, SMR_DM_IO_SECTORS);
}

/* Called by smr_free() with nothing in flight. */
void smr_dm_free(struct smr_target *sc)
{
	struct smr_dm *dm = sc->dm;

	if (!dm)
		return;
	if (dm->clean_wq) {
		cancel_delayed_work_sync(&dm->clean_dwork);
		destroy_workqueue(dm->clean_wq);
	}
	/* Nothing in flight by now: no write waits for memory. */
	cancel_delayed_work_sync(&dm->nomem_dwork);
	if (dm->bands) {
		u32 i;

		for (i = 0; i < dm->nr_bands; i++)
			kvfree(dm->bands[i].ext);
	}
	if (dm->io_client)
		dm_io_client_destroy(dm->io_client);
	vfree(dm->buf);
	kvfree(dm->slot_inflight);
	kvfree(dm->slot_used);
	kvfree(dm->slot_seq);
	kvfree(dm->slot_lba);
	kvfree(dm->bands);
	kvfree(dm);
	sc->dm = NULL;
}

void smr_dm_io_hints(struct smr_target *sc, struct queue_limits *limits)
{
	struct smr_dm *dm = sc->dm;

	limits->logical_block_size = SMR_BLOCK_SIZE;
	limits->physical_block_size = SMR_BLOCK_SIZE;
	limits->io_min = SMR_BLOCK_SIZE;
	limits->io_opt = 0;
	limits->chunk_sectors = 0;
	limits->max_zone_append_sectors = 0;
	limits->zone_write_granularity = 0;
	smr_limits_clear_zoned(limits);
	/* Discards are accepted and ignored (docs/dm-smr.rst). */
	limits->discard_granularity = SMR_BLOCK_SIZE;
	limits->max_discard_sectors = dm->band_sectors;
	limits->max_hw_discard_sectors = dm->band_sectors;
	limits->discard_alignment = 0;
	limits->max_write_zeroes_sectors = 0;
}

/* ------------------------------------------------------------------ */
/* Status and messages.                                                */
/* ------------------------------------------------------------------ */

void smr_dm_snapshot(struct smr_target *sc, struct smr_dm_snap *s)
{
	struct smr_dm *dm = sc->dm;
	struct smr_dm_stats st;
	u64 out;

	memset(s, 0, sizeof(*s));
	spin_lock_irq(&sc->lock);
	st = dm->stats;
	s->cache_used = dm->used;
	s->cache_live = dm->live;
	s->index_extents = dm->nr_ext;
	s->index_bytes = dm->index_bytes;
	s->dirty_bands = dm->dirty_bands;
	s->state = dm->state;
	s->policy = dm->policy;
	s->commits = sc->stats.commits;
	s->errors = sc->stats.errors;
	s->clean_ms_since_busy = dm->since_busy_ms;
	s->mem_bytes = sc->mem_bytes + dm->index_bytes;
	spin_unlock_irq(&sc->lock);

	s->nr_bands = dm->nr_bands;
	s->band_sectors = dm->band_sectors;
	s->cache_total = dm->nr_slots;
	s->rmw_bg = st.rmw[SMR_CLEAN_IDLE];
	s->rmw_fg = st.rmw[SMR_CLEAN_FOREGROUND];
	s->rmw_manual = st.rmw[SMR_CLEAN_MANUAL];
	s->bg_aborts = st.bg_aborts;
	s->clean_read_sectors = st.clean_read_sectors;
	s->clean_write_sectors = st.clean_write_sectors;
	s->clean_ms_bg = st.clean_ms_bg;
	s->clean_ms_fg = st.clean_ms_fg;
	s->host_read_sectors = st.host_read_sectors;
	s->host_write_sectors = st.host_write_sectors;
	s->cache_write_sectors = st.cache_write_sectors;
	s->bypass_write_sectors = st.bypass_write_sectors;
	out = st.cache_write_sectors + st.bypass_write_sectors +
		st.clean_write_sectors;
	s->wa_milli = st.host_write_sectors ?
		div64_u64(out * 1000, st.host_write_sectors) : 0;
}

/*
 * STATUSTYPE_INFO, drive-managed mode (one line, space separated):
 *
 *   drive-managed <nr_bands> <band_sectors> <cache_used>/<cache_total>
 *   <cache_live> <index_extents> <index_bytes> <dirty_bands> <rmw_bg>
 *   <rmw_fg> <rmw_manual> <bg_aborts> <clean_read_sectors>
 *   <clean_write_sectors> <clean_ms_bg> <clean_ms_fg>
 *   <clean_ms_since_busy> <host_read_sectors> <host_write_sectors>
 *   <cache_write_sectors> <bypass_write_sectors> <wa> <state> <policy>
 *   <commits> <errors> <mem_bytes>
 *
 * Cache figures count 4 KiB slots; used slots include superseded copies.
 * wa is (cache + bypass + cleaning writes) / host writes, as "N.NNN".
 * docs/dm-smr.rst describes every field.
 */
void smr_dm_status(struct smr_target *sc, status_type_t type, char *result,
		   unsigned int maxlen)
{
	struct smr_dm *dm = sc->dm;
	unsigned int sz = 0;
	struct smr_dm_snap s;
	int nopt;

	switch (type) {
	case STATUSTYPE_INFO:
		smr_dm_snapshot(sc, &s);
		DMEMIT("drive-managed %llu %llu %llu/%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu.%03llu %s %s %llu %llu %llu",
		       s.nr_bands, s.band_sectors, s.cache_used, s.cache_total,
		       s.cache_live, s.index_extents, s.index_bytes,
		       s.dirty_bands, s.rmw_bg, s.rmw_fg, s.rmw_manual,
		       s.bg_aborts, s.clean_read_sectors, s.clean_write_sectors,
		       s.clean_ms_bg, s.clean_ms_fg, s.clean_ms_since_busy,
		       s.host_read_sectors, s.host_write_sectors,
		       s.cache_write_sectors, s.bypass_write_sectors,
		       div_u64(s.wa_milli, 1000), s.wa_milli % 1000,
		       smr_state_names[s.state], smr_policy_names[s.policy],
		       s.commits, s.errors, s.mem_bytes);
		break;
	case STATUSTYPE_TABLE:
		nopt = 2 * hweight32(dm->opt_mask);
		DMEMIT("%s drive-managed %llu", sc->dev->name, dm->band_sectors);
		if (nopt)
			DMEMIT(" %d", nopt);
		if (dm->opt_mask & SMR_DM_OPT_CACHE)
			DMEMIT(" cache_sectors %llu", dm->cache_sectors);
		if (dm->opt_mask & SMR_DM_OPT_IDLE)
			DMEMIT(" idle_ms %u", dm->idle_ms);
		if (dm->opt_mask & SMR_DM_OPT_POLICY)
			DMEMIT(" policy %s", smr_policy_names[READ_ONCE(dm->policy)]);
		if (dm->opt_mask & SMR_DM_OPT_BYPASS)
			DMEMIT(" seq_bypass %s", dm->seq_bypass ? "on" : "off");
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(sc->ti->type);
		DMEMIT(",mode=drive-managed,band_sectors=%llu,cache_sectors=%llu,idle_ms=%u,policy=%s,seq_bypass=%s;",
		       dm->band_sectors, dm->cache_sectors, dm->idle_ms,
		       smr_policy_names[READ_ONCE(dm->policy)],
		       dm->seq_bypass ? "on" : "off");
		break;
	}
}

/*
 * Messages:
 *   clean           clean every dirty band now (returns at once)
 *   clean_stop      end a manual cleaning after the current band and
 *                   restart the idle timer
 *   policy <name>   fifo | greedy | cost-benefit
 *   clear_stats
 */
int smr_dm_message(struct smr_target *sc, unsigned int argc, char **argv,
		   char *result, unsigned int maxlen)
{
	struct smr_dm *dm = sc->dm;
	int p;

	if (argc == 1 && !strcasecmp(argv[0], "clean")) {
		spin_lock_irq(&sc->lock);
		if (dm->stop) {
			spin_unlock_irq(&sc->lock);
			DMERR("%s: clean: the device is suspended", smr_dm_name(sc));
			return -EBUSY;
		}
		dm->manual = true;
		spin_unlock_irq(&sc->lock);
		smr_dm_kick_cleaner(dm, 0);
		return 0;
	}
	if (argc == 1 && !strcasecmp(argv[0], "clean_stop")) {
		spin_lock_irq(&sc->lock);
		dm->manual = false;
		WRITE_ONCE(dm->last_io, jiffies);
		spin_unlock_irq(&sc->lock);
		return 0;
	}
	if (argc == 2 && !strcasecmp(argv[0], "policy")) {
		p = smr_dm_parse_policy(argv[1]);
		if (p < 0) {
			DMERR("policy must be fifo, greedy or cost-benefit, not '%s'",
			      argv[1]);
			return -EINVAL;
		}
		spin_lock_irq(&sc->lock);
		dm->policy = p;
		dm->opt_mask |= SMR_DM_OPT_POLICY;
		spin_unlock_irq(&sc->lock);
		return 0;
	}
	if (argc == 1 && !strcasecmp(argv[0], "clear_stats")) {
		spin_lock_irq(&sc->lock);
		memset(&dm->stats, 0, sizeof(dm->stats));
		sc->stats.commits = sc->stats.errors = 0;
		dm->since_busy_ms = 0;
		spin_unlock_irq(&sc->lock);
		return 0;
	}
	DMERR("unknown message or wrong arguments: %s (argc %u)", argv[0], argc);
	return -EINVAL;
}
