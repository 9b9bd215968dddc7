// SPDX-License-Identifier: GPL-2.0
/*
 * smrd: listens to the dm-smr and dm-caveat generic netlink events, keeps
 * per-device cleaning state and reports it: JSON lines (stdout or
 * --json FILE), a summary on SIGUSR1 (stderr, and "summary" records in
 * the JSON stream), and optionally a Prometheus text endpoint on a
 * loopback address (--metrics 127.0.0.1:PORT). See smrd(8).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "smr-nl.h"
#include "smr-util.h"

#define MAX_DEVS 256

struct dev_state {
	int used;
	int fam;
	char name[128];
	unsigned int major, minor;
	char mode[48];
	int64_t cleaning_band;		/* -1: not cleaning */
	char clean_reason[48];
	uint64_t clean_starts, clean_dones;
	uint64_t clean_read_bytes, clean_write_bytes, clean_us;
	unsigned int cache_pct;		/* last level crossed (0 = empty) */
	uint64_t cache_events;
	uint64_t idle_cleans, last_clean_ms;
	int clean;			/* idle and fully clean */
	uint64_t zone_errors, damage_events, damage_live_blocks;
	uint64_t commit_errors, last_commit_errno;
	double last_event;
};

static struct dev_state devs[MAX_DEVS];
static FILE *json_out;
static const char *json_path;
static struct smrnl_ev ev;
static uint64_t events_seen;
static double replay_ts;	/* --render-metrics: the recorded event's time */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct dev_state *dev_get(int fam, const char *name, int create)
{
	struct dev_state *free_slot = NULL;
	int i;

	for (i = 0; i < MAX_DEVS; i++) {
		if (!devs[i].used) {
			if (!free_slot)
				free_slot = &devs[i];
			continue;
		}
		if (devs[i].fam == fam && !strcmp(devs[i].name, name))
			return &devs[i];
	}
	if (!create || !free_slot)
		return NULL;
	memset(free_slot, 0, sizeof(*free_slot));
	free_slot->used = 1;
	free_slot->fam = fam;
	free_slot->cleaning_band = -1;
	snprintf(free_slot->name, sizeof(free_slot->name), "%s", name);
	return free_slot;
}

static int fam_of(const struct rec *r)
{
	return strcmp(r->family, smrnl_family_name[FAM_SMR]) ? FAM_CAVEAT : FAM_SMR;
}

static void emit(const struct rec *r)
{
	char buf[16384];

	if (!json_out || rec_to_json(r, now(), buf, sizeof(buf)) < 0)
		return;
	fprintf(json_out, "%s\n", buf);
	fflush(json_out);
}

/* A line about smrd itself. */
static void emit_self(const char *event, const char *key, const char *val)
{
	struct rec r;

	rec_init(&r, "smrd", event);
	if (key)
		rec_add_str(&r, key, val);
	emit(&r);
}

static int on_event(const struct rec *r, void *arg)
{
	struct dev_state *d = dev_get(fam_of(r), r->device, 1);

	(void)arg;
	events_seen++;
	emit(r);
	if (!d)
		return 0;
	d->major = r->major;
	d->minor = r->minor;
	d->last_event = replay_ts ? replay_ts : now();
	if (!strcmp(r->event, "clean_start")) {
		const struct rec_field *f = rec_get(r, "reason");

		d->cleaning_band = (int64_t)rec_u64(r, "band", 0);
		snprintf(d->clean_reason, sizeof(d->clean_reason), "%s",
			 f && f->is_str ? f->s : "");
		d->clean_starts++;
		d->clean = 0;
		snprintf(d->mode, sizeof(d->mode), "drive-managed");
	} else if (!strcmp(r->event, "clean_done")) {
		d->cleaning_band = -1;
		d->clean_dones++;
		d->clean_read_bytes += rec_u64(r, "read_bytes", 0);
		d->clean_write_bytes += rec_u64(r, "write_bytes", 0);
		d->clean_us += rec_u64(r, "duration_us", 0);
	} else if (!strcmp(r->event, "cache_level")) {
		d->cache_pct = (unsigned int)rec_u64(r, "pct", 0);
		d->cache_events++;
		if (d->cache_pct)
			d->clean = 0;
	} else if (!strcmp(r->event, "idle_clean")) {
		d->idle_cleans++;
		d->last_clean_ms = rec_u64(r, "clean_ms", 0);
		d->clean = 1;
		d->cleaning_band = -1;
	} else if (!strcmp(r->event, "zone_error")) {
		d->zone_errors++;
	} else if (!strcmp(r->event, "commit_error")) {
		d->commit_errors++;
		d->last_commit_errno = rec_u64(r, "errno", 0);
		snprintf(d->mode, sizeof(d->mode), "drive-managed");
	} else if (!strcmp(r->event, "damage")) {
		d->damage_events++;
		d->damage_live_blocks += rec_u64(r, "live_blocks", 0);
	}
	return 0;
}

/* Seed/refresh the device list from a dump; mark the ones that are gone. */
static int seen_cb(const struct rec *r, void *arg)
{
	struct dev_state *d = dev_get(fam_of(r), r->device, 1);
	const struct rec_field *f;

	(void)arg;
	if (!d)
		return 0;
	d->used = 2;	/* seen in this dump */
	d->major = r->major;
	d->minor = r->minor;
	f = rec_get(r, "mode");
	if (f && f->is_str)
		snprintf(d->mode, sizeof(d->mode), "%s", f->s);
	return 0;
}

static void refresh(void)
{
	int i, fam;

	smrnl_resolve(&ev.ctl);
	for (fam = 0; fam < NR_FAMS; fam++) {
		if (ev.ctl.fam[fam] < 0) {
			for (i = 0; i < MAX_DEVS; i++)
				if (devs[i].used && devs[i].fam == fam)
					devs[i].used = 0;
			continue;
		}
		if (smrnl_dump(&ev.ctl, fam, NULL, seen_cb, NULL))
			continue;
		for (i = 0; i < MAX_DEVS; i++) {
			if (devs[i].fam != fam)
				continue;
			if (devs[i].used == 1)
				devs[i].used = 0;	/* removed */
			else if (devs[i].used == 2)
				devs[i].used = 1;
		}
	}
}

static int on_family(int fam, int up, void *arg)
{
	(void)arg;
	emit_self(up ? "family_up" : "family_down", "name",
		  smrnl_family_name[fam]);
	if (up)
		refresh();
	return 0;
}

static void summary(void)
{
	int i, n = 0;

	refresh();
	fprintf(stderr, "smrd: %" PRIu64 " events, %" PRIu64 " socket overruns\n",
		events_seen, smrnl_ev_overruns);
	for (i = 0; i < MAX_DEVS; i++) {
		struct dev_state *d = &devs[i];
		struct rec r;

		if (!d->used)
			continue;
		n++;
		fprintf(stderr,
			"smrd: %s %s (%u:%u) %s: %s, cache %u%%, cleanings %" PRIu64 "/%" PRIu64
			", last cleaning time %" PRIu64 " ms, zone errors %" PRIu64
			", damage events %" PRIu64 " (%" PRIu64 " live blocks)"
			", commit errors %" PRIu64 "\n",
			smrnl_family_name[d->fam], d->name, d->major, d->minor,
			d->mode[0] ? d->mode : "?",
			d->cleaning_band >= 0 ? "cleaning" :
			d->clean ? "idle and clean" : "idle",
			d->cache_pct, d->clean_dones, d->clean_starts,
			d->last_clean_ms, d->zone_errors, d->damage_events,
			d->damage_live_blocks, d->commit_errors);
		rec_init(&r, smrnl_family_name[d->fam], "summary");
		snprintf(r.device, sizeof(r.device), "%s", d->name);
		r.major = d->major;
		r.minor = d->minor;
		rec_add_str(&r, "state", d->cleaning_band >= 0 ? "cleaning" :
			    d->clean ? "clean" : "idle");
		rec_add_u64(&r, "cache_pct", d->cache_pct);
		rec_add_u64(&r, "clean_starts", d->clean_starts);
		rec_add_u64(&r, "clean_dones", d->clean_dones);
		rec_add_u64(&r, "clean_read_bytes", d->clean_read_bytes);
		rec_add_u64(&r, "clean_write_bytes", d->clean_write_bytes);
		rec_add_u64(&r, "clean_us", d->clean_us);
		rec_add_u64(&r, "idle_cleans", d->idle_cleans);
		rec_add_u64(&r, "last_clean_ms", d->last_clean_ms);
		rec_add_u64(&r, "zone_errors", d->zone_errors);
		rec_add_u64(&r, "damage_events", d->damage_events);
		rec_add_u64(&r, "damage_live_blocks", d->damage_live_blocks);
		rec_add_u64(&r, "commit_errors", d->commit_errors);
		emit(&r);
	}
	if (!n)
		fprintf(stderr, "smrd: no devices\n");
}

/* ---------------------------------------------------------- metrics --- */

/*
 * The Prometheus text exposition (version 0.0.4), for --metrics and
 * --textfile: every family with # HELP and # TYPE before its samples, all
 * its samples together; counters end in _total; seconds and bytes, never
 * milliseconds or sectors; what differs between variants of one quantity
 * (read/write, background/foreground) is a label. Rendered from a
 * snapshot of the kernel side (struct ksnap: the families' dumps and
 * counters) and smrd's own state, so that --render-metrics can feed it
 * recorded records instead of the kernel's.
 */

struct mbuf {
	char *s;
	size_t len, cap;
};

static void mprintf(struct mbuf *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void mprintf(struct mbuf *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(m->s + m->len, m->cap - m->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < m->cap - m->len) {
			m->len += (size_t)n;
			return;
		}
		m->cap = (m->cap + (size_t)n + 1) * 2;
		m->s = realloc(m->s, m->cap);
		if (!m->s)
			exit(1);
	}
}

/* Label values: backslash, quote and newline escaped. */
static const char *label(const char *s, char *buf, size_t len)
{
	size_t o = 0;

	for (; *s && o + 3 < len; s++) {
		if (*s == '\\' || *s == '"') {
			buf[o++] = '\\';
			buf[o++] = *s;
		} else if (*s == '\n') {
			buf[o++] = '\\';
			buf[o++] = 'n';
		} else {
			buf[o++] = *s;
		}
	}
	buf[o] = 0;
	return buf;
}

/* The kernel side at one moment: one dump record per device, the counters. */
struct ksnap {
	int loaded[NR_FAMS];
	int have_stats[NR_FAMS];
	struct rec stats[NR_FAMS];
	struct rec *dev;
	int ndev, cap;
};

/* A dump record; a second one of the same device (a table loaded beside
 * the live one) is left out, as its series would repeat the first's. */
static int ksnap_add(const struct rec *r, void *arg)
{
	struct ksnap *k = arg;
	int i;

	for (i = 0; i < k->ndev; i++)
		if (!strcmp(k->dev[i].family, r->family) &&
		    !strcmp(k->dev[i].device, r->device))
			return 0;
	if (k->ndev == k->cap) {
		k->cap = k->cap ? k->cap * 2 : 16;
		k->dev = realloc(k->dev, (size_t)k->cap * sizeof(*k->dev));
		if (!k->dev)
			exit(1);
	}
	k->dev[k->ndev++] = *r;
	return 0;
}

static void ksnap_collect(struct ksnap *k)
{
	int fam;

	smrnl_resolve(&ev.ctl);
	for (fam = 0; fam < NR_FAMS; fam++) {
		k->loaded[fam] = ev.ctl.fam[fam] >= 0;
		if (!k->loaded[fam])
			continue;
		k->have_stats[fam] = !smrnl_stats(&ev.ctl, fam, &k->stats[fam]);
		smrnl_dump(&ev.ctl, fam, NULL, ksnap_add, k);
	}
}

/* How a dump field's number becomes the metric's value. */
enum { SC_ONE, SC_SECTORS, SC_SLOTS, SC_MILLI, SC_MICRO };

enum { M_GAUGE, M_COUNTER };
static const char *const mtype_name[] = { "gauge", "counter" };

/*
 * The dump fields (smr-nl.c names them) as metrics, with the family and
 * device labels and, where one metric has several fields, one more
 * label. Entries of one metric are adjacent; the first has the help.
 */
struct kmetric {
	const char *key, *name;
	int type, scale;
	const char *lname, *lval;
	const char *help;
};

static const struct kmetric kmetrics[] = {
	/* host-managed zones */
	{ "nr_zones", "smr_zones", M_GAUGE, SC_ONE, NULL, NULL,
	  "Zones of a host-managed device." },
	{ "conv_zones", "smr_conventional_zones", M_GAUGE, SC_ONE, NULL, NULL,
	  "Conventional zones of a host-managed device." },
	{ "imp_open", "smr_zones_in_condition", M_GAUGE, SC_ONE, "condition", "implicit_open",
	  "Zones of a host-managed device in each condition." },
	{ "exp_open", "smr_zones_in_condition", M_GAUGE, SC_ONE, "condition", "explicit_open", NULL },
	{ "closed", "smr_zones_in_condition", M_GAUGE, SC_ONE, "condition", "closed", NULL },
	{ "full", "smr_zones_in_condition", M_GAUGE, SC_ONE, "condition", "full", NULL },
	{ "readonly", "smr_zones_in_condition", M_GAUGE, SC_ONE, "condition", "readonly", NULL },
	{ "offline", "smr_zones_in_condition", M_GAUGE, SC_ONE, "condition", "offline", NULL },
	{ "resets", "smr_zone_operations_total", M_COUNTER, SC_ONE, "op", "reset",
	  "Zone management operations on a host-managed device." },
	{ "finishes", "smr_zone_operations_total", M_COUNTER, SC_ONE, "op", "finish", NULL },
	{ "opens", "smr_zone_operations_total", M_COUNTER, SC_ONE, "op", "open", NULL },
	{ "closes", "smr_zone_operations_total", M_COUNTER, SC_ONE, "op", "close", NULL },
	{ "imp_closes", "smr_zone_operations_total", M_COUNTER, SC_ONE, "op", "implicit_close", NULL },
	{ "wp_errors", "smr_write_pointer_errors_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Writes a host-managed device refused for their write pointer." },
	/* host I/O */
	{ "reads", "smr_bios_total", M_COUNTER, SC_ONE, "op", "read",
	  "Bios the target received." },
	{ "writes", "smr_bios_total", M_COUNTER, SC_ONE, "op", "write", NULL },
	{ "read_sectors", "smr_host_io_bytes_total", M_COUNTER, SC_SECTORS, "op", "read",
	  "Bytes the host read and wrote." },
	{ "write_sectors", "smr_host_io_bytes_total", M_COUNTER, SC_SECTORS, "op", "write", NULL },
	{ "host_read_sectors", "smr_host_io_bytes_total", M_COUNTER, SC_SECTORS, "op", "read", NULL },
	{ "host_write_sectors", "smr_host_io_bytes_total", M_COUNTER, SC_SECTORS, "op", "write", NULL },
	{ "cache_write_sectors", "smr_host_write_path_bytes_total", M_COUNTER, SC_SECTORS,
	  "path", "cache", "Host write bytes by where they went (the cache, or straight to a band)." },
	{ "bypass_write_sectors", "smr_host_write_path_bytes_total", M_COUNTER, SC_SECTORS,
	  "path", "bypass", NULL },
	/* drive-managed bands, cache, cleaning */
	{ "nr_bands", "smr_bands", M_GAUGE, SC_ONE, NULL, NULL,
	  "Bands of a drive-managed device." },
	{ "band_sectors", "smr_band_size_bytes", M_GAUGE, SC_SECTORS, NULL, NULL,
	  "Band size of a drive-managed device." },
	{ "dirty_bands", "smr_dirty_bands", M_GAUGE, SC_ONE, NULL, NULL,
	  "Bands that hold cache slots." },
	{ "cache_total", "smr_cache_size_bytes", M_GAUGE, SC_SLOTS, NULL, NULL,
	  "Size of the persistent cache (4 KiB slots)." },
	{ "cache_used", "smr_cache_used_bytes", M_GAUGE, SC_SLOTS, NULL, NULL,
	  "Cache slots in use, live or superseded." },
	{ "cache_live", "smr_cache_live_bytes", M_GAUGE, SC_SLOTS, NULL, NULL,
	  "Cached blocks the index maps (the newest copies)." },
	{ "index_extents", "smr_cache_index_extents", M_GAUGE, SC_ONE, NULL, NULL,
	  "Extents in the in-memory cache index." },
	{ "index_bytes", "smr_cache_index_memory_bytes", M_GAUGE, SC_ONE, NULL, NULL,
	  "Memory of the cache index." },
	{ "rmw_bg", "smr_band_rewrites_total", M_COUNTER, SC_ONE, "reason", "background",
	  "Band read-modify-writes by why they were done." },
	{ "rmw_fg", "smr_band_rewrites_total", M_COUNTER, SC_ONE, "reason", "foreground", NULL },
	{ "rmw_manual", "smr_band_rewrites_total", M_COUNTER, SC_ONE, "reason", "manual", NULL },
	{ "bg_aborts", "smr_background_clean_aborts_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Background cleanings abandoned for host I/O." },
	{ "clean_read_sectors", "smr_clean_io_bytes_total", M_COUNTER, SC_SECTORS, "op", "read",
	  "Bytes cleaning read and wrote, counted by the kernel since the table was loaded "
	  "(smrd_clean_io_bytes_total: the same from the events smrd received)." },
	{ "clean_write_sectors", "smr_clean_io_bytes_total", M_COUNTER, SC_SECTORS, "op", "write", NULL },
	{ "clean_ms_bg", "smr_clean_seconds_total", M_COUNTER, SC_MILLI, "reason", "background",
	  "Time spent cleaning, background (with manual) and foreground, counted by the "
	  "kernel since the table was loaded (smrd_clean_seconds_total: the same from the "
	  "events smrd received)." },
	{ "clean_ms_fg", "smr_clean_seconds_total", M_COUNTER, SC_MILLI, "reason", "foreground", NULL },
	{ "clean_ms_since_busy", "smr_clean_since_busy_seconds", M_GAUGE, SC_MILLI, NULL, NULL,
	  "Background and manual cleaning time since the last host write." },
	{ "wa_milli", "smr_write_amplification_ratio", M_GAUGE, SC_MILLI, NULL, NULL,
	  "Write amplification: (cache + bypass + cleaning writes) / host writes." },
	/* caveat */
	{ "nr_blocks", "smr_caveat_blocks", M_GAUGE, SC_ONE, NULL, NULL,
	  "Blocks of a caveat device." },
	{ "block_size", "smr_caveat_block_size_bytes", M_GAUGE, SC_ONE, NULL, NULL,
	  "Block size of a caveat device." },
	{ "did", "smr_caveat_did_blocks", M_GAUGE, SC_ONE, NULL, NULL,
	  "Drive isolation distance (DID) of a caveat device, in blocks." },
	{ "dnor", "smr_caveat_dnor_blocks", M_GAUGE, SC_ONE, NULL, NULL,
	  "Drive no overlap range (DNOR) of a caveat device, in blocks." },
	{ "unshingled", "smr_caveat_unshingled_blocks", M_GAUGE, SC_ONE, NULL, NULL,
	  "Blocks of the unshingled region of a caveat device." },
	{ "valid_blocks", "smr_caveat_valid_blocks", M_GAUGE, SC_ONE, NULL, NULL,
	  "Valid blocks of a caveat device." },
	{ "damaging_writes", "smr_caveat_damaging_writes_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Writes whose damage range is not empty." },
	{ "damaged_blocks", "smr_caveat_damaged_blocks_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Blocks writes made maybe damaged (whether or not they already were)." },
	{ "live_damage_writes", "smr_caveat_live_damage_writes_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Writes that damaged valid blocks." },
	{ "live_damaged_blocks", "smr_caveat_live_damaged_blocks_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Valid blocks writes damaged (data lost)." },
	{ "damaged_reads", "smr_caveat_damaged_reads_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Reads that touched maybe-damaged blocks." },
	{ "journal_writes", "smr_caveat_journal_writes_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Damage journal blocks written (each made a batch of damage durable)." },
	{ "cached_writes", "smr_caveat_cached_writes_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Writes the write cache completed before their home write." },
	/* every model */
	{ "errors", "smr_errors_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "I/Os the target failed or saw fail." },
	{ "commits", "smr_metadata_commits_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Metadata commits." },
	{ "mem_bytes", "smr_memory_bytes", M_GAUGE, SC_ONE, NULL, NULL,
	  "Memory the device holds." },
	/* writes failed for waiting on cleaning: the drive's, not a media fault */
	{ "clean_timeouts", "smr_clean_timeouts_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Drive-managed writes failed for waiting longer than clean_timeout_ms for cleaning." },
	/* media faults (every model; docs/dm-smr.rst, "Media faults") */
	{ "bad_read_errors", "smr_media_fault_errors_total", M_COUNTER, SC_ONE, "kind", "bad_read",
	  "I/Os failed by an injected media fault, by kind." },
	{ "bad_write_errors", "smr_media_fault_errors_total", M_COUNTER, SC_ONE, "kind", "bad_write", NULL },
	{ "transient_errors", "smr_media_fault_errors_total", M_COUNTER, SC_ONE, "kind", "transient", NULL },
	{ "bad_remaps", "smr_media_fault_remaps_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "Writes that cleared injected bad sectors (on_write remap)." },
	{ "delayed_ios", "smr_media_fault_delayed_ios_total", M_COUNTER, SC_ONE, NULL, NULL,
	  "I/Os held by an injected delay." },
	/* the power switch (dm-smr; docs/crash-testing.md) */
	{ "power_left", "smr_power_cut_countdown", M_GAUGE, SC_ONE, NULL, NULL,
	  "Commands an armed power_cut countdown still lets pass (0 unless armed)." },
	/* the timing model (drive-managed and caveat; 0 without one) */
	{ "model_busy_ms", "smr_model_busy_seconds_total", M_COUNTER, SC_MILLI, NULL, NULL,
	  "Modelled busy time of the drive (docs/timing.md)." },
	{ "model_clean_ms", "smr_model_clean_seconds_total", M_COUNTER, SC_MILLI, NULL, NULL,
	  "Modelled time the drive spent cleaning." },
	{ "model_lag_ms", "smr_model_lag_seconds_total", M_COUNTER, SC_MILLI, NULL, NULL,
	  "How far the backing device's completions fell behind the model." },
};

#define NR_KMETRICS (sizeof(kmetrics) / sizeof(kmetrics[0]))

/* The string fields of a dump, as enum metrics (one series per value). */
static const char *const state_values[] = { "idle", "clean-bg", "clean-fg", "clean-manual", NULL };
static const char *const policy_values[] = { "fifo", "greedy", "cost-benefit", NULL };
static const char *const power_values[] = { "on", "armed", "cut", NULL };

static void mvalue(struct mbuf *m, uint64_t v, int scale)
{
	switch (scale) {
	case SC_SECTORS:
		mprintf(m, "%" PRIu64 "\n", v * 512);
		break;
	case SC_SLOTS:
		mprintf(m, "%" PRIu64 "\n", v * 4096);
		break;
	case SC_MILLI:
		mprintf(m, "%" PRIu64 ".%03" PRIu64 "\n", v / 1000, v % 1000);
		break;
	case SC_MICRO:
		mprintf(m, "%" PRIu64 ".%06" PRIu64 "\n", v / 1000000, v % 1000000);
		break;
	default:
		mprintf(m, "%" PRIu64 "\n", v);
	}
}

static void mfamily(struct mbuf *m, const char *name, int type, const char *help)
{
	mprintf(m, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, mtype_name[type]);
}

/* name{family="F",device="D"[,lname="lval"]} */
static void msample(struct mbuf *m, const char *name, const char *fam,
		    const char *dev, const char *lname, const char *lval)
{
	char l[300], v[120];

	mprintf(m, "%s{family=\"%s\"", name, label(fam, v, sizeof(v)));
	if (dev)
		mprintf(m, ",device=\"%s\"", label(dev, l, sizeof(l)));
	if (lname)
		mprintf(m, ",%s=\"%s\"", lname, label(lval, v, sizeof(v)));
	mprintf(m, "} ");
}

static int kmetric_of(const char *key)
{
	size_t i;

	for (i = 0; i < NR_KMETRICS; i++)
		if (!strcmp(kmetrics[i].key, key))
			return (int)i;
	return -1;
}

/* Say which dump fields have no metric (--render-metrics). */
static int render_warn;

/*
 * A gauge per value of the string field @key of each device: 1 for the
 * value it has, 0 for the others, labelled @lname.
 */
static void enum_metric(struct mbuf *m, const struct ksnap *k,
			const char *name, const char *help, const char *key,
			const char *lname, const char *const *values)
{
	int d, j;

	mfamily(m, name, M_GAUGE, help);
	for (d = 0; d < k->ndev; d++) {
		const struct rec_field *f = rec_get(&k->dev[d], key);

		for (j = 0; f && f->is_str && values[j]; j++) {
			msample(m, name, k->dev[d].family, k->dev[d].device,
				lname, values[j]);
			mprintf(m, "%d\n", !strcmp(f->s, values[j]));
		}
	}
}

static void kernel_metrics(struct mbuf *m, const struct ksnap *k)
{
	size_t i;
	int d, j;

	for (i = 0; i < NR_KMETRICS; i++) {
		const struct kmetric *km = &kmetrics[i];

		if (km->help)
			mfamily(m, km->name, km->type, km->help);
		for (d = 0; d < k->ndev; d++) {
			const struct rec_field *f = rec_get(&k->dev[d], km->key);

			if (!f || f->is_str)
				continue;
			msample(m, km->name, k->dev[d].family, k->dev[d].device,
				km->lname, km->lval);
			mvalue(m, f->u, km->scale);
		}
	}
	mfamily(m, "smr_device_info", M_GAUGE,
		"A device of the dump (always 1), with its model and dev_t.");
	for (d = 0; d < k->ndev; d++) {
		const struct rec *r = &k->dev[d];
		const struct rec_field *f = rec_get(r, "mode");
		char l[300], mode[120], devt[32];

		snprintf(devt, sizeof(devt), "%u:%u", r->major, r->minor);
		mprintf(m, "smr_device_info{family=\"%s\",device=\"%s\",mode=\"%s\",devt=\"%s\"} 1\n",
			r->family, label(r->device, l, sizeof(l)),
			label(f && f->is_str ? f->s : "", mode, sizeof(mode)), devt);
	}
	enum_metric(m, k, "smr_cleaning_state",
		    "State of a drive-managed device: 1 for the current state, 0 for the others.",
		    "state", "state", state_values);
	enum_metric(m, k, "smr_cleaning_policy",
		    "Cleaning policy of a drive-managed device: 1 for the current one.",
		    "policy", "policy", policy_values);
	enum_metric(m, k, "smr_power_state",
		    "The drive's power switch (power_cut): 1 for the current state, 0 for the others.",
		    "power", "state", power_values);
	for (d = 0; render_warn && d < k->ndev; d++) {
		for (j = 0; j < k->dev[d].nf; j++) {
			const struct rec_field *f = &k->dev[d].f[j];

			if (f->is_str ? strcmp(f->key, "mode") && strcmp(f->key, "state") &&
					strcmp(f->key, "policy") && strcmp(f->key, "power") :
					kmetric_of(f->key) < 0)
				fprintf(stderr, "smrd: no metric for field %s of %s %s\n",
					f->key, k->dev[d].family, k->dev[d].device);
		}
	}
}

/*
 * Which devices a metric of smrd's own applies to: a device's events come
 * from one model only (cleaning and cache levels from drive-managed,
 * zone errors from host-managed, damage from caveat devices), and a
 * series that can only ever be 0 is noise on a dashboard. A dm-smr device
 * whose mode smrd has not learnt yet (no dump, no event) gets them all.
 */
enum { MD_DM = 1, MD_HM = 2, MD_CV = 4, MD_ALL = 7 };

static int dev_model(const struct dev_state *d)
{
	if (d->fam == FAM_CAVEAT)
		return MD_CV;
	if (!strcmp(d->mode, "drive-managed"))
		return MD_DM;
	if (!strcmp(d->mode, "host-managed"))
		return MD_HM;
	return MD_ALL;
}

/* Devices that are in use and of one of the models. */
static int dev_shown(const struct dev_state *d, int models)
{
	return d->used && (dev_model(d) & models);
}

/* smrd's per-device state, one metric per field. */
struct smetric {
	const char *name;
	int type, scale;
	const char *help;
	size_t off;		/* of a uint64_t in struct dev_state */
	int models;		/* MD_*: the devices it is emitted for */
};

#define DS(f) offsetof(struct dev_state, f)

static const struct smetric smetrics[] = {
	{ "smrd_cleanings_started_total", M_COUNTER, SC_ONE,
	  "clean_start events received.", DS(clean_starts), MD_DM },
	{ "smrd_cleanings_total", M_COUNTER, SC_ONE,
	  "clean_done events received.", DS(clean_dones), MD_DM },
	{ "smrd_clean_seconds_total", M_COUNTER, SC_MICRO,
	  "Cleaning time the clean_done events reported since smrd started (the kernel's "
	  "smr_clean_seconds_total counts all cleaning since the table was loaded, "
	  "by reason; the two differ by what happened while smrd was not listening "
	  "or events were dropped).", DS(clean_us), MD_DM },
	{ "smrd_cache_level_events_total", M_COUNTER, SC_ONE,
	  "cache_level events received.", DS(cache_events), MD_DM },
	{ "smrd_idle_cleans_total", M_COUNTER, SC_ONE,
	  "idle_clean events received.", DS(idle_cleans), MD_DM },
	{ "smrd_last_idle_clean_seconds", M_GAUGE, SC_MILLI,
	  "Cleaning time the last idle_clean event reported.", DS(last_clean_ms), MD_DM },
	{ "smrd_commit_errors_total", M_COUNTER, SC_ONE,
	  "commit_error events received: a metadata commit failed (the state stays in "
	  "memory until a later commit succeeds; a crash meanwhile loses it).",
	  DS(commit_errors), MD_DM },
	{ "smrd_last_commit_errno", M_GAUGE, SC_ONE,
	  "errno of the last failed metadata commit (0: none since smrd started).",
	  DS(last_commit_errno), MD_DM },
	{ "smrd_zone_errors_total", M_COUNTER, SC_ONE,
	  "zone_error events received.", DS(zone_errors), MD_HM },
	{ "smrd_damage_events_total", M_COUNTER, SC_ONE,
	  "damage events received.", DS(damage_events), MD_CV },
	{ "smrd_damage_live_blocks_total", M_COUNTER, SC_ONE,
	  "Valid blocks the damage events reported damaged.", DS(damage_live_blocks), MD_CV },
};

static void smrd_metrics(struct mbuf *m, const struct dev_state *ds)
{
	static const char *const states[] = { "cleaning", "idle", "clean" };
	size_t i;
	int d, s;

	mfamily(m, "smrd_device_state", M_GAUGE,
		"What the events say a drive-managed device is doing: 1 for the current state.");
	for (d = 0; d < MAX_DEVS; d++) {
		const struct dev_state *x = &ds[d];
		int cur = x->cleaning_band >= 0 ? 0 : x->clean ? 2 : 1;

		for (s = 0; dev_shown(x, MD_DM) && s < 3; s++) {
			msample(m, "smrd_device_state", smrnl_family_name[x->fam],
				x->name, "state", states[s]);
			mprintf(m, "%d\n", s == cur);
		}
	}
	mfamily(m, "smrd_cache_level_ratio", M_GAUGE,
		"Last cache occupancy level crossed (0.25, 0.5, 0.75, 1; 0 = empty).");
	for (d = 0; d < MAX_DEVS; d++) {
		if (!dev_shown(&ds[d], MD_DM))
			continue;
		msample(m, "smrd_cache_level_ratio", smrnl_family_name[ds[d].fam],
			ds[d].name, NULL, NULL);
		mprintf(m, "%u.%02u\n", ds[d].cache_pct / 100, ds[d].cache_pct % 100);
	}
	mfamily(m, "smrd_clean_io_bytes_total", M_COUNTER,
		"Bytes the clean_done events reported read and written since smrd started "
		"(the kernel's count since the table was loaded is smr_clean_io_bytes_total).");
	for (d = 0; d < MAX_DEVS; d++) {
		if (!dev_shown(&ds[d], MD_DM))
			continue;
		msample(m, "smrd_clean_io_bytes_total", smrnl_family_name[ds[d].fam],
			ds[d].name, "op", "read");
		mprintf(m, "%" PRIu64 "\n", ds[d].clean_read_bytes);
		msample(m, "smrd_clean_io_bytes_total", smrnl_family_name[ds[d].fam],
			ds[d].name, "op", "write");
		mprintf(m, "%" PRIu64 "\n", ds[d].clean_write_bytes);
	}
	for (i = 0; i < sizeof(smetrics) / sizeof(smetrics[0]); i++) {
		mfamily(m, smetrics[i].name, smetrics[i].type, smetrics[i].help);
		for (d = 0; d < MAX_DEVS; d++) {
			if (!dev_shown(&ds[d], smetrics[i].models))
				continue;
			msample(m, smetrics[i].name, smrnl_family_name[ds[d].fam],
				ds[d].name, NULL, NULL);
			mvalue(m, *(const uint64_t *)((const char *)&ds[d] + smetrics[i].off),
			       smetrics[i].scale);
		}
	}
	mfamily(m, "smrd_last_event_timestamp_seconds", M_GAUGE,
		"When smrd received the device's last event (seconds since the epoch).");
	for (d = 0; d < MAX_DEVS; d++) {
		if (!ds[d].used || !ds[d].last_event)
			continue;
		msample(m, "smrd_last_event_timestamp_seconds",
			smrnl_family_name[ds[d].fam], ds[d].name, NULL, NULL);
		mprintf(m, "%.3f\n", ds[d].last_event);
	}
}

static void metrics_render(struct mbuf *m, const struct ksnap *k)
{
	int fam;

	mfamily(m, "smrd_events_total", M_COUNTER, "Events smrd received.");
	mprintf(m, "smrd_events_total %" PRIu64 "\n", events_seen);
	mfamily(m, "smrd_socket_overruns_total", M_COUNTER,
		"Times smrd's event socket overflowed and lost events.");
	mprintf(m, "smrd_socket_overruns_total %" PRIu64 "\n", smrnl_ev_overruns);
	mfamily(m, "smrd_family_loaded", M_GAUGE,
		"Whether the generic netlink family (its module) is loaded.");
	for (fam = 0; fam < NR_FAMS; fam++) {
		msample(m, "smrd_family_loaded", smrnl_family_name[fam], NULL, NULL, NULL);
		mprintf(m, "%d\n", k->loaded[fam]);
	}
	mfamily(m, "smr_kernel_events_total", M_COUNTER,
		"Events the family sent, and dropped (over the rate, no memory, a full socket).");
	for (fam = 0; fam < NR_FAMS; fam++) {
		if (!k->have_stats[fam])
			continue;
		msample(m, "smr_kernel_events_total", smrnl_family_name[fam], NULL,
			"result", "sent");
		mprintf(m, "%" PRIu64 "\n", rec_u64(&k->stats[fam], "events_sent", 0));
		msample(m, "smr_kernel_events_total", smrnl_family_name[fam], NULL,
			"result", "dropped");
		mprintf(m, "%" PRIu64 "\n", rec_u64(&k->stats[fam], "events_dropped", 0));
	}
	mfamily(m, "smr_kernel_event_rate_limit", M_GAUGE,
		"Events per second the family may send (0: none).");
	for (fam = 0; fam < NR_FAMS; fam++) {
		if (!k->have_stats[fam] || !rec_get(&k->stats[fam], "event_rate"))
			continue;
		msample(m, "smr_kernel_event_rate_limit", smrnl_family_name[fam], NULL,
			NULL, NULL);
		mprintf(m, "%" PRIu64 "\n", rec_u64(&k->stats[fam], "event_rate", 0));
	}
	kernel_metrics(m, k);
	smrd_metrics(m, devs);
}

/* The exposition of now: the kernel's dump and smrd's state. */
static void metrics_now(struct mbuf *m)
{
	struct ksnap k = { 0 };

	ksnap_collect(&k);
	metrics_render(m, &k);
	free(k.dev);
}

/* ------------------------------------------------- --render-metrics --- */

/*
 * A recorded run, for tests without the kernel: JSON lines as smrd and
 * "smrctl status --json" / "event-stats --json" write them (flat objects
 * of strings and numbers). "device" records are the dump, "stats" ones
 * the family counters, events go through on_event as if received.
 */
static const char *json_str(const char *p, char *out, size_t len)
{
	size_t o = 0;

	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		unsigned int c = (unsigned char)*p;

		if (c == '\\') {
			p++;
			switch (*p) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u':
				if (!isxdigit((unsigned char)p[1]) ||
				    !isxdigit((unsigned char)p[2]) ||
				    !isxdigit((unsigned char)p[3]) ||
				    !isxdigit((unsigned char)p[4]) ||
				    sscanf(p + 1, "%4x", &c) != 1)
					return NULL;
				p += 4;
				break;
			case 0: return NULL;
			default: c = (unsigned char)*p;
			}
		}
		if (c >= 0x800 && o + 3 < len) {
			out[o++] = (char)(0xe0 | c >> 12);
			out[o++] = (char)(0x80 | (c >> 6 & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c >= 0x80 && o + 2 < len) {
			out[o++] = (char)(0xc0 | c >> 6);
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x80 && o + 1 < len) {
			out[o++] = (char)c;
		}
	}
	out[o] = 0;
	return *p == '"' ? p + 1 : NULL;
}

/* One line into @r (and its "ts" into @ts). 0, or -1: not a record. */
static int json_rec(const char *p, struct rec *r, double *ts)
{
	char key[32], s[128];

	rec_init(r, "", "");
	p += strspn(p, " \t");
	if (*p++ != '{')
		return -1;
	for (;;) {
		p += strspn(p, " \t");
		if (*p == '}')
			return 0;
		p = json_str(p, key, sizeof(key));
		if (!p)
			return -1;
		p += strspn(p, " \t");
		if (*p++ != ':')
			return -1;
		p += strspn(p, " \t");
		if (*p == '"') {
			char *to = !strcmp(key, "family") ? r->family :
				   !strcmp(key, "event") ? r->event :
				   !strcmp(key, "device") ? r->device : s;
			size_t len = to == r->family ? sizeof(r->family) :
				     to == r->event ? sizeof(r->event) :
				     to == r->device ? sizeof(r->device) : sizeof(s);

			p = json_str(p, to, len);
			if (!p)
				return -1;
			if (!strcmp(key, "devt"))
				sscanf(s, "%u:%u", &r->major, &r->minor);
			else if (to == s)
				rec_add_str(r, key, s);
		} else {
			char *end;

			if (!strcmp(key, "ts"))
				*ts = strtod(p, &end);
			else
				rec_add_u64(r, key, strtoull(p, &end, 10));
			if (end == p)
				return -1;
			p = end + strspn(end, "0123456789.eE+-");
		}
		p += strspn(p, " \t");
		if (*p == ',')
			p++;
		else if (*p != '}')
			return -1;
	}
}

static int render_file(const char *path)
{
	struct ksnap k = { 0 };
	struct mbuf m = { 0 };
	char line[8192];
	int lineno = 0, fam;
	FILE *f = fopen(path, "re");

	if (!f) {
		fprintf(stderr, "smrd: cannot open %s: %s\n", path, strerror(errno));
		return 1;
	}
	render_warn = 1;
	while (fgets(line, sizeof(line), f)) {
		struct rec r;
		double ts = 0;

		lineno++;
		if (line[strspn(line, " \t\n")] == 0)
			continue;
		if (json_rec(line, &r, &ts)) {
			fprintf(stderr, "smrd: %s:%d: not a JSON record\n", path, lineno);
			fclose(f);
			return 1;
		}
		for (fam = 0; fam < NR_FAMS; fam++)
			if (!strcmp(r.family, smrnl_family_name[fam]))
				break;
		if (fam == NR_FAMS || !strcmp(r.event, "summary"))
			continue;	/* smrd's own lines */
		k.loaded[fam] = 1;
		if (!strcmp(r.event, "device")) {
			struct dev_state *d;

			ksnap_add(&r, &k);
			seen_cb(&r, NULL);
			d = dev_get(fam, r.device, 0);
			if (d)
				d->used = 1;
		} else if (!strcmp(r.event, "stats")) {
			k.stats[fam] = r;
			k.have_stats[fam] = 1;
		} else {
			replay_ts = ts;
			on_event(&r, NULL);
		}
	}
	fclose(f);
	metrics_render(&m, &k);
	fwrite(m.s, 1, m.len, stdout);
	free(m.s);
	free(k.dev);
	return 0;
}

/* ------------------------------------------------------------- http --- */

/*
 * The endpoint lives in the event loop without ever blocking it: sockets
 * are non-blocking, each client has its buffers and a deadline, and the
 * loop reads, answers and closes as the sockets allow. A client that
 * sends nothing is dropped at its deadline, or sooner when the slots are
 * all taken and a new one comes (the oldest goes).
 */
#define HTTP_CLIENTS 16
#define HTTP_TIMEOUT_MS 5000

struct http_client {
	int fd;			/* -1: free */
	char req[2048];
	size_t rlen;
	struct mbuf out;	/* the response, once the request is in */
	size_t sent;
	int64_t deadline;	/* ms, CLOCK_MONOTONIC */
};

static struct http_client http[HTTP_CLIENTS];

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void http_close(struct http_client *c)
{
	close(c->fd);
	free(c->out.s);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void http_accept(int lfd)
{
	int fd, i, slot;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		/*
		 * A free slot, else the oldest client still sending its
		 * request; one being answered is never dropped for a newcomer
		 * (idle connections cannot starve a scraper that got in).
		 */
		slot = -1;
		for (i = 0; i < HTTP_CLIENTS; i++) {
			if (http[i].fd < 0) {
				slot = i;
				break;
			}
			if (!http[i].out.len &&
			    (slot < 0 || http[i].deadline < http[slot].deadline))
				slot = i;
		}
		if (slot < 0) {
			close(fd);
			continue;
		}
		if (http[slot].fd >= 0)
			http_close(&http[slot]);
		http[slot].fd = fd;
		http[slot].deadline = mono_ms() + HTTP_TIMEOUT_MS;
	}
}

/* The request is in (or the buffer full): build the response. */
static void http_respond(struct http_client *c)
{
	struct mbuf body = { 0 };

	const char *path;
	int head;

	c->req[c->rlen] = 0;
	/* GET, or HEAD: the same headers without the body (RFC 9110 9.3.2). */
	head = !strncmp(c->req, "HEAD ", 5);
	if (!head && strncmp(c->req, "GET ", 4)) {
		mprintf(&c->out, "HTTP/1.0 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n"
			"Content-Length: 0\r\n\r\n");
		return;
	}
	path = c->req + (head ? 5 : 4);
	if (strncmp(path, "/metrics ", 9) && strncmp(path, "/metrics?", 9) &&
	    strncmp(path, "/ ", 2)) {
		mprintf(&c->out, "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n");
		return;
	}
	metrics_now(&body);
	mprintf(&c->out, "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
		"Content-Length: %zu\r\nConnection: close\r\n\r\n%.*s", body.len,
		head ? 0 : (int)body.len, body.s ? body.s : "");
	free(body.s);
}

static void http_io(struct http_client *c, short revents)
{
	ssize_t n;

	if (!c->out.len && (revents & (POLLIN | POLLHUP | POLLERR))) {
		n = recv(c->fd, c->req + c->rlen, sizeof(c->req) - 1 - c->rlen, 0);
		if (n <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EINTR))
				http_close(c);
			return;
		}
		c->rlen += (size_t)n;
		c->req[c->rlen] = 0;
		if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n") ||
		    c->rlen == sizeof(c->req) - 1)
			http_respond(c);
	}
	if (c->out.len && c->sent < c->out.len) {
		n = send(c->fd, c->out.s + c->sent, c->out.len - c->sent,
			 MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			http_close(c);
			return;
		}
		if (n > 0)
			c->sent += (size_t)n;
		if (c->sent == c->out.len)
			http_close(c);
	}
}

/*
 * --metrics ADDRESS:PORT: an IPv4 loopback address (127.0.0.0/8),
 * "localhost" (127.0.0.1, whatever /etc/hosts says: no lookup) or the
 * IPv6 loopback in brackets, [::1]:PORT. Nothing else: the endpoint has
 * no authentication.
 */
static int metrics_listen(const char *spec)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	union {
		struct sockaddr sa;
		struct sockaddr_in in;
		struct sockaddr_in6 in6;
	} a;
	socklen_t alen;
	uint64_t port;
	size_t hlen;
	int fd, one = 1;

	if (!colon || (size_t)(colon - spec) >= sizeof(host) ||
	    parse_u64(colon + 1, &port) || !port || port > 65535) {
		fprintf(stderr, "smrd: --metrics wants ADDRESS:PORT, e.g. 127.0.0.1:9433, localhost:9433 or [::1]:9433\n");
		return -1;
	}
	hlen = (size_t)(colon - spec);
	memcpy(host, spec, hlen);
	host[hlen] = 0;
	memset(&a, 0, sizeof(a));
	if (hlen > 2 && host[0] == '[' && host[hlen - 1] == ']') {
		host[hlen - 1] = 0;
		a.in6.sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, host + 1, &a.in6.sin6_addr) != 1) {
			fprintf(stderr, "smrd: --metrics: '%s' is not an IPv6 address\n", host + 1);
			return -1;
		}
		if (!IN6_IS_ADDR_LOOPBACK(&a.in6.sin6_addr)) {
			fprintf(stderr, "smrd: --metrics: %s is not the loopback address; the endpoint has no authentication, so it only listens on [::1] or 127.0.0.0/8\n",
				host + 1);
			return -1;
		}
		a.in6.sin6_port = htons((uint16_t)port);
		alen = sizeof(a.in6);
	} else {
		a.in.sin_family = AF_INET;
		if (!strcmp(host, "localhost")) {
			a.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		} else if (inet_pton(AF_INET, host, &a.in.sin_addr) != 1) {
			fprintf(stderr, "smrd: --metrics: '%s' is not an IPv4 address, localhost or [IPv6] (an IPv6 address goes in brackets: [::1]:PORT)\n",
				host);
			return -1;
		}
		if ((ntohl(a.in.sin_addr.s_addr) >> 24) != 127) {
			fprintf(stderr, "smrd: --metrics: %s is not a loopback address; the endpoint has no authentication, so it only listens on 127.0.0.0/8 or [::1]\n",
				host);
			return -1;
		}
		a.in.sin_port = htons((uint16_t)port);
		alen = sizeof(a.in);
	}
	fd = socket(a.sa.sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		fprintf(stderr, "smrd: --metrics %s: %s\n", spec, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a.sa.sa_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, &a.sa, alen) || listen(fd, 16)) {
		fprintf(stderr, "smrd: --metrics %s: %s\n", spec, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* --------------------------------------------------------- textfile --- */

/*
 * node_exporter's textfile collector: the same exposition written to
 * PATH.tmp and renamed over PATH, so a reader sees the old file or the
 * new one, never a part. Mode 0644 whatever the umask: another user
 * (node_exporter) reads it.
 */
static const char *textfile;
static int textfile_failed;

static void textfile_write(void)
{
	struct mbuf m = { 0 };
	char tmp[4096];
	ssize_t n = -1;
	int fd, err = 0;

	metrics_now(&m);
	snprintf(tmp, sizeof(tmp), "%s.tmp", textfile);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || fchmod(fd, 0644))
		err = errno;
	else if ((n = write(fd, m.s, m.len)) != (ssize_t)m.len)
		err = n < 0 ? errno : ENOSPC;
	if (fd >= 0 && close(fd) && !err)
		err = errno;
	if (!err && rename(tmp, textfile))
		err = errno;
	if (err) {
		if (fd >= 0)
			unlink(tmp);
		if (!textfile_failed)
			fprintf(stderr, "smrd: --textfile %s: %s\n", textfile, strerror(err));
	} else if (textfile_failed) {
		fprintf(stderr, "smrd: --textfile %s: written again\n", textfile);
	}
	textfile_failed = !!err;
	free(m.s);
}

/* ------------------------------------------------------------- main --- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smrd [--json FILE|-] [--metrics 127.0.0.1|localhost|[::1]:PORT]\n"
		"            [--textfile PATH [--interval SECONDS]]\n"
		"       smrd -h|--help | -V|--version\n"
		"  Reports dm-smr and dm-caveat events as JSON lines (stdout by\n"
		"  default), the Prometheus exposition on --metrics, and in the\n"
		"  --textfile PATH for node_exporter. SIGUSR1: summary on stderr and\n"
		"  as \"summary\" lines; SIGHUP: reopen the --json file. See smrd(8).\n");
}

static int open_json(void)
{
	FILE *f;

	if (!json_path || !strcmp(json_path, "-")) {
		json_out = stdout;
		return 0;
	}
	f = fopen(json_path, "ae");
	if (!f) {
		fprintf(stderr, "smrd: cannot open %s: %s\n", json_path, strerror(errno));
		return -1;
	}
	if (json_out && json_out != stdout)
		fclose(json_out);
	json_out = f;
	return 0;
}

/* The fixed descriptors of the poll set; the HTTP clients follow. */
enum { PFD_EV, PFD_SIG, PFD_HTTP, PFD_CLIENTS };

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "textfile", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' },
		{ "render-metrics", required_argument, NULL, 'R' },	/* tests */
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *metrics = NULL;
	struct pollfd pfd[PFD_CLIENTS + HTTP_CLIENTS];
	uint64_t interval = 15;
	int64_t next_write = 0;
	sigset_t mask;
	int c, i, sfd, mfd = -1, n, ret, interval_given = 0;

	while ((c = getopt_long(argc, argv, "j:m:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json_path = optarg; break;
		case 'm': metrics = optarg; break;
		case 't': textfile = optarg; break;
		case 'i':
			if (parse_u64(optarg, &interval) || !interval || interval > 86400) {
				fprintf(stderr, "smrd: --interval wants seconds, 1 to 86400\n");
				return 2;
			}
			interval_given = 1;
			break;
		case 'R': return render_file(optarg);
		case 'h': usage(stdout); return 0;
		case 'V': printf("smrd (dm-smr) %s\n", SMR_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "smrd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	if (interval_given && !textfile) {
		fprintf(stderr, "smrd: --interval is how often --textfile is rewritten: give --textfile PATH too (the --metrics endpoint is rendered at each scrape)\n");
		return 2;
	}
	if (open_json())
		return 1;
	if (metrics) {
		mfd = metrics_listen(metrics);
		if (mfd < 0)
			return 1;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGUSR1);
	sigaddset(&mask, SIGHUP);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		perror("smrd: signalfd");
		return 1;
	}
	ret = smrnl_ev_open(&ev, on_event, NULL);
	if (ret) {
		fprintf(stderr, "smrd: cannot open a generic netlink socket: %s\n",
			strerror(-ret));
		return 1;
	}
	ev.on_family = on_family;
	refresh();
	n = (ev.grp[FAM_SMR] >= 0) + (ev.grp[FAM_CAVEAT] >= 0);
	{
		char fams[64];

		snprintf(fams, sizeof(fams), "%s%s%s",
			 ev.grp[FAM_SMR] >= 0 ? "dm-smr" : "",
			 n == 2 ? "," : "",
			 ev.grp[FAM_CAVEAT] >= 0 ? "dm-caveat" : "");
		emit_self("subscribed", "families", fams);
	}
	if (!n)
		fprintf(stderr, "smrd: neither dm-smr nor dm-caveat is loaded yet; waiting for them (modprobe dm-smr)\n");

	pfd[PFD_EV].fd = smrnl_ev_fd(&ev);
	pfd[PFD_SIG].fd = sfd;
	pfd[PFD_HTTP].fd = mfd;
	for (i = 0; i < HTTP_CLIENTS; i++)
		http[i].fd = -1;
	for (;;) {
		int64_t t = mono_ms();
		int timeout = -1;

		/* The textfile: now if due, then at the next interval; an
		 * event brings it forward to a second after the last write. */
		if (textfile && t >= next_write) {
			textfile_write();
			next_write = t + (int64_t)interval * 1000;
		}
		if (textfile)
			timeout = (int)(next_write - t);
		for (i = 0; i < HTTP_CLIENTS; i++) {
			struct http_client *hc = &http[i];

			if (hc->fd >= 0 && t >= hc->deadline)
				http_close(hc);
			if (hc->fd >= 0 && (timeout < 0 || hc->deadline - t < timeout))
				timeout = (int)(hc->deadline - t);
			pfd[PFD_CLIENTS + i].fd = hc->fd;
			pfd[PFD_CLIENTS + i].events = hc->out.len ? POLLOUT : POLLIN;
		}
		for (i = 0; i < PFD_CLIENTS; i++)
			pfd[i].events = POLLIN;
		if (poll(pfd, PFD_CLIENTS + HTTP_CLIENTS, timeout) < 0) {
			if (errno == EINTR)
				continue;
			perror("smrd: poll");
			return 1;
		}
		if (pfd[PFD_EV].revents & POLLIN) {
			uint64_t seen = events_seen;

			ret = smrnl_ev_recv(&ev);
			if (ret)
				fprintf(stderr, "smrd: netlink receive: %s\n", strerror(-ret));
			if (textfile && events_seen != seen &&
			    next_write > mono_ms() + 1000)
				next_write = next_write - (int64_t)interval * 1000 + 1000;
		}
		if (pfd[PFD_SIG].revents & POLLIN) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == sizeof(si)) {
				switch (si.ssi_signo) {
				case SIGUSR1:
					summary();
					break;
				case SIGHUP:
					open_json();
					break;
				default:
					emit_self("exit", NULL, NULL);
					smrnl_ev_close(&ev);
					return 0;
				}
			}
		}
		if (mfd >= 0 && (pfd[PFD_HTTP].revents & POLLIN))
			http_accept(mfd);
		for (i = 0; i < HTTP_CLIENTS; i++)
			if (http[i].fd >= 0 && pfd[PFD_CLIENTS + i].fd == http[i].fd &&
			    pfd[PFD_CLIENTS + i].revents)
				http_io(&http[i], pfd[PFD_CLIENTS + i].revents);
	}
}
