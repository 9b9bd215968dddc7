// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat: the damage journal. A write that damages valid blocks may be
 * issued only once its damage is durable. A whole commit costs a flush,
 * the bitmap pages and another flush, and it has to make every completed
 * write durable as well, which damage does not need: damage only ever
 * makes the map more pessimistic. So the damage of a batch of such writes
 * (all those mapped while the previous batch was being written) goes into
 * one journal block written with FUA, and the writes are issued when it
 * completes, as jbd2 groups the handles of a transaction. The format and
 * the replay rule are in common/smr-ondisk.h (struct cv_jr_rec).
 *
 * Every damage gets a stamp, the next damage sequence number, under the
 * state lock; a bitmap page is stamped with the sequence number when it
 * is built. A page thus holds exactly the damage stamped up to its stamp,
 * and replay applies a record only to the pages stamped before it. The
 * journal is a ring of J blocks: when it is full, the next batch takes a
 * whole commit instead, after which no record in it is needed any more
 * (each page it touched was dirtied by it and written with a later
 * stamp), so the ring starts over.
 */
#include <linux/mm.h>
#include <linux/slab.h>

#include "dm-caveat.h"
#include "dm-caveat-trace.h"

#define CV_JR_SECTORS	(SMR_MD_BLOCK_SIZE >> SECTOR_SHIFT)

/*
 * Lock held: blocks @d0..@d1 were just damaged with stamp sc->damage_seq.
 * No memory is allocated: when the pending block is full the damage is
 * left to the next whole commit, which covers every stamp so far.
 */
void cv_jr_add(struct cv_target *sc, u64 d0, u64 d1)
{
	struct cv_jr_pending *r;

	if (!sc->jr_blocks)
		return;
	if (sc->jr_nr == CV_JR_RECS) {
		sc->jr_overflow = true;
		return;
	}
	r = &sc->jr_rec[sc->jr_nr++];
	r->first = d0;
	r->len = d1 - d0 + 1;
	r->stamp = sc->damage_seq;
}

/*
 * commit_mutex held, a whole commit covering every stamp up to @seq
 * succeeded: those records are no longer needed, nor is anything in the
 * ring.
 */
void cv_jr_committed(struct cv_target *sc, u64 seq)
{
	u32 i, n = 0;

	lockdep_assert_held(&sc->commit_mutex);
	spin_lock_irq(&sc->lock);
	for (i = 0; i < sc->jr_nr; i++)
		if (sc->jr_rec[i].stamp > seq)
			sc->jr_rec[n++] = sc->jr_rec[i];
	sc->jr_nr = n;
	spin_unlock_irq(&sc->lock);
	sc->jr_used = 0;
}

/* Lock held: the pending records into the journal page; how many. */
static u32 cv_jr_build(struct cv_target *sc, void *buf)
{
	struct cv_jr_rec *rec = buf + sizeof(struct smr_blk_header);
	u64 top = 0;
	u32 i;

	memset(buf, 0, SMR_MD_BLOCK_SIZE);
	for (i = 0; i < sc->jr_nr; i++) {
		rec[i].first = cpu_to_le64(sc->jr_rec[i].first);
		rec[i].len = cpu_to_le64(sc->jr_rec[i].len);
		rec[i].stamp = cpu_to_le64(sc->jr_rec[i].stamp);
		top = max(top, sc->jr_rec[i].stamp);
	}
	smr_blk_header(buf, CV_JR_MAGIC, sc->md.format_id, sc->jr_pos, sc->jr_nr);
	smr_blk_seal(buf, top);
	i = sc->jr_nr;
	sc->jr_nr = 0;
	return i;
}

/*
 * commit_mutex held: make every damage applied so far durable with a
 * journal block. Returns 0 when it is durable (or already was), 1 when
 * the journal cannot take it (none, full, damage that did not fit), or
 * -errno when the write failed; then the caller commits instead.
 */
int cv_jr_write(struct cv_target *sc)
{
	u64 seq, t0;
	u32 nr;
	int ret;

	lockdep_assert_held(&sc->commit_mutex);
	spin_lock_irq(&sc->lock);
	if (sc->durable_seq == sc->damage_seq) {
		spin_unlock_irq(&sc->lock);
		return 0;
	}
	if (!sc->jr_blocks || sc->jr_overflow || !sc->jr_nr ||
	    sc->jr_used >= sc->jr_blocks) {
		spin_unlock_irq(&sc->lock);
		return 1;
	}
	seq = sc->damage_seq;
	nr = cv_jr_build(sc, page_address(sc->jr_page));
	spin_unlock_irq(&sc->lock);

	t0 = trace_cv_jr_write_enabled() ? ktime_get_ns() : 0;
	ret = smr_slots_rw(&sc->md, REQ_OP_WRITE | REQ_FUA,
			   sc->jr_start + (sector_t)sc->jr_pos * CV_JR_SECTORS,
			   &sc->jr_page, 1);
	if (t0)
		trace_cv_jr_write(sc->nl.name, sc->jr_pos, nr, seq, ret,
				  ktime_get_ns() - t0);
	if (ret) {
		/* Its records are gone from memory: a whole commit covers them. */
		DMERR_LIMIT("%s: damage journal write failed: %d; committing instead",
			    cv_name(sc), ret);
		spin_lock_irq(&sc->lock);
		sc->jr_overflow = true;
		spin_unlock_irq(&sc->lock);
		return ret;
	}
	sc->jr_pos = (sc->jr_pos + 1) % sc->jr_blocks;
	sc->jr_used++;
	spin_lock_irq(&sc->lock);
	sc->stats.journal_writes++;
	if (sc->durable_seq < seq)
		sc->durable_seq = seq;
	spin_unlock_irq(&sc->lock);
	return 0;
}

/* At load (nothing live, no lock): blocks @a..@b damaged in page @k. */
static void cv_jr_clear_loaded(struct cv_target *sc, u64 a, u64 b)
{
	u64 c;

	for (c = a >> CV_CHUNK_SHIFT; c <= b >> CV_CHUNK_SHIFT; c++) {
		unsigned long *bits = sc->chunks[c].bits;
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 lo = max(a, cs), hi = min(b, cs + CV_CHUNK_BLOCKS - 1);

		/* Loaded chunks are bitmaps or empty (not compacted yet). */
		if (bits)
			bitmap_clear(bits, lo - cs, hi - lo + 1);
	}
}

/* Apply one record to the pages stamped before it; false if impossible. */
static bool cv_jr_apply(struct cv_target *sc, const struct cv_jr_rec *rec,
			u64 *replayed)
{
	u64 first = le64_to_cpu(rec->first), len = le64_to_cpu(rec->len);
	u64 stamp = le64_to_cpu(rec->stamp), last, k;

	if (!len || len > CV_MAX_DID || first >= sc->nr_blocks ||
	    len > sc->nr_blocks - first || !stamp)
		return false;
	last = first + len - 1;
	sc->damage_seq = max(sc->damage_seq, stamp);
	for (k = div_u64(first, CV_MD_BITS); k <= div_u64(last, CV_MD_BITS); k++) {
		u64 ps = k * CV_MD_BITS, pe = ps + CV_MD_BITS - 1;

		if (stamp <= sc->ld_stamps[k])
			continue;
		cv_jr_clear_loaded(sc, max(first, ps), min(last, pe));
		/* Written by the next commit, which the ring must wait for. */
		smr_slots_mark_dirty(&sc->md, k);
		(*replayed)++;
	}
	return true;
}

/*
 * At load, after the bitmap pages (whose stamps are in sc->ld_stamps):
 * apply the journal. If anything was applied, the journal must be kept
 * until a whole commit has written the pages: it is marked full, so the
 * next batch commits. Returns 0 or -errno (-EUCLEAN: a sealed block
 * holds an impossible record).
 */
int cv_jr_replay(struct cv_target *sc)
{
	struct page **pages = sc->md.pages;
	u64 replayed = 0;
	u32 k, j, r;
	int ret;

	sc->jr_pos = 0;
	sc->jr_used = 0;
	sc->jr_nr = 0;
	sc->jr_overflow = false;
	for (k = 0; k < sc->jr_blocks; k += SMR_SLOTS_BATCH) {
		u32 n = min_t(u32, SMR_SLOTS_BATCH, sc->jr_blocks - k);

		ret = smr_slots_rw(&sc->md, REQ_OP_READ,
				   sc->jr_start + (sector_t)k * CV_JR_SECTORS,
				   pages, n);
		if (ret)
			return ret;
		for (j = 0; j < n; j++) {
			void *buf = page_address(pages[j]);
			struct smr_blk_header *hdr = buf;
			struct cv_jr_rec *rec = buf + sizeof(*hdr);
			u32 nr;

			/* Torn, never written, or of another format: skipped. */
			if (!smr_blk_sealed(buf, CV_JR_MAGIC, sc->md.format_id, k + j))
				continue;
			nr = le32_to_cpu(hdr->nr);
			if (nr > CV_JR_RECS)
				goto bad;
			for (r = 0; r < nr; r++)
				if (!cv_jr_apply(sc, &rec[r], &replayed))
					goto bad;
		}
		cond_resched();
	}
	if (replayed) {
		DMINFO("%s: damage journal: %llu page updates replayed",
		       cv_name(sc), replayed);
		sc->jr_used = sc->jr_blocks;
	}
	return 0;
bad:
	DMERR("%s: damage journal block %u holds an impossible record",
	      cv_name(sc), k + j);
	return -EUCLEAN;
}
