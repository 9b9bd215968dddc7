// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for smr-util.c (no kernel, no VM): sizes, table computation,
 * profile parsing, JSON output. TAP on stdout; exit 1 on any failure.
 *   lib/test-units PROFILE_DIR
 * make check gives it the shipped profiles' directory: the profiles are
 * smrctl's, and the library's code names no program's folder.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smr-util.h"
#include "tap.h"

static void eq_str(const char *got, const char *want, const char *what)
{
	ok(!strcmp(got, want), "%s", what);
	if (strcmp(got, want))
		printf("#   got:  '%s'\n#   want: '%s'\n", got, want);
}

#define MiB (1ULL << 20)
#define GiB (1ULL << 30)
#define TiB (1ULL << 40)

static void test_sizes(void)
{
	static const struct { const char *s; uint64_t v; } good[] = {
		{ "0", 0 }, { "4096", 4096 }, { "4096B", 4096 }, { "32K", 32768 },
		{ "32k", 32768 }, { "32KiB", 32768 }, { "256M", 256 * MiB },
		{ "1G", GiB }, { "1.5G", 3 * GiB / 2 }, { "2T", 2ULL << 40 },
		{ "8s", 4096 }, { "1GB", GiB },
	};
	static const char *const bad[] = {
		"", "M", "-1", "1X", "1.G", "1 G", "1GiBx", "99999999999999999999",
		"20000000P", NULL,
	};
	char buf[32];
	uint64_t v;
	uint32_t ppm;
	unsigned int i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		int r = parse_size(good[i].s, &v);

		ok(!r && v == good[i].v, "parse_size(\"%s\") = %" PRIu64, good[i].s, good[i].v);
	}
	for (i = 0; bad[i]; i++)
		ok(parse_size(bad[i], &v) != 0, "parse_size(\"%s\") is refused", bad[i]);
	ok(!parse_ppm("1%", &ppm) && ppm == 10000, "parse_ppm 1%%");
	ok(!parse_ppm("0.25%", &ppm) && ppm == 2500, "parse_ppm 0.25%%");
	ok(!parse_ppm("100%", &ppm) && ppm == 1000000, "parse_ppm 100%%");
	ok(parse_ppm("101%", &ppm) != 0, "parse_ppm 101%% refused");
	ok(parse_ppm("0%", &ppm) != 0, "parse_ppm 0%% refused");
	ok(parse_ppm("5", &ppm) != 0, "parse_ppm without %% refused");
	ok(!parse_u64("12", &v) && v == 12, "parse_u64 12");
	ok(parse_u64("12a", &v) != 0 && parse_u64("-3", &v) != 0, "parse_u64 junk refused");
	eq_str(format_size(32 * MiB, buf, sizeof(buf)), "32 MiB", "format_size 32 MiB");
	eq_str(format_size(3 * GiB / 2, buf, sizeof(buf)), "1.50 GiB", "format_size 1.5 GiB");
	eq_str(format_size(100, buf, sizeof(buf)), "100 B", "format_size 100 B");
}

/* Check a computed table: fields, and the backing-size arithmetic. */
static void test_tables(void)
{
	struct smr_geom g;
	char t[1024], err[512];
	uint64_t len, band, cache, md, need;
	int r;

	/* drive-managed, explicit size, band and cache */
	geom_init(&g);
	g.model = MODEL_DRIVE_MANAGED;
	g.size = GiB;
	g.band = 32 * MiB;
	g.cache = 64 * MiB;
	r = smr_compute_table(&g, "/dev/vda", 2 * GiB, t, sizeof(t), err, sizeof(err));
	ok(!r, "dm table computed (%s)", r ? err : "");
	eq_str(t, "0 2097152 smr /dev/vda drive-managed 65536 2 cache_sectors 131072",
	       "dm table, 1G / 32M bands / 64M cache");

	/* options in the kernel's order and count */
	g.idle_ms = 0;
	snprintf(g.policy, sizeof(g.policy), "greedy");
	g.seq_bypass = 0;
	g.format = 1;
	smr_compute_table(&g, "/dev/vda", 2 * GiB, t, sizeof(t), err, sizeof(err));
	eq_str(t, "0 2097152 smr /dev/vda drive-managed 65536 9 cache_sectors 131072 idle_ms 0 policy greedy seq_bypass off format",
	       "dm table with every option");

	/* the kernel's size limits, with the same numbers */
	geom_init(&g);
	g.model = MODEL_DRIVE_MANAGED;
	g.size = 64 * TiB;
	g.band = 256 * MiB;
	r = smr_compute_table(&g, "/dev/x", 66 * TiB, t, sizeof(t), err, sizeof(err));
	ok(!r && strstr(t, "0 137438953472 smr /dev/x drive-managed 524288 2 cache_sectors 1374389536") == t,
	   "dm 64 TiB with the default 1%% cache (%s)", r ? err : t);
	g.size = 256 * TiB;
	g.cache = 64 * GiB;
	r = smr_compute_table(&g, "/dev/x", 257 * TiB, t, sizeof(t), err, sizeof(err));
	ok(r && strstr(err, "under 256 TiB"), "dm 256 TiB refused (%s)", err);
	g.size = 17 * TiB;
	g.band = MiB;
	r = smr_compute_table(&g, "/dev/x", 18 * TiB, t, sizeof(t), err, sizeof(err));
	ok(r && strstr(err, "at most 16777216"), "dm 17 TiB of 1 MiB bands refused (%s)", err);
	g.size = 128 * TiB;
	g.band = 256 * MiB;
	g.cache = 0;
	r = smr_compute_table(&g, "/dev/x", 130 * TiB, t, sizeof(t), err, sizeof(err));
	ok(r && strstr(err, "under 1 TiB"), "dm 128 TiB with a 1%% cache refused (%s)", err);

	/* size rounds down to whole bands */
	geom_init(&g);
	g.model = MODEL_DRIVE_MANAGED;
	g.size = GiB + 10 * MiB;
	g.band = 30 * MiB;
	smr_compute_table(&g, "/dev/x", 4 * GiB, t, sizeof(t), err, sizeof(err));
	ok(sscanf(t, "0 %" SCNu64, &len) == 1 && len == 34 * 61440,
	   "dm size rounded down to 34 bands of 30 MiB (%s)", t);
	/* default cache: 1% of the length, at least a band */
	ok(strstr(t, " cache_sectors 61440") != NULL, "dm default cache is one band when 1%% is less");

	/* auto size: fits, and one more band would not */
	geom_init(&g);
	g.model = MODEL_DRIVE_MANAGED;
	g.band = 4 * MiB;
	g.cache_ppm = 100000;	/* 10% */
	r = smr_compute_table(&g, "/dev/x", 512 * MiB, t, sizeof(t), err, sizeof(err));
	ok(!r, "dm auto size computed (%s)", r ? err : t);
	sscanf(t, "0 %" SCNu64 " smr /dev/x drive-managed %" SCNu64 " 2 cache_sectors %" SCNu64,
	       &len, &band, &cache);
	md = smr_dm_md_sectors(len, band, cache);
	need = md + cache + band + len;
	ok(len % band == 0 && need <= 512 * MiB / 512, "dm auto size fits (%" PRIu64 " <= %llu)",
	   need, 512 * MiB / 512);
	ok(cache >= len / 10 && cache % 8 == 0, "dm auto cache is 10%% of the length");
	{
		uint64_t l2 = len + band, c2 = (l2 / 10 + 7) / 8 * 8;

		ok(smr_dm_md_sectors(l2, band, c2) + c2 + band + l2 > 512 * MiB / 512,
		   "dm auto size is the largest that fits");
	}

	/* errors that tell what to do */
	geom_init(&g);
	g.model = MODEL_DRIVE_MANAGED;
	ok(smr_compute_table(&g, "/dev/x", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "--band"), "dm without a band asks for --band (%s)", err);
	g.band = 1000 * 1000;
	ok(smr_compute_table(&g, "/dev/x", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "multiple of 4 KiB"), "dm band not 4 KiB aligned refused (%s)", err);
	g.band = 512 * MiB;
	ok(smr_compute_table(&g, "/dev/x", 4 * GiB, t, sizeof(t), err, sizeof(err)) != 0,
	   "dm band over 256 MiB refused");
	g.band = 32 * MiB;
	g.size = GiB;
	ok(smr_compute_table(&g, "/dev/x", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "does not fit"), "dm geometry that does not fit is refused with sizes (%s)", err);
	g.size = 0;
	ok(smr_compute_table(&g, "/dev/x", 40 * MiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "too small"), "dm backing too small for a band (%s)", err);
	g.size = 8 * GiB;
	ok(smr_compute_table(&g, "/dev/x", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "larger than the backing"), "size over the backing refused (%s)", err);
	g.size = GiB;
	snprintf(g.policy, sizeof(g.policy), "lru");
	ok(smr_compute_table(&g, "/dev/x", 4 * GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "fifo, greedy or cost-benefit"), "unknown policy refused (%s)", err);

	/* --write-cache: MiB for dm-smr, blocks for caveat; not with timing */
	geom_init(&g);
	g.model = MODEL_DRIVE_MANAGED;
	g.size = GiB;
	g.band = 32 * MiB;
	g.cache = 64 * MiB;
	g.write_cache_mib = 16;
	g.format = 1;
	r = smr_compute_table(&g, "/dev/vda", 2 * GiB, t, sizeof(t), err, sizeof(err));
	eq_str(r ? err : t, "0 2097152 smr /dev/vda drive-managed 65536 5 cache_sectors 131072 write_cache_kib 16384 format",
	       "dm table with a write cache");
	g.write_cache_mib = 2000;
	ok(smr_compute_table(&g, "/dev/vda", 2 * GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "1 to 1024 MiB"), "dm write cache over 1024 MiB refused (%s)", err);
	g.write_cache_mib = 16;
	snprintf(g.timing, sizeof(g.timing), " rpm 7200");
	g.timing_words = 2;
	ok(smr_compute_table(&g, "/dev/vda", 2 * GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "--no-timing"), "write cache with a timing model refused (%s)", err);
	geom_init(&g);
	g.model = MODEL_HOST_MANAGED;
	g.size = 256 * MiB;
	g.zone = 16 * MiB;
	g.write_cache_mib = 8;
	r = smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err));
	eq_str(r ? err : t, "0 524288 smr /dev/sdb host-managed 32768 2 write_cache_kib 8192",
	       "hm table with a write cache");
	geom_init(&g);
	g.model = MODEL_CAVEAT;
	g.size = 256 * MiB;
	g.did = 4;
	g.dnor = 1;
	g.write_cache_mib = 8;
	r = smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err));
	ok(!r && strstr(t, " write_cache_kib 8192"), "caveat write cache in KiB, as dm-smr's (%s)",
	   r ? err : t);
	g.write_cache_mib = 65;
	ok(smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "1 to 64 MiB"), "caveat write cache over 64 MiB refused (%s)", err);

	/* host-managed */
	geom_init(&g);
	g.model = MODEL_HOST_MANAGED;
	g.size = 4 * GiB;
	g.zone = 64 * MiB;
	g.conv = 2;
	g.max_open = 8;
	r = smr_compute_table(&g, "/dev/sdb", 5 * GiB, t, sizeof(t), err, sizeof(err));
	eq_str(r ? err : t, "0 8388608 smr /dev/sdb host-managed 131072 4 conv_zones 2 max_open 8",
	       "hm table as the README example");
	geom_init(&g);
	g.model = MODEL_HOST_MANAGED;
	g.size = 256 * MiB;
	g.zone = 16 * MiB;
	smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err));
	eq_str(t, "0 524288 smr /dev/sdb host-managed 32768", "hm table without options");
	g.zone = 48 * MiB;
	ok(smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "power of two"), "hm zone not a power of two refused (%s)", err);
	/* auto: 1 GiB backing, 16 MiB zones: 63 zones (1 MiB metadata) */
	geom_init(&g);
	g.model = MODEL_HOST_MANAGED;
	g.zone = 16 * MiB;
	g.conv_ppm = 10000;
	smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err));
	eq_str(t, "0 2064384 smr /dev/sdb host-managed 32768 2 conv_zones 1",
	       "hm auto size: 63 zones, 1% conventional rounds up to 1");
	g.conv = 63;
	g.size = GiB - 16 * MiB;
	ok(smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "no sequential zone"), "hm all-conventional refused (%s)", err);
	/* Too many conventional zones is not a backing device too small. */
	geom_init(&g);
	g.model = MODEL_HOST_MANAGED;
	g.zone = 16 * MiB;
	g.conv = 100;
	ok(smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "no sequential zone") && strstr(err, "--conv 62 or fewer") &&
	   !strstr(err, "too small"), "hm auto size: too many --conv named as such (%s)", err);
	g.conv = 62;
	r = smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err));
	ok(!r && strstr(t, " conv_zones 62"), "hm auto size: the largest --conv it names fits (%s)",
	   r ? err : t);
	g.conv = 0;
	ok(smr_compute_table(&g, "/dev/sdb", MiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "too small for one zone"), "hm backing too small for a zone (%s)", err);
	g.conv = 64;
	g.size = 512 * MiB;
	ok(smr_compute_table(&g, "/dev/sdb", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "no sequential zone of the 32") && strstr(err, "--conv 31 or fewer"),
	   "hm --size: too many --conv names the most there can be (%s)", err);
	ok(smr_hm_md_sectors(508) == 2048 && smr_hm_md_sectors(508 * 200) == 4096,
	   "hm metadata: 1 MiB up to 63 table blocks, then 2 MiB");

	/* caveat */
	geom_init(&g);
	g.model = MODEL_CAVEAT;
	g.size = GiB;
	g.did = 16;
	g.dnor = 4;
	smr_compute_table(&g, "/dev/sdy", 2 * GiB, t, sizeof(t), err, sizeof(err));
	eq_str(t, "0 2097152 caveat /dev/sdy 16 4", "caveat table as the README example");
	g.block_size = 512;
	g.unshingled = 100;
	smr_compute_table(&g, "/dev/sdy", 2 * GiB, t, sizeof(t), err, sizeof(err));
	eq_str(t, "0 2097152 caveat /dev/sdy 16 4 4 block_size 512 unshingled 100",
	       "caveat table with options");
	g.on_damaged_read = 1;
	smr_compute_table(&g, "/dev/sdy", 2 * GiB, t, sizeof(t), err, sizeof(err));
	eq_str(t, "0 2097152 caveat /dev/sdy 16 4 6 block_size 512 unshingled 100 on_damaged_read zero",
	       "caveat table with on_damaged_read");
	g.on_damaged_read = -1;
	g.dnor = 17;
	ok(smr_compute_table(&g, "/dev/sdy", 2 * GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "DNOR"), "caveat DNOR > DID refused (%s)", err);
	geom_init(&g);
	g.model = MODEL_CAVEAT;
	g.did = 8;
	g.dnor = 0;
	smr_compute_table(&g, "/dev/sdy", GiB, t, sizeof(t), err, sizeof(err));
	ok(sscanf(t, "0 %" SCNu64, &len) == 1 &&
	   cv_md_sectors(len / 8) + len <= GiB / 512 && len == GiB / 512 - 2048,
	   "caveat auto size leaves 1 MiB of metadata (%s)", t);
	/* 15 bitmap pages and the journal end in the first MiB; 16 do not. */
	ok(cv_md_sectors(15 * 32256ULL) == 2048 && cv_md_sectors(16 * 32256ULL) == 4096,
	   "caveat metadata: superblock, slots and the 224-block journal");
	geom_init(&g);
	g.model = MODEL_CAVEAT;
	ok(smr_compute_table(&g, "/dev/sdy", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "--did"), "caveat without DID asks for --did");
	geom_init(&g);
	ok(smr_compute_table(&g, "/dev/sdy", GiB, t, sizeof(t), err, sizeof(err)) &&
	   strstr(err, "--model"), "no model asks for --model");
}

static void test_profiles(const char *dir)
{
	struct smr_geom g;
	char err[512], path[1400];
	struct dirent *e;
	DIR *d;
	int n = 0, rc;

	geom_init(&g);
	ok(!profile_apply_text("# comment\n\nmodel = drive-managed # trailing\n"
			       "band=30M\ncache = 0.25%\nidle_ms = 1000\npolicy = greedy\n"
			       "seq_bypass = off\ndescription = a test\n", "t", &g, err, sizeof(err)),
	   "profile text parses");
	ok(g.model == MODEL_DRIVE_MANAGED && g.band == 30 * MiB && g.cache_ppm == 2500 &&
	   g.idle_ms == 1000 && !strcmp(g.policy, "greedy") && g.seq_bypass == 0 &&
	   !strcmp(g.description, "a test"), "profile values applied");
	geom_init(&g);
	ok(profile_apply_text("model = host-managed\nzone = 256M\nzones = 3\n", "p.profile",
			      &g, err, sizeof(err)) && !strcmp(err, "p.profile:3: unknown key 'zones'"),
	   "unknown key names file and line (%s)", err);
	geom_init(&g);
	ok(!profile_apply_text("model = caveat\non_damaged_read = zero\n", "p", &g, err,
			       sizeof(err)) && g.on_damaged_read == 1, "on_damaged_read zero");
	geom_init(&g);
	ok(profile_apply_text("model = caveat\non_damaged_read = maybe\n", "p", &g, err,
			      sizeof(err)) && strstr(err, "bad value 'maybe' for on_damaged_read"),
	   "on_damaged_read takes error or zero (%s)", err);
	geom_init(&g);
	ok(profile_apply_text("model = caveat\ndid = lots\n", "p", &g, err, sizeof(err)) &&
	   strstr(err, "p:2: bad value 'lots' for did"), "bad value names the key (%s)", err);
	geom_init(&g);
	ok(profile_apply_text("band = 4M\n", "p", &g, err, sizeof(err)) &&
	   strstr(err, "no 'model"), "a profile needs a model (%s)", err);
	geom_init(&g);
	ok(profile_apply_text("model = tape\n", "p", &g, err, sizeof(err)) != 0,
	   "unknown model refused");
	geom_init(&g);
	ok(profile_apply_text("model caveat\n", "p", &g, err, sizeof(err)) &&
	   strstr(err, "key = value"), "line without '=' refused");

	/* Timing keys become the table line's timing group (docs/timing.md). */
	{
		static const char tm[] = "rpm = 7200\nseek_t2t_us = 1000\nseek_avg_us = 8500\n"
			"seek_full_us = 17000\nod_mbps = 65\nid_mbps = 31\n";
		char t[1024], text[512];

		geom_init(&g);
		snprintf(text, sizeof(text), "model = drive-managed\nband = 32M\n%scache_at = 10\n", tm);
		ok(!profile_apply_text(text, "t", &g, err, sizeof(err)) &&
		   !smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(t, " seq_bypass") == NULL &&
		   strstr(t, " timing 14 rpm 7200 seek_t2t_us 1000 seek_avg_us 8500 seek_full_us 17000 od_mbps 65 id_mbps 31 cache_at 10"),
		   "drive-managed: timing keys give the timing group (%s)", t);
		geom_init(&g);
		snprintf(text, sizeof(text), "model = caveat\ndid = 0\ndnor = 0\n%s", tm);
		ok(!profile_apply_text(text, "t", &g, err, sizeof(err)) &&
		   !smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(t, " caveat /dev/x 0 0 timing 12 rpm 7200 "),
		   "caveat: the timing group follows DID and DNOR (%s)", t);
		geom_init(&g);
		snprintf(text, sizeof(text), "model = caveat\ndid = 0\ndnor = 0\n%scache_at = 5\n", tm);
		ok(!profile_apply_text(text, "t", &g, err, sizeof(err)) &&
		   smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(err, "cache_at"), "caveat: cache_at refused (%s)", err);
		geom_init(&g);
		snprintf(text, sizeof(text), "model = host-managed\nzone = 256M\n%s", tm);
		ok(!profile_apply_text(text, "t", &g, err, sizeof(err)) &&
		   !smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(t, " host-managed 524288 timing 12 rpm 7200 "),
		   "host-managed: the timing group follows the zone size (%s)", t);
		geom_init(&g);
		snprintf(text, sizeof(text), "model = host-managed\nzone = 256M\n%scache_at = 5\n", tm);
		ok(!profile_apply_text(text, "t", &g, err, sizeof(err)) &&
		   smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(err, "cache_at"), "host-managed: cache_at refused (%s)", err);
		/* The drive the device is a slice of: drive_mb, start_mb. */
		geom_init(&g);
		snprintf(text, sizeof(text), "model = caveat\ndid = 0\ndnor = 0\n%sdrive_mb = 8000000\n", tm);
		ok(!profile_apply_text(text, "t", &g, err, sizeof(err)) &&
		   !smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(t, " timing 14 rpm 7200 ") && strstr(t, " drive_mb 8000000") &&
		   !strstr(t, "start_mb"), "drive_mb goes into the timing group (%s)", t);
		g.start_mb = 4000000;
		ok(!smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(t, " timing 16 rpm 7200 ") && strstr(t, " drive_mb 8000000 start_mb 4000000"),
		   "start_mb follows drive_mb (%s)", t);
		g.start_mb = 7999990;
		ok(smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(err, "does not fit on the drive"), "a device past the drive's end refused (%s)", err);
		geom_init(&g);
		snprintf(text, sizeof(text), "model = caveat\ndid = 0\ndnor = 0\n%sstart_mb = 5\n", tm);
		ok(!profile_apply_text(text, "t", &g, err, sizeof(err)) &&
		   smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(err, "no drive_mb"), "start_mb without drive_mb refused (%s)", err);
		geom_init(&g);
		snprintf(text, sizeof(text), "model = caveat\ndid = 0\ndnor = 0\n%sbuffer_mib = 16\nqueue_depth = 32\n", tm);
		ok(!profile_apply_text(text, "t", &g, err, sizeof(err)) &&
		   !smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(t, " timing 16 rpm 7200 ") && strstr(t, " buffer_mib 16 queue_depth 32"),
		   "buffer_mib and queue_depth go into the timing group (%s)", t);
		geom_init(&g);
		snprintf(text, sizeof(text), "model = caveat\ndid = 0\ndnor = 0\n%swcache_mib = 16\n", tm);
		ok(!profile_apply_text(text, "t", &g, err, sizeof(err)) &&
		   !smr_compute_table(&g, "/dev/x", 64ULL << 30, t, sizeof(t), err, sizeof(err)) &&
		   strstr(t, " buffer_mib 16") && !strstr(t, "wcache_mib"),
		   "a profile's wcache_mib, buffer_mib's old name, becomes buffer_mib (%s)", t);
		geom_init(&g);
		ok(profile_apply_text("model = caveat\ndrive_mb = 0\n", "p", &g, err, sizeof(err)) &&
		   strstr(err, "drive_mb"), "drive_mb 0 refused (%s)", err);
		geom_init(&g);
		ok(profile_apply_text("model = caveat\nrpm = fast\n", "p", &g, err, sizeof(err)) &&
		   strstr(err, "bad value 'fast' for rpm"), "a timing key needs a number (%s)", err);
	}

	/* Every shipped profile loads and gives a table on a 64 GiB disk. */
	d = opendir(dir);
	ok(d != NULL, "profile directory %s readable", dir);
	while (d && (e = readdir(d))) {
		const char *dot = strrchr(e->d_name, '.');
		char t[1024];

		if (!dot || strcmp(dot, ".profile"))
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		geom_init(&g);
		ok(!profile_load(path, &g, err, sizeof(err)) && g.description[0],
		   "profile %s loads, with a description", e->d_name);
		/* the table when it worked, its error when not: never the
		 * err left over from a test before */
		rc = smr_compute_table(&g, "/dev/x", 64 * GiB, t, sizeof(t), err, sizeof(err));
		ok(!rc, "profile %s gives a table for 64 GiB (%s)", e->d_name, rc ? err : t);
	}
	if (d)
		closedir(d);
	ok(n >= 3, "at least 3 profiles shipped (%d)", n);
}

static void test_json(void)
{
	struct rec r;
	char buf[1024];
	int n;

	rec_init(&r, "dm-smr", "clean_done");
	snprintf(r.device, sizeof(r.device), "dm0");
	r.major = 253;
	r.minor = 3;
	rec_add_u64(&r, "band", 4);
	rec_add_str(&r, "reason", "idle");
	rec_add_u64(&r, "write_bytes", 33554432);
	n = rec_to_json(&r, 1700000000.25, buf, sizeof(buf));
	eq_str(buf, "{\"ts\":1700000000.250,\"family\":\"dm-smr\",\"event\":\"clean_done\","
	       "\"device\":\"dm0\",\"devt\":\"253:3\",\"band\":4,\"reason\":\"idle\","
	       "\"write_bytes\":33554432}", "event as a JSON line");
	ok(n == (int)strlen(buf), "rec_to_json returns the length");
	n = rec_to_json(&r, -1, buf, sizeof(buf));
	ok(n > 0 && !strstr(buf, "\"ts\""), "ts left out when negative");
	ok(rec_to_json(&r, 1, buf, 20) == -1, "too small a buffer is an error, not a cut line");

	{
		/* The longest dm name, every byte escaped as \u0001. */
		char big[8192];

		rec_init(&r, "dm-smr", "device");
		memset(r.device, 1, sizeof(r.device) - 1);
		r.device[sizeof(r.device) - 1] = 0;
		n = rec_to_json(&r, -1, big, sizeof(big));
		ok(n > 6 * 127, "a 127-byte name of control bytes fits (%d)", n);
	}

	rec_init(&r, "dm-caveat", "device");
	snprintf(r.device, sizeof(r.device), "we\"ird\\na\tme\x01");
	n = rec_to_json(&r, -1, buf, sizeof(buf));
	ok(n > 0 && strstr(buf, "\"device\":\"we\\\"ird\\\\na\\u0009me\\u0001\""),
	   "device names are escaped (%s)", buf);
	{
		/* Each escape, UTF-8 kept, a byte that is not UTF-8 replaced. */
		static const char in[] = "q\"b\\n\nt\x7f \xc3\xa9\xe2\x82\xac \xff\xc3 \xed\xa0\x80";
		static const char want[] = "\"q\\\"b\\\\n\\u000at\\u007f \xc3\xa9\xe2\x82\xac "
			"\\ufffd\\ufffd \\ufffd\\ufffd\\ufffd\"";
		char *mem = NULL;
		size_t mlen = 0;
		FILE *f;

		n = json_string(in, buf, sizeof(buf));
		eq_str(buf, want, "json_string escapes quote, backslash, controls, bad UTF-8");
		ok(n == (int)strlen(want), "json_string returns the length");
		ok(json_string(in, buf, strlen(want)) == -1 && json_string(in, buf, strlen(want) + 1) > 0,
		   "json_string: a buffer one short is an error, not a cut string");
		f = open_memstream(&mem, &mlen);
		json_fputs(in, f);
		fclose(f);
		eq_str(mem, want, "json_fputs writes what json_string does");
		free(mem);
	}
	ok(rec_u64(&r, "missing", 7) == 7 && !rec_get(&r, "missing"), "missing field gives the default");
	{
		int i;

		for (i = 0; i < REC_MAX_FIELDS + 5; i++)
			rec_add_u64(&r, "f", (uint64_t)i);
		ok(r.nf == REC_MAX_FIELDS, "fields past the maximum are dropped, not overflowed");
	}
}

/* A sysfs tree of its own: sdb with sdb1 and sdb2, and sdc alone. */
static void mk(const char *root, const char *rel, int dir)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (dir) {
		if (mkdir(p, 0755) && errno != EEXIST)
			printf("# mkdir %s: %s\n", p, strerror(errno));
		return;
	}
	f = fopen(p, "w");
	if (f) {
		fputs("x\n", f);
		fclose(f);
	}
}

static void ln(const char *root, const char *target, const char *rel)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (symlink(target, p))
		printf("# symlink %s: %s\n", p, strerror(errno));
}

static void test_holders(void)
{
	static const char *const dirs[] = {
		"dev", "dev/block", "devices", "devices/sdb", "devices/sdb/holders",
		"devices/sdb/sdb1", "devices/sdb/sdb1/holders", "devices/sdb/sdb2",
		"devices/sdb/sdb2/holders", "devices/sdc", "devices/sdc/holders",
		"block", "block/dm-3", "block/dm-3/dm", NULL,
	};
	char root[] = "/tmp/smr-sysfs-XXXXXX", out[512];
	char rm[64];
	int i, n;

	if (!mkdtemp(root)) {
		ok(0, "a sysfs tree of its own: %s", strerror(errno));
		return;
	}
	for (i = 0; dirs[i]; i++)
		mk(root, dirs[i], 1);
	mk(root, "devices/sdb/sdb1/partition", 0);
	mk(root, "devices/sdb/sdb2/partition", 0);
	ln(root, "../../devices/sdb", "dev/block/8:16");
	ln(root, "../../devices/sdb/sdb1", "dev/block/8:17");
	ln(root, "../../devices/sdb/sdb2", "dev/block/8:18");
	ln(root, "../../devices/sdc", "dev/block/8:32");

	n = bdev_holders(root, 8, 16, out, sizeof(out));
	ok(n == 0 && !out[0], "bdev_holders: a disk nothing is stacked on has none (%d)", n);
	ok(bdev_holders(root, 9, 9, out, sizeof(out)) < 0,
	   "bdev_holders: a device sysfs does not list is an error");

	/* An LV (dm-3, "vg-home") on sdb1. */
	mk(root, "devices/sdb/sdb1/holders/dm-3", 0);
	{
		FILE *f;
		char p[4096];

		snprintf(p, sizeof(p), "%s/block/dm-3/dm/name", root);
		f = fopen(p, "w");
		if (f) {
			fputs("vg-home\n", f);
			fclose(f);
		}
	}
	n = bdev_holders(root, 8, 17, out, sizeof(out));
	ok(n == 1, "bdev_holders: the partition itself is held (%d)", n);
	eq_str(out, "dm-3 (vg-home) on sdb1", "  named with its dm name");
	n = bdev_holders(root, 8, 16, out, sizeof(out));
	ok(n == 1, "bdev_holders: the disk is in use through its partition (%d)", n);
	eq_str(out, "dm-3 (vg-home) on sdb1", "  named so");
	n = bdev_holders(root, 8, 18, out, sizeof(out));
	ok(n == 0, "bdev_holders: the other partition is free (%d)", n);
	n = bdev_holders(root, 8, 32, out, sizeof(out));
	ok(n == 0, "bdev_holders: another disk is free (%d)", n);

	/* md0 on the whole of sdb: each partition is in use too. */
	mk(root, "devices/sdb/holders/md0", 0);
	n = bdev_holders(root, 8, 18, out, sizeof(out));
	ok(n == 1, "bdev_holders: a partition of a held disk is in use (%d)", n);
	eq_str(out, "md0 on sdb", "  named so");
	n = bdev_holders(root, 8, 16, out, sizeof(out));
	ok(n == 2, "bdev_holders: the disk's own holder and its partition's (%d)", n);

	snprintf(rm, sizeof(rm), "rm -rf '%s'", root);
	if (system(rm))
		printf("# could not remove %s\n", root);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s PROFILE_DIR\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n");
	test_sizes();
	test_tables();
	test_profiles(argv[1]);
	test_json();
	test_holders();
	return tap_done();
}
