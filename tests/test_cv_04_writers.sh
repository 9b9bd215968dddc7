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
dmesg_check
_show_result
