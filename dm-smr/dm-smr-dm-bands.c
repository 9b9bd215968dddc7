// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: which bands hold cache slots, in the orders
 * the cleaning policies pick by (fifo's list, greedy's heap, cost-benefit's
 * buckets), kept as each band's slot count changes, and the cache
 * occupancy levels reported over netlink. The cache itself (slots, the
 * extent index, cache writes) is dm-smr-dm-cache.c; the policies that
 * read these orders are dm-smr-dm-clean.c.
 */
#include <linux/list_sort.h>
#include <linux/rbtree.h>

#include "dm-smr-dm.h"

/*
 * Every band holding slots is in three structures, all kept as its slot
 * count changes (under sc->d.lock): dm->dirty_list in (first_seq, band)
 * order, which is fifo's; a binary max-heap by (slots, -band), which is
 * greedy's; and cost-benefit's buckets (below). A pick is then O(1) for
 * fifo and greedy and O(SMR_CB_BUCKETS) for cost-benefit, an update
 * O(log bands).
 */
static bool smr_heap_before(struct smr_dm *dm, u32 a, u32 b)
{
	u32 sa = dm->bands[a].slots, sb = dm->bands[b].slots;

	return sa > sb || (sa == sb && a < b);
}

static void smr_heap_set(struct smr_dm *dm, u32 pos, u32 band)
{
	dm->heap[pos] = band;
	dm->bands[band].heap_pos = pos;
}

static void smr_heap_up(struct smr_dm *dm, u32 pos)
{
	u32 band = dm->heap[pos];

	while (pos && smr_heap_before(dm, band, dm->heap[(pos - 1) / 2])) {
		smr_heap_set(dm, pos, dm->heap[(pos - 1) / 2]);
		pos = (pos - 1) / 2;
	}
	smr_heap_set(dm, pos, band);
}

static void smr_heap_down(struct smr_dm *dm, u32 pos)
{
	u32 band = dm->heap[pos];

	for (;;) {
		u32 c = 2 * pos + 1;

		if (c >= dm->heap_len)
			break;
		if (c + 1 < dm->heap_len &&
		    smr_heap_before(dm, dm->heap[c + 1], dm->heap[c]))
			c++;
		if (!smr_heap_before(dm, dm->heap[c], band))
			break;
		smr_heap_set(dm, pos, dm->heap[c]);
		pos = c;
	}
	smr_heap_set(dm, pos, band);
}

/* Band @band's slot count changed: put it where it now belongs. */
static void smr_heap_fix(struct smr_dm *dm, u32 band)
{
	struct smr_band *b = &dm->bands[band];
	u32 pos = b->heap_pos, last;

	if (pos == SMR_BAND_NONE) {
		if (!b->slots)
			return;
		pos = dm->heap_len++;
		smr_heap_set(dm, pos, band);
		smr_heap_up(dm, pos);
		return;
	}
	if (!b->slots) {
		b->heap_pos = SMR_BAND_NONE;
		last = dm->heap[--dm->heap_len];
		if (pos == dm->heap_len)
			return;
		smr_heap_set(dm, pos, last);
		band = last;
	}
	smr_heap_up(dm, pos);
	smr_heap_down(dm, dm->bands[band].heap_pos);
}

/*
 * Cost-benefit's buckets: rbtrees of the bands holding 2^k to 2^(k+1) - 1
 * slots, by (first_seq, band), so that each bucket's oldest band is its
 * leftmost. A band changes bucket only when its slot count crosses a
 * power of two.
 */
static bool smr_cb_less(struct rb_node *a, const struct rb_node *b)
{
	const struct smr_band *x = rb_entry(a, struct smr_band, cb_node);
	const struct smr_band *y = rb_entry(b, struct smr_band, cb_node);

	if (x->first_seq != y->first_seq)
		return x->first_seq < y->first_seq;
	return x < y;
}

static void smr_cb_fix(struct smr_dm *dm, struct smr_band *b)
{
	u32 bucket = b->slots ? fls(b->slots) : 0;

	if (bucket == b->cb_bucket)
		return;
	if (b->cb_bucket)
		rb_erase_cached(&b->cb_node, &dm->cb[b->cb_bucket - 1]);
	if (bucket)
		rb_add_cached(&b->cb_node, &dm->cb[bucket - 1], smr_cb_less);
	b->cb_bucket = bucket;
}

/*
 * Into the fifo list: a band that gains its first slot has the newest
 * first_seq, so this walks back only past bands of the same first_seq
 * and a higher number (writes allocated before the last was indexed).
 */
static void smr_fifo_insert(struct smr_dm *dm, struct smr_band *b)
{
	struct list_head *pos = dm->dirty_list.prev;

	while (pos != &dm->dirty_list) {
		struct smr_band *p = list_entry(pos, struct smr_band, dirty_node);

		if (p->first_seq < b->first_seq ||
		    (p->first_seq == b->first_seq && p < b))
			break;
		pos = pos->prev;
	}
	list_add(&b->dirty_node, pos);
}

/*
 * Band @band gains the @n slots from @slot on, all holding its blocks
 * (first_seq set by the caller if it held none). Under sc->d.lock.
 */
void smr_band_gain(struct smr_dm *dm, u32 band, u32 slot, u32 n)
{
	struct smr_band *b = &dm->bands[band];
	u32 i;

	for (i = n; i-- > 0;) {
		dm->slot_next[slot + i] = b->slot_head;
		b->slot_head = slot + i;
	}
	if (!b->slots) {
		dm->dirty_bands++;
		/* A rebuild sorts the list once at the end. */
		if (dm->loading)
			list_add_tail(&b->dirty_node, &dm->dirty_list);
		else
			smr_fifo_insert(dm, b);
	}
	WRITE_ONCE(b->slots, b->slots + n);	/* read locklessly too */
	smr_heap_fix(dm, band);
	if (!dm->loading)
		smr_cb_fix(dm, b);
}

/* Band @band gave back @n slots (already unlinked and freed). */
void smr_band_lose(struct smr_dm *dm, u32 band, u32 n)
{
	struct smr_band *b = &dm->bands[band];

	/*
	 * Release: at 0 the lock-free read (smr_dm_read_map()) sends this
	 * band's reads to its sectors, which must then show what a
	 * cleaning copied home before it freed the slots.
	 */
	smp_store_release(&b->slots, b->slots - n);
	if (!b->slots) {
		dm->dirty_bands--;
		list_del_init(&b->dirty_node);
	}
	smr_heap_fix(dm, band);
	smr_cb_fix(dm, b);
}

static int smr_fifo_cmp(void *priv, const struct list_head *a,
			const struct list_head *b)
{
	struct smr_band *x = list_entry(a, struct smr_band, dirty_node);
	struct smr_band *y = list_entry(b, struct smr_band, dirty_node);

	if (x->first_seq != y->first_seq)
		return x->first_seq < y->first_seq ? -1 : 1;
	return x < y ? -1 : 1;
}

/*
 * After a load set every band's first_seq (dm->loading: the buckets, keyed
 * by it, were left empty meanwhile): sort the fifo list once and fill the
 * buckets from it. No lock: the device is suspended, the cleaner stopped.
 */
void smr_dm_order_bands(struct smr_dm *dm)
{
	struct smr_band *b;

	list_sort(NULL, &dm->dirty_list, smr_fifo_cmp);
	list_for_each_entry(b, &dm->dirty_list, dirty_node) {
		smr_cb_fix(dm, b);
		cond_resched();
	}
	dm->loading = false;
}

/*
 * Occupancy events: rising past 25/50/75/100% (once each until the cache
 * empties again) and reaching empty. Computed under the lock, sent after.
 */
void smr_dm_levels(struct smr_dm_target *sc)
{
	static const u32 marks[] = { 25, 50, 75, 100 };
	struct smr_dm *dm = sc->dm;
	u32 send[ARRAY_SIZE(marks) + 1], nr = 0, pct, i;

	spin_lock_irq(&sc->d.lock);
	pct = (u32)div_u64((u64)dm->used * 100, dm->nr_slots);
	for (i = 0; i < ARRAY_SIZE(marks); i++) {
		if (pct >= marks[i] && dm->level < marks[i]) {
			send[nr++] = marks[i];
			dm->level = marks[i];
		}
	}
	if (!dm->used && dm->level) {
		send[nr++] = 0;
		dm->level = 0;
	}
	spin_unlock_irq(&sc->d.lock);
	for (i = 0; i < nr; i++)
		smr_nl_cache_level(&sc->d, send[i]);
}
