// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat: what a device reports and what it is told. "dmsetup status"
 * (the counters and the table line), the counters' snapshot the netlink
 * dump reads, and the messages (clear_stats, dump, ...). docs/dm-caveat.rst
 * documents both.
 */
#include <linux/device-mapper.h>
#include <linux/string.h>

#include "dm-caveat.h"

static size_t cv_mem_bytes(struct cv_target *sc)
{
	return sizeof(*sc) + sc->nr_chunks * sizeof(struct cv_chunk) +
		(sc->nr_bitmaps + sc->nr_spare) * PAGE_SIZE +
		smr_slots_mem_bytes(&sc->md) + !!sc->scramble_page * PAGE_SIZE +
		!!sc->jr_page * PAGE_SIZE + sc->wc_pages * PAGE_SIZE +
		num_possible_cpus() * sizeof(struct smr_io_count);
}

/*
 * The counters, the valid blocks and the memory, at one moment under the
 * lock; writes with those map() counted per CPU (summed before the lock:
 * a loop over CPUs, smr-count.h).
 */
static void cv_get_stats(struct cv_target *sc, struct cv_stats *st,
			 u64 *valid, u64 *mem)
{
	struct smr_io_count plain;

	smr_count_sum(sc->plain, &plain);
	spin_lock_irq(&sc->lock);
	*st = sc->stats;
	st->writes += smr_count_since(plain.ios, sc->plain_base.ios);
	*valid = sc->nr_valid;
	*mem = cv_mem_bytes(sc);
	spin_unlock_irq(&sc->lock);
}

/*
 * STATUSTYPE_INFO (one line, space separated):
 *
 *   <writes> <damaging_writes> <damaged_blocks> <live_damage_writes>
 *   <live_damaged_blocks> <damaged_reads> <valid_blocks> <commits>
 *   <mem_bytes> <journal_writes> <model_busy_ms> <model_lag_ms>
 *   <cached_writes> <bad_read_errors> <bad_write_errors> <bad_remaps>
 *   <transient_errors> <delayed_ios> <power> <power_left>
 *
 * Counters since creation or the last clear_stats message: writes are
 * write bios; damaging_writes those whose damage range (after clipping)
 * is not empty, damaged_blocks the sum of those ranges in blocks (blocks
 * made maybe damaged, whether or not they already were); live_damage_writes
 * the writes that damaged valid blocks (written, not damaged since) and
 * live_damaged_blocks how many: the data lost; damaged_reads the reads
 * that touched maybe-damaged blocks (failed with a medium error, or read
 * zeros there with on_damaged_read zero); commits whole metadata commits,
 * journal_writes damage journal blocks written (last: added with the
 * journal, so parsers of the older line still work).
 * valid_blocks is the current number of valid blocks, mem_bytes the
 * memory this device holds (damage map and buffers). model_busy_ms and
 * model_lag_ms are the timing model's (smr-timing.h), 0 without it: the
 * modelled busy time, and how far the backing device fell behind it.
 * cached_writes counts the writes the write cache completed before their
 * home write (last: it came after the timing fields). The next five
 * count the media faults this table fired (smr-faults.h, added last);
 * power and power_left are the power switch (smr-power.h), last.
 */
void cv_status(struct dm_target *ti, status_type_t type,
		      unsigned int status_flags, char *result,
		      unsigned int maxlen)
{
	struct cv_target *sc = ti->private;
	struct smr_tm_stats ts = { 0 };
	struct cv_stats st;
	unsigned int sz = 0, nopt;
	u64 valid, mem;

	switch (type) {
	case STATUSTYPE_INFO:
		cv_get_stats(sc, &st, &valid, &mem);
		if (sc->tm)
			smr_tm_get_stats(sc->tm, &ts);
		DMEMIT("%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		       st.writes, st.damaging_writes, st.damaged_blocks,
		       st.live_damage_writes, st.live_damaged_blocks,
		       st.damaged_reads, valid, st.commits, mem,
		       st.journal_writes, div_u64(ts.busy_ns, NSEC_PER_MSEC),
		       div_u64(ts.lag_ns, NSEC_PER_MSEC), st.cached_writes);
		smr_faults_status(&sc->faults, result, maxlen, &sz);
		smr_power_status(&sc->power, result, maxlen, &sz);
		break;
	case STATUSTYPE_TABLE:
		/* "format" is not printed back: reloading must not format. */
		DMEMIT("%s %llu %llu", sc->dev->name, sc->did, sc->dnor);
		nopt = 2 * !!(sc->opt_mask & CV_OPT_BLOCK_SIZE) +
			2 * !!(sc->opt_mask & CV_OPT_UNSHINGLED) +
			2 * !!(sc->opt_mask & CV_OPT_ODR) +
			!!(sc->opt_mask & CV_OPT_SCRAMBLE) +
			2 * !!(sc->opt_mask & CV_OPT_WRITE_CACHE);
		if (nopt || sc->tm)
			DMEMIT(" %u", nopt);
		if (sc->opt_mask & CV_OPT_BLOCK_SIZE)
			DMEMIT(" block_size %u", sc->block_size);
		if (sc->opt_mask & CV_OPT_UNSHINGLED)
			DMEMIT(" unshingled %llu", sc->unshingled);
		if (sc->opt_mask & CV_OPT_ODR)
			DMEMIT(" on_damaged_read %s",
			       sc->zero_reads ? "zero" : "error");
		if (sc->opt_mask & CV_OPT_SCRAMBLE)
			DMEMIT(" scramble");
		if (sc->opt_mask & CV_OPT_WRITE_CACHE)
			DMEMIT(" write_cache_kib %llu", sc->wc_kib);
		smr_tm_emit(smr_tm_params_of(sc->tm), result, maxlen, &sz);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(ti->type);
		DMEMIT(",capacity=%llu,block_size=%u,did=%llu,dnor=%llu,unshingled=%llu,on_damaged_read=%s,scramble=%c,write_cache_kib=%llu;",
		       sc->nr_blocks, sc->block_size, sc->did, sc->dnor,
		       sc->unshingled, sc->zero_reads ? "zero" : "error",
		       sc->scramble ? 'y' : 'n', sc->wc_kib);
		break;
	}
}

/* For the netlink dump: the status counters and the geometry. */
void cv_nl_snapshot(struct cv_nl_dev *d, struct cv_nl_snap *s)
{
	struct cv_target *sc = container_of(d, struct cv_target, nl);
	struct cv_stats st;

	cv_get_stats(sc, &st, &s->valid_blocks, &s->mem_bytes);
	s->nr_blocks = sc->nr_blocks;
	s->block_size = sc->block_size;
	s->did = sc->did;
	s->dnor = sc->dnor;
	s->unshingled = sc->unshingled;
	s->st = st;
	smr_faults_counts(&sc->faults, &s->faults);
	smr_power_get(&sc->power, &s->power, &s->power_left);
	s->model_busy_ms = s->model_lag_ms = 0;
	if (sc->tm) {
		struct smr_tm_stats ts;

		smr_tm_get_stats(sc->tm, &ts);
		s->model_busy_ms = div_u64(ts.busy_ns, NSEC_PER_MSEC);
		s->model_lag_ms = div_u64(ts.lag_ns, NSEC_PER_MSEC);
	}
}

void cv_nl_clear_stats(struct cv_nl_dev *d)
{
	struct cv_target *sc = container_of(d, struct cv_target, nl);
	struct smr_io_count plain;

	smr_count_sum(sc->plain, &plain);	/* a loop over CPUs: before the lock */
	spin_lock_irq(&sc->lock);
	memset(&sc->stats, 0, sizeof(sc->stats));
	sc->plain_base = plain;
	spin_unlock_irq(&sc->lock);
	if (sc->tm)
		smr_tm_clear_stats(sc->tm);
	smr_faults_clear_stats(&sc->faults);
}

/*
 * dump [<start> <count>]: maybe-damaged extents as "start+len" tokens.
 * The range may be the whole device: it is scanned CV_SCAN_BLOCKS at a
 * time, each step under the lock (interrupts off) and bounded: its
 * chunks, plus one run per token it emits, and the tokens are bounded by
 * @maxlen. A damaged run is emitted when a valid block or the end of the
 * range ends it, so one that spans steps is one token.
 */
static int cv_msg_dump(struct cv_target *sc, unsigned int argc, char **argv,
		       char *result, unsigned int maxlen)
{
	u64 start = 0, count = sc->nr_blocks, pos, end, e, lim, ds = 0;
	unsigned int sz = 0;
	bool v, first = true, pend = false, full = false;

	if (argc != 1 && argc != 3) {
		DMERR("%s: usage: dump [<start> <count>]", cv_name(sc));
		return -EINVAL;
	}
	if (argc == 3 && (smr_parse_u64(argv[1], &start) ||
			  smr_parse_u64(argv[2], &count))) {
		DMERR("%s: dump: start and count must be numbers of blocks",
		      cv_name(sc));
		return -EINVAL;
	}
	if (!count || start >= sc->nr_blocks || count > sc->nr_blocks - start) {
		DMERR("%s: dump: range %llu+%llu is empty or past the end (%llu blocks)",
		      cv_name(sc), start, count, sc->nr_blocks);
		return -EINVAL;
	}
	end = start + count;
	cv_wc_settle(sc);
	for (pos = start; pos < end && !full; ) {
		lim = min(end, round_down(pos, CV_SCAN_BLOCKS) + CV_SCAN_BLOCKS);
		spin_lock_irq(&sc->lock);
		for (; pos < lim; pos = e) {
			e = cv_run_end(sc, pos, lim, &v);
			if (!v) {
				if (!pend)
					ds = pos;
				pend = true;
				continue;
			}
			if (!pend)
				continue;
			pend = false;
			/* Keep room for the marker: the output is never cut silently. */
			if (maxlen - sz < 64) {
				full = true;
				break;
			}
			DMEMIT("%s%llu+%llu", first ? "" : " ", ds, pos - ds);
			first = false;
		}
		spin_unlock_irq(&sc->lock);
		cond_resched();
	}
	if (pend && maxlen - sz < 64)
		full = true;
	if (full)
		DMEMIT("%struncated next=%llu", first ? "" : " ", ds);
	else if (pend)
		DMEMIT("%s%llu+%llu", first ? "" : " ", ds, end - ds);
	return 1;
}

int cv_message(struct dm_target *ti, unsigned int argc, char **argv,
		      char *result, unsigned int maxlen)
{
	struct cv_target *sc = ti->private;
	unsigned int sz = 0;
	u64 b;
	bool v;

	if (!argc) {
		DMERR("%s: empty message", cv_name(sc));
		return -EINVAL;
	}
	if (!strcasecmp(argv[0], "modsense")) {
		if (argc != 1)
			goto usage;
		DMEMIT("capacity %llu block_size %u did %llu dnor %llu unshingled %llu",
		       sc->nr_blocks, sc->block_size, sc->did, sc->dnor,
		       sc->unshingled);
		return 1;
	}
	if (smr_faults_is_message(argv[0]))
		return smr_faults_message(&sc->faults, argc, argv, result, maxlen);
	if (smr_power_is_message(argv[0]))
		return smr_power_message(&sc->power, argc, argv, result, maxlen);
	if (!strcasecmp(argv[0], "dump"))
		return cv_msg_dump(sc, argc, argv, result, maxlen);
	if (!strcasecmp(argv[0], "query")) {
		if (argc != 2)
			goto usage;
		if (smr_parse_u64(argv[1], &b) || b >= sc->nr_blocks) {
			DMERR("%s: query: block must be a number below %llu",
			      cv_name(sc), sc->nr_blocks);
			return -EINVAL;
		}
		cv_wc_settle(sc);
		spin_lock_irq(&sc->lock);
		v = cv_block_valid(sc, b);
		spin_unlock_irq(&sc->lock);
		DMEMIT("%s", v ? "valid" : "damaged");
		return 1;
	}
	if (!strcasecmp(argv[0], "clear_stats")) {
		if (argc != 1)
			goto usage;
		cv_nl_clear_stats(&sc->nl);
		return 0;
	}
	DMERR("%s: unrecognised message '%s' (modsense, dump, query, clear_stats, badblocks, transient, delay, faults)",
	      cv_name(sc), argv[0]);
	return -EINVAL;
usage:
	DMERR("%s: wrong number of arguments for '%s' (modsense; dump [<start> <count>]; query <block>; clear_stats)",
	      cv_name(sc), argv[0]);
	return -EINVAL;
}
