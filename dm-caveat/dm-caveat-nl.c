// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat generic netlink family "dm-caveat": a dump of every caveat
 * device with its counters, a command to clear them, and live-data damage
 * events on the "events" multicast group. The protocol is in
 * uapi/dm-caveat-netlink.h and docs/smrd.rst.
 *
 * Damage events are sent from map(): sending never sleeps and never fails
 * the write. Nobody listening costs one check; an event over the rate
 * limit (all devices together), without memory (GFP_ATOMIC) or refused by
 * a full listener is counted as dropped.
 */
#include <linux/module.h>
#include <linux/jiffies.h>
#include <linux/kdev_t.h>
#include <linux/mutex.h>
#include <net/genetlink.h>

#include "dm-caveat-nl.h"
#include "smr-genl.h"
#include "uapi/dm-caveat-netlink.h"

static unsigned int event_rate = 1000;
module_param(event_rate, uint, 0644);
MODULE_PARM_DESC(event_rate,
		 "netlink events per second, all devices together (0 = none)");

static LIST_HEAD(cv_nl_devs);
static DEFINE_MUTEX(cv_nl_lock);

static struct genl_family cv_genl_family;
static struct smr_genl_events cv_nl_events;

enum { CV_MCGRP_EVENTS };

static const struct genl_multicast_group cv_nl_mcgrps[] = {
	[CV_MCGRP_EVENTS] = { .name = CV_GENL_MCGRP_EVENTS },
};

static struct netlink_range_validation cv_nl_rate_range = {
	.min = 0,
	.max = CV_NL_RATE_MAX,
};

static const struct nla_policy cv_nl_get_policy[CV_A_MAX + 1] = {
	[CV_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = CV_NL_NAME_MAX - 1 },
};

static const struct nla_policy cv_nl_set_policy[CV_A_MAX + 1] = {
	[CV_A_DEV_NAME] = { .type = NLA_NUL_STRING, .len = CV_NL_NAME_MAX - 1 },
	[CV_A_EVENT_RATE] = NLA_POLICY_FULL_RANGE(NLA_U32, &cv_nl_rate_range),
	[CV_A_RESET_COUNTERS] = { .type = NLA_FLAG },
	[CV_A_CLEAR_STATS] = { .type = NLA_FLAG },
};

static int cv_nl_put_dev(struct sk_buff *skb, struct cv_nl_dev *d)
{
	if (nla_put_string(skb, CV_A_DEV_NAME, d->name) ||
	    nla_put_u32(skb, CV_A_DEV_MAJOR, MAJOR(d->devt)) ||
	    nla_put_u32(skb, CV_A_DEV_MINOR, MINOR(d->devt)))
		return -EMSGSIZE;
	return 0;
}

static int cv_nl_put_stats(struct sk_buff *skb, struct cv_nl_dev *d)
{
	struct cv_nl_snap s;
	struct nlattr *nest;
	u64 v[CV_S_MAX - CV_S_NR_BLOCKS + 1];
	unsigned int i;

	cv_nl_snapshot(d, &s);
	/* In CV_S_* order. */
	v[0] = s.nr_blocks;
	v[1] = s.block_size;
	v[2] = s.did;
	v[3] = s.dnor;
	v[4] = s.unshingled;
	v[5] = s.st.writes;
	v[6] = s.st.damaging_writes;
	v[7] = s.st.damaged_blocks;
	v[8] = s.st.live_damage_writes;
	v[9] = s.st.live_damaged_blocks;
	v[10] = s.st.damaged_reads;
	v[11] = s.valid_blocks;
	v[12] = s.st.commits;
	v[13] = s.mem_bytes;
	v[14] = s.st.journal_writes;
	v[15] = s.model_busy_ms;
	v[16] = s.model_lag_ms;
	v[17] = s.st.cached_writes;
	v[18] = s.faults.bad_reads;
	v[19] = s.faults.bad_writes;
	v[20] = s.faults.remaps;
	v[21] = s.faults.transient;
	v[22] = s.faults.delayed;
	v[23] = s.power;
	v[24] = s.power_left;
	BUILD_BUG_ON(ARRAY_SIZE(v) != CV_S_MAX - CV_S_NR_BLOCKS + 1);

	nest = nla_nest_start(skb, CV_A_STATS);
	if (!nest)
		return -EMSGSIZE;
	for (i = 0; i < ARRAY_SIZE(v); i++)
		if (nla_put_u64_64bit(skb, CV_S_NR_BLOCKS + i, v[i], CV_S_PAD))
			return -EMSGSIZE;
	nla_nest_end(skb, nest);
	return 0;
}

/* Lock held. */
static int cv_nl_fill_dev(struct sk_buff *skb, struct cv_nl_dev *d,
			  u32 portid, u32 seq, int flags)
{
	void *hdr;

	hdr = genlmsg_put(skb, portid, seq, &cv_genl_family, flags,
			  CV_CMD_GET_DEV);
	if (!hdr)
		return -EMSGSIZE;
	if (cv_nl_put_dev(skb, d) || cv_nl_put_stats(skb, d)) {
		genlmsg_cancel(skb, hdr);
		return -EMSGSIZE;
	}
	genlmsg_end(skb, hdr);
	return 0;
}

/* Lock held. */
static struct cv_nl_dev *cv_nl_find(const char *name)
{
	struct cv_nl_dev *d;

	list_for_each_entry(d, &cv_nl_devs, node)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

/* cb->args[0]: devices already sent. */
static int cv_nl_get_dev_dumpit(struct sk_buff *skb,
				struct netlink_callback *cb)
{
	struct cv_nl_dev *d;
	long idx = 0, start = cb->args[0];
	int ret = 0;

	mutex_lock(&cv_nl_lock);
	list_for_each_entry(d, &cv_nl_devs, node) {
		if (idx++ < start)
			continue;
		ret = cv_nl_fill_dev(skb, d, NETLINK_CB(cb->skb).portid,
				     cb->nlh->nlmsg_seq, NLM_F_MULTI);
		if (ret) {
			idx--;
			break;
		}
	}
	mutex_unlock(&cv_nl_lock);
	cb->args[0] = idx;
	if (ret && idx == start)
		return ret;
	return skb->len;
}

static int cv_nl_get_dev_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct cv_nl_dev *d;
	struct sk_buff *msg;
	int ret = -ENODEV;

	if (!info->attrs[CV_A_DEV_NAME]) {
		GENL_SET_ERR_MSG(info, "a device name is required (or dump all)");
		return -EINVAL;
	}
	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	mutex_lock(&cv_nl_lock);
	d = cv_nl_find(nla_data(info->attrs[CV_A_DEV_NAME]));
	if (d)
		ret = cv_nl_fill_dev(msg, d, info->snd_portid, info->snd_seq, 0);
	mutex_unlock(&cv_nl_lock);
	if (ret) {
		if (ret == -ENODEV)
			GENL_SET_ERR_MSG(info, "no caveat device by that name");
		nlmsg_free(msg);
		return ret;
	}
	return genlmsg_reply(msg, info);
}

static int cv_nl_get_stats_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct sk_buff *msg;
	void *hdr;

	msg = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!msg)
		return -ENOMEM;
	hdr = genlmsg_put_reply(msg, info, &cv_genl_family, 0,
				CV_CMD_GET_STATS);
	if (!hdr ||
	    nla_put_u32(msg, CV_A_EVENT_RATE, READ_ONCE(event_rate)) ||
	    nla_put_u64_64bit(msg, CV_A_EVENTS_SENT,
			      atomic64_read(&cv_nl_events.sent), CV_A_PAD) ||
	    nla_put_u64_64bit(msg, CV_A_EVENTS_DROPPED,
			      atomic64_read(&cv_nl_events.dropped), CV_A_PAD)) {
		nlmsg_free(msg);
		return -EMSGSIZE;
	}
	genlmsg_end(msg, hdr);
	return genlmsg_reply(msg, info);
}

static int cv_nl_set_doit(struct sk_buff *skb, struct genl_info *info)
{
	struct nlattr **a = info->attrs;
	struct cv_nl_dev *d;

	if (!a[CV_A_EVENT_RATE] && !a[CV_A_RESET_COUNTERS] &&
	    !a[CV_A_CLEAR_STATS]) {
		GENL_SET_ERR_MSG(info, "nothing to set");
		return -EINVAL;
	}
	if (a[CV_A_CLEAR_STATS]) {
		if (!a[CV_A_DEV_NAME]) {
			GENL_SET_ERR_MSG(info, "clearing counters needs a device name");
			return -EINVAL;
		}
		mutex_lock(&cv_nl_lock);
		d = cv_nl_find(nla_data(a[CV_A_DEV_NAME]));
		if (d)
			cv_nl_clear_stats(d);
		mutex_unlock(&cv_nl_lock);
		if (!d) {
			GENL_SET_ERR_MSG(info, "no caveat device by that name");
			return -ENODEV;
		}
	}
	if (a[CV_A_EVENT_RATE])
		WRITE_ONCE(event_rate, nla_get_u32(a[CV_A_EVENT_RATE]));
	if (a[CV_A_RESET_COUNTERS])
		smr_genl_events_reset(&cv_nl_events);
	return 0;
}

static const struct genl_ops cv_nl_ops[] = {
	{
		.cmd = CV_CMD_GET_DEV,
		.doit = cv_nl_get_dev_doit,
		.dumpit = cv_nl_get_dev_dumpit,
		.policy = cv_nl_get_policy,
		.maxattr = CV_A_MAX,
	},
	{
		.cmd = CV_CMD_GET_STATS,
		.doit = cv_nl_get_stats_doit,
		.policy = cv_nl_get_policy,
		.maxattr = CV_A_MAX,
	},
	{
		.cmd = CV_CMD_SET,
		.doit = cv_nl_set_doit,
		.policy = cv_nl_set_policy,
		.maxattr = CV_A_MAX,
		.flags = GENL_ADMIN_PERM,
	},
};

static struct genl_family cv_genl_family __ro_after_init = {
	.name = CV_GENL_NAME,
	.version = CV_GENL_VERSION,
	.maxattr = CV_A_MAX,
	.module = THIS_MODULE,
	.ops = cv_nl_ops,
	.n_ops = ARRAY_SIZE(cv_nl_ops),
	.resv_start_op = CV_CMD_GET_DEV,
	.mcgrps = cv_nl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(cv_nl_mcgrps),
};

void cv_nl_damage(struct cv_nl_dev *d, u64 wfirst, u64 wlast, u64 vfirst,
		  u64 vlast, u64 dfirst, u64 dlast, u64 live)
{
	struct sk_buff *skb;
	void *hdr;

	skb = smr_genl_event_new(&cv_nl_events, CV_CMD_EV_DAMAGE, &hdr);
	if (!skb)
		return;
	smr_genl_event_send(&cv_nl_events, skb, hdr,
		cv_nl_put_dev(skb, d) ||
		nla_put_u64_64bit(skb, CV_A_WRITE_FIRST, wfirst, CV_A_PAD) ||
		nla_put_u64_64bit(skb, CV_A_WRITE_LAST, wlast, CV_A_PAD) ||
		nla_put_u64_64bit(skb, CV_A_VICTIM_FIRST, vfirst, CV_A_PAD) ||
		nla_put_u64_64bit(skb, CV_A_VICTIM_LAST, vlast, CV_A_PAD) ||
		nla_put_u64_64bit(skb, CV_A_DAMAGE_FIRST, dfirst, CV_A_PAD) ||
		nla_put_u64_64bit(skb, CV_A_DAMAGE_LAST, dlast, CV_A_PAD) ||
		nla_put_u64_64bit(skb, CV_A_LIVE_BLOCKS, live, CV_A_PAD));
}

/*
 * End of a successful ctr (process context), which set @d's name and
 * device number at its start (smr_genl_dev_name()).
 */
void cv_nl_register(struct cv_nl_dev *d, struct dm_target *ti)
{
	d->ti = ti;
	mutex_lock(&cv_nl_lock);
	list_add_tail(&d->node, &cv_nl_devs);
	mutex_unlock(&cv_nl_lock);
}

void cv_nl_unregister(struct cv_nl_dev *d)
{
	mutex_lock(&cv_nl_lock);
	list_del_init(&d->node);
	mutex_unlock(&cv_nl_lock);
}

int cv_nl_init(void)
{
	smr_genl_events_init(&cv_nl_events, &cv_genl_family, CV_MCGRP_EVENTS,
			     &event_rate);
	return genl_register_family(&cv_genl_family);
}

void cv_nl_exit(void)
{
	WARN_ON_ONCE(!list_empty(&cv_nl_devs));
	genl_unregister_family(&cv_genl_family);
}

MODULE_ALIAS_GENL_FAMILY(CV_GENL_NAME);
