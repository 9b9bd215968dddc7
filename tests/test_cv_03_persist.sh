#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SMOKE: 1
# TIMEOUT: 240
# The damage map and the data persist across remove/create, table reload
# and module reload; lost metadata pages read as "all maybe damaged".
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: the damage map persists"
require_cmd python3 dmsetup
require_target caveat

SEED=${CV_SEED:-3033}
backing=$(new_backing 64) || bail "no backing device"
TABLE="0 $((8192 * 8)) caveat $backing 16 6 2 unshingled 64"
dm_create cv03 "$TABLE" || bail "cannot create the caveat device"
cv_py random --dev /dev/mapper/cv03 --dm cv03 --blocks 8192 --did 16 --dnor 6 \
	--unshingled 64 --seed "$SEED" --writes 80 --reads 120 --checkpoint 0 \
	--state "$T_WORK/model.json"
dump1=$(cv_msg cv03 dump)
valid1=$(cv_field cv03 valid_blocks)
diag "valid blocks: $valid1, dump: ${dump1:0:200}"

check "remove" dm_remove cv03
check "create again" dm_create cv03 "$TABLE"
assert_eq "dump identical after remove/create" "$dump1" "$(cv_msg cv03 dump)"
cv_py verify --dev /dev/mapper/cv03 --dm cv03 --state "$T_WORK/model.json" \
	--desc "after remove/create"

check "reload the same table" sh -c "echo '$TABLE' | dmsetup reload cv03 && dmsetup resume cv03"
assert_eq "dump identical after reload" "$dump1" "$(cv_msg cv03 dump)"

check "remove before module reload" dm_remove cv03
if [ -z "$(dmsetup table --target caveat 2>/dev/null | grep -v 'No devices')" ]; then
	check "rmmod dm-caveat" rmmod dm_caveat
	check "insmod dm-caveat" insmod "$SMR_ROOT/dm-caveat/dm-caveat.ko"
else
	skip "module reload" "other caveat devices exist"
fi
check "create after module reload" dm_create cv03 "$TABLE"
assert_eq "dump identical after module reload" "$dump1" "$(cv_msg cv03 dump)"
cv_py verify --dev /dev/mapper/cv03 --dm cv03 --state "$T_WORK/model.json" \
	--desc "after module reload"

# Both copies of bitmap page 0 destroyed: the safe state, all maybe damaged.
check "remove" dm_remove cv03
head -c 8192 /dev/urandom | dd of="$backing" bs=4096 seek=1 count=2 \
	oflag=direct conv=notrunc iflag=fullblock status=none
check "create with a destroyed bitmap page" dm_create cv03 "$TABLE"
assert_eq "a lost bitmap page reads as all maybe damaged" "0+8192" "$(cv_msg cv03 dump)"

# format starts over.
check "remove" dm_remove cv03
dm_create cv03 "$TABLE" || true
dm_remove cv03
check "create with format" dm_create cv03 "${TABLE% 2 unshingled 64} 3 unshingled 64 format"
assert_eq "format: all maybe damaged" "0+8192" "$(cv_msg cv03 dump)"

dmesg_check
_show_result
