// SPDX-License-Identifier: GPL-2.0
/*
 * smr-nl: dm-smr / dm-caveat generic netlink from userspace (libnl-genl-3).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <linux/genetlink.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <netlink/netlink.h>

#include "dm-caveat-netlink.h"
#include "dm-smr-netlink.h"
#include "smr-nl.h"

const char *const smrnl_family_name[NR_FAMS] = {
	[FAM_SMR] = SMR_GENL_NAME,
	[FAM_CAVEAT] = CV_GENL_NAME,
};

uint64_t smrnl_ev_overruns;

/* ------------------------------------------------ attribute tables --- */

static const char *const smr_hm_names[SMR_HM_MAX + 1] = {
	[SMR_HM_NR_ZONES] = "nr_zones", [SMR_HM_CONV_ZONES] = "conv_zones",
	[SMR_HM_IMP_OPEN] = "imp_open", [SMR_HM_EXP_OPEN] = "exp_open",
	[SMR_HM_CLOSED] = "closed", [SMR_HM_FULL] = "full",
	[SMR_HM_READONLY] = "readonly", [SMR_HM_OFFLINE] = "offline",
	[SMR_HM_WRITES] = "writes", [SMR_HM_WRITE_SECTORS] = "write_sectors",
	[SMR_HM_READS] = "reads", [SMR_HM_READ_SECTORS] = "read_sectors",
	[SMR_HM_RESETS] = "resets", [SMR_HM_FINISHES] = "finishes",
	[SMR_HM_OPENS] = "opens", [SMR_HM_CLOSES] = "closes",
	[SMR_HM_IMP_CLOSES] = "imp_closes", [SMR_HM_WP_ERRORS] = "wp_errors",
	[SMR_HM_ERRORS] = "errors", [SMR_HM_COMMITS] = "commits",
	[SMR_HM_MEM_BYTES] = "mem_bytes",
	[SMR_HM_MODEL_BUSY_MS] = "model_busy_ms", [SMR_HM_MODEL_LAG_MS] = "model_lag_ms",
	[SMR_HM_BAD_READ_ERRORS] = "bad_read_errors",
	[SMR_HM_BAD_WRITE_ERRORS] = "bad_write_errors",
	[SMR_HM_BAD_REMAPS] = "bad_remaps",
	[SMR_HM_TRANSIENT_ERRORS] = "transient_errors",
	[SMR_HM_DELAYED_IOS] = "delayed_ios",
	[SMR_HM_POWER] = "power", [SMR_HM_POWER_LEFT] = "power_left",
};

static const char *const smr_dm_names[SMR_DM_MAX + 1] = {
	[SMR_DM_NR_BANDS] = "nr_bands", [SMR_DM_BAND_SECTORS] = "band_sectors",
	[SMR_DM_CACHE_USED] = "cache_used", [SMR_DM_CACHE_TOTAL] = "cache_total",
	[SMR_DM_CACHE_LIVE] = "cache_live",
	[SMR_DM_INDEX_EXTENTS] = "index_extents",
	[SMR_DM_INDEX_BYTES] = "index_bytes",
	[SMR_DM_DIRTY_BANDS] = "dirty_bands", [SMR_DM_RMW_BG] = "rmw_bg",
	[SMR_DM_RMW_FG] = "rmw_fg", [SMR_DM_RMW_MANUAL] = "rmw_manual",
	[SMR_DM_BG_ABORTS] = "bg_aborts",
	[SMR_DM_CLEAN_READ_SECTORS] = "clean_read_sectors",
	[SMR_DM_CLEAN_WRITE_SECTORS] = "clean_write_sectors",
	[SMR_DM_CLEAN_MS_BG] = "clean_ms_bg", [SMR_DM_CLEAN_MS_FG] = "clean_ms_fg",
	[SMR_DM_CLEAN_MS_SINCE_BUSY] = "clean_ms_since_busy",
	[SMR_DM_HOST_READ_SECTORS] = "host_read_sectors",
	[SMR_DM_HOST_WRITE_SECTORS] = "host_write_sectors",
	[SMR_DM_CACHE_WRITE_SECTORS] = "cache_write_sectors",
	[SMR_DM_BYPASS_WRITE_SECTORS] = "bypass_write_sectors",
	[SMR_DM_WA_MILLI] = "wa_milli", [SMR_DM_STATE] = "state",
	[SMR_DM_POLICY] = "policy", [SMR_DM_COMMITS] = "commits",
	[SMR_DM_ERRORS] = "errors", [SMR_DM_MEM_BYTES] = "mem_bytes",
	[SMR_DM_MODEL_BUSY_MS] = "model_busy_ms",
	[SMR_DM_MODEL_CLEAN_MS] = "model_clean_ms",
	[SMR_DM_MODEL_LAG_MS] = "model_lag_ms",
	[SMR_DM_BAD_READ_ERRORS] = "bad_read_errors",
	[SMR_DM_BAD_WRITE_ERRORS] = "bad_write_errors",
	[SMR_DM_BAD_REMAPS] = "bad_remaps",
	[SMR_DM_TRANSIENT_ERRORS] = "transient_errors",
	[SMR_DM_DELAYED_IOS] = "delayed_ios",
	[SMR_DM_CLEAN_TIMEOUTS] = "clean_timeouts",
	[SMR_DM_POWER] = "power", [SMR_DM_POWER_LEFT] = "power_left",
};

static const char *const cv_stat_names[CV_S_MAX + 1] = {
	[CV_S_NR_BLOCKS] = "nr_blocks", [CV_S_BLOCK_SIZE] = "block_size",
	[CV_S_DID] = "did", [CV_S_DNOR] = "dnor",
	[CV_S_UNSHINGLED] = "unshingled", [CV_S_WRITES] = "writes",
	[CV_S_DAMAGING_WRITES] = "damaging_writes",
	[CV_S_DAMAGED_BLOCKS] = "damaged_blocks",
	[CV_S_LIVE_DAMAGE_WRITES] = "live_damage_writes",
	[CV_S_LIVE_DAMAGED_BLOCKS] = "live_damaged_blocks",
	[CV_S_DAMAGED_READS] = "damaged_reads",
	[CV_S_VALID_BLOCKS] = "valid_blocks", [CV_S_COMMITS] = "commits",
	[CV_S_MEM_BYTES] = "mem_bytes", [CV_S_JOURNAL_WRITES] = "journal_writes",
	[CV_S_MODEL_BUSY_MS] = "model_busy_ms", [CV_S_MODEL_LAG_MS] = "model_lag_ms",
	[CV_S_CACHED_WRITES] = "cached_writes",
	[CV_S_BAD_READ_ERRORS] = "bad_read_errors",
	[CV_S_BAD_WRITE_ERRORS] = "bad_write_errors",
	[CV_S_BAD_REMAPS] = "bad_remaps",
	[CV_S_TRANSIENT_ERRORS] = "transient_errors",
	[CV_S_DELAYED_IOS] = "delayed_ios",
	[CV_S_POWER] = "power", [CV_S_POWER_LEFT] = "power_left",
};

static const char *const dm_state_names[] = { "idle", "clean-bg", "clean-fg", "clean-manual" };
static const char *const dm_policy_names[] = { "fifo", "greedy", "cost-benefit" };
static const char *const power_names[] = { "on", "armed", "cut" };
static const char *const reason_names[] = { "unknown", "idle", "foreground", "manual" };

static const char *zone_cond_name(unsigned int c)
{
	/* BLK_ZONE_COND_*, named as blkzone prints them. */
	static const char *const n[] = {
		[0x0] = "nw", [0x1] = "em", [0x2] = "oi", [0x3] = "oe",
		[0x4] = "cl", [0xd] = "ro", [0xe] = "fu", [0xf] = "of",
	};

	return c < sizeof(n) / sizeof(n[0]) && n[c] ? n[c] : "unknown";
}

static void add_nest(struct rec *r, struct nlattr *nest,
		     const char *const *names, int max)
{
	struct nlattr *a;
	int rem;

	nla_for_each_nested(a, nest, rem) {
		int t = nla_type(a);

		if (t > max || !names[t] || nla_len(a) != 8)
			continue;
		if (names == smr_dm_names && t == SMR_DM_STATE) {
			uint64_t v = nla_get_u64(a);

			rec_add_str(r, "state", v < 4 ? dm_state_names[v] : "unknown");
		} else if ((names == smr_dm_names && t == SMR_DM_POWER) ||
			   (names == smr_hm_names && t == SMR_HM_POWER) ||
			   (names == cv_stat_names && t == CV_S_POWER)) {
			uint64_t v = nla_get_u64(a);

			rec_add_str(r, "power", v < 3 ? power_names[v] : "unknown");
		} else if (names == smr_dm_names && t == SMR_DM_POLICY) {
			uint64_t v = nla_get_u64(a);

			rec_add_str(r, "policy", v < 3 ? dm_policy_names[v] : "unknown");
		} else {
			rec_add_u64(r, names[t], nla_get_u64(a));
		}
	}
}

static struct nla_policy smr_pol[SMR_A_MAX + 1] = {
	[SMR_A_DEV_NAME] = { .type = NLA_STRING },
	[SMR_A_DEV_MAJOR] = { .type = NLA_U32 },
	[SMR_A_DEV_MINOR] = { .type = NLA_U32 },
	[SMR_A_MODE] = { .type = NLA_U8 },
	[SMR_A_HM_STATS] = { .type = NLA_NESTED },
	[SMR_A_DM_STATS] = { .type = NLA_NESTED },
	[SMR_A_BAND] = { .type = NLA_U32 },
	[SMR_A_REASON] = { .type = NLA_U8 },
	[SMR_A_READ_BYTES] = { .type = NLA_U64 },
	[SMR_A_WRITE_BYTES] = { .type = NLA_U64 },
	[SMR_A_DURATION_US] = { .type = NLA_U64 },
	[SMR_A_CACHE_PCT] = { .type = NLA_U32 },
	[SMR_A_CLEAN_MS] = { .type = NLA_U64 },
	[SMR_A_ZONE] = { .type = NLA_U32 },
	[SMR_A_ZONE_COND] = { .type = NLA_U8 },
	[SMR_A_SECTOR] = { .type = NLA_U64 },
	[SMR_A_SECTORS] = { .type = NLA_U32 },
	[SMR_A_ZONE_WP] = { .type = NLA_U64 },
	[SMR_A_EVENT_RATE] = { .type = NLA_U32 },
	[SMR_A_EVENTS_SENT] = { .type = NLA_U64 },
	[SMR_A_EVENTS_DROPPED] = { .type = NLA_U64 },
	[SMR_A_ERRNO] = { .type = NLA_U32 },
};

static struct nla_policy cv_pol[CV_A_MAX + 1] = {
	[CV_A_DEV_NAME] = { .type = NLA_STRING },
	[CV_A_DEV_MAJOR] = { .type = NLA_U32 },
	[CV_A_DEV_MINOR] = { .type = NLA_U32 },
	[CV_A_STATS] = { .type = NLA_NESTED },
	[CV_A_WRITE_FIRST] = { .type = NLA_U64 },
	[CV_A_WRITE_LAST] = { .type = NLA_U64 },
	[CV_A_VICTIM_FIRST] = { .type = NLA_U64 },
	[CV_A_VICTIM_LAST] = { .type = NLA_U64 },
	[CV_A_DAMAGE_FIRST] = { .type = NLA_U64 },
	[CV_A_DAMAGE_LAST] = { .type = NLA_U64 },
	[CV_A_LIVE_BLOCKS] = { .type = NLA_U64 },
	[CV_A_EVENT_RATE] = { .type = NLA_U32 },
	[CV_A_EVENTS_SENT] = { .type = NLA_U64 },
	[CV_A_EVENTS_DROPPED] = { .type = NLA_U64 },
};

static void put_dev(struct rec *r, struct nlattr *name, struct nlattr *maj,
		    struct nlattr *min)
{
	if (name)
		snprintf(r->device, sizeof(r->device), "%s", nla_get_string(name));
	if (maj)
		r->major = nla_get_u32(maj);
	if (min)
		r->minor = nla_get_u32(min);
}

static void u64_if(struct rec *r, struct nlattr **tb, int t, const char *k)
{
	if (tb[t])
		rec_add_u64(r, k, nla_get_u64(tb[t]));
}

static void u32_if(struct rec *r, struct nlattr **tb, int t, const char *k)
{
	if (tb[t])
		rec_add_u64(r, k, nla_get_u32(tb[t]));
}

/* A dm-smr message (dump reply or event) as a record. 0, or -1: ignore. */
static int parse_smr(struct nl_msg *msg, struct rec *r)
{
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[SMR_A_MAX + 1];
	const char *ev;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, SMR_A_MAX, smr_pol) < 0)
		return -1;
	switch (gh->cmd) {
	case SMR_CMD_GET_DEV: ev = "device"; break;
	case SMR_CMD_GET_STATS: ev = "stats"; break;
	case SMR_CMD_EV_CLEAN_START: ev = "clean_start"; break;
	case SMR_CMD_EV_CLEAN_DONE: ev = "clean_done"; break;
	case SMR_CMD_EV_CACHE_LEVEL: ev = "cache_level"; break;
	case SMR_CMD_EV_IDLE_CLEAN: ev = "idle_clean"; break;
	case SMR_CMD_EV_ZONE_ERROR: ev = "zone_error"; break;
	case SMR_CMD_EV_COMMIT_ERROR: ev = "commit_error"; break;
	default: return -1;
	}
	rec_init(r, SMR_GENL_NAME, ev);
	put_dev(r, tb[SMR_A_DEV_NAME], tb[SMR_A_DEV_MAJOR], tb[SMR_A_DEV_MINOR]);
	if (tb[SMR_A_MODE])
		rec_add_str(r, "mode", nla_get_u8(tb[SMR_A_MODE]) ==
			    SMR_NL_MODE_DRIVE_MANAGED ? "drive-managed" :
			    "host-managed");
	u32_if(r, tb, SMR_A_BAND, "band");
	if (tb[SMR_A_REASON]) {
		unsigned int v = nla_get_u8(tb[SMR_A_REASON]);

		rec_add_str(r, "reason", reason_names[v < 4 ? v : 0]);
	}
	u64_if(r, tb, SMR_A_READ_BYTES, "read_bytes");
	u64_if(r, tb, SMR_A_WRITE_BYTES, "write_bytes");
	u64_if(r, tb, SMR_A_DURATION_US, "duration_us");
	u32_if(r, tb, SMR_A_CACHE_PCT, "pct");
	u64_if(r, tb, SMR_A_CLEAN_MS, "clean_ms");
	u32_if(r, tb, SMR_A_ZONE, "zone");
	if (tb[SMR_A_ZONE_COND])
		rec_add_str(r, "cond", zone_cond_name(nla_get_u8(tb[SMR_A_ZONE_COND])));
	u64_if(r, tb, SMR_A_SECTOR, "sector");
	u32_if(r, tb, SMR_A_SECTORS, "sectors");
	u64_if(r, tb, SMR_A_ZONE_WP, "wp");
	u32_if(r, tb, SMR_A_EVENT_RATE, "event_rate");
	u64_if(r, tb, SMR_A_EVENTS_SENT, "events_sent");
	u64_if(r, tb, SMR_A_EVENTS_DROPPED, "events_dropped");
	u32_if(r, tb, SMR_A_ERRNO, "errno");
	if (tb[SMR_A_HM_STATS])
		add_nest(r, tb[SMR_A_HM_STATS], smr_hm_names, SMR_HM_MAX);
	if (tb[SMR_A_DM_STATS])
		add_nest(r, tb[SMR_A_DM_STATS], smr_dm_names, SMR_DM_MAX);
	return 0;
}

static int parse_cv(struct nl_msg *msg, struct rec *r)
{
	struct genlmsghdr *gh = nlmsg_data(nlmsg_hdr(msg));
	struct nlattr *tb[CV_A_MAX + 1];
	const char *ev;

	if (genlmsg_parse(nlmsg_hdr(msg), 0, tb, CV_A_MAX, cv_pol) < 0)
		return -1;
	switch (gh->cmd) {
	case CV_CMD_GET_DEV: ev = "device"; break;
	case CV_CMD_GET_STATS: ev = "stats"; break;
	case CV_CMD_EV_DAMAGE: ev = "damage"; break;
	default: return -1;
	}
	rec_init(r, CV_GENL_NAME, ev);
	put_dev(r, tb[CV_A_DEV_NAME], tb[CV_A_DEV_MAJOR], tb[CV_A_DEV_MINOR]);
	if (gh->cmd == CV_CMD_GET_DEV)
		rec_add_str(r, "mode", "caveat");
	u64_if(r, tb, CV_A_WRITE_FIRST, "write_first");
	u64_if(r, tb, CV_A_WRITE_LAST, "write_last");
	u64_if(r, tb, CV_A_VICTIM_FIRST, "victim_first");
	u64_if(r, tb, CV_A_VICTIM_LAST, "victim_last");
	u64_if(r, tb, CV_A_DAMAGE_FIRST, "damage_first");
	u64_if(r, tb, CV_A_DAMAGE_LAST, "damage_last");
	u64_if(r, tb, CV_A_LIVE_BLOCKS, "live_blocks");
	u32_if(r, tb, CV_A_EVENT_RATE, "event_rate");
	u64_if(r, tb, CV_A_EVENTS_SENT, "events_sent");
	u64_if(r, tb, CV_A_EVENTS_DROPPED, "events_dropped");
	if (tb[CV_A_STATS])
		add_nest(r, tb[CV_A_STATS], cv_stat_names, CV_S_MAX);
	return 0;
}

static int parse_any(int fam, struct nl_msg *msg, struct rec *r)
{
	return fam == FAM_SMR ? parse_smr(msg, r) : parse_cv(msg, r);
}

/* ----------------------------------------------- request/response --- */

struct req_ctx {
	struct smrnl *n;
	int fam;
	smrnl_rec_cb cb;
	void *arg;
	struct rec *out;
	int err;
	int done;
};

static int req_valid(struct nl_msg *msg, void *arg)
{
	struct req_ctx *c = arg;
	struct rec r;

	if (parse_any(c->fam, msg, &r))
		return NL_OK;
	if (c->out)
		*c->out = r;
	if (c->cb && c->cb(&r, c->arg))
		return NL_STOP;
	return NL_OK;
}

static int req_error(struct sockaddr_nl *nla, struct nlmsgerr *e, void *arg)
{
	struct req_ctx *c = arg;
	struct nlmsghdr *nlh = (struct nlmsghdr *)((char *)e - NLMSG_HDRLEN);

	(void)nla;
	c->err = e->error;
	c->done = 1;
	c->n->errmsg[0] = 0;
	/* Extended ack: NLMSGERR_ATTR_MSG after the (capped) request. */
	if (nlh->nlmsg_flags & NLM_F_ACK_TLVS) {
		size_t off = sizeof(*e);
		struct nlattr *a;
		int rem;

		if (!(nlh->nlmsg_flags & NLM_F_CAPPED))
			off += e->msg.nlmsg_len - sizeof(e->msg);
		off = NLMSG_ALIGN(off);
		if (NLMSG_HDRLEN + off < nlh->nlmsg_len) {
			rem = (int)(nlh->nlmsg_len - NLMSG_HDRLEN - off);
			for (a = (struct nlattr *)((char *)e + off); nla_ok(a, rem);
			     a = nla_next(a, &rem))
				if (nla_type(a) == NLMSGERR_ATTR_MSG)
					snprintf(c->n->errmsg, sizeof(c->n->errmsg),
						 "%s", (char *)nla_data(a));
		}
	}
	return NL_STOP;
}

static int req_finish(struct nl_msg *msg, void *arg)
{
	struct req_ctx *c = arg;

	(void)msg;
	c->done = 1;
	return NL_STOP;
}

static int req_ack(struct nl_msg *msg, void *arg)
{
	struct req_ctx *c = arg;

	(void)msg;
	c->done = 1;
	return NL_STOP;
}

static int nlerr_to_errno(int e)
{
	switch (-e) {
	case NLE_PERM: return -EPERM;
	case NLE_NOMEM: return -ENOMEM;
	case NLE_OBJ_NOTFOUND: return -ENOENT;
	case NLE_NODEV: return -ENODEV;
	case NLE_INVAL: return -EINVAL;
	case NLE_OPNOTSUPP: return -EOPNOTSUPP;
	default: return -EIO;
	}
}

static int do_request(struct smrnl *n, struct nl_msg *msg, struct req_ctx *c)
{
	struct nl_cb *cb;
	int ret;

	cb = nl_cb_alloc(NL_CB_DEFAULT);
	if (!cb)
		return -ENOMEM;
	nl_cb_set(cb, NL_CB_VALID, NL_CB_CUSTOM, req_valid, c);
	nl_cb_set(cb, NL_CB_FINISH, NL_CB_CUSTOM, req_finish, c);
	nl_cb_set(cb, NL_CB_ACK, NL_CB_CUSTOM, req_ack, c);
	nl_cb_err(cb, NL_CB_CUSTOM, req_error, c);
	n->errmsg[0] = 0;
	ret = nl_send_auto(n->sk, msg);
	if (ret < 0) {
		nl_cb_put(cb);
		return nlerr_to_errno(ret);
	}
	while (!c->done) {
		ret = nl_recvmsgs(n->sk, cb);
		if (ret < 0 && !c->err) {
			c->err = nlerr_to_errno(ret);
			break;
		}
	}
	nl_cb_put(cb);
	return c->err;
}

int smrnl_open(struct smrnl *n)
{
	int one = 1;

	memset(n, 0, sizeof(*n));
	n->sk = nl_socket_alloc();
	if (!n->sk)
		return -ENOMEM;
	if (genl_connect(n->sk)) {
		nl_socket_free(n->sk);
		n->sk = NULL;
		return -EIO;
	}
	/* Ask for the kernel's reasons with errors. */
	setsockopt(nl_socket_get_fd(n->sk), SOL_NETLINK, NETLINK_EXT_ACK,
		   &one, sizeof(one));
	smrnl_resolve(n);
	return 0;
}

void smrnl_resolve(struct smrnl *n)
{
	int i;

	for (i = 0; i < NR_FAMS; i++) {
		n->fam[i] = genl_ctrl_resolve(n->sk, smrnl_family_name[i]);
		if (n->fam[i] < 0)
			n->fam[i] = -1;
	}
}

void smrnl_close(struct smrnl *n)
{
	if (n->sk)
		nl_socket_free(n->sk);
	n->sk = NULL;
}

int smrnl_dump(struct smrnl *n, int fam, const char *name,
	       smrnl_rec_cb cb, void *arg)
{
	struct req_ctx c = { .n = n, .fam = fam, .cb = cb, .arg = arg };
	struct nl_msg *msg;
	int ret;

	if (n->fam[fam] < 0)
		return -ENOENT;
	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, n->fam[fam], 0,
			 name ? 0 : NLM_F_DUMP,
			 fam == FAM_SMR ? SMR_CMD_GET_DEV : CV_CMD_GET_DEV,
			 SMR_GENL_VERSION) ||
	    (name && nla_put_string(msg, fam == FAM_SMR ? SMR_A_DEV_NAME :
				    CV_A_DEV_NAME, name))) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = do_request(n, msg, &c);
	nlmsg_free(msg);
	return ret;
}

int smrnl_stats(struct smrnl *n, int fam, struct rec *r)
{
	struct req_ctx c = { .n = n, .fam = fam, .out = r };
	struct nl_msg *msg;
	int ret;

	if (n->fam[fam] < 0)
		return -ENOENT;
	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, n->fam[fam], 0, 0,
			 fam == FAM_SMR ? SMR_CMD_GET_STATS : CV_CMD_GET_STATS,
			 SMR_GENL_VERSION)) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = do_request(n, msg, &c);
	nlmsg_free(msg);
	return ret;
}

int smrnl_set(struct smrnl *n, int fam, int64_t rate, int reset,
	      const char *clear_dev)
{
	struct req_ctx c = { .n = n, .fam = fam };
	struct nl_msg *msg;
	int ret = 0, smr = fam == FAM_SMR;

	if (n->fam[fam] < 0)
		return -ENOENT;
	msg = nlmsg_alloc();
	if (!msg)
		return -ENOMEM;
	if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, n->fam[fam], 0,
			 NLM_F_ACK, smr ? SMR_CMD_SET : CV_CMD_SET,
			 SMR_GENL_VERSION))
		ret = -ENOMEM;
	if (!ret && rate >= 0)
		ret = nla_put_u32(msg, smr ? SMR_A_EVENT_RATE : CV_A_EVENT_RATE,
				  (uint32_t)rate);
	if (!ret && reset)
		ret = nla_put_flag(msg, smr ? SMR_A_RESET_COUNTERS :
				   CV_A_RESET_COUNTERS);
	if (!ret && clear_dev && !smr)
		ret = nla_put_string(msg, CV_A_DEV_NAME, clear_dev) ||
			nla_put_flag(msg, CV_A_CLEAR_STATS);
	if (ret) {
		nlmsg_free(msg);
		return -ENOMEM;
	}
	ret = do_request(n, msg, &c);
	nlmsg_free(msg);
	return ret;
}

/* ---------------------------------------------------------- events --- */

static int ev_valid(struct nl_msg *msg, void *arg)
{
	struct smrnl_ev *e = arg;
	struct nlmsghdr *nlh = nlmsg_hdr(msg);
	struct rec r;
	int i;

	if (nlh->nlmsg_type == GENL_ID_CTRL) {
		struct genlmsghdr *gh = nlmsg_data(nlh);
		struct nlattr *tb[CTRL_ATTR_MAX + 1];

		if (genlmsg_parse(nlh, 0, tb, CTRL_ATTR_MAX, NULL) < 0 ||
		    !tb[CTRL_ATTR_FAMILY_NAME])
			return NL_OK;
		for (i = 0; i < NR_FAMS; i++) {
			if (strcmp(nla_get_string(tb[CTRL_ATTR_FAMILY_NAME]),
				   smrnl_family_name[i]))
				continue;
			if (gh->cmd == CTRL_CMD_DELFAMILY) {
				e->fam[i] = -1;
				e->grp[i] = -1;
				if (e->on_family)
					e->on_family(i, 0, e->arg);
			} else if (gh->cmd == CTRL_CMD_NEWFAMILY ||
				   gh->cmd == CTRL_CMD_NEWMCAST_GRP) {
				int had = e->grp[i] >= 0;

				smrnl_ev_subscribe(e);
				if (!had && e->grp[i] >= 0 && e->on_family)
					e->on_family(i, 1, e->arg);
			}
		}
		return NL_OK;
	}
	for (i = 0; i < NR_FAMS; i++)
		if (e->fam[i] >= 0 && nlh->nlmsg_type == e->fam[i])
			break;
	if (i == NR_FAMS)
		return NL_OK;
	if (!parse_any(i, msg, &r) && e->cb)
		e->cb(&r, e->arg);
	return NL_OK;
}

int smrnl_ev_open(struct smrnl_ev *e, smrnl_rec_cb cb, void *arg)
{
	int ret, grp, i;

	memset(e, 0, sizeof(*e));
	for (i = 0; i < NR_FAMS; i++)
		e->fam[i] = e->grp[i] = -1;
	e->cb = cb;
	e->arg = arg;
	ret = smrnl_open(&e->ctl);
	if (ret)
		return ret;
	e->sk = nl_socket_alloc();
	if (!e->sk || genl_connect(e->sk)) {
		smrnl_ev_close(e);
		return -EIO;
	}
	nl_socket_disable_seq_check(e->sk);
	nl_socket_modify_cb(e->sk, NL_CB_VALID, NL_CB_CUSTOM, ev_valid, e);
	nl_socket_set_nonblocking(e->sk);
	nl_socket_set_buffer_size(e->sk, 4 << 20, 0);
	grp = genl_ctrl_resolve_grp(e->ctl.sk, "nlctrl", "notify");
	if (grp >= 0)
		nl_socket_add_membership(e->sk, grp);
	smrnl_ev_subscribe(e);
	return 0;
}

int smrnl_ev_subscribe(struct smrnl_ev *e)
{
	int i, n = 0, grp;

	for (i = 0; i < NR_FAMS; i++) {
		const char *gname = i == FAM_SMR ? SMR_GENL_MCGRP_EVENTS :
			CV_GENL_MCGRP_EVENTS;

		e->fam[i] = genl_ctrl_resolve(e->ctl.sk, smrnl_family_name[i]);
		if (e->fam[i] < 0) {
			e->fam[i] = e->grp[i] = -1;
			continue;
		}
		grp = genl_ctrl_resolve_grp(e->ctl.sk, smrnl_family_name[i], gname);
		if (grp < 0 || nl_socket_add_membership(e->sk, grp)) {
			e->grp[i] = -1;
			continue;
		}
		e->grp[i] = grp;
		n++;
	}
	return n;
}

int smrnl_ev_fd(struct smrnl_ev *e)
{
	return nl_socket_get_fd(e->sk);
}

int smrnl_ev_recv(struct smrnl_ev *e)
{
	int ret;

	for (;;) {
		ret = nl_recvmsgs_default(e->sk);
		if (ret >= 0)
			continue;
		if (ret == -NLE_AGAIN)
			return 0;
		if (ret == -NLE_NOMEM) {
			/* ENOBUFS: the socket overflowed, events were lost. */
			smrnl_ev_overruns++;
			continue;
		}
		return nlerr_to_errno(ret);
	}
}

void smrnl_ev_close(struct smrnl_ev *e)
{
	if (e->sk)
		nl_socket_free(e->sk);
	e->sk = NULL;
	smrnl_close(&e->ctl);
}

const char *smrnl_strerror(int err)
{
	switch (-err) {
	case EPERM:
	case EACCES:
		return "permission denied: changing settings needs CAP_NET_ADMIN (run as root)";
	case ENOENT:
		return "the module is not loaded: run 'modprobe dm-smr' (or 'modprobe dm-caveat')";
	case ENODEV:
		return "no such device: see 'smrctl status' for the devices there are";
	case EINVAL:
		return "the kernel refused the request as malformed (smrctl and the module disagree? rebuild both)";
	case EOPNOTSUPP:
		return "the module does not know this command (an older module? rebuild and reload it)";
	default:
		return strerror(-err);
	}
}
