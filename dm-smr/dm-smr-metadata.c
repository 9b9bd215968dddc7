// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr on-disk metadata: the superblock, and the metadata blocks each
 * mode persists, kept crash-safe by the shared two-slot store
 * (common/smr-slots.c). The format is in smr-ondisk.h.
 *
 * This layer knows nothing of modes. A mode describes what it persists
 * with a struct smr_md_mode: how many blocks, how to fill one from memory
 * (records out), how to take one back at load (records in), and the state
 * of a fresh format. Host-managed mode's is in dm-smr-hm-md.c,
 * drive-managed mode's in dm-smr-dm-md.c.
 *
 * Format order: the old superblock is zeroed first, then every metadata
 * block is written and flushed, then the new superblock (magic last, FUA).
 * A crash while formatting leaves an unformatted device, never a mix.
 */
#include <linux/slab.h>

#include "dm-smr.h"
#include "dm-smr-trace.h"

sector_t smr_data_sectors(struct smr_target *sc)
{
	return ((sector_t)sc->nr_conv << sc->zone_shift) +
		(sector_t)(sc->nr_zones - sc->nr_conv) * sc->zone_capacity;
}

/*
 * Set up the store for @mode's @nr_blocks metadata blocks. On failure the
 * caller still calls smr_md_exit().
 */
int smr_md_init(struct smr_target *sc, const struct smr_md_mode *mode,
		u32 nr_blocks)
{
	struct smr_slots *md = &sc->md;
	int ret;

	sc->md_mode = mode;
	md->bdev = sc->bdev;
	md->name = sc->name;
	md->what = "zone table block";
	md->magic = SMR_ZT_MAGIC;
	md->nr_blocks = nr_blocks;
	md->state_lock = &sc->lock;
	md->ops = &mode->blocks;
	md->owner = sc;
	sc->data_start = smr_slots_sectors(nr_blocks);
	ret = smr_slots_init(md);
	if (!ret)
		sc->mem_bytes += smr_slots_mem_bytes(md);
	return ret;
}

void smr_md_exit(struct smr_target *sc)
{
	smr_slots_exit(&sc->md);
}

/*
 * Make every state change so far durable. Safe to call from the commit
 * worker, a message or suspend; commits are serialised.
 */
int smr_md_commit(struct smr_target *sc)
{
	u64 t0 = trace_smr_md_commit_enabled() ? ktime_get_ns() : 0;
	int ret = smr_slots_commit(&sc->md);

	if (t0)
		trace_smr_md_commit(sc->label, READ_ONCE(sc->md.gen), ret,
				    ktime_get_ns() - t0);

	if (!ret) {
		spin_lock_irq(&sc->lock);
		sc->stats.commits++;
		spin_unlock_irq(&sc->lock);
	}
	return ret;
}

/* Read every metadata block back into the mode's memory. */
int smr_md_load(struct smr_target *sc)
{
	int ret;

	mutex_lock(&sc->md.commit_lock);
	ret = smr_slots_load(&sc->md);
	mutex_unlock(&sc->md.commit_lock);
	return ret;
}

static void smr_fill_super(struct smr_target *sc, struct smr_super *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->version = cpu_to_le32(SMR_VERSION);
	sb->mode = cpu_to_le32(sc->mode);
	sb->format_id = cpu_to_le64(sc->md.format_id);
	sb->dev_sectors = cpu_to_le64(sc->dev_sectors);
	sb->zone_sectors = cpu_to_le64(sc->zone_sectors);
	sb->zone_capacity = cpu_to_le64(sc->zone_capacity);
	sb->nr_zones = cpu_to_le32(sc->nr_zones);
	sb->nr_conv = cpu_to_le32(sc->nr_conv);
	sb->table_blocks = cpu_to_le32(sc->md.nr_blocks);
	sb->zones_per_block = cpu_to_le32(SMR_ZT_PER_BLOCK);
	sb->data_start = cpu_to_le64(sc->data_start);
	sb->cache_sectors = cpu_to_le64(sc->cache_sectors);
}

static int smr_format(struct smr_target *sc)
{
	int ret;

	/* Invalidate the old superblock before anything else changes. */
	ret = smr_sb_invalidate(&sc->md);
	if (ret)
		return ret;
	/* Every block is written; stale slots carry another format_id. */
	smr_slots_new_format(&sc->md, true);
	sc->md_mode->reset(sc);
	ret = smr_slots_write_all(&sc->md);
	if (ret)
		return ret;
	spin_lock_irq(&sc->lock);
	sc->stats.commits++;	/* as a commit of every block */
	spin_unlock_irq(&sc->lock);
	smr_fill_super(sc, page_address(sc->md.pages[0]));
	return smr_sb_write(&sc->md, SMR_SB_MAGIC);
}

/*
 * Read the superblock; format an all-zero (new) device or when asked to;
 * otherwise check the table's geometry against the disk and, unless the
 * mode loads at its first resume, load the metadata blocks. Sets
 * sc->error on failure.
 */
int smr_md_load_or_format(struct smr_target *sc)
{
	struct smr_super *sb = page_address(sc->md.pages[0]);
	int ret;

	ret = smr_sb_open(&sc->md, SMR_SB_MAGIC, sc->format,
			  "Backing device holds no valid dm-smr superblock; add 'format' to initialise it (destroys its data)",
			  &sc->error);
	if (ret < 0)
		return ret;
	if (ret) {
		ret = smr_format(sc);
		if (ret)
			sc->error = "Cannot format the backing device";
		return ret;
	}
	if (le32_to_cpu(sb->version) != SMR_VERSION) {
		sc->error = "Unsupported on-disk format version";
		return -EINVAL;
	}
	if (le32_to_cpu(sb->mode) != sc->mode ||
	    le64_to_cpu(sb->dev_sectors) != sc->dev_sectors ||
	    le64_to_cpu(sb->zone_sectors) != sc->zone_sectors ||
	    le64_to_cpu(sb->zone_capacity) != sc->zone_capacity ||
	    le32_to_cpu(sb->nr_zones) != sc->nr_zones ||
	    le32_to_cpu(sb->nr_conv) != sc->nr_conv ||
	    le32_to_cpu(sb->table_blocks) != sc->md.nr_blocks ||
	    le32_to_cpu(sb->zones_per_block) != SMR_ZT_PER_BLOCK ||
	    le64_to_cpu(sb->data_start) != sc->data_start ||
	    le64_to_cpu(sb->cache_sectors) != sc->cache_sectors) {
		DMERR("on-disk geometry: mode %u, %llu sectors, zone/band sectors %llu, zone_capacity %llu, conv_zones %u, cache_sectors %llu",
		      le32_to_cpu(sb->mode), le64_to_cpu(sb->dev_sectors),
		      le64_to_cpu(sb->zone_sectors),
		      le64_to_cpu(sb->zone_capacity), le32_to_cpu(sb->nr_conv),
		      le64_to_cpu(sb->cache_sectors));
		sc->error = "Table geometry differs from the on-disk superblock (see the kernel log); use the matching table or add 'format' (destroys data)";
		return -EINVAL;
	}
	sc->md.format_id = le64_to_cpu(sb->format_id);

	if (sc->md_mode->load_at_resume)
		return 0;
	ret = smr_md_load(sc);
	if (ret)
		sc->error = "Cannot load the zone table";
	return ret;
}
