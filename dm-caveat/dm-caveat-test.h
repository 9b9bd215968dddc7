/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test hooks of dm-caveat (dm-caveat-test.c), in debugfs
 * (/sys/kernel/debug/dm-caveat/, root only), not module parameters: see
 * dm-smr/dm-smr-test.h.
 */
#ifndef DM_CAVEAT_TEST_H
#define DM_CAVEAT_TEST_H

#include <linux/types.h>

struct cv_test_hooks {
	/* Fail this many of the next page allocations in map(), as memory
	   pressure would (tests/test_cv_04_writers.sh). */
	u32 fail_map_allocs;
};

extern struct cv_test_hooks cv_test;

void cv_test_hooks_init(void);
void cv_test_hooks_exit(void);

#endif /* DM_CAVEAT_TEST_H */
