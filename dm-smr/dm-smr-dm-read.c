// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: host reads. A read goes to the cache or to
 * its band, split in map() where the two meet; one a delay fault holds
 * (common/smr-faults.h) is aimed in map() too and sent from the fault
 * worker.
 */
#include "dm-smr-dm.h"

/*
 * Where a read goes: the cache or its band, whichever holds its first
 * block, and only as far as that holds the blocks after it; dm sends the
 * rest as another bio. In map() only: dm_accept_partial_bio() writes into
 * dm's own stack frame, which is gone once map() has returned. A read in
 * the cache holds its band (b->readers) until smr_dm_end_io(), so that
 * its slots are not cleaned and reused under it.
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

	spin_lock_irq(&sc->d.lock);
	run = smr_ext_lookup(b, osect >> 3, n, &slot);
	if (slot != SMR_SLOT_FREE)
		atomic_inc(&b->readers);
	dm->stats.host_read_sectors += (u64)run << 3;
	spin_unlock_irq(&sc->d.lock);

	if (run < n)
		dm_accept_partial_bio(bio, run << 3);
	bio_set_dev(bio, sc->d.bdev);
	if (slot != SMR_SLOT_FREE) {
		io->kind = SMR_IO_READ_CACHE;
		io->band = band;
		bio->bi_iter.bi_sector = smr_slot_sector_dm(dm, slot);
	} else {
		bio->bi_iter.bi_sector = smr_band_sector(dm, band) + osect;
	}
	return DM_MAPIO_REMAPPED;
}

/* Send a read smr_dm_read_map() aimed, from map() or from a worker. */
static int smr_dm_read_issue(struct smr_dm_target *sc, struct bio *bio,
			     struct smr_dm_io *io, bool in_map)
{
	if (sc->d.tm) {
		smr_tm_submit(sc->d.tm, &io->tm, bio, &sc->d.bs, sc->d.bdev,
			      bio->bi_iter.bi_sector,
			      smr_dm_tm_pos(sc->dm, bio->bi_iter.bi_sector));
		return DM_MAPIO_SUBMITTED;
	}
	return smr_dm_send(sc, bio, in_map);
}

/*
 * A host read, from map(), @io its per-bio data, reset. Without a
 * timing model or a write cache nothing holds it: dm sends it, as
 * dm-linear's, with no call past this one (a random 4 KiB read costs
 * about 19000 instructions in all, so 1 % is under 200: each call and
 * each dm_per_bio_data() counts).
 */
int smr_dm_read(struct smr_dm_target *sc, struct bio *bio, struct smr_dm_io *io)
{
	int r = smr_dm_read_map(sc, bio, io);

	if (r != DM_MAPIO_REMAPPED || likely(!sc->d.tm && !sc->d.wc))
		return r;
	return smr_dm_read_issue(sc, bio, io, true);
}

/*
 * A read a delay fault holds (smr_faults_map() said SMR_FAULT_HOLD): it
 * is split and aimed here, in map(), and held aimed; the fault worker
 * sends it (smr_dm_read_delayed()). Its band stays held meanwhile if it
 * reads the cache, so the slots it reads are the ones it was aimed at.
 */
int smr_dm_read_hold(struct smr_dm_target *sc, struct bio *bio)
{
	struct smr_dm_io *io = dm_per_bio_data(bio, sizeof(struct smr_dm_io));
	int r;

	smr_dm_io_reset(io);
	smr_dm_touch(sc->dm);
	r = smr_dm_read_map(sc, bio, io);
	if (r != DM_MAPIO_REMAPPED)
		return r;
	smr_faults_hold(&sc->t.faults, bio);
	return DM_MAPIO_SUBMITTED;
}

void smr_dm_read_delayed(struct dm_target *ti, struct bio *bio)
{
	smr_dm_read_issue(smr_dmt(ti->private), bio,
			  dm_per_bio_data(bio, sizeof(struct smr_dm_io)), false);
}
