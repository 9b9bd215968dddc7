/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dm-smr: emulated shingled (SMR) disks as a device-mapper target.
 *
 * Shared types and prototypes. The target is split by job, as dm-zoned is:
 *   dm-smr-target.c    the target type: the mode, what both tables have,
 *                      each dm callback handed to the mode's table
 *   dm-smr-tables.c    the targets alive, by table and backing device
 *   dm-smr-metadata.c  the superblock; a mode's metadata blocks, loaded,
 *                      formatted and committed through common/smr-slots.c
 *   dm-smr-hm-target.c host-managed: the table, its line and messages
 *   dm-smr-hm.c        host-managed: the I/O path (write pointers, ordering)
 *   dm-smr-hm-zone.c   host-managed: the zone state machine and resources
 *   dm-smr-hm-md.c     host-managed: its metadata records (zone table)
 *   dm-smr-zdev.c      the zoned block device host-managed mode runs on,
 *                      and its engine
 *   dm-smr-dm.c        drive-managed mode: the table and the write path
 *   dm-smr-dm-read.c   drive-managed: reads the model or the write cache
 *                      sees, and delayed ones (the plain read is inline in
 *                      dm-smr-dm.h)
 *   dm-smr-dm-cache.c  drive-managed: the persistent cache and its index
 *   dm-smr-dm-bands.c  drive-managed: the bands holding cache slots, in
 *                      the orders the cleaning policies pick by
 *   dm-smr-dm-clean.c  drive-managed: the cleaner and its policies
 *   dm-smr-dm-rewrite.c drive-managed: band rewrite, crash recovery
 *   dm-smr-dm-md.c     drive-managed: its metadata records
 *   dm-smr-dm-status.c drive-managed: status, counters, messages
 *   dm-smr-dm.h        drive-managed: private types, shared prototypes
 *   dm-smr-power.c     what a power cut does to each mode's drive
 *   dm-smr-wcache.c    a volatile write cache of data (dm-smr-wcache.h)
 *   dm-smr-wc.c        where each mode's I/O goes through that cache
 *   dm-smr-nl.c        generic netlink events and dumps
 *   dm-smr-test.c      test hooks in debugfs (dm-smr-test.h)
 * Under it, the library module smr-common (common/, shared with
 * dm-caveat): metadata slots, arguments, netlink events, the timing
 * model, the claim, the power switch, media faults.
 *
 * On-disk formats: common/smr-ondisk.h. Kernel differences: compat/.
 */
#ifndef DM_SMR_H
#define DM_SMR_H

#include <linux/types.h>
#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/device-mapper.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/seqlock.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>

#include "smr-count.h"
#include "smr-compat.h"
#include "smr-ondisk.h"
#include "smr-slots.h"
#include "smr-args.h"
#include "smr-genl.h"
#include "smr-timing.h"
#include "smr-claim.h"
#include "smr-faults.h"
#include "smr-power.h"
#include "dm-smr-wcache.h"

#define DM_MSG_PREFIX "smr"

/* The emulated device always uses 4 KiB logical blocks, like a 4Kn drive. */
#define SMR_BLOCK_SIZE		4096
#define SMR_BLOCK_SECTORS	(SMR_BLOCK_SIZE >> SECTOR_SHIFT)
#define SMR_BLOCK_SHIFT		12

/* Zone offsets are kept as 32-bit sector counts: zones up to 1 TiB. */
#define SMR_MAX_ZONE_SECTORS	(1ULL << 31)

enum smr_mode {
	SMR_MODE_HOST_MANAGED = 1,
	SMR_MODE_DRIVE_MANAGED = 2,
};

/* The on-disk format (superblock, zone table) is in smr-ondisk.h. */

/*
 * In-memory zone: 32 bytes. wp is advanced when a write is submitted;
 * dend follows completions and is what reads and commits trust. Writes in
 * flight in a zone are queued on @fifo in write pointer order: they
 * complete to the host in that order, so every acknowledged write is part
 * of the zone's durable prefix (dend), however the backing device orders
 * its completions. @gen counts resets: a write submitted before a reset
 * changes nothing when it completes after it.
 */
struct smr_zone {
	u32 wp;
	u32 dend;
	u8 cond;		/* enum blk_zone_cond */
	u8 finished;		/* FULL through a finish, not by data */
	u8 in_imp_ring;		/* listed in smr_zoned.imp_ring */
	u8 pad;
	u32 gen;
	struct list_head fifo;	/* struct smr_hm_io, in flight */
};

/*
 * The most zones a host-managed device may have. The zone array here is
 * one kvcalloc() (at most INT_MAX bytes, 67 million zones), but the block
 * layer's zone revalidation, for the zoned device and for the dm device
 * over it, allocates per-zone state with kmalloc: a bitmap of the
 * conventional zones on 6.12, and in newer kernels (7.3 has
 * gendisk.zones_cond) a byte per zone. kmalloc warns past KMALLOC_MAX_SIZE (4 MiB on
 * x86-64), so stay at 2^22 zones: 16 TiB in 4 MiB zones, 1 PiB in the
 * 256 MiB zones real drives use.
 */
#define SMR_MAX_ZONES	(1U << 22)

/*
 * Three roles, a type each (docs/dm-smr.rst, "Design"):
 *
 *   struct smr_dm_target  a drive-managed table: the table, and the drive
 *                         it emulates, which lives and goes with it;
 *   struct smr_hm_target  a host-managed table: the table line, and the
 *                         zoned device it maps to;
 *   struct smr_zoned      that zoned device's engine (dm-smr-zdev.c): the
 *                         zone state, which outlives a table reload.
 *
 * What two of them share is embedded: struct smr_table in both tables
 * (ti->private points at it), struct smr_drive in the drive-managed table
 * and the engine (what holds data: the backing device, the metadata
 * store, the timing model, the write cache, the power switch).
 */
struct smr_dm;
struct smr_zdev;

/*
 * An emulated drive, either mode: where its data and metadata live and
 * what holds or times them on the way. Its lock guards its counters, the
 * mode's state (zones, or the cache index) and what that says.
 */
struct smr_drive {
	struct block_device *bdev;	/* the backing device */
	enum smr_mode mode;
	char name[32];			/* for log messages */
	/*
	 * For trace events: the dm name (drive-managed), or smrhm<N> (a
	 * host-managed engine, which outlives the tables over it).
	 */
	char label[32];
	sector_t dev_sectors;		/* emulated capacity */
	char *error;			/* why loading failed */
	/* The timing model (smr-timing.h), NULL when off. */
	struct smr_tm *tm;
	/* The volatile write cache (dm-smr-wcache.h), NULL when off. */
	struct smr_wc *wc;
	/* The drive's power switch (smr-power.h). */
	struct smr_power power;

	/* Metadata (dm-smr-metadata.c), in the blocks md_mode describes. */
	struct smr_slots md;
	const struct smr_md_mode *md_mode;
	sector_t data_start;
	/*
	 * The geometry the superblock records, set by the mode: its zones,
	 * or its bands (as many zones, none conventional) and the cache.
	 */
	struct smr_sb_geo {
		u64 zone_sectors;
		u64 zone_capacity;
		u32 nr_zones;
		u32 nr_conv;
		u64 cache_sectors;
	} sb_geo;

	spinlock_t lock;
	u64 errors;		/* every I/O failed, under lock */
	u64 commits;		/* metadata commits, under lock */
	/* The mode's worker: commits, and what waits for one. */
	struct workqueue_struct *wq;
	struct work_struct commit_work;
	struct bio_set bs;
	size_t mem_bytes;		/* in-memory state, shown in status */
};

/* What either mode's table has. */
struct smr_table {
	struct dm_target *ti;
	struct dm_dev *dev;		/* the backing device */
	enum smr_mode mode;
	char name[32];			/* the dm device, for log messages */
	struct list_head table_node;	/* smr_tables; see smr_join_table() */
	/*
	 * Under smr_tables_lock, for a drive-managed table's successor
	 * (smr_commit_predecessor()):
	 */
	unsigned int table_pins;	/* a successor works on this table */
	bool table_settled;		/* lost, nothing of it in flight */
	struct smr_claim claim;		/* of the backing device (smr-claim.h) */
	/* Media faults of this table (smr-faults.h). */
	struct smr_faults faults;
	u32 wc_kib;			/* write_cache_kib; 0: off */
	bool format;			/* the table line said "format" */
};

/* A drive-managed table: the table and its drive (dm-smr-dm.c). */
struct smr_dm_target {
	struct smr_table t;
	struct smr_drive d;
	bool commit_pending;	/* the commit at suspend failed */
	struct smr_dm *dm;	/* the cache, the bands, the cleaner */
};

/*
 * A host-managed drive's zones, as the table line gives them and the
 * engine runs with them.
 */
struct smr_hm_geo {
	u64 zone_sectors;
	u64 zone_capacity;
	u32 nr_zones;
	u32 nr_conv;
	u32 max_open;		/* as given; 0 = no limit */
	u32 max_active;
	u32 eff_max_open;	/* after clamping */
	u32 eff_max_active;
	unsigned int zone_shift;
};

/* A host-managed table: its line, and the engine it maps to. */
struct smr_hm_target {
	struct smr_table t;
	struct smr_hm_geo geo;
	/* As the table line gave them, to print it back. */
	struct smr_tm_params tm_params;	/* the timing model; unset: off */
	unsigned int opt_mask;		/* which optional args were given */
	struct smr_zdev *zdev;		/* dm-smr-zdev.c */
	struct smr_zoned *zc;		/* its engine, for map() and end_io() */
	struct dm_dev *zdev_dev;	/* its disk, opened by the table */
};

/*
 * The host-managed engine's counters, shown by "dmsetup status"; the
 * reads are in smr_zoned.rd.
 */
struct smr_hm_stats {
	u64 writes;
	u64 write_sectors;
	u64 resets;
	u64 finishes;
	u64 opens;
	u64 closes;
	u64 imp_closes;		/* implicit opens that closed another zone */
	u64 wp_errors;		/* writes not at the write pointer */
};

/*
 * The host-managed engine (one per backing device, dm-smr-zdev.c): the
 * zone state machine over its drive. Zone state is under d.lock (taken
 * from bio completion too).
 */
struct smr_zoned {
	struct smr_drive d;
	struct smr_hm_geo geo;
	/* What it was made with: a reloaded table must give the same. */
	struct smr_tm_params tm_params;
	u32 wc_kib;

	struct smr_zone *zones;
	u32 nr_imp_open;
	u32 nr_exp_open;
	u32 nr_closed;
	/*
	 * With an open limit: the zones that became implicitly open, oldest
	 * first, each at most once (in_imp_ring); zones that left that
	 * state since are skipped when popped. A ring of nr_zones entries,
	 * so closing one to make room is O(1) amortized, not a scan.
	 */
	u32 *imp_ring;
	u32 imp_head;
	u32 imp_count;
	struct smr_hm_stats stats;
	struct smr_io_count __percpu *rd;	/* reads, ios and sectors */
	struct smr_io_count rd_base;	/* their sum at clear_stats, under d.lock */
	/*
	 * Bumped around a change of a zone to or from OFFLINE, under
	 * d.lock: the lock-free read (smr_hm_read_remap()) gives up when
	 * one overlapped it.
	 */
	seqcount_spinlock_t cond_seq;

	/* Deferred completions, handled by the commit worker. */
	struct bio_list flush_bios;	/* empty flushes */
	struct bio_list commit_bios;	/* FUA writes, resets, finishes */
	struct bio_list preflush_bios;	/* conventional writes with a preflush */
	struct bio_list preflush_clones; /* sequential ones, placed, to issue */
	struct bio_list reset_all_bios;
	struct bio_list reset_wait;	/* resets waiting for stale writes */
	u32 stale_inflight;		/* writes submitted before a reset */
	atomic_t inflight;		/* host bios not yet ended (wake_up_var) */
};

static inline struct smr_dm_target *smr_dmt(struct smr_table *t)
{
	return container_of(t, struct smr_dm_target, t);
}

static inline struct smr_hm_target *smr_hmt(struct smr_table *t)
{
	return container_of(t, struct smr_hm_target, t);
}

/* The owner of drive @d (what a callback given the drive works on). */
static inline struct smr_dm_target *smr_dmt_of(struct smr_drive *d)
{
	return container_of(d, struct smr_dm_target, d);
}

static inline struct smr_zoned *smr_zoned_of(struct smr_drive *d)
{
	return container_of(d, struct smr_zoned, d);
}

/* A consistent copy of the host-managed status fields (for netlink). */
struct smr_hm_snap {
	u32 nr_zones, conv_zones, imp_open, exp_open, closed, full, readonly,
	    offline;
	u64 writes, write_sectors, reads, read_sectors, resets, finishes,
	    opens, closes, imp_closes, wp_errors, errors, commits, mem_bytes;
	/* The timing model's figures (0 without it), in ms. */
	u64 model_busy_ms, model_lag_ms;
	/* The table's media fault counters (the netlink dump only). */
	struct smr_fault_counts faults;
	/* The engine's power switch (smr-power.h). */
	u8 power;
	u64 power_left;
};

/* The drive-managed status fields; see the comment above smr_dm_status(). */
enum smr_dm_state {
	SMR_DM_IDLE = 0,
	SMR_DM_CLEAN_BG = 1,
	SMR_DM_CLEAN_FG = 2,
	SMR_DM_CLEAN_MANUAL = 3,
};

enum smr_dm_policy {
	SMR_POLICY_FIFO = 0,
	SMR_POLICY_GREEDY = 1,
	SMR_POLICY_COST_BENEFIT = 2,
};

struct smr_dm_snap {
	u64 nr_bands, band_sectors, cache_used, cache_total, cache_live,
	    index_extents, index_bytes, dirty_bands, rmw_bg, rmw_fg,
	    rmw_manual, bg_aborts, clean_read_sectors, clean_write_sectors,
	    clean_ms_bg, clean_ms_fg, clean_ms_since_busy, host_read_sectors,
	    host_write_sectors, cache_write_sectors, bypass_write_sectors,
	    wa_milli;
	u8 state;		/* enum smr_dm_state */
	u8 policy;		/* enum smr_dm_policy */
	u64 commits, errors, mem_bytes;
	/* The timing model's figures (0 without it), in ms. */
	u64 model_busy_ms, model_clean_ms, model_lag_ms;
	struct smr_fault_counts faults;
	u64 clean_timeouts;
	u8 power;		/* enum smr_power_state */
	u64 power_left;
};

/*
 * A host bio in flight to the backing device, in front of the clone that
 * carries it (bioset front_pad).
 */
struct smr_hm_io {
	struct smr_zoned *zc;
	struct bio *orig;
	struct list_head node;	/* zone fifo, then a completion list */
	u32 zone;
	u32 start;		/* sectors from the zone start */
	u32 end;
	u32 gen;
	u32 zero_from;		/* reads: zero the bio from here (bytes) */
	u8 kind;		/* enum smr_hm_io_kind */
	bool done;
	bool fua;
	bool orphan;		/* behind a write that failed: fails too */
	blk_status_t status;
	/* With the timing model: its modelled end, and the timer to it. */
	struct smr_tm_bio tb;
	struct smr_wc_wait wcw;	/* held by the write cache */
	struct bio clone;	/* must be last */
};

enum smr_hm_io_kind {
	SMR_IO_READ,
	SMR_IO_CONV_WRITE,
	SMR_IO_SEQ_WRITE,
};

static inline u32 smr_zone_of(struct smr_zoned *zc, sector_t sector)
{
	return sector >> zc->geo.zone_shift;
}

static inline sector_t smr_zone_start(struct smr_zoned *zc, u32 zno)
{
	return (sector_t)zno << zc->geo.zone_shift;
}

static inline bool smr_zone_is_conv(struct smr_zoned *zc, u32 zno)
{
	return zno < zc->geo.nr_conv;
}

/* Backing sector of offset @off in zone @zno. */
static inline sector_t smr_backing_sector(struct smr_zoned *zc, u32 zno,
					  u32 off)
{
	sector_t s = zc->d.data_start;

	if (zno < zc->geo.nr_conv)
		return s + smr_zone_start(zc, zno) + off;
	return s + ((sector_t)zc->geo.nr_conv << zc->geo.zone_shift) +
		(sector_t)(zno - zc->geo.nr_conv) * zc->geo.zone_capacity + off;
}

static inline u32 smr_zone_cap(struct smr_zoned *zc, u32 zno)
{
	return smr_zone_is_conv(zc, zno) ? zc->geo.zone_sectors :
		zc->geo.zone_capacity;
}

/* Backing sectors the zones' data takes. */
static inline sector_t smr_hm_data_sectors(const struct smr_hm_geo *g)
{
	return ((sector_t)g->nr_conv << g->zone_shift) +
		(sector_t)(g->nr_zones - g->nr_conv) * g->zone_capacity;
}

/* Functions defined in dm-smr-tables.c */
int smr_join_table(struct smr_table *t);
void smr_leave_table(struct smr_table *t);
int smr_commit_predecessor(struct smr_dm_target *sc);

/*
 * What a mode persists, handed to the metadata layer: its blocks' records
 * (out and in, through the shared store) and the state of a new format.
 * A mode whose constructor may run while an older table of the same
 * device is still live loads at its first resume (load_at_resume).
 */
struct smr_md_mode {
	struct smr_slots_ops blocks;	/* owner: the struct smr_drive */
	void (*reset)(struct smr_drive *d);
	bool load_at_resume;
};

/* Functions defined in dm-smr-metadata.c */
int smr_md_init(struct smr_drive *d, const struct smr_md_mode *mode,
		u32 nr_blocks);
void smr_md_exit(struct smr_drive *d);
int smr_md_load_or_format(struct smr_drive *d, bool format);
int smr_md_load(struct smr_drive *d);
int smr_md_commit(struct smr_drive *d);

/* Defined in dm-smr-hm-md.c: what host-managed mode persists. */
extern const struct smr_md_mode smr_hm_md_mode;
u32 smr_hm_md_blocks(u32 nr_zones);
void smr_hm_zone_dirty(struct smr_zoned *zc, u32 zno);

/* Functions defined in dm-smr-hm.c */
void smr_hm_submit(struct smr_zoned *zc, struct bio *bio);
void smr_hm_power_fail(struct smr_zoned *zc, struct bio *bio);
int smr_hm_ctx_init(struct smr_zoned *zc);
void smr_hm_ctx_exit(struct smr_zoned *zc);

/*
 * A read the smr target may send to the backing device itself, as
 * dm-linear would: whole blocks of one zone, all of it durable data
 * (nothing to zero), with no timing model and no write cache (either
 * would have to see it), the power on. Counted as smr_hm_read() counts a
 * read. On true @bio is aimed at the backing device; on false it is
 * untouched and goes through smr_hm_submit().
 *
 * What it skips, per 4 KiB read: the engine's clone and a second pass
 * through the block layer (a bio time stamp, the split) for a bio that
 * needs neither (docs/benchmarks-log.md, 2026-11-28).
 *
 * It holds nothing of the engine once it returns, so it is not counted
 * in zc->inflight, and the settle after a power cut (smr_power_settle())
 * does not wait for it: a read that found the power on may still reach
 * the backing device after the cut. That is the one thing a cut drive
 * still sends, and it changes nothing there, so what the next engine
 * loads is the same; the read itself fails at the target's end_io().
 *
 * Inline in its one caller, smr_map() (dm-smr-target.c): the call, its
 * return and the registers saved around it were 11 of the 153
 * instructions a read cost over dm-linear (docs/benchmarks-log.md,
 * 2026-12-02 (5)).
 *
 * It takes no lock (about 30 instructions of a read's 19000, a sixth of
 * what the target adds over dm-linear: docs/benchmarks-log.md,
 * 2026-11-30). Why what it reads without the lock is enough:
 *
 * - The data. A sequential zone's durable end (dend) only grows while
 *   the zone is not reset or forced empty, and each store is a release
 *   made after the completion of the write it covers (smr_zone_retire()).
 *   The acquire load below pairs with it: a read that sees sector X below
 *   the end is sent after the backing device finished writing X, so it
 *   reads that data. A conventional zone is all readable, as under the
 *   lock: its writes are the host's to order.
 * - One moment. The locked path read the end, the condition and the
 *   power at one instant; these loads are a few instructions apart, and
 *   the read must be right for some instant between them. The end comes
 *   first; only smr_hm_set_cond() moves a zone to or from OFFLINE, and it
 *   does so inside cond_seq's write section, so when the sequence held
 *   still the zone was not OFFLINE at any point between the loads. A
 *   reset or a forced empty may lower the end meanwhile: the read then
 *   belongs to the instant of the end's load, before it (the backing
 *   keeps a reset zone's data until new writes, as it would for a read
 *   sent just before the lock was dropped). The power is read last: a
 *   cut is final, so on at the end means on throughout. (Final for this
 *   engine: smr_power_init() runs only when smr_hm_ctx_init() makes it,
 *   and smr_zdev_get() makes a new engine rather than take up one whose
 *   power was cut; ht->zc is fixed when the table is built.)
 * - The rest (the zone geometry, the model and the write cache) is fixed
 *   for the engine's life.
 * Whatever it cannot show this way goes through the locked path.
 */
static __always_inline bool smr_hm_read_remap(struct smr_zoned *zc,
					      struct bio *bio)
{
	sector_t sector = bio->bi_iter.bi_sector;
	u32 nr = bio_sectors(bio);
	struct smr_zone *z;
	u32 zno, off, limit;
	unsigned int seq;

	if (zc->d.tm || zc->d.wc || bio_op(bio) != REQ_OP_READ || !nr ||
	    (sector | nr) & (SMR_BLOCK_SECTORS - 1))
		return false;
	zno = smr_zone_of(zc, sector);
	off = sector - smr_zone_start(zc, zno);
	if (zno >= zc->geo.nr_zones)
		return false;
	z = &zc->zones[zno];

	/*
	 * Odd: a change of condition is under way; give it to the locked
	 * path. (On PREEMPT_RT raw_read_seqcount() waits out the writer
	 * instead, through the lock: right too.)
	 */
	seq = raw_read_seqcount(&zc->cond_seq);
	if (seq & 1)
		return false;
	/*
	 * Within the zone too: a durable end is never past the zone's
	 * capacity (a write ends at most there; a loaded one is checked).
	 */
	limit = smr_zone_is_conv(zc, zno) ? zc->geo.zone_sectors :
		smp_load_acquire(&z->dend);
	if (off + nr > limit || READ_ONCE(z->cond) == BLK_ZONE_COND_OFFLINE ||
	    read_seqcount_retry(&zc->cond_seq, seq) ||
	    !smr_power_is_on(&zc->d.power))
		return false;
	/* The sector before the call: nothing is kept across it. */
	bio->bi_iter.bi_sector = smr_backing_sector(zc, zno, off);
	smr_count_add(zc->rd, nr);
	bio_set_dev(bio, zc->d.bdev);
	return true;
}

/* Functions defined in dm-smr-wc.c: the write cache in each mode. */
/*
 * The write cache's two table options, in this order, at the end of a
 * mode's option table (smr_wc_parse_opt() takes their bits and values):
 * write_cache_kib, and write_cache in MiB, its old spelling.
 */
#define SMR_WC_OPT_KIB							\
	{ .name = "write_cache_kib", .min = SMR_WC_MIN_KIB,		\
	  .max = SMR_WC_MAX_KIB,					\
	  .bad = "write_cache_kib must be a size in KiB from 1024 to 1048576" }
#define SMR_WC_OPT_MIB							\
	{ .name = "write_cache", .min = 1, .max = SMR_WC_MAX_KIB >> 10,	\
	  .bad = "write_cache (write_cache_kib's old spelling) must be a size in MiB from 1 to 1024" }
int smr_wc_parse_opt(struct smr_table *t, unsigned long *given,
		     unsigned long kib_bit, unsigned long mib_bit, u64 kib,
		     u64 mib, char **error);
int smr_wc_setup(struct smr_drive *d, u32 kib, char **error);
void smr_wc_teardown(struct smr_drive *d);
int smr_md_data_home(void *owner);
bool smr_drive_lost(struct smr_drive *d);
void smr_hm_send(struct smr_hm_io *io);
int smr_wc_message(struct smr_drive *d, unsigned int argc, char **argv,
		   char *result, unsigned int maxlen);

/* Functions defined in dm-smr-power.c */
void smr_hm_power_setup(struct smr_zoned *zc);
void smr_dm_power_setup(struct smr_dm_target *sc);

/* Functions defined in dm-smr-hm-zone.c (zc->d.lock held unless noted) */
const char *smr_cond_name(u8 cond);
void smr_hm_recount(struct smr_zoned *zc);
void smr_cond_enter(struct smr_zoned *zc, struct smr_zone *z, u8 cond);
blk_status_t smr_check_resources(struct smr_zoned *zc, struct smr_zone *z);
bool smr_active_at_limit(struct smr_zoned *zc);
blk_status_t smr_zone_usable(struct smr_zone *z);
blk_status_t smr_zone_open(struct smr_zoned *zc, struct smr_zone *z);
blk_status_t smr_zone_close(struct smr_zoned *zc, struct smr_zone *z);
blk_status_t smr_zone_finish(struct smr_zoned *zc, u32 zno);
blk_status_t smr_zone_reset(struct smr_zoned *zc, u32 zno);
void smr_zone_orphan(struct smr_zoned *zc, struct smr_zone *z, bool orphan);
bool smr_zone_has_stale(struct smr_zone *z);
/* Take zc->d.lock. */
void smr_hm_reset_all(struct smr_zoned *zc);
int smr_hm_set_cond(struct smr_zoned *zc, u32 zno, const char *cond);
void smr_hm_fill_zone(struct smr_zoned *zc, u32 zno, struct blk_zone *blkz);
void smr_hm_snapshot(struct smr_zoned *zc, struct smr_hm_snap *s);

/* Functions defined in dm-smr-zdev.c */
struct smr_zdev *smr_zdev_get(struct smr_hm_target *ht, char **error);
void smr_zdev_put(struct smr_zdev *zdev);
struct smr_zoned *smr_zdev_ctx(struct smr_zdev *zdev);
dev_t smr_zdev_devt(struct smr_zdev *zdev);
int smr_zdev_map(struct smr_zdev *zdev, struct bio *bio);
void smr_zdev_wait_freed(void);

/* The drive a table's I/O reaches: its own, or the engine's. */
static inline struct smr_drive *smr_drive_of(struct smr_table *t)
{
	if (t->mode == SMR_MODE_DRIVE_MANAGED)
		return &smr_dmt(t)->d;
	return &smr_zdev_ctx(smr_hmt(t)->zdev)->d;
}

/* Functions defined in dm-smr-hm-target.c: a host-managed table. */
int smr_hm_ctr(struct smr_hm_target *ht, struct dm_arg_set *as);
void smr_hm_free(struct smr_hm_target *ht);
void smr_hm_status(struct smr_hm_target *ht, status_type_t type,
		   char *result, unsigned int maxlen);
int smr_hm_message(struct smr_hm_target *ht, unsigned int argc, char **argv,
		   char *result, unsigned int maxlen);
void smr_hm_counters(struct smr_table *t, struct smr_hm_snap *s);

/* Functions defined in dm-smr-dm.c */
int smr_dm_ctr(struct smr_dm_target *sc, struct dm_arg_set *as);
void smr_dm_free(struct smr_dm_target *sc);
int smr_dm_map_host(struct smr_dm_target *sc, struct bio *bio);
int smr_dm_map(struct smr_dm_target *sc, struct bio *bio);
void smr_dm_read_delayed(struct dm_target *ti, struct bio *bio);
int smr_dm_end_io(struct smr_dm_target *sc, struct bio *bio,
		  blk_status_t *error);
int smr_dm_preresume(struct smr_dm_target *sc);
void smr_dm_postsuspend(struct smr_dm_target *sc);
void smr_dm_resume(struct smr_dm_target *sc);
void smr_dm_status(struct smr_dm_target *sc, status_type_t type, char *result,
		   unsigned int maxlen);
int smr_dm_message(struct smr_dm_target *sc, unsigned int argc, char **argv,
		   char *result, unsigned int maxlen);
void smr_dm_io_hints(struct smr_dm_target *sc, struct queue_limits *limits);
void smr_dm_snapshot(struct smr_table *t, struct smr_dm_snap *s);
/* Defined in dm-smr-dm-md.c: what drive-managed mode persists. */
extern const struct smr_md_mode smr_dm_md_mode;

#endif /* DM_SMR_H */
