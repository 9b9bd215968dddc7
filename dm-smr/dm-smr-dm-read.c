// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: host reads. A read goes to the cache or to
 * its band, split in map() where the two meet; one a delay fault holds
 * (common/smr-faults.h) is aimed in map() too and sent from the fault
 * worker. Where a read goes, and the read in map(), are inline in
 * dm-smr-dm.h (smr_dm_read_map(), smr_dm_read()); here is what sends a
 * read the timing model or the write cache must see, and the delayed
 * reads.
 */
#include "dm-smr-dm.h"

/* Send a read smr_dm_read_map() aimed, from map() or from a worker. */
int smr_dm_read_issue(struct smr_dm_target *sc, struct bio *bio,
		      struct smr_dm_io *io, bool in_map)
{
	if (sc->d.tm) {
		/* Not reset in map() for a read (smr_dm_io_reset()). */
		smr_tm_bio_init(&io->tm);
		smr_tm_submit(sc->d.tm, &io->tm, bio, &sc->d.bs, sc->d.bdev,
			      bio->bi_iter.bi_sector,
			      smr_dm_tm_pos(sc->dm, bio->bi_iter.bi_sector));
		return DM_MAPIO_SUBMITTED;
	}
	return smr_dm_send(sc, bio, in_map);
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
