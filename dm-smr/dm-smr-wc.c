// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr-wc.c: the volatile write cache (dm-smr-wcache.h) in each mode.
 *
 * Host-managed: the engine's (smrhmN), as its zone state is. Every clone
 * the engine sends to the backing device goes through smr_hm_send(): a
 * plain write, placed at its write pointer already, is cached; a read
 * or a FUA write overlapping a cached one waits for it.
 * Drive-managed: the table's. Host reads, bypass writes and cache
 * writes go through smr_dm_send(); the cleaner drains the cache before
 * it reads a band (smr_dm_clean_band()).
 * In both, every metadata commit drains it first (smr_md_data_home(),
 * called by the slot store), so a commit never records data the backing
 * device does not have; flushes, FUA writes and suspend commit.
 */
#include <linux/slab.h>

#include "dm-smr-dm.h"

/*
 * The table's cache size: write_cache_kib <KiB>, or write_cache <MiB>,
 * its spelling before both targets' data caches took one unit. The
 * options' bits are @kib_bit and @mib_bit in *@given, their values @kib
 * and @mib (range-checked by the option table); on return the old
 * spelling's bit is folded into the new one's, so that the table line
 * prints write_cache_kib either way.
 */
int smr_wc_parse_opt(struct smr_table *t, unsigned long *given,
		     unsigned long kib_bit, unsigned long mib_bit, u64 kib,
		     u64 mib, char **error)
{
	if ((*given & kib_bit) && (*given & mib_bit)) {
		*error = "write_cache_kib and write_cache (its old spelling, in MiB) are one option: give one";
		return -EINVAL;
	}
	if (*given & mib_bit) {
		*given = (*given & ~mib_bit) | kib_bit;
		kib = mib << 10;
	}
	if (!(*given & kib_bit))
		return 0;
	if (kib & ((PAGE_SIZE >> 10) - 1)) {
		*error = "write_cache_kib must be a whole number of pages (a multiple of 4 KiB)";
		return -EINVAL;
	}
	t->wc_kib = kib;
	return 0;
}

int smr_wc_setup(struct smr_drive *d, u32 kib, char **error)
{
	struct smr_wc *wc;
	int ret;

	if (!kib)
		return 0;
	if (d->tm) {
		*error = "write_cache_kib cannot be combined with the timing model (its buffer_mib models a cache's time)";
		return -EINVAL;
	}
	wc = kzalloc(sizeof(*wc), GFP_KERNEL);
	if (!wc) {
		*error = "Cannot allocate the write cache";
		return -ENOMEM;
	}
	ret = smr_wc_init(wc, d->label, d->bdev, kib);
	if (ret) {
		kfree(wc);
		*error = "Cannot allocate the write cache (its pages are allocated when the table is loaded)";
		return ret;
	}
	d->wc = wc;
	/* Its pages are allocated now, and the pool's array. */
	d->mem_bytes += sizeof(*wc) + wc->max_bytes +
		(size_t)wc->pool_nr * sizeof(*wc->pool);
	return 0;
}

/* With nothing in flight: after the last commit, or a power cut. */
void smr_wc_teardown(struct smr_drive *d)
{
	if (!d->wc)
		return;
	smr_wc_exit(d->wc);
	kfree(d->wc);
	d->wc = NULL;
}

/*
 * The drive lost acknowledged writes: its power was cut, or its write
 * cache failed to put one on the disk. It commits nothing more, and the
 * next table over the backing device loads what the disk holds.
 */
bool smr_drive_lost(struct smr_drive *d)
{
	return smr_power_is_cut(&d->power) || (d->wc && smr_wc_failed(d->wc));
}

/* struct smr_slots_ops.data_home of both modes. */
int smr_md_data_home(void *owner)
{
	struct smr_drive *d = owner;

	return d->wc ? smr_wc_drain(d->wc) : 0;
}

/* ---------------------------------------------------------- host-managed */

static void smr_hm_wc_release(struct smr_wc_wait *w, blk_status_t sts)
{
	if (sts) {
		w->bio->bi_status = sts;
		bio_endio(w->bio);
		return;
	}
	submit_bio_noacct(w->bio);
}

/* Send an engine clone, prepared (smr_hm_prep()), to the backing device. */
void smr_hm_send(struct smr_hm_io *io)
{
	struct smr_wc *wc = io->zc->d.wc;

	if (wc) {
		io->wcw.release = smr_hm_wc_release;
		if (smr_wc_submit(wc, &io->clone, &io->wcw) != SMR_WC_PASS)
			return;
	}
	submit_bio_noacct(&io->clone);
}

/* --------------------------------------------------------- drive-managed */

/* A host bio remapped to the backing device: send it as dm would. */
static void smr_dm_wc_release(struct smr_wc_wait *w, blk_status_t sts)
{
	if (sts) {
		w->bio->bi_status = sts;
		bio_endio(w->bio);
		return;
	}
	dm_submit_bio_remap(w->bio, NULL);
}

/* A cache write's own clone (smr_dm_submit_cache()): its host bio is bi_private. */
static void smr_dm_wc_release_clone(struct smr_wc_wait *w, blk_status_t sts)
{
	if (sts) {
		w->bio->bi_status = sts;
		bio_endio(w->bio);
		return;
	}
	dm_submit_bio_remap(w->bio->bi_private, w->bio);
}

/*
 * Send a host bio remapped to the backing device (a read, or a bypass
 * write), from map() (@in_map: dm sends it when told to) or the worker.
 * Returns the DM_MAPIO_* value map() should return.
 */
int smr_dm_send(struct smr_dm_target *sc, struct bio *bio, bool in_map)
{
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));

	if (sc->d.wc) {
		io->wcw.release = smr_dm_wc_release;
		if (smr_wc_submit(sc->d.wc, bio, &io->wcw) != SMR_WC_PASS)
			return DM_MAPIO_SUBMITTED;
	}
	if (in_map)
		return DM_MAPIO_REMAPPED;
	dm_submit_bio_remap(bio, NULL);
	return DM_MAPIO_SUBMITTED;
}

/* Send a cache write's clone, aimed at its slots, for host bio @bio. */
void smr_dm_send_clone(struct smr_dm_target *sc, struct bio *bio,
		       struct bio *clone)
{
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));

	if (sc->d.wc) {
		io->wcw.release = smr_dm_wc_release_clone;
		if (smr_wc_submit(sc->d.wc, clone, &io->wcw) != SMR_WC_PASS)
			return;
	}
	dm_submit_bio_remap(bio, clone);
}

/* ------------------------------------------------------------- messages */

/* "write_cache": the cache's figures, one line (docs/dm-smr.rst). */
int smr_wc_message(struct smr_drive *d, unsigned int argc, char **argv,
		   char *result, unsigned int maxlen)
{
	if (argc != 1) {
		DMERR("%s: write_cache takes no arguments", d->name);
		return -EINVAL;
	}
	if (!d->wc) {
		DMERR("%s: write_cache: the table has none (table option write_cache_kib <KiB>)",
		      d->name);
		return -EINVAL;
	}
	smr_wc_emit(d->wc, result, maxlen);
	return 1;
}
