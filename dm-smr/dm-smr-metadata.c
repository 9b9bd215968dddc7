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

/*
 * Set up the store for @mode's @nr_blocks metadata blocks. On failure the
 * caller still calls smr_md_exit().
 */
int smr_md_init(struct smr_drive *d, const struct smr_md_mode *mode,
		u32 nr_blocks)
{
	struct smr_slots *md = &d->md;
	int ret;

	d->md_mode = mode;
	md->bdev = d->bdev;
	md->name = d->name;
	md->what = "zone table block";
	md->magic = SMR_ZT_MAGIC;
	md->nr_blocks = nr_blocks;
	md->state_lock = &d->lock;
	md->ops = &mode->blocks;
	md->owner = d;
	d->data_start = smr_slots_sectors(nr_blocks);
	ret = smr_slots_init(md);
	if (!ret)
		d->mem_bytes += smr_slots_mem_bytes(md);
	return ret;
}

void smr_md_exit(struct smr_drive *d)
{
	smr_slots_exit(&d->md);
}

/*
 * Make every state change so far durable. Safe to call from the commit
 * worker, a message or suspend; commits are serialised.
 */
int smr_md_commit(struct smr_drive *d)
{
	u64 t0 = trace_smr_md_commit_enabled() ? ktime_get_ns() : 0;
	int ret = smr_slots_commit(&d->md);

	if (t0)
		trace_smr_md_commit(d->label, READ_ONCE(d->md.gen), ret,
				    ktime_get_ns() - t0);

	if (!ret) {
		spin_lock_irq(&d->lock);
		d->commits++;
		spin_unlock_irq(&d->lock);
	}
	return ret;
}

/* Read every metadata block back into the mode's memory. */
int smr_md_load(struct smr_drive *d)
{
	int ret;

	mutex_lock(&d->md.commit_lock);
	ret = smr_slots_load(&d->md);
	mutex_unlock(&d->md.commit_lock);
	return ret;
}

static void smr_fill_super(struct smr_drive *d, struct smr_super *sb)
{
	memset(sb, 0, sizeof(*sb));
	sb->version = cpu_to_le32(SMR_VERSION);
	sb->mode = cpu_to_le32(d->mode);
	sb->format_id = cpu_to_le64(d->md.format_id);
	sb->dev_sectors = cpu_to_le64(d->dev_sectors);
	sb->zone_sectors = cpu_to_le64(d->sb_geo.zone_sectors);
	sb->zone_capacity = cpu_to_le64(d->sb_geo.zone_capacity);
	sb->nr_zones = cpu_to_le32(d->sb_geo.nr_zones);
	sb->nr_conv = cpu_to_le32(d->sb_geo.nr_conv);
	sb->table_blocks = cpu_to_le32(d->md.nr_blocks);
	sb->zones_per_block = cpu_to_le32(SMR_ZT_PER_BLOCK);
	sb->data_start = cpu_to_le64(d->data_start);
	sb->cache_sectors = cpu_to_le64(d->sb_geo.cache_sectors);
}

static int smr_format(struct smr_drive *d)
{
	int ret;

	/* Invalidate the old superblock before anything else changes. */
	ret = smr_sb_invalidate(&d->md);
	if (ret)
		return ret;
	/* Every block is written; stale slots carry another format_id. */
	smr_slots_new_format(&d->md, true);
	d->md_mode->reset(d);
	ret = smr_slots_write_all(&d->md);
	if (ret)
		return ret;
	spin_lock_irq(&d->lock);
	d->commits++;	/* as a commit of every block */
	spin_unlock_irq(&d->lock);
	smr_fill_super(d, page_address(d->md.pages[0]));
	return smr_sb_write(&d->md, SMR_SB_MAGIC);
}

/*
 * Read the superblock; format an all-zero (new) device or when asked to;
 * otherwise check the table's geometry against the disk and, unless the
 * mode loads at its first resume, load the metadata blocks. Sets
 * d->error on failure.
 */
int smr_md_load_or_format(struct smr_drive *d, bool format)
{
	struct smr_super *sb = page_address(d->md.pages[0]);
	int ret;

	ret = smr_sb_open(&d->md, SMR_SB_MAGIC, format,
			  "Backing device holds no valid dm-smr superblock; add 'format' to initialise it (destroys its data)",
			  &d->error);
	if (ret < 0)
		return ret;
	if (ret) {
		ret = smr_format(d);
		if (ret)
			d->error = "Cannot format the backing device";
		return ret;
	}
	if (le32_to_cpu(sb->version) != SMR_VERSION) {
		d->error = "Unsupported on-disk format version";
		return -EINVAL;
	}
	if (le32_to_cpu(sb->mode) != d->mode ||
	    le64_to_cpu(sb->dev_sectors) != d->dev_sectors ||
	    le64_to_cpu(sb->zone_sectors) != d->sb_geo.zone_sectors ||
	    le64_to_cpu(sb->zone_capacity) != d->sb_geo.zone_capacity ||
	    le32_to_cpu(sb->nr_zones) != d->sb_geo.nr_zones ||
	    le32_to_cpu(sb->nr_conv) != d->sb_geo.nr_conv ||
	    le32_to_cpu(sb->table_blocks) != d->md.nr_blocks ||
	    le32_to_cpu(sb->zones_per_block) != SMR_ZT_PER_BLOCK ||
	    le64_to_cpu(sb->data_start) != d->data_start ||
	    le64_to_cpu(sb->cache_sectors) != d->sb_geo.cache_sectors) {
		DMERR("on-disk geometry: mode %u, %llu sectors, zone/band sectors %llu, zone_capacity %llu, conv_zones %u, cache_sectors %llu",
		      le32_to_cpu(sb->mode), le64_to_cpu(sb->dev_sectors),
		      le64_to_cpu(sb->zone_sectors),
		      le64_to_cpu(sb->zone_capacity), le32_to_cpu(sb->nr_conv),
		      le64_to_cpu(sb->cache_sectors));
		d->error = "Table geometry differs from the on-disk superblock (see the kernel log); use the matching table or add 'format' (destroys data)";
		return -EINVAL;
	}
	d->md.format_id = le64_to_cpu(sb->format_id);

	if (d->md_mode->load_at_resume)
		return 0;
	ret = smr_md_load(d);
	if (ret)
		d->error = "Cannot load the zone table";
	return ret;
}
