// SPDX-License-Identifier: GPL-2.0
/*
 * The foundations dm-caveat shares with dm-smr, compiled into this module
 * from common/: the crash-safe metadata store and superblock steps,
 * table-argument parsing, the generic netlink event scaffolding and the
 * timing model, the claim that keeps one emulated drive per backing
 * device, and the media faults (each module traces them in its own
 * trace system).
 * One source for both modules, tested by both suites; no third module to
 * load first and no exported symbols.
 */
#define DM_MSG_PREFIX "caveat"

#include "smr-slots.c"
#include "smr-args.c"
#include "smr-genl.c"
#include "smr-timing.c"
#include "smr-claim.c"
#include "smr-power.c"

#include "dm-caveat-trace.h"
#define smr_fault_trace trace_cv_fault
#include "smr-faults.c"
