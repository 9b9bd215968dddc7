// SPDX-License-Identifier: GPL-2.0
/*
 * smr-util: sizes, drive profiles, dm table computation, JSON records.
 * No kernel, no libraries: unit tested by test-units.c.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "smr-util.h"

#define SECTOR 512ULL
#define BLOCK_SECTORS 8ULL	/* 4 KiB */
#define MD_ALIGN 2048ULL	/* metadata is rounded up to 1 MiB */

static void seterr(char *err, size_t elen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !elen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, elen, fmt, ap);
	va_end(ap);
}

static uint64_t round_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

static uint64_t div_up(uint64_t v, uint64_t d)
{
	return (v + d - 1) / d;
}

static int is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

/* ---------------------------------------------------------- sizes --- */

int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	x = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	*v = x;
	return 0;
}

int parse_size(const char *s, uint64_t *bytes)
{
	uint64_t ip = 0, frac = 0, fdiv = 1, mult = 1;
	const char *p = s;
	int shift = 0;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		if (ip > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		ip = ip * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (fdiv >= 1000000000ULL)
				continue;	/* ignore digits past 1e-9 */
			frac = frac * 10 + (uint64_t)(*p - '0');
			fdiv *= 10;
		}
	}
	switch (toupper((unsigned char)*p)) {
	case 'K': shift = 10; p++; break;
	case 'M': shift = 20; p++; break;
	case 'G': shift = 30; p++; break;
	case 'T': shift = 40; p++; break;
	case 'P': shift = 50; p++; break;
	case 'S': shift = -1; p++; break;	/* 512-byte sectors */
	}
	if (shift > 0) {
		if (*p == 'i')
			p++;
		if (toupper((unsigned char)*p) == 'B')
			p++;
	} else if (!shift && toupper((unsigned char)*p) == 'B') {
		p++;
	}
	if (*p)
		return -EINVAL;
	mult = shift < 0 ? SECTOR : 1ULL << shift;
	if (ip > UINT64_MAX / mult)
		return -ERANGE;
	ip *= mult;
	/* frac / fdiv * mult, without overflow for mult <= 2^50 */
	if (frac) {
		uint64_t f = (uint64_t)((long double)frac * mult / fdiv);

		if (ip > UINT64_MAX - f)
			return -ERANGE;
		ip += f;
	}
	*bytes = ip;
	return 0;
}

int parse_ppm(const char *s, uint32_t *ppm)
{
	uint64_t ip = 0, frac = 0, fdiv = 1, v;
	const char *p = s;

	if (!s || !isdigit((unsigned char)*p))
		return -EINVAL;
	for (; isdigit((unsigned char)*p); p++) {
		ip = ip * 10 + (uint64_t)(*p - '0');
		if (ip > 100)
			return -ERANGE;
	}
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		for (; isdigit((unsigned char)*p); p++) {
			if (fdiv >= 10000)
				continue;	/* 1 ppm = 0.0001 % */
			frac = frac * 10 + (uint64_t)(*p - '0');
			fdiv *= 10;
		}
	}
	if (strcmp(p, "%"))
		return -EINVAL;
	v = ip * 10000 + frac * 10000 / fdiv;
	if (v > 1000000 || !v)
		return -ERANGE;
	*ppm = (uint32_t)v;
	return 0;
}

const char *format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
	int u = 0;
	double v = (double)bytes;

	while (v >= 1024 && u < 5) {
		v /= 1024;
		u++;
	}
	if (!u)
		snprintf(buf, len, "%" PRIu64 " B", bytes);
	else if (v == (double)(uint64_t)v)
		snprintf(buf, len, "%.0f %s", v, unit[u]);
	else
		snprintf(buf, len, "%.2f %s", v, unit[u]);
	return buf;
}

/* ------------------------------------------------- table geometry --- */

void geom_init(struct smr_geom *g)
{
	memset(g, 0, sizeof(*g));
	g->idle_ms = -1;
	g->seq_bypass = -1;
	g->conv = -1;
	g->max_open = -1;
	g->max_active = -1;
	g->write_cache_mib = -1;
	g->did = -1;
	g->dnor = -1;
	g->unshingled = -1;
	g->on_damaged_read = -1;
	g->start_mb = -1;
}

const char *model_name(enum smr_model m)
{
	switch (m) {
	case MODEL_DRIVE_MANAGED: return "drive-managed";
	case MODEL_HOST_MANAGED: return "host-managed";
	case MODEL_CAVEAT: return "caveat";
	default: return "none";
	}
}

enum smr_model model_parse(const char *s)
{
	if (!strcmp(s, "drive-managed") || !strcmp(s, "dm"))
		return MODEL_DRIVE_MANAGED;
	if (!strcmp(s, "host-managed") || !strcmp(s, "hm"))
		return MODEL_HOST_MANAGED;
	if (!strcmp(s, "caveat"))
		return MODEL_CAVEAT;
	return MODEL_NONE;
}

int policy_valid(const char *s)
{
	return !strcmp(s, "fifo") || !strcmp(s, "greedy") ||
		!strcmp(s, "cost-benefit");
}

/*
 * Drive-managed metadata (dm-smr-dm-md.c): superblock, then two 4 KiB slots
 * per table block; table blocks = 1 (intent) + one per 254 cache slots
 * (16-byte records) + one per 508 bands (8-byte records); rounded up to
 * 1 MiB.
 */
uint64_t smr_dm_md_sectors(uint64_t len, uint64_t band, uint64_t cache)
{
	uint64_t tb = 1 + div_up(cache / BLOCK_SECTORS, 254) +
		div_up(len / band, 508);

	return round_up((1 + 2 * tb) * BLOCK_SECTORS, MD_ALIGN);
}

/* Host-managed: superblock, two slots per 508 zones, rounded to 1 MiB. */
uint64_t smr_hm_md_sectors(uint64_t nr_zones)
{
	return round_up((1 + 2 * div_up(nr_zones, 508)) * BLOCK_SECTORS,
			MD_ALIGN);
}

/*
 * Caveat (format version 2): superblock, two slots per 32256 blocks, the
 * 224-block damage journal, rounded to 1 MiB.
 */
#define CV_JOURNAL_BLOCKS 224
uint64_t cv_md_sectors(uint64_t nr_blocks)
{
	return round_up((1 + 2 * div_up(nr_blocks, 32256) + CV_JOURNAL_BLOCKS) *
			BLOCK_SECTORS, MD_ALIGN);
}

struct optbuf {
	char s[512];
	int n;		/* words */
};

static void opt_add(struct optbuf *o, const char *fmt, ...)
{
	size_t l = strlen(o->s);
	va_list ap;
	const char *p;

	va_start(ap, fmt);
	vsnprintf(o->s + l, sizeof(o->s) - l, fmt, ap);
	va_end(ap);
	/* words: count the spaces we just added (every word starts with one) */
	for (p = o->s + l; *p; p++)
		if (*p == ' ')
			o->n++;
}

static uint64_t dm_cache_sectors(const struct smr_geom *g, uint64_t len,
				 uint64_t band)
{
	uint64_t c;

	if (g->cache)
		return round_up(div_up(g->cache, SECTOR), BLOCK_SECTORS);
	if (g->cache_ppm)
		c = round_up(div_up(len * g->cache_ppm, 1000000), BLOCK_SECTORS);
	else
		c = round_up(len / 100, BLOCK_SECTORS);	/* kernel default */
	return c < band ? band : c;
}

/* The timing model's keys (the kernel checks their ranges). */
static const char *const timing_keys[] = {
	"rpm", "seek_t2t_us", "seek_avg_us", "seek_full_us", "od_mbps",
	"id_mbps", "overhead_us", "cache_at", "drive_mb", "buffer_mib",
	"queue_depth", "read_segments", "read_ahead_kib", NULL
};

/* Keys renamed since profiles were first written: old, new. */
static const char *const timing_renamed[][2] = {
	{ "wcache_mib", "buffer_mib" },
};

static int timing_add(struct smr_geom *g, const char *k, const char *v)
{
	size_t l = strlen(g->timing);
	uint64_t x;
	int n;

	if (parse_u64(v, &x) || x > UINT32_MAX)
		return -EINVAL;
	n = snprintf(g->timing + l, sizeof(g->timing) - l, " %s %" PRIu64, k, x);
	if (n < 0 || (size_t)n >= sizeof(g->timing) - l) {
		g->timing[l] = 0;
		return -EINVAL;
	}
	g->timing_words += 2;
	return 0;
}

/* The " timing <n> <key> <value>..." group for @g's table line, or "". */
static const char *timing_group(const struct smr_geom *g, char *buf, size_t len)
{
	if (!g->timing_words)
		return "";
	if (g->start_mb >= 0)
		snprintf(buf, len, " timing %d%s start_mb %" PRId64,
			 g->timing_words + 2, g->timing, g->start_mb);
	else
		snprintf(buf, len, " timing %d%s", g->timing_words, g->timing);
	return buf;
}

/* Decimal MB to sectors, rounded down (as the kernel's smr_tm_mb()). */
static uint64_t mb_sectors(uint64_t mb)
{
	return mb * 1000000 / SECTOR;
}

/*
 * Does a device of @len sectors fit on the drive the timing group
 * describes, from start_mb? (The kernel checks it too; this says it
 * before the table is loaded.)
 */
static int timing_fits(const struct smr_geom *g, uint64_t len, char *err,
		       size_t elen)
{
	uint64_t start = g->start_mb > 0 ? (uint64_t)g->start_mb : 0;

	if (!g->timing_words) {
		/* Not dropped without a word: it means nothing without a model. */
		if (g->start_mb >= 0) {
			seterr(err, elen, "start_mb places the device on a modelled drive, but there is no timing model: use a profile that has one (and no --no-timing), or leave --start-mb out");
			return -EINVAL;
		}
		return 0;
	}
	if (g->start_mb >= 0 && !g->drive_mb) {
		seterr(err, elen, "start_mb places the device on a drive, but the timing model has no drive_mb (add it to the profile)");
		return -EINVAL;
	}
	if (g->drive_mb && (start > UINT32_MAX ||
			    mb_sectors(start) + len > mb_sectors(g->drive_mb))) {
		seterr(err, elen, "the device (%" PRIu64 " MB) does not fit on the drive of %" PRIu64 " MB from start_mb %" PRIu64 ": give a smaller --size or --start-mb",
		       len * SECTOR / 1000000, g->drive_mb, start);
		return -EINVAL;
	}
	return 0;
}

/*
 * --write-cache MIB: a volatile write cache (docs/dm-smr.rst "The write
 * cache", docs/dm-caveat.rst): the table option write_cache_kib of every
 * model; caveat's holds at most 64 MiB. Neither combines with a timing
 * model.
 */
static int write_cache_opt(const struct smr_geom *g, enum smr_model m,
			   struct optbuf *o, char *err, size_t elen)
{
	int64_t max = m == MODEL_CAVEAT ? 64 : 1024;

	if (g->write_cache_mib < 0)
		return 0;
	if (g->write_cache_mib < 1 || g->write_cache_mib > max) {
		seterr(err, elen, "write cache of %" PRId64 " MiB: use 1 to %" PRId64 " MiB for %s",
		       g->write_cache_mib, max, model_name(m));
		return -EINVAL;
	}
	if (g->timing_words) {
		seterr(err, elen, "a write cache does not combine with the timing model (its buffer_mib models a cache's time): add --no-timing, or leave out --write-cache");
		return -EINVAL;
	}
	opt_add(o, " write_cache_kib %" PRId64, g->write_cache_mib << 10);
	return 0;
}

static int table_dm(const struct smr_geom *g, const char *dev,
		    uint64_t backing, char *table, size_t tlen, char *err,
		    size_t elen)
{
	uint64_t band, len, cache, md, need;
	struct optbuf o = { "", 0 };
	char b1[32], b2[32], tg[340];

	if (!g->band) {
		seterr(err, elen, "drive-managed needs a band size: --band SIZE (e.g. --band 32M) or --profile");
		return -EINVAL;
	}
	if (g->band % 4096 || g->band < (1ULL << 20) || g->band > (256ULL << 20)) {
		seterr(err, elen, "band size %s: use a multiple of 4 KiB from 1 MiB to 256 MiB",
		       format_size(g->band, b1, sizeof(b1)));
		return -EINVAL;
	}
	if (g->cache && (g->cache % 4096 || g->cache < (1ULL << 20))) {
		seterr(err, elen, "cache size %s: use a multiple of 4 KiB, at least 1 MiB",
		       format_size(g->cache, b1, sizeof(b1)));
		return -EINVAL;
	}
	band = g->band / SECTOR;
	if (g->size) {
		len = g->size / SECTOR / band * band;
		if (!len) {
			seterr(err, elen, "size %s is smaller than one band (%s): give a larger --size",
			       format_size(g->size, b1, sizeof(b1)),
			       format_size(g->band, b2, sizeof(b2)));
			return -EINVAL;
		}
	} else {
		/* The largest whole number of bands that fits. */
		uint64_t avail = backing / SECTOR;
		double share = g->cache ? 0 :
			(g->cache_ppm ? g->cache_ppm / 1e6 : 0.01);

		len = avail > band + MD_ALIGN ?
			(uint64_t)((avail - band - MD_ALIGN) / (1 + share)) : 0;
		len = len / band * band;
		for (;;) {
			if (!len)
				break;
			cache = dm_cache_sectors(g, len, band);
			need = smr_dm_md_sectors(len, band, cache) + cache +
				band + len;
			if (need <= avail)
				break;
			len -= band;
		}
		if (!len) {
			seterr(err, elen, "backing device (%s) is too small for even one band of %s with its cache, spare band and metadata: use a larger --dev or a smaller --band",
			       format_size(backing, b1, sizeof(b1)),
			       format_size(g->band, b2, sizeof(b2)));
			return -EINVAL;
		}
	}
	/* The kernel's limits (dm-smr-dm.h): 2^36 blocks, 2^24 bands, 2^28 slots. */
	if (len / BLOCK_SECTORS >= 1ULL << 36) {
		seterr(err, elen, "size %s: drive-managed devices must be under 256 TiB",
		       format_size(len * SECTOR, b1, sizeof(b1)));
		return -EINVAL;
	}
	if (len / band > 1ULL << 24) {
		seterr(err, elen, "%" PRIu64 " bands of %s: at most 16777216; give a larger --band",
		       len / band, format_size(g->band, b1, sizeof(b1)));
		return -EINVAL;
	}
	cache = dm_cache_sectors(g, len, band);
	if (cache / BLOCK_SECTORS >= 1ULL << 28) {
		seterr(err, elen, "cache %s: must be under 1 TiB; give a smaller --cache",
		       format_size(cache * SECTOR, b1, sizeof(b1)));
		return -EINVAL;
	}
	md = smr_dm_md_sectors(len, band, cache);
	need = md + cache + band + len;
	if (need > backing / SECTOR) {
		char b3[32], b4[32], b5[32], b6[32];

		seterr(err, elen, "geometry does not fit: %s of data + %s cache + %s spare band + %s metadata need %s, the backing device has %s; give a smaller --size or --cache",
		       format_size(len * SECTOR, b1, sizeof(b1)),
		       format_size(cache * SECTOR, b2, sizeof(b2)),
		       format_size(band * SECTOR, b3, sizeof(b3)),
		       format_size(md * SECTOR, b4, sizeof(b4)),
		       format_size(need * SECTOR, b5, sizeof(b5)),
		       format_size(backing, b6, sizeof(b6)));
		return -EINVAL;
	}
	opt_add(&o, " cache_sectors %" PRIu64, cache);
	if (g->idle_ms >= 0) {
		if (g->idle_ms > 3600000) {
			seterr(err, elen, "idle_ms %" PRId64 ": use 0 (no background cleaning) to 3600000",
			       g->idle_ms);
			return -EINVAL;
		}
		opt_add(&o, " idle_ms %" PRId64, g->idle_ms);
	}
	if (g->policy[0]) {
		if (!policy_valid(g->policy)) {
			seterr(err, elen, "policy '%s': use fifo, greedy or cost-benefit",
			       g->policy);
			return -EINVAL;
		}
		opt_add(&o, " policy %s", g->policy);
	}
	if (g->seq_bypass >= 0)
		opt_add(&o, " seq_bypass %s", g->seq_bypass ? "on" : "off");
	if (write_cache_opt(g, MODEL_DRIVE_MANAGED, &o, err, elen))
		return -EINVAL;
	if (g->format)
		opt_add(&o, " format");
	if (timing_fits(g, len, err, elen))
		return -EINVAL;
	if ((size_t)snprintf(table, tlen, "0 %" PRIu64 " smr %s drive-managed %" PRIu64 " %d%s%s",
			     len, dev, band, o.n, o.s,
			     timing_group(g, tg, sizeof(tg))) >= tlen) {
		seterr(err, elen, "table line too long");
		return -EINVAL;
	}
	return 0;
}

static uint64_t hm_conv(const struct smr_geom *g, uint64_t nz)
{
	uint64_t c;

	if (g->conv >= 0)
		return (uint64_t)g->conv;
	if (!g->conv_ppm)
		return 0;
	c = div_up(nz * g->conv_ppm, 1000000);
	return c >= nz ? nz - 1 : c;
}

/* The most conventional zones @avail sectors hold beside one sequential. */
static uint64_t hm_max_conv(uint64_t zs, uint64_t cap, uint64_t avail)
{
	uint64_t c = avail > cap ? (avail - cap) / zs : 0;

	while (c && smr_hm_md_sectors(c + 1) + c * zs + cap > avail)
		c--;
	return c;
}

static int table_hm(const struct smr_geom *g, const char *dev,
		    uint64_t backing, char *table, size_t tlen, char *err,
		    size_t elen)
{
	uint64_t zs, cap, nz, conv, need, avail = backing / SECTOR;
	struct optbuf o = { "", 0 };
	char b1[32], b2[32], tg[340];

	if (strstr(g->timing, " cache_at ")) {
		seterr(err, elen, "cache_at is a drive-managed timing key: a host-managed device has no cache");
		return -EINVAL;
	}
	if (!g->zone) {
		seterr(err, elen, "host-managed needs a zone size: --zone SIZE (e.g. --zone 256M) or --profile");
		return -EINVAL;
	}
	zs = g->zone / SECTOR;
	if (g->zone % SECTOR || zs < 8 || !is_pow2(zs) || zs > (1ULL << 31)) {
		seterr(err, elen, "zone size %s: use a power of two from 4 KiB to 1 TiB",
		       format_size(g->zone, b1, sizeof(b1)));
		return -EINVAL;
	}
	cap = g->zone_cap ? g->zone_cap / SECTOR : zs;
	if (g->zone_cap && (g->zone_cap % 4096 || cap > zs || !cap)) {
		seterr(err, elen, "zone capacity %s: use a multiple of 4 KiB, at most the zone size",
		       format_size(g->zone_cap, b1, sizeof(b1)));
		return -EINVAL;
	}
	if (g->size) {
		nz = g->size / SECTOR / zs;
		if (!nz) {
			seterr(err, elen, "size %s is smaller than one zone (%s)",
			       format_size(g->size, b1, sizeof(b1)),
			       format_size(g->zone, b2, sizeof(b2)));
			return -EINVAL;
		}
	} else {
		nz = avail / cap;
		for (; nz; nz--) {
			conv = hm_conv(g, nz);
			if (conv >= nz) {
				nz = 0;	/* fewer zones, still none sequential */
				break;
			}
			need = smr_hm_md_sectors(nz) + conv * zs + (nz - conv) * cap;
			if (need <= avail)
				break;
		}
		/* One sequential zone would fit: the count given is the problem. */
		if (!nz && g->conv > 0 && smr_hm_md_sectors(1) + cap <= avail) {
			seterr(err, elen, "%" PRId64 " conventional zones leave no sequential zone on the backing device (%s, zones of %s): use --conv %" PRIu64 " or fewer, or a larger --dev",
			       g->conv, format_size(backing, b1, sizeof(b1)),
			       format_size(g->zone, b2, sizeof(b2)),
			       hm_max_conv(zs, cap, avail));
			return -EINVAL;
		}
		if (!nz) {
			seterr(err, elen, "backing device (%s) is too small for one zone of %s: use a larger --dev or a smaller --zone",
			       format_size(backing, b1, sizeof(b1)),
			       format_size(g->zone, b2, sizeof(b2)));
			return -EINVAL;
		}
	}
	conv = hm_conv(g, nz);
	if (conv >= nz) {
		seterr(err, elen, "%" PRIu64 " conventional zones leave no sequential zone of the %" PRIu64 " that --size %s holds: use --conv %" PRIu64 " or fewer",
		       conv, nz, format_size(g->size, b1, sizeof(b1)), nz - 1);
		return -EINVAL;
	}
	need = smr_hm_md_sectors(nz) + conv * zs + (nz - conv) * cap;
	if (need > avail) {
		seterr(err, elen, "geometry does not fit: %" PRIu64 " zones need %s on the backing device, it has %s; give a smaller --size",
		       nz, format_size(need * SECTOR, b1, sizeof(b1)),
		       format_size(backing, b2, sizeof(b2)));
		return -EINVAL;
	}
	if (conv)
		opt_add(&o, " conv_zones %" PRIu64, conv);
	if (cap != zs)
		opt_add(&o, " zone_capacity %" PRIu64, cap);
	if (g->max_open >= 0)
		opt_add(&o, " max_open %" PRId64, g->max_open);
	if (g->max_active >= 0)
		opt_add(&o, " max_active %" PRId64, g->max_active);
	if (write_cache_opt(g, MODEL_HOST_MANAGED, &o, err, elen))
		return -EINVAL;
	if (g->format)
		opt_add(&o, " format");
	if (timing_fits(g, nz * zs, err, elen))
		return -EINVAL;
	if ((size_t)snprintf(table, tlen, "0 %" PRIu64 " smr %s host-managed %" PRIu64 "%s%.0d%s%s",
			     nz * zs, dev, zs, o.n ? " " : "", o.n, o.s,
			     timing_group(g, tg, sizeof(tg))) >= tlen) {
		seterr(err, elen, "table line too long");
		return -EINVAL;
	}
	return 0;
}

static int table_cv(const struct smr_geom *g, const char *dev,
		    uint64_t backing, char *table, size_t tlen, char *err,
		    size_t elen)
{
	uint64_t bs = g->block_size ? g->block_size : 4096;
	uint64_t bsec = bs / SECTOR, nb, need, avail = backing / SECTOR;
	struct optbuf o = { "", 0 };
	char b1[32], b2[32], tg[340];

	if (g->did < 0 || g->dnor < 0) {
		seterr(err, elen, "caveat needs --did N and --dnor N (blocks; 0 <= DNOR <= DID) or --profile");
		return -EINVAL;
	}
	if (g->dnor > g->did || g->did > (1LL << 32)) {
		seterr(err, elen, "DNOR %" PRId64 " / DID %" PRId64 ": need 0 <= DNOR <= DID <= 2^32",
		       g->dnor, g->did);
		return -EINVAL;
	}
	if (!is_pow2(bs) || bs < 512 || bs > 65536) {
		seterr(err, elen, "block size %" PRIu64 ": use a power of two from 512 to 65536",
		       bs);
		return -EINVAL;
	}
	if (g->size) {
		nb = g->size / bs;
	} else {
		/* md grows with nb: shrink nb until the data and md fit. */
		nb = avail / bsec;
		while (nb && cv_md_sectors(nb) + nb * bsec > avail) {
			uint64_t md = cv_md_sectors(nb);

			nb = md < avail ? (avail - md) / bsec : 0;
		}
	}
	if (!nb) {
		seterr(err, elen, "no room for a single block: use a larger --dev or --size");
		return -EINVAL;
	}
	need = cv_md_sectors(nb) + nb * bsec;
	if (need > avail) {
		seterr(err, elen, "geometry does not fit: %" PRIu64 " blocks need %s on the backing device, it has %s; give a smaller --size",
		       nb, format_size(need * SECTOR, b1, sizeof(b1)),
		       format_size(backing, b2, sizeof(b2)));
		return -EINVAL;
	}
	if (g->unshingled > (int64_t)nb) {
		seterr(err, elen, "unshingled %" PRId64 " exceeds the %" PRIu64 " blocks",
		       g->unshingled, nb);
		return -EINVAL;
	}
	if (g->block_size)
		opt_add(&o, " block_size %" PRIu64, bs);
	if (g->unshingled >= 0)
		opt_add(&o, " unshingled %" PRId64, g->unshingled);
	if (g->on_damaged_read >= 0)
		opt_add(&o, " on_damaged_read %s", g->on_damaged_read ? "zero" : "error");
	if (write_cache_opt(g, MODEL_CAVEAT, &o, err, elen))
		return -EINVAL;
	if (g->format)
		opt_add(&o, " format");
	if (strstr(g->timing, " cache_at ")) {
		seterr(err, elen, "cache_at is a drive-managed timing key: a caveat device has no cache");
		return -EINVAL;
	}
	if (timing_fits(g, nb * bsec, err, elen))
		return -EINVAL;
	if ((size_t)snprintf(table, tlen, "0 %" PRIu64 " caveat %s %" PRId64 " %" PRId64 "%s%.0d%s%s",
			     nb * bsec, dev, g->did, g->dnor, o.n ? " " : "",
			     o.n, o.s, timing_group(g, tg, sizeof(tg))) >= tlen) {
		seterr(err, elen, "table line too long");
		return -EINVAL;
	}
	return 0;
}

int smr_compute_table(const struct smr_geom *g, const char *dev,
		      uint64_t backing, char *table, size_t tlen, char *err,
		      size_t elen)
{
	char b1[32], b2[32];

	if (g->size && g->size > backing) {
		seterr(err, elen, "--size %s is larger than the backing device (%s)",
		       format_size(g->size, b1, sizeof(b1)),
		       format_size(backing, b2, sizeof(b2)));
		return -EINVAL;
	}
	switch (g->model) {
	case MODEL_DRIVE_MANAGED:
		return table_dm(g, dev, backing, table, tlen, err, elen);
	case MODEL_HOST_MANAGED:
		return table_hm(g, dev, backing, table, tlen, err, elen);
	case MODEL_CAVEAT:
		return table_cv(g, dev, backing, table, tlen, err, elen);
	default:
		seterr(err, elen, "no model: --model drive-managed|host-managed|caveat or --profile");
		return -EINVAL;
	}
}

/* -------------------------------------------------------- profiles --- */

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

/* "error" or "zero" (caveat's on_damaged_read): 0 or 1 in *out. */
int parse_on_damaged_read(const char *v, int *out)
{
	if (!strcmp(v, "error"))
		*out = 0;
	else if (!strcmp(v, "zero"))
		*out = 1;
	else
		return -EINVAL;
	return 0;
}

static int prof_int(const char *v, int64_t *out)
{
	uint64_t x;

	if (parse_u64(v, &x) || x > INT64_MAX)
		return -EINVAL;
	*out = (int64_t)x;
	return 0;
}

static int profile_kv(struct smr_geom *g, const char *k, const char *v)
{
	uint64_t x;
	int i;

	if (!strcmp(k, "start_mb"))
		return parse_u64(v, &x) || x > UINT32_MAX ? -EINVAL :
			(g->start_mb = (int64_t)x, 0);
	if (!strcmp(k, "drive_mb") &&
	    (parse_u64(v, &x) || !x || x > UINT32_MAX || g->drive_mb))
		return -EINVAL;
	for (i = 0; i < (int)(sizeof(timing_renamed) / sizeof(timing_renamed[0])); i++)
		if (!strcmp(k, timing_renamed[i][0]))
			k = timing_renamed[i][1];
	for (i = 0; timing_keys[i]; i++)
		if (!strcmp(k, timing_keys[i])) {
			if (!strcmp(k, "drive_mb"))
				g->drive_mb = x;
			return timing_add(g, k, v);
		}

	if (!strcmp(k, "description")) {
		snprintf(g->description, sizeof(g->description), "%s", v);
		return 0;
	}
	if (!strcmp(k, "model")) {
		g->model = model_parse(v);
		return g->model == MODEL_NONE ? -EINVAL : 0;
	}
	if (!strcmp(k, "size"))
		return parse_size(v, &g->size);
	if (!strcmp(k, "band"))
		return parse_size(v, &g->band);
	if (!strcmp(k, "cache")) {
		if (strchr(v, '%')) {
			g->cache = 0;
			return parse_ppm(v, &g->cache_ppm);
		}
		return parse_size(v, &g->cache);
	}
	if (!strcmp(k, "idle_ms"))
		return prof_int(v, &g->idle_ms);
	if (!strcmp(k, "policy")) {
		if (!policy_valid(v))
			return -EINVAL;
		snprintf(g->policy, sizeof(g->policy), "%s", v);
		return 0;
	}
	if (!strcmp(k, "seq_bypass")) {
		if (!strcmp(v, "on"))
			g->seq_bypass = 1;
		else if (!strcmp(v, "off"))
			g->seq_bypass = 0;
		else
			return -EINVAL;
		return 0;
	}
	if (!strcmp(k, "zone"))
		return parse_size(v, &g->zone);
	if (!strcmp(k, "zone_capacity"))
		return parse_size(v, &g->zone_cap);
	if (!strcmp(k, "conv")) {
		if (strchr(v, '%')) {
			g->conv = -1;
			return parse_ppm(v, &g->conv_ppm);
		}
		return prof_int(v, &g->conv);
	}
	if (!strcmp(k, "max_open"))
		return prof_int(v, &g->max_open);
	if (!strcmp(k, "max_active"))
		return prof_int(v, &g->max_active);
	if (!strcmp(k, "did"))
		return prof_int(v, &g->did);
	if (!strcmp(k, "dnor"))
		return prof_int(v, &g->dnor);
	if (!strcmp(k, "unshingled"))
		return prof_int(v, &g->unshingled);
	if (!strcmp(k, "on_damaged_read"))
		return parse_on_damaged_read(v, &g->on_damaged_read);
	if (!strcmp(k, "block_size")) {
		if (parse_size(v, &x) || x > 65536)
			return -EINVAL;
		g->block_size = (uint32_t)x;
		return 0;
	}
	return -ENOENT;
}

int profile_apply_text(const char *text, const char *fname,
		       struct smr_geom *g, char *err, size_t elen)
{
	char line[512], *k, *v, *eq, *hash;
	const char *p = text, *nl;
	int lineno = 0, ret;
	size_t n;

	while (*p) {
		lineno++;
		nl = strchr(p, '\n');
		n = nl ? (size_t)(nl - p) : strlen(p);
		if (n >= sizeof(line)) {
			seterr(err, elen, "%s:%d: line too long", fname, lineno);
			return -EINVAL;
		}
		memcpy(line, p, n);
		line[n] = 0;
		p += n + (nl ? 1 : 0);
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		k = trim(line);
		if (!*k)
			continue;
		eq = strchr(k, '=');
		if (!eq) {
			seterr(err, elen, "%s:%d: expected 'key = value'", fname, lineno);
			return -EINVAL;
		}
		*eq = 0;
		v = trim(eq + 1);
		k = trim(k);
		ret = profile_kv(g, k, v);
		if (ret == -ENOENT) {
			seterr(err, elen, "%s:%d: unknown key '%s'", fname, lineno, k);
			return -EINVAL;
		}
		if (ret) {
			seterr(err, elen, "%s:%d: bad value '%s' for %s", fname, lineno, v, k);
			return -EINVAL;
		}
	}
	if (g->model == MODEL_NONE) {
		seterr(err, elen, "%s: no 'model = ...' line", fname);
		return -EINVAL;
	}
	return 0;
}

int profile_load(const char *path, struct smr_geom *g, char *err, size_t elen)
{
	char buf[16384];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f) {
		seterr(err, elen, "cannot read profile %s: %s", path, strerror(errno));
		return -errno;
	}
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	if (!feof(f)) {
		fclose(f);
		seterr(err, elen, "%s: profile too large", path);
		return -EFBIG;
	}
	fclose(f);
	return profile_apply_text(buf, path, g, err, elen);
}

/* ------------------------------------------------------------ records --- */

void rec_init(struct rec *r, const char *family, const char *event)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->family, sizeof(r->family), "%s", family);
	snprintf(r->event, sizeof(r->event), "%s", event);
}

static struct rec_field *rec_slot(struct rec *r, const char *key)
{
	struct rec_field *f;

	if (r->nf >= REC_MAX_FIELDS)
		return NULL;
	f = &r->f[r->nf++];
	snprintf(f->key, sizeof(f->key), "%s", key);
	return f;
}

void rec_add_u64(struct rec *r, const char *key, uint64_t v)
{
	struct rec_field *f = rec_slot(r, key);

	if (f) {
		f->is_str = 0;
		f->u = v;
	}
}

void rec_add_str(struct rec *r, const char *key, const char *v)
{
	struct rec_field *f = rec_slot(r, key);

	if (f) {
		f->is_str = 1;
		snprintf(f->s, sizeof(f->s), "%s", v);
	}
}

const struct rec_field *rec_get(const struct rec *r, const char *key)
{
	int i;

	for (i = 0; i < r->nf; i++)
		if (!strcmp(r->f[i].key, key))
			return &r->f[i];
	return NULL;
}

uint64_t rec_u64(const struct rec *r, const char *key, uint64_t dflt)
{
	const struct rec_field *f = rec_get(r, key);

	return f && !f->is_str ? f->u : dflt;
}

/* Bytes of the well-formed UTF-8 sequence at @p (RFC 3629), or 0. */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n, i;

	if (*p >= 0xc2 && *p <= 0xdf)
		n = 2;
	else if (*p >= 0xe0 && *p <= 0xef)
		n = 3;
	else if (*p >= 0xf0 && *p <= 0xf4)
		n = 4;
	else
		return 0;
	if (*p == 0xe0)
		lo = 0xa0;
	else if (*p == 0xed)
		hi = 0x9f;	/* no UTF-16 surrogates */
	else if (*p == 0xf0)
		lo = 0x90;
	else if (*p == 0xf4)
		hi = 0x8f;	/* nothing past U+10FFFF */
	for (i = 1; i < n; i++, lo = 0x80, hi = 0xbf)
		if (p[i] < lo || p[i] > hi)
			return 0;
	return n;
}

/*
 * The next character of *@pp as it stands in a JSON string: itself, \"
 * \\, \u00XX for a control character, or \ufffd for a byte that is not
 * UTF-8 (a dm name may hold any byte). Advances *@pp.
 */
static const char *json_char(const unsigned char **pp, char esc[8])
{
	const unsigned char *p = *pp;
	size_t n = *p < 0x80 ? 1 : utf8_len(p);

	if (*p == '"' || *p == '\\')
		snprintf(esc, 8, "\\%c", *p);
	else if (*p < 0x20 || *p == 0x7f)
		snprintf(esc, 8, "\\u%04x", *p);
	else if (n)
		snprintf(esc, 8, "%.*s", (int)n, (const char *)p);
	else
		snprintf(esc, 8, "\\ufffd");
	*pp = p + (n ? n : 1);
	return esc;
}

int json_string(const char *s, char *out, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0, n;
	char esc[8];

	if (len < 3)
		return -1;
	out[o++] = '"';
	while (*p) {
		n = strlen(json_char(&p, esc));
		if (o + n + 2 > len)
			return -1;
		memcpy(out + o, esc, n);
		o += n;
	}
	out[o++] = '"';
	out[o] = 0;
	return (int)o;
}

void json_fputs(const char *s, FILE *f)
{
	const unsigned char *p = (const unsigned char *)s;
	char esc[8];

	fputc('"', f);
	while (*p)
		fputs(json_char(&p, esc), f);
	fputc('"', f);
}

int rec_to_json(const struct rec *r, double ts, char *buf, size_t len)
{
	/* A device name or string value, every byte escaped (\u0001: 6). */
	char tmp[6 * sizeof(r->device) + 3];
	size_t o = 0;
	int i, n;

#define APPEND(...) do { \
		n = snprintf(buf + o, len - o, __VA_ARGS__); \
		if (n < 0 || (size_t)n >= len - o) \
			return -1; \
		o += (size_t)n; \
	} while (0)
	APPEND("{");
	if (ts >= 0)
		APPEND("\"ts\":%.3f,", ts);
	if (json_string(r->family, tmp, sizeof(tmp)) < 0)
		return -1;
	APPEND("\"family\":%s,", tmp);
	if (json_string(r->event, tmp, sizeof(tmp)) < 0)
		return -1;
	APPEND("\"event\":%s,", tmp);
	if (json_string(r->device, tmp, sizeof(tmp)) < 0)
		return -1;
	APPEND("\"device\":%s,\"devt\":\"%u:%u\"", tmp, r->major, r->minor);
	for (i = 0; i < r->nf; i++) {
		const struct rec_field *f = &r->f[i];
		char key[80];

		if (json_string(f->key, key, sizeof(key)) < 0)
			return -1;
		if (f->is_str) {
			if (json_string(f->s, tmp, sizeof(tmp)) < 0)
				return -1;
			APPEND(",%s:%s", key, tmp);
		} else {
			APPEND(",%s:%" PRIu64, key, f->u);
		}
	}
	APPEND("}");
#undef APPEND
	return (int)o;
}

/* --------------------------------------------------- backing in use --- */

/* Append "<holder> (<dm name>) on <what>" for each entry of @dir/holders. */
static int holders_of(const char *sysfs, const char *dir, const char *what,
		      char *out, size_t len)
{
	char path[PATH_MAX + 512], name[128];
	struct dirent *e;
	size_t at;
	int n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/holders", dir);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		name[0] = 0;
		snprintf(path, sizeof(path), "%s/block/%s/dm/name", sysfs, e->d_name);
		f = fopen(path, "r");
		if (f) {
			if (!fgets(name, sizeof(name), f))
				name[0] = 0;
			name[strcspn(name, "\n")] = 0;
			fclose(f);
		}
		at = strlen(out);
		snprintf(out + at, len - at, "%s%s%s%s%s on %s", at ? ", " : "",
			 e->d_name, name[0] ? " (" : "", name, name[0] ? ")" : "", what);
		n++;
	}
	closedir(d);
	return n;
}

static int is_partition(const char *dir)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/partition", dir) >= (int)sizeof(path))
		return 0;
	return access(path, F_OK) == 0;
}

int bdev_holders(const char *sysfs, unsigned int maj, unsigned int min,
		 char *out, size_t len)
{
	char link[PATH_MAX], dir[PATH_MAX], up[PATH_MAX], sub[PATH_MAX + 256];
	struct dirent *e;
	int n;
	DIR *d;

	out[0] = 0;
	snprintf(link, sizeof(link), "%s/dev/block/%u:%u", sysfs, maj, min);
	if (!realpath(link, dir))
		return -errno;
	n = holders_of(sysfs, dir, basename(strcpy(sub, dir)), out, len);
	if (is_partition(dir)) {
		snprintf(up, sizeof(up), "%s", dir);
		dirname(up);
		n += holders_of(sysfs, up, basename(strcpy(sub, up)), out, len);
		return n;
	}
	d = opendir(dir);
	if (!d)
		return n;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
		if (is_partition(sub))
			n += holders_of(sysfs, sub, e->d_name, out, len);
	}
	closedir(d);
	return n;
}
