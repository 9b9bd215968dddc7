// SPDX-License-Identifier: GPL-2.0
/*
 * smrd: listens to the dm-smr and dm-caveat generic netlink events, keeps
 * per-device cleaning state and reports it: JSON lines (stdout or
 * --json FILE), a summary on SIGUSR1 (stderr, and "summary" records in
 * the JSON stream), and optionally a Prometheus text endpoint on a
 * loopback address (--metrics 127.0.0.1:PORT). See smrd(8).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
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
	double last_event;
};

static struct dev_state devs[MAX_DEVS];
static FILE *json_out;
static const char *json_path;
static struct smrnl_ev ev;
static uint64_t events_seen;

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
	char buf[4096];

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
	d->last_event = now();
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
			", damage events %" PRIu64 " (%" PRIu64 " live blocks)\n",
			smrnl_family_name[d->fam], d->name, d->major, d->minor,
			d->mode[0] ? d->mode : "?",
			d->cleaning_band >= 0 ? "cleaning" :
			d->clean ? "idle and clean" : "idle",
			d->cache_pct, d->clean_dones, d->clean_starts,
			d->last_clean_ms, d->zone_errors, d->damage_events,
			d->damage_live_blocks);
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
		emit(&r);
	}
	if (!n)
		fprintf(stderr, "smrd: no devices\n");
}

/* ---------------------------------------------------------- metrics --- */

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

static int metrics_dev_cb(const struct rec *r, void *arg)
{
	struct mbuf *m = arg;
	char l[300];
	int i;

	label(r->device, l, sizeof(l));
	for (i = 0; i < r->nf; i++) {
		const struct rec_field *f = &r->f[i];

		if (f->is_str) {
			mprintf(m, "smr_%s_info{family=\"%s\",device=\"%s\",%s=\"%s\"} 1\n",
				f->key, r->family, l, f->key, f->s);
			continue;
		}
		mprintf(m, "smr_%s{family=\"%s\",device=\"%s\"} %" PRIu64 "\n",
			f->key, r->family, l, f->u);
	}
	return 0;
}

static void metrics_body(struct mbuf *m)
{
	int fam, i;
	char l[300];

	mprintf(m, "# smrd: device counters from the kernel dump, event counts from smrd\n");
	mprintf(m, "smrd_events_total %" PRIu64 "\n", events_seen);
	mprintf(m, "smrd_socket_overruns_total %" PRIu64 "\n", smrnl_ev_overruns);
	smrnl_resolve(&ev.ctl);
	for (fam = 0; fam < NR_FAMS; fam++) {
		struct rec st;

		mprintf(m, "smrd_family_loaded{family=\"%s\"} %d\n",
			smrnl_family_name[fam], ev.ctl.fam[fam] >= 0);
		if (ev.ctl.fam[fam] < 0)
			continue;
		if (!smrnl_stats(&ev.ctl, fam, &st))
			mprintf(m, "smr_kernel_events_dropped_total{family=\"%s\"} %" PRIu64 "\n"
				"smr_kernel_events_sent_total{family=\"%s\"} %" PRIu64 "\n",
				smrnl_family_name[fam], rec_u64(&st, "events_dropped", 0),
				smrnl_family_name[fam], rec_u64(&st, "events_sent", 0));
		smrnl_dump(&ev.ctl, fam, NULL, metrics_dev_cb, m);
	}
	for (i = 0; i < MAX_DEVS; i++) {
		struct dev_state *d = &devs[i];
		const char *fn;

		if (!d->used)
			continue;
		fn = smrnl_family_name[d->fam];
		label(d->name, l, sizeof(l));
		mprintf(m, "smrd_cleaning{family=\"%s\",device=\"%s\"} %d\n", fn, l,
			d->cleaning_band >= 0);
		mprintf(m, "smrd_clean{family=\"%s\",device=\"%s\"} %d\n", fn, l, d->clean);
		mprintf(m, "smrd_cache_level_percent{family=\"%s\",device=\"%s\"} %u\n",
			fn, l, d->cache_pct);
		mprintf(m, "smrd_cleanings_total{family=\"%s\",device=\"%s\"} %" PRIu64 "\n",
			fn, l, d->clean_dones);
		mprintf(m, "smrd_last_clean_ms{family=\"%s\",device=\"%s\"} %" PRIu64 "\n",
			fn, l, d->last_clean_ms);
		mprintf(m, "smrd_zone_errors_total{family=\"%s\",device=\"%s\"} %" PRIu64 "\n",
			fn, l, d->zone_errors);
		mprintf(m, "smrd_damage_events_total{family=\"%s\",device=\"%s\"} %" PRIu64 "\n",
			fn, l, d->damage_events);
	}
}

static void metrics_serve(int lfd)
{
	struct timeval tv = { .tv_sec = 1 };
	struct mbuf m = { 0 };
	char req[2048], hdr[256];
	ssize_t n;
	int fd;

	fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	n = recv(fd, req, sizeof(req) - 1, 0);
	if (n <= 0) {
		close(fd);
		return;
	}
	req[n] = 0;
	if (strncmp(req, "GET /metrics", 12) && strncmp(req, "GET / ", 6)) {
		static const char nf[] = "HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n";

		n = send(fd, nf, sizeof(nf) - 1, MSG_NOSIGNAL);
		close(fd);
		return;
	}
	metrics_body(&m);
	snprintf(hdr, sizeof(hdr),
		 "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
		 "Content-Length: %zu\r\n\r\n", m.len);
	if (send(fd, hdr, strlen(hdr), MSG_NOSIGNAL) > 0 && m.len)
		n = send(fd, m.s, m.len, MSG_NOSIGNAL);
	free(m.s);
	close(fd);
}

static int metrics_listen(const char *spec)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	struct sockaddr_in sa = { .sin_family = AF_INET };
	uint64_t port;
	int fd, one = 1;

	if (!colon || (size_t)(colon - spec) >= sizeof(host) ||
	    parse_u64(colon + 1, &port) || !port || port > 65535) {
		fprintf(stderr, "smrd: --metrics wants ADDRESS:PORT, e.g. 127.0.0.1:9433\n");
		return -1;
	}
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = 0;
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
		fprintf(stderr, "smrd: --metrics: '%s' is not an IPv4 address\n", host);
		return -1;
	}
	if ((ntohl(sa.sin_addr.s_addr) >> 24) != 127) {
		fprintf(stderr, "smrd: --metrics: %s is not a loopback address; the endpoint has no authentication, so it only listens on 127.0.0.0/8\n",
			host);
		return -1;
	}
	sa.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		fprintf(stderr, "smrd: --metrics %s: %s\n", spec, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* ------------------------------------------------------------- main --- */

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smrd [--json FILE|-] [--metrics 127.0.0.1:PORT]\n"
		"       smrd --help | --version\n"
		"  Reports dm-smr and dm-caveat events as JSON lines (stdout by\n"
		"  default). SIGUSR1: summary on stderr and as \"summary\" lines;\n"
		"  SIGHUP: reopen the --json file. See smrd(8).\n");
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

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "metrics", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *metrics = NULL;
	struct pollfd pfd[3];
	sigset_t mask;
	int c, sfd, mfd = -1, n, ret;

	while ((c = getopt_long(argc, argv, "j:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json_path = optarg; break;
		case 'm': metrics = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("smrd (dm-smr) %s\n", SMR_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
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

	pfd[0].fd = smrnl_ev_fd(&ev);
	pfd[0].events = POLLIN;
	pfd[1].fd = sfd;
	pfd[1].events = POLLIN;
	pfd[2].fd = mfd;
	pfd[2].events = POLLIN;
	for (;;) {
		if (poll(pfd, mfd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			perror("smrd: poll");
			return 1;
		}
		if (pfd[0].revents & POLLIN) {
			ret = smrnl_ev_recv(&ev);
			if (ret)
				fprintf(stderr, "smrd: netlink receive: %s\n", strerror(-ret));
		}
		if (pfd[1].revents & POLLIN) {
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
		if (mfd >= 0 && (pfd[2].revents & POLLIN))
			metrics_serve(mfd);
	}
}
