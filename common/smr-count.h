/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU I/O counters for the paths that take no lock: the lock-free
 * reads of dm-smr (smr_hm_read_remap(), smr_dm_read_map()) and dm-caveat's
 * writes that change nothing (a DID 0 write inside a chunk all valid).
 * One set per CPU, so that such an I/O takes no lock and writes no line
 * another CPU writes to count itself; summed when the status is read.
 * clear_stats writes no other CPU's counters (an I/O counting there at
 * that moment would race with it): it keeps the sum at the clear as a
 * base (stored under the target's lock), which the status subtracts.
 * Both sum before they take that lock: the loop is over every possible
 * CPU, and the lock is taken with interrupts off. A status that summed
 * before a clear stored its base sees a base above its sum, and shows 0
 * (smr_count_since()).
 */
#ifndef SMR_COUNT_H
#define SMR_COUNT_H

#include <linux/percpu.h>
#include <linux/types.h>

struct smr_io_count {
	u64 ios;
	u64 sectors;
};

static inline void smr_count_add(struct smr_io_count __percpu *c, u32 sectors)
{
	this_cpu_inc(c->ios);
	this_cpu_add(c->sectors, sectors);
}

/*
 * The counts of every CPU (an I/O counting meanwhile may be in or not).
 * On a 32-bit kernel a 64-bit load may tear (a status off by 2^32 until
 * the next clear); the kernels this project supports are Debian's amd64
 * ones, where it does not.
 */
static inline void smr_count_sum(struct smr_io_count __percpu *c,
				 struct smr_io_count *sum)
{
	int cpu;

	sum->ios = sum->sectors = 0;
	for_each_possible_cpu(cpu) {
		struct smr_io_count *p = per_cpu_ptr(c, cpu);

		sum->ios += READ_ONCE(p->ios);
		sum->sectors += READ_ONCE(p->sectors);
	}
}

/* What counted since @base, a sum a clear kept; 0 if it is newer. */
static inline u64 smr_count_since(u64 now, u64 base)
{
	return now > base ? now - base : 0;
}

#endif /* SMR_COUNT_H */
