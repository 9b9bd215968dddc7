// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat: the device-mapper target. Table parsing (the table line is
 * in dm-caveat.h), the constructor and destructor, preresume (the damage
 * map is loaded when a table first goes live) and postsuspend (it is
 * committed), and module init. Status and messages are
 * dm-caveat-status.c, the I/O path dm-caveat-io.c, the damage set
 * dm-caveat-damage.c, its persistence dm-caveat-md.c.
 */
#include <linux/module.h>
#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/gfp.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "dm-caveat.h"
#include "dm-caveat-test.h"

#define CREATE_TRACE_POINTS
#include "dm-caveat-trace.h"

/* --------------------------------------------------------------- ctr --- */

static int cv_parse_block_size(const char *s, u64 *v)
{
	if (smr_parse_u64(s, v) || *v < CV_MIN_BLOCK_SIZE ||
	    *v > CV_MAX_BLOCK_SIZE || !is_power_of_2(*v))
		return -EINVAL;
	return 0;
}

/* Optional arguments, in CV_OPT_* bit order. */
static const char *const cv_odr_words[] = { "error", "zero", NULL };

static const struct smr_opt cv_opts[] = {
	{ .name = "block_size", .parse = cv_parse_block_size,
	  .bad = "block_size must be a power of two from 512 to 65536 bytes" },
	{ .name = "unshingled", .max = U64_MAX,
	  .bad = "Invalid unshingled (a number of blocks)" },
	{ .name = "on_damaged_read", .words = cv_odr_words,
	  .bad = "on_damaged_read must be error or zero" },
	{ .name = "scramble", .flag = true },
	{ .name = "format", .flag = true },
	{ .name = "write_cache_kib", .max = CV_WC_MAX_BYTES >> 10,
	  .bad = "write_cache_kib must be a size in KiB from 0 to 65536" },
	/* Its old spelling, in blocks: printed back as write_cache_kib. */
	{ .name = "write_cache", .max = U32_MAX,
	  .bad = "Invalid write_cache (write_cache_kib's old spelling: a number of blocks)" },
};

static const struct smr_opt_table cv_opt_table = {
	.opts = cv_opts,
	.nr = ARRAY_SIZE(cv_opts),
	.count_error = "Invalid number of optional arguments",
	.max_words = 10,
	.unknown_error = "Unknown optional argument (block_size, unshingled, on_damaged_read, scramble, format, write_cache_kib)",
	.group = SMR_TM_GROUP,
};

static int cv_parse_opts(struct cv_target *sc, struct dm_arg_set *as,
			 struct smr_tm_params *tp)
{
	u64 v[ARRAY_SIZE(cv_opts)];
	unsigned long given;
	int ret;

	BUILD_BUG_ON(CV_OPT_FORMAT != 1 << 4 || CV_OPT_SCRAMBLE != 1 << 3 ||
		     CV_OPT_WRITE_CACHE != 1 << 5);
	ret = smr_parse_opts(&cv_opt_table, as, &given, v, &sc->ti->error);
	if (ret)
		return ret;
	if (given & CV_OPT_WRITE_CACHE_BLOCKS) {
		u64 bytes = v[6] * (given & CV_OPT_BLOCK_SIZE ? v[0] : sc->block_size);

		if (given & CV_OPT_WRITE_CACHE) {
			sc->ti->error = "write_cache_kib and write_cache (its old spelling, in blocks) are one option: give one";
			return -EINVAL;
		}
		if (bytes > CV_WC_MAX_BYTES) {
			sc->ti->error = "write_cache too large (at most 64 MiB of blocks)";
			return -EINVAL;
		}
		/* 512-byte blocks: an odd count rounds up to whole KiB. */
		v[5] = DIV_ROUND_UP(bytes, 1024);
		given = (given & ~CV_OPT_WRITE_CACHE_BLOCKS) | CV_OPT_WRITE_CACHE;
	}
	sc->opt_mask = given;
	if (given & CV_OPT_BLOCK_SIZE)
		sc->block_size = v[0];
	if (given & CV_OPT_UNSHINGLED)
		sc->unshingled = v[1];
	if (given & CV_OPT_ODR)
		sc->zero_reads = v[2];
	sc->scramble = given & CV_OPT_SCRAMBLE;
	sc->format = given & CV_OPT_FORMAT;
	if (given & CV_OPT_WRITE_CACHE)
		sc->wc_kib = v[5];
	return smr_tm_parse(as, SMR_TM_KEYS_NO_CACHE, tp, &sc->ti->error);
}

static int cv_check_geometry(struct cv_target *sc)
{
	struct dm_target *ti = sc->ti;
	sector_t bsect = sc->block_size >> SECTOR_SHIFT;

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
	if (sc->nr_blocks > CV_MAX_BLOCKS) {
		ti->error = "Device too large for the damage map (at most 2^42 - 2^15 blocks)";
		return -EINVAL;
	}
	if (cv_md_pages(sc->nr_blocks) > (U32_MAX >> 2)) {
		ti->error = "Device too large";
		return -EINVAL;
	}
	sc->wc_max = (sc->wc_kib << 10) >> ilog2(sc->block_size);
	if (sc->wc_kib && !sc->wc_max) {
		ti->error = "write_cache_kib is less than one block";
		return -EINVAL;
	}
	sc->md_pages = cv_md_pages(sc->nr_blocks);
	sc->nr_chunks = DIV_ROUND_UP_ULL(sc->nr_blocks, CV_CHUNK_BLOCKS);
	/*
	 * Where the data starts depends on the superblock (version 1 has no
	 * journal): cv_md_load_or_format() sets it and checks the backing
	 * device's size.
	 */
	return 0;
}

static void cv_free(struct cv_target *sc)
{
	/* Nothing is in flight by now: no write waits for memory. */
	cancel_delayed_work_sync(&sc->nomem_dwork);
	/* A cut's work queues the worker: before the queue goes. */
	smr_power_exit(&sc->power);
	if (sc->wq)
		destroy_workqueue(sc->wq);
	bioset_exit(&sc->bs);
	bioset_exit(&sc->wc_bs);
	cv_md_exit(sc);
	smr_tm_destroy(sc->tm);
	if (sc->jr_page)
		__free_page(sc->jr_page);
	if (sc->scramble_page)
		__free_page(sc->scramble_page);
	cv_free_chunks(sc);
	free_percpu(sc->plain);
	smr_claim_release(&sc->claim);
	if (sc->dev)
		dm_put_device(sc->ti, sc->dev);
	smr_faults_exit(&sc->faults);
	kfree(sc);
}

/* A media fault fired: traced in this module's system (caveat:cv_fault). */
static void cv_fault_traced(const char *dev, int kind, u64 sector, u32 nsect,
			    bool write)
{
	trace_cv_fault(dev, kind, sector, nsect, write);
}

static int cv_ctr(struct dm_target *ti, unsigned int argc, char **argv)
{
	struct smr_tm_params tp;
	struct dm_arg_set as = { .argc = argc, .argv = argv };
	struct cv_target *sc;
	int ret;

	sc = smr_ctr_alloc(ti, argc, 3, "Usage: <dev> <did> <dnor> [<#opt_args> <opt_args>...]",
			   sizeof(*sc));
	if (IS_ERR(sc))
		return PTR_ERR(sc);
	sc->ti = ti;
	ret = smr_faults_init(&sc->faults, ti, cv_map_bio, cv_fault_traced);
	if (ret) {
		ti->error = "Cannot allocate the media fault state";
		goto bad;
	}
	/*
	 * Named from the start: the format's commits are traced too, and the
	 * netlink registry (cv_nl_register()) lists it by this name.
	 */
	smr_genl_dev_name(ti, sc->nl.name, &sc->nl.devt);
	sc->block_size = 4096;
	spin_lock_init(&sc->lock);
	mutex_init(&sc->commit_mutex);
	INIT_LIST_HEAD(&sc->inflight);
	bio_list_init(&sc->wal_bios);
	bio_list_init(&sc->commit_bios);
	bio_list_init(&sc->flush_bios);
	bio_list_init(&sc->nomem_bios);
	bio_list_init(&sc->held_bios);
	sc->wc_tree = RB_ROOT_CACHED;
	atomic_set(&sc->wc_issued, 0);
	init_waitqueue_head(&sc->wc_wait);
	INIT_WORK(&sc->work, cv_work);
	INIT_DELAYED_WORK(&sc->nomem_dwork, cv_nomem_work);
	cv_power_setup(sc);

	ret = dm_get_device(ti, dm_shift_arg(&as), dm_table_get_mode(ti->table),
			    &sc->dev);
	if (ret) {
		ti->error = "Cannot open the backing device";
		goto bad;
	}
	ret = -EINVAL;
	if (smr_parse_u64(dm_shift_arg(&as), &sc->did)) {
		ti->error = "Invalid DID (a number of blocks)";
		goto bad;
	}
	if (smr_parse_u64(dm_shift_arg(&as), &sc->dnor)) {
		ti->error = "Invalid DNOR (a number of blocks)";
		goto bad;
	}
	ret = cv_parse_opts(sc, &as, &tp);
	if (ret)
		goto bad;
	ret = cv_check_geometry(sc);
	if (ret)
		goto bad;
	ret = smr_claim_backing(&sc->claim, ti, sc->dev->bdev, sc->format,
				&ti->error);
	if (ret)
		goto bad;
	/*
	 * The cache completes writes before they are durable: only a device
	 * that advertises a volatile cache may, and dm advertises one when
	 * the backing device has one. Scramble and the timing model order
	 * and time the writes themselves; the cache would reorder them.
	 */
	ret = -EINVAL;
	if (sc->wc_max && !bdev_write_cache(sc->dev->bdev)) {
		ti->error = "write_cache_kib needs a backing device with a volatile write cache";
		goto bad;
	}
	if (sc->wc_max && (sc->scramble || tp.given)) {
		ti->error = "write_cache_kib cannot be combined with scramble or timing";
		goto bad;
	}
	if (tp.given) {
		sc->tm = smr_tm_create(&tp, ti->len, &ti->error);
		if (IS_ERR(sc->tm)) {
			ret = PTR_ERR(sc->tm);
			sc->tm = NULL;
			goto bad;
		}
	}

	ret = -ENOMEM;
	sc->chunks = kvcalloc(sc->nr_chunks, sizeof(*sc->chunks), GFP_KERNEL);
	if (!sc->chunks) {
		ti->error = "Cannot allocate the damage map";
		goto bad;
	}
	sc->plain = alloc_percpu(struct smr_io_count);
	if (!sc->plain) {
		ti->error = "Cannot allocate the write counters";
		goto bad;
	}
	ret = cv_md_init(sc);
	sc->jr_page = alloc_page(GFP_KERNEL);
	if (ret || !sc->jr_page) {
		ret = -ENOMEM;
		ti->error = "Cannot allocate metadata buffers";
		goto bad;
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
	if (sc->wc_max) {
		ret = bioset_init(&sc->wc_bs, BIO_POOL_SIZE,
				  offsetof(struct cv_wc, bio), BIOSET_NEED_BVECS);
		if (ret) {
			ti->error = "Cannot allocate the write cache's bio set";
			goto bad;
		}
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
	smr_faults_per_io(ti);
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

	/* A drive without power stays so: its I/O fails, nothing loads. */
	if (sc->loaded || smr_power_is_cut(&sc->power))
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

/* The timing model: nothing waits for it while suspending (as in dm-smr). */
static void cv_presuspend(struct dm_target *ti)
{
	struct cv_target *sc = ti->private;

	smr_faults_presuspend(&sc->faults);
	if (sc->tm)
		smr_tm_set_quiet(sc->tm, true);
}

static void cv_resume(struct dm_target *ti)
{
	struct cv_target *sc = ti->private;

	smr_faults_resume(&sc->faults);
	/* Not when the power is cut, even by a cut racing this resume. */
	if (sc->tm)
		smr_power_if_on(&sc->power, smr_tm_wake, sc->tm);
}

static void cv_postsuspend(struct dm_target *ti)
{
	struct cv_target *sc = ti->private;

	/*
	 * No host I/O is in flight now, but the write cache's copies may be:
	 * the worker issues the last of them, and they reach their homes
	 * before the damage map is made durable.
	 */
	flush_workqueue(sc->wq);
	cv_wc_drain(sc);
	cv_commit(sc);
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
	.version = {0, 3, 0},
	.module = THIS_MODULE,
	.ctr = cv_ctr,
	.dtr = cv_dtr,
	.map = cv_map,
	.end_io = cv_end_io,
	.preresume = cv_preresume,
	.presuspend = cv_presuspend,
	.presuspend_undo = cv_resume,
	.postsuspend = cv_postsuspend,
	.resume = cv_resume,
	.status = cv_status,
	.message = cv_message,
	.iterate_devices = cv_iterate_devices,
	.io_hints = cv_io_hints,
};

static int __init cv_init(void)
{
	int ret;

	cv_test_hooks_init();
	ret = smr_genl_register_target(&cv_target_type, cv_nl_init, cv_nl_exit);
	if (ret)
		cv_test_hooks_exit();
	return ret;
}
module_init(cv_init);

static void __exit cv_exit(void)
{
	smr_genl_unregister_target(&cv_target_type, cv_nl_exit);
	cv_test_hooks_exit();
}
module_exit(cv_exit);

MODULE_DESCRIPTION(DM_NAME " target emulating a Caveat Scriptor shingled disk");
MODULE_LICENSE("GPL");
