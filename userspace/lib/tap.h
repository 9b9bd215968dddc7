/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tap.h - the unit tests' TAP output (test-units.c, test-scsi.c): ok()
 * prints one "ok N - ..." or "not ok N - ..." line and counts it;
 * tap_done() prints the plan and returns the exit status. One test
 * program per include: the counters are its own.
 */
#ifndef SMR_TAP_H
#define SMR_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int n_tests, n_fail;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3), unused));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	n_tests++;
	if (!cond)
		n_fail++;
	printf("%sok %d - ", cond ? "" : "not ", n_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* "1..N" and a summary line; 1 if any test failed, else 0. */
static int __attribute__((unused)) tap_done(void)
{
	printf("1..%d\n# %d tests, %d failed\n", n_tests, n_tests, n_fail);
	return n_fail ? 1 : 0;
}

#endif
