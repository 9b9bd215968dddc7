// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: an ordinary disk outside; bands, a persistent
 * cache and band read-modify-write cleaning inside.
 *
 * This file is the target: the table line (parsing, geometry,
 * construction), map and end-io, the worker that handles writes, flushes
 * and cache write completions, suspend and resume. Status and messages
 * are dm-smr-dm-status.c.
 * dm-smr-dm.h lists the files that do the rest.
 *
 * Why this file is long: the per-bio dispatch is inlined into both of
 * map()'s entries (smr_dm_map_io(): a read costs one call less), which
 * must then share a file with them and with the write path they call.
 * Suspend and resume (about 90 lines) call nothing static here and are
 * the part to move out next.
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
 *   clean_timeout_ms <n>  a write waiting for cache space (foreground
 *                         cleaning) this long fails (default 0: never)
 *   format                initialise the backing device (destroys data)
 *
 * Backing device layout: superblock and metadata table, the cache (a log
 * of 4 KiB slots), one spare band, then the bands.
 *
 * Concurrency: one ordered worker (sc->d.wq) handles writes, flushes and the
 * completion of cache writes that could not be indexed at once (no
 * memory); a cache write is otherwise indexed where it completes, under
 * sc->d.lock (dm-smr-dm-cache.c). The cleaner (clean_wq) removes a band's index only while no write to
 * that band is in flight or admitted. Reads are aimed in map() by
 * dm-smr-dm.h's inline smr_dm_read(); dm-smr-dm-read.c sends the ones
 * the timing model or the write cache sees, and the delayed ones.
 */
#include <linux/jiffies.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dm-smr-dm.h"
#include "dm-smr-trace.h"

/* ------------------------------------------------------------------ */
/* The I/O path.                                                       */
/* ------------------------------------------------------------------ */

static int smr_dm_write(struct smr_dm_target *sc, struct bio *bio, bool in_map);

/*
 * A host bio past the media faults, @io its per-bio data, its kind reset
 * (the rest here: smr_dm_io_reset()). Inline in both callers: a read
 * then costs no call.
 */
static __always_inline int smr_dm_map_io(struct smr_dm_target *sc,
					 struct bio *bio, struct smr_dm_io *io)
{
	struct smr_dm *dm = sc->dm;

	smr_dm_touch(dm);
	if (bio_op(bio) == REQ_OP_READ)
		return smr_dm_read(sc, bio, io);
	smr_dm_io_reset(io);

	switch (bio_op(bio)) {
	case REQ_OP_WRITE:
		if (bio_sectors(bio))
			return smr_dm_write(sc, bio, true);
		fallthrough;	/* an empty flush: the worker commits */
	case REQ_OP_DISCARD:
		spin_lock_irq(&sc->d.lock);
		bio_list_add(&dm->queue, bio);
		spin_unlock_irq(&sc->d.lock);
		queue_work(sc->d.wq, &sc->d.commit_work);
		return DM_MAPIO_SUBMITTED;
	default:
		return DM_MAPIO_KILL;
	}
}

/*
 * No host read or write crosses a boundary of SMR_DM_IO_SECTORS in the
 * target's sectors (and so no band's end: bands are multiples of it):
 * the rest goes back to dm, which maps it as a bio of its own. In map()
 * only, before a fault can hold the bio (dm_accept_partial_bio() writes
 * into dm's stack frame). Not max_io_len: with one set, dm also cuts
 * every bio at the mapped queue's max_sectors (max_io_len() in
 * drivers/md/dm.c, the same on 6.1, 6.12 and 7.3), so a 1 MiB write over
 * a null_blk of 124 KiB requests became nine clones, each mapped and
 * ended by the target, where dm-linear sends one and the backing queue
 * splits it for less: 2 % of a sequential 1 MiB write or read in exact
 * figures (docs/benchmarks-log.md, 2026-12-01). Empty flushes carry no
 * data; discards end in the worker and may cross bands.
 */
static __always_inline void smr_dm_split(struct smr_dm_target *sc,
					 struct bio *bio)
{
	sector_t off = dm_target_offset(sc->t.ti, bio->bi_iter.bi_sector);
	unsigned int left = SMR_DM_IO_SECTORS -
			    ((unsigned int)off & (SMR_DM_IO_SECTORS - 1));

	if (unlikely(bio_sectors(bio) > left) &&
	    (bio_op(bio) == REQ_OP_READ || bio_op(bio) == REQ_OP_WRITE))
		dm_accept_partial_bio(bio, left);
}

/*
 * The target's map() in this mode: the drive's power, the media faults,
 * then the bio. Here rather than in smr_map(), so that the per-bio data
 * is found once (dm_per_bio_data() is a call) and a read is aimed here,
 * with no call of ours past this one (smr_dm_read(), inline).
 */
int smr_dm_map_host(struct smr_dm_target *sc, struct bio *bio)
{
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	int r;

	/* smr_dm_end_io() looks at it for a bio a fault ended too. */
	io->kind = SMR_IO_NONE;
	smr_dm_split(sc, bio);
	/* A command the drive takes; the engine counts host-managed ones. */
	if (unlikely(smr_power_io(&sc->d.power, bio->bi_opf,
				  bio->bi_iter.bi_size))) {
		spin_lock_irq(&sc->d.lock);
		sc->d.errors++;
		spin_unlock_irq(&sc->d.lock);
		return DM_MAPIO_KILL;
	}
	r = smr_faults_map(&sc->t.faults, bio);
	if (likely(r == SMR_FAULT_PASS))
		return smr_dm_map_io(sc, bio, io);
	if (r == SMR_FAULT_HOLD)	/* a delayed read */
		return smr_dm_read_hold(sc, bio, io);
	return r;
}

/* map() for a bio a delay fault held, from the fault worker. */
int smr_dm_map(struct smr_dm_target *sc, struct bio *bio)
{
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));

	io->kind = SMR_IO_NONE;
	return smr_dm_map_io(sc, bio, io);
}

/* A write about to wait, and one done waiting: for the tracepoint only. */
static void smr_dm_wait_begin(struct smr_dm_io *io, u8 why)
{
	if (trace_smr_dm_write_waited_enabled() && !io->wait_since_ns) {
		io->wait_since_ns = ktime_get_ns();
		io->wait_why = why;
	}
}

static void smr_dm_wait_end(struct smr_dm_target *sc, struct smr_dm_io *io,
			    sector_t sector, u32 nsect, int err)
{
	if (io->wait_since_ns)
		trace_smr_dm_write_waited(sc->d.label, sector, nsect, io->wait_why,
					  ktime_get_ns() - io->wait_since_ns,
					  err);
}

static int smr_dm_fail(struct bio *bio, bool in_map)
{
	if (in_map)
		return DM_MAPIO_KILL;
	bio_io_error(bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * Handle one write, from map() (@in_map) or from the worker (a write that
 * waited). Returns the DM_MAPIO_* value map() should return. It sleeps
 * only in the bioset of a cache write's clone, for one of ours to return.
 */
static int smr_dm_write(struct smr_dm_target *sc, struct bio *bio, bool in_map)
{
	struct smr_dm *dm = sc->dm;
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	sector_t sector = dm_target_offset(sc->t.ti, bio->bi_iter.bi_sector);
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

	spin_lock_irq(&sc->d.lock);
	if (dm->failed || smr_power_is_cut(&sc->d.power)) {
		spin_unlock_irq(&sc->d.lock);
		smr_dm_wait_end(sc, io, sector, nsect, -EIO);
		return smr_dm_fail(bio, in_map);
	}
	/* New cleaning debt: the time cleaning takes starts anew. */
	dm->last_write = jiffies;
	dm->since_busy_ms = 0;
	if (b->flags & SMR_BAND_CLEANING) {
		smr_dm_wait_begin(io, SMR_TRACE_WAIT_CLEANING);
		bio_list_add(&dm->held, bio);
		spin_unlock_irq(&sc->d.lock);
		return DM_MAPIO_SUBMITTED;
	}
	stream = osect == 0 || osect == b->seq_next;
	if (stream)
		b->seq_next = osect + nsect == dm->band_sectors ? 0 : osect + nsect;

	if (stream && dm->seq_bypass && !smr_ext_overlaps(b, off, n)) {
		b->writers++;
		dm->stats.host_write_sectors += nsect;
		dm->stats.bypass_write_sectors += nsect;
		spin_unlock_irq(&sc->d.lock);
		io->kind = SMR_IO_WRITE_BAND;
		io->band = band;
		smr_dm_wait_end(sc, io, sector, nsect, 0);
		trace_smr_dm_write(sc->d.label, sector, nsect, SMR_TRACE_BYPASS, band,
				   SMR_SLOT_FREE);
		bio_set_dev(bio, sc->d.bdev);
		bio->bi_iter.bi_sector = smr_band_sector(dm, band) + osect;
		if (sc->d.tm) {
			smr_tm_submit(sc->d.tm, &io->tm, bio, &sc->d.bs, sc->d.bdev,
				      bio->bi_iter.bi_sector,
				      smr_dm_tm_pos(dm, bio->bi_iter.bi_sector));
			return DM_MAPIO_SUBMITTED;
		}
		return smr_dm_send(sc, bio, in_map);
	}

	if (!bio_list_empty(&dm->parked) || smr_slot_alloc(dm, n, &slot)) {
		u32 limit = dm->clean_timeout_ms;
		bool arm = false;

		if (limit && io->parked &&
		    time_after_eq(jiffies, io->parked_at + msecs_to_jiffies(limit))) {
			/* Back from a cleaning, and waited too long already. */
			dm->stats.clean_timeouts++;
			spin_unlock_irq(&sc->d.lock);
			smr_dm_timed_out(sc, bio);
			return DM_MAPIO_SUBMITTED;
		}
		if (!io->parked) {
			io->parked = true;
			io->parked_at = jiffies;
			arm = limit;
		}
		/* Cache full: wait for a foreground cleaning, in order. */
		smr_dm_wait_begin(io, SMR_TRACE_WAIT_CACHE);
		bio_list_add(&dm->parked, bio);
		dm->fg_wanted = true;
		spin_unlock_irq(&sc->d.lock);
		if (arm)
			queue_delayed_work(dm->park_wq, &dm->park_dwork,
					   msecs_to_jiffies(limit));
		smr_dm_kick_cleaner(dm, 0);
		return DM_MAPIO_SUBMITTED;
	}
	/* Sequence numbers come when it is indexed (smr_dm_index()). */
	for (i = 0; i < n; i++)
		dm->slot_lba[slot + i] = smr_band_block(dm, band) + off + i;
	if (!b->slots) {
		b->first_seq = dm->next_seq;
		kick = dm->idle_ms;
	}
	smr_band_gain(dm, band, slot, n);
	b->writers++;
	dm->stats.host_write_sectors += nsect;
	dm->stats.cache_write_sectors += nsect;
	/* Occupancy rose past the next level: the worker reports it. */
	next = dm->level + 25;
	levels = next <= 100 && (u64)dm->used * 100 >= (u64)next * dm->nr_slots;
	spin_unlock_irq(&sc->d.lock);

	io->kind = SMR_IO_WRITE_CACHE;
	io->band = band;
	io->off = off;
	io->nr = n;
	io->slot = slot;
	io->fua = bio->bi_opf & REQ_FUA;
	smr_dm_wait_end(sc, io, sector, nsect, 0);
	trace_smr_dm_write(sc->d.label, sector, nsect, SMR_TRACE_CACHE, band, slot);
	if (kick && !delayed_work_pending(&dm->clean_dwork))
		queue_delayed_work(dm->clean_wq, &dm->clean_dwork,
				   msecs_to_jiffies(dm->idle_ms));
	if (levels)
		queue_work(sc->d.wq, &sc->d.commit_work);
	smr_dm_submit_cache(sc, bio, smr_slot_sector_dm(dm, slot));
	return DM_MAPIO_SUBMITTED;
}

/* smr_dm_end_io() of a bio with something to do at its end. */
static noinline int smr_dm_end_io_kind(struct smr_dm_target *sc,
				       struct smr_dm_io *io,
				       blk_status_t *error)
{
	struct smr_dm *dm = sc->dm;
	struct smr_band *b;
	unsigned long flags;

	/* The power went before the drive said it was done: it never was. */
	if (unlikely(smr_power_is_cut(&sc->d.power)))
		*error = BLK_STS_IOERR;

	switch (io->kind) {
	case SMR_IO_WRITE_CACHE:
		/* Ended by smr_dm_cache_endio() or the worker, once. */
		break;
	case SMR_IO_WRITE_BAND:
		b = &dm->bands[io->band];
		spin_lock_irqsave(&sc->d.lock, flags);
		b->writers--;
		if (*error)
			sc->d.errors++;
		spin_unlock_irqrestore(&sc->d.lock, flags);
		wake_up(&dm->wait);
		break;
	case SMR_IO_READ_CACHE:
		b = &dm->bands[io->band];
		/*
		 * A cleaning waits for the band's last reader. Mostly none
		 * does: wake_up() would take the queue's lock for nothing
		 * (about 90 instructions a read of the cache). The atomic
		 * decrement is a full barrier, as waitqueue_active() asks
		 * before it: the waiter, in wait_event(), queues itself
		 * before it tests the count, so either it sees 0 or it is
		 * seen queued here.
		 */
		if (atomic_dec_and_test(&b->readers) &&
		    waitqueue_active(&dm->wait))
			wake_up(&dm->wait);
		fallthrough;
	default:
		if (*error) {
			spin_lock_irqsave(&sc->d.lock, flags);
			sc->d.errors++;
			spin_unlock_irqrestore(&sc->d.lock, flags);
		}
		break;
	}
	return DM_ENDIO_DONE;
}

/*
 * Most bios end with nothing to do: a read of a band (kind SMR_IO_NONE),
 * done, the power on. That case saves no registers and makes no call but
 * dm_per_bio_data(); the rest is smr_dm_end_io_kind()'s (the two were 8
 * instructions a read apart: docs/benchmarks-log.md, 2026-12-02 (5)).
 */
int smr_dm_end_io(struct smr_dm_target *sc, struct bio *bio, blk_status_t *error)
{
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));

	if (likely(io->kind == SMR_IO_NONE && !*error &&
		   !smr_power_is_cut(&sc->d.power)))
		return DM_ENDIO_DONE;
	return smr_dm_end_io_kind(sc, io, error);
}

/* The worker: completions first, then new writes, flushes, discards. */
static void smr_dm_work(struct work_struct *work)
{
	struct smr_dm_target *sc = container_of(work, struct smr_dm_target,
						d.commit_work);
	struct smr_dm *dm = sc->dm;
	struct bio_list done, queue, commit;
	struct bio *bio;
	u64 end;
	int ret;

	bio_list_init(&commit);
	spin_lock_irq(&sc->d.lock);
	done = dm->done;
	bio_list_init(&dm->done);
	queue = dm->queue;
	bio_list_init(&dm->queue);
	spin_unlock_irq(&sc->d.lock);

	while ((bio = bio_list_pop(&done)))
		smr_dm_write_done(sc, bio, &commit);

	while ((bio = bio_list_pop(&queue))) {
		if (bio_op(bio) == REQ_OP_DISCARD) {
			/* Accepted and ignored: the data stays readable. */
			spin_lock_irq(&sc->d.lock);
			dm->stats.discard_sectors += bio_sectors(bio);
			spin_unlock_irq(&sc->d.lock);
			bio_endio(bio);
		} else if (!bio_sectors(bio)) {
			bio_list_add(&commit, bio);	/* empty flush */
		} else {
			smr_dm_write(sc, bio, false);
		}
	}

	if (!bio_list_empty(&commit)) {
		ret = smr_md_commit(&sc->d);
		/* A flush ends when the drive has done all it was sent. */
		end = sc->d.tm ? smr_dm_tm_commit(sc, false) : 0;
		while ((bio = bio_list_pop(&commit))) {
			struct smr_dm_io *io = dm_per_bio_data(bio,
							       sizeof(*io));

			if (ret)
				bio->bi_status = BLK_STS_IOERR;
			io->tm.end = max(io->tm.end, end);
			smr_dm_end_bio(sc, bio);
		}
	}
	smr_dm_levels(sc);
}

/* ------------------------------------------------------------------ */
/* Suspend and resume.                                                 */
/* ------------------------------------------------------------------ */

int smr_dm_preresume(struct smr_dm_target *sc)
{
	struct smr_dm *dm = sc->dm;
	int ret;

	/*
	 * After a cleaning failed, memory may hold a half-done band rewrite:
	 * start over from disk, which finishes it (smr_dm_recover_intent()).
	 */
	if (!dm->loaded) {
		/* It says why in the log. */
		ret = smr_commit_predecessor(sc);
		if (ret) {
			if (ret != -EBUSY)
				smr_nl_commit_error(&sc->d, ret);
			return ret;
		}
	} else if (dm->failed || sc->commit_pending) {
		/*
		 * Memory is newer than the disk (acknowledged writes; a failed
		 * cleaning leaves it consistent with the intent on disk).
		 */
		ret = smr_md_commit(&sc->d);
		if (ret) {
			DMERR("%s: metadata commit at resume failed: %d; state kept in memory",
			      smr_dm_name(sc), ret);
			smr_nl_commit_error(&sc->d, ret);
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
	spin_lock_irq(&sc->d.lock);
	dm->failed = false;
	dm->fg_wanted = dm->manual = false;
	dm->state = SMR_DM_IDLE;
	dm->last_io = dm->last_write = jiffies;
	spin_unlock_irq(&sc->d.lock);
	return 0;
}

void smr_dm_resume(struct smr_dm_target *sc)
{
	struct smr_dm *dm = sc->dm;

	spin_lock_irq(&sc->d.lock);
	dm->stop = false;
	spin_unlock_irq(&sc->d.lock);
	if (dm->dirty_bands && dm->idle_ms)
		queue_delayed_work(dm->clean_wq, &dm->clean_dwork,
				   msecs_to_jiffies(dm->idle_ms));
}

void smr_dm_postsuspend(struct smr_dm_target *sc)
{
	struct smr_dm *dm = sc->dm;
	int ret;

	/* No host I/O is in flight or parked now. */
	spin_lock_irq(&sc->d.lock);
	dm->stop = true;
	spin_unlock_irq(&sc->d.lock);
	cancel_delayed_work_sync(&dm->clean_dwork);
	cancel_delayed_work_sync(&dm->park_dwork);
	flush_workqueue(sc->d.wq);
	/*
	 * A failed commit keeps its blocks dirty (smr_md_commit()): the
	 * state stays in memory, and preresume or the next flush retries.
	 */
	ret = smr_md_commit(&sc->d);
	if (ret && !smr_drive_lost(&sc->d)) {	/* cut: nothing to retry */
		sc->commit_pending = true;
		spin_lock_irq(&sc->d.lock);
		sc->d.errors++;
		spin_unlock_irq(&sc->d.lock);
		DMERR("%s: metadata commit at suspend failed; kept in memory, retried at resume",
		      smr_dm_name(sc));
		smr_nl_commit_error(&sc->d, ret);
	}
}

/* ------------------------------------------------------------------ */
/* Construction.                                                       */
/* ------------------------------------------------------------------ */

static const char *const smr_dm_onoff[] = { "off", "on", NULL };

/* Optional arguments, in SMR_DM_OPT_* bit order. */
static const struct smr_opt smr_dm_opts[] = {
	{ .name = "cache_sectors", .max = U64_MAX, .bad = "Invalid cache_sectors" },
	{ .name = "idle_ms", .max = SMR_DM_MAX_IDLE_MS,
	  .bad = "idle_ms must be a number from 0 to 3600000" },
	{ .name = "policy", .parse = smr_dm_parse_policy,
	  .bad = "policy must be fifo, greedy or cost-benefit" },
	{ .name = "seq_bypass", .words = smr_dm_onoff,
	  .bad = "seq_bypass must be on or off" },
	{ .name = "format", .flag = true },
	{ .name = "clean_timeout_ms", .max = SMR_DM_MAX_IDLE_MS,
	  .bad = "clean_timeout_ms must be a number from 0 to 3600000" },
	SMR_WC_OPT_KIB,
	SMR_WC_OPT_MIB,
};

static const struct smr_opt_table smr_dm_opt_table = {
	.opts = smr_dm_opts,
	.nr = ARRAY_SIZE(smr_dm_opts),
	.count_error = "Invalid number of optional arguments (at most 13)",
	.max_words = 13,
	.unknown_error = "Unknown optional argument",
	.group = SMR_TM_GROUP,
};

static int smr_dm_parse_opts(struct smr_dm_target *sc, struct dm_arg_set *as,
			     struct smr_tm_params *tp)
{
	struct smr_dm *dm = sc->dm;
	u64 v[ARRAY_SIZE(smr_dm_opts)];
	unsigned long given;
	int ret;

	ret = smr_parse_opts(&smr_dm_opt_table, as, &given, v, &sc->t.ti->error);
	if (ret)
		return ret;
	ret = smr_wc_parse_opt(&sc->t, &given, SMR_DM_OPT_WCACHE,
			       SMR_DM_OPT_WCACHE_MIB, v[6], v[7], &sc->t.ti->error);
	if (ret)
		return ret;
	dm->opt_mask = given & ~SMR_DM_OPT_FORMAT;
	if (given & SMR_DM_OPT_CACHE)
		dm->cache_sectors = v[0];
	if (given & SMR_DM_OPT_IDLE)
		dm->idle_ms = v[1];
	if (given & SMR_DM_OPT_POLICY)
		dm->policy = v[2];
	if (given & SMR_DM_OPT_BYPASS)
		dm->seq_bypass = v[3];
	if (given & SMR_DM_OPT_TIMEOUT)
		dm->clean_timeout_ms = v[5];
	sc->t.format = given & SMR_DM_OPT_FORMAT;
	return smr_tm_parse(as, SMR_TM_KEYS_ALL, tp, &sc->t.ti->error);
}

/* The timing model, if the table gave one: the cache at cache_at of the drive. */
static int smr_dm_timing(struct smr_dm_target *sc, struct smr_tm_params *tp)
{
	struct smr_dm *dm = sc->dm;
	struct dm_target *ti = sc->t.ti;
	sector_t room = dm->cache_sectors + dm->band_sectors;
	struct smr_tm *tm;

	if (!tp->given)
		return 0;
	tm = smr_tm_create(tp, ti->len, &ti->error);
	if (IS_ERR(tm))
		return PTR_ERR(tm);
	sc->d.tm = tm;
	dm->tm_base = tm->base;
	/*
	 * cache_at is a position on the whole drive (the device's own
	 * length without drive_mb): cache and spare band fit in the stroke
	 * from there on.
	 */
	if (room < tm->span)
		dm->tm_cache_pos = div_u64((u64)(tm->span - room) *
					   tp->v[SMR_TM_CACHE_AT], 1000);
	return 0;
}

static int smr_dm_geometry(struct smr_dm_target *sc)
{
	struct smr_dm *dm = sc->dm;
	struct dm_target *ti = sc->t.ti;
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
	if ((ti->len >> 3) >= BIT_ULL(SMR_DM_LBA_BITS)) {
		ti->error = "Target length must be under 256 TiB";
		return -EINVAL;
	}
	if (nr_bands > SMR_DM_MAX_BANDS) {
		ti->error = "Too many bands: at most 16777216 (use larger bands)";
		return -EINVAL;
	}
	dm->nr_bands = nr_bands;
	dm->band_blocks = dm->band_sectors >> 3;

	if (!(dm->opt_mask & SMR_DM_OPT_CACHE))
		dm->cache_sectors = max_t(u64, round_up(div_u64(ti->len, 100),
							SMR_BLOCK_SECTORS),
					  dm->band_sectors);
	if (dm->cache_sectors < SMR_DM_IO_SECTORS ||
	    dm->cache_sectors & (SMR_BLOCK_SECTORS - 1)) {
		ti->error = "cache_sectors must be a multiple of 8, at least 2048 (1 MiB)";
		return -EINVAL;
	}
	if ((dm->cache_sectors >> 3) >= BIT_ULL(SMR_DM_SLOT_BITS)) {
		ti->error = (dm->opt_mask & SMR_DM_OPT_CACHE) ?
			"cache_sectors must be under 2147483648 (1 TiB)" :
			"The default cache (1% of the length) is 1 TiB or more: give a smaller cache_sectors";
		return -EINVAL;
	}
	slots = dm->cache_sectors >> 3;
	dm->nr_slots = slots;
	dm->slot_blocks = DIV_ROUND_UP(dm->nr_slots, (u32)SMR_SLOTS_PER_BLOCK);

	/* What the superblock records: bands as zones, and the cache. */
	sc->d.sb_geo.zone_sectors = dm->band_sectors;
	sc->d.sb_geo.zone_capacity = dm->band_sectors;
	sc->d.sb_geo.nr_zones = dm->nr_bands;
	sc->d.sb_geo.nr_conv = 0;
	sc->d.sb_geo.cache_sectors = dm->cache_sectors;

	md = smr_slots_sectors(smr_dm_md_blocks(dm));
	dm->cache_start = md;
	dm->spare_start = dm->cache_start + dm->cache_sectors;
	dm->bands_start = dm->spare_start + dm->band_sectors;
	need = dm->bands_start + ti->len;
	have = bdev_nr_sectors(sc->d.bdev);
	if (need > have) {
		DMERR("backing device %s has %llu sectors; %llu are needed (metadata %llu + cache %llu + spare band %llu + data %llu)",
		      sc->t.dev->name, (unsigned long long)have,
		      (unsigned long long)need, (unsigned long long)md,
		      dm->cache_sectors, dm->band_sectors,
		      (unsigned long long)ti->len);
		ti->error = "Backing device too small for this geometry (sizes in the kernel log)";
		return -ENOSPC;
	}
	return 0;
}

int smr_dm_ctr(struct smr_dm_target *sc, struct dm_arg_set *as)
{
	struct dm_target *ti = sc->t.ti;
	char dmname[DM_NAME_LEN];
	struct smr_tm_params tp;
	dev_t devt;
	struct smr_dm *dm;
	int ret;

	/* The drive: this table's own, over its backing device. */
	sc->d.mode = SMR_MODE_DRIVE_MANAGED;
	sc->d.bdev = sc->t.dev->bdev;
	sc->d.dev_sectors = ti->len;
	strscpy(sc->d.name, sc->t.name, sizeof(sc->d.name));
	smr_genl_dev_name(ti, dmname, &devt);	/* trace events name it so */
	strscpy(sc->d.label, dmname, sizeof(sc->d.label));
	spin_lock_init(&sc->d.lock);

	dm = kvzalloc(sizeof(*dm), GFP_KERNEL);
	if (!dm) {
		ti->error = "Cannot allocate the drive-managed state";
		return -ENOMEM;
	}
	sc->dm = dm;
	dm->sc = sc;
	INIT_DELAYED_WORK(&dm->nomem_dwork, smr_dm_nomem_work);	/* smr_dm_free() */
	INIT_DELAYED_WORK(&dm->park_dwork, smr_dm_park_work);
	if (bdev_is_zoned(sc->d.bdev)) {
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
	INIT_WORK(&sc->d.commit_work, smr_dm_work);

	if (smr_parse_u64(dm_shift_arg(as), &dm->band_sectors)) {
		ti->error = "Invalid band_sectors";
		return -EINVAL;
	}
	ret = smr_dm_parse_opts(sc, as, &tp);
	if (ret)
		return ret;
	ret = smr_dm_geometry(sc);
	if (ret)
		return ret;
	ret = smr_claim_backing(&sc->t.claim, ti, sc->d.bdev, sc->t.format, &ti->error);
	if (ret)
		return ret;
	ret = smr_dm_timing(sc, &tp);
	if (!ret)
		ret = smr_wc_setup(&sc->d, sc->t.wc_kib, &ti->error);
	if (ret)
		return ret;

	ret = -ENOMEM;
	ti->error = "Cannot allocate the cache and band state";
	dm->bands = kvcalloc(dm->nr_bands, sizeof(*dm->bands), GFP_KERNEL);
	dm->slot_lba = kvmalloc_array(dm->nr_slots, sizeof(u64), GFP_KERNEL);
	dm->slot_seq = kvmalloc_array(dm->nr_slots, sizeof(u64), GFP_KERNEL);
	dm->slot_used = kvcalloc(BITS_TO_LONGS(dm->nr_slots), sizeof(long),
				 GFP_KERNEL);
	dm->slot_inflight = kvcalloc(BITS_TO_LONGS(dm->nr_slots),
				     sizeof(long), GFP_KERNEL);
	dm->slot_next = kvmalloc_array(dm->nr_slots, sizeof(u32), GFP_KERNEL);
	dm->heap = kvmalloc_array(dm->nr_bands, sizeof(u32), GFP_KERNEL);
	dm->buf = vmalloc(SMR_DM_CHUNK_SECTORS << SECTOR_SHIFT);
	dm->rd = alloc_percpu(struct smr_io_count);
	if (!dm->bands || !dm->slot_lba || !dm->slot_seq || !dm->slot_used ||
	    !dm->slot_inflight || !dm->slot_next || !dm->heap || !dm->buf ||
	    !dm->rd)
		return ret;
	smr_dm_drop_index(dm);
	sc->d.mem_bytes += sizeof(*sc) + sizeof(*dm) +
		(size_t)dm->nr_bands * (sizeof(*dm->bands) + sizeof(u32)) +
		(size_t)dm->nr_slots * (sizeof(u32) + 2 * sizeof(u64)) +
		2 * BITS_TO_LONGS(dm->nr_slots) * sizeof(long) +
		(SMR_DM_CHUNK_SECTORS << SECTOR_SHIFT) +
		num_possible_cpus() * sizeof(struct smr_io_count);

	dm->io_client = dm_io_client_create();
	if (IS_ERR(dm->io_client)) {
		ret = PTR_ERR(dm->io_client);
		dm->io_client = NULL;
		ti->error = "Cannot create the dm-io client";
		return ret;
	}
	ret = smr_md_init(&sc->d, &smr_dm_md_mode, smr_dm_md_blocks(dm));
	if (ret) {
		ti->error = "Cannot allocate metadata buffers";
		return ret;
	}
	/* Clones for cache writes (smr_dm_submit_cache()). */
	ret = bioset_init(&sc->d.bs, BIO_POOL_SIZE, 0, 0);
	if (ret) {
		ti->error = "Cannot allocate the bio set";
		return ret;
	}
	sc->d.wq = alloc_ordered_workqueue("dm-smr-%s", WQ_MEM_RECLAIM,
					 dm_table_device_name(ti->table));
	dm->clean_wq = alloc_ordered_workqueue("dm-smr-clean-%s",
					       WQ_MEM_RECLAIM,
					       dm_table_device_name(ti->table));
	if (!sc->d.wq || !dm->clean_wq ||
	    (dm->clean_timeout_ms && smr_dm_make_park_wq(sc))) {
		ti->error = "Cannot allocate the workqueues";
		return -ENOMEM;
	}
	ret = smr_md_load_or_format(&sc->d, sc->t.format);
	if (ret) {
		ti->error = sc->d.error;
		return ret;
	}
	/* Counters describe the device's use, not its formatting. */
	sc->d.errors = 0;
	sc->d.commits = 0;
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
	/* Bios are cut at SMR_DM_IO_SECTORS in map(): smr_dm_split(). */
	return 0;
}

/* The drive-managed state, with nothing in flight (smr_dm_free()). */
static void smr_dm_free_state(struct smr_dm_target *sc)
{
	struct smr_dm *dm = sc->dm;

	if (!dm)
		return;
	if (dm->clean_wq) {
		cancel_delayed_work_sync(&dm->clean_dwork);
		destroy_workqueue(dm->clean_wq);
	}
	cancel_delayed_work_sync(&dm->park_dwork);
	if (dm->park_wq)
		destroy_workqueue(dm->park_wq);
	/* After the cleaner, which charges it and drains this. */
	smr_tm_destroy(sc->d.tm);
	sc->d.tm = NULL;
	smr_wc_teardown(&sc->d);
	/* Nothing in flight by now: no write waits for memory. */
	cancel_delayed_work_sync(&dm->nomem_dwork);
	if (dm->bands) {
		u32 i;

		for (i = 0; i < dm->nr_bands; i++)
			smr_ext_free(&dm->bands[i].ext);
	}
	smr_ext_free_spares(dm);
	if (dm->io_client)
		dm_io_client_destroy(dm->io_client);
	vfree(dm->buf);
	free_percpu(dm->rd);
	kvfree(dm->heap);
	kvfree(dm->slot_next);
	kvfree(dm->slot_inflight);
	kvfree(dm->slot_used);
	kvfree(dm->slot_seq);
	kvfree(dm->slot_lba);
	kvfree(dm->bands);
	kvfree(dm);
	sc->dm = NULL;
}

/*
 * The table's drive, at the end of the destructor or of a constructor
 * that failed (from whatever point): nothing of the host's is in flight.
 */
void smr_dm_free(struct smr_dm_target *sc)
{
	/*
	 * A cut's work queues the worker, which uses sc->dm: the cut work
	 * first, then the worker, then what it uses.
	 */
	smr_power_exit(&sc->d.power);
	if (sc->d.wq)
		flush_workqueue(sc->d.wq);
	smr_dm_free_state(sc);
	if (sc->d.wq)
		destroy_workqueue(sc->d.wq);
	bioset_exit(&sc->d.bs);
	smr_md_exit(&sc->d);
}

void smr_dm_io_hints(struct smr_dm_target *sc, struct queue_limits *limits)
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
