// SPDX-License-Identifier: GPL-2.0
/*
 * The foundations dm-caveat shares with dm-smr, compiled into this module
 * from common/: the crash-safe metadata store and superblock steps,
 * table-argument parsing, the generic netlink event scaffolding and the
 * timing model, and the claim
 * that keeps one emulated drive per backing device.
 * One source for both modules, tested by both suites; no third module to
 * load first and no exported symbols.
 */
#define DM_MSG_PREFIX "caveat"

#include "smr-slots.c"
#include "smr-args.c"
#include "smr-genl.c"
#include "smr-timing.c"
#include "smr-claim.c"
