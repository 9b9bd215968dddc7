#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
# A write whose damage range spans more than 64 chunks of the damage map
# (a did of millions of blocks) is mapped by the worker in steps of 2^21
# blocks, each one hold of the lock, not in one scan with interrupts off
# (docs/dm-caveat.rst, "Large damage ranges"). Checked: the steps (trace
# event cv_damage_step) are each at most 2^21 blocks and cover the range;
# the damage is exact (the live blocks it lost, which blocks read, the
# dump); reads and writes sent while it is being mapped wait for it and
# then complete with their data.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: a damage range of millions of blocks is mapped in steps"
require_cmd dmsetup dd awk
require_target caveat

STEP=2097152			# CV_SCAN_BLOCKS: 64 chunks of 2^15 blocks
NB=$((8 * 1024 * 1024))		# 8 Mi blocks of 512 bytes: 4 GiB
DID=$((6 * 1024 * 1024))	# 192 chunks: the damage range of block 0
big=$(new_big_backing 5) || bail "no backing device"
D=/dev/mapper/cv09
dm_create cv09 "0 $NB caveat $big $DID 0 2 block_size 512" ||
	bail "cannot create the caveat device"

TR=/sys/kernel/tracing
mountpoint -q $TR || mount -t tracefs none $TR 2>/dev/null
EV=$TR/events/dm_caveat/cv_damage_step
[ -d "$EV" ] || bail "no trace event dm_caveat:cv_damage_step (is the new module loaded?)"

# wr BLOCK COUNT: random data, O_DIRECT; the data is kept in $T_WORK.
wr() {
	head -c $(($2 * 512)) /dev/urandom > "$T_WORK/d.$1" &&
	dd if="$T_WORK/d.$1" of=$D bs=512 seek="$1" oflag=direct status=none
}
readable() { dd if=$D of=/dev/null bs=512 count="$2" skip="$1" iflag=direct status=none 2>/dev/null; }
same() { cmp -s <(dd if=$D bs=512 count="$2" skip="$1" iflag=direct status=none) "$T_WORK/d.$1"; }

# Live data in the range of block 0's damage, written in ascending order
# (a write damages only what follows it): near its start, across a step
# boundary of the middle, in the last chunk; and E past the range, for
# the reads sent beside the damaging write. Never-written blocks are
# maybe damaged too (they hold no data the device knows of).
A=100000 B=$((32768 + STEP - 4)) C=$((DID - 10)) E=$((NB - 8192))
for b in $A $B $C $E; do
	check "write 8 blocks at $b" wr $b 8
done
check "block $B's data reads back before" same $B 8
live0=$(cv_field cv09 live_damaged_blocks)
assert_eq "no write so far damaged live blocks" 0 "$live0"

echo > $TR/trace
echo 1 > $EV/enable
mark="cv09-big-$RANDOM"
echo "$mark" > /dev/kmsg
# The damaging write, and beside it reads of E and a write at R that
# must wait for it: both past its range, and R's damage range is R's own
# end of the disk, so no order of them damages what another wrote.
R=$((NB - 4096))
wr 0 1 &
w0=$!
pids=()
wr $R 8 & pids+=($!)
for i in 1 2 3 4 5 6; do
	same $E 8 & pids+=($!)
done
wait $w0
assert_eq "the damaging write completed" 0 $?
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
assert_eq "the write sent beside it completed, and the reads read E's data" 0 $rc
echo 0 > $EV/enable

assert_eq "live blocks lost: the 24 written in its range" 24 \
	"$(cv_field cv09 live_damaged_blocks)"
for b in $A $B $C; do
	check_fail "block $b reads as maybe damaged" readable $b 8
done
check "block 0 reads back" same 0 1
check "the write beside it reads back" same $R 8
want="1+$((E - 1)) $((E + 8))+$((R - E - 8)) $((R + 8))+$((NB - R - 8))"
assert_eq "the dump: only blocks 0, E and R's are valid" "$want" \
	"$(cv_msg cv09 dump)"
if dmesg_since "$mark" | grep -q "damaged 24 live blocks in $A..$((C + 7)) (damage range 1..$DID)"; then
	ok "the kernel log names the damage"
else
	not_ok "the kernel log names the damage" "$(dmesg_since "$mark" | tail -3)"
fi

# The steps: the middle of the range (whole chunks after block 0's and
# before block DID's) counted, then cleared, at most STEP blocks at a time.
out=$(awk -v step=$STEP -v m0=32768 -v m1=$(((DID >> 15) << 15)) '
	/cv_damage_step: cv09 / {
		split($0, f, "blocks="); split(f[2], r, "[.][.]| ")
		a = r[1] + 0; b = r[2] + 0; k = ($0 ~ / cleared/) ? "c" : "n"
		if (b - a + 1 > step) big++
		if (a != next_[k] && !(a == m0 && !seen[k])) gap++
		seen[k] = 1; next_[k] = b + 1; steps[k]++
	}
	END { printf "steps %d/%d big %d gaps %d end %d/%d\n", steps["n"], steps["c"],
		big, gap, next_["n"] == m1, next_["c"] == m1 }' $TR/trace)
nsteps=$(( ( ((DID >> 15) << 15) - 32768 + STEP - 1) / STEP ))
assert_eq "counted and cleared in $nsteps steps each, none over $STEP blocks, no gap" \
	"steps $nsteps/$nsteps big 0 gaps 0 end 1/1" "$out"
echo > $TR/trace

check "remove" dm_remove cv09
dmesg_check
_show_result
