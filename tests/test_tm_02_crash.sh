#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# BOOTS: 2
# TIMEOUT: 300
# SLOW: 1
# The timing model across a guest crash (sysrq-b): nothing flushed is
# lost and nothing hangs when the crash comes with modelled I/O queued.
# Boot 1: a caveat device with the 7200 rpm timing takes the crash test's
# model-checked writes (tests/lib/cv_model.py crash1: writes, a flush,
# more writes not flushed), while a second timed device (drive-managed)
# has 32 random writes in flight behind its model; then the crash.
# Boot 2: the caveat map is never falsely clean and every flushed write
# is there (crash2); the drive-managed device loads and reads back the
# data it acknowledged before a flush, and a clean kernel log.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "timing: a crash with modelled I/O queued"
require_cmd python3 dmsetup fio
require_target caveat
require_target smr

K="rpm 7200 seek_t2t_us 1000 seek_avg_us 8500 seek_full_us 17000 od_mbps 65 id_mbps 31"
cb=$(new_backing 64) || bail "no backing device"
db=$(new_backing 200) || bail "no backing device"
CVT="0 $((8192 * 8)) caveat $cb 16 6 2 unshingled 128 timing 12 $K"
DMT="0 $((128 * 2048)) smr $db drive-managed 16384 2 cache_sectors 16384 timing 14 $K cache_at 500"
D=/dev/mapper/tm02dm

if [ "$SMR_BOOT" = 1 ]; then
	dm_create tm02cv "$CVT" || bail "cannot create the caveat device"
	dm_create tm02dm "$DMT" || bail "cannot create the drive-managed device"
	# Known data on the drive-managed device, flushed: it must survive.
	ref=$(write_data $D $((8 << 20)) $((1 << 20))) || bail "write_data"
	cp "$ref" "$SMR_STATE/dm-ref"
	# Writes kept in flight behind the model until the crash.
	fio --name=q --filename=$D --rw=randwrite --bs=4k --offset=32M --size=64M \
		--direct=1 --ioengine=libaio --iodepth=32 --time_based --runtime=600 \
		--output=/dev/null &
	sleep 2
	cv_py crash1 --dev /dev/mapper/tm02cv --dm tm02cv --state "$SMR_STATE/model.json" \
		--blocks 8192 --did 16 --dnor 6 --unshingled 128 --seed "${CV_SEED:-607}" --writes 80
	busy=$(dmsetup status tm02dm | awk '{ print $31 }')
	if [ "${busy:-0}" -gt 0 ]; then
		ok "boot 1: the drive-managed device's model is busy ($busy ms) at the crash"
	else
		not_ok "boot 1: the drive-managed device's model is busy at the crash" "status: $(dmsetup status tm02dm)"
	fi
	crash_guest
fi
check "create the caveat device after the crash" dm_create tm02cv "$CVT"
cv_py crash2 --dev /dev/mapper/tm02cv --dm tm02cv --state "$SMR_STATE/model.json"
check "create the drive-managed device after the crash" dm_create tm02dm "$DMT"
assert_data "the drive-managed device's flushed data survived" $D "$SMR_STATE/dm-ref" $((8 << 20))
dmesg_check
_show_result
