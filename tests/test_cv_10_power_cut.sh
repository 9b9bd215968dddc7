#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
#
# dm-caveat: a power cut on demand (power_cut, docs/crash-testing.md).
# The crash test's workload (test_cv_06: flushed writes, then unflushed
# ones, damaging ones among them) with a power cut instead of a guest
# crash, in one boot: I/O fails after the cut, the backing device does
# not change, and after a remove and create the damage map is never
# falsely clean, no flushed write is lost, every valid block holds its
# last write. Then the countdown: "after N writes" lets N pass and cuts
# at the next; a reload brings the power back.

. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: power cuts keep the map never falsely clean"
require_cmd python3 dmsetup md5sum
require_target caveat

backing=$(new_backing 64) || bail "no backing device"
TABLE="0 $((8192 * 8)) caveat $backing 16 6 2 unshingled 128"
dev=/dev/mapper/cv10
power() { dmsetup status cv10 | awk '{ print $(NF - 1), $NF }'; }
bsum() { dd if="$backing" bs=1M iflag=direct status=none | md5sum; }

dm_create cv10 "$TABLE" || bail "cannot create the caveat device"
assert_eq "status: the power is on" "on 0" "$(power)"
check_fail "refused: power_cut after 3 (no count word)" dmsetup message cv10 0 power_cut after 3
cv_py crash1 --dev "$dev" --dm cv10 --state "$T_WORK/model.json" \
	--blocks 8192 --did 16 --dnor 6 --unshingled 128 --seed "${CV_SEED:-1010}" --writes 120
check "power_cut" dmsetup message cv10 0 power_cut
assert_eq "status: cut" "cut 0" "$(power)"
sum0=$(bsum)
check_fail "a read fails after the cut" dd if="$dev" of=/dev/null bs=4096 count=1 iflag=direct status=none
check_fail "a write fails after the cut" dd if=/dev/zero of="$dev" bs=4096 count=1 oflag=direct status=none
check_fail "a flush fails after the cut" sync "$dev"
assert_eq "the backing device did not change after the cut" "$sum0" "$(bsum)"
check "remove" dm_remove cv10
check "create after the cut" dm_create cv10 "$TABLE"
cv_py crash2 --dev "$dev" --dm cv10 --state "$T_WORK/model.json"

# ---- the countdown, and a reload -------------------------------------
check "arm: after 3 writes" dmsetup message cv10 0 power_cut after 3 writes
for i in 1 2 3; do
	check "write $i of 3 passes" dd if=/dev/urandom of="$dev" bs=4096 seek=$((4000 + i)) count=1 oflag=direct status=none
done
check_fail "write 4 (the cut) fails" dd if=/dev/urandom of="$dev" bs=4096 seek=4004 count=1 oflag=direct status=none
assert_eq "status: cut" "cut 0" "$(power)"
check "reload the printed table" dmsetup reload cv10 --table "$(dmsetup table cv10)"
check "resume" dmsetup resume cv10
assert_eq "status: on" "on 0" "$(power)"
check "a write after the power came back" dd if=/dev/urandom of="$dev" bs=4096 seek=5000 count=1 oflag=direct status=none
check "a flush" sync "$dev"

dmesg_check
_show_result
