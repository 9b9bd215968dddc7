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
 * A read a delay fault holds (smr_faults_map() said SMR_FAULT_HOLD), from
 * map(), @io its per-bio data, reset: it is split and aimed here, in
 * map(), and held aimed; the fault worker sends it
 * (smr_dm_read_delayed()). Its band stays held meanwhile if it reads the
 * cache, so the slots it reads are the ones it was aimed at.
 */
int smr_dm_read_hold(struct smr_dm_target *sc, struct bio *bio,
		     struct smr_dm_io *io)
{
	int r;

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
