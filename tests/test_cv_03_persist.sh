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

# A reloaded table takes the damage map when it goes live, not when it is
# loaded: writes through the old table in between are not lost (they
# read back instead of failing as maybe damaged), and its later commits
# are not shadowed by the old table's.
cv_put() {	# FIRST COUNT FILE: write COUNT blocks at FIRST, durable
	dd if="$3" of=/dev/mapper/cv03 bs=4096 seek="$1" count="$2" \
		iflag=fullblock oflag=direct conv=notrunc,fsync status=none
}
cv_get() {	# FIRST COUNT: read COUNT blocks at FIRST
	dd if=/dev/mapper/cv03 bs=4096 skip="$1" count="$2" iflag=direct status=none
}
head -c $((32 * 4096)) /dev/urandom > "$T_WORK/r1"
head -c $((11 * 4096)) /dev/urandom > "$T_WORK/r2"
head -c 4096 /dev/urandom > "$T_WORK/r3"
check "write blocks 100..131 and flush" cv_put 100 32 "$T_WORK/r1"
check "load the same table (not live yet)" sh -c "echo '$TABLE' | dmsetup reload cv03"
check "write blocks 200..210 through the live table" cv_put 200 11 "$T_WORK/r2"
check "write block 110 through the live table" cv_put 110 1 "$T_WORK/r3"
check "resume: the loaded table goes live" dmsetup resume cv03
if cv_get 200 11 | cmp -s - "$T_WORK/r2"; then ok "blocks 200..210 read back after the resume"
else not_ok "blocks 200..210 read back after the resume" "$(cv_msg cv03 query 205 2>&1)"; fi
if cv_get 110 1 | cmp -s - "$T_WORK/r3"; then ok "block 110 reads back after the resume"
else not_ok "block 110 reads back after the resume" "$(cv_msg cv03 dump 2>&1 | head -c 200)"; fi
check "remove" dm_remove cv03
check "create again" dm_create cv03 "$TABLE"
if cv_get 200 11 | cmp -s - "$T_WORK/r2"; then ok "blocks 200..210 read back after remove/create"
else not_ok "blocks 200..210 read back after remove/create" "$(cv_msg cv03 dump 2>&1 | head -c 200)"; fi

dmesg_check
_show_result
