// SPDX-License-Identifier: GPL-2.0
/*
 * What host-managed mode persists: one struct smr_zt_rec per zone
 * (smr-ondisk.h), SMR_ZT_PER_BLOCK to a metadata block, handed to the
 * metadata layer (dm-smr-metadata.c) as a struct smr_md_mode.
 */
#include "dm-smr.h"

u32 smr_hm_md_blocks(u32 nr_zones)
{
	return DIV_ROUND_UP(nr_zones, (u32)SMR_ZT_PER_BLOCK);
}

static u32 smr_hm_md_records(void *owner, u32 k)
{
	struct smr_zoned *zc = smr_zoned_of(owner);

	return min_t(u32, SMR_ZT_PER_BLOCK, zc->geo.nr_zones - k * SMR_ZT_PER_BLOCK);
}

/* The condition a zone is persisted with; see struct smr_zt_rec. */
static u8 smr_persist_cond(struct smr_zone *z, u32 cap)
{
	switch (z->cond) {
	case BLK_ZONE_COND_NOT_WP:
	case BLK_ZONE_COND_READONLY:
	case BLK_ZONE_COND_OFFLINE:
		return z->cond;
	case BLK_ZONE_COND_FULL:
		if (z->finished || z->dend >= cap)
			return BLK_ZONE_COND_FULL;
		fallthrough;
	default:
		return z->dend ? BLK_ZONE_COND_CLOSED : BLK_ZONE_COND_EMPTY;
	}
}

/* zc->d.lock held: the records of block @k from the zone array. */
static void smr_hm_md_build(void *owner, u32 k, void *buf)
{
	struct smr_zoned *zc = smr_zoned_of(owner);
	struct smr_zt_rec *rec = buf + sizeof(struct smr_blk_header);
	u32 first = k * SMR_ZT_PER_BLOCK;
	u32 nr = smr_hm_md_records(owner, k);
	u32 i;

	for (i = 0; i < nr; i++) {
		struct smr_zone *z = &zc->zones[first + i];

		rec[i].dend = cpu_to_le32(z->dend);
		rec[i].cond = smr_persist_cond(z, smr_zone_cap(zc, first + i));
	}
}

/* Block @k back into the zone array; nothing is in flight yet. */
static int smr_hm_md_load(void *owner, u32 k, const void *buf)
{
	struct smr_zoned *zc = smr_zoned_of(owner);
	const struct smr_zt_rec *rec = buf + sizeof(struct smr_blk_header);
	u32 first = k * SMR_ZT_PER_BLOCK;
	u32 nr = smr_hm_md_records(owner, k);
	u32 i;

	for (i = 0; i < nr; i++) {
		u32 zno = first + i;
		struct smr_zone *z = &zc->zones[zno];
		u32 cap = smr_zone_cap(zc, zno);
		u32 dend = le32_to_cpu(rec[i].dend);
		u8 cond = rec[i].cond;

		z->wp = z->dend = 0;
		z->finished = 0;
		if (smr_zone_is_conv(zc, zno)) {
			z->cond = BLK_ZONE_COND_NOT_WP;
			continue;
		}
		if (dend > cap)
			return -EUCLEAN;
		z->dend = dend;
		z->cond = cond;
		switch (cond) {
		case BLK_ZONE_COND_EMPTY:
			if (dend)
				return -EUCLEAN;
			z->wp = 0;
			break;
		case BLK_ZONE_COND_CLOSED:
			if (!dend)
				return -EUCLEAN;
			z->wp = dend;
			break;
		case BLK_ZONE_COND_FULL:
			z->wp = cap;
			z->finished = dend < cap;
			break;
		case BLK_ZONE_COND_READONLY:
		case BLK_ZONE_COND_OFFLINE:
			z->wp = dend;
			break;
		default:
			return -EUCLEAN;
		}
	}
	return 0;
}

/* A new format: every zone empty (conventional ones have no pointer). */
static void smr_hm_md_reset(struct smr_drive *d)
{
	struct smr_zoned *zc = smr_zoned_of(d);
	u32 z;

	for (z = 0; z < zc->geo.nr_zones; z++) {
		struct smr_zone *zone = &zc->zones[z];

		zone->wp = zone->dend = 0;
		zone->finished = 0;
		zone->cond = smr_zone_is_conv(zc, z) ? BLK_ZONE_COND_NOT_WP :
			BLK_ZONE_COND_EMPTY;
	}
}

const struct smr_md_mode smr_hm_md_mode = {
	.blocks = {
		.build = smr_hm_md_build,
		.records = smr_hm_md_records,
		.load = smr_hm_md_load,
		.data_home = smr_md_data_home,
	},
	.reset = smr_hm_md_reset,
	.load_at_resume = false,
};

/* Zone @zno changed: its block goes out with the next commit. */
void smr_hm_zone_dirty(struct smr_zoned *zc, u32 zno)
{
	smr_slots_mark_dirty(&zc->d.md, zno / SMR_ZT_PER_BLOCK);
}
