#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
#
# A metadata commit whose last flush fails keeps what it wrote dirty: the
# next commit writes it again, since the failed flush left its durability
# unknown. (Before, the blocks changed slots and were forgotten: the next
# flush wrote nothing and reported success.) For dm-smr's zone table
# (host-managed) and dm-caveat's damage map.
#
# A commit sends the backing disk a flush, its table blocks, a flush. The
# kernel's fail_make_request fault injection fails the third bio: first
# it is lined up (its interval counter runs over all the disk's bios, so
# single reads are sent until one fails), then the commit runs.
#
# Needs CONFIG_FAIL_MAKE_REQUEST and debugfs (the debug kernels of
# shared/kernels/; Debian's own kernels leave it out): skipped without.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "commit: a failed last flush leaves the table dirty (hm, caveat)"
hm_prep
require_target caveat

DBG=/sys/kernel/debug
mountpoint -q "$DBG" || mount -t debugfs none "$DBG" 2>/dev/null
FMR=$DBG/fail_make_request
[ -d "$FMR" ] || skip_all "kernel without fail_make_request (CONFIG_FAIL_MAKE_REQUEST)"
disk=${SMR_SCRATCH_DISK#/dev/}
MIF=/sys/block/$disk/make-it-fail
[ -f "$MIF" ] || skip_all "no $MIF"

# fault_off: no more injected failures (keeps $?, for the exit trap).
fault_off() {
	local rc=$?
	echo 0 > "$MIF"
	echo 0 > "$FMR/probability"
	echo 1 > "$FMR/interval"
	return $rc
}
trap 'fault_off; _cleanup_test' EXIT

# writes: write requests completed by the scratch disk so far.
writes() { awk '{ print $5 }' "/sys/block/$disk/stat"; }

# arm: the 3rd bio from now to the scratch disk fails, and no other.
arm() {
	local i
	echo 0 > "$FMR/verbose"
	echo 0 > "$FMR/space"
	echo 3 > "$FMR/interval"
	echo 100 > "$FMR/probability"
	echo 1 > "$FMR/times"
	echo 1 > "$MIF"
	# Line the counter up: single reads until one fails.
	for i in 1 2 3; do
		dd if="$SMR_SCRATCH_DISK" of=/dev/null bs=4096 count=1 iflag=direct \
			status=none 2> /dev/null || break
	done
	[ "$(cat "$FMR/times")" = 0 ] || { diag "fault injection did not fire"; return 1; }
	echo 1 > "$FMR/times"
}

# case NAME DEV: DEV has an unflushed change to its table. Its next
# flush fails (the commit's last flush fails); the flush after that
# succeeds and writes the table again: more writes reach the disk than
# for a third flush, which has nothing to commit.
case_() {
	local name=$1 dev=$2 out rc w0 w1 w2
	check "$name: the fault lined up" arm
	out=$(sync "$dev" 2>&1); rc=$?
	assert_errno "$name: a flush whose commit's last flush fails fails" \
		"Input/output error" "$out" $rc
	assert_eq "$name: the fault fired" 0 "$(cat "$FMR/times")"
	fault_off
	w0=$(writes)
	check "$name: the next flush succeeds" sync "$dev"
	w1=$(writes)
	check "$name: a third flush succeeds" sync "$dev"
	w2=$(writes)
	if [ $((w1 - w0)) -gt $((w2 - w1)) ]; then
		ok "$name: the next flush writes the table again ($((w1 - w0)) writes, then $((w2 - w1)))"
	else
		not_ok "$name: the next flush writes the table again" \
			"$((w1 - w0)) writes, then $((w2 - w1)) for a flush with nothing to commit"
	fi
}

ZS=$HM_ZS
back=$(new_backing 80) || bail "no backing device"
n=t_${TID}_hm
D=/dev/mapper/$n
hm_create "$n" $((8 * ZS)) "$back" $ZS format || bail "cannot create the hm device"
hm_put h1 "$D" $ZS 8 "hm: write 4 KiB to zone 1"
case_ hm "$D"
check "hm: remove" dm_remove "$n"
check "hm: create again" hm_create "$n" $((8 * ZS)) "$back" $ZS
assert_cw "hm: zone 1 kept its write pointer" "$D" $ZS "cl 8"
hm_assert_read "hm: and its data" "$D" $ZS "$h1"

cback=$(new_backing 16) || bail "no backing device"
dm_create t_${TID}_cv "0 $((1024 * 8)) caveat $cback 16 6 1 format" ||
	bail "cannot create the caveat device"
C=/dev/mapper/t_${TID}_cv
check "caveat: write blocks 0..9" dd if=/dev/urandom of="$C" bs=40960 count=1 \
	oflag=direct status=none
case_ caveat "$C"

dmesg_check
_show_result
