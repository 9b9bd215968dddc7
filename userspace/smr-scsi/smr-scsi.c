// SPDX-License-Identifier: GPL-2.0
/*
 * smr-scsi: an emulated drive (a dm-smr or dm-caveat device, or any block
 * device) as a local SCSI disk, /dev/sdX, through LIO: a TCMU backstore
 * (target_core_user) served by this process, and a tcm_loop target that
 * gives it to the sd driver. A host-managed drive is a ZBC disk
 * (peripheral type 0x14); any other an ordinary disk, a drive-managed
 * one with ZONED = device managed in its block device characteristics.
 * The commands are scsi-emul.c's; this file is the plumbing:
 *
 *   configfs  target/core/user_N/NAME      the backstore (control, enable)
 *             target/loopback/naa.X/tpgt_1 the local target: nexus, and
 *                                          lun/lun_0 linked to the backstore
 *   /dev/uioN the backstore's command ring (linux/target_core_user.h):
 *             one thread takes each command, runs it on the block device
 *             (O_DIRECT; zones with the BLK*ZONE ioctls) and completes it
 *
 * Usage: smr-scsi [options] DEVICE      export DEVICE until SIGTERM/SIGINT
 *        smr-scsi --stop NAME           stop an export (or clear its remains)
 *        smr-scsi --list                the exports, a line each
 * docs/scsi.md says more: how it starts and stops, what happens when the
 * device goes away, the commands and their sense data, the limits.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/blkzoned.h>
#include <linux/fs.h>
/* <linux/target_core_user.h> includes <linux/uio.h>, whose struct iovec
 * (the same layout) clashes with glibc's: keep it out. */
#include <sys/uio.h>
#define __LINUX_UIO_H
#include <linux/target_core_user.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scsi-emul.h"
#include "smr-util.h"	/* SMR_VERSION */

#define CFS "/sys/kernel/config/target"
#define STATE_DIR "/run/smr-scsi"
#define MAX_XFER_BYTES (1024 * 1024)

static const char *prog = "smr-scsi";
static int daemon_pipe = -1;	/* --daemon: the parent waits on it */
static bool log_kept;		/* --log: stderr stays, in a file */

static void msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* snprintf, saying whether it all fit (and not warning where a name
 * from the system could be long: every caller's buffer holds any real one) */
static bool fmt(char *buf, size_t len, const char *f, ...) __attribute__((format(printf, 3, 4)));
static bool fmt(char *buf, size_t len, const char *f, ...)
{
	va_list ap;
	int n;

	va_start(ap, f);
	n = vsnprintf(buf, len, f, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

/* ---------------------------------------------------- block backend --- */

struct blk {
	int fd;
	uint32_t lbs;
};

/* All of iov, moved at offset (bytes): partial transfers resumed. */
static int blk_xfer(struct blk *b, const struct iovec *iov, int cnt, uint64_t lba,
		    uint32_t nr, bool write, int flags)
{
	struct iovec v[cnt > 0 ? cnt : 1];
	size_t left = (size_t)nr * b->lbs;
	off_t off = (off_t)(lba * b->lbs);
	int n = 0;

	for (int i = 0; i < cnt && left; i++) {
		v[n] = iov[i];
		if (v[n].iov_len > left)
			v[n].iov_len = left;
		left -= v[n].iov_len;
		n++;
	}
	if (left)
		return -EINVAL;
	for (int i = 0; i < n; ) {
		ssize_t r = write ? pwritev2(b->fd, v + i, n - i, off, flags)
				  : preadv2(b->fd, v + i, n - i, off, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;
		off += r;
		while (r > 0 && i < n) {
			if ((size_t)r >= v[i].iov_len) {
				r -= v[i].iov_len;
				i++;
			} else {
				v[i].iov_base = (char *)v[i].iov_base + r;
				v[i].iov_len -= r;
				r = 0;
			}
		}
	}
	return 0;
}

static int blk_read(void *ctx, const struct iovec *iov, int cnt, uint64_t lba, uint32_t nr)
{
	return blk_xfer(ctx, iov, cnt, lba, nr, false, 0);
}

static int blk_write(void *ctx, const struct iovec *iov, int cnt, uint64_t lba, uint32_t nr, bool fua)
{
	/* RWF_DSYNC on an O_DIRECT block device write: a FUA write */
	return blk_xfer(ctx, iov, cnt, lba, nr, true, fua ? RWF_DSYNC : 0);
}

static int blk_flush(void *ctx)
{
	struct blk *b = ctx;

	return fdatasync(b->fd) ? -errno : 0;
}

static int blk_report(void *ctx, uint64_t lba, struct se_zone *z, unsigned int nr)
{
	struct blk *b = ctx;
	uint32_t spb = b->lbs / 512;
	size_t sz = sizeof(struct blk_zone_report) + nr * sizeof(struct blk_zone);
	struct blk_zone_report *rep = calloc(1, sz);
	int n;

	if (!rep)
		return -ENOMEM;
	rep->sector = lba * spb;
	rep->nr_zones = nr;
	if (ioctl(b->fd, BLKREPORTZONE, rep)) {
		n = -errno;
		free(rep);
		return n;
	}
	n = rep->nr_zones;
	for (int i = 0; i < n; i++) {
		struct blk_zone *k = &rep->zones[i];

		z[i].start = k->start / spb;
		z[i].len = k->len / spb;
		z[i].wp = k->wp / spb;
		z[i].type = k->type;
		z[i].cond = k->cond;
	}
	free(rep);
	return n;
}

/* nr: the zone's own length (a smaller last zone too: the kernel
 * refuses a range past it) */
static int blk_zone_op(void *ctx, enum se_zone_op op, uint64_t lba, uint64_t nr)
{
	struct blk *b = ctx;
	struct blk_zone_range r = {
		.sector = lba * (b->lbs / 512),
		.nr_sectors = nr * (b->lbs / 512),
	};
	unsigned long req;

	switch (op) {
	case SE_ZOP_OPEN: req = BLKOPENZONE; break;
	case SE_ZOP_CLOSE: req = BLKCLOSEZONE; break;
	case SE_ZOP_FINISH: req = BLKFINISHZONE; break;
	case SE_ZOP_RESET: req = BLKRESETZONE; break;
	default: return -EINVAL;
	}
	return ioctl(b->fd, req, &r) ? -errno : 0;
}

static const struct se_backend blk_backend = {
	.read = blk_read, .write = blk_write, .flush = blk_flush,
	.report = blk_report, .zone_op = blk_zone_op,
};

/* --------------------------------------------------- sysfs, configfs --- */

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;
	size_t n = strlen(val);

	if (fd < 0)
		return -errno;
	ssize_t w = write(fd, val, n);

	if (w != (ssize_t)n)
		r = w < 0 ? -errno : -EIO;
	close(fd);
	return r;
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return 0;
}

/* /sys/dev/block/MAJ:MIN/queue/ATTR of the device fd is open on. */
static int queue_attr(int fd, const char *attr, char *buf, size_t len)
{
	struct stat st;
	char path[PATH_MAX];

	if (fstat(fd, &st))
		return -errno;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/%s",
		 major(st.st_rdev), minor(st.st_rdev), attr);
	return read_file(path, buf, len);
}

static int run(const char *cmd)
{
	int r = system(cmd);

	return r == 0 ? 0 : -1;
}

/* modprobe, and configfs mounted */
static int lio_ready(void)
{
	struct stat st;

	if (run("modprobe -q target_core_user && modprobe -q tcm_loop")) {
		msg("cannot load target_core_user and tcm_loop (CONFIG_TCM_USER2, CONFIG_LOOPBACK_TARGET)");
		return -1;
	}
	if (stat(CFS, &st) && mount("none", "/sys/kernel/config", "configfs", 0, NULL) &&
	    errno != EBUSY) {
		msg("cannot mount configfs on /sys/kernel/config: %s", strerror(errno));
		return -1;
	}
	if (stat(CFS "/loopback", &st) && mkdir(CFS "/loopback", 0755)) {
		msg("%s/loopback: %s", CFS, strerror(errno));
		return -1;
	}
	return 0;
}

/* The steps of an export's set-up, in order; teardown() undoes those
 * done, from the last back. */
enum {
	S_HBA = 1 << 0,		/* core/user_N */
	S_CORE = 1 << 1,	/* core/user_N/NAME */
	S_WWN = 1 << 2,		/* loopback/naa.X */
	S_TPG = 1 << 3,		/* loopback/naa.X/tpgt_1 */
	S_NEXUS = 1 << 4,	/* its nexus */
	S_LUN = 1 << 5,		/* lun/lun_0 */
	S_LINK = 1 << 6,	/* lun_0 linked to the backstore: the sd disk */
	S_ALL = (1 << 7) - 1,
};

/* What an export is, as /run/smr-scsi/NAME keeps it. */
struct export {
	char name[64];
	char dev[PATH_MAX];
	unsigned int hba;		/* core/user_<hba> */
	char wwn[32];			/* loopback/naa.<...> */
	char sd[32];
	pid_t pid;
};

static void paths(const struct export *e, char *core, char *tpg, size_t len)
{
	snprintf(core, len, CFS "/core/user_%u/%s", e->hba, e->name);
	snprintf(tpg, len, CFS "/loopback/%s/tpgt_1", e->wwn);
}

/*
 * Undo the set-up steps in "steps", from the last back. Before the
 * backstore goes (S_CORE), the caller stops serving its ring: removing
 * the LUN (S_LINK) makes sd send a SYNCHRONIZE CACHE, which must still be
 * served.
 */
static void lio_teardown(const struct export *e, unsigned int steps)
{
	char core[PATH_MAX], tpg[PATH_MAX], p[PATH_MAX + 64];

	paths(e, core, tpg, sizeof(core));
	if (steps & S_LINK) {
		fmt(p, sizeof(p), "%s/lun/lun_0/%s", tpg, e->name);
		unlink(p);
	}
	if (steps & S_LUN) {
		fmt(p, sizeof(p), "%s/lun/lun_0", tpg);
		rmdir(p);
	}
	if (steps & S_NEXUS) {
		fmt(p, sizeof(p), "%s/nexus", tpg);
		write_file(p, "NULL");
	}
	if (steps & S_TPG)
		rmdir(tpg);
	if (steps & S_WWN) {
		fmt(p, sizeof(p), CFS "/loopback/%s", e->wwn);
		rmdir(p);
	}
}

static void core_teardown(const struct export *e, unsigned int steps)
{
	char core[PATH_MAX], tpg[PATH_MAX];

	paths(e, core, tpg, sizeof(core));
	if (steps & S_CORE)
		rmdir(core);
	if (steps & S_HBA) {
		fmt(core, sizeof(core), CFS "/core/user_%u", e->hba);
		rmdir(core);	/* fails, rightly, while another uses it */
	}
}

/* ---------------------------------------------------------- TCMU ring --- */

struct ring {
	int fd;
	void *map;
	size_t size;
	struct se_dev *dev;
	atomic_bool stop;
	pthread_t thread;
	unsigned long long cmds, errors;
};

static int uio_find(const struct export *e, char *devpath, size_t len, size_t *size)
{
	DIR *d = opendir("/sys/class/uio");
	struct dirent *de;
	char want[256], p[PATH_MAX], buf[512];
	int r = -ENOENT;

	if (!d)
		return -errno;
	snprintf(want, sizeof(want), "tcm-user/%u/%s/", e->hba, e->name);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "uio", 3))
			continue;
		snprintf(p, sizeof(p), "/sys/class/uio/%s/name", de->d_name);
		if (read_file(p, buf, sizeof(buf)) || strncmp(buf, want, strlen(want)))
			continue;
		snprintf(p, sizeof(p), "/sys/class/uio/%s/maps/map0/size", de->d_name);
		if (read_file(p, buf, sizeof(buf)))
			continue;
		*size = strtoull(buf, NULL, 0);
		fmt(devpath, len, "/dev/%s", de->d_name);
		r = 0;
		break;
	}
	closedir(d);
	return r;
}

/* A command that got CHECK CONDITION, on stderr: its CDB and sense. */
static void log_check(const struct se_cmd *c)
{
	static const uint8_t len_of_group[8] = { 6, 10, 10, 16, 16, 12, 16, 16 };
	char cdb[64] = "";
	uint8_t key, asc, ascq;
	uint64_t info;
	size_t n = 0;

	for (int i = 0; i < len_of_group[c->cdb[0] >> 5] && n + 4 < sizeof(cdb); i++)
		n += snprintf(cdb + n, sizeof(cdb) - n, "%s%02x", i ? " " : "", c->cdb[i]);
	se_sense_decode(c->sense, &key, &asc, &ascq, &info);
	msg("CHECK CONDITION: cdb %s: sense key %x, asc %02x, ascq %02x, info %" PRIu64,
	    cdb, key, asc, ascq, info);
}

/* Take each command from the ring, run it, complete it. */
static void ring_process(struct ring *r)
{
	struct tcmu_mailbox *mb = r->map;
	uint8_t *base = r->map;

	for (;;) {
		uint32_t head = __atomic_load_n(&mb->cmd_head, __ATOMIC_ACQUIRE);
		uint32_t tail = mb->cmd_tail;
		struct tcmu_cmd_entry *ent;
		uint32_t len;

		if (tail == head)
			break;
		ent = (void *)(base + mb->cmdr_off + tail);
		len = tcmu_hdr_get_len(ent->hdr.len_op);
		if (tcmu_hdr_get_op(ent->hdr.len_op) == TCMU_OP_CMD) {
			uint32_t n = ent->req.iov_cnt;
			struct iovec iov[n ? n : 1];
			struct se_cmd c = { .cdb = base + ent->req.cdb_off, .iov = iov, .iovcnt = n };
			size_t total;

			for (uint32_t i = 0; i < n; i++) {
				iov[i].iov_base = base + (uintptr_t)ent->req.iov[i].iov_base;
				iov[i].iov_len = ent->req.iov[i].iov_len;
			}
			se_exec(r->dev, &c);
			r->cmds++;
			/* no stale data in what a short answer leaves */
			total = se_iov_len(iov, n);
			if (c.data_in < total && c.status == SE_GOOD &&
			    !(c.cdb[0] == 0x2a || c.cdb[0] == 0x8a)) {
				size_t skip = c.data_in;

				for (uint32_t i = 0; i < n; i++) {
					if (skip >= iov[i].iov_len) {
						skip -= iov[i].iov_len;
						continue;
					}
					memset((uint8_t *)iov[i].iov_base + skip, 0, iov[i].iov_len - skip);
					skip = 0;
				}
			}
			/* the response overlays the request: written last */
			memset(&ent->rsp, 0, sizeof(ent->rsp));
			ent->rsp.scsi_status = c.status;
			/* a short data-in answer: its length, for the residual */
			if ((mb->flags & TCMU_MAILBOX_FLAG_CAP_READ_LEN) && c.status == SE_GOOD &&
			    c.data_in < total && !(c.cdb[0] == 0x2a || c.cdb[0] == 0x8a)) {
				ent->hdr.uflags |= TCMU_UFLAG_READ_LEN;
				ent->rsp.read_len = c.data_in;
			}
			if (c.status != SE_GOOD) {
				r->errors++;
				memcpy(ent->rsp.sense_buffer, c.sense, c.sense_len);
				log_check(&c);
			}
		}
		/* PAD and TMR entries: nothing to do but pass them */
		__atomic_store_n(&mb->cmd_tail, (tail + len) % mb->cmdr_size, __ATOMIC_RELEASE);
		/* each command completed as soon as it is done, not when the
		 * ring runs dry: a deep queue would hold finished ones back */
		if (tcmu_hdr_get_op(ent->hdr.len_op) == TCMU_OP_CMD) {
			uint32_t one = 1;

			if (write(r->fd, &one, sizeof(one)) != sizeof(one))
				msg("kick: %s", strerror(errno));
		}
	}
}

static void *ring_thread(void *arg)
{
	struct ring *r = arg;

	while (!atomic_load(&r->stop)) {
		struct pollfd p = { .fd = r->fd, .events = POLLIN };
		uint32_t cnt;

		if (poll(&p, 1, 200) > 0 && (p.revents & POLLIN) &&
		    read(r->fd, &cnt, sizeof(cnt)) < 0 && errno != EINTR)
			msg("%s: read: %s", "uio", strerror(errno));
		ring_process(r);
	}
	return NULL;
}

/* ----------------------------------------------------------- export --- */

static void state_path(const char *name, char *p, size_t len)
{
	snprintf(p, len, STATE_DIR "/%s", name);
}

static int state_write(const struct export *e)
{
	char p[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;

	mkdir(STATE_DIR, 0755);
	state_path(e->name, p, sizeof(p));
	snprintf(tmp, sizeof(tmp), "%s.tmp", p);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f, "pid=%d\ndev=%s\nhba=%u\nwwn=%s\nsd=%s\n", (int)e->pid, e->dev,
		e->hba, e->wwn, e->sd);
	if (fclose(f) || rename(tmp, p))
		return -errno;
	return 0;
}

static int state_read(const char *name, struct export *e)
{
	char p[PATH_MAX], line[PATH_MAX + 16];
	FILE *f;

	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	state_path(name, p, sizeof(p));
	f = fopen(p, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strncmp(line, "pid=", 4))
			e->pid = atoi(line + 4);
		else if (!strncmp(line, "dev=", 4))
			fmt(e->dev, sizeof(e->dev), "%s", line + 4);
		else if (!strncmp(line, "hba=", 4))
			e->hba = strtoul(line + 4, NULL, 10);
		else if (!strncmp(line, "wwn=", 4))
			fmt(e->wwn, sizeof(e->wwn), "%s", line + 4);
		else if (!strncmp(line, "sd=", 3))
			fmt(e->sd, sizeof(e->sd), "%s", line + 3);
	}
	fclose(f);
	return 0;
}

/*
 * An export's name: a file name in STATE_DIR, so not "." or "..", and
 * not ending in ".tmp" (state_write()'s temporary file, which --list
 * skips: such an export could be neither listed nor told from the
 * temporary file of another).
 */
static bool name_ok(const char *s)
{
	size_t l = strlen(s);

	if (!l || l >= 64 || !strcmp(s, ".") || !strcmp(s, "..") ||
	    (l >= 4 && !strcmp(s + l - 4, ".tmp")))
		return false;
	for (; *s; s++)
		if (!(('a' <= *s && *s <= 'z') || ('A' <= *s && *s <= 'Z') ||
		      ('0' <= *s && *s <= '9') || *s == '_' || *s == '-' || *s == '.'))
			return false;
	return true;
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* Wait (at most secs) for the sd device on the target's SCSI address. */
static int find_sd(const char *tpg, char *sd, size_t len, int secs)
{
	char p[PATH_MAX], addr[64];
	unsigned int h, c, t;

	fmt(p, sizeof(p), "%s/address", tpg);
	if (read_file(p, addr, sizeof(addr)) || sscanf(addr, "%u:%u:%u", &h, &c, &t) != 3)
		return -EIO;
	snprintf(p, sizeof(p), "/sys/bus/scsi/devices/%u:%u:%u:0/block", h, c, t);
	for (int i = 0; i < secs * 10; i++) {
		DIR *d = opendir(p);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			fmt(sd, len, "%s", de->d_name);
			closedir(d);
			return 0;
		}
		if (d)
			closedir(d);
		usleep(100000);
	}
	return -ETIMEDOUT;
}

struct opts {
	const char *name;
	const char *log;		/* stderr goes here (append) */
	unsigned int rpm;
	int max_open;			/* -1: the device's */
	bool daemon;
};

/*
 * Under systemd (Type=notify): READY=1 once the disk is there, by the
 * protocol of sd_notify(3), one datagram to $NOTIFY_SOCKET (a path, or
 * an abstract socket's name after '@'); a line is not worth a library.
 */
static void notify_systemd(const char *status)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[600];
	size_t len;
	int fd;

	if (!path || (path[0] != '/' && path[0] != '@') ||
	    (len = strlen(path)) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, len);
	if (sa.sun_path[0] == '@')
		sa.sun_path[0] = 0;
	snprintf(buf, sizeof(buf), "READY=1\nSTATUS=%s", status);
	buf[strcspn(buf + 8, "\n") + 8] = 0;	/* the status's own newline */
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, buf, strlen(buf), 0, (struct sockaddr *)&sa,
		   offsetof(struct sockaddr_un, sun_path) + len) < 0)
		msg("cannot tell systemd the disk is there: %s", strerror(errno));
	close(fd);
}

static void ready(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void ready(const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (strncmp(buf, "error", 5))
		notify_systemd(buf);
	if (daemon_pipe >= 0) {
		if (write(daemon_pipe, buf, strlen(buf)) < 0)
			msg("cannot tell the parent: %s", strerror(errno));
		close(daemon_pipe);
		daemon_pipe = -1;
		if (strncmp(buf, "error", 5) && !log_kept && !freopen("/dev/null", "w", stderr))
			return;
	} else {
		fputs(buf, stdout);
		fflush(stdout);
	}
}

static int do_export(const char *devpath, const struct opts *o)
{
	struct export e = { 0 };
	struct blk b = { .fd = -1 };
	struct se_dev dev = { .be = &blk_backend, .ctx = &b };
	struct ring r = { .fd = -1, .map = MAP_FAILED };
	char buf[512], core[PATH_MAX], tpg[PATH_MAX], p[PATH_MAX + 64], uio[64];
	uint64_t bytes;
	unsigned int pbs, steps = 0;
	bool claimed = false, thread = false;
	sigset_t sigs;
	int sig, fd, rc = 1;

	if (strpbrk(devpath, ",'\n") || strlen(devpath) > 200) {
		msg("%s: a device path of at most 200 characters, without a comma or a quote, please",
		    devpath);
		return 2;
	}
	{
		const char *n = o->name ? o->name : strrchr(devpath, '/') ?
				strrchr(devpath, '/') + 1 : devpath;

		if (!fmt(e.name, sizeof(e.name), "%s", n) || !name_ok(n)) {
			msg("%s: not a name for an export (letters, digits, '_-.', under 64, not ending in .tmp): use --name", n);
			return 2;
		}
	}
	snprintf(e.dev, sizeof(e.dev), "%s", devpath);
	e.pid = getpid();

	/* the name, claimed: one export of it at a time */
	mkdir(STATE_DIR, 0755);
	state_path(e.name, p, sizeof(p));
	fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		if (errno == EEXIST)
			msg("%s: exported already, or its remains are (smr-scsi --stop %s)", e.name, e.name);
		else
			msg("%s: %s", p, strerror(errno));
		return 1;
	}
	close(fd);
	claimed = true;

	/* the drive: O_EXCL, so no file system mounts it behind our back */
	b.fd = open(devpath, O_RDWR | O_DIRECT | O_EXCL | O_CLOEXEC);
	if (b.fd < 0) {
		msg("%s: %s%s", devpath, strerror(errno),
		    errno == EBUSY ? " (mounted, or open exclusively by another)" : "");
		goto out;
	}
	if (ioctl(b.fd, BLKSSZGET, &b.lbs) || ioctl(b.fd, BLKPBSZGET, &pbs) ||
	    ioctl(b.fd, BLKGETSIZE64, &bytes)) {
		msg("%s: not a block device: %s", devpath, strerror(errno));
		goto out;
	}
	dev.lbs = b.lbs;
	dev.nr_lbas = bytes / b.lbs;
	while ((b.lbs << dev.pbs_exp) < pbs)
		dev.pbs_exp++;
	dev.model = SE_DISK;
	if (!queue_attr(b.fd, "zoned", buf, sizeof(buf)) && !strcmp(buf, "host-managed")) {
		uint32_t zsect = 0;
		struct blk_zone_report *rep;
		int n;

		dev.model = SE_ZBC_HM;
		if (ioctl(b.fd, BLKGETZONESZ, &zsect) || !zsect) {
			msg("%s: host-managed but no zone size: %s", devpath, strerror(errno));
			goto out;
		}
		dev.zone_lbas = zsect / (b.lbs / 512);
		if (!queue_attr(b.fd, "max_open_zones", buf, sizeof(buf)))
			dev.max_open = strtoul(buf, NULL, 10);
		/*
		 * Below the device's own limit, the export keeps its own
		 * (scsi-emul closes implicitly open zones for room); above it,
		 * the device would refuse opens the disk reports as allowed.
		 */
		if (o->max_open >= 0 && dev.max_open &&
		    (!o->max_open || (unsigned int)o->max_open > dev.max_open)) {
			msg("--max-open %d: above the device's own limit of %u open zones "
			    "(queue/max_open_zones); at most %u", o->max_open, dev.max_open,
			    dev.max_open);
			rc = 2;
			goto out;
		}
		if (o->max_open >= 0)
			dev.max_open = o->max_open;
		/* what ZBC cannot say: a zone capacity below the zone size
		 * (ZNS has it, ZBC-2 not), and a limit on active zones */
		if (!queue_attr(b.fd, "max_active_zones", buf, sizeof(buf)) && strtoul(buf, NULL, 10)) {
			msg("%s: max_active_zones %s: a ZBC disk has no such limit; "
			    "export a drive without max_active", devpath, buf);
			goto out;
		}
		/* every zone, a batch at a time */
		rep = calloc(1, sizeof(*rep) + 256 * sizeof(struct blk_zone));
		if (!rep)
			goto out;
		for (uint64_t sect = 0; sect < bytes / 512; ) {
			rep->sector = sect;
			rep->nr_zones = 256;
			n = ioctl(b.fd, BLKREPORTZONE, rep) ? -1 : (int)rep->nr_zones;
			if (n <= 0) {
				msg("%s: cannot report its zones from sector %" PRIu64, devpath, sect);
				free(rep);
				goto out;
			}
			for (int i = 0; i < n; i++) {
				struct blk_zone *k = &rep->zones[i];

				if ((rep->flags & BLK_ZONE_REP_CAPACITY) && k->capacity != k->len) {
					msg("%s: zone at sector %llu: capacity %llu of %llu sectors; a ZBC "
					    "disk's zones are writable to their end: export a drive "
					    "without zone_capacity", devpath, (unsigned long long)k->start,
					    (unsigned long long)k->capacity, (unsigned long long)k->len);
					free(rep);
					goto out;
				}
			}
			sect = rep->zones[n - 1].start + rep->zones[n - 1].len;
		}
		free(rep);
	} else if (!queue_attr(b.fd, "zoned", buf, sizeof(buf)) && strcmp(buf, "none")) {
		msg("%s: zoned \"%s\": only host-managed and not zoned drives", devpath, buf);
		goto out;
	} else {
		/* a dm-smr drive-managed drive says so in its table */
		char cmd[PATH_MAX + 64];
		FILE *f;

		fmt(cmd, sizeof(cmd), "dmsetup table '%s' 2>/dev/null", devpath);
		f = popen(cmd, "r");
		if (f) {
			if (fgets(buf, sizeof(buf), f) && strstr(buf, " smr ") && strstr(buf, "drive-managed"))
				dev.model = SE_DISK_DM;
			pclose(f);
		}
	}
	dev.wce = !queue_attr(b.fd, "write_cache", buf, sizeof(buf)) && !strcmp(buf, "write back");
	dev.rpm = o->rpm;
	dev.max_xfer = MAX_XFER_BYTES / b.lbs;
	snprintf(dev.product, sizeof(dev.product), "%s",
		 dev.model == SE_ZBC_HM ? "HM-SMR" : dev.model == SE_DISK_DM ? "DM-SMR" : "disk");
	dev.naa = (0x3ull << 60) | (fnv1a(e.name) >> 4);
	snprintf(dev.serial, sizeof(dev.serial), "%016" PRIx64, fnv1a(e.name));

	if (lio_ready())
		goto out;
	/* the backstore, in the first free user_N */
	for (e.hba = 0; ; e.hba++) {
		if (e.hba == 1024) {
			msg("no free %s/core/user_N below 1024", CFS);
			goto out;
		}
		fmt(core, sizeof(core), CFS "/core/user_%u", e.hba);
		if (!mkdir(core, 0755))
			break;
		if (errno != EEXIST) {
			msg("%s: %s", core, strerror(errno));
			goto out;
		}
	}
	steps |= S_HBA;
	snprintf(e.wwn, sizeof(e.wwn), "naa.5001405%09" PRIx64, (uint64_t)(fnv1a(e.name) & 0xfffffffffull));
	paths(&e, core, tpg, sizeof(core));
	if (mkdir(core, 0755)) {
		msg("%s: %s", core, strerror(errno));
		goto out;
	}
	steps |= S_CORE;
	if (state_write(&e))
		msg("cannot write %s/%s: %s (--stop will not find it)", STATE_DIR, e.name, strerror(errno));
	if (!fmt(buf, sizeof(buf), "dev_config=smr/%s,dev_size=%" PRIu64 ",hw_block_size=%u,"
		 "hw_max_sectors=%u,nl_reply_supported=-1", devpath, dev.nr_lbas * b.lbs, b.lbs,
		 dev.max_xfer)) {
		msg("%s: the backstore's control string is too long", devpath);
		goto out;
	}
	fmt(p, sizeof(p), "%s/control", core);
	if (write_file(p, buf)) {
		msg("%s: %s: %s", p, buf, strerror(errno));
		goto out;
	}
	/*
	 * No time limit in TCMU: it fails a command still on the ring after
	 * cmd_time_out (30 s), to the host, though this process executes it
	 * later anyway (one thread serves the ring, and a command waits
	 * behind a slow one, a cleaning say): a write the host was told
	 * failed would then land. The sd driver's own time-out still runs;
	 * its abort waits for the command to end here.
	 */
	fmt(p, sizeof(p), "%s/attrib/cmd_time_out", core);
	if (write_file(p, "0")) {
		msg("%s: %s", p, strerror(errno));
		goto out;
	}
	fmt(p, sizeof(p), "%s/enable", core);
	if (write_file(p, "1")) {
		msg("%s: %s", p, strerror(errno));
		goto out;
	}
	if (uio_find(&e, uio, sizeof(uio), &r.size)) {
		msg("no UIO device for %s", core);
		goto out;
	}
	r.fd = open(uio, O_RDWR | O_CLOEXEC);
	if (r.fd < 0) {
		msg("%s: %s", uio, strerror(errno));
		goto out;
	}
	r.map = mmap(NULL, r.size, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	if (r.map == MAP_FAILED) {
		msg("%s: mmap: %s", uio, strerror(errno));
		goto out;
	}
	if (((struct tcmu_mailbox *)r.map)->version != TCMU_MAILBOX_VERSION)
		msg("%s: mailbox version %u (this handler knows %u)", uio,
		    ((struct tcmu_mailbox *)r.map)->version, TCMU_MAILBOX_VERSION);
	r.dev = &dev;
	if (pthread_create(&r.thread, NULL, ring_thread, &r)) {
		msg("cannot start the command thread");
		goto out;
	}
	thread = true;

	/* the local target: linking the LUN scans it, which sends the
	 * first commands (served by the thread) */
	fmt(p, sizeof(p), CFS "/loopback/%s", e.wwn);
	if (mkdir(p, 0755)) {
		msg("%s: %s", p, strerror(errno));
		goto out;
	}
	steps |= S_WWN;
	if (mkdir(tpg, 0755)) {
		msg("%s: %s", tpg, strerror(errno));
		goto out;
	}
	steps |= S_TPG;
	fmt(p, sizeof(p), "%s/nexus", tpg);
	snprintf(buf, sizeof(buf), "naa.5001405f%08" PRIx64, fnv1a(e.name) >> 32);
	if (write_file(p, buf)) {
		msg("%s: %s", p, strerror(errno));
		goto out;
	}
	steps |= S_NEXUS;
	fmt(p, sizeof(p), "%s/lun/lun_0", tpg);
	if (mkdir(p, 0755)) {
		msg("%s: %s", p, strerror(errno));
		goto out;
	}
	steps |= S_LUN;
	fmt(p, sizeof(p), "%s/lun/lun_0/%s", tpg, e.name);
	if (symlink(core, p)) {
		msg("%s: %s", p, strerror(errno));
		goto out;
	}
	steps |= S_LINK;
	if (find_sd(tpg, e.sd, sizeof(e.sd), 30)) {
		msg("no sd device appeared for %s in 30 s", e.name);
		goto out;
	}
	state_write(&e);
	ready("%s: /dev/%s\n", e.name, e.sd);

	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigwait(&sigs, &sig);
	rc = 0;
out:
	if (daemon_pipe >= 0)
		ready("error\n");
	lio_teardown(&e, steps);	/* with the thread still serving */
	if (thread) {
		atomic_store(&r.stop, true);
		pthread_join(r.thread, NULL);
	}
	if (r.map != MAP_FAILED)
		munmap(r.map, r.size);
	if (r.fd >= 0)
		close(r.fd);
	core_teardown(&e, steps);
	if (claimed) {
		state_path(e.name, p, sizeof(p));
		unlink(p);
	}
	if (b.fd >= 0)
		close(b.fd);
	if (thread)
		fprintf(stderr, "%s: %s: stopped after %llu commands (%llu with CHECK CONDITION)\n",
			prog, e.name, r.cmds, r.errors);
	return rc;
}

/* ------------------------------------------------------ stop, list --- */

/* The export's process is there: pid alive and still an smr-scsi (after
 * a crash and a reboot, or a long while, the number may be another's). */
static bool alive(pid_t pid)
{
	char p[64], comm[64];

	if (pid <= 0 || (kill(pid, 0) && errno != EPERM))
		return false;
	snprintf(p, sizeof(p), "/proc/%d/comm", (int)pid);
	return !read_file(p, comm, sizeof(comm)) && !strcmp(comm, "smr-scsi");
}

static int do_stop(const char *name)
{
	struct export e;
	char p[PATH_MAX];

	if (!name_ok(name)) {
		msg("%s: not an export's name", name);
		return 2;
	}
	if (state_read(name, &e)) {
		msg("%s: no such export (smr-scsi --list)", name);
		return 1;
	}
	if (alive(e.pid)) {
		kill(e.pid, SIGTERM);
		for (int i = 0; i < 300 && alive(e.pid); i++)
			usleep(100000);
		if (alive(e.pid)) {
			msg("%s: pid %d still there after 30 s", name, (int)e.pid);
			return 1;
		}
		state_path(name, p, sizeof(p));
		if (access(p, F_OK))
			return 0;
	}
	/* its process is gone: clear what it left */
	msg("%s: pid %d is gone; removing what it left in configfs", name, (int)e.pid);
	lio_teardown(&e, S_ALL);
	core_teardown(&e, S_ALL);
	state_path(name, p, sizeof(p));
	unlink(p);
	return 0;
}

static int do_list(void)
{
	DIR *d = opendir(STATE_DIR);
	struct dirent *de;
	struct export e;

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		/* name_ok(): not a temporary file of state_write() either */
		if (de->d_name[0] == '.' || !name_ok(de->d_name) || state_read(de->d_name, &e))
			continue;
		printf("%s %s /dev/%s pid %d%s\n", e.name, e.dev, e.sd[0] ? e.sd : "-",
		       (int)e.pid, alive(e.pid) ? "" : " (gone: smr-scsi --stop)");
	}
	closedir(d);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: smr-scsi [--name NAME] [--rpm N] [--max-open N] [--daemon] [--log FILE] DEVICE\n"
		"       smr-scsi --stop NAME\n"
		"       smr-scsi --list\n"
		"       smr-scsi --version\n"
		"Export DEVICE (a dm-smr, dm-caveat or any block device) as a local SCSI\n"
		"disk through LIO (TCMU and tcm_loop) until SIGTERM or SIGINT; it prints\n"
		"\"NAME: /dev/sdX\" when the disk is there. A host-managed device is a ZBC\n"
		"host-managed disk. --daemon: return once the disk is there.\n"
		"  --name NAME      the export's name (default: DEVICE's file name)\n"
		"  --rpm N          rotation rate in VPD page 0xb1 (default 7200; 1: not\n"
		"                   rotating; 0: not reported; else 1025 to 65534)\n"
		"  --max-open N     open zone limit reported and kept (default: DEVICE's)\n"
		"  --log FILE       messages (and each command that got CHECK CONDITION)\n"
		"                   to FILE, appended; with --daemon they go nowhere else\n");
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "rpm", required_argument, NULL, 'r' },
		{ "max-open", required_argument, NULL, 'm' },
		{ "daemon", no_argument, NULL, 'd' },
		{ "log", required_argument, NULL, 'L' },
		{ "stop", required_argument, NULL, 's' },
		{ "list", no_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct opts o = { .rpm = 7200, .max_open = -1 };
	const char *stop = NULL;
	bool list = false;
	char *end;
	sigset_t sigs;
	int c;

	while ((c = getopt_long(argc, argv, "n:dh", lo, NULL)) != -1) {
		switch (c) {
		case 'n': o.name = optarg; break;
		case 'r':
			errno = 0;
			o.rpm = strtoul(optarg, &end, 10);
			/* SBC-4's MEDIUM ROTATION RATE: 2-400h and FFFFh are reserved */
			if (errno || *end || (o.rpm > 1 && o.rpm < 1025) || o.rpm > 65534) {
				msg("--rpm %s: 1 (not rotating), 0 (not reported), or a rate from 1025 to 65534 rpm", optarg);
				return 2;
			}
			break;
		case 'm':
			errno = 0;
			o.max_open = strtol(optarg, &end, 10);
			if (errno || *end || o.max_open < 0) {
				msg("--max-open %s: a number, 0 for no limit", optarg);
				return 2;
			}
			break;
		case 'd': o.daemon = true; break;
		case 'L': o.log = optarg; log_kept = true; break;
		case 's': stop = optarg; break;
		case 'l': list = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("smr-scsi %s\n", SMR_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (list)
		return do_list();
	if (stop)
		return do_stop(stop);
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	/* a relative path still names the device after --daemon's chdir
	 * (joined to the working directory, symlinks kept: /dev/mapper/NAME
	 * gives the export its name) */
	if (argv[optind][0] != '/') {
		char cwd[PATH_MAX], *abs;

		if (!getcwd(cwd, sizeof(cwd)) || asprintf(&abs, "%s/%s", cwd, argv[optind]) < 0) {
			msg("%s: %s", argv[optind], strerror(errno));
			return 1;
		}
		argv[optind] = abs;
	}
	if (o.log) {
		int fd = open(o.log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

		if (fd < 0 || dup2(fd, STDERR_FILENO) < 0) {
			msg("--log %s: %s", o.log, strerror(errno));
			return 1;
		}
		close(fd);
		setvbuf(stderr, NULL, _IOLBF, 0);
	}
	/* a gone reader of stdout or of the daemon's pipe is no reason to die
	 * with configfs set up: write() says EPIPE */
	signal(SIGPIPE, SIG_IGN);
	/* SIGTERM and friends are taken by sigwait, in every thread blocked */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	if (o.daemon) {
		int fds[2];
		pid_t pid;
		char buf[512];
		ssize_t n;

		if (pipe2(fds, O_CLOEXEC)) {
			msg("pipe: %s", strerror(errno));
			return 1;
		}
		pid = fork();
		if (pid < 0) {
			msg("fork: %s", strerror(errno));
			return 1;
		}
		if (pid > 0) {
			/* Ctrl-C while it sets up stops the waiting */
			pthread_sigmask(SIG_UNBLOCK, &sigs, NULL);
			close(fds[1]);
			n = read(fds[0], buf, sizeof(buf) - 1);
			if (n <= 0 || !strncmp(buf, "error", 5)) {
				waitpid(pid, NULL, 0);
				if (o.log)
					msg("the export failed: %s says why", o.log);
				return 1;
			}
			buf[n] = 0;
			fputs(buf, stdout);
			return 0;
		}
		close(fds[0]);
		daemon_pipe = fds[1];
		setsid();
		if (chdir("/"))
			return 1;
		/* the caller's stdout may be a pipe it reads to the end, as
		 * $(smr-scsi --daemon ...) does: let it go (and stderr once
		 * the disk is there, in ready()) */
		if (!freopen("/dev/null", "r", stdin) || !freopen("/dev/null", "w", stdout))
			return 1;
	}
	return do_export(argv[optind], &o);
}
