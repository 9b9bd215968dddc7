/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Generic netlink scaffolding shared by the dm-smr and dm-caveat families
 * (common/smr-genl.c): the event rate limit with its sent and dropped
 * counters, multicast that never sleeps and never fails its caller, and
 * the name and device number a target is listed under.
 */
#ifndef SMR_GENL_H
#define SMR_GENL_H

#include <linux/atomic.h>
#include <linux/device-mapper.h>
#include <linux/spinlock.h>
#include <net/genetlink.h>

/* One per family; all its devices share the rate. */
struct smr_genl_events {
	struct genl_family *family;
	unsigned int group;		/* the events multicast group */
	unsigned int *rate;		/* events per second (module parameter) */
	spinlock_t lock;
	unsigned long begin;		/* jiffies: this second's start */
	unsigned int count;		/* events this second */
	atomic64_t sent;
	atomic64_t dropped;
};

void smr_genl_events_init(struct smr_genl_events *ev, struct genl_family *family,
			  unsigned int group, unsigned int *rate);
/*
 * Start an event: a new message with its genetlink header, or NULL when
 * nobody listens (not counted) or when it is over the rate or finds no
 * memory (counted as dropped). Any context; never sleeps.
 */
struct sk_buff *smr_genl_event_new(struct smr_genl_events *ev, u8 cmd,
				   void **hdr);
/* Multicast it, or with @err (a failed nla_put) drop it; counted either way. */
void smr_genl_event_send(struct smr_genl_events *ev, struct sk_buff *skb,
			 void *hdr, int err);
void smr_genl_events_reset(struct smr_genl_events *ev);

/*
 * The name (at table load: looking it up later sleeps, events must not)
 * and device number @ti's device is listed under. Process context.
 */
void smr_genl_dev_name(struct dm_target *ti, char *name, dev_t *devt);

/*
 * Module init and exit: a target's netlink family is registered before
 * the target (a device sends events from its first I/O) and unregistered
 * after it (the targets are gone by then: each holds the module).
 */
int smr_genl_register_target(struct target_type *tt,
			     int (*family_init)(void), void (*family_exit)(void));
void smr_genl_unregister_target(struct target_type *tt,
				void (*family_exit)(void));

#endif /* SMR_GENL_H */
