// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr generic netlink family "dm-smr": a dump of every smr device with
 * its counters, and events on the "events" multicast group. The protocol
 * is in uapi/dm-smr-netlink.h and docs/smrd.rst.
 *
 * Events are sent from the I/O and cleaning paths, so sending never
 * sleeps and never fails the caller: nobody listening costs one check
 * (genl_has_listeners), and an event that is over the rate limit, cannot
 * be allocated (GFP_ATOMIC) or finds a listener's buffer full is counted
 * as dropped. The rate limit covers the whole family (all devices).
 *
 * The registry holds one entry per target with the device's name as it
 * was when the table was loaded (the dm name lookup sleeps, events must
 * not): a device renamed with "dmsetup rename" keeps its old name here
 * until its table is loaded again. Events find the entry under RCU.
 */
#include <linux/module.h>
#include <linux/jiffies.h>
#include <linux/kdev_t.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <net/genetlink.h>

#include "dm-smr.h"
#include "dm-smr-nl.h"
#include "smr-genl.h"
#include "uapi/dm-smr-netlink.h"

static unsigned int event_rate = 1000;
module_param(event_rate, uint, 0644);
MODULE_PARM_DESC(event_rate,
		 "netlink events per second, all devices together (0 = none)");

/* Registered targets: list changes under smr_nl_lock, readers use RCU. */
struct smr_nl_dev {
	struct list_head node;
	struct rcu_head rcu;
	struct smr_table *t;
	struct smr_drive *drive;	/* the drive events come from */
	const struct smr_nl_counters *counters;
	dev_t devt;
	char name[DM_NAME_LEN];
};

static LIST_HEAD(smr_nl_devs);
static DEFINE_MUTEX(smr_nl_lock);

static struct genl_family smr_genl_family;
static struct smr_genl_events smr_nl_events;

enum { SMR_MCGRP_EVENTS };

static const struct genl_multicast_group smr_nl_mcgrps[] = {
	[SMR_MCGRP_EVENTS] = { .name = SMR_GENL_MCGRP_EVENTS },
};

static const struct nla_policy smr_nl_get_policy[SMR_A_MAX + 1] = {
	[SMR_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = SMR_NL_NAME_MAX - 1 },
};

static struct netlink_range_validation smr_nl_rate_range = {
	.min = 0,
	.max = SMR_NL_RATE_MAX,
};

static const struct nla_policy smr_nl_set_policy[SMR_A_MAX + 1] = {
	[SMR_A_EVENT_RATE] = NLA_POLICY_FULL_RANGE(NLA_U32, &smr_nl_rate_range),
	[SMR_A_RESET_COUNTERS] = { .type = NLA_FLAG },
};

/* ------------------------------------------------------------ dumps --- */

static int smr_nl_put_dev(struct sk_buff *skb, struct smr_nl_dev *d)
{
	if (nla_put_string(skb, SMR_A_DEV_NAME, d->name) ||
	    nla_put_u32(skb, SMR_A_DEV_MAJOR, MAJOR(d->devt)) ||
	    nla_put_u32(skb, SMR_A_DEV_MINOR, MINOR(d->devt)))
		return -EMSGSIZE;
	return 0;
}

static int smr_nl_put_u64s(struct sk_buff *skb, int nest_type,
			   const u64 *v, unsigned int n, int first, int pad)
{
	struct nlattr *nest = nla_nest_start(skb, nest_type);
	unsigned int i;

	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < n; i++)
		if (nla_put_u64_64bit(skb, first + i, v[i], pad))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

static int smr_nl_put_hm(struct sk_buff *skb, struct smr_nl_dev *d)
{
	struct smr_hm_snap s;
	u64 v[SMR_HM_MAX - SMR_HM_NR_ZONES + 1];

	d->counters->hm(d->t, &s);
	v[SMR_HM_NR_ZONES - SMR_HM_NR_ZONES] = s.nr_zones;
	v[SMR_HM_CONV_ZONES - SMR_HM_NR_ZONES] = s.conv_zones;
	v[SMR_HM_IMP_OPEN - SMR_HM_NR_ZONES] = s.imp_open;
	v[SMR_HM_EXP_OPEN - SMR_HM_NR_ZONES] = s.exp_open;
	v[SMR_HM_CLOSED - SMR_HM_NR_ZONES] = s.closed;
	v[SMR_HM_FULL - SMR_HM_NR_ZONES] = s.full;
	v[SMR_HM_READONLY - SMR_HM_NR_ZONES] = s.readonly;
	v[SMR_HM_OFFLINE - SMR_HM_NR_ZONES] = s.offline;
	v[SMR_HM_WRITES - SMR_HM_NR_ZONES] = s.writes;
	v[SMR_HM_WRITE_SECTORS - SMR_HM_NR_ZONES] = s.write_sectors;
	v[SMR_HM_READS - SMR_HM_NR_ZONES] = s.reads;
	v[SMR_HM_READ_SECTORS - SMR_HM_NR_ZONES] = s.read_sectors;
	v[SMR_HM_RESETS - SMR_HM_NR_ZONES] = s.resets;
	v[SMR_HM_FINISHES - SMR_HM_NR_ZONES] = s.finishes;
	v[SMR_HM_OPENS - SMR_HM_NR_ZONES] = s.opens;
	v[SMR_HM_CLOSES - SMR_HM_NR_ZONES] = s.closes;
	v[SMR_HM_IMP_CLOSES - SMR_HM_NR_ZONES] = s.imp_closes;
	v[SMR_HM_WP_ERRORS - SMR_HM_NR_ZONES] = s.wp_errors;
	v[SMR_HM_ERRORS - SMR_HM_NR_ZONES] = s.errors;
	v[SMR_HM_COMMITS - SMR_HM_NR_ZONES] = s.commits;
	v[SMR_HM_MEM_BYTES - SMR_HM_NR_ZONES] = s.mem_bytes;
	v[SMR_HM_MODEL_BUSY_MS - SMR_HM_NR_ZONES] = s.model_busy_ms;
	v[SMR_HM_MODEL_LAG_MS - SMR_HM_NR_ZONES] = s.model_lag_ms;
	v[SMR_HM_BAD_READ_ERRORS - SMR_HM_NR_ZONES] = s.faults.bad_reads;
	v[SMR_HM_BAD_WRITE_ERRORS - SMR_HM_NR_ZONES] = s.faults.bad_writes;
	v[SMR_HM_BAD_REMAPS - SMR_HM_NR_ZONES] = s.faults.remaps;
	v[SMR_HM_TRANSIENT_ERRORS - SMR_HM_NR_ZONES] = s.faults.transient;
	v[SMR_HM_DELAYED_IOS - SMR_HM_NR_ZONES] = s.faults.delayed;
	v[SMR_HM_POWER - SMR_HM_NR_ZONES] = s.power;
	v[SMR_HM_POWER_LEFT - SMR_HM_NR_ZONES] = s.power_left;
	return smr_nl_put_u64s(skb, SMR_A_HM_STATS, v, ARRAY_SIZE(v),
			       SMR_HM_NR_ZONES, SMR_HM_PAD);
}

static int smr_nl_put_dm(struct sk_buff *skb, struct smr_nl_dev *d)
{
	struct smr_dm_snap s;
	u64 v[SMR_DM_MAX - SMR_DM_NR_BANDS + 1];
	u64 *p = v;

	d->counters->dm(d->t, &s);
	/* In SMR_DM_* order, which is the status field order. */
	*p++ = s.nr_bands;
	*p++ = s.band_sectors;
	*p++ = s.cache_used;
	*p++ = s.cache_total;
	*p++ = s.cache_live;
	*p++ = s.index_extents;
	*p++ = s.index_bytes;
	*p++ = s.dirty_bands;
	*p++ = s.rmw_bg;
	*p++ = s.rmw_fg;
	*p++ = s.rmw_manual;
	*p++ = s.bg_aborts;
	*p++ = s.clean_read_sectors;
	*p++ = s.clean_write_sectors;
	*p++ = s.clean_ms_bg;
	*p++ = s.clean_ms_fg;
	*p++ = s.clean_ms_since_busy;
	*p++ = s.host_read_sectors;
	*p++ = s.host_write_sectors;
	*p++ = s.cache_write_sectors;
	*p++ = s.bypass_write_sectors;
	*p++ = s.wa_milli;
	*p++ = s.state;
	*p++ = s.policy;
	*p++ = s.commits;
	*p++ = s.errors;
	*p++ = s.mem_bytes;
	*p++ = s.model_busy_ms;
	*p++ = s.model_clean_ms;
	*p++ = s.model_lag_ms;
	*p++ = s.faults.bad_reads;
	*p++ = s.faults.bad_writes;
	*p++ = s.faults.remaps;
	*p++ = s.faults.transient;
	*p++ = s.faults.delayed;
	*p++ = s.clean_timeouts;
	*p++ = s.power;
	*p++ = s.power_left;
	BUILD_BUG_ON(SMR_DM_MAX - SMR_DM_NR_BANDS + 1 != ARRAY_SIZE(v));
	return smr_nl_put_u64s(skb, SMR_A_DM_STATS, v, ARRAY_SIZE(v),
			       SMR_DM_NR_BANDS, SMR_DM_PAD);
}

/* Lock held. */
static int smr_nl_fill_dev(struct sk_buff *skb, struct smr_nl_dev *d,
			   u32 portid, u32 seq, int flags)
{
	enum smr_mode mode = d->t->mode;
	void *hdr;
	int ret;

	hdr = genlmsg_put(skb, portid, seq, &smr_genl_family, flags,
			  SMR_CMD_GET_DEV);
	if (!hdr)
		return -EMSGSIZE;
	ret = smr_nl_put_dev(skb, d);
	if (!ret && nla_put_u8(skb, SMR_A_MODE,
			       mode == SMR_MODE_DRIVE_MANAGED ?
			       SMR_NL_MODE_DRIVE_MANAGED :
			       SMR_NL_MODE_HOST_MANAGED))
		ret = -EMSGSIZE;
	if (!ret)
		ret = mode == SMR_MODE_DRIVE_MANAGED ?
			smr_nl_put_dm(skb, d) : smr_nl_put_hm(skb, d);
	if (ret) {
		genlmsg_cancel(skb, hdr);
		return ret;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* cb->args[0]: devices already sent. */
static int smr_nl_get_dev_dumpit(struct sk_buff *skb,
				 struct netlink_callback *cb)
{
	struct smr_nl_dev *d;
	long idx = 0, start = cb->args[0];
	int ret = 0;

	mutex_lock(&smr_nl_lock);
	list_for_each_entry(d, &smr_nl_devs, node) {
		if (idx++ < start)
			continue;
		ret = smr_nl_fill_dev(skb, d, NETLINK_CB(cb->skb).portid,
				      cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (ret) {
			idx--;
			break;
		}
	}
	mutex_unlock(&smr_nl_lock);
	cb->args[0] = idx;
	/* A device too big for an empty message would loop forever. */
	if (ret && idx == start)
		return ret;
	return skb->len;
}

static int smr_nl_get_dev_doit(struct sk_buff *skb, struct genl_info *info)
{
	const char *name;
	struct smr_nl_dev *d;
	struct sk_buff *msg;
	int ret = -ENODEV;

	if (!info->attrs[SMR_A_DEV_NAME]) {
		GENL_SET_ERR_MSG(info, "a device name is required (or dump all)");
		return -EINVAL;
	}
	name = nla_data(info->attrs[SMR_A_DEV_NAME]);
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&smr_nl_lock);
	list_for_each_entry(d, &smr_nl_devs, node) {
		if (strcmp(d->name, name))
			continue;
		ret = smr_nl_fill_dev(msg, d, info->snd_portid, info->snd_seq, 0);
		break;
	}
	mutex_unlock(&smr_nl_lock);
	if (ret) {
		if (ret == -ENODEV)
			GENL_SET_ERR_MSG(info, "no smr device by that name");
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

static int smr_nl_get_stats_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &smr_genl_family, 0,
				SMR_CMD_GET_STATS);
	if (!hdr ||
	    nla_put_u32(msg, SMR_A_EVENT_RATE, READ_ONCE(event_rate)) ||
	    nla_put_u64_64bit(msg, SMR_A_EVENTS_SENT,
			      atomic64_read(&smr_nl_events.sent), SMR_A_PAD) ||
	    nla_put_u64_64bit(msg, SMR_A_EVENTS_DROPPED,
			      atomic64_read(&smr_nl_events.dropped), SMR_A_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int smr_nl_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	if (!info->attrs[SMR_A_EVENT_RATE] &&
	    !info->attrs[SMR_A_RESET_COUNTERS]) {
		GENL_SET_ERR_MSG(info, "nothing to set");
		return -EINVAL;
	}
	if (info->attrs[SMR_A_EVENT_RATE])
		WRITE_ONCE(event_rate,
			   nla_get_u32(info->attrs[SMR_A_EVENT_RATE]));
	if (info->attrs[SMR_A_RESET_COUNTERS])
		smr_genl_events_reset(&smr_nl_events);
	return 0;
}

static const struct genl_ops smr_nl_ops[] = {
	{
		.cmd = SMR_CMD_GET_DEV,
		.doit = smr_nl_get_dev_doit,
		.dumpit = smr_nl_get_dev_dumpit,
		.policy = smr_nl_get_policy,
		.maxattr = SMR_A_MAX,
	},
	{
		.cmd = SMR_CMD_GET_STATS,
		.doit = smr_nl_get_stats_doit,
		.policy = smr_nl_get_policy,
		.maxattr = SMR_A_MAX,
	},
	{
		.cmd = SMR_CMD_SET,
		.doit = smr_nl_set_doit,
		.policy = smr_nl_set_policy,
		.maxattr = SMR_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family smr_genl_family __ro_after_init = {
	.name = SMR_GENL_NAME,
	.version = SMR_GENL_VERSION,
	.maxattr = SMR_A_MAX,
	.module = THIS_MODULE,
	.ops = smr_nl_ops,
	.n_ops = ARRAY_SIZE(smr_nl_ops),
	.resv_start_op = SMR_CMD_GET_DEV,
	.mcgrps = smr_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(smr_nl_mcgrps),
};

/* ----------------------------------------------------------- events --- */

/*
 * Start an event message from drive @src, or NULL (nobody listens: not
 * counted; over the rate, no memory, or no table of @src registered:
 * counted as dropped).
 */
static struct sk_buff *smr_nl_ev_new(struct smr_drive *src, u8 cmd,
				     void **hdr)
{
	struct smr_nl_dev *d;
	struct sk_buff *skb;
	int ret = -ENODEV;

	skb = smr_genl_event_new(&smr_nl_events, cmd, hdr);
	if (!skb)
		return NULL;
	rcu_read_lock();
	list_for_each_entry_rcu(d, &smr_nl_devs, node) {
		if (d->drive == src) {
			ret = smr_nl_put_dev(skb, d);
			break;
		}
	}
	rcu_read_unlock();
	if (ret) {
		smr_genl_event_send(&smr_nl_events, skb, *hdr, ret);
		return NULL;
	}
	return skb;
}

static void smr_nl_ev_send(struct sk_buff *skb, void *hdr, int err)
{
	smr_genl_event_send(&smr_nl_events, skb, hdr, err);
}

void smr_nl_clean_start(struct smr_drive *src, u32 band,
			enum smr_clean_reason r)
{
	struct sk_buff *skb;
	void *hdr;

	skb = smr_nl_ev_new(src, SMR_CMD_EV_CLEAN_START, &hdr);
	if (skb)
		smr_nl_ev_send(skb, hdr,
			       nla_put_u32(skb, SMR_A_BAND, band) ||
			       nla_put_u8(skb, SMR_A_REASON, r));
}

void smr_nl_clean_done(struct smr_drive *src, u32 band,
		       enum smr_clean_reason r, u64 read_bytes,
		       u64 write_bytes, u64 duration_us)
{
	struct sk_buff *skb;
	void *hdr;

	skb = smr_nl_ev_new(src, SMR_CMD_EV_CLEAN_DONE, &hdr);
	if (skb)
		smr_nl_ev_send(skb, hdr,
			       nla_put_u32(skb, SMR_A_BAND, band) ||
			       nla_put_u8(skb, SMR_A_REASON, r) ||
			       nla_put_u64_64bit(skb, SMR_A_READ_BYTES,
						 read_bytes, SMR_A_PAD) ||
			       nla_put_u64_64bit(skb, SMR_A_WRITE_BYTES,
						 write_bytes, SMR_A_PAD) ||
			       nla_put_u64_64bit(skb, SMR_A_DURATION_US,
						 duration_us, SMR_A_PAD));
}

void smr_nl_cache_level(struct smr_drive *src, unsigned int pct)
{
	struct sk_buff *skb;
	void *hdr;

	skb = smr_nl_ev_new(src, SMR_CMD_EV_CACHE_LEVEL, &hdr);
	if (skb)
		smr_nl_ev_send(skb, hdr, nla_put_u32(skb, SMR_A_CACHE_PCT, pct));
}

void smr_nl_idle_clean(struct smr_drive *src, u64 clean_ms)
{
	struct sk_buff *skb;
	void *hdr;

	skb = smr_nl_ev_new(src, SMR_CMD_EV_IDLE_CLEAN, &hdr);
	if (skb)
		smr_nl_ev_send(skb, hdr,
			       nla_put_u64_64bit(skb, SMR_A_CLEAN_MS, clean_ms,
						 SMR_A_PAD));
}

void smr_nl_zone_error(struct smr_drive *src, u32 zone, u8 cond,
		       sector_t sector, u32 nr_sectors, sector_t wp)
{
	struct sk_buff *skb;
	void *hdr;

	skb = smr_nl_ev_new(src, SMR_CMD_EV_ZONE_ERROR, &hdr);
	if (skb)
		smr_nl_ev_send(skb, hdr,
			       nla_put_u32(skb, SMR_A_ZONE, zone) ||
			       nla_put_u8(skb, SMR_A_ZONE_COND, cond) ||
			       nla_put_u64_64bit(skb, SMR_A_SECTOR, sector,
						 SMR_A_PAD) ||
			       nla_put_u32(skb, SMR_A_SECTORS, nr_sectors) ||
			       nla_put_u64_64bit(skb, SMR_A_ZONE_WP, wp,
						 SMR_A_PAD));
}

void smr_nl_commit_error(struct smr_drive *src, int err)
{
	struct sk_buff *skb;
	void *hdr;

	skb = smr_nl_ev_new(src, SMR_CMD_EV_COMMIT_ERROR, &hdr);
	if (skb)
		smr_nl_ev_send(skb, hdr, nla_put_u32(skb, SMR_A_ERRNO, -err));
}

/* ---------------------------------------------------- registration --- */

/*
 * End of a successful ctr (process context). Without memory for the entry
 * the device works but is missing from dumps and sends no events.
 */
void smr_nl_register(struct smr_table *t, struct smr_drive *drive,
		     const struct smr_nl_counters *c)
{
	struct smr_nl_dev *d;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d) {
		DMWARN("%s: no memory for the netlink registry; no events",
		       t->name);
		return;
	}
	d->t = t;
	d->drive = drive;
	d->counters = c;
	smr_genl_dev_name(t->ti, d->name, &d->devt);
	mutex_lock(&smr_nl_lock);
	list_add_tail_rcu(&d->node, &smr_nl_devs);
	mutex_unlock(&smr_nl_lock);
}

/* Start of dtr: no event of @t looks the entry up after this returns. */
void smr_nl_unregister(struct smr_table *t)
{
	struct smr_nl_dev *d, *found = NULL;

	mutex_lock(&smr_nl_lock);
	list_for_each_entry(d, &smr_nl_devs, node) {
		if (d->t == t) {
			found = d;
			list_del_rcu(&d->node);
			break;
		}
	}
	mutex_unlock(&smr_nl_lock);
	if (found)
		kfree_rcu(found, rcu);
}

int smr_nl_init(void)
{
	smr_genl_events_init(&smr_nl_events, &smr_genl_family,
			     SMR_MCGRP_EVENTS, &event_rate);
	return genl_register_family(&smr_genl_family);
}

/* Module exit: every target is gone (dm holds the module while one lives). */
void smr_nl_exit(void)
{
	WARN_ON_ONCE(!list_empty(&smr_nl_devs));
	genl_unregister_family(&smr_genl_family);
	/* kfree_rcu() callbacks of the entries run before the module goes. */
	rcu_barrier();
}

MODULE_ALIAS_GENL_FAMILY(SMR_GENL_NAME);
