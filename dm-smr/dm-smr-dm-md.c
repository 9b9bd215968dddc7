// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: what it puts in the metadata blocks. It owns
 * their records, filling a block from memory, loading one back, and the
 * state of a new format, and hands them to the metadata layer
 * (dm-smr-metadata.c) as smr_dm_md_mode.
 *
 * Metadata (A/B slot commits through common/smr-slots.c; smr-ondisk.h):
 * table block 0 holds the intent, then one block per 254 cache slots
 * (sequence, block address, valid), then one per 508 bands (clean
 * sequence). A commit flushes the data first, so a record never claims a
 * slot whose data is not durable; slots whose writes are still in flight
 * are written as invalid.
 */
#include <linux/bitmap.h>
#include <linux/slab.h>

#include "dm-smr-dm.h"

/* Metadata blocks: the intent, the slot records, the clean sequences. */
u32 smr_dm_md_blocks(struct smr_dm *dm)
{
	return 1 + dm->slot_blocks +
		DIV_ROUND_UP(dm->nr_bands, (u32)SMR_BANDS_PER_BLOCK);
}

/* How many records table block @k holds. */
static u32 smr_dm_block_records(void *owner, u32 k)
{
	struct smr_dm_target *sc = smr_dmt_of(owner);
	struct smr_dm *dm = sc->dm;

	if (k == 0)
		return 1;
	if (k <= dm->slot_blocks)
		return min_t(u32, SMR_SLOTS_PER_BLOCK,
			     dm->nr_slots - (k - 1) * SMR_SLOTS_PER_BLOCK);
	k -= 1 + dm->slot_blocks;
	return min_t(u32, SMR_BANDS_PER_BLOCK,
		     dm->nr_bands - k * SMR_BANDS_PER_BLOCK);
}

/* The records of table block @k from memory (zeroed). sc->d.lock held. */
static void smr_dm_build_block(void *owner, u32 k, void *buf)
{
	struct smr_dm_target *sc = smr_dmt_of(owner);
	struct smr_dm *dm = sc->dm;
	void *rec = buf + SMR_DM_HDR;
	u32 nr = smr_dm_block_records(owner, k), i;

	if (k == 0) {
		struct smr_intent_rec *ir = rec;

		ir->state = cpu_to_le32(dm->intent_state);
		ir->band = cpu_to_le32(dm->intent_band);
		ir->seq = cpu_to_le64(dm->intent_seq);
	} else if (k <= dm->slot_blocks) {
		struct smr_slot_rec *sr = rec;
		u32 first = (k - 1) * SMR_SLOTS_PER_BLOCK;

		for (i = 0; i < nr; i++) {
			u32 s = first + i;
			u64 lba = dm->slot_lba[s];

			if (lba == SMR_LBA_FREE || test_bit(s, dm->slot_inflight))
				continue;
			sr[i].seq = cpu_to_le64(dm->slot_seq[s]);
			sr[i].lba = cpu_to_le32(lower_32_bits(lba));
			sr[i].flags = cpu_to_le32(SMR_SLOT_VALID |
				upper_32_bits(lba) << SMR_SLOT_LBA_HI_SHIFT);
		}
	} else {
		__le64 *cs = rec;
		u32 first = (k - 1 - dm->slot_blocks) * SMR_BANDS_PER_BLOCK;

		for (i = 0; i < nr; i++)
			cs[i] = cpu_to_le64(dm->bands[first + i].clean_seq);
	}
}

/* Load table block @k into the raw arrays; smr_dm_rebuild() follows. */
static int smr_dm_load_block(void *owner, u32 k, const void *buf)
{
	struct smr_dm_target *sc = smr_dmt_of(owner);
	struct smr_dm *dm = sc->dm;
	const void *rec = buf + SMR_DM_HDR;
	u32 nr = smr_dm_block_records(owner, k), i;
	u64 nr_blocks = smr_band_block(dm, dm->nr_bands);

	if (k == 0) {
		const struct smr_intent_rec *ir = rec;

		dm->intent_state = le32_to_cpu(ir->state);
		dm->intent_band = le32_to_cpu(ir->band);
		dm->intent_seq = le64_to_cpu(ir->seq);
		if (dm->intent_state > SMR_INTENT_SPARE_FULL ||
		    (dm->intent_state && dm->intent_band >= dm->nr_bands))
			return -EUCLEAN;
	} else if (k <= dm->slot_blocks) {
		const struct smr_slot_rec *sr = rec;
		u32 first = (k - 1) * SMR_SLOTS_PER_BLOCK;

		for (i = 0; i < nr; i++) {
			u32 s = first + i;
			u32 flags = le32_to_cpu(sr[i].flags);
			u64 lba = (u64)(flags >> SMR_SLOT_LBA_HI_SHIFT) << 32 |
				le32_to_cpu(sr[i].lba);

			dm->slot_lba[s] = SMR_LBA_FREE;
			dm->slot_seq[s] = 0;
			if (!(flags & SMR_SLOT_VALID))
				continue;
			if (lba >= nr_blocks)
				return -EUCLEAN;
			dm->slot_lba[s] = lba;
			dm->slot_seq[s] = le64_to_cpu(sr[i].seq);
		}
	} else {
		const __le64 *cs = rec;
		u32 first = (k - 1 - dm->slot_blocks) * SMR_BANDS_PER_BLOCK;

		for (i = 0; i < nr; i++)
			dm->bands[first + i].clean_seq = le64_to_cpu(cs[i]);
	}
	return 0;
}

void smr_dm_drop_index(struct smr_dm *dm)
{
	u32 i;

	for (i = 0; i < dm->nr_bands; i++) {
		struct smr_band *b = &dm->bands[i];

		smr_ext_free(&b->ext);
		b->nr_ext = b->live = b->slots = 0;
		b->writers = b->seq_next = b->flags = 0;
		b->first_seq = 0;
		b->slot_head = SMR_SLOT_FREE;
		b->heap_pos = SMR_BAND_NONE;
		b->cb_bucket = 0;
		INIT_LIST_HEAD(&b->dirty_node);
		atomic_set(&b->readers, 0);
	}
	INIT_LIST_HEAD(&dm->dirty_list);
	dm->heap_len = 0;
	dm->loading = false;
	for (i = 0; i < SMR_CB_BUCKETS; i++)
		dm->cb[i] = RB_ROOT_CACHED;
	dm->nr_ext = dm->live = dm->used = dm->dirty_bands = 0;
	dm->cursor = 0;
	bitmap_zero(dm->slot_used, dm->nr_slots);
	bitmap_zero(dm->slot_inflight, dm->nr_slots);
}

/* A new, empty format (called by smr_format() before its commit). */
static void smr_dm_reset(struct smr_drive *d)
{
	struct smr_dm *dm = smr_dmt_of(d)->dm;
	u32 i;

	smr_dm_drop_index(dm);
	/* All ones is SMR_LBA_FREE. */
	memset(dm->slot_lba, 0xff, (size_t)dm->nr_slots * sizeof(*dm->slot_lba));
	memset(dm->slot_seq, 0, (size_t)dm->nr_slots * sizeof(*dm->slot_seq));
	for (i = 0; i < dm->nr_bands; i++)
		dm->bands[i].clean_seq = 0;
	dm->intent_state = SMR_INTENT_NONE;
	dm->intent_band = 0;
	dm->intent_seq = 0;
	dm->next_seq = 1;
}

const struct smr_md_mode smr_dm_md_mode = {
	.blocks = {
		.build = smr_dm_build_block,
		.records = smr_dm_block_records,
		.load = smr_dm_load_block,
		.data_home = smr_md_data_home,
	},
	.reset = smr_dm_reset,
	/* The constructor may run while the old table still writes. */
	.load_at_resume = true,
};
