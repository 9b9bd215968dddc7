// SPDX-License-Identifier: GPL-2.0
/*
 * dm-smr's test hooks in debugfs (dm-smr-test.h). Without debugfs (or
 * with it locked down) the files are not there and the defaults hold.
 */
#include <linux/debugfs.h>

#include "dm-smr-dm.h"
#include "dm-smr-test.h"

struct smr_test_hooks smr_test = {
	.slot_search_window = SMR_DM_ALLOC_WINDOW,
	.free_batch_slots = 4096,
};

static struct dentry *smr_test_dir;

void smr_test_hooks_init(void)
{
	struct dentry *d = debugfs_create_dir("dm-smr", NULL);

	/* debugfs failures are not errors: the hooks keep their defaults. */
	if (IS_ERR_OR_NULL(d))
		return;
	smr_test_dir = d;
	debugfs_create_u32("slot_search_window", 0600, d, &smr_test.slot_search_window);
	debugfs_create_u64("seq_jump", 0600, d, &smr_test.seq_jump);
	debugfs_create_u32("fail_ext_allocs", 0600, d, &smr_test.fail_ext_allocs);
	debugfs_create_u32("free_batch_slots", 0600, d, &smr_test.free_batch_slots);
}

void smr_test_hooks_exit(void)
{
	debugfs_remove_recursive(smr_test_dir);
	smr_test_dir = NULL;
}
