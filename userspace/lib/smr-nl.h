/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smr-nl: the dm-smr and dm-caveat generic netlink families from
 * userspace (libnl-genl-3): dumps, settings and events, each turned into
 * a struct rec (smr-util.h).
 */
#ifndef SMR_NL_H
#define SMR_NL_H

#include <stdint.h>

#include "smr-util.h"

enum { FAM_SMR, FAM_CAVEAT, NR_FAMS };

extern const char *const smrnl_family_name[NR_FAMS];

typedef int (*smrnl_rec_cb)(const struct rec *r, void *arg);

/* A request/response socket. */
struct smrnl {
	struct nl_sock *sk;
	int fam[NR_FAMS];	/* family id, or -1: module not loaded */
	char errmsg[256];	/* the kernel's extended ack message, if any */
};

int smrnl_open(struct smrnl *n);
void smrnl_close(struct smrnl *n);
/* Resolve the families again (a module may have been loaded since). */
void smrnl_resolve(struct smrnl *n);
/* Dump every device of @fam (or one, @name), calling @cb per device. */
int smrnl_dump(struct smrnl *n, int fam, const char *name,
	       smrnl_rec_cb cb, void *arg);
/* Family counters (events sent/dropped, rate) as a record. */
int smrnl_stats(struct smrnl *n, int fam, struct rec *r);
/* SET: @rate < 0 leaves the rate; @reset resets the event counters;
 * @clear_dev (caveat only) zeroes that device's counters. */
int smrnl_set(struct smrnl *n, int fam, int64_t rate, int reset,
	      const char *clear_dev);

/* An event socket: the "events" groups of both families, and nlctrl's
 * notifications so a module loaded later is picked up. */
struct smrnl_ev {
	struct nl_sock *sk;
	struct smrnl ctl;	/* resolves groups */
	int fam[NR_FAMS];
	int grp[NR_FAMS];
	smrnl_rec_cb cb;
	void *arg;
	int (*on_family)(int fam, int up, void *arg);	/* optional */
};

int smrnl_ev_open(struct smrnl_ev *e, smrnl_rec_cb cb, void *arg);
void smrnl_ev_close(struct smrnl_ev *e);
/* Join the groups of the families now loaded; returns how many. */
int smrnl_ev_subscribe(struct smrnl_ev *e);
int smrnl_ev_fd(struct smrnl_ev *e);
/* Read what is queued (non-blocking) and call the callbacks. */
int smrnl_ev_recv(struct smrnl_ev *e);
/* Events the socket lost because its buffer overflowed (ENOBUFS). */
extern uint64_t smrnl_ev_overruns;

/* A message for an errno from the families, telling what to do. */
const char *smrnl_strerror(int err);

#endif /* SMR_NL_H */
