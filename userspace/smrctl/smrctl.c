// SPDX-License-Identifier: GPL-2.0
/*
 * smrctl: create, inspect and wait on emulated SMR disks (dm-smr,
 * dm-caveat). Tables through libdevmapper, state through the modules'
 * generic netlink families, zone reports through libzbd. See smrctl(8).
 *
 * Exit status: 0 ok, 1 error (with a message saying what to do), 2 usage
 * (the command line itself is wrong: unknown command or option, missing or
 * extra argument, a value that is not of its kind, an option another model
 * takes). COMMAND --help prints that command's usage.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libdevmapper.h>
#include <libgen.h>
#ifdef HAVE_LIBZBD
#include <libzbd/zbd.h>
#endif
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>
#include <linux/fs.h>

#include "smr-nl.h"
#include "smr-util.h"

#define EXIT_USAGE 2

/* PREFIX/share/smrctl/profiles; the Makefile passes the PREFIX's. */
#ifndef SMR_PROFILE_DIR
#define SMR_PROFILE_DIR "/usr/local/share/smrctl/profiles"
#endif

static const char *prog = "smrctl";

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *args;	/* the usage line after the name */
	const char *what;	/* what it does, who may run it */
	const char *opts;	/* its options, a line each, or NULL */
	const char *alias_of;	/* a deprecated name: the command's new one */
};

/* The command running: its usage on a usage error, its name in messages. */
static const struct command *cur;

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* The usage line; @full: what the command does and its options too. */
static void cmd_usage(const struct command *c, FILE *f, int full)
{
	fprintf(f, "usage: %s %s%s%s\n", prog, c->name, c->args[0] ? " " : "", c->args);
	if (!full) {
		fprintf(f, "('%s %s --help' explains it and its options)\n", prog, c->name);
		return;
	}
	fprintf(f, "%s\nOptions:\n%s  -h, --help             this help\n", c->what,
		c->opts ? c->opts : "");
}

/* The command line is wrong: say how, then the command's usage. */
static void usage_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void usage_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s %s: ", prog, cur->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cmd_usage(cur, stderr, 0);
	exit(EXIT_USAGE);
}

/*
 * getopt_long for a command: its arguments and options in any order; an
 * unknown option or one without its value is a usage error.
 */
static int cmd_getopt(int argc, char **argv, const struct option *lo)
{
	int c;

	opterr = 0;
	c = getopt_long(argc, argv, ":", lo, NULL);
	if (c == '?' && optopt)
		usage_die("unknown option '-%c'", optopt);
	if (c == '?')
		usage_die("unknown option '%s'", argv[optind - 1]);
	if (c == ':')
		usage_die("option '%s' needs a value", argv[optind - 1]);
	return c;
}

/* The arguments left after the options: from @min to @max of them. */
static char **cmd_args(int argc, char **argv, int min, int max, const char *what)
{
	int n = argc - optind;

	if (n < min)
		usage_die("%s missing", what ? what : "an argument");
	if (n > max)
		usage_die("unexpected argument '%s'", argv[optind + max]);
	return argv + optind;
}

static const struct option no_opts[] = { { NULL, 0, NULL, 0 } };
static const struct option json_opts[] = {
	{ "json", no_argument, NULL, 'j' },
	{ NULL, 0, NULL, 0 },
};

static void need_root_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void need_root_die(const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	die("%s needs root (%s): run it as root ('sudo %s %s ...')", cur->name, why,
	    prog, cur->name);
}

static void need_root(void)
{
	if (geteuid())
		need_root_die("it changes device-mapper tables");
}

/* "KEY":"VALUE" after @sep, VALUE escaped (NULL: null). */
static void json_kv(const char *sep, const char *key, const char *val)
{
	printf("%s\"%s\":", sep, key);
	if (val)
		json_fputs(val, stdout);
	else
		printf("null");
}

/* ------------------------------------------------------- device-mapper --- */

static char dm_lastmsg[512];
static int dm_lasterrno;

static void dm_log(int level, const char *file, int line, int dm_errno,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static void dm_log(int level, const char *file, int line, int dm_errno,
		   const char *fmt, ...)
{
	va_list ap;

	(void)file;
	(void)line;
	if (level > 3)	/* errors and warnings only */
		return;
	va_start(ap, fmt);
	vsnprintf(dm_lastmsg, sizeof(dm_lastmsg), fmt, ap);
	va_end(ap);
	if (dm_errno > 0)	/* -1 is "an error", no errno */
		dm_lasterrno = dm_errno;
}

static void dm_init(void)
{
	dm_log_with_errno_init(dm_log);
}

/*
 * libdevmapper gives no task (dm_task_create() is NULL) when it cannot
 * open its control node, not only when out of memory: say which.
 */
static void dm_control_die(void) __attribute__((noreturn));
static void dm_control_die(void)
{
	char path[PATH_MAX];
	int fd, e;

	snprintf(path, sizeof(path), "%s/control", dm_dir());
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		die("device-mapper: %s", dm_lastmsg[0] ? dm_lastmsg : "out of memory");
	}
	e = errno;
	if (e == EACCES || e == EPERM)
		need_root_die("cannot open %s: %s", path, strerror(e));
	if (e == ENOENT || e == ENODEV || e == ENXIO)
		die("device-mapper is not available (cannot open %s: %s): load dm-mod ('modprobe dm-mod' as root)",
		    path, strerror(e));
	die("cannot open %s: %s", path, strerror(e));
}

static struct dm_task *dm_task_new(int type)
{
	struct dm_task *dmt;

	dm_lastmsg[0] = 0;
	dm_lasterrno = 0;
	dmt = dm_task_create(type);
	if (!dmt)
		dm_control_die();
	return dmt;
}

/* Why dm_task_run() failed: the ioctl's errno, else the log's. */
static int dm_task_err(struct dm_task *dmt)
{
	int e = dm_task_get_errno(dmt);

	if (e <= 0)
		e = dm_lasterrno > 0 ? dm_lasterrno : errno;
	return e > 0 ? e : EIO;
}

/* A query failed: no permission, or what libdevmapper said. */
static void dm_query_die(struct dm_task *dmt, const char *name)
{
	int e = dm_task_err(dmt);

	if (e == EACCES || e == EPERM)
		need_root_die("device-mapper queries need CAP_SYS_ADMIN: %s", strerror(e));
	die("device-mapper query about '%s' failed: %s", name,
	    dm_lastmsg[0] ? dm_lastmsg : strerror(e));
}

static int dm_exists(const char *name, struct dm_info *info)
{
	struct dm_task *dmt = dm_task_new(DM_DEVICE_INFO);
	int ok;

	if (!dm_task_set_name(dmt, name) || !dm_task_run(dmt))
		dm_query_die(dmt, name);
	ok = dm_task_get_info(dmt, info) && info->exists;
	dm_task_destroy(dmt);
	return ok;
}

/* The target type of @name's live table, or NULL. */
static char *dm_target_of(const char *name)
{
	struct dm_task *dmt = dm_task_new(DM_DEVICE_TABLE);
	uint64_t start, len;
	char *type = NULL, *params = NULL, *ret = NULL;

	if (dm_task_set_name(dmt, name) && dm_task_run(dmt)) {
		dm_get_next_target(dmt, NULL, &start, &len, &type, &params);
		if (type)
			ret = strdup(type);
	}
	dm_task_destroy(dmt);
	return ret;
}

/*
 * A device argument as the user gives it: a dm name, a /dev/mapper/NAME
 * path, a /dev/dm-N node or a link to one. Returns the dm name.
 */
static const char *dev_arg(const char *a)
{
	static char name[128];	/* DM_NAME_LEN, <linux/dm-ioctl.h> */
	char sys[PATH_MAX], *real, *base;
	FILE *f;

	if (!strchr(a, '/'))
		return a;
	real = realpath(a, NULL);
	if (!real) {
		/* Not there (yet): the caller says so, by its name. */
		if (!strncmp(a, "/dev/mapper/", 12) && a[12])
			return a + 12;
		die("%s: %s", a, strerror(errno));
	}
	base = strrchr(real, '/') + 1;
	if (!strncmp(real, "/dev/mapper/", 12) && real[12]) {
		snprintf(name, sizeof(name), "%s", real + 12);
	} else if (!strncmp(base, "dm-", 3)) {
		snprintf(sys, sizeof(sys), "/sys/block/%s/dm/name", base);
		f = fopen(sys, "r");
		if (!f || !fgets(name, sizeof(name), f))
			die("%s: cannot read its device-mapper name (%s)", a, sys);
		fclose(f);
		name[strcspn(name, "\n")] = 0;
	} else {
		die("%s is not a device-mapper device (give a name, /dev/mapper/NAME or /dev/dm-N)", a);
	}
	free(real);
	return name;
}

static void check_smr_dev(const char *name, const char *want)
{
	struct dm_info info;
	char *t;

	if (!dm_exists(name, &info))
		die("no device-mapper device '%s' (see 'smrctl status' or 'dmsetup ls')", name);
	t = dm_target_of(name);
	if (!t || (strcmp(t, "smr") && strcmp(t, "caveat")))
		die("'%s' is a %s device, not an smr or caveat one", name, t ? t : "table-less");
	if (want && strcmp(t, want))
		die("'%s' is a %s device; this needs a %s one", name, t, want);
	free(t);
}

/* Send a target message; returns the response (malloc'd, maybe ""). */
static char *dm_message(const char *name, const char *msg)
{
	struct dm_task *dmt = dm_task_new(DM_DEVICE_TARGET_MSG);
	const char *resp;
	char *ret;

	if (!dm_task_set_name(dmt, name) || !dm_task_set_sector(dmt, 0) ||
	    !dm_task_set_message(dmt, msg) || !dm_task_run(dmt)) {
		int e = dm_task_err(dmt);

		dm_task_destroy(dmt);
		if (e == EACCES || e == EPERM)
			need_root_die("message '%s' to %s: %s", msg, name, strerror(e));
		die("message '%s' to %s failed (%s): the kernel log says why ('dmesg | tail')",
		    msg, name, dm_lastmsg[0] ? dm_lastmsg : strerror(e));
	}
	resp = dm_task_get_message_response(dmt);
	ret = strdup(resp ? resp : "");
	dm_task_destroy(dmt);
	return ret;
}

static int dm_load_create(const char *name, const char *table)
{
	uint64_t start, len;
	char target[32], params[1024];
	struct dm_task *dmt;
	uint32_t cookie = 0;
	int ok, e;

	if (sscanf(table, "%" SCNu64 " %" SCNu64 " %31s %1023[^\n]", &start,
		   &len, target, params) != 4)
		die("internal error: bad table '%s'", table);
	dmt = dm_task_new(DM_DEVICE_CREATE);
	ok = dm_task_set_name(dmt, name) &&
		dm_task_add_target(dmt, start, len, target, params) &&
		dm_task_set_cookie(dmt, &cookie, 0) &&
		dm_task_run(dmt);
	e = ok ? 0 : dm_task_err(dmt);
	dm_task_destroy(dmt);
	if (cookie)
		dm_udev_wait(cookie);
	if (ok)
		return 0;
	return e ? -e : -EIO;
}

static int dm_remove(const char *name)
{
	struct dm_task *dmt = dm_task_new(DM_DEVICE_REMOVE);
	uint32_t cookie = 0;
	int ok, e;

	ok = dm_task_set_name(dmt, name) && dm_task_retry_remove(dmt) &&
		dm_task_set_cookie(dmt, &cookie, 0) && dm_task_run(dmt);
	e = ok ? 0 : dm_task_err(dmt);
	dm_task_destroy(dmt);
	if (cookie)
		dm_udev_wait(cookie);
	return ok ? 0 : (e ? -e : -EIO);
}

/* Is the target registered (module loaded)? Loads the module if it can. */
static int target_available(const char *target)
{
	struct dm_task *dmt = dm_task_create(DM_DEVICE_LIST_VERSIONS);
	struct dm_versions *v, *last;
	int found = 0;

	if (!dmt)
		return 0;
	if (dm_task_run(dmt)) {
		v = dm_task_get_versions(dmt);
		do {
			last = v;
			if (!strcmp(v->name, target))
				found = 1;
			v = (struct dm_versions *)((char *)v + v->next);
		} while (last != v);
	}
	dm_task_destroy(dmt);
	return found;
}

/* ----------------------------------------------------------- profiles --- */

static void profile_dir(char *out, size_t len)
{
	const char *env = getenv("SMRCTL_PROFILES");
	char exe[PATH_MAX - 64];
	ssize_t n;

	if (env) {
		snprintf(out, len, "%s", env);
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		struct stat st;

		exe[n] = 0;
		/* Beside the binary: the source tree. */
		snprintf(out, len, "%s/profiles", dirname(exe));
		if (!stat(out, &st) && S_ISDIR(st.st_mode))
			return;
		/* Where make install put them (PREFIX it was built with). */
		snprintf(out, len, "%s", SMR_PROFILE_DIR);
		if (!stat(out, &st) && S_ISDIR(st.st_mode))
			return;
		/* A tree installed elsewhere (DESTDIR, moved): ../share. */
		snprintf(out, len, "%s/../share/smrctl/profiles", exe);
		if (!stat(out, &st) && S_ISDIR(st.st_mode))
			return;
	}
	snprintf(out, len, "%s", SMR_PROFILE_DIR);
}

static void load_profile(const char *p, struct smr_geom *g)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], err[512];

	if (strchr(p, '/')) {
		snprintf(path, sizeof(path), "%s", p);
	} else {
		profile_dir(dir, sizeof(dir));
		snprintf(path, sizeof(path), "%s/%s.profile", dir, p);
	}
	if (access(path, R_OK))
		die("no profile '%s' (%s): 'smrctl profiles' lists them", p, path);
	if (profile_load(path, g, err, sizeof(err)))
		die("%s", err);
}

static int cmd_profiles(int argc, char **argv)
{
	char dir[PATH_MAX], path[PATH_MAX + 300], err[512];
	struct dirent **ents;
	int n, i, json = 0;

	while (cmd_getopt(argc, argv, json_opts) != -1)
		json = 1;
	cmd_args(argc, argv, 0, 0, NULL);
	profile_dir(dir, sizeof(dir));
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0)
		die("cannot read the profile directory %s: %s (set SMRCTL_PROFILES)",
		    dir, strerror(errno));
	for (i = 0; i < n; i++) {
		char *dot = strrchr(ents[i]->d_name, '.');
		struct smr_geom g;
		int bad;

		if (dot && !strcmp(dot, ".profile")) {
			geom_init(&g);
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			*dot = 0;
			bad = profile_load(path, &g, err, sizeof(err));
			if (json) {
				json_kv("{", "name", ents[i]->d_name);
				json_kv(",", "path", path);
				json_kv(",", "model", bad ? NULL : model_name(g.model));
				json_kv(",", "description", bad ? NULL : g.description);
				json_kv(",", "error", bad ? err : NULL);
				printf("}\n");
			} else if (bad) {
				printf("%-22s (broken: %s)\n", ents[i]->d_name, err);
			} else {
				printf("%-22s %-14s %s\n", ents[i]->d_name,
				       model_name(g.model), g.description);
			}
		}
		free(ents[i]);
	}
	free(ents);
	return 0;
}

/* ------------------------------------------------------------- create --- */

static uint64_t size_arg(const char *opt, const char *v)
{
	uint64_t b;

	if (parse_size(v, &b))
		usage_die("%s '%s': give a size like 4096, 32K, 256M, 1G", opt, v);
	return b;
}

static int64_t int_arg(const char *opt, const char *v)
{
	uint64_t x;

	if (parse_u64(v, &x) || x > INT64_MAX)
		usage_die("%s '%s': give a non-negative whole number", opt, v);
	return (int64_t)x;
}

enum { O_MODEL = 256, O_DEV, O_PROFILE, O_SIZE, O_BAND, O_CACHE,
       O_IDLE, O_POLICY, O_NOBYP, O_ZONE, O_ZCAP, O_CONV, O_MAXOPEN,
       O_MAXACT, O_DID, O_DNOR, O_BS, O_UNSH, O_FORMAT, O_DRY, O_NOTIMING,
       O_STARTMB, O_WCACHE, O_ODR, O_FORCE };

/* The model a create option is for; MODEL_NONE: every model. */
static enum smr_model opt_model(int opt)
{
	switch (opt) {
	case O_BAND: case O_CACHE: case O_IDLE: case O_POLICY: case O_NOBYP:
		return MODEL_DRIVE_MANAGED;
	case O_ZONE: case O_ZCAP: case O_CONV: case O_MAXOPEN: case O_MAXACT:
		return MODEL_HOST_MANAGED;
	case O_DID: case O_DNOR: case O_BS: case O_UNSH: case O_ODR:
		return MODEL_CAVEAT;
	default:
		return MODEL_NONE;
	}
}

static int cmd_create(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "model", required_argument, NULL, O_MODEL },
		{ "dev", required_argument, NULL, O_DEV },
		{ "profile", required_argument, NULL, O_PROFILE },
		{ "size", required_argument, NULL, O_SIZE },
		{ "band", required_argument, NULL, O_BAND },
		{ "cache", required_argument, NULL, O_CACHE },
		{ "idle-ms", required_argument, NULL, O_IDLE },
		{ "policy", required_argument, NULL, O_POLICY },
		{ "no-seq-bypass", no_argument, NULL, O_NOBYP },
		{ "zone", required_argument, NULL, O_ZONE },
		{ "zone-capacity", required_argument, NULL, O_ZCAP },
		{ "conv", required_argument, NULL, O_CONV },
		{ "max-open", required_argument, NULL, O_MAXOPEN },
		{ "max-active", required_argument, NULL, O_MAXACT },
		{ "did", required_argument, NULL, O_DID },
		{ "dnor", required_argument, NULL, O_DNOR },
		{ "block-size", required_argument, NULL, O_BS },
		{ "unshingled", required_argument, NULL, O_UNSH },
		{ "on-damaged-read", required_argument, NULL, O_ODR },
		{ "format", no_argument, NULL, O_FORMAT },
		{ "force", no_argument, NULL, O_FORCE },
		{ "write-cache", required_argument, NULL, O_WCACHE },
		{ "dry-run", no_argument, NULL, O_DRY },
		{ "no-timing", no_argument, NULL, O_NOTIMING },
		{ "start-mb", required_argument, NULL, O_STARTMB },
		{ NULL, 0, NULL, 0 },
	};
	/* Options apply after the profile, whatever their order. */
	struct { int opt; const char *arg; } given[64];
	const char *name = NULL, *dev = NULL, *profile = NULL;
	char table[1024], err[512], b1[32], real[PATH_MAX], who[1024];
	struct smr_geom g;
	struct dm_info info;
	struct stat bst;
	uint64_t backing = 0;
	int c, i, ng = 0, dry = 0, force = 0, start_given = 0, fd, ret;

	geom_init(&g);
	while ((c = cmd_getopt(argc, argv, opts)) != -1) {
		if (c == O_DEV)
			dev = optarg;
		else if (c == O_PROFILE)
			profile = optarg;
		else if (c == O_DRY)
			dry = 1;
		else if (ng < 64)
			given[ng].opt = c, given[ng++].arg = optarg;
	}
	name = cmd_args(argc, argv, 1, 1, "the device NAME")[0];
	if (strlen(name) >= 128 || strchr(name, '/') || !*name)
		usage_die("device name '%s': up to 127 characters, no '/'", name);
	if (!dev)
		usage_die("the backing device is missing: --dev /dev/sdX (a disk, partition, LV or loop device)");
	if (profile)
		load_profile(profile, &g);
	for (i = 0; i < ng; i++) {
		const char *a = given[i].arg;

		switch (given[i].opt) {
		case O_MODEL:
			g.model = model_parse(a);
			if (g.model == MODEL_NONE)
				usage_die("--model '%s': use drive-managed, host-managed or caveat", a);
			break;
		case O_SIZE: g.size = size_arg("--size", a); break;
		case O_BAND: g.band = size_arg("--band", a); break;
		case O_CACHE:
			if (strchr(a, '%')) {
				int err = parse_ppm(a, &g.cache_ppm);

				g.cache = 0;
				if (err == -ERANGE)
					usage_die("--cache '%s': a share of the size is more than 0%% and at most 100%% (e.g. 1%% or 0.25%%)", a);
				if (err)
					usage_die("--cache '%s': a size (1G) or a share of the size (1%%)", a);
			} else {
				g.cache = size_arg("--cache", a);
			}
			break;
		case O_IDLE: g.idle_ms = int_arg("--idle-ms", a); break;
		case O_POLICY:
			if (!policy_valid(a))
				usage_die("--policy '%s': use fifo, greedy or cost-benefit", a);
			snprintf(g.policy, sizeof(g.policy), "%s", a);
			break;
		case O_NOBYP: g.seq_bypass = 0; break;
		case O_ZONE: g.zone = size_arg("--zone", a); break;
		case O_ZCAP: g.zone_cap = size_arg("--zone-capacity", a); break;
		case O_CONV: g.conv = int_arg("--conv", a); break;
		case O_MAXOPEN: g.max_open = int_arg("--max-open", a); break;
		case O_MAXACT: g.max_active = int_arg("--max-active", a); break;
		case O_DID: g.did = int_arg("--did", a); break;
		case O_DNOR: g.dnor = int_arg("--dnor", a); break;
		case O_BS: {
			uint64_t bs = size_arg("--block-size", a);

			/* No silent truncation of 4G to 0 (the default). */
			if (bs < 512 || bs > 65536)
				usage_die("--block-size '%s': a power of two from 512 to 65536", a);
			g.block_size = (uint32_t)bs;
			break;
		}
		case O_UNSH: g.unshingled = int_arg("--unshingled", a); break;
		case O_ODR:
			if (parse_on_damaged_read(a, &g.on_damaged_read))
				usage_die("--on-damaged-read takes error or zero, not '%s'", a);
			break;
		case O_FORMAT: g.format = 1; break;
		case O_FORCE: force = 1; break;
		case O_WCACHE: g.write_cache_mib = int_arg("--write-cache", a); break;
		case O_NOTIMING:
			g.timing[0] = 0;
			g.timing_words = 0;
			g.drive_mb = 0;
			/* A --start-mb given with it is refused below, not dropped. */
			if (!start_given)
				g.start_mb = -1;
			break;
		case O_STARTMB: g.start_mb = int_arg("--start-mb", a); start_given = 1; break;
		}
	}
	if (g.model == MODEL_NONE)
		usage_die("which model? --model drive-managed|host-managed|caveat, or --profile P");
	/* Not ignored: a --band on a caveat device is a mistake to point at. */
	for (i = 0; i < ng; i++) {
		enum smr_model m = opt_model(given[i].opt);
		const struct option *o = opts;

		if (m == MODEL_NONE || m == g.model)
			continue;
		while (o->val != given[i].opt)
			o++;
		usage_die("--%s does not apply to a %s device (it is a %s option): drop it, or use --model %s",
			  o->name, model_name(g.model), model_name(m), model_name(m));
	}
	if (!realpath(dev, real))
		die("backing device %s: %s", dev, strerror(errno));
	fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno == EACCES)
			die("cannot open %s: permission denied: run as root", real);
		die("cannot open %s: %s", real, strerror(errno));
	}
	if (ioctl(fd, BLKGETSIZE64, &backing)) {
		struct stat st;

		/* --dry-run on an image file: size the table for it. */
		if (dry && !fstat(fd, &st) && S_ISREG(st.st_mode)) {
			backing = (uint64_t)st.st_size;
			goto sized;
		}
		close(fd);
		die("%s is not a block device: use a disk, partition, LV or 'losetup -f --show FILE'", real);
	}
	/* In use under another dm or md device: the kernel would say nothing. */
	if (!fstat(fd, &bst) && S_ISBLK(bst.st_mode) && !dry &&
	    bdev_holders("/sys", major(bst.st_rdev), minor(bst.st_rdev), who, sizeof(who)) > 0) {
		if (!force) {
			close(fd);
			die("%s is in use: %s; smrctl would %s it: free it first, or add --force if that is what you mean",
			    real, who, g.format ? "format" : "write its metadata over");
		}
		fprintf(stderr, "smrctl: warning: %s is in use (%s); going on: --force\n", real, who);
	}
sized:
	close(fd);
	ret = smr_compute_table(&g, real, backing, table, sizeof(table), err, sizeof(err));
	if (ret)
		die("%s", err);
	if (dry) {
		printf("%s\n", table);
		return 0;
	}
	need_root();
	dm_init();
	if (dm_exists(name, &info))
		die("a device named '%s' exists already: pick another name or 'smrctl remove %s'", name, name);
	/* The kernel loads dm-<target> on the first table that names it. */
	ret = dm_load_create(name, table);
	if (ret == -EINVAL && !target_available(g.model == MODEL_CAVEAT ? "caveat" : "smr"))
		die("the '%s' target is not available: load the module ('modprobe dm-%s') or install it ('make install' in the dm-smr tree)",
		    g.model == MODEL_CAVEAT ? "caveat" : "smr",
		    g.model == MODEL_CAVEAT ? "caveat" : "smr");
	if (ret == -EBUSY)
		die("the backing device %s is busy: a program holds it open exclusively (a mounted file system, swap, an md array, or another emulated drive over it): free it first; table was: %s",
		    real, table);
	if (ret == -EACCES || ret == -EPERM)
		need_root_die("loading a table: %s", strerror(-ret));
	if (ret)
		die("the kernel refused the table '%s' (%s): 'dmesg | tail' says why (geometry mismatch with what is on %s? add --format to start over)",
		    table, dm_lastmsg[0] ? dm_lastmsg : strerror(-ret), real);
	printf("created /dev/mapper/%s: %s %s over %s\n", name, model_name(g.model),
	       format_size(strtoull(strchr(table, ' ') + 1, NULL, 10) * 512, b1, sizeof(b1)),
	       real);
	printf("table: %s\n", table);
	return 0;
}

static int cmd_remove(int argc, char **argv)
{
	struct dm_info info;
	const char *name;
	int ret;

	while (cmd_getopt(argc, argv, no_opts) != -1)
		;
	name = dev_arg(cmd_args(argc, argv, 1, 1, "the device NAME")[0]);
	need_root();
	dm_init();
	check_smr_dev(name, NULL);
	if (!dm_exists(name, &info))
		die("no device '%s'", name);
	if (info.open_count)
		die("%s is busy (open %d times): unmount it or stop what uses it ('fuser -vm /dev/mapper/%s')",
		    name, info.open_count, name);
	ret = dm_remove(name);
	if (ret == -EBUSY)
		die("%s is busy: unmount it or stop what uses it ('fuser -vm /dev/mapper/%s')",
		    name, name);
	if (ret)
		die("removing %s failed: %s", name, dm_lastmsg[0] ? dm_lastmsg : strerror(-ret));
	return 0;
}

/* ------------------------------------------------------------- status --- */

struct status_ctx {
	int json;
	int n;
};

/* A record's fields, a line each (wa_milli as wa). */
static void print_fields(const struct rec *r)
{
	int i;

	for (i = 0; i < r->nf; i++) {
		if (r->f[i].is_str)
			printf("  %-22s %s\n", r->f[i].key, r->f[i].s);
		else if (!strcmp(r->f[i].key, "wa_milli"))
			printf("  %-22s %" PRIu64 ".%03" PRIu64 "\n", "wa",
			       r->f[i].u / 1000, r->f[i].u % 1000);
		else
			printf("  %-22s %" PRIu64 "\n", r->f[i].key, r->f[i].u);
	}
}

/* A record as one JSON line. */
static void print_json(const struct rec *r, double ts)
{
	char buf[32768];	/* 48 fields, every byte escaped */

	if (rec_to_json(r, ts, buf, sizeof(buf)) < 0)
		die("internal error: a %s record does not fit %zu bytes of JSON",
		    r->family, sizeof(buf));
	printf("%s\n", buf);
}

static int status_cb(const struct rec *r, void *arg)
{
	struct status_ctx *s = arg;

	s->n++;
	if (s->json) {
		print_json(r, -1);
		return 0;
	}
	printf("%s (%u:%u) %s\n", r->device, r->major, r->minor, r->family);
	print_fields(r);
	return 0;
}

static void nl_open_or_die(struct smrnl *n)
{
	int ret = smrnl_open(n);

	if (ret)
		die("cannot open a generic netlink socket: %s", strerror(-ret));
	if (n->fam[FAM_SMR] < 0 && n->fam[FAM_CAVEAT] < 0)
		die("neither dm-smr nor dm-caveat is loaded: run 'modprobe dm-smr' (or 'modprobe dm-caveat')");
}

static int cmd_status(int argc, char **argv)
{
	struct status_ctx s = { 0 };
	const char *name = NULL;
	struct smrnl n;
	int fam, ret, found = 0;

	while (cmd_getopt(argc, argv, json_opts) != -1)
		s.json = 1;
	if (optind < argc)
		name = dev_arg(cmd_args(argc, argv, 0, 1, NULL)[0]);
	nl_open_or_die(&n);
	for (fam = 0; fam < NR_FAMS; fam++) {
		if (n.fam[fam] < 0)
			continue;
		ret = smrnl_dump(&n, fam, name, status_cb, &s);
		if (!ret)
			found = 1;
		else if (!(name && ret == -ENODEV))
			die("%s dump: %s", smrnl_family_name[fam], n.errmsg[0] ? n.errmsg : smrnl_strerror(ret));
	}
	smrnl_close(&n);
	if (name && !found)
		die("no smr or caveat device named '%s' ('smrctl status' lists them)", name);
	if (!s.n && !s.json)
		printf("no smr or caveat devices\n");
	return 0;
}

/* The families' event counters and rate (not the events: that is watch). */
static int cmd_event_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "rate", required_argument, NULL, 'r' },
		{ "reset", no_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	/* The old name printed JSON only; scripts parse it. */
	int json = cur->alias_of != NULL, reset = 0, c, fam, ret;
	int64_t rate = -1;
	struct smrnl n;
	struct rec r;

	while ((c = cmd_getopt(argc, argv, opts)) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'r')
			rate = int_arg("--rate", optarg);
		else
			reset = 1;
	}
	cmd_args(argc, argv, 0, 0, NULL);
	nl_open_or_die(&n);
	for (fam = 0; fam < NR_FAMS; fam++) {
		if (n.fam[fam] < 0)
			continue;
		if (rate >= 0 || reset) {
			ret = smrnl_set(&n, fam, rate, reset, NULL);
			if (ret)
				die("%s: %s", smrnl_family_name[fam],
				    n.errmsg[0] ? n.errmsg : smrnl_strerror(ret));
		}
		ret = smrnl_stats(&n, fam, &r);
		if (ret)
			die("%s: %s", smrnl_family_name[fam], smrnl_strerror(ret));
		snprintf(r.device, sizeof(r.device), "%s", "");
		if (json) {
			print_json(&r, -1);
		} else {
			printf("%s\n", smrnl_family_name[fam]);
			print_fields(&r);
		}
	}
	smrnl_close(&n);
	return 0;
}

/* -------------------------------------------------------------- watch --- */

static int watch_json;

static int watch_cb(const struct rec *r, void *arg)
{
	char buf[64];
	struct timespec ts;
	int i;

	(void)arg;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (watch_json) {
		print_json(r, ts.tv_sec + ts.tv_nsec / 1e9);
	} else {
		struct tm tm;

		localtime_r(&ts.tv_sec, &tm);
		strftime(buf, sizeof(buf), "%H:%M:%S", &tm);
		printf("%s.%03ld %s %s", buf, ts.tv_nsec / 1000000, r->device, r->event);
		for (i = 0; i < r->nf; i++) {
			if (r->f[i].is_str)
				printf(" %s=%s", r->f[i].key, r->f[i].s);
			else
				printf(" %s=%" PRIu64, r->f[i].key, r->f[i].u);
		}
		printf("\n");
	}
	fflush(stdout);
	return 0;
}

static int cmd_watch(int argc, char **argv)
{
	struct smrnl_ev e;
	struct pollfd p;
	int ret;

	while (cmd_getopt(argc, argv, json_opts) != -1)
		watch_json = 1;
	cmd_args(argc, argv, 0, 0, NULL);
	ret = smrnl_ev_open(&e, watch_cb, NULL);
	if (ret)
		die("cannot open a generic netlink socket: %s", strerror(-ret));
	if (e.grp[FAM_SMR] < 0 && e.grp[FAM_CAVEAT] < 0)
		fprintf(stderr, "smrctl: neither dm-smr nor dm-caveat is loaded; waiting for them ('modprobe dm-smr')\n");
	p.fd = smrnl_ev_fd(&e);
	p.events = POLLIN;
	for (;;) {
		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			die("poll: %s", strerror(errno));
		ret = smrnl_ev_recv(&e);
		if (ret)
			die("netlink: %s", strerror(-ret));
	}
}

/* --------------------------------------------------------- wait-clean --- */

struct wc_ctx {
	const char *name;
	int done;
	double clean_s;		/* cleaning time reported */
	int found;
	int is_dm;
	struct rec last;
};

static int wc_event(const struct rec *r, void *arg)
{
	struct wc_ctx *w = arg;

	if (strcmp(r->family, "dm-smr") || strcmp(r->device, w->name))
		return 0;
	if (!strcmp(r->event, "idle_clean")) {
		w->done = 1;
		w->clean_s = rec_u64(r, "clean_ms", 0) / 1000.0;
	}
	return 0;
}

static int wc_dump(const struct rec *r, void *arg)
{
	struct wc_ctx *w = arg;
	const struct rec_field *f = rec_get(r, "state"), *m = rec_get(r, "mode");

	w->found = 1;
	w->last = *r;
	w->is_dm = m && m->is_str && !strcmp(m->s, "drive-managed");
	if (w->is_dm && f && f->is_str && !strcmp(f->s, "idle") &&
	    rec_u64(r, "dirty_bands", 1) == 0 && rec_u64(r, "cache_used", 1) == 0) {
		w->done = 1;
		w->clean_s = rec_u64(r, "clean_ms_since_busy", 0) / 1000.0;
	}
	return 0;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int cmd_wait_clean(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	struct wc_ctx w = { 0 };
	double timeout = -1, t0 = mono(), left;
	struct smrnl_ev e;
	struct pollfd p;
	char *end;
	int ret;

	while (cmd_getopt(argc, argv, opts) != -1) {
		timeout = strtod(optarg, &end);
		/* strtod takes "nan" and "inf": neither is a timeout. */
		if (end == optarg || *end || !isfinite(timeout) || timeout < 0)
			usage_die("--timeout '%s': seconds, e.g. 600", optarg);
	}
	w.name = dev_arg(cmd_args(argc, argv, 1, 1, "the device NAME")[0]);
	/* Listen first, then look: an event between the two is not lost. */
	ret = smrnl_ev_open(&e, wc_event, &w);
	if (ret)
		die("cannot open a generic netlink socket: %s", strerror(-ret));
	if (e.ctl.fam[FAM_SMR] < 0)
		die("dm-smr is not loaded: run 'modprobe dm-smr'");
	p.fd = smrnl_ev_fd(&e);
	p.events = POLLIN;
	for (;;) {
		ret = smrnl_dump(&e.ctl, FAM_SMR, w.name, wc_dump, &w);
		if (ret == -ENODEV || (!ret && !w.found))
			die("no smr device named '%s' ('smrctl status' lists them)", w.name);
		if (ret)
			die("dm-smr: %s", smrnl_strerror(ret));
		if (!w.is_dm)
			die("%s is not a drive-managed device: it has no cache to clean", w.name);
		if (w.done)
			break;
		left = timeout < 0 ? 1 : timeout - (mono() - t0);
		if (left <= 0) {
			fprintf(stderr, "%s: %s not clean after %.1f s: cache %" PRIu64 "/%" PRIu64
				" blocks, %" PRIu64 " dirty bands, state %s (background cleaning needs the device idle for idle_ms; idle_ms 0 means never: run 'smrctl clean %s')\n",
				prog, w.name, mono() - t0, rec_u64(&w.last, "cache_used", 0),
				rec_u64(&w.last, "cache_total", 0),
				rec_u64(&w.last, "dirty_bands", 0),
				rec_get(&w.last, "state") ? rec_get(&w.last, "state")->s : "?",
				w.name);
			return 1;
		}
		/* Wake on an event, or re-read the counters every second. */
		ret = poll(&p, 1, (int)((left < 1 ? left : 1) * 1000) + 1);
		if (ret > 0) {
			ret = smrnl_ev_recv(&e);
			if (ret)
				die("netlink: %s", strerror(-ret));
			if (w.done)
				break;
		}
	}
	printf("clean after %.1f s; cleaning time %.1f s\n", mono() - t0, w.clean_s);
	smrnl_ev_close(&e);
	return 0;
}

/* ------------------------------------------------- messages, zones ... --- */

/* clean, policy, clear-stats: a target message. */
static int cmd_message(int argc, char **argv)
{
	const char *what = cur->name, *name, *policy = NULL;
	int is_policy = !strcmp(what, "policy");
	char msg[128], **args;
	char *resp;

	while (cmd_getopt(argc, argv, no_opts) != -1)
		;
	args = cmd_args(argc, argv, 1 + is_policy, 1 + is_policy,
			is_policy ? "NAME and POLICY" : "the device NAME");
	name = dev_arg(args[0]);
	if (is_policy) {
		policy = args[1];
		if (!policy_valid(policy))
			usage_die("policy '%s': use fifo, greedy or cost-benefit", policy);
	}
	dm_init();
	check_smr_dev(name, strcmp(what, "clear-stats") ? "smr" : NULL);
	if (is_policy)
		snprintf(msg, sizeof(msg), "policy %s", policy);
	else if (!strcmp(what, "clear-stats"))
		snprintf(msg, sizeof(msg), "clear_stats");
	else
		snprintf(msg, sizeof(msg), "clean");
	resp = dm_message(name, msg);
	if (*resp)
		printf("%s\n", resp);
	free(resp);
	return 0;
}

#ifndef HAVE_LIBZBD
static void zone_report(const char *name, int json)
{
	die("built without libzbd: install libzbd-dev and rebuild, or use 'blkzone report /dev/mapper/%s'",
	    name);
}
#else
static const char *zone_cond(unsigned int cond)
{
	switch (cond) {	/* as blkzone(8) abbreviates them */
	case ZBD_ZONE_COND_NOT_WP: return "nw";
	case ZBD_ZONE_COND_EMPTY: return "em";
	case ZBD_ZONE_COND_IMP_OPEN: return "oi";
	case ZBD_ZONE_COND_EXP_OPEN: return "oe";
	case ZBD_ZONE_COND_CLOSED: return "cl";
	case ZBD_ZONE_COND_READONLY: return "ro";
	case ZBD_ZONE_COND_FULL: return "fu";
	case ZBD_ZONE_COND_OFFLINE: return "of";
	default: return "?";
	}
}

static void zone_report(const char *name, int json)
{
	char path[PATH_MAX];
	struct zbd_info info;
	struct zbd_zone *z = NULL;
	unsigned int nr = 0, i;
	int fd;

	snprintf(path, sizeof(path), "/dev/mapper/%s", name);
	zbd_set_log_level(ZBD_LOG_NONE);
	fd = zbd_open(path, O_RDONLY, &info);
	if (fd < 0) {
		if (access(path, F_OK))
			die("%s does not exist ('smrctl status' lists the devices)", path);
		if (access(path, R_OK))
			need_root_die("cannot open %s: %s", path, strerror(EACCES));
		die("%s is not a zoned device: zone reports are for host-managed devices", path);
	}
	if (zbd_list_zones(fd, 0, 0, ZBD_RO_ALL, &z, &nr)) {
		zbd_close(fd);
		die("zone report of %s failed: %s", path, strerror(errno));
	}
	if (json) {
		json_kv("{", "device", name);
		json_kv(",", "path", path);
		printf(",\"nr_zones\":%u,\"zone_sectors\":%llu,\"max_open\":%u,\"max_active\":%u,\"zones\":[",
		       info.nr_zones, info.zone_size >> 9, info.max_nr_open_zones,
		       info.max_nr_active_zones);
	} else {
		printf("%s: %u zones of %llu sectors, max open %u, max active %u\n", path,
		       info.nr_zones, info.zone_size >> 9, info.max_nr_open_zones,
		       info.max_nr_active_zones);
		printf("%12s %10s %10s %12s %-4s %s\n", "start", "len", "cap", "wp", "type", "cond");
	}
	for (i = 0; i < nr; i++) {
		const char *type = z[i].type == ZBD_ZONE_TYPE_CNV ? "conv" : "seq";

		if (json)
			printf("%s{\"start\":%llu,\"len\":%llu,\"capacity\":%llu,\"wp\":%llu,\"type\":\"%s\",\"cond\":\"%s\"}",
			       i ? "," : "", z[i].start >> 9, z[i].len >> 9,
			       z[i].capacity >> 9, z[i].wp >> 9, type, zone_cond(z[i].cond));
		else
			printf("%12llu %10llu %10llu %12llu %-4s %s\n", z[i].start >> 9,
			       z[i].len >> 9, z[i].capacity >> 9, z[i].wp >> 9, type,
			       zone_cond(z[i].cond));
	}
	if (json)
		printf("]}\n");
	free(z);
	zbd_close(fd);
}
#endif

static int cmd_zones(int argc, char **argv)
{
	int json = 0;

	while (cmd_getopt(argc, argv, json_opts) != -1)
		json = 1;
	zone_report(dev_arg(cmd_args(argc, argv, 1, 1, "the device NAME")[0]), json);
	return 0;
}

static int cmd_dump(int argc, char **argv)
{
	uint64_t nr_blocks = 0, start = 0, a, l, total = 0, ext = 0;
	int json = 0, first = 1;
	const char *name;
	char msg[96], *resp, *tok, *save, *p;

	while (cmd_getopt(argc, argv, json_opts) != -1)
		json = 1;
	name = dev_arg(cmd_args(argc, argv, 1, 1, "the device NAME")[0]);
	dm_init();
	check_smr_dev(name, "caveat");
	resp = dm_message(name, "modsense");
	p = strstr(resp, "capacity ");
	if (!p || sscanf(p, "capacity %" SCNu64, &nr_blocks) != 1)
		die("unexpected modsense reply from %s: '%s'", name, resp);
	free(resp);
	if (json) {
		json_kv("{", "device", name);
		printf(",\"capacity\":%" PRIu64 ",\"damaged\":[", nr_blocks);
	}
	else
		printf("# maybe-damaged extents of %s (blocks): start length\n", name);
	while (start < nr_blocks) {
		uint64_t next = nr_blocks;

		snprintf(msg, sizeof(msg), "dump %" PRIu64 " %" PRIu64, start,
			 nr_blocks - start);
		resp = dm_message(name, msg);
		for (tok = strtok_r(resp, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			if (!strcmp(tok, "truncated")) {
				tok = strtok_r(NULL, " ", &save);
				if (!tok || sscanf(tok, "next=%" SCNu64, &next) != 1)
					die("unexpected dump reply from %s", name);
				break;
			}
			if (sscanf(tok, "%" SCNu64 "+%" SCNu64, &a, &l) != 2)
				die("unexpected dump token '%s' from %s", tok, name);
			ext++;
			total += l;
			if (json)
				printf("%s[%" PRIu64 ",%" PRIu64 "]", first ? "" : ",", a, l);
			else
				printf("%" PRIu64 " %" PRIu64 "\n", a, l);
			first = 0;
		}
		free(resp);
		if (next <= start)
			die("dump of %s made no progress at block %" PRIu64, name, start);
		start = next;
	}
	if (json)
		printf("],\"extents\":%" PRIu64 ",\"damaged_blocks\":%" PRIu64 "}\n", ext, total);
	else
		printf("# %" PRIu64 " extents, %" PRIu64 " of %" PRIu64 " blocks maybe damaged\n",
		       ext, total, nr_blocks);
	return 0;
}

/* ---------------------------------------------------------- calibrate --- */

/*
 * The probe is its own program, smr-calibrate (Python: the fitting reads
 * better there), installed beside smrctl; this runs it with the same
 * arguments. Beside the binary first (make install), then its own folder
 * beside smrctl's (the source tree: userspace/smr-calibrate/), then PATH.
 */
static int cmd_calibrate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "rpm", required_argument, NULL, 'r' },
		{ "budget", required_argument, NULL, 'b' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "write-probes", no_argument, NULL, 'w' },
		{ "force", no_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	/* smrctl's directory, then this below it: where to look */
	static const char *const below[] = { "", "/../smr-calibrate" };
	char exe[PATH_MAX - 64], path[PATH_MAX];
	const char *dir;
	ssize_t n;
	size_t i;

	/* Options are checked here, as every command's are; values there. */
	while (cmd_getopt(argc, argv, opts) != -1)
		;
	cmd_args(argc, argv, 1, 1, "the device to probe");
	argv[0] = "smr-calibrate";
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && n < (ssize_t)sizeof(exe) - 1) {	/* not cut short */
		exe[n] = 0;
		dir = dirname(exe);
		for (i = 0; i < sizeof(below) / sizeof(below[0]); i++) {
			snprintf(path, sizeof(path), "%s%s/smr-calibrate", dir, below[i]);
			if (access(path, X_OK))
				continue;
			execv(path, argv);
			/* ENOENT here is the interpreter: #!/usr/bin/env python3 */
			die("cannot run %s: %s%s", path, strerror(errno),
			    errno == ENOENT ? " (is python3 installed?)" : "");
		}
	}
	execvp("smr-calibrate", argv);
	die("smr-calibrate is neither beside smrctl nor in PATH: %s", strerror(errno));
}

/* ------------------------------------------------------------- main --- */

static const struct command commands[] = {
	{ "create", cmd_create,
	  "NAME --model drive-managed|host-managed|caveat --dev DEV [options]",
	  "Create the emulated SMR disk /dev/mapper/NAME over DEV (root; --dry-run is not).",
	  "  --model M              drive-managed (dm), host-managed (hm) or caveat\n"
	  "  --dev DEV              the backing device (an image file too, with --dry-run)\n"
	  "  --profile P            start from profile P (smrctl profiles, or a path)\n"
	  "  --size SIZE            capacity (default: as much as DEV holds)\n"
	  "  --format               start over: the target formats DEV\n"
	  "  --force                use DEV although a dm or md device is stacked on it\n"
	  "  --dry-run              print the table line and stop\n"
	  "  --no-timing            leave out the profile's timing model (docs/timing.md)\n"
	  "  --start-mb N           place the device N MB (10^6 B) into the profile's drive (drive_mb)\n"
	  "  --write-cache MIB      a volatile write cache of MIB MiB (dm, hm: 1-1024; caveat: 1-64)\n"
	  " drive-managed:\n"
	  "  --band SIZE            band size, 1M to 256M\n"
	  "  --cache SIZE|N%        persistent cache (default 1% of the size, a band at least)\n"
	  "  --idle-ms N            idleness before background cleaning (0: none)\n"
	  "  --policy P             cleaning policy: fifo, greedy or cost-benefit\n"
	  "  --no-seq-bypass        sequential writes go through the cache too\n"
	  " host-managed:\n"
	  "  --zone SIZE            zone size, a power of two\n"
	  "  --zone-capacity SIZE   usable part of a sequential zone\n"
	  "  --conv N               conventional zones\n"
	  "  --max-open N           open zone limit\n"
	  "  --max-active N         active zone limit\n"
	  " caveat:\n"
	  "  --did N                blocks after a write it may damage (DID)\n"
	  "  --dnor N               blocks from a write's start it never damages (DNOR)\n"
	  "  --block-size B         512 to 65536 (default 4096)\n"
	  "  --unshingled N         blocks of undamageable region at the start\n"
	  "  --on-damaged-read error|zero  a read of a maybe-damaged block fails, or reads zeros\n"
	  " SIZE takes K, M, G, T (binary) or s (sectors). Options override the profile;\n"
	  " an option of another model is refused.\n", NULL },
	{ "remove", cmd_remove, "NAME",
	  "Remove the smr or caveat device NAME (root). Refused while it is open.", NULL, NULL },
	{ "status", cmd_status, "[NAME] [--json]",
	  "Counters of every smr and caveat device, or of NAME (netlink; any user).",
	  "  --json                 one JSON object per device, a line each\n", NULL },
	{ "watch", cmd_watch, "[--json]",
	  "Follow the devices' events as they happen, until interrupted (any user).",
	  "  --json                 one JSON object per event, a line each, with \"ts\"\n", NULL },
	{ "wait-clean", cmd_wait_clean, "NAME [--timeout S]",
	  "Wait until drive-managed NAME is idle with an empty cache (any user).",
	  "  --timeout S            give up after S seconds (exit 1)\n", NULL },
	{ "clean", cmd_message, "NAME",
	  "Clean every band of drive-managed NAME now, in the background (root).", NULL, NULL },
	{ "policy", cmd_message, "NAME fifo|greedy|cost-benefit",
	  "Change the cleaning policy of drive-managed NAME (root).", NULL, NULL },
	{ "clear-stats", cmd_message, "NAME", "Zero the counters of NAME (root).", NULL, NULL },
	{ "zones", cmd_zones, "NAME [--json]",
	  "Zone report of host-managed NAME (root, or read access to /dev/mapper/NAME).",
	  "  --json                 one JSON object, the zones in \"zones\"\n", NULL },
	{ "dump", cmd_dump, "NAME [--json]",
	  "The maybe-damaged extents of caveat NAME, in blocks (root).",
	  "  --json                 one JSON object, the extents in \"damaged\"\n", NULL },
	{ "calibrate", cmd_calibrate,
	  "DEV [--output FILE] [--rpm N] [--budget S] [--quiet] [--write-probes [--force]]",
	  "Time DEV with direct reads and write a profile for create --profile\n"
	  "(root, or read access to DEV; refused if DEV is mounted or held).",
	  "  --output FILE          write the profile to FILE (default: stdout)\n"
	  "  --rpm N                spindle speed, when DEV shows no rotational latency\n"
	  "                         (needed where DEV is not rotational: an emulated drive\n"
	  "                         over RAM; an SSD is refused without it)\n"
	  "  --budget S             seconds each probe may take (default 60)\n"
	  "  --quiet                no progress lines\n"
	  "  --write-probes         also probe a drive-managed disk's cache, bands and\n"
	  "                         idle time: OVERWRITES random blocks all over DEV\n"
	  "  --force                --write-probes even over a signature blkid finds\n", NULL },
	{ "profiles", cmd_profiles, "[--json]", "The drive profiles create --profile takes (any user).",
	  "  --json                 one JSON object per profile, a line each\n", NULL },
	{ "event-stats", cmd_event_stats, "[--json] [--rate N] [--reset]",
	  "Each family's event counters (sent, dropped) and rate limit; watch shows\n"
	  "the events themselves (any user; --rate and --reset need CAP_NET_ADMIN).",
	  "  --json                 one JSON object per family, a line each\n"
	  "  --rate N               events per second a family may send (0: none)\n"
	  "  --reset                zero the sent and dropped counters\n", NULL },
	/* The old name, for scripts: JSON by default, as it always printed. */
	{ "events", cmd_event_stats, "[--json] [--rate N] [--reset]",
	  "Deprecated name of event-stats, printing JSON as it always did.",
	  "  --rate N, --reset      as event-stats\n", "event-stats" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: %s COMMAND [ARGS]   (%s COMMAND --help: its options)\n"
		"       %s -V|--version\n", prog, prog, prog);
	for (i = 0; i < NR_COMMANDS; i++)
		if (!commands[i].alias_of)
			fprintf(f, "  %s %s\n", commands[i].name, commands[i].args);
	fprintf(f, "See smrctl(8).\n");
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static int is_help(const char *a)
{
	return !strcmp(a, "-h") || !strcmp(a, "--help");
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (is_help(argv[1]) || !strcmp(argv[1], "help")) {
		if (argc > 3) {
			fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[3]);
			usage(stderr);
			return EXIT_USAGE;
		}
		cur = argc > 2 ? find_command(argv[2]) : NULL;
		if (argc > 2 && !cur) {
			fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[2]);
			usage(stderr);
			return EXIT_USAGE;
		}
		if (cur)
			cmd_usage(cur, stdout, 1);
		else
			usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		if (argc > 2) {
			fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[2]);
			usage(stderr);
			return EXIT_USAGE;
		}
		printf("%s (dm-smr) %s\n", prog, SMR_VERSION);
		return 0;
	}
	cur = find_command(argv[1]);
	if (!cur) {
		fprintf(stderr, "%s: unknown command '%s'\n", prog, argv[1]);
		usage(stderr);
		return EXIT_USAGE;
	}
	argc--;
	argv++;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (is_help(argv[i])) {
			cmd_usage(cur, stdout, 1);
			return 0;
		}
	}
	if (cur->alias_of)
		fprintf(stderr, "%s: '%s' is deprecated: use '%s %s' (add --json for this output)\n",
			prog, cur->name, prog, cur->alias_of);
	return cur->fn(argc, argv);
}
