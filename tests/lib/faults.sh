# SPDX-License-Identifier: GPL-2.0
# tests/lib/faults.sh - the media fault checks every model shares
# (tests/test_faults_*.sh; docs/dm-smr.rst and docs/dm-caveat.rst,
# "Media faults").
#
# Source after tests/common.sh and the model's own lib (dm.sh, hm.sh or
# cv.sh), set FL_MODEL to dm, hm or cv, then call fl_suite on a device
# with 16 blocks of 4 KiB that may be rewritten in place. Blocks are
# 4 KiB, sectors 512 bytes; messages take sectors.

FL_ENODATA="No data available"	# BLK_STS_MEDIUM
FL_EIO="Input/output error"	# BLK_STS_IOERR

# fl_read DEV BLOCK [COUNT]: read blocks in one read(2) (O_DIRECT: one
# bio) to stdout.
fl_read() {
	dd if="$1" bs=$(( ${3:-1} * 4096 )) skip=$(( $2 * 4096 )) count=1 \
		iflag=direct,skip_bytes status=none
}

# fl_write DEV BLOCK FILE: write FILE (whole blocks) at BLOCK (O_DIRECT).
fl_write() {
	dd if="$3" of="$1" bs=4k seek="$2" oflag=direct conv=notrunc status=none
}

# fl_try CMD...: "ok" if CMD succeeds, else the errno text of dd's error.
fl_try() {
	local out
	if out=$("$@" 2>&1 >/dev/null); then echo ok; else echo "${out##*: }"; fi
}

# fl_msg DEV WORDS...: a target message; its output (and errors) on stdout.
fl_msg() {
	local n=${1#/dev/mapper/}
	shift
	dmsetup message "$n" 0 "$@" 2>&1
}

# fl_stat DEV FIELD: one status field, through the model's own parser.
fl_stat() {
	case $FL_MODEL in
	dm) dms_stat "$1" "$2" ;;
	hm) hm_stat "$1" "$2" ;;
	cv) cv_field "${1#/dev/mapper/}" "$2" ;;
	esac
}

# fl_assert_blocks DESC DEV BLOCK FILE FILE_BLOCK COUNT: DEV's COUNT blocks
# from BLOCK hold FILE's from FILE_BLOCK.
fl_assert_blocks() {
	local desc=$1 dev=$2 b=$3 f=$4 fb=$5 n=$6 out
	if out=$(cmp <(fl_read "$dev" "$b" "$n" 2>&1) \
		<(dd if="$f" bs=4k skip="$fb" count="$n" status=none) 2>&1); then
		ok "$desc"
	else
		not_ok "$desc" "$dev blocks $b+$n: $out"
	fi
}

# fl_ms CMD...: run CMD, print how long it took in ms (bash clock).
fl_ms() {
	local t0=${EPOCHREALTIME/./} t1
	"$@" > /dev/null 2>&1
	t1=${EPOCHREALTIME/./}
	echo $(( (t1 - t0) / 1000 ))
}

# fl_refuse DEV DESC LOG WORDS...: the message WORDS is refused with
# EINVAL and the kernel log says LOG.
fl_refuse() {
	local dev=$1 desc=$2 log=$3 mark="fl-refuse-$RANDOM$RANDOM" out
	shift 3
	echo "$mark" > /dev/kmsg
	if out=$(fl_msg "$dev" "$@"); then
		not_ok "refused: $desc" "accepted: $*" "$out"
		return
	fi
	if [[ $out != *"Invalid argument"* ]]; then
		not_ok "refused: $desc (EINVAL)" "$out"
	elif dmesg_since "$mark" | grep -q -- "$log"; then
		ok "refused: $desc"
	else
		not_ok "refused: $desc (log: $log)" "$(dmesg_since "$mark" | tail -3)"
	fi
}

# fl_fault_workers: how many fault workqueues exist, counted by their
# rescuer threads ("smr_fault_<dev>"; "kworker/R-smr_f" from 6.10 on,
# where rescuers took a prefix and the name is cut at 15 characters).
fl_fault_workers() {
	ps -e -o comm= | grep -c -e '^smr_fault_' -e '^kworker/R-smr_f'
}

# fl_suite DEV BLOCK: bad sectors, transient faults, delays and bad input
# on DEV, around its blocks BLOCK..BLOCK+15 (rewritable in place). The
# counters are asserted exactly: keep BLOCK away from where blkid looks
# (udev probes the device after each writer closes it; 4 MiB is clear).
fl_suite() {
	local dev=$1 b=$2 cap f g p1 p2 i ms w
	local S=$(( (b + 4) * 8 )) S8=$(( (b + 8) * 8 + 3 ))
	cap=$(blockdev --getsz "$dev")
	f=$T_WORK/fl-data-$RANDOM
	g=$T_WORK/fl-one-$RANDOM
	head -c $((16 * 4096)) /dev/urandom > "$f"
	head -c 4096 /dev/urandom > "$g"
	check "write 16 blocks" fl_write "$dev" "$b" "$f"
	udevadm settle 2>/dev/null
	check "clear_stats" fl_msg "$dev" clear_stats

	# --- bad sectors -----------------------------------------------------
	check "badblocks add one block" fl_msg "$dev" badblocks add $S 8
	check "and one sector inside another block" fl_msg "$dev" badblocks add $S8 1
	assert_eq "badblocks list shows both ranges" "$S+8 $S8+1" \
		"$(fl_msg "$dev" badblocks list)"
	assert_eq "a read of the bad block fails with a medium error" \
		"$FL_ENODATA" "$(fl_try fl_read "$dev" $((b + 4)))"
	assert_eq "a read of the block holding the bad sector fails" \
		"$FL_ENODATA" "$(fl_try fl_read "$dev" $((b + 8)))"
	assert_eq "a read across the bad block fails" \
		"$FL_ENODATA" "$(fl_try fl_read "$dev" "$b" 16)"
	fl_assert_blocks "the blocks before it read back" "$dev" "$b" "$f" 0 4
	fl_assert_blocks "the blocks between read back" "$dev" $((b + 5)) "$f" 5 3
	fl_assert_blocks "the blocks after read back" "$dev" $((b + 9)) "$f" 9 7
	assert_eq "counted: bad_read_errors" 3 "$(fl_stat "$dev" bad_read_errors)"

	check "badblocks on_write fail" fl_msg "$dev" badblocks on_write fail
	assert_eq "on_write fail: a write of the bad block fails with a medium error" \
		"$FL_ENODATA" "$(fl_try fl_write "$dev" $((b + 4)) "$g")"
	assert_eq "on_write fail: the block stays bad" \
		"$FL_ENODATA" "$(fl_try fl_read "$dev" $((b + 4)))"
	check "on_write fail: a write beside it succeeds" fl_write "$dev" $((b + 3)) "$g"
	fl_assert_blocks "  and reads back" "$dev" $((b + 3)) "$g" 0 1
	assert_eq "counted: bad_write_errors" 1 "$(fl_stat "$dev" bad_write_errors)"

	check "badblocks on_write remap" fl_msg "$dev" badblocks on_write remap
	check "on_write remap: a write of the bad block succeeds" \
		fl_write "$dev" $((b + 4)) "$g"
	assert_eq "  it cleared the range it wrote, only that" "$S8+1" \
		"$(fl_msg "$dev" badblocks list)"
	fl_assert_blocks "  the block reads back what was written" "$dev" $((b + 4)) "$g" 0 1
	assert_eq "counted: bad_remaps" 1 "$(fl_stat "$dev" bad_remaps)"

	check "badblocks remove" fl_msg "$dev" badblocks remove $((S8 - 3)) 8
	assert_eq "the table is empty" "" "$(fl_msg "$dev" badblocks list)"
	fl_assert_blocks "removing the range restores the old data" "$dev" $((b + 8)) "$f" 8 1
	check "badblocks add a long range" fl_msg "$dev" badblocks add 0 100000
	assert_eq "  listed whole (the table keeps it in pieces)" "0+100000" \
		"$(fl_msg "$dev" badblocks list)"
	check "badblocks clear" fl_msg "$dev" badblocks clear
	assert_eq "  the table is empty" "" "$(fl_msg "$dev" badblocks list)"
	fl_assert_blocks "  every block reads again" "$dev" $((b + 5)) "$f" 5 3

	# --- transient faults -----------------------------------------------
	check "transient next: 2 reads of one block" \
		fl_msg "$dev" transient next $S 8 2 read
	assert_eq "the first read fails with an I/O error" "$FL_EIO" \
		"$(fl_try fl_read "$dev" $((b + 4)))"
	assert_eq "a read beside it does not count" ok "$(fl_try fl_read "$dev" $((b + 5)))"
	check "a write there does not count (reads only)" fl_write "$dev" $((b + 4)) "$g"
	assert_eq "the second read fails" "$FL_EIO" "$(fl_try fl_read "$dev" $((b + 4)))"
	assert_eq "the third succeeds" ok "$(fl_try fl_read "$dev" $((b + 4)))"
	assert_eq "counted: transient_errors" 2 "$(fl_stat "$dev" transient_errors)"

	p1= p2=
	check "transient prob 50%, seed 7" fl_msg "$dev" transient prob $S 8 500000 7
	for i in $(seq 16); do [ "$(fl_try fl_read "$dev" $((b + 4)))" = ok ]; p1+=$?; done
	check "the same again" fl_msg "$dev" transient prob $S 8 500000 7
	for i in $(seq 16); do [ "$(fl_try fl_read "$dev" $((b + 4)))" = ok ]; p2+=$?; done
	assert_eq "the same seed fails the same I/Os" "$p1" "$p2"
	case $p1 in
	*0*1*|*1*0*) ok "some reads failed and some did not ($p1)" ;;
	*) not_ok "some reads failed and some did not" "$p1" ;;
	esac
	check "transient prob 100% on writes" fl_msg "$dev" transient prob $S 8 1000000 1 write
	assert_eq "a write there fails" "$FL_EIO" "$(fl_try fl_write "$dev" $((b + 4)) "$g")"
	assert_eq "a write beside it succeeds" ok "$(fl_try fl_write "$dev" $((b + 3)) "$g")"
	assert_eq "a read there succeeds" ok "$(fl_try fl_read "$dev" $((b + 4)))"
	check "transient off" fl_msg "$dev" transient off
	assert_eq "a write there succeeds again" ok "$(fl_try fl_write "$dev" $((b + 4)) "$g")"

	# --- delay ------------------------------------------------------------
	# The worker that maps delayed I/O (a workqueue with a rescuer thread)
	# is made by the first delay message, not by every table.
	w=$(fl_fault_workers)
	check "delay reads of one block 3 s" fl_msg "$dev" delay $S 8 3000 read
	assert_eq "the first delay message made the device's fault worker" $((w + 1)) "$(fl_fault_workers)"
	ms=$(fl_ms fl_read "$dev" $((b + 4)))
	if [ "$ms" -ge 3000 ]; then ok "a read there took at least 3 s ($ms ms)"
	else not_ok "a read there took at least 3 s" "$ms ms"; fi
	fl_assert_blocks "  and returned the data" "$dev" $((b + 4)) "$g" 0 1
	ms=$(fl_ms fl_read "$dev" $((b + 6)))
	if [ "$ms" -lt 3000 ]; then ok "a read beside it did not wait ($ms ms)"
	else not_ok "a read beside it did not wait" "$ms ms"; fi
	assert_eq "counted: delayed_ios" 2 "$(fl_stat "$dev" delayed_ios)"
	check "delay off" fl_msg "$dev" delay off
	ms=$(fl_ms fl_read "$dev" $((b + 4)))
	if [ "$ms" -lt 3000 ]; then ok "after delay off a read there does not wait ($ms ms)"
	else not_ok "after delay off a read there does not wait" "$ms ms"; fi

	# --- bad input ----------------------------------------------------------
	fl_refuse "$dev" "a range past the end" "past the end" badblocks add $cap 8
	fl_refuse "$dev" "a range over the end" "past the end" badblocks add $((cap - 4)) 8
	fl_refuse "$dev" "an empty range" "past the end" badblocks add 8 0
	fl_refuse "$dev" "junk after a number" "decimal number" badblocks add 8x 8
	fl_refuse "$dev" "a start that overflows" "past the end" \
		badblocks add 18446744073709551615 2
	fl_refuse "$dev" "a count past 64 bits" "decimal number" \
		badblocks add 8 18446744073709551616
	fl_refuse "$dev" "more ranges than the table holds" "table entries" \
		badblocks add 0 300000
	fl_refuse "$dev" "an unknown badblocks verb" "expected add" badblocks frob
	fl_refuse "$dev" "a missing count" "expected add" badblocks add 8
	fl_refuse "$dev" "on_write maybe" "expected remap or fail" badblocks on_write maybe
	fl_refuse "$dev" "an unknown direction" "expected read, write or rw" \
		transient next $S 8 5 sideways
	fl_refuse "$dev" "a probability over 1" "up to 1000000" \
		transient prob $S 8 1000001 1
	fl_refuse "$dev" "a count over 32 bits" "up to 4294967295" \
		transient next $S 8 4294967296
	fl_refuse "$dev" "a delay over 60 s" "up to 60000" delay $S 8 60001
	fl_refuse "$dev" "a delay without its time" "delay: expected" delay $S 8
	assert_eq "nothing refused was set" \
		"badblocks 0 on_write remap transient off delay off" "$(fl_msg "$dev" faults)"
	check "clear_stats" fl_msg "$dev" clear_stats
	assert_eq "clear_stats zeroes the fault counters" "0 0 0 0 0" \
		"$(for i in bad_read_errors bad_write_errors bad_remaps transient_errors delayed_ios; do fl_stat "$dev" $i; done | xargs)"
}
