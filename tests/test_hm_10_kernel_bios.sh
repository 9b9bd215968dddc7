#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
# SMOKE: 1
# (In the smoke set, so the newest kernel runs it too: there its writes,
# from the per-cpu bio cache as 7.x's bio_alloc() makes them, panicked
# the machine until dm-smr-hm.c stopped copying REQ_ALLOC_CACHE into its
# clones; on 6.1 the same bug passed unseen.)
#
# Host-managed dm-smr: bios that only in-kernel users of the zoned device
# /dev/smrhmN send (issue 27, items 1 and 3), through the test-only module
# tests/kmod/smr-test-bio.ko (make test-modules):
#  - a write with REQ_PREFLUSH and data, with writes pipelined behind it
#    in the same zone: all succeed and read back (they used to fail: the
#    flushed write was checked against the write pointer only after the
#    flush, so the writes behind it found the pointer behind them);
#  - zone management at the disk's end and beyond: refused with an error,
#    nothing else changes, and the kernel log stays clean (the zone
#    number was not range checked);
#  - (item 4) rmmod racing with the last close of /dev/smrhmN, whose
#    ->free_disk runs after the block layer dropped the module reference
#    the open took: module exit now waits for it. A race, so a stress
#    (ROUNDS rounds) that fails on a kernel report, not a proof.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: in-kernel bios on the zoned device: preflush pipelines, zone ops out of range"
hm_prep

KO=$SMR_ROOT/tests/kmod/smr-test-bio.ko
[ -f "$KO" ] || skip_all "tests/kmod/smr-test-bio.ko is not built (make test-modules)"
[ "$(modinfo -F vermagic "$KO" | awk '{ print $1 }')" = "$(uname -r)" ] ||
	skip_all "smr-test-bio.ko is built for another kernel (make test-modules KVER=$(uname -r))"
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug ||
	skip_all "no debugfs"
lsmod | grep -q '^smr_test_bio ' || insmod "$KO" || bail "insmod $KO failed"
RUN=/sys/kernel/debug/smr_test_bio/run

ZS=8192			# 4 MiB zones
NZ=4
back=$(new_backing 24) || bail "no backing device"
n=t_${TID}_a
D=/dev/mapper/$n
hm_create "$n" $((NZ * ZS)) "$back" $ZS format || bail "cannot create the device"
zd=
# The engine this device maps to: the one smrhm disk dm holds for it.
for s in /sys/block/dm-*/slaves/smrhm*; do
	[ -e "$s" ] || continue
	[ "$(cat "${s%/slaves/*}/dm/name")" = "$n" ] && zd=/dev/${s##*/}
done
[ -b "$zd" ] || bail "no zoned device under $n"

# tb CMD: run one command of the test module on $zd; prints its results.
tb() {
	local out
	exec 3<>"$zd" || return 1
	echo "3 $*" > "$RUN" 2>"$T_WORK/tb.err"
	out=$?
	exec 3>&-
	[ $out = 0 ] || { cat "$T_WORK/tb.err"; return 1; }
	cat "$RUN"
}

# pattern K: the byte the module fills write K with, as two hex digits.
pattern() { printf '%02x' $(( ($1 ^ 0xa5) & 0xff )); }

# reads_pattern SECTOR K: the block at SECTOR of $D holds write K's byte.
reads_pattern() {
	[ "$(hm_read "$D" "$1" 8 | od -An -tx1 -v | tr -s ' \n' '\n' | sort -u | grep -v '^$')" = "$(pattern "$2")" ]
}

# ---- item 1: a preflush write with writes pipelined behind it ----------
# Zone 1, at its start: four 4 KiB writes, the first with PREFLUSH (and
# FUA), submitted back to back without waiting.
res=$(tb write $ZS 8 4 preflush fua)
assert_eq "preflush write and three pipelined writes all succeed" "0 0 0 0" "$res"
assert_eq "zone 1's write pointer after them" "oi 32" "$(hm_cw "$D" $ZS)"
bad=0
for k in 0 1 2 3; do
	reads_pattern $((ZS + 8 * k)) $k || bad=$((bad + 1))
done
assert_eq "the four writes read back in place" 0 "$bad"
# Again in the middle of the zone, and with PREFLUSH alone.
res=$(tb write $((ZS + 32)) 8 3 preflush)
assert_eq "a preflush write mid-zone and two behind it succeed" "0 0 0" "$res"
assert_eq "zone 1's write pointer" "oi 56" "$(hm_cw "$D" $ZS)"
assert_eq "no write pointer errors" 0 "$(hm_stat "$D" wp_errors)"
# A preflush write off the write pointer still fails, and alone.
res=$(tb write $((ZS + 64)) 8 2 preflush)
assert_eq "a preflush write off the pointer fails, and the write behind it" "-5 -5" "$res"
assert_eq "zone 1 unchanged by it" "oi 56" "$(hm_cw "$D" $ZS)"

# ---- item 3: zone management past the last zone -------------------------
END=$((NZ * ZS))
before=$(hm_report "$D" | md5sum)
for op in reset finish open close; do
	res=$(tb $op $END)
	assert_eq "$op at the disk's end is refused" "-5" "$res"
	res=$(tb $op $((END + 4 * ZS)))
	assert_eq "$op four zones past the end is refused" "-5" "$res"
done
assert_eq "no zone changed" "$before" "$(hm_report "$D" | md5sum)"
res=$(tb reset $ZS)
assert_eq "a reset of a real zone still works" "0" "$res"
assert_eq "zone 1 empty after it" "em 0" "$(hm_cw "$D" $ZS)"

dm_remove "$n" > /dev/null 2>&1
rmmod smr_test_bio 2>/dev/null

# ---- item 4: module exit against the last close of the zoned device -----
ROUNDS=3
if ! lsmod | grep -q '^dm_smr '; then
	skip "rmmod against the last close" "dm-smr is not a loaded module"
else
	fails=0
	for r in $(seq 1 $ROUNDS); do
		hm_create "$n" $((NZ * ZS)) "$back" $ZS || { fails=$((fails + 1)); break; }
		zd=
		for s in /sys/block/dm-*/slaves/smrhm*; do
			[ -e "$s" ] && [ "$(cat "${s%/slaves/*}/dm/name")" = "$n" ] && zd=/dev/${s##*/}
		done
		exec 4< "$zd"
		dmsetup remove --retry "$n" > /dev/null 2>&1 || fails=$((fails + 1))
		# rmmod spins until the close below lets it through.
		# (The subshell closes its copy of fd 4 first: the close below,
		# or this one, is the last.)
		( exec 4<&-; for _ in $(seq 1 400); do rmmod dm_smr 2>/dev/null && exit 0; done; exit 1 ) &
		rm_pid=$!
		exec 4<&-
		wait $rm_pid || fails=$((fails + 1))
		lsmod | grep -q '^dm_smr ' ||
			insmod "$SMR_ROOT/dm-smr/dm-smr.ko" || { fails=$((fails + 1)); break; }
	done
	assert_eq "$ROUNDS rounds of rmmod against the last close of /dev/smrhmN" 0 $fails
fi
dmesg_check
_show_result
