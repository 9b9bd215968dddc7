// SPDX-License-Identifier: GPL-2.0
/*
 * Table-line argument parsing shared by dm-smr and dm-caveat; see
 * smr-args.h. Part of the library module smr-common.
 */
#include <linux/ctype.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "smr-args.h"
#include "smr-compat.h"

int smr_parse_u64(const char *s, u64 *v)
{
	if (!s || !isdigit(*s) || kstrtoull(s, 10, v))
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_GPL(smr_parse_u64);

static int smr_opt_value(const struct smr_opt *o, const char *s, u64 *v)
{
	unsigned int i;

	if (o->parse)
		return o->parse(s, v);
	if (!o->words)
		return smr_parse_u64(s, v) || *v < o->min || *v > o->max ?
			-EINVAL : 0;
	for (i = 0; o->words[i]; i++) {
		if (!strcasecmp(s, o->words[i])) {
			*v = i;
			return 0;
		}
	}
	return -EINVAL;
}

bool smr_args_next_is(const struct dm_arg_set *as, const char *word)
{
	return as->argc && !strcasecmp(as->argv[0], word);
}
EXPORT_SYMBOL_GPL(smr_args_next_is);

int smr_parse_opts(const struct smr_opt_table *t, struct dm_arg_set *as,
		   unsigned long *given, u64 *val, char **error)
{
	struct dm_arg count = { 0, 0, t->count_error };
	const struct smr_opt *o;
	unsigned int argc, i;
	const char *name;
	int ret;

	*given = 0;
	if (!as->argc || (t->group && smr_args_next_is(as, t->group)))
		return 0;
	for (i = 0; i < t->nr; i++)
		count.max += t->opts[i].flag ? 1 : 2;
	if (t->max_words)
		count.max = min(count.max, t->max_words);
	ret = dm_read_arg_group(&count, as, &argc, error);
	if (ret)
		return ret;
	while (argc) {
		name = dm_shift_arg(as);
		argc--;
		for (i = 0; i < t->nr; i++)
			if (!strcasecmp(name, t->opts[i].name))
				break;
		if (i == t->nr) {
			*error = t->unknown_error;
			return -EINVAL;
		}
		o = &t->opts[i];
		if (*given & BIT(i)) {
			*error = "Optional argument given twice";
			return -EINVAL;
		}
		*given |= BIT(i);
		if (o->flag) {
			val[i] = 1;
			continue;
		}
		if (!argc) {
			*error = "Optional argument is missing its value";
			return -EINVAL;
		}
		argc--;
		if (smr_opt_value(o, dm_shift_arg(as), &val[i])) {
			*error = o->bad;
			return -EINVAL;
		}
	}
	if (as->argc && !(t->group && smr_args_next_is(as, t->group))) {
		*error = "Too many arguments";
		return -EINVAL;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(smr_parse_opts);

void *smr_ctr_alloc(struct dm_target *ti, unsigned int argc, unsigned int min_args,
		    char *usage, size_t size)
{
	void *p;

	if (argc < min_args) {
		ti->error = usage;
		return ERR_PTR(-EINVAL);
	}
	if (!smr_table_writable(ti)) {
		ti->error = "A read-only table is not supported";
		return ERR_PTR(-EINVAL);
	}
	p = kzalloc(size, GFP_KERNEL);
	if (!p) {
		ti->error = "Cannot allocate the target context";
		return ERR_PTR(-ENOMEM);
	}
	return p;
}
EXPORT_SYMBOL_GPL(smr_ctr_alloc);
