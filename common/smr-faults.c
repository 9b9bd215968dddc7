// SPDX-License-Identifier: GPL-2.0
/*
 * Media faults for the three models (smr-faults.h): bad sectors kept in
 * the kernel's badblocks table, transient errors, delays, the messages
 * that set them and the status fields that count them.
 *
 * Part of the library module smr-common (common/Kbuild); each target
 * passes its own trace event for a fault that fired to smr_faults_init().
 *
 * Why this file is long: the three kinds of fault each have an I/O path,
 * a message parser and counters, which share the range and badblocks
 * helpers here; the messages (from "messages" on) would split off as
 * smr-faults-msg.c with those helpers in a header.
 *
 * Kernel differences relied on (block/badblocks.c of 6.1.192, 6.12.117
 * and 7.x, read there):
 *  - badblocks_set()/badblocks_clear() return int, 0 on success, up to
 *    6.15; bool, true on success, from 6.16 (approx.), where the lengths
 *    also became sector_t (HAVE_BADBLOCKS_BOOL); badblocks_check() takes
 *    and returns sector_t lengths there (HAVE_BADBLOCKS_CHECK_SECTOR_T).
 *  - 6.7 rewrote the table code (6.12 has the new one, 6.1 the old);
 *    both keep at most MAX_BADBLOCKS (PAGE_SIZE / 8) entries of at most
 *    BB_MAX_LEN (512) sectors, and both may fail a set or a split clear
 *    when the table is full. The old code stores a range longer than
 *    BB_MAX_LEN out of order (smr_bb_set()). The 6.12 code ignores a non-zero shift when
 *    rounding, so we keep shift 0 and count in 512-byte sectors.
 *  - badblocks_check() reads under the seqlock only (no lock, no sleep):
 *    map() may call it. set and clear take the write side with
 *    interrupts off; clear with write_seqlock_irq() on every version,
 *    so it must not be called with interrupts off (map() and our worker
 *    run with them on; never under a spinlock of ours).
 */
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "smr-compat.h"
#include "smr-faults.h"
#include "smr-genl.h"
#include "smr-lib.h"

static const char *smr_fault_dev(struct smr_faults *f)
{
	return dm_table_device_name(f->ti->table);
}

/* ---------------------------------------------- badblocks compatibility */

/*
 * 0, or -ENOSPC: the table is full (part of the range may be set).
 *
 * In pieces of at most BB_MAX_LEN sectors, in ascending order: 6.1's
 * badblocks_set() (the code before the 6.7 rewrite) inserts the pieces of
 * a longer range each at the same index, so they end up in descending
 * order, and its binary search then misses some of them. One piece at a
 * time, each either merges with the one before or goes just after it.
 */
static int smr_bb_set(struct badblocks *bb, sector_t s, sector_t n)
{
	while (n) {
		sector_t step = min_t(sector_t, n, BB_MAX_LEN);

#ifdef HAVE_BADBLOCKS_BOOL
		if (!badblocks_set(bb, s, step, 1))
			return -ENOSPC;
#else
		if (badblocks_set(bb, s, step, 1))
			return -ENOSPC;
#endif
		s += step;
		n -= step;
	}
	return 0;
}

/* 0, or -ENOSPC: splitting an entry needed a slot the table lacks. */
static int smr_bb_clear(struct badblocks *bb, sector_t s, sector_t n)
{
#ifdef HAVE_BADBLOCKS_BOOL
	return badblocks_clear(bb, s, n) ? 0 : -ENOSPC;
#else
	return badblocks_clear(bb, s, n) ? -ENOSPC : 0;
#endif
}

/*
 * Clear [s, s + n) of any length: before 6.16 the length is an int, so
 * in steps well below INT_MAX.
 */
static int smr_bb_clear_range(struct badblocks *bb, sector_t s, sector_t n)
{
	while (n) {
		sector_t step = min_t(sector_t, n, 1U << 30);
		int ret = smr_bb_clear(bb, s, step);

		if (ret)
			return ret;
		s += step;
		n -= step;
	}
	return 0;
}

/* Does [s, s + n) touch a bad sector? (n <= INT_MAX: a bio's length.) */
static bool smr_bb_hit(struct badblocks *bb, sector_t s, u32 n)
{
	sector_t first;
#ifdef HAVE_BADBLOCKS_CHECK_SECTOR_T
	sector_t len;
#else
	int len;
#endif

	return badblocks_check(bb, s, n, &first, &len) != 0;
}

/* ------------------------------------------------------------ set-up --- */

static void smr_faults_delay_work(struct work_struct *work);

int smr_faults_init(struct smr_faults *f, struct dm_target *ti,
		    int (*remap)(struct dm_target *ti, struct bio *bio),
		    smr_fault_trace_fn trace)
{
	dev_t devt;

	f->ti = ti;
	f->remap = remap;
	f->trace = trace;
	smr_genl_dev_name(ti, f->name, &devt);
	mutex_init(&f->msg_lock);
	spin_lock_init(&f->lock);
	bio_list_init(&f->delayed);
	INIT_DELAYED_WORK(&f->dwork, smr_faults_delay_work);
	/* shift 0: entries in 512-byte sectors (see above). */
	if (badblocks_init(&f->bb, 1))
		return -ENOMEM;
	f->bb_ready = true;
	/* The delay's workqueue: made by the first delay message. */
	return 0;
}
EXPORT_SYMBOL_GPL(smr_faults_init);

/*
 * Called with nothing in flight (dm waited for every bio, delayed ones
 * included, before the destructor). Safe on a half-initialised context.
 */
void smr_faults_exit(struct smr_faults *f)
{
	struct bio *bio;

	if (f->wq) {
		cancel_delayed_work_sync(&f->dwork);
		destroy_workqueue(f->wq);
	}
	while ((bio = bio_list_pop(&f->delayed)))
		bio_io_error(bio);
	if (f->bb_ready)
		badblocks_exit(&f->bb);
	kvfree(f->held);
}
EXPORT_SYMBOL_GPL(smr_faults_exit);

void smr_faults_order_writes(struct smr_faults *f, u64 zone_sectors)
{
	f->order_sectors = zone_sectors;
}
EXPORT_SYMBOL_GPL(smr_faults_order_writes);

void smr_faults_map_reads_first(struct smr_faults *f,
				void (*issue)(struct dm_target *ti,
					      struct bio *bio))
{
	f->issue = issue;
}
EXPORT_SYMBOL_GPL(smr_faults_map_reads_first);

/* After the target set its own per_io_data_size: ours goes first. */
void smr_faults_per_io(struct dm_target *ti)
{
	BUILD_BUG_ON(sizeof(struct smr_fault_bio) % sizeof(u64));
	WARN_ON_ONCE(ti->per_io_data_size % sizeof(u64));
	ti->per_io_data_size += sizeof(struct smr_fault_bio);
}
EXPORT_SYMBOL_GPL(smr_faults_per_io);

static struct smr_fault_bio *smr_fault_bio(struct smr_faults *f,
					   struct bio *bio)
{
	return dm_per_bio_data(bio, f->ti->per_io_data_size);
}

/* --------------------------------------------------------- the I/O path */

static void smr_faults_fire(struct smr_faults *f, enum smr_fault_kind kind,
			    sector_t s, u32 n, bool write)
{
	f->trace(f->name, kind, s, n, write);
}

void smr_faults_note(struct smr_faults *f, enum smr_fault_kind kind,
		     sector_t sector, u32 nsect, bool write)
{
	smr_faults_fire(f, kind, sector, nsect, write);
}
EXPORT_SYMBOL_GPL(smr_faults_note);

static bool smr_range_takes(const struct smr_fault_range *r, sector_t s,
			    u32 n, bool write)
{
	if (s >= r->end || s + n <= r->start)
		return false;
	return r->dir == SMR_FAULT_RW || (r->dir == SMR_FAULT_WRITE) == write;
}

/* Under f->lock: does this I/O fail by a transient fault? */
static bool smr_transient_fires(struct smr_faults *f, sector_t s, u32 n,
				bool write)
{
	if (f->tr_mode == SMR_TRANSIENT_OFF ||
	    !smr_range_takes(&f->tr, s, n, write))
		return false;
	if (f->tr_mode == SMR_TRANSIENT_NEXT) {
		if (!f->tr_left)
			return false;
		f->tr_left--;
		return true;
	}
	return prandom_u32_state(&f->tr_rnd) % 1000000 < f->tr_ppm;
}

/*
 * Under f->lock: hold @bio for the delay, behind the bios held already.
 * Suspending (or the delay since set to 0), it is due at once: the
 * worker is then running or about to, and sends it.
 */
static void smr_faults_queue(struct smr_faults *f, struct bio *bio,
			     bool mapped, unsigned int ms)
{
	struct smr_fault_bio *fb = smr_fault_bio(f, bio);
	unsigned long d = f->draining ? 0 : msecs_to_jiffies(ms);
	bool first = bio_list_empty(&f->delayed);

	fb->due = jiffies + d;
	fb->mapped = mapped;
	fb->counted = false;
	bio_list_add(&f->delayed, bio);
	if (first)
		queue_delayed_work(f->wq, &f->dwork, d);
}

/* Under f->lock: a write on @delayed, counted against its zone. */
static void smr_faults_count_write(struct smr_faults *f, struct bio *bio,
				   u32 zone)
{
	struct smr_fault_bio *fb = smr_fault_bio(f, bio);

	fb->zone = zone;
	fb->counted = true;
	f->held[zone]++;
	WRITE_ONCE(f->held_writes, f->held_writes + 1);
}

static int smr_faults_fail(struct bio *bio, blk_status_t sts)
{
	bio->bi_status = sts;
	bio_endio(bio);
	return DM_MAPIO_SUBMITTED;
}

/*
 * smr_faults_map() while a fault is set or writes are held. Only reads
 * and writes with data meet faults; zone appends (which only 6.1 passes
 * to the target) do not: where they land is known only later.
 */
int __smr_faults_map(struct smr_faults *f, struct bio *bio)
{
	sector_t s;
	u32 n = bio_sectors(bio);
	bool write, fire, delay = false, hold = false, behind = false;
	unsigned long flags;

	if (!n)
		return SMR_FAULT_PASS;
	if (bio_op(bio) == REQ_OP_READ)
		write = false;
	else if (bio_op(bio) == REQ_OP_WRITE)
		write = true;
	else
		return SMR_FAULT_PASS;
	s = dm_target_offset(f->ti, bio->bi_iter.bi_sector);

	if (READ_ONCE(f->bb.count) && smr_bb_hit(&f->bb, s, n)) {
		if (!write) {
			atomic64_inc(&f->stats.bad_reads);
			smr_faults_fire(f, SMR_FAULT_BAD_READ, s, n, false);
			return smr_faults_fail(bio, BLK_STS_MEDIUM);
		}
		/*
		 * A write reallocates what it covers, unless on_write fail, or
		 * the table has no slot to split an entry (6.12 then clears
		 * the rest and says success: look again).
		 */
		if (READ_ONCE(f->bb_fail_writes) || smr_bb_clear(&f->bb, s, n) ||
		    smr_bb_hit(&f->bb, s, n)) {
			atomic64_inc(&f->stats.bad_writes);
			smr_faults_fire(f, SMR_FAULT_BAD_WRITE, s, n, true);
			return smr_faults_fail(bio, BLK_STS_MEDIUM);
		}
		atomic64_inc(&f->stats.remaps);
		smr_faults_fire(f, SMR_FAULT_REMAP, s, n, true);
	}

	spin_lock_irqsave(&f->lock, flags);
	fire = smr_transient_fires(f, s, n, write);
	if (!fire && f->dl_ms && !f->draining &&
	    smr_range_takes(&f->dl, s, n, write)) {
		delay = true;
		/* A read the target maps first: smr_faults_hold() queues it. */
		hold = f->issue && !write;
		if (!hold)
			smr_faults_queue(f, bio, false, f->dl_ms);
	} else if (!fire && write && f->held &&
		   f->held[div64_u64(s, f->order_sectors)]) {
		/* Behind its zone's held write: due when that one is. */
		smr_faults_queue(f, bio, false, 0);
		behind = true;
	}
	if ((delay || behind) && write && f->held)
		smr_faults_count_write(f, bio, div64_u64(s, f->order_sectors));
	spin_unlock_irqrestore(&f->lock, flags);
	if (behind)
		return DM_MAPIO_SUBMITTED;

	if (fire) {
		atomic64_inc(&f->stats.transient);
		smr_faults_fire(f, SMR_FAULT_TRANSIENT, s, n, write);
		return smr_faults_fail(bio, BLK_STS_IOERR);
	}
	if (delay) {
		atomic64_inc(&f->stats.delayed);
		smr_faults_fire(f, SMR_FAULT_DELAY, s, n, write);
		return hold ? SMR_FAULT_HOLD : DM_MAPIO_SUBMITTED;
	}
	return SMR_FAULT_PASS;
}
EXPORT_SYMBOL_GPL(__smr_faults_map);

void smr_faults_hold(struct smr_faults *f, struct bio *bio)
{
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	smr_faults_queue(f, bio, true, f->dl_ms);
	spin_unlock_irqrestore(&f->lock, flags);
}
EXPORT_SYMBOL_GPL(smr_faults_hold);

/* Map the delayed bios that are due, in order; wait again for the rest. */
static void smr_faults_delay_work(struct work_struct *work)
{
	struct smr_faults *f = container_of(to_delayed_work(work),
					    struct smr_faults, dwork);
	struct bio_list due;
	struct bio *bio;

	bio_list_init(&due);
	spin_lock_irq(&f->lock);
	while ((bio = bio_list_peek(&f->delayed))) {
		struct smr_fault_bio *fb = smr_fault_bio(f, bio);

		if (!f->draining && time_before(jiffies, fb->due)) {
			queue_delayed_work(f->wq, &f->dwork, fb->due - jiffies);
			break;
		}
		if (fb->counted) {
			f->held[fb->zone]--;
			WRITE_ONCE(f->held_writes, f->held_writes - 1);
		}
		bio_list_add(&due, bio_list_pop(&f->delayed));
	}
	spin_unlock_irq(&f->lock);

	while ((bio = bio_list_pop(&due))) {
		if (smr_fault_bio(f, bio)->mapped) {
			f->issue(f->ti, bio);
			continue;
		}
		switch (f->remap(f->ti, bio)) {
		case DM_MAPIO_SUBMITTED:
			break;
		case DM_MAPIO_REMAPPED:
			dm_submit_bio_remap(bio, NULL);
			break;
		default:
			bio_io_error(bio);
			break;
		}
	}
}

void smr_faults_presuspend(struct smr_faults *f)
{
	spin_lock_irq(&f->lock);
	f->draining = true;
	spin_unlock_irq(&f->lock);
	/* No workqueue: no delay was ever set, so nothing is held. */
	if (f->wq)
		mod_delayed_work(f->wq, &f->dwork, 0);
}
EXPORT_SYMBOL_GPL(smr_faults_presuspend);

void smr_faults_resume(struct smr_faults *f)
{
	spin_lock_irq(&f->lock);
	f->draining = false;
	spin_unlock_irq(&f->lock);
}
EXPORT_SYMBOL_GPL(smr_faults_resume);

/* ---------------------------------------------------------- messages --- */

static bool smr_faults_any(struct smr_faults *f)
{
	return f->bb.count || f->tr_mode != SMR_TRANSIENT_OFF || f->dl_ms;
}

/* Under msg_lock: map() looks for faults only while one is set. */
static void smr_faults_rearm(struct smr_faults *f)
{
	bool any;

	spin_lock_irq(&f->lock);
	any = smr_faults_any(f);
	spin_unlock_irq(&f->lock);
	WRITE_ONCE(f->armed, any);
}

static int smr_fault_u64(struct smr_faults *f, const char *what,
			 const char *s, u64 max, u64 *v)
{
	if (kstrtoull(s, 10, v) || *v > max) {
		DMERR("%s: %s must be a decimal number up to %llu, not '%s'",
		      smr_fault_dev(f), what, max, s);
		return -EINVAL;
	}
	return 0;
}

/* <start> <count>: at least one sector, all of it on the device. */
static int smr_fault_parse_range(struct smr_faults *f, const char *msg,
				 char **argv, struct smr_fault_range *r)
{
	u64 cap = f->ti->len, start, count;

	if (smr_fault_u64(f, "start", argv[0], U64_MAX, &start) ||
	    smr_fault_u64(f, "count", argv[1], U64_MAX, &count))
		return -EINVAL;
	if (!count || start >= cap || count > cap - start) {
		DMERR("%s: %s: range %llu+%llu is empty or past the end of the device (%llu sectors)",
		      smr_fault_dev(f), msg, start, count, cap);
		return -EINVAL;
	}
	r->start = start;
	r->end = start + count;
	r->dir = SMR_FAULT_RW;
	return 0;
}

static const char *const smr_dir_words[] = {
	[SMR_FAULT_RW] = "rw",
	[SMR_FAULT_READ] = "read",
	[SMR_FAULT_WRITE] = "write",
};

/* An optional last word: read, write or rw (the default). */
static int smr_fault_parse_dir(struct smr_faults *f, const char *msg,
			       unsigned int argc, char **argv, unsigned int at,
			       struct smr_fault_range *r)
{
	unsigned int i;

	if (argc == at)
		return 0;
	if (argc == at + 1) {
		for (i = 0; i < ARRAY_SIZE(smr_dir_words); i++) {
			if (!strcasecmp(argv[at], smr_dir_words[i])) {
				r->dir = i;
				return 0;
			}
		}
	}
	DMERR("%s: %s: expected read, write or rw at the end, not '%s'",
	      smr_fault_dev(f), msg, argc > at ? argv[at] : "");
	return -EINVAL;
}

/* "a+n a+n ...": the table, with adjacent entries merged. */
static int smr_bb_list(struct smr_faults *f, char *result, unsigned int maxlen)
{
	unsigned int sz = 0, seq;
	u64 *copy, s0 = 0, e0 = 0;
	int i, count;
	bool open = false;

	copy = kmalloc(PAGE_SIZE, GFP_KERNEL);
	if (!copy)
		return -ENOMEM;
	do {
		seq = read_seqbegin(&f->bb.lock);
		count = min_t(int, f->bb.count, MAX_BADBLOCKS);
		memcpy(copy, f->bb.page, count * sizeof(u64));
	} while (read_seqretry(&f->bb.lock, seq));

	for (i = 0; i < count; i++) {
		u64 s = BB_OFFSET(copy[i]), e = s + BB_LEN(copy[i]);

		if (open && s == e0) {
			e0 = e;
			continue;
		}
		if (open)
			DMEMIT("%s%llu+%llu", sz ? " " : "", s0, e0 - s0);
		s0 = s;
		e0 = e;
		open = true;
	}
	if (open)
		DMEMIT("%s%llu+%llu", sz ? " " : "", s0, e0 - s0);
	kfree(copy);
	return 1;
}

static int smr_bb_message(struct smr_faults *f, unsigned int argc, char **argv,
			  char *result, unsigned int maxlen)
{
	struct smr_fault_range r;
	u64 need;
	int ret;

	if (argc == 2 && !strcasecmp(argv[1], "list"))
		return smr_bb_list(f, result, maxlen);
	if (argc == 2 && !strcasecmp(argv[1], "clear")) {
		ret = smr_bb_clear_range(&f->bb, 0, f->ti->len);
		if (ret) {
			DMERR("%s: badblocks clear failed", smr_fault_dev(f));
			return ret;
		}
		return 0;
	}
	if (argc == 3 && !strcasecmp(argv[1], "on_write")) {
		if (!strcasecmp(argv[2], "fail"))
			WRITE_ONCE(f->bb_fail_writes, true);
		else if (!strcasecmp(argv[2], "remap"))
			WRITE_ONCE(f->bb_fail_writes, false);
		else {
			DMERR("%s: badblocks on_write: expected remap or fail, not '%s'",
			      smr_fault_dev(f), argv[2]);
			return -EINVAL;
		}
		return 0;
	}
	if (argc == 4 && (!strcasecmp(argv[1], "add") ||
			  !strcasecmp(argv[1], "remove"))) {
		ret = smr_fault_parse_range(f, "badblocks", argv + 2, &r);
		if (ret)
			return ret;
		if (!strcasecmp(argv[1], "remove")) {
			ret = smr_bb_clear_range(&f->bb, r.start, r.end - r.start);
			if (ret)
				DMERR("%s: badblocks remove %llu+%llu: no room in the table to split an entry (remove whole ranges)",
				      smr_fault_dev(f), (u64)r.start,
				      (u64)(r.end - r.start));
			return ret ? -EINVAL : 0;
		}
		/*
		 * Entries of at most BB_MAX_LEN sectors, at most MAX_BADBLOCKS
		 * of them: refuse what may not fit before touching the table
		 * (a failed set leaves part of the range set). One spare entry
		 * for a merge at an edge, one for a write's split clear.
		 */
		need = DIV_ROUND_UP_ULL(r.end - r.start, BB_MAX_LEN) + 2;
		if (need > MAX_BADBLOCKS - READ_ONCE(f->bb.count)) {
			DMERR("%s: badblocks add: %llu+%llu needs up to %llu table entries of %d sectors; %d of %lu are in use",
			      smr_fault_dev(f), (u64)r.start,
			      (u64)(r.end - r.start), need, BB_MAX_LEN,
			      f->bb.count, (unsigned long)MAX_BADBLOCKS);
			return -EINVAL;
		}
		ret = smr_bb_set(&f->bb, r.start, r.end - r.start);
		if (ret) {
			DMERR("%s: badblocks add: the table is full; part of the range may be set (badblocks list)",
			      smr_fault_dev(f));
			return -EINVAL;
		}
		return 0;
	}
	DMERR("%s: badblocks: expected add|remove <start> <count>, list, clear or on_write remap|fail",
	      smr_fault_dev(f));
	return -EINVAL;
}

static int smr_transient_message(struct smr_faults *f, unsigned int argc,
				 char **argv)
{
	struct smr_fault_range r;
	u64 n, ppm, seed;

	if (argc == 2 && !strcasecmp(argv[1], "off")) {
		spin_lock_irq(&f->lock);
		f->tr_mode = SMR_TRANSIENT_OFF;
		spin_unlock_irq(&f->lock);
		return 0;
	}
	if (argc >= 5 && argc <= 6 && !strcasecmp(argv[1], "next")) {
		if (smr_fault_parse_range(f, "transient", argv + 2, &r) ||
		    smr_fault_u64(f, "transient next: the number of I/Os",
				  argv[4], U32_MAX, &n) ||
		    smr_fault_parse_dir(f, "transient", argc, argv, 5, &r))
			return -EINVAL;
		spin_lock_irq(&f->lock);
		f->tr = r;
		f->tr_left = n;
		f->tr_mode = SMR_TRANSIENT_NEXT;
		spin_unlock_irq(&f->lock);
		return 0;
	}
	if (argc >= 6 && argc <= 7 && !strcasecmp(argv[1], "prob")) {
		if (smr_fault_parse_range(f, "transient", argv + 2, &r) ||
		    smr_fault_u64(f, "transient prob: the probability in millionths",
				  argv[4], 1000000, &ppm) ||
		    smr_fault_u64(f, "transient prob: the seed", argv[5],
				  U64_MAX, &seed) ||
		    smr_fault_parse_dir(f, "transient", argc, argv, 6, &r))
			return -EINVAL;
		spin_lock_irq(&f->lock);
		f->tr = r;
		f->tr_ppm = ppm;
		f->tr_seed = seed;
		prandom_seed_state(&f->tr_rnd, seed);
		/*
		 * prandom_seed_state() does not mix: with a small seed the
		 * first draws are poor. Run it in, as prandom_warmup() does.
		 */
		for (n = 0; n < 10; n++)
			prandom_u32_state(&f->tr_rnd);
		f->tr_mode = SMR_TRANSIENT_PROB;
		spin_unlock_irq(&f->lock);
		return 0;
	}
	DMERR("%s: transient: expected next <start> <count> <n> [read|write|rw], prob <start> <count> <per_million> <seed> [read|write|rw], or off",
	      smr_fault_dev(f));
	return -EINVAL;
}

static int smr_delay_message(struct smr_faults *f, unsigned int argc,
			     char **argv)
{
	struct smr_fault_range r;
	u64 ms;

	if (argc == 2 && !strcasecmp(argv[1], "off")) {
		/* Bios already delayed keep their time (at most the old delay). */
		spin_lock_irq(&f->lock);
		f->dl_ms = 0;
		spin_unlock_irq(&f->lock);
		return 0;
	}
	if (argc >= 4 && argc <= 5) {
		if (smr_fault_parse_range(f, "delay", argv + 1, &r) ||
		    smr_fault_u64(f, "delay: the milliseconds", argv[3],
				  SMR_FAULT_MAX_DELAY_MS, &ms) ||
		    smr_fault_parse_dir(f, "delay", argc, argv, 4, &r))
			return -EINVAL;
		/* Under msg_lock: allocated once, freed with the table. */
		if (f->order_sectors && r.dir != SMR_FAULT_READ && !f->held) {
			u32 *held = kvcalloc(DIV_ROUND_UP_ULL(f->ti->len, f->order_sectors),
					     sizeof(*held), GFP_KERNEL);

			if (!held) {
				DMERR("%s: delay: no memory to keep each zone's writes in order",
				      smr_fault_dev(f));
				return -ENOMEM;
			}
			spin_lock_irq(&f->lock);
			f->held = held;
			spin_unlock_irq(&f->lock);
		}
		/*
		 * The worker that maps delayed bios when due, made once,
		 * before dl_ms lets any bio be delayed.
		 */
		if (smr_wq_once(&f->wq, &f->lock, "smr_fault_", f->ti)) {
			DMERR("%s: delay: no memory for the worker that maps delayed I/O",
			      smr_fault_dev(f));
			return -ENOMEM;
		}
		spin_lock_irq(&f->lock);
		f->dl = r;
		f->dl_ms = ms;
		spin_unlock_irq(&f->lock);
		return 0;
	}
	DMERR("%s: delay: expected <start> <count> <ms> [read|write|rw], or off",
	      smr_fault_dev(f));
	return -EINVAL;
}

/* "faults": what is set, one line (docs: "Media faults"). */
static int smr_faults_show(struct smr_faults *f, char *result,
			   unsigned int maxlen)
{
	unsigned int sz = 0;
	struct smr_fault_range tr, dl;
	u32 left, ppm, ms;
	u64 seed;
	u8 mode;

	spin_lock_irq(&f->lock);
	mode = f->tr_mode;
	tr = f->tr;
	left = f->tr_left;
	ppm = f->tr_ppm;
	seed = f->tr_seed;
	dl = f->dl;
	ms = f->dl_ms;
	spin_unlock_irq(&f->lock);

	DMEMIT("badblocks %d on_write %s", READ_ONCE(f->bb.count),
	       READ_ONCE(f->bb_fail_writes) ? "fail" : "remap");
	if (mode == SMR_TRANSIENT_NEXT)
		DMEMIT(" transient next %llu %llu %u %s", (u64)tr.start,
		       (u64)(tr.end - tr.start), left, smr_dir_words[tr.dir]);
	else if (mode == SMR_TRANSIENT_PROB)
		DMEMIT(" transient prob %llu %llu %u %llu %s", (u64)tr.start,
		       (u64)(tr.end - tr.start), ppm, seed,
		       smr_dir_words[tr.dir]);
	else
		DMEMIT(" transient off");
	if (ms)
		DMEMIT(" delay %llu %llu %u %s", (u64)dl.start,
		       (u64)(dl.end - dl.start), ms, smr_dir_words[dl.dir]);
	else
		DMEMIT(" delay off");
	return 1;
}

bool smr_faults_is_message(const char *word)
{
	return !strcasecmp(word, "badblocks") || !strcasecmp(word, "transient") ||
	       !strcasecmp(word, "delay") || !strcasecmp(word, "faults");
}
EXPORT_SYMBOL_GPL(smr_faults_is_message);

int smr_faults_message(struct smr_faults *f, unsigned int argc, char **argv,
		       char *result, unsigned int maxlen)
{
	int ret;

	mutex_lock(&f->msg_lock);
	if (!strcasecmp(argv[0], "badblocks"))
		ret = smr_bb_message(f, argc, argv, result, maxlen);
	else if (!strcasecmp(argv[0], "transient"))
		ret = smr_transient_message(f, argc, argv);
	else if (!strcasecmp(argv[0], "delay"))
		ret = smr_delay_message(f, argc, argv);
	else if (argc == 1)
		ret = smr_faults_show(f, result, maxlen);
	else {
		DMERR("%s: faults takes no arguments", smr_fault_dev(f));
		ret = -EINVAL;
	}
	smr_faults_rearm(f);
	mutex_unlock(&f->msg_lock);
	return ret;
}
EXPORT_SYMBOL_GPL(smr_faults_message);

/* ------------------------------------------------------------ status --- */

void smr_faults_counts(struct smr_faults *f, struct smr_fault_counts *c)
{
	c->bad_reads = atomic64_read(&f->stats.bad_reads);
	c->bad_writes = atomic64_read(&f->stats.bad_writes);
	c->remaps = atomic64_read(&f->stats.remaps);
	c->transient = atomic64_read(&f->stats.transient);
	c->delayed = atomic64_read(&f->stats.delayed);
}
EXPORT_SYMBOL_GPL(smr_faults_counts);

void smr_faults_status(struct smr_faults *f, char *result, unsigned int maxlen,
		       unsigned int *szp)
{
	struct smr_fault_counts c;
	unsigned int sz = *szp;

	smr_faults_counts(f, &c);
	DMEMIT(" %llu %llu %llu %llu %llu", c.bad_reads, c.bad_writes,
	       c.remaps, c.transient, c.delayed);
	*szp = sz;
}
EXPORT_SYMBOL_GPL(smr_faults_status);

void smr_faults_clear_stats(struct smr_faults *f)
{
	atomic64_set(&f->stats.bad_reads, 0);
	atomic64_set(&f->stats.bad_writes, 0);
	atomic64_set(&f->stats.remaps, 0);
	atomic64_set(&f->stats.transient, 0);
	atomic64_set(&f->stats.delayed, 0);
}
EXPORT_SYMBOL_GPL(smr_faults_clear_stats);
