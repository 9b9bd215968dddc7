// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr drive-managed mode: what it reports and what it is told. The
 * snapshot of its counters (status and netlink dumps share it), the
 * "dmsetup status" lines, and the messages (clean, clean_stop, policy,
 * clear_stats, ...). docs/dm-smr.rst documents both.
 */
#include <linux/jiffies.h>

#include "dm-smr-dm.h"

static const char * const smr_state_names[] = {
	[SMR_DM_IDLE] = "idle",
	[SMR_DM_CLEAN_BG] = "clean-bg",
	[SMR_DM_CLEAN_FG] = "clean-fg",
	[SMR_DM_CLEAN_MANUAL] = "clean-manual",
};

void smr_dm_snapshot(struct smr_table *t, struct smr_dm_snap *s)
{
	struct smr_dm_target *sc = smr_dmt(t);
	struct smr_dm *dm = sc->dm;
	struct smr_dm_stats st;
	struct smr_io_count rd;
	u64 out;

	memset(s, 0, sizeof(*s));
	smr_count_sum(dm->rd, &rd);	/* not with interrupts off: a loop over CPUs */
	spin_lock_irq(&sc->d.lock);
	st = dm->stats;
	s->host_read_sectors = smr_count_since(rd.sectors, dm->rd_base.sectors);
	s->cache_used = dm->used;
	s->cache_live = dm->live;
	s->index_extents = dm->nr_ext;
	s->index_bytes = (u64)dm->nr_ext * sizeof(struct smr_ext_node);
	s->dirty_bands = dm->dirty_bands;
	s->state = dm->state;
	s->policy = dm->policy;
	s->commits = sc->d.commits;
	s->errors = sc->d.errors;
	s->clean_ms_since_busy = dm->since_busy_ms;
	s->mem_bytes = sc->d.mem_bytes + s->index_bytes;
	s->model_clean_ms = div_u64(dm->tm_clean_ns, NSEC_PER_MSEC);
	s->clean_timeouts = st.clean_timeouts;
	smr_faults_counts(&sc->t.faults, &s->faults);
	smr_power_get(&sc->d.power, &s->power, &s->power_left);
	spin_unlock_irq(&sc->d.lock);
	if (sc->d.tm) {
		struct smr_tm_stats ts;

		smr_tm_get_stats(sc->d.tm, &ts);
		s->model_busy_ms = div_u64(ts.busy_ns, NSEC_PER_MSEC);
		s->model_lag_ms = div_u64(ts.lag_ns, NSEC_PER_MSEC);
	}

	s->nr_bands = dm->nr_bands;
	s->band_sectors = dm->band_sectors;
	s->cache_total = dm->nr_slots;
	s->rmw_bg = st.rmw[SMR_CLEAN_IDLE];
	s->rmw_fg = st.rmw[SMR_CLEAN_FOREGROUND];
	s->rmw_manual = st.rmw[SMR_CLEAN_MANUAL];
	s->bg_aborts = st.bg_aborts;
	s->clean_read_sectors = st.clean_read_sectors;
	s->clean_write_sectors = st.clean_write_sectors;
	s->clean_ms_bg = st.clean_ms_bg;
	s->clean_ms_fg = st.clean_ms_fg;
	s->host_write_sectors = st.host_write_sectors;
	s->cache_write_sectors = st.cache_write_sectors;
	s->bypass_write_sectors = st.bypass_write_sectors;
	out = st.cache_write_sectors + st.bypass_write_sectors +
		st.clean_write_sectors;
	s->wa_milli = st.host_write_sectors ?
		div64_u64(out * 1000, st.host_write_sectors) : 0;
}

/*
 * STATUSTYPE_INFO, drive-managed mode (one line, space separated):
 *
 *   drive-managed <nr_bands> <band_sectors> <cache_used>/<cache_total>
 *   <cache_live> <index_extents> <index_bytes> <dirty_bands> <rmw_bg>
 *   <rmw_fg> <rmw_manual> <bg_aborts> <clean_read_sectors>
 *   <clean_write_sectors> <clean_ms_bg> <clean_ms_fg>
 *   <clean_ms_since_busy> <host_read_sectors> <host_write_sectors>
 *   <cache_write_sectors> <bypass_write_sectors> <wa> <state> <policy>
 *   <commits> <errors> <mem_bytes> <model_busy_ms> <model_clean_ms>
 *   <model_lag_ms> <bad_read_errors> <bad_write_errors> <bad_remaps>
 *   <transient_errors> <delayed_ios> <clean_timeouts> <power> <power_left>
 *
 * Cache figures count 4 KiB slots; used slots include superseded copies.
 * wa is (cache + bypass + cleaning writes) / host writes, as "N.NNN".
 * The model_* fields are the timing model's (smr-timing.h), 0 without it:
 * modelled busy time, the part of it that was cleaning, and how far the
 * backing device fell behind the model. Then the media fault counters
 * (smr-faults.h) and clean_timeouts, the writes failed for waiting for
 * cache space longer than clean_timeout_ms, and the power switch
 * (smr-power.h): added last, so parsers of the older line still work.
 * docs/dm-smr.rst describes every field.
 */
void smr_dm_status(struct smr_dm_target *sc, status_type_t type, char *result,
		   unsigned int maxlen)
{
	struct smr_dm *dm = sc->dm;
	unsigned int sz = 0;
	struct smr_dm_snap s;
	int nopt;

	switch (type) {
	case STATUSTYPE_INFO:
		smr_dm_snapshot(&sc->t, &s);
		DMEMIT("drive-managed %llu %llu %llu/%llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu.%03llu %s %s %llu %llu %llu %llu %llu %llu",
		       s.nr_bands, s.band_sectors, s.cache_used, s.cache_total,
		       s.cache_live, s.index_extents, s.index_bytes,
		       s.dirty_bands, s.rmw_bg, s.rmw_fg, s.rmw_manual,
		       s.bg_aborts, s.clean_read_sectors, s.clean_write_sectors,
		       s.clean_ms_bg, s.clean_ms_fg, s.clean_ms_since_busy,
		       s.host_read_sectors, s.host_write_sectors,
		       s.cache_write_sectors, s.bypass_write_sectors,
		       div_u64(s.wa_milli, 1000), s.wa_milli % 1000,
		       smr_state_names[s.state], smr_clean_policies[s.policy].name,
		       s.commits, s.errors, s.mem_bytes, s.model_busy_ms,
		       s.model_clean_ms, s.model_lag_ms);
		smr_faults_status(&sc->t.faults, result, maxlen, &sz);
		DMEMIT(" %llu", s.clean_timeouts);
		smr_power_status(&sc->d.power, result, maxlen, &sz);
		break;
	case STATUSTYPE_TABLE:
		nopt = 2 * hweight32(dm->opt_mask);
		DMEMIT("%s drive-managed %llu", sc->t.dev->name, dm->band_sectors);
		if (nopt || sc->d.tm)
			DMEMIT(" %d", nopt);
		if (dm->opt_mask & SMR_DM_OPT_CACHE)
			DMEMIT(" cache_sectors %llu", dm->cache_sectors);
		if (dm->opt_mask & SMR_DM_OPT_IDLE)
			DMEMIT(" idle_ms %u", dm->idle_ms);
		if (dm->opt_mask & SMR_DM_OPT_POLICY)
			DMEMIT(" policy %s", smr_clean_policies[READ_ONCE(dm->policy)].name);
		if (dm->opt_mask & SMR_DM_OPT_BYPASS)
			DMEMIT(" seq_bypass %s", dm->seq_bypass ? "on" : "off");
		if (dm->opt_mask & SMR_DM_OPT_TIMEOUT)
			DMEMIT(" clean_timeout_ms %u", READ_ONCE(dm->clean_timeout_ms));
		if (dm->opt_mask & SMR_DM_OPT_WCACHE)
			DMEMIT(" write_cache_kib %u", sc->t.wc_kib);
		smr_tm_emit(smr_tm_params_of(sc->d.tm), result, maxlen, &sz);
		break;
	case STATUSTYPE_IMA:
		DMEMIT_TARGET_NAME_VERSION(sc->t.ti->type);
		DMEMIT(",mode=drive-managed,band_sectors=%llu,cache_sectors=%llu,idle_ms=%u,policy=%s,seq_bypass=%s,clean_timeout_ms=%u;",
		       dm->band_sectors, dm->cache_sectors, dm->idle_ms,
		       smr_clean_policies[READ_ONCE(dm->policy)].name,
		       dm->seq_bypass ? "on" : "off",
		       READ_ONCE(dm->clean_timeout_ms));
		break;
	}
}

/*
 * Messages:
 *   clean           clean every dirty band now (returns at once)
 *   clean_stop      end a manual cleaning after the current band and
 *                   restart the idle timer
 *   policy <name>   fifo | greedy | cost-benefit
 *   clean_timeout <ms>  fail writes parked for cache space this long (0: off)
 *   clear_stats
 */
int smr_dm_message(struct smr_dm_target *sc, unsigned int argc, char **argv,
		   char *result, unsigned int maxlen)
{
	struct smr_dm *dm = sc->dm;
	u64 p;

	if (argc == 1 && !strcasecmp(argv[0], "clean")) {
		spin_lock_irq(&sc->d.lock);
		if (dm->stop) {
			spin_unlock_irq(&sc->d.lock);
			DMERR("%s: clean: the device is suspended", smr_dm_name(sc));
			return -EBUSY;
		}
		dm->manual = true;
		spin_unlock_irq(&sc->d.lock);
		smr_dm_kick_cleaner(dm, 0);
		return 0;
	}
	if (argc == 1 && !strcasecmp(argv[0], "clean_stop")) {
		spin_lock_irq(&sc->d.lock);
		dm->manual = false;
		WRITE_ONCE(dm->last_io, jiffies);
		spin_unlock_irq(&sc->d.lock);
		return 0;
	}
	if (argc == 2 && !strcasecmp(argv[0], "policy")) {
		if (smr_dm_parse_policy(argv[1], &p)) {
			DMERR("policy must be fifo, greedy or cost-benefit, not '%s'",
			      argv[1]);
			return -EINVAL;
		}
		spin_lock_irq(&sc->d.lock);
		dm->policy = p;
		dm->opt_mask |= SMR_DM_OPT_POLICY;
		spin_unlock_irq(&sc->d.lock);
		return 0;
	}
	if (argc == 2 && !strcasecmp(argv[0], "clean_timeout")) {
		if (smr_parse_u64(argv[1], &p) || p > SMR_DM_MAX_IDLE_MS) {
			DMERR("%s: clean_timeout must be a number of ms from 0 to %u, not '%s'",
			      smr_dm_name(sc), SMR_DM_MAX_IDLE_MS, argv[1]);
			return -EINVAL;
		}
		if (p && smr_dm_make_park_wq(sc)) {
			DMERR("%s: clean_timeout: no memory for its worker", smr_dm_name(sc));
			return -ENOMEM;
		}
		spin_lock_irq(&sc->d.lock);
		dm->clean_timeout_ms = p;
		dm->opt_mask |= SMR_DM_OPT_TIMEOUT;
		spin_unlock_irq(&sc->d.lock);
		/* Writes parked already: their time counts from when they parked. */
		smr_dm_arm_park_timeout(sc);
		return 0;
	}
	if (argc == 1 && !strcasecmp(argv[0], "clear_stats")) {
		struct smr_io_count rd;

		smr_count_sum(dm->rd, &rd);
		spin_lock_irq(&sc->d.lock);
		memset(&dm->stats, 0, sizeof(dm->stats));
		dm->rd_base = rd;
		sc->d.commits = sc->d.errors = 0;
		dm->since_busy_ms = 0;
		dm->tm_clean_ns = 0;
		spin_unlock_irq(&sc->d.lock);
		if (sc->d.tm)
			smr_tm_clear_stats(sc->d.tm);
		return 0;
	}
	DMERR("unknown message or wrong arguments: %s (argc %u)", argv[0], argc);
	return -EINVAL;
}
