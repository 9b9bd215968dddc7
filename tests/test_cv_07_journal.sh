#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
# The damage journal (docs/dm-caveat.rst, "Crash safety"): a write that
# damages valid blocks costs one journal block, not a whole commit; the
# journal is replayed when the metadata commits after it were lost; after
# a replay the next damage waits for a whole commit; journal blocks are
# checked like any input (a torn one is skipped, an impossible record
# refuses the load); a version 1 device (no journal) still loads.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: the damage journal"
require_cmd python3 dmsetup dd
require_target caveat

ONDISK="python3 $SMR_ROOT/tests/lib/cv_ondisk.py"
raw=$(new_backing 16) || bail "no backing device"
rsect=$(blockdev --getsz "$raw")
# A dm-linear between the target and the disk, so its writes can be made
# to fail (error target), as a crash would lose them.
dm_create cv07b "0 $rsect linear $raw 0" || bail "cannot create the backing device"
B=/dev/mapper/cv07b
D=/dev/mapper/cv07
TABLE="0 $((2048 * 8)) caveat $B 16 4"

# wr BLOCK [SYNC]: write one 4 KiB block of random data (O_DIRECT; with
# SYNC, fsync after it: a flush, so a whole commit).
wr() {
	dd if=/dev/urandom of=$D bs=4k count=1 seek="$1" oflag=direct \
		${2:+conv=fsync} status=none
}
readable() { dd if=$D of=/dev/null bs=4k count=1 skip="$1" iflag=direct status=none 2>/dev/null; }
status_of() { echo "commits $(cv_field cv07 commits) journal $(cv_field cv07 journal_writes)"; }

dm_create cv07 "$TABLE" || bail "cannot create the caveat device"

# --- a damaging write costs one journal block, no commit ----------------
wr 10 sync
c0=$(cv_field cv07 commits) j0=$(cv_field cv07 journal_writes)
wr 5
assert_eq "block 5's write damaged block 10: one journal write, no commit" \
	"commits $c0 journal $((j0 + 1))" "$(status_of)"
check_fail "block 10 reads as maybe damaged" readable 10

# --- the commits after it are lost: the journal alone keeps the damage --
# The backing fails every write from here: the commit at removal is lost,
# as in a power cut after the journal write.
check "backing starts failing" backing_reload cv07b "0 $rsect error"
dm_remove cv07 >/dev/null 2>&1
check "backing works again" backing_reload cv07b "0 $rsect linear $raw 0"
mark="cv07-replay-$RANDOM"
echo "$mark" > /dev/kmsg
check "create again over the lost commit" dm_create cv07 "$TABLE"
check_fail "block 10 still reads as maybe damaged (journal replayed)" readable 10
assert_eq "no block is valid (block 5's write was never flushed)" 0 \
	"$(cv_field cv07 valid_blocks)"
if dmesg_since "$mark" | grep -q "caveat: .*: damage journal: 1 page updates replayed"; then
	ok "the kernel log reports the replay"
else
	not_ok "the kernel log reports the replay" "$(dmesg_since "$mark" | tail -5)"
fi

# After a replay the ring holds damage no page has yet: the next damage
# takes a whole commit, and only then is the journal written again.
wr 30
c1=$(cv_field cv07 commits) j1=$(cv_field cv07 journal_writes)
wr 25
assert_eq "first damage after a replay: a whole commit" \
	"commits $((c1 + 1)) journal $j1" "$(status_of)"
wr 40
wr 35
assert_eq "then the journal again" "commits $((c1 + 1)) journal $((j1 + 1))" \
	"$(status_of)"
check "remove" dm_remove cv07

# --- journal blocks are input: torn, impossible, valid ------------------
sbf=$T_WORK/sb jrf=$T_WORK/jr
dm_create cv07 "0 $((2048 * 8)) caveat $B 16 4 1 format" || bail "cannot format"
wr 100 sync
check "remove" dm_remove cv07
dd if=$B of="$sbf" bs=4k count=1 iflag=direct status=none
jsec=$($ONDISK journal-sector "$sbf")
put_jr() { dd if="$jrf" of=$B bs=512 seek="$jsec" oflag=direct conv=notrunc status=none; }

$ONDISK journal "$sbf" "$jrf" 0 100 1 1000 --bad-crc && put_jr
check "a torn journal block is skipped" dm_create cv07 "$TABLE"
check "block 100 is valid" readable 100
check "remove" dm_remove cv07

$ONDISK journal "$sbf" "$jrf" 0 2048 1 1000 && put_jr
mark="cv07-bad-$RANDOM"
echo "$mark" > /dev/kmsg
check_fail "a record past the end refuses the load" dm_create cv07 "$TABLE"
dmsetup remove cv07 >/dev/null 2>&1
if dmesg_since "$mark" | grep -q "damage journal block 0 holds an impossible record"; then
	ok "the kernel log names the bad journal block"
else
	not_ok "the kernel log names the bad journal block" "$(dmesg_since "$mark" | tail -5)"
fi

$ONDISK journal "$sbf" "$jrf" 0 100 1 1000 && put_jr
check "a valid record loads" dm_create cv07 "$TABLE"
check_fail "block 100 is maybe damaged (the record is newer than its page)" readable 100
check "remove" dm_remove cv07

# --- a version 1 device: no journal, whole commits ----------------------
dm_create cv07 "0 $((2048 * 8)) caveat $B 16 4 1 format" || bail "cannot format"
wr 200 sync
dump1=$(cv_msg cv07 dump)
check "remove" dm_remove cv07
dd if=$B of="$sbf" bs=4k count=1 iflag=direct status=none
$ONDISK super-v1 "$sbf" "$sbf.v1" &&
	dd if="$sbf.v1" of=$B bs=4k count=1 oflag=direct conv=notrunc status=none
mark="cv07-v1-$RANDOM"
echo "$mark" > /dev/kmsg
check "a version 1 device loads" dm_create cv07 "$TABLE"
assert_eq "its damage map is the same" "$dump1" "$(cv_msg cv07 dump)"
if dmesg_since "$mark" | grep -q "on-disk format version 1, without a damage journal"; then
	ok "the kernel log says it has no journal"
else
	not_ok "the kernel log says it has no journal" "$(dmesg_since "$mark" | tail -5)"
fi
c2=$(cv_field cv07 commits)
wr 195
assert_eq "its damage takes a whole commit" "commits $((c2 + 1)) journal 0" "$(status_of)"
check_fail "block 200 reads as maybe damaged" readable 200

dmesg_check
_show_result
