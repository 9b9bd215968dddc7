/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-smr drive-managed mode: its private types and the prototypes its
 * files share. The mode is split by job:
 *   dm-smr-dm.c          the target: table line, map and end-io, the
 *                        worker, suspend and resume
 *   dm-smr-dm-read.c     host reads the model or the write cache sees,
 *                        delayed ones (the plain read: inline below);
 *                        each bio's state
 *   dm-smr-dm-cache.c    the persistent cache: slot log, extent index,
 *                        cache writes until indexed
 *   dm-smr-dm-bands.c    the bands holding slots, in the policies' orders
 *                        (fifo list, greedy heap, cost-benefit buckets);
 *                        occupancy levels
 *   dm-smr-dm-clean.c    the cleaner: when to clean, giving way to host
 *                        I/O, the policies that pick a band; writes that
 *                        wait for it too long (clean_timeout_ms)
 *   dm-smr-dm-rewrite.c  band read-modify-write through the spare band,
 *                        crash recovery when the state is loaded
 *   dm-smr-dm-md.c       what drive-managed mode puts in metadata blocks
 *   dm-smr-dm-status.c   status, the counters' snapshot, messages
 * What the rest of dm-smr calls is declared in dm-smr.h.
 */
#ifndef DM_SMR_DM_H
#define DM_SMR_DM_H

#include <linux/atomic.h>
#include <linux/bio.h>
#include <linux/math64.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

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
#define SMR_SLOT_FREE		U32_MAX	/* no slot: ends a band's slot list */
#define SMR_LBA_FREE		U64_MAX	/* slot_lba of a free slot */
/*
 * Size limits (docs/dm-smr.rst, "Table line"). The last two keep the
 * arrays below within what kvmalloc() gives (INT_MAX bytes; beyond that
 * it warns and fails):
 *   capacity under 2^36 blocks (256 TiB): what is tested; the slot
 *     records hold 56 bits, so this can grow;
 *   fewer than 2^28 slots (a cache under 1 TiB): slot_lba and slot_seq
 *     are 8 bytes a slot;
 *   at most 2^24 bands: struct smr_band is 104 bytes (1.6 GiB at 2^24).
 */
#define SMR_DM_LBA_BITS		36
#define SMR_DM_SLOT_BITS	28
#define SMR_DM_MAX_BANDS	(1U << 24)
#define SMR_DM_ALLOC_WINDOW	(1U << 20)	/* slots a slot search looks at */
#define SMR_BAND_NONE		U32_MAX
#define SMR_EXT_MAX_LEN		U16_MAX

#define SMR_DM_HDR		sizeof(struct smr_blk_header)

enum {
	SMR_DM_OPT_CACHE = 1 << 0,
	SMR_DM_OPT_IDLE = 1 << 1,
	SMR_DM_OPT_POLICY = 1 << 2,
	SMR_DM_OPT_BYPASS = 1 << 3,
	SMR_DM_OPT_FORMAT = 1 << 4,
	SMR_DM_OPT_TIMEOUT = 1 << 5,
	SMR_DM_OPT_WCACHE = 1 << 6,	/* write_cache_kib */
	SMR_DM_OPT_WCACHE_MIB = 1 << 7,	/* write_cache, its old spelling */
};

/* A run of cached blocks of one band: 8 bytes. */
struct smr_ext {
	u32 slot;		/* cache slot of the first block */
	u16 off;		/* first block, from the band start */
	u16 len;		/* blocks */
};

/*
 * An extent in its band's index, a red-black tree by offset: 32 bytes.
 * Indexing a write costs O(log extents) plus the extents it covers, at
 * most its own blocks, so it is done where the write completes, with
 * interrupts off (dm-smr-dm-cache.c).
 */
struct smr_ext_node {
	struct rb_node rb;
	struct smr_ext e;
};

/* Nodes kept for the next index inserts, under sc->d.lock (dm->ext_spare). */
#define SMR_EXT_SPARE		4

#define SMR_BAND_CLEANING	1

struct smr_band {
	struct rb_root ext;	/* struct smr_ext_node by off, non-overlapping */
	u32 nr_ext;
	u32 slots;		/* cache slots held, live or superseded */
	u32 live;		/* blocks the index maps */
	u32 writers;		/* host writes in flight to this band */
	u32 seq_next;		/* sequential stream: next sector, 0 = none */
	u64 first_seq;		/* oldest slot held */
	u64 clean_seq;		/* persisted: older slots of this band are dead */
	atomic_t readers;	/* reads in flight from its cache slots */
	u16 flags;
	u16 cb_bucket;		/* in dm->cb[cb_bucket - 1], or 0 */
	/*
	 * The slots it holds, linked through dm->slot_next (SMR_SLOT_FREE
	 * ends the list): freeing them after a cleaning walks this band's
	 * slots, not the whole cache.
	 */
	u32 slot_head;
	u32 heap_pos;		/* in dm->heap, or SMR_BAND_NONE */
	struct list_head dirty_node;	/* in dm->dirty_list while slots > 0 */
	struct rb_node cb_node;		/* in dm->cb[] while slots > 0 */
};

/*
 * Cost-benefit's buckets: a band holding s slots is in bucket fls(s) - 1
 * (s from 2^k to 2^(k+1) - 1 in bucket k), each ordered by (first_seq,
 * band). Slot counts are u32: 32 buckets.
 */
#define SMR_CB_BUCKETS		32

struct smr_dm_stats {
	u64 rmw[4];		/* by enum smr_clean_reason */
	u64 bg_aborts;
	u64 clean_read_sectors;
	u64 clean_write_sectors;
	u64 clean_ms_bg;
	u64 clean_ms_fg;
	/* host_read_sectors: per CPU, smr_dm.rd */
	u64 host_write_sectors;
	u64 cache_write_sectors;
	u64 bypass_write_sectors;
	u64 discard_sectors;
	u64 clean_timeouts;	/* writes failed for waiting too long */
};

struct smr_dm {
	struct smr_dm_target *sc;

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
	/*
	 * A write parked for cache space fails after this long (0: never),
	 * as drive-managed disks under heavy cleaning time out (the IDNF
	 * write errors reported of WD Red SMR disks). park_dwork ends them.
	 */
	u32 clean_timeout_ms;
	struct delayed_work park_dwork;
	/* Where park_dwork runs: made when clean_timeout_ms is first set
	   non-zero (smr_dm_make_park_wq()), so a table without the timeout
	   has no worker for it; set before clean_timeout_ms, under sc->d.lock. */
	struct workqueue_struct *park_wq;
	u8 policy;
	bool seq_bypass;
	unsigned int opt_mask;

	/* State, under sc->d.lock. */
	struct smr_band *bands;
	u64 *slot_lba;		/* device block a slot holds, SMR_LBA_FREE */
	u64 *slot_seq;
	unsigned long *slot_used;
	unsigned long *slot_inflight;
	u32 *slot_next;		/* the next slot of the same band */
	/*
	 * Bands holding slots, by (first_seq, band): the fifo policy's
	 * order, kept as bands gain their first slot and lose their last.
	 */
	struct list_head dirty_list;
	/* Bands holding slots in a max-heap by (slots, -band): greedy's. */
	u32 *heap;
	u32 heap_len;
	/* Bands holding slots by slot count bucket, oldest first: cost-benefit's. */
	struct rb_root_cached cb[SMR_CB_BUCKETS];
	u32 cursor;
	u32 used;
	u32 live;
	u32 nr_ext;
	u32 dirty_bands;
	/* Index nodes freed, or allocated ahead, for the next inserts. */
	struct smr_ext_node *ext_spare[SMR_EXT_SPARE];
	u32 nr_ext_spare;
	u64 next_seq;
	u32 intent_state;
	u32 intent_band;
	u64 intent_seq;
	bool failed;		/* an unrecoverable cleaning error */
	bool loaded;		/* state read from disk by a resume */
	bool loading;		/* the index is being rebuilt: see smr_dm_order_bands() */

	/* The worker's queues, under sc->d.lock. */
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
	unsigned long last_write; /* jiffies of the last host write, under sc->d.lock */
	bool fg_wanted;
	bool manual;
	bool stop;
	u8 state;		/* enum smr_dm_state */
	u64 since_busy_ms;	/* idle/manual cleaning since the last host
				 * write (reads make no cleaning debt), under
				 * sc->d.lock */
	u32 level;		/* highest occupancy level reported */
	void *buf;		/* one chunk */
	struct dm_io_client *io_client;
	struct smr_ext runs[SMR_DM_CHUNK_BLOCKS];	/* cleaner's scratch */
	/*
	 * With the timing model: where the device's first sector and the
	 * cache sit on the platter.
	 */
	sector_t tm_base;
	sector_t tm_cache_pos;
	u64 tm_clean_ns;	/* modelled service time of cleaning I/O, under sc->d.lock */
	struct smr_dm_stats stats;
	/* Host reads, sectors only (smr_dm_read_map()); ios stay 0. */
	struct smr_io_count __percpu *rd;
	struct smr_io_count rd_base;	/* their sum at clear_stats, under d.lock */
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
	/* A write that waited (smr_dm_write_waited tracepoint, when on). */
	u8 wait_why;
	u64 wait_since_ns;
	/* Parked for cache space since @parked_at (clean_timeout_ms). */
	bool parked;
	unsigned long parked_at;
	struct smr_tm_bio tm;	/* with the timing model: its modelled end */
	struct smr_wc_wait wcw;	/* held by the write cache (dm-smr-wc.c) */
};

/*
 * A cleaning policy: which band to clean next (dm-smr-dm-clean.c). A new
 * policy is a pick function and an entry in smr_clean_policies[], at the
 * index of its enum smr_dm_policy value.
 */
struct smr_clean_policy {
	const char *name;		/* in the table line, status, messages */
	u32 (*pick)(struct smr_dm *dm);	/* under sc->d.lock; SMR_BAND_NONE if none */
};

/*
 * Every host bio's kind starts as SMR_IO_NONE (smr_dm_map_host(), and
 * smr_dm_map() for one a delay fault held): smr_dm_end_io() looks at it,
 * also for a bio a fault or the power ended. What else is here is a
 * write's, a flush's or a discard's, reset in smr_dm_map_io(); a read
 * uses only the model's part, set where it is sent with the model
 * (smr_dm_read_issue()). So a read stores one byte here, not 8 fields.
 */
static inline void smr_dm_io_reset(struct smr_dm_io *io)
{
	io->kind = SMR_IO_NONE;
	io->indexed = false;
	io->parked = false;
	io->wait_since_ns = 0;
	smr_tm_bio_init(&io->tm);
}

static inline const char *smr_dm_name(struct smr_dm_target *sc)
{
	return dm_table_device_name(sc->t.ti->table);
}

static inline u32 smr_band_of_block(struct smr_dm *dm, u64 lba)
{
	return div_u64(lba, dm->band_blocks);
}

static inline u64 smr_band_block(struct smr_dm *dm, u32 band)
{
	return (u64)band * dm->band_blocks;
}

static inline sector_t smr_band_sector(struct smr_dm *dm, u32 band)
{
	return dm->bands_start + (sector_t)band * dm->band_sectors;
}

static inline sector_t smr_slot_sector_dm(struct smr_dm *dm, u32 slot)
{
	return dm->cache_start + (sector_t)slot * SMR_BLOCK_SECTORS;
}

/*
 * The timing model's platter position of backing sector @s: bands where
 * the host sees them (from the device's place on the drive), the cache
 * (and the metadata before it, the spare band after it) at cache_at of
 * the drive (dm->tm_cache_pos).
 */
static inline sector_t smr_dm_tm_pos(struct smr_dm *dm, sector_t s)
{
	if (s >= dm->bands_start)
		return dm->tm_base + s - dm->bands_start;
	if (s >= dm->cache_start)
		return dm->tm_cache_pos + (s - dm->cache_start);
	return dm->tm_cache_pos;
}

/* End a host bio: at its modelled end (io->tm.end) with the timing model. */
static inline void smr_dm_end_bio(struct smr_dm_target *sc, struct bio *bio)
{
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));

	smr_tm_bio_done(sc->d.tm, &io->tm, bio);
}

static inline void smr_mark_slots_dirty(struct smr_dm_target *sc, u32 slot, u32 n)
{
	u32 k;

	for (k = slot / SMR_SLOTS_PER_BLOCK; k <= (slot + n - 1) / SMR_SLOTS_PER_BLOCK; k++)
		smr_slots_mark_dirty(&sc->d.md, 1 + k);
}

/* Host I/O now: background cleaning waits for idle_ms after it. */
static inline void smr_dm_touch(struct smr_dm *dm)
{
	unsigned long now = jiffies;

	if (READ_ONCE(dm->last_io) != now)
		WRITE_ONCE(dm->last_io, now);
}

static inline void smr_mark_band_dirty(struct smr_dm_target *sc, u32 band)
{
	smr_slots_mark_dirty(&sc->d.md,
			     1 + sc->dm->slot_blocks + band / SMR_BANDS_PER_BLOCK);
}

/*
 * Free a band's extents: a tree smr_ext_drop() returned, or a band's own
 * when the index is dropped whole (no lock: no I/O uses it then). Inline
 * here, as dm-smr-dm-md.c, below the cache's file, frees them too. In
 * process context only: a cache of scattered blocks is millions of
 * nodes, so it yields as it goes (and a debug kernel says so if a caller
 * ever holds a lock here).
 */
static inline void smr_ext_free(struct rb_root *root)
{
	struct smr_ext_node *x, *nx;

	rbtree_postorder_for_each_entry_safe(x, nx, root, rb) {
		kfree(x);
		cond_resched();
	}
	*root = RB_ROOT;
}

/* Defined in dm-smr-dm-read.c */
int smr_dm_read_issue(struct smr_dm_target *sc, struct bio *bio,
		      struct smr_dm_io *io, bool in_map);
int smr_dm_read_hold(struct smr_dm_target *sc, struct bio *bio,
		     struct smr_dm_io *io);

/* Defined in dm-smr-dm-cache.c */
struct smr_ext_node *smr_ext_find(struct smr_band *b, u32 off);
bool smr_ext_overlaps(struct smr_band *b, u32 off, u32 n);

/*
 * Blocks from @off (at most @n) served by one source: the cache, from
 * *slot on, or the band (*slot = SMR_SLOT_FREE). Caller holds sc->d.lock.
 * Inline: every read asks, and most bands have nothing cached.
 */
static inline u32 smr_ext_lookup(struct smr_band *b, u32 off, u32 n, u32 *slot)
{
	struct smr_ext_node *x;

	*slot = SMR_SLOT_FREE;
	if (RB_EMPTY_ROOT(&b->ext))
		return n;
	x = smr_ext_find(b, off);
	if (x && x->e.off <= off) {
		*slot = x->e.slot + (off - x->e.off);
		return min_t(u32, n, x->e.off + x->e.len - off);
	}
	if (x)
		return min_t(u32, n, x->e.off - off);
	return n;
}

/*
 * Where a read goes: the cache or its band, whichever holds its first
 * block, and only as far as that holds the blocks after it; dm sends the
 * rest as another bio. In map() only: dm_accept_partial_bio() writes into
 * dm's own stack frame, which is gone once map() has returned. A read in
 * the cache holds its band (b->readers) until smr_dm_end_io(), so that
 * its slots are not cleaned and reused under it.
 *
 * A band that holds no cache slots (b->slots 0, the usual random read
 * of data nothing cached) is read with no lock: the lock was about 30
 * instructions of a read's 19000, an eighth of what the target adds over
 * dm-linear (docs/benchmarks-log.md, 2026-11-30). Why that is enough:
 *
 * - What 0 means. b->slots counts every slot the band holds, indexed or
 *   not, live or superseded. A cache write gains its slots under the
 *   lock when it is mapped (smr_band_gain()), before its completion
 *   indexes them; the band loses slots only when they are freed: a
 *   failed write's, never indexed (smr_slot_release()), or all of them
 *   once a cleaning has copied the band home and dropped its index
 *   (smr_dm_free_band_slots()). At 0 the index is empty and the band's
 *   sectors hold every block, as the locked lookup would find.
 * - A write acknowledged before this read was sent gained its slots
 *   before its acknowledgement, which comes before the read's submission:
 *   this load cannot return the 0 from before it.
 * - The store that brings the count to 0 is a release (smr_band_lose()),
 *   after the copy home completed; the acquire load here pairs with it,
 *   so a read sent to the band after seeing 0 finds the rewritten data.
 * - A write or a cleaning that begins after the load races with this
 *   read as it did with one the locked path had aimed: the lock was
 *   dropped before the bio left.
 * - The whole bio is in the band: the constructor takes band_sectors a
 *   multiple of SMR_DM_IO_SECTORS, at whose boundaries map() cuts every
 *   bio (smr_dm_split()), so no bio crosses a band's end and run = n is
 *   what the lookup of an empty index would give.
 * A band with slots takes the lock and its index, as before.
 */
static __always_inline int smr_dm_read_map(struct smr_dm_target *sc,
					   struct bio *bio,
					   struct smr_dm_io *io)
{
	struct smr_dm *dm = sc->dm;
	sector_t sector = dm_target_offset(sc->t.ti, bio->bi_iter.bi_sector);
	u32 osect, band, slot, run, n;
	struct smr_band *b;

	band = div_u64_rem(sector, dm->band_sectors, &osect);
	n = bio_sectors(bio) >> 3;
	if ((osect | bio_sectors(bio)) & (SMR_BLOCK_SECTORS - 1) || !n)
		return DM_MAPIO_KILL;
	b = &dm->bands[band];

	if (likely(!smp_load_acquire(&b->slots))) {
		run = n;
		slot = SMR_SLOT_FREE;
	} else {
		spin_lock_irq(&sc->d.lock);
		run = smr_ext_lookup(b, osect >> 3, n, &slot);
		if (slot != SMR_SLOT_FREE)
			atomic_inc(&b->readers);
		spin_unlock_irq(&sc->d.lock);
	}
	/* Sectors only: the status shows no count of reads. */
	this_cpu_add(dm->rd->sectors, (u64)run << 3);

	if (run < n)
		dm_accept_partial_bio(bio, run << 3);
	if (slot != SMR_SLOT_FREE) {
		io->kind = SMR_IO_READ_CACHE;
		io->band = band;
		bio->bi_iter.bi_sector = smr_slot_sector_dm(dm, slot);
	} else {
		bio->bi_iter.bi_sector = smr_band_sector(dm, band) + osect;
	}
	/* Last: little is live across its call (bio_associate_blkg()). */
	bio_set_dev(bio, sc->d.bdev);
	return DM_MAPIO_REMAPPED;
}

/*
 * A host read, from map(), @io its per-bio data, its kind reset. Without
 * a timing model or a write cache nothing holds it: dm sends it, as
 * dm-linear's, with no call but the block layer's (a random 4 KiB read
 * costs about 13000 instructions in all, so 1 % is about 130: each call
 * and each dm_per_bio_data() counts). Inline in smr_dm_map_host(): the
 * call and a second set of saved registers were 12 of them
 * (docs/benchmarks-log.md, 2026-12-02 (5)).
 */
static __always_inline int smr_dm_read(struct smr_dm_target *sc,
				       struct bio *bio, struct smr_dm_io *io)
{
	int r = smr_dm_read_map(sc, bio, io);

	if (r != DM_MAPIO_REMAPPED || likely(!sc->d.tm && !sc->d.wc))
		return r;
	return smr_dm_read_issue(sc, bio, io, true);
}


int smr_ext_index(struct smr_dm_target *sc, struct smr_band *b, u32 off,
		  u32 n, u32 slot);
struct rb_root smr_ext_drop(struct smr_dm *dm, struct smr_band *b);
void smr_ext_free_spares(struct smr_dm *dm);
int smr_slot_alloc(struct smr_dm *dm, u32 n, u32 *slot);
void smr_slot_free(struct smr_dm *dm, u32 slot, u32 n);
void smr_slot_release(struct smr_dm *dm, u32 band, u32 slot, u32 n);
/* Defined in dm-smr-wc.c */
int smr_dm_send(struct smr_dm_target *sc, struct bio *bio, bool in_map);
void smr_dm_send_clone(struct smr_dm_target *sc, struct bio *bio,
		       struct bio *clone);

void smr_dm_submit_cache(struct smr_dm_target *sc, struct bio *bio,
			 sector_t sector);
void smr_dm_write_done(struct smr_dm_target *sc, struct bio *bio,
		       struct bio_list *commit);
void smr_dm_nomem_work(struct work_struct *work);
u64 smr_dm_tm_commit(struct smr_dm_target *sc, bool cleaning);

/* Defined in dm-smr-dm-bands.c */
void smr_band_gain(struct smr_dm *dm, u32 band, u32 slot, u32 n);
void smr_band_lose(struct smr_dm *dm, u32 band, u32 n);
void smr_dm_order_bands(struct smr_dm *dm);
void smr_dm_levels(struct smr_dm_target *sc);

/* Defined in dm-smr-dm-clean.c */
extern const struct smr_clean_policy smr_clean_policies[];
int smr_dm_parse_policy(const char *s, u64 *v);
void smr_dm_kick_cleaner(struct smr_dm *dm, unsigned long delay);
void smr_dm_clean_work(struct work_struct *work);
void smr_dm_arm_park_timeout(struct smr_dm_target *sc);
int smr_dm_make_park_wq(struct smr_dm_target *sc);
void smr_dm_timed_out(struct smr_dm_target *sc, struct bio *bio);
void smr_dm_park_work(struct work_struct *work);

/* Defined in dm-smr-dm-rewrite.c */
void smr_dm_release_parked(struct smr_dm_target *sc);
int smr_dm_clean_band(struct smr_dm_target *sc, u32 band,
		      enum smr_clean_reason reason, u64 pick_ns);
int smr_dm_load(struct smr_dm_target *sc);

/* Defined in dm-smr-dm-md.c (and smr_dm_md_mode, in dm-smr.h) */
void smr_dm_drop_index(struct smr_dm *dm);
u32 smr_dm_md_blocks(struct smr_dm *dm);

#endif /* DM_SMR_DM_H */
