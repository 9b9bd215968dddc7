/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test hooks of dm-smr (dm-smr-test.c): knobs the suite turns to reach
 * paths a short run cannot, in debugfs (/sys/kernel/debug/dm-smr/, root
 * only), not module parameters, so nothing a user configures can reach
 * them. Read with READ_ONCE; the counters are taken with smr_fault_take().
 */
#ifndef DM_SMR_TEST_H
#define DM_SMR_TEST_H

#include <linux/types.h>

struct smr_test_hooks {
	/* Cache slots a slot search looks at, clamped to 256..the default
	   (tests/test_dm_01_data.sh section E). */
	u32 slot_search_window;
	/* Added once to the next cache write's sequence number, as a drive
	   written for years would have it (tests/test_dm_08_policy.sh). */
	u64 seq_jump;
	/* Fail this many of the next index inserts of a cache write that
	   need an extent, as memory pressure would (test_dm_03). */
	u32 fail_ext_allocs;
	/* Slots a cleaned band frees per hold of the device lock, clamped
	   to 1..4096 (tests/test_dm_07_race.sh). */
	u32 free_batch_slots;
};

extern struct smr_test_hooks smr_test;

void smr_test_hooks_init(void);
void smr_test_hooks_exit(void);

#endif /* DM_SMR_TEST_H */
