#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
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

# scramble, writes in flight: a write that lands in the damage range of an
# earlier write still waiting for its scramble must not be scrambled over.
# DID = DNOR = 4: blocks 100..101 damage block 105; a one-block write to
# 105 damages nothing, so it needs no commit and nothing holds it back but
# the target. The metadata area (first MiB) of the backing device is slow
# to write (6 s; longer by SMR_TIMEOUT_SCALE on a debug kernel, where
# even the status polls below can take seconds), so the earlier write's
# commit, and so its scramble, is still to come when the later write is
# issued.
S=${SMR_TIMEOUT_SCALE:-1}
require_target delay
raw=$(new_backing 16) || bail "no backing device"
dm_create cv04slow "0 2048 linear $raw 0
2048 $((16 * 2048 - 2048)) linear $raw 2048" || bail "cannot create the backing device"
dm_create cv04d "0 $((1024 * 8)) caveat /dev/mapper/cv04slow 4 4 2 scramble format" ||
	bail "cannot create"
head -c 4096 /dev/urandom > "$T_WORK/b105a"
head -c 4096 /dev/urandom > "$T_WORK/b105b"
head -c 8192 /dev/urandom > "$T_WORK/b100"
check "write block 105" dd if="$T_WORK/b105a" of=/dev/mapper/cv04d bs=4096 seek=105 \
	oflag=direct status=none
check "the metadata area becomes slow" backing_reload cv04slow "0 2048 delay $raw 0 0 $raw 0 $((6000 * S)) $raw 0 0
2048 $((16 * 2048 - 2048)) linear $raw 2048"
w0=$(cv_field cv04d writes)
dd if="$T_WORK/b100" of=/dev/mapper/cv04d bs=8192 seek=50 oflag=direct status=none &
w1=$!
for _ in $(seq 1 $((50 * S))); do
	[ "$(cv_field cv04d writes)" -gt "$w0" ] && break
	sleep 0.2
done
if [ "$(cv_field cv04d writes)" -gt "$w0" ] && kill -0 $w1 2> /dev/null; then
	ok "blocks 100..101 issued, waiting for their commit and scramble"
else
	not_ok "blocks 100..101 issued, waiting for their commit and scramble" \
		"writes $(cv_field cv04d writes) (before: $w0)"
fi
check "rewrite block 105 while blocks 100..101 wait for their scramble" \
	dd if="$T_WORK/b105b" of=/dev/mapper/cv04d bs=4096 seek=105 oflag=direct status=none
wait $w1 && ok "write blocks 100..101 (damages block 105)" ||
	not_ok "write blocks 100..101 (damages block 105)"
cmp -s <(dd if=/dev/mapper/cv04d bs=4096 skip=105 count=1 iflag=direct status=none) \
	"$T_WORK/b105b" && ok "block 105 reads the later write, not the earlier write's scramble" ||
	not_ok "block 105 reads the later write, not the earlier write's scramble" \
		"first bytes: $(dd if=/dev/mapper/cv04d bs=4096 skip=105 count=1 iflag=direct status=none 2>&1 | od -An -tx1 | head -1)"
cmp -s <(dd if=/dev/mapper/cv04d bs=4096 skip=100 count=2 iflag=direct status=none) \
	"$T_WORK/b100" && ok "blocks 100..101 read back" || not_ok "blocks 100..101 read back"

# No memory in map(): a write that needs pages for the damage map (its
# chunk's run of blocks split into a bitmap) is then mapped by the worker,
# which may wait for memory, instead of looping in map(). The module's
# test hook fail_map_allocs makes map()'s next N page allocations fail;
# the naive writer's damage must still match the model exactly.
FAULT=$(test_hook dm-caveat fail_map_allocs) || bail "no test hook fail_map_allocs"
b5=$(new_backing 32) || bail "no backing device"
dm_create cv04e "0 $((4096 * 8)) caveat $b5 16 6" || bail "cannot create"
echo 1000 > "$FAULT"
cv_py writers --dev /dev/mapper/cv04e --dm cv04e --mode naive --blocks 4096 \
	--did 16 --dnor 6 --count 400 --seed 43
left=$(cat "$FAULT")
echo 0 > "$FAULT"
if [ "$left" -lt 1000 ]; then
	ok "map() found no memory $((1000 - left)) times; the worker mapped those writes"
else
	not_ok "map() found no memory at least once" "fail_map_allocs still $left"
fi

dmesg_check
_show_result
