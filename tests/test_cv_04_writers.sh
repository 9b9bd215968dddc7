#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 200
# A caveat-aware writer (each extent followed by DID free blocks, as the
# thesis's file system did) loses nothing; a naive writer (packed data,
# in-place overwrites) loses exactly what the rule says.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: aware writer loses nothing, naive writer loses what the rule says"
require_cmd python3 dmsetup
require_target caveat

b1=$(new_backing 32) || bail "no backing device"
dm_create cv04a "0 $((4096 * 8)) caveat $b1 16 6" || bail "cannot create"
cv_py writers --dev /dev/mapper/cv04a --dm cv04a --mode aware --blocks 4096 \
	--did 16 --dnor 6 --count 1500 --seed 41
assert_eq "aware writer: live_damage_writes stays 0" 0 "$(cv_field cv04a live_damage_writes)"

b2=$(new_backing 32) || bail "no backing device"
dm_create cv04b "0 $((4096 * 8)) caveat $b2 16 6" || bail "cannot create"
cv_py writers --dev /dev/mapper/cv04b --dm cv04b --mode naive --blocks 4096 \
	--did 16 --dnor 6 --count 1500 --seed 42
lw=$(cv_field cv04b live_damage_writes)
if [ "$lw" -gt 0 ]; then ok "naive writer: live_damage_writes $lw > 0"
else not_ok "naive writer: live_damage_writes > 0" "got $lw"; fi
if dmesg_since "$SMR_DMESG_MARK" | grep -q "caveat: .*: write of blocks .* damaged .* live blocks in"; then
	ok "live damage is logged with the writer's and the victims' ranges"
else
	not_ok "live damage is logged"
fi
if dmesg_since "$SMR_DMESG_MARK" | grep -q "WARNING:"; then
	not_ok "the damage log carries no WARNING:"
else
	ok "the damage log carries no WARNING:"
fi
# scramble: the damage is made physically real on the backing device.
b3=$(new_backing 16) || bail "no backing device"
dm_create cv04c "0 $((1024 * 8)) caveat $b3 16 6 1 scramble" || bail "cannot create"
head -c 40960 /dev/urandom > "$T_WORK/ten"
check "write blocks 0..9" dd if="$T_WORK/ten" of=/dev/mapper/cv04c bs=40960 count=1 \
	oflag=direct status=none
check "rewrite block 0 (damages 7..16, live 7..9)" dd if="$T_WORK/ten" \
	of=/dev/mapper/cv04c bs=4096 count=1 oflag=direct status=none
assert_eq "live damage counted" 3 "$(cv_field cv04c live_damaged_blocks)"
# The data area starts 1 MiB (256 blocks) into the backing device.
n=$(dd if="$b3" bs=4096 skip=$((256 + 7)) count=10 iflag=direct status=none | tr -d '\333' | wc -c)
assert_eq "damaged blocks 7..16 scrambled on the backing device" 0 "$n"
cmp -s <(dd if="$b3" bs=4096 skip=$((256 + 1)) count=6 iflag=direct status=none) \
	<(dd if="$T_WORK/ten" bs=4096 skip=1 count=6 status=none) &&
	ok "blocks 1..6 untouched by the scramble" ||
	not_ok "blocks 1..6 untouched by the scramble"

dmesg_check
_show_result
