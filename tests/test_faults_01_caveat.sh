#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
#
# Media faults on the caveat target (docs/dm-caveat.rst, "Media faults"):
# bad sectors fail reads with a medium error, and writes with on_write
# fail, and a write clears them with on_write remap; transient faults
# (next N, or seeded probability) and delays fire on their range and
# direction only; removing each restores normal behaviour; bad message
# input is refused with EINVAL and a log line. Faults come before the
# damage model: a write refused on a bad sector damages nothing.

. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
. "$SMR_ROOT/tests/lib/faults.sh"
_prep_test "caveat: media faults"
require_cmd dmsetup dd cmp blockdev
require_target caveat
FL_MODEL=cv

# 160 MiB, no shingling (DID 0): blocks rewrite in place.
back=$(new_backing 200) || bail "no backing device"
N=t_${TID}_a
dm_create $N "0 $((160 * 2048)) caveat $back 0 0" || bail "cannot create the caveat device"
fl_suite /dev/mapper/$N 1024

# DID 4: a write refused on a bad sector does not damage what follows.
back2=$(new_backing 48) || bail "no backing device"
M=t_${TID}_b
dm_create $M "0 $((32 * 2048)) caveat $back2 4 0" || bail "cannot create the second device"
D=/dev/mapper/$M
g=$T_WORK/one
head -c 4096 /dev/urandom > "$g"
check "write block 20" fl_write $D 20 "$g"
check "block 18 bad, writes fail" fl_msg $D badblocks add $((18 * 8)) 8
check "on_write fail" fl_msg $D badblocks on_write fail
d0=$(cv_field $M damaging_writes)
assert_eq "a write of block 18 fails" "$FL_ENODATA" "$(fl_try fl_write $D 18 "$g")"
assert_eq "block 20 is not damaged by it" valid "$(cv_msg $M query 20)"
assert_eq "no damaging write counted" "$d0" "$(cv_field $M damaging_writes)"
check "on_write remap" fl_msg $D badblocks on_write remap
check "now the write of block 18 succeeds" fl_write $D 18 "$g"
assert_eq "and damages block 20 (DID 4)" damaged "$(cv_msg $M query 20)"
assert_eq "the bad range is gone" "" "$(fl_msg $D badblocks list)"

dmesg_check
_show_result
