#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# BOOTS: 2
# TIMEOUT: 200
# SLOW: 1
# (Real crashes cost a boot each: make check runs this on the first
# kernel only; test_crash_01_points checks every crash point of a
# recorded workload on every kernel without a reboot.)
# A guest crash (sysrq-b) with flushed and unflushed writes, damaging ones
# among them: after the reboot the damage map is never falsely clean (no
# block valid that the writes made maybe damaged, every valid block holds
# its last write) and no flushed write is lost.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: crash keeps the map never falsely clean"
require_cmd python3 dmsetup
require_target caveat

backing=$(new_backing 64) || bail "no backing device"
TABLE="0 $((8192 * 8)) caveat $backing 16 6 2 unshingled 128"
if [ "$SMR_BOOT" = 1 ]; then
	dm_create cv06 "$TABLE" || bail "cannot create the caveat device"
	cv_py crash1 --dev /dev/mapper/cv06 --dm cv06 --state "$SMR_STATE/model.json" \
		--blocks 8192 --did 16 --dnor 6 --unshingled 128 --seed "${CV_SEED:-606}" --writes 120
	crash_guest
fi
check "create after the crash" dm_create cv06 "$TABLE"
cv_py crash2 --dev /dev/mapper/cv06 --dm cv06 --state "$SMR_STATE/model.json"
dmesg_check
_show_result
