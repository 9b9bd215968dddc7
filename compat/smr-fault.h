/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smr-fault.h - test-only fault injection shared by dm-smr and dm-caveat:
 * a module parameter counts the next N allocations to fail.
 */
#ifndef SMR_FAULT_H
#define SMR_FAULT_H

#include <linux/atomic.h>
#include <linux/compiler.h>

/* Take one from *@left if it is not zero: true if this call should fail. */
static inline bool smr_fault_take(unsigned int *left)
{
	unsigned int n = READ_ONCE(*left), old;

	while (n) {
		old = cmpxchg(left, n, n - 1);
		if (old == n)
			return true;
		n = old;
	}
	return false;
}

#endif /* SMR_FAULT_H */
