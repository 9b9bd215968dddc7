/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Table-line arguments, shared by dm-smr and dm-caveat (common/smr-args.c).
 *
 * Each target lists its optional arguments in a table of struct smr_opt;
 * smr_parse_opts() reads "<#opt_args> <opt_args>..." against it, the same
 * way for every model: an unknown name, a name given twice, a missing or
 * bad value, or words left over are refused with a message saying which.
 */
#ifndef SMR_ARGS_H
#define SMR_ARGS_H

#include <linux/device-mapper.h>
#include <linux/types.h>

struct smr_opt {
	const char *name;
	bool flag;			/* takes no value */
	const char *const *words;	/* the value is one of these (NULL-ended);
					   its index is what is returned */
	int (*parse)(const char *s, u64 *v);	/* or this parser */
	u64 min, max;			/* otherwise a decimal number in [min, max] */
	char *bad;			/* the error for a bad value */
};

struct smr_opt_table {
	const struct smr_opt *opts;
	unsigned int nr;		/* at most BITS_PER_LONG */
	char *count_error;	/* a bad <#opt_args> */
	/*
	 * The most words a table line may give, when fewer than every
	 * option's words together (an option and its old spelling are one
	 * option); 0: all of them.
	 */
	unsigned int max_words;
	char *unknown_error;	/* a name not in the table */
	/* The word that starts a group after the options, or NULL
	   (SMR_TM_GROUP: the timing group, smr-timing.h). */
	const char *group;
};

/*
 * Parse the optional arguments left in @as. Sets bit i of *@given for each
 * option i given, with its value (a number, a word's index, or 1 for a
 * flag) in @val[i]. With t->group, a group starting with that word may
 * follow the options (or stand in for them): it is left in @as for its
 * own parser (smr_tm_parse() for the timing group). Returns 0,
 * or -EINVAL with *@error set.
 */
int smr_parse_opts(const struct smr_opt_table *t, struct dm_arg_set *as,
		   unsigned long *given, u64 *val, char **error);

/* Whether the next word of @as is @word (case-insensitive). */
bool smr_args_next_is(const struct dm_arg_set *as, const char *word);

/* A decimal number that fits in u64 (kstrtoull refuses overflow, unlike sscanf). */
int smr_parse_u64(const char *s, u64 *v);

/*
 * The start of every constructor: at least @min_args words (else @usage
 * is the error), a writable table, and a zeroed context of @size bytes.
 * Returns the context, or an ERR_PTR with ti->error set.
 */
void *smr_ctr_alloc(struct dm_target *ti, unsigned int argc, unsigned int min_args,
		    char *usage, size_t size);

#endif /* SMR_ARGS_H */
