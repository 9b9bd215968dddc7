/* SPDX-License-Identifier: GPL-2.0 */
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
 *    damage in memory at map time, stamped with the next damage sequence
 *    number, and is deferred to the worker, which makes the damage durable
 *    before it issues the write: one FUA journal block for all the damage
 *    of a batch (dm-caveat-journal.c), or a whole commit when the journal
 *    is full; while such damage is not yet durable, every write with a
 *    non-empty damage range takes the same path;
 *  - with write_cache_kib, such a write is copied and completed at once; the
 *    copy takes its place (dm-caveat-io.c), and a flush waits for every
 *    copy to reach its home before it commits;
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
 *             write_cache_kib <KiB> acknowledge writes that wait for
 *                                 their damage to be durable from a
 *                                 copy, at most this much (0: off);
 *                                 write_cache <blocks> before, still
 *                                 accepted and printed back in KiB
 *
 * Shared types and prototypes. The target is split by job, as dm-zoned is:
 *   dm-caveat-target.c  table parsing, construction, resume and suspend
 *   dm-caveat-status.c  status, the counters' snapshot, messages
 *   dm-caveat-io.c      map and end_io, the worker and the write path,
 *                       scramble
 *   dm-caveat-damage.c  the damage set (chunks, bitmaps, spares, ranges)
 *                       and the damage rule
 *   dm-caveat-md.c      what it persists (bitmap pages) and its superblock,
 *                       through common/smr-slots.c; whole commits
 *   dm-caveat-journal.c the damage journal: one FUA block per batch of
 *                       damaging writes, replayed at load
 *   dm-caveat-wc.c      the write cache: the copies, the interval tree
 *                       reads and writes wait on, flushes' waits
 *   dm-caveat-nl.c      generic netlink events and dumps (dm-caveat-nl.h)
 * Under it, the library module smr-common (common/, shared with dm-smr).
 * The on-disk format itself is in common/smr-ondisk.h.
 */
#ifndef DM_CAVEAT_H
#define DM_CAVEAT_H

#include <linux/types.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/interval_tree.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include "smr-compat.h"
#include "smr-count.h"
#include "smr-timing.h"
#include "smr-ondisk.h"
#include "smr-slots.h"
#include "smr-args.h"
#include "smr-genl.h"
#include "smr-claim.h"
#include "smr-faults.h"
#include "smr-power.h"
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
/*
 * Scans over ranges the host chooses (dump, the damage range of a write
 * with a large did) take the lock, interrupts off, for this many blocks
 * (64 chunks) at a time.
 */
#define CV_SCAN_CHUNKS		64
#define CV_SCAN_BLOCKS		(CV_SCAN_CHUNKS * CV_CHUNK_BLOCKS)

/* Limits of the table arguments. */
#define CV_MIN_BLOCK_SIZE	512
#define CV_MAX_BLOCK_SIZE	65536
#define CV_MAX_DID		(1ULL << 32)
/*
 * The chunk array is one kvcalloc(), and kvmalloc() refuses (with a
 * WARN) more than INT_MAX bytes: at most 2^27 - 1 chunks, 2^42 - 2^15
 * blocks (2 PiB of 512-byte blocks, 16 PiB of 4 KiB ones).
 */
#define CV_MAX_CHUNKS		(INT_MAX / sizeof(struct cv_chunk))
#define CV_MAX_BLOCKS		((u64)CV_MAX_CHUNKS << CV_CHUNK_SHIFT)

/*
 * The write cache (write_cache_kib <KiB>, dm-caveat-io.c). It holds at
 * most this many writes, so that one journal block takes the damage of
 * all of them, and this much data; a larger write is not cached.
 */
#define CV_WC_MAX_WRITES	128
#define CV_WC_MAX_BYTES		(64ULL << 20)
#define CV_WC_MAX_BIO_PAGES	64
#define CV_WC_MAX_BLOCKS	(CV_WC_MAX_BIO_PAGES * PAGE_SIZE / CV_MIN_BLOCK_SIZE)
#define CV_WC_SETTLE_MS		10000	/* dump and query wait for it to empty */
#define CV_WC_FAIL_MAX		8	/* flushes owed a lost write's error */

struct cv_chunk {
	unsigned long *bits;	/* NULL: none valid, CV_FULL: all, else bitmap */
	unsigned int pins;	/* writes in flight that will set bits here */
	/*
	 * A bitmap's set bits, kept by whoever sets or clears them, so
	 * that full and empty are known without reading the page (a walk
	 * of a full page is 512 words: 1 MiB rewrites spent more there
	 * than in the rest of caveat's write path).
	 */
	unsigned int nset;
};

/* Counters shown by "dmsetup status"; protected by cv_target.lock. */
struct cv_target {
	struct dm_target *ti;
	struct dm_dev *dev;
	struct smr_claim claim;	/* of the backing device (smr-claim.h) */

	/* Table arguments, kept to print the table line back. */
	u64 did;
	u64 dnor;
	u64 unshingled;
	u32 block_size;
	bool zero_reads;
	bool scramble;
	bool format;
	u64 wc_kib;		/* write_cache_kib as given; 0 off */
	u64 wc_max;		/* ... in blocks: what the cache may hold */
	unsigned int opt_mask;
	unsigned int bshift;	/* log2 of sectors per block */
	u64 nr_blocks;

	/* Metadata (dm-caveat-md.c, through common/smr-slots.c). */
	struct smr_slots md;
	u32 md_pages;
	sector_t data_start;
	bool loaded;		/* the damage map is this table's (first resume) */
	/*
	 * Whole commits and journal writes, one at a time (worker, suspend,
	 * messages): a commit can then reset the journal it makes obsolete.
	 */
	struct mutex commit_mutex;
	u64 *ld_stamps;		/* at load only: each bitmap page's stamp */

	/* The damage journal (dm-caveat-journal.c); none: jr_blocks 0. */
	u32 jr_blocks;		/* J, from the superblock */
	sector_t jr_start;	/* its first sector */
	u32 jr_pos;		/* the next block written (commit_mutex) */
	u32 jr_used;		/* blocks written since the last commit (commit_mutex) */
	struct page *jr_page;
	/* Damage applied and not yet written (lock). */
	struct cv_jr_pending {
		u64 first, len, stamp;
	} jr_rec[CV_JR_RECS];
	u32 jr_nr;
	bool jr_overflow;	/* damage not in jr_rec: the next needs a commit */

	/* State, protected by lock (taken from bio completion too). */
	spinlock_t lock;
	struct cv_chunk *chunks;
	u64 nr_chunks;
	u64 nr_bitmaps;
	u64 nr_valid;		/* valid blocks, kept by cv_set/clear_range */
	unsigned long *spare[CV_SPARE_MAX];
	unsigned int nr_spare;
	struct list_head inflight;	/* writes mapped and not completed */
	u64 damage_seq;			/* live damage applied in memory: its stamp */
	u64 durable_seq;		/* ... and made durable */
	/*
	 * scramble: writes whose damage range is still to be overwritten.
	 * While any is, every write waits in the wal list behind them: a
	 * write landing in such a range before the scramble would be
	 * scrambled over, while the map says it is valid.
	 */
	unsigned int scrambles_pending;
	/*
	 * The write cache: writes acknowledged before their home write
	 * (struct cv_wc), from acknowledgement until that write completes.
	 * Reads and writes overlapping one wait in held_bios until it has.
	 */
	struct rb_root_cached wc_tree;	/* their blocks */
	unsigned int wc_nr;		/* writes, counting those being copied */
	u64 wc_blocks;			/* ... their blocks */
	u64 wc_pages;			/* pages of the copies */
	/*
	 * A lost copy fails the flushes that may cover its write: those
	 * mapped since it was taken into the cache and still being handled,
	 * and the next one. Flushes are numbered as they are mapped,
	 * flush_seq the last number given; a copy keeps the flush_seq it was
	 * taken at (flush_gen). wc_fail[]: ranges of flush numbers owed an
	 * error, ascending and apart (dm-caveat-wc.c).
	 */
	u64 flush_seq;
	struct {
		u64 lo, hi;
	} wc_fail[CV_WC_FAIL_MAX];
	unsigned int wc_nr_fail;
	struct bio_list held_bios;
	/*
	 * Writes whose damage range the worker maps in steps (more than
	 * CV_SCAN_CHUNKS chunks), parked or being mapped: while there is
	 * one, map() parks every read and write in held_bios behind it.
	 */
	unsigned int big_writes;
	struct cv_stats stats;
	/*
	 * Writes map() sent on without the lock (cv_write_plain()), per
	 * CPU; stats.writes counts the rest. plain_base: their sum at the
	 * last clear_stats (lock).
	 */
	struct smr_io_count __percpu *plain;
	struct smr_io_count plain_base;

	/* Deferred work. */
	struct bio_list wal_bios;	/* writes waiting for their damage to be durable */
	struct bio_list commit_bios;	/* completed FUA writes */
	struct bio_list nomem_bios;	/* writes map() found no pages for */
	struct delayed_work nomem_dwork; /* ... and the worker neither: retry */
	struct bio_list flush_bios;	/* empty flushes */
	struct workqueue_struct *wq;
	struct work_struct work;
	struct bio_set bs;
	struct bio_set wc_bs;		/* the write cache's copies */
	atomic_t wc_issued;		/* copies submitted, not completed (wake_up_var) */
	wait_queue_head_t wc_wait;	/* the cache empty (wc_nr 0) */
	struct page *scramble_page;
	/* The timing model (smr-timing.h); NULL when off. */
	struct smr_tm *tm;
	/* Media faults of this table (smr-faults.h). */
	struct smr_faults faults;
	/* The power switch (smr-power.h, dm-caveat-power.c). */
	struct smr_power power;

	struct cv_nl_dev nl;		/* dm-caveat-nl.c registry and events */
};

/*
 * cv_io.kind. CV_IO_WRITE_DIRECT: a write sent as dm's own clone, which
 * cv_end_io() completes (cv_submit_write()). CV_IO_WRITE_NOMAP: a write
 * whose completion changes nothing of the map, not on the inflight list
 * (cv_map_write(), DID 0).
 */
enum { CV_IO_NONE, CV_IO_WRITE, CV_IO_WRITE_DIRECT, CV_IO_WRITE_NOMAP,
       CV_IO_READ_ZERO };

#define CV_OPT_BLOCK_SIZE	1
#define CV_OPT_UNSHINGLED	2
#define CV_OPT_ODR		4
#define CV_OPT_SCRAMBLE		8
#define CV_OPT_FORMAT		16
#define CV_OPT_WRITE_CACHE	32	/* write_cache_kib */
#define CV_OPT_WRITE_CACHE_BLOCKS 64	/* write_cache, its old spelling */

/* Per bio data. */
struct cv_io {
	struct list_head list;
	u64 first, last;	/* blocks written; an empty flush: first is
				   its number (cv_target.flush_seq) */
	u64 d0, d1;		/* damage range; d0 > d1: none */
	u64 t0, t1;		/* not to be marked valid; t0 > t1: none */
	unsigned long *tmap;	/* a cached write's: those blocks exactly, by
				   bit from first (t0, t1 unused); else NULL */
	struct bvec_iter iter;	/* partially damaged read, zero mode */
	u8 kind;
	bool fua;
	bool live;		/* damaged valid blocks (scramble them) */
	blk_status_t status;
	struct smr_tm_bio tm;	/* with the timing model: its modelled end */
};

/*
 * A write in the write cache: its own copy of the data, a bio to its
 * home on the backing device, and the write's state as map() made it.
 */
struct cv_wc {
	struct interval_tree_node node;	/* blocks io.first..io.last */
	struct cv_target *sc;
	u64 flush_gen;			/* flush_seq when it was acknowledged */
	/*
	 * Its blocks damaged by later writes, exactly: a cached write is
	 * in flight long enough to be damaged in several places, and one
	 * range around them all (a host write's t0, t1) would keep blocks
	 * between them from becoming valid.
	 */
	DECLARE_BITMAP(tmap, CV_WC_MAX_BLOCKS);
	struct cv_io io;		/* on the inflight list, as a host write's */
	struct bio bio;			/* last: wc_bs's front pad is the rest */
};

/* End a bio: at its modelled end (io->tm.end) with the timing model. */
static inline void cv_end_bio(struct cv_target *sc, struct bio *bio)
{
	struct cv_io *io = dm_per_bio_data(bio, sizeof(struct cv_io));

	smr_tm_bio_done(sc->tm, &io->tm, bio);
}

/*
 * The timing model: metadata (journal, commits) is a 4 KiB write at the
 * device's sector 0.
 */
static inline u64 cv_tm_md(struct cv_target *sc)
{
	return sc->tm ? smr_tm_charge(sc->tm, smr_tm_pos(sc->tm, 0), 8, NULL) : 0;
}

static inline const char *cv_name(struct cv_target *sc)
{
	return dm_device_name(dm_table_get_md(sc->ti->table));
}

/* Pages holding blocks @a..@b change: the next commit writes them. */
static inline void cv_md_dirty(struct cv_target *sc, u64 a, u64 b)
{
	u64 p0 = div_u64(a, CV_MD_BITS), p1 = div_u64(b, CV_MD_BITS);

	bitmap_set(sc->md.dirty, p0, p1 - p0 + 1);
}

/*
 * A bio of the wal list that is a write cache copy (struct cv_wc), not a
 * host write.
 */
static inline bool cv_is_wc(struct cv_target *sc, struct bio *bio)
{
	return bio->bi_pool == &sc->wc_bs;
}

/*
 * Does any copy of the write cache not yet home hold blocks
 * @first..@last? Lock held. Every read and write asks, and without the
 * cache the answer is one load.
 */
static inline bool cv_wc_overlaps(struct cv_target *sc, u64 first, u64 last)
{
	return !RB_EMPTY_ROOT(&sc->wc_tree.rb_root) &&
		interval_tree_iter_first(&sc->wc_tree, first, last);
}

/* Functions defined in dm-caveat-damage.c */
u64 cv_chunk_nbits(struct cv_target *sc, u64 c);
u64 cv_chunk_valid(struct cv_target *sc, u64 c, u64 lo, u64 hi);
u64 cv_chunk_loaded(struct cv_target *sc, u64 c);
bool cv_block_valid(struct cv_target *sc, u64 b);
u64 cv_run_end(struct cv_target *sc, u64 pos, u64 end, bool *valid);
u64 cv_count_valid(struct cv_target *sc, u64 a, u64 b, u64 *lo, u64 *hi);
bool __cv_all_valid(struct cv_target *sc, u64 a, u64 b);
void cv_set_range(struct cv_target *sc, u64 a, u64 b);
void cv_clear_range(struct cv_target *sc, u64 a, u64 b);
unsigned int cv_edge_need(struct cv_target *sc, u64 a, u64 b, bool set);
void cv_prepare_set(struct cv_target *sc, u64 a, u64 b);
void cv_unpin(struct cv_target *sc, u64 a, u64 b);
void cv_free_chunks(struct cv_target *sc);
bool cv_damage_range(struct cv_target *sc, u64 first, u64 last,
		     u64 *d0, u64 *d1);
void cv_check_inflight(struct cv_target *sc, struct cv_io *io);
void __cv_write_done(struct cv_target *sc, struct cv_io *io, blk_status_t sts);
void cv_write_done(struct cv_target *sc, struct cv_io *io, blk_status_t sts);

/*
 * Do blocks @a..@b lie in one chunk that is all valid? Lock held, or a
 * look without it (cv_map_read()): once the table is live a chunk's bits
 * change only under the lock, with WRITE_ONCE() (the load at preresume,
 * cv_load_page(), comes before any I/O reaches the target).
 */
static inline bool cv_in_full_chunk(struct cv_target *sc, u64 a, u64 b)
{
	u64 c = a >> CV_CHUNK_SHIFT;

	return c == b >> CV_CHUNK_SHIFT &&
		READ_ONCE(sc->chunks[c].bits) == CV_FULL;
}

/*
 * Lock held: are blocks @a..@b all valid? A read of a written device
 * mostly lies in one full chunk, and every read asks: that answer
 * without a call.
 */
static inline bool cv_all_valid(struct cv_target *sc, u64 a, u64 b)
{
	return cv_in_full_chunk(sc, a, b) || __cv_all_valid(sc, a, b);
}

/* Functions defined in dm-caveat-md.c */
u64 cv_md_pages(u64 nr_blocks);
int cv_md_init(struct cv_target *sc);
void cv_md_exit(struct cv_target *sc);
int __cv_commit(struct cv_target *sc);
/* Defined in dm-caveat-power.c. */
void cv_power_setup(struct cv_target *sc);
int cv_commit(struct cv_target *sc);
int cv_load_bitmap(struct cv_target *sc);
int cv_md_load_or_format(struct cv_target *sc);

/* Functions defined in dm-caveat-journal.c */
void cv_jr_add(struct cv_target *sc, u64 d0, u64 d1);
void cv_jr_committed(struct cv_target *sc, u64 seq);
int cv_jr_write(struct cv_target *sc);
int cv_jr_replay(struct cv_target *sc);

/* Functions defined in dm-caveat-io.c */
int cv_map(struct dm_target *ti, struct bio *bio);
int cv_map_bio(struct dm_target *ti, struct bio *bio);
int cv_end_io(struct dm_target *ti, struct bio *bio, blk_status_t *error);
void cv_work(struct work_struct *work);
void cv_nomem_work(struct work_struct *work);

/* Functions defined in dm-caveat-wc.c */
u64 cv_wc_live(struct cv_target *sc, u64 d0, u64 d1, u64 have, u64 *lo,
	       u64 *hi);
bool cv_wc_reserve(struct cv_target *sc, struct bio *bio, struct cv_io *io);
void cv_wc_unreserve(struct cv_target *sc, struct cv_io *io);
bool cv_wc_take(struct cv_target *sc, struct bio *bio, struct cv_io *io);
void cv_wc_done(struct cv_target *sc, struct cv_wc *wc, blk_status_t sts);
void cv_wc_drain(struct cv_target *sc);
bool cv_wc_flush_fails(struct cv_target *sc, u64 flush);
void cv_wc_settle(struct cv_target *sc);

/* Functions defined in dm-caveat-status.c */
void cv_status(struct dm_target *ti, status_type_t type,
	       unsigned int status_flags, char *result, unsigned int maxlen);
int cv_message(struct dm_target *ti, unsigned int argc, char **argv,
	       char *result, unsigned int maxlen);

#endif /* DM_CAVEAT_H */
