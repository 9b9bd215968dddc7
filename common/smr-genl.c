// SPDX-License-Identifier: GPL-2.0
/*
 * Generic netlink scaffolding shared by dm-smr and dm-caveat; see
 * smr-genl.h. Part of the library module smr-common.
 */
#include <linux/jiffies.h>
#include <linux/kdev_t.h>
#include <linux/module.h>

#include "smr-genl.h"

void smr_genl_events_init(struct smr_genl_events *ev, struct genl_family *family,
			  unsigned int group, unsigned int *rate)
{
	ev->family = family;
	ev->group = group;
	ev->rate = rate;
	spin_lock_init(&ev->lock);
	ev->begin = jiffies;
	ev->count = 0;
	atomic64_set(&ev->sent, 0);
	atomic64_set(&ev->dropped, 0);
}
EXPORT_SYMBOL_GPL(smr_genl_events_init);

static bool smr_genl_rate_ok(struct smr_genl_events *ev)
{
	unsigned int rate = READ_ONCE(*ev->rate);
	unsigned long flags;
	bool ok;

	if (!rate)
		return false;
	spin_lock_irqsave(&ev->lock, flags);
	if (time_after_eq(jiffies, ev->begin + HZ)) {
		ev->begin = jiffies;
		ev->count = 0;
	}
	ok = ev->count < rate;
	if (ok)
		ev->count++;
	spin_unlock_irqrestore(&ev->lock, flags);
	return ok;
}

struct sk_buff *smr_genl_event_new(struct smr_genl_events *ev, u8 cmd,
				   void **hdr)
{
	struct sk_buff *skb;

	if (!genl_has_listeners(ev->family, &init_net, ev->group))
		return NULL;
	if (!smr_genl_rate_ok(ev))
		goto drop;
	skb = genlmsg_new(NLMSG_DEFAULT_SIZE, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		goto drop;
	*hdr = genlmsg_put(skb, 0, 0, ev->family, 0, cmd);
	if (!*hdr) {
		nlmsg_free(skb);
		goto drop;
	}
	return skb;
drop:
	atomic64_inc(&ev->dropped);
	return NULL;
}
EXPORT_SYMBOL_GPL(smr_genl_event_new);

void smr_genl_event_send(struct smr_genl_events *ev, struct sk_buff *skb,
			 void *hdr, int err)
{
	if (err) {
		nlmsg_free(skb);
		atomic64_inc(&ev->dropped);
		return;
	}
	genlmsg_end(skb, hdr);
	err = genlmsg_multicast(ev->family, skb, 0, ev->group,
				GFP_ATOMIC | __GFP_NOWARN);
	if (!err)
		atomic64_inc(&ev->sent);
	else if (err != -ESRCH)		/* nobody listened after all */
		atomic64_inc(&ev->dropped);
}
EXPORT_SYMBOL_GPL(smr_genl_event_send);

void smr_genl_events_reset(struct smr_genl_events *ev)
{
	atomic64_set(&ev->sent, 0);
	atomic64_set(&ev->dropped, 0);
}
EXPORT_SYMBOL_GPL(smr_genl_events_reset);

void smr_genl_dev_name(struct dm_target *ti, char *name, dev_t *devt)
{
	struct mapped_device *md = dm_table_get_md(ti->table);

	*devt = disk_devt(dm_disk(md));
	if (dm_copy_name_and_uuid(md, name, NULL))
		strscpy(name, dm_device_name(md), DM_NAME_LEN);
}
EXPORT_SYMBOL_GPL(smr_genl_dev_name);

int smr_genl_register_target(struct target_type *tt,
			     int (*family_init)(void), void (*family_exit)(void))
{
	int ret = family_init();

	if (ret)
		return ret;
	ret = dm_register_target(tt);
	if (ret)
		family_exit();
	return ret;
}
EXPORT_SYMBOL_GPL(smr_genl_register_target);

void smr_genl_unregister_target(struct target_type *tt,
				void (*family_exit)(void))
{
	dm_unregister_target(tt);
	family_exit();
}
EXPORT_SYMBOL_GPL(smr_genl_unregister_target);
