// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat: the damage set, the set of valid blocks in memory (see
 * dm-caveat.h): its chunks, each empty, full or a bitmap page, and the
 * spare pages that let map() turn a chunk into a bitmap without
 * allocating; marking ranges valid or damaged, counting and finding valid
 * blocks, pinning the edge chunks of writes in flight; and the damage
 * rule: the damage range of a write, and what it damages of the writes
 * still in flight. Persisting the set is dm-caveat-md.c's job.
 */
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/gfp.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/slab.h>

#include "dm-caveat.h"

u64 cv_chunk_nbits(struct cv_target *sc, u64 c)
{
	return min_t(u64, CV_CHUNK_BLOCKS, sc->nr_blocks - (c << CV_CHUNK_SHIFT));
}

static bool cv_is_bitmap(unsigned long *bits)
{
	return bits && bits != CV_FULL;
}

static void cv_put_bitmap(struct cv_target *sc, unsigned long *p)
{
	sc->nr_bitmaps--;
	if (sc->nr_spare < CV_SPARE_MAX)
		sc->spare[sc->nr_spare++] = p;
	else
		free_page((unsigned long)p);
}

/* Lock held, a spare page available: make chunk @c a bitmap. */
static void cv_to_bitmap(struct cv_target *sc, u64 c)
{
	struct cv_chunk *ch = &sc->chunks[c];
	unsigned long *p;

	/* Callers counted the pages they need (cv_edge_need). */
	if (cv_is_bitmap(ch->bits) || !sc->nr_spare)
		return;
	p = sc->spare[--sc->nr_spare];
	if (ch->bits == CV_FULL) {
		bitmap_fill(p, CV_CHUNK_BLOCKS);
		ch->nset = cv_chunk_nbits(sc, c);
	} else {
		bitmap_zero(p, CV_CHUNK_BLOCKS);
		ch->nset = 0;
	}
	WRITE_ONCE(ch->bits, p);
	sc->nr_bitmaps++;
}

/*
 * Set bits lo..hi (inclusive) of a bitmap: whole words through
 * hweight_long, so the cost follows the range, not the chunk.
 */
static u64 cv_bits_weight(const unsigned long *bits, u64 lo, u64 hi)
{
	u64 n = 0;

	for (; lo <= hi && lo % BITS_PER_LONG; lo++)
		n += test_bit(lo, bits);
	for (; lo + BITS_PER_LONG - 1 <= hi; lo += BITS_PER_LONG)
		n += hweight_long(bits[lo / BITS_PER_LONG]);
	for (; lo <= hi; lo++)
		n += test_bit(lo, bits);
	return n;
}

/* Lock held: valid blocks among blocks lo..hi (from its start) of chunk @c. */
u64 cv_chunk_valid(struct cv_target *sc, u64 c, u64 lo, u64 hi)
{
	struct cv_chunk *ch = &sc->chunks[c];

	if (!ch->bits)
		return 0;
	if (ch->bits == CV_FULL)
		return hi - lo + 1;
	if (!lo && hi == cv_chunk_nbits(sc, c) - 1)
		return ch->nset;
	return cv_bits_weight(ch->bits, lo, hi);
}

/* Lock held: a bitmap chunk that is all set or (unpinned) all clear. */
static void cv_compact(struct cv_target *sc, u64 c)
{
	struct cv_chunk *ch = &sc->chunks[c];

	if (!cv_is_bitmap(ch->bits))
		return;
	if (ch->nset == cv_chunk_nbits(sc, c)) {
		cv_put_bitmap(sc, ch->bits);
		WRITE_ONCE(ch->bits, CV_FULL);
	} else if (!ch->pins && !ch->nset) {
		cv_put_bitmap(sc, ch->bits);
		WRITE_ONCE(ch->bits, NULL);
	}
}

/*
 * At load, nothing live: count chunk @c's bits as loaded (pages, then
 * the journal's damage over them), compact it, return its valid blocks.
 */
u64 cv_chunk_loaded(struct cv_target *sc, u64 c)
{
	struct cv_chunk *ch = &sc->chunks[c];

	if (cv_is_bitmap(ch->bits))
		ch->nset = bitmap_weight(ch->bits, cv_chunk_nbits(sc, c));
	cv_compact(sc, c);
	return cv_chunk_valid(sc, c, 0, cv_chunk_nbits(sc, c) - 1);
}

bool cv_block_valid(struct cv_target *sc, u64 b)
{
	struct cv_chunk *ch = &sc->chunks[b >> CV_CHUNK_SHIFT];

	if (!ch->bits)
		return false;
	if (ch->bits == CV_FULL)
		return true;
	return test_bit(b & (CV_CHUNK_BLOCKS - 1), ch->bits);
}

/*
 * Lock held. The run of blocks in the same state as block @pos: returns
 * its end (exclusive, at most @end), its state in *@valid.
 */
u64 cv_run_end(struct cv_target *sc, u64 pos, u64 end, bool *valid)
{
	bool v = cv_block_valid(sc, pos);

	*valid = v;
	while (pos < end) {
		u64 c = pos >> CV_CHUNK_SHIFT;
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = min(cs + cv_chunk_nbits(sc, c), end);
		struct cv_chunk *ch = &sc->chunks[c];
		unsigned long nx;

		if (!ch->bits) {
			if (v)
				return pos;
		} else if (ch->bits == CV_FULL) {
			if (!v)
				return pos;
		} else {
			nx = v ? find_next_zero_bit(ch->bits, ce - cs, pos - cs) :
				find_next_bit(ch->bits, ce - cs, pos - cs);
			if (nx < ce - cs)
				return cs + nx;
		}
		pos = ce;
	}
	return end;
}

/* Lock held: valid blocks in a..b, the first and last of them. */
u64 cv_count_valid(struct cv_target *sc, u64 a, u64 b, u64 *lo, u64 *hi)
{
	u64 n = 0, pos = a, e;
	bool v;

	while (pos <= b) {
		e = cv_run_end(sc, pos, b + 1, &v);
		if (v) {
			if (!n)
				*lo = pos;
			*hi = e - 1;
			n += e - pos;
		}
		pos = e;
	}
	return n;
}

/* cv_all_valid() where its one-chunk answer does not do. */
bool __cv_all_valid(struct cv_target *sc, u64 a, u64 b)
{
	bool v;

	return cv_run_end(sc, a, b + 1, &v) == b + 1 && v;
}

/* Lock held: mark a..b valid. Partially covered chunks are not NULL. */
void cv_set_range(struct cv_target *sc, u64 a, u64 b)
{
	u64 c, before = sc->nr_valid;

	for (c = a >> CV_CHUNK_SHIFT; c <= b >> CV_CHUNK_SHIFT; c++) {
		struct cv_chunk *ch = &sc->chunks[c];
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = cs + cv_chunk_nbits(sc, c) - 1;
		u64 lo = max(a, cs), hi = min(b, ce);

		if (lo == cs && hi == ce) {
			sc->nr_valid += ce - cs + 1 -
				cv_chunk_valid(sc, c, 0, ce - cs);
			if (cv_is_bitmap(ch->bits))
				cv_put_bitmap(sc, ch->bits);
			WRITE_ONCE(ch->bits, CV_FULL);
		} else if (cv_is_bitmap(ch->bits)) {
			u64 add = hi - lo + 1 -
				cv_bits_weight(ch->bits, lo - cs, hi - cs);

			sc->nr_valid += add;
			ch->nset += add;
			bitmap_set(ch->bits, lo - cs, hi - lo + 1);
		}
		/* NULL here: damaged meanwhile by a racing write; keep it so. */
	}
	/*
	 * Blocks valid already (a rewrite, every write with DID 0) change
	 * no page the next commit would write. nr_valid grows by exactly
	 * the blocks that became valid.
	 */
	if (sc->nr_valid != before)
		cv_md_dirty(sc, a, b);
}

/* Lock held, spare pages for the two edge chunks: mark a..b damaged. */
void cv_clear_range(struct cv_target *sc, u64 a, u64 b)
{
	u64 c, w;

	for (c = a >> CV_CHUNK_SHIFT; c <= b >> CV_CHUNK_SHIFT; c++) {
		struct cv_chunk *ch = &sc->chunks[c];
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = cs + cv_chunk_nbits(sc, c) - 1;
		u64 lo = max(a, cs), hi = min(b, ce);

		if (!ch->bits)
			continue;
		if (lo == cs && hi == ce) {
			/*
			 * A write in flight that pinned this chunk overlaps
			 * this range, so it was tainted and sets no bit here.
			 */
			sc->nr_valid -= cv_chunk_valid(sc, c, 0, ce - cs);
			if (cv_is_bitmap(ch->bits))
				cv_put_bitmap(sc, ch->bits);
			WRITE_ONCE(ch->bits, NULL);
			continue;
		}
		cv_to_bitmap(sc, c);
		if (!cv_is_bitmap(ch->bits))
			continue;
		w = cv_bits_weight(ch->bits, lo - cs, hi - cs);
		sc->nr_valid -= w;
		ch->nset -= w;
		bitmap_clear(ch->bits, lo - cs, hi - lo + 1);
		cv_compact(sc, c);
	}
	cv_md_dirty(sc, a, b);
}

/* Pages cv_set_range (prepared here) and cv_clear_range may need. */
unsigned int cv_edge_need(struct cv_target *sc, u64 a, u64 b, bool set)
{
	u64 edge[2] = { a >> CV_CHUNK_SHIFT, b >> CV_CHUNK_SHIFT };
	unsigned int need = 0, i;

	for (i = 0; i < 2; i++) {
		u64 c = edge[i];
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = cs + cv_chunk_nbits(sc, c) - 1;
		unsigned long *bits = sc->chunks[c].bits;

		if (i == 1 && edge[1] == edge[0])
			break;
		if (max(a, cs) == cs && min(b, ce) == ce)
			continue;
		if (set ? !bits : bits == CV_FULL)
			need++;
	}
	return need;
}

/* Lock held: pin the edge chunks of a write, bitmaps where it covers part. */
void cv_prepare_set(struct cv_target *sc, u64 a, u64 b)
{
	u64 edge[2] = { a >> CV_CHUNK_SHIFT, b >> CV_CHUNK_SHIFT };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		u64 c = edge[i];
		u64 cs = c << CV_CHUNK_SHIFT;
		u64 ce = cs + cv_chunk_nbits(sc, c) - 1;

		if (i == 1 && edge[1] == edge[0])
			break;
		sc->chunks[c].pins++;
		if ((max(a, cs) != cs || min(b, ce) != ce) && !sc->chunks[c].bits)
			cv_to_bitmap(sc, c);
	}
}

void cv_unpin(struct cv_target *sc, u64 a, u64 b)
{
	u64 c0 = a >> CV_CHUNK_SHIFT, c1 = b >> CV_CHUNK_SHIFT;

	sc->chunks[c0].pins--;
	cv_compact(sc, c0);
	if (c1 != c0) {
		sc->chunks[c1].pins--;
		cv_compact(sc, c1);
	}
}

void cv_free_chunks(struct cv_target *sc)
{
	u64 c;

	if (sc->chunks) {
		for (c = 0; c < sc->nr_chunks; c++)
			if (cv_is_bitmap(sc->chunks[c].bits))
				free_page((unsigned long)sc->chunks[c].bits);
		kvfree(sc->chunks);
	}
	while (sc->nr_spare)
		free_page((unsigned long)sc->spare[--sc->nr_spare]);
}

/* The damage range of a write of blocks first..last; false if empty. */
bool cv_damage_range(struct cv_target *sc, u64 first, u64 last,
		     u64 *d0, u64 *d1)
{
	u64 a, b;

	if (last < sc->unshingled || !sc->did)
		return false;
	a = max3(first + 1 + sc->dnor, last + 1, sc->unshingled);
	b = min(last + sc->did, sc->nr_blocks - 1);
	if (a > b)
		return false;
	*d0 = a;
	*d1 = b;
	return true;
}

static void cv_taint(struct cv_io *io, u64 a, u64 b)
{
	if (io->tmap) {
		bitmap_set(io->tmap, a - io->first, b - a + 1);
		return;
	}
	if (io->t0 > io->t1) {
		io->t0 = a;
		io->t1 = b;
	} else {
		io->t0 = min(io->t0, a);
		io->t1 = max(io->t1, b);
	}
}

/*
 * Lock held. The emulated medium applies writes in the order they are
 * mapped: a write mapped now damages the blocks of writes still in flight
 * that lie in its damage range, so those do not become valid when they
 * complete. (A write in flight that was mapped earlier damages nothing of
 * this one: this one overwrites its damage.)
 */
void cv_check_inflight(struct cv_target *sc, struct cv_io *io)
{
	struct cv_io *x;

	if (io->d0 > io->d1)
		return;
	list_for_each_entry(x, &sc->inflight, list)
		if (io->d0 <= x->last && x->first <= io->d1)
			cv_taint(x, max(io->d0, x->first), min(io->d1, x->last));
}

/* A write finished (or failed before it was issued); lock held. */
void __cv_write_done(struct cv_target *sc, struct cv_io *io,
			    blk_status_t sts)
{
	list_del(&io->list);
	if (!sts && io->tmap) {
		u64 n = io->last - io->first + 1, i, j;

		for (i = find_first_zero_bit(io->tmap, n); i < n;
		     i = find_next_zero_bit(io->tmap, n, j)) {
			j = find_next_bit(io->tmap, n, i);
			cv_set_range(sc, io->first + i, io->first + j - 1);
		}
	} else if (!sts) {
		if (io->t0 > io->t1 || io->t1 < io->first || io->t0 > io->last) {
			cv_set_range(sc, io->first, io->last);
		} else {
			if (io->t0 > io->first)
				cv_set_range(sc, io->first, io->t0 - 1);
			if (io->t1 < io->last)
				cv_set_range(sc, io->t1 + 1, io->last);
		}
	}
	cv_unpin(sc, io->first, io->last);
}

void cv_write_done(struct cv_target *sc, struct cv_io *io,
			  blk_status_t sts)
{
	unsigned long flags;

	spin_lock_irqsave(&sc->lock, flags);
	__cv_write_done(sc, io, sts);
	spin_unlock_irqrestore(&sc->lock, flags);
}
