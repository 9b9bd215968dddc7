// SPDX-License-Identifier: GPL-2.0
/*
 * The foundations dm-smr shares with dm-caveat, compiled into this module
 * from common/: the crash-safe metadata store and superblock steps,
 * table-argument parsing, the generic netlink event scaffolding and the
 * timing model, the claim that keeps one emulated drive per backing
 * device, the power switch, and the media faults (each module traces them in its own
 * trace system).
 * One source for both modules, tested by both suites; no third module to
 * load first and no exported symbols.
 */
#define DM_MSG_PREFIX "smr"

#include "smr-slots.c"
#include "smr-args.c"
#include "smr-genl.c"
#include "smr-timing.c"
#include "smr-claim.c"
#include "smr-power.c"

#include "dm-smr-trace.h"
#define smr_fault_trace trace_smr_fault
#include "smr-faults.c"
