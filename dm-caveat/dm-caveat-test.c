// SPDX-License-Identifier: GPL-2.0
/*
 * dm-caveat's test hooks in debugfs (dm-caveat-test.h). Without debugfs
 * the files are not there and the defaults hold.
 */
#include <linux/debugfs.h>

#include "dm-caveat-test.h"

struct cv_test_hooks cv_test;

static struct dentry *cv_test_dir;

void cv_test_hooks_init(void)
{
	struct dentry *d = debugfs_create_dir("dm-caveat", NULL);

	/* debugfs failures are not errors: the hooks keep their defaults. */
	if (IS_ERR_OR_NULL(d))
		return;
	cv_test_dir = d;
	debugfs_create_u32("fail_map_allocs", 0600, d, &cv_test.fail_map_allocs);
}

void cv_test_hooks_exit(void)
{
	debugfs_remove_recursive(cv_test_dir);
	cv_test_dir = NULL;
}
