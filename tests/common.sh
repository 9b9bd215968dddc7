# SPDX-License-Identifier: GPL-2.0
# tests/common.sh - helpers sourced by every tests/test_*.sh (kselftest style).
#
# A test looks like:
#
#	#!/bin/bash
#	# TIMEOUT: 120          (optional, seconds; default in tests/settings)
#	# BOOTS: 2              (optional: crash test, see crash_guest below)
#	. "$(dirname "$0")/common.sh"
#	_prep_test "dm-linear keeps what was written"
#	require_cmd fio
#	dev=$(new_backing 256)               # fresh zeroed region of /dev/vda
#	run_fio "verify 64M" --filename="$dev" --rw=randwrite --bs=4k \
#		--size=64M --verify=crc32c --do_verify=1
#	assert_eq "size" 268435456 "$(blockdev --getsize64 "$dev")"
#	_show_result
#
# Results: every ok/not_ok/skip prints one TAP line and is counted in a
# file, so helpers work from subshells ($(...), pipelines) too.
# _show_result prints the plan and exits 0 (pass), 1 (fail) or 4 (skip).
# A test that made no assertion fails: it cannot pass vacuously.
#
# The harness (tests/lib/guest-suite.sh) runs each test in the VM with:
#   SMR_ROOT   repo root             SMR_WORK   writable scratch dir (cwd)
#   SMR_BOOT   this boot (1..)       SMR_BOOTS  boots the test gets
#   SMR_STATE  dir kept across the boots of one test (on the host)
#   SMR_DMESG_MARK  kmsg marker written just before the test started
#   SMR_BIG_SIZE    size in bytes of /dev/vdb (the huge sparse disk)
# and after it scans dmesg, unmounts and removes every dm device.
# This file only defines functions and variables: sourcing it does nothing.

KSFT_PASS=0
KSFT_FAIL=1
KSFT_SKIP=4

SMR_ROOT=${SMR_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
SMR_BOOT=${SMR_BOOT:-1}
SMR_BOOTS=${SMR_BOOTS:-1}

# Kernel log lines that fail a test (extended regexp). Kept here so the
# harness and the tests (test_00_harness.sh checks it) use the same list.
SMR_DMESG_BAD='WARNING:|BUG:|kernel BUG at|Oops|KASAN|UBSAN|possible circular locking|possible recursive locking|inconsistent lock state|suspicious RCU|kmemleak|suspected memory leak|general protection fault|Call Trace|blocked for more than [0-9]+ seconds|rcu_sched self-detected stall|detected stall'

# Bugs of the kernel under test, not of the targets, that the suite's file
# system tests run into. A report of one of them, on a kernel the bug
# affects, fails no test: dmesg_drop_known removes it from the log before
# the scans, and the harness names it in the test's log instead. Any other
# report in the same log still fails. One bug per line, four fields split by
# '|' (so no '|' inside a field):
#   FIXED_IN    the first major.minor whose code has the fix; older
#               kernels are affected;
#   WARNING_AT  ERE matching the "WARNING: CPU: .. at FILE:LINE FUNC" line
#               that starts the bug's report;
#   MESSAGE     ERE for the line the bug prints right after its report
#               (within 5 lines; empty: none is needed);
#   WHAT        the bug, its upstream fix, how it was shown not to be ours.
# Each entry is described in docs/testing.md ("Known kernel bugs").
SMR_KNOWN_KERNEL_BUGS='6.7|at fs/btrfs/block-group\.c:[0-9]+ btrfs_remove_block_group|BTRFS warning \(device [^)]*\): block group [0-9]+ is removed before metadata write out|btrfs zoned: zone finish moves alloc_offset but not meta_write_pointer, so removing an unused metadata block group warns (upstream "btrfs: zoned: update meta_write_pointer on zone finish"; same warning on zoned null_blk)'

# Stacks the kernel dumps on purpose (dump_stack(), not a WARNING or BUG)
# when a file system meets an I/O error the suite causes: a power cut,
# a media fault. Such a dump fails no test; any other "Call Trace" still
# does. One dump per line, three fields split by '|':
#   FRAME    ERE for the first frame after dump_stack_lvl/dump_stack:
#            the function that chose to dump (no '|' in a field: one
#            line per function);
#   MESSAGE  ERE for the line that must follow the dump's "</TASK>"
#            within 5 lines (the dump is kept without it);
#   WHAT     what it is.
# f2fs (7.3, not 6.1 or 6.12) dumps the stack where it stops checkpoints,
# then names the reason: 2, 3 and 6 are a meta page's read, a write and a
# flush that failed (enum stop_cp_reason, include/linux/f2fs_fs.h); the
# other reasons are f2fs's own findings and still fail. Described in
# docs/testing.md ("Known kernel bugs").
SMR_KNOWN_KERNEL_DUMPS='f2fs_stop_checkpoint\+|F2FS-fs \([^)]*\): Stopped filesystem due to reason: [236]$|f2fs stopped its checkpoints on an I/O error the test caused (reason 2, 3 or 6), and dumped the stack
f2fs_handle_critical_error\+|F2FS-fs \([^)]*\): Stopped filesystem due to reason: [236]$|f2fs stopped its checkpoints on an I/O error the test caused (reason 2, 3 or 6), and dumped the stack (from f2fs_handle_critical_error, where the compiler kept it out of line)'

# Kernel log lines after which the debug kernel's checkers are off for
# the rest of the boot: KASAN reports only its first finding, and a report
# turns lockdep off. tests/vm-run, which does not source this file,
# reads this line as it stands (keep it one single-quoted line).
SMR_CHECKS_OFF='BUG: KASAN|UBSAN:|Disabling lock debugging due to kernel taint'

# Scratch disks attached by tests/vm-run.
SMR_SCRATCH_DISK=${SMR_SCRATCH_DISK:-/dev/vda}
SMR_BIG_DISK=${SMR_BIG_DISK:-/dev/vdb}
# Backing regions start here and are never handed out twice in one boot.
SMR_ALLOC_DIR=${SMR_ALLOC_DIR:-/tmp/smr-alloc}

# ---------------------------------------------------------------- TAP ---

# _record RESULT DESC...: append one result and print its TAP line.
# Builtins only: a test records hundreds of results, and under TCG each
# fork and exec costs tens of milliseconds (a wc here was 6 % of a
# profiled boot's CPU time).
_record() {
	local res=$1 lines n
	shift
	set -- "${@//#/\\#}"	# a bare '#' would start a TAP directive
	mapfile -t lines < "$T_WORK/.tap-results"
	n=$(( ${#lines[@]} + 1 ))
	echo "$res" >> "$T_WORK/.tap-results"
	# When each check ended (microseconds), for _show_result's slowest
	# steps. A file, not a variable: checks run in subshells too.
	echo "${EPOCHREALTIME//[!0-9]/} $n ${1:-}" >> "$T_WORK/.tap-times"
	case $res in
	pass) echo "ok $n $*" ;;
	fail) echo "not ok $n $*" ;;
	skip) echo "ok $n $1 # SKIP ${*:2}" ;;
	esac
}

# diag MSG...: a TAP comment line.
diag() { local l; while IFS= read -r l; do echo "# $l"; done <<< "$*"; }

ok()     { _record pass "$@"; }
# not_ok DESC [DETAIL...]: a failed check; DETAIL lines become comments.
not_ok() { _record fail "$1"; [ $# -gt 1 ] && diag "${@:2}"; return 0; }
# skip DESC REASON: one skipped check (the test may still pass on others).
skip()   { _record skip "$1" "${2:-}"; }

# skip_all REASON: the whole test cannot run here (exit 4).
skip_all() {
	echo "1..0 # SKIP $*"
	_SMR_DONE=1
	exit $KSFT_SKIP
}

# bail MSG: stop the test now, counted as a failure.
bail() {
	not_ok "bail out: $*"
	_show_result
}

# _helper_error MSG: a helper failed (maybe inside a subshell): the test
# fails at _show_result even if the caller ignored the return code.
_helper_error() {
	echo "# helper error: $*" >&2
	echo "$*" >> "$T_WORK/.helper-errors"
}

# _prep_test DESCRIPTION: call once, first.
_prep_test() {
	T_NAME=$(basename "$0" .sh)
	TID=${T_NAME#test_}
	T_DESC="$*"
	if [ -z "${SMR_WORK:-}" ]; then
		SMR_WORK=$(mktemp -d "/tmp/smr-work.$TID.XXXXXX")
	fi
	T_WORK=$SMR_WORK
	mkdir -p "$T_WORK"
	: > "$T_WORK/.tap-results"
	echo "${EPOCHREALTIME//[!0-9]/} 0 start" > "$T_WORK/.tap-times"
	: > "$T_WORK/.helper-errors"
	: > "$T_WORK/.dm-devices"
	T_MNT=${SMR_MNT:-/tmp/smr-mnt/$TID}
	mkdir -p "$T_MNT"
	SMR_STATE=${SMR_STATE:-$T_WORK/state}
	mkdir -p "$SMR_STATE"
	if [ -z "${SMR_DMESG_MARK:-}" ]; then
		SMR_DMESG_MARK="smr-test-mark-$TID-$$-$RANDOM"
		echo "$SMR_DMESG_MARK" > /dev/kmsg 2>/dev/null || true
	fi
	cd "$T_WORK" || exit $KSFT_FAIL
	_SMR_DONE=0
	trap _cleanup_test EXIT
	echo "TAP version 13"
	diag "$T_NAME: $T_DESC (boot $SMR_BOOT of $SMR_BOOTS)"
}

# _cleanup_test: undo what the helpers set up (mounts under $T_MNT, dm
# devices made by new_backing/dm_create, newest first). Runs on EXIT.
_cleanup_test() {
	local rc=$? m d i x f mnts=() names=()
	local -A live=() done_=()
	trap - EXIT
	if [ "$_SMR_DONE" != 1 ]; then
		# Exited without _show_result/skip_all (set -e, plain exit):
		# report what was counted but never turn it into a pass.
		diag "test exited ($rc) before _show_result"
		[ "$rc" = 0 ] && rc=$KSFT_FAIL
	fi
	# Read with bash alone: under TCG a process costs a tenth of a
	# second, and this runs after every test (docs/testing.md, "What a
	# process costs in the guest").
	if [ -n "${T_MNT:-}" ]; then
		# Mounts under T_MNT in the order they were made; undone
		# newest (deepest) first.
		while read -r x m x; do
			[[ $m == "$T_MNT"* ]] && mnts+=("$m")
		done < /proc/self/mounts
		for ((i = ${#mnts[@]} - 1; i >= 0; i--)); do
			umount "${mnts[i]}" 2>/dev/null || umount -l "${mnts[i]}"
		done
	fi
	if [ -s "${T_WORK:-/nonexistent}/.dm-devices" ]; then
		# The list names a device each time a test made it: remove
		# each one still there once, newest first (the live ones by
		# name from sysfs, not a dmsetup info per line).
		for f in /sys/block/dm-*/dm/name; do
			[ -r "$f" ] && read -r d < "$f" && live[$d]=1
		done
		mapfile -t names < "$T_WORK/.dm-devices"
		for ((i = ${#names[@]} - 1; i >= 0; i--)); do
			d=${names[i]}
			[ -n "$d" ] && [ -n "${live[$d]:-}" ] && [ -z "${done_[$d]:-}" ] || continue
			done_[$d]=1
			dmsetup remove --retry "$d" >/dev/null 2>&1 ||
				diag "cleanup: could not remove dm device $d"
		done
	fi
	if [ -s "${T_WORK:-/nonexistent}/.nullb-devices" ]; then
		while IFS= read -r d; do
			[ -d "$d" ] || continue
			echo 0 > "$d/power" 2>/dev/null
			rmdir "$d" 2>/dev/null || diag "cleanup: could not remove $d"
		done < "$T_WORK/.nullb-devices"
	fi
	exit "$rc"
}

# _show_slowest: the test's time and its three slowest steps (a step is
# the work between a check and the one before it), to say where a slow
# test spends its time without timing it by hand.
_show_slowest() {
	local now=${EPOCHREALTIME//[!0-9]/} t n desc t0= prev d k j s= secs
	local top_d=() top_n=() top_s=()
	[ -r "$T_WORK/.tap-times" ] || return 0
	# The three longest steps, kept in order as the lines are read (in
	# bash: this runs at the end of every test, and processes cost).
	while read -r t n desc; do
		if [ -z "$t0" ]; then t0=$t prev=$t; continue; fi
		d=$((t - prev)) prev=$t
		for ((k = 0; k < 3; k++)); do
			[ -z "${top_d[k]:-}" ] || [ "$d" -gt "${top_d[k]}" ] && break
		done
		[ $k -lt 3 ] || continue
		for ((j = 2; j > k; j--)); do
			[ -z "${top_d[j - 1]:-}" ] && continue
			top_d[j]=${top_d[j - 1]} top_n[j]=${top_n[j - 1]} top_s[j]=${top_s[j - 1]}
		done
		top_d[k]=$d top_n[k]=$n top_s[k]=${desc:0:50}
	done < "$T_WORK/.tap-times"
	for ((k = 0; k < ${#top_d[@]}; k++)); do
		_usecs secs "${top_d[k]}"
		printf -v s '%s%s%d %s (%s s)' "$s" "${s:+; }" "${top_n[k]}" "${top_s[k]}" "$secs"
	done
	_usecs secs $((now - ${t0:-$now}))
	printf '# time: %s s; slowest steps: %s\n' "$secs" "$s"
}

# _usecs VAR N: set VAR to N microseconds as seconds, one decimal.
_usecs() {
	local tenths=$((($2 + 50000) / 100000))
	printf -v "$1" '%d.%d' $((tenths / 10)) $((tenths % 10))
}

# _show_result: print the plan and totals, exit with the kselftest code.
_show_result() {
	local f=$T_WORK/.tap-results pass fail skip total rc
	local r
	pass=0 fail=0 skip=0
	while read -r r; do
		case $r in
		pass) pass=$((pass + 1)) ;;
		fail) fail=$((fail + 1)) ;;
		skip) skip=$((skip + 1)) ;;
		esac
	done < "$f"
	total=$((pass + fail + skip))
	if [ -s "$T_WORK/.helper-errors" ]; then
		_record fail "helpers reported errors"
		diag "$(cat "$T_WORK/.helper-errors")"
		fail=$((fail + 1)); total=$((total + 1))
	fi
	if [ "$total" = 0 ]; then
		_record fail "test made no assertion"
		fail=1; total=1
	fi
	echo "1..$total"
	echo "# Totals: pass:$pass fail:$fail skip:$skip"
	_show_slowest
	if [ "$fail" -gt 0 ]; then
		rc=$KSFT_FAIL
	elif [ "$pass" = 0 ]; then
		rc=$KSFT_SKIP
	else
		rc=$KSFT_PASS
	fi
	_SMR_DONE=1
	exit $rc
}

# ------------------------------------------------------------ checks ---

# require_cmd CMD...: skip the test if a command is missing.
require_cmd() {
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip_all "$c is not installed"
	done
}

# test_hook MODULE NAME: the path of a module's test hook in debugfs
# (/sys/kernel/debug/dm-smr/fail_ext_allocs, ...; dm-smr/dm-smr-test.h),
# mounting debugfs first if it is not; fails, saying so, if the hook is
# missing (callers: H=$(test_hook ...) || bail "...").
test_hook() {
	local d=/sys/kernel/debug
	[ -d "$d/$1" ] || mountpoint -q "$d" || mount -t debugfs none "$d" 2> /dev/null
	if [ ! -e "$d/$1/$2" ]; then
		echo "no test hook $d/$1/$2 (debugfs, module $1)" >&2
		return 1
	fi
	echo "$d/$1/$2"
}

# require_target NAME: skip if dm target NAME is not available and its
# module was not built; FAIL if the module was built but did not load
# (a broken module must not hide behind skips).
require_target() {
	local t=$1 mod ko
	dmsetup targets 2>/dev/null | grep -q "^$t " && return 0
	case $t in
	smr) mod=dm-smr ;;
	caveat) mod=dm-caveat ;;
	*) mod=dm-$t ;;
	esac
	ko=$SMR_ROOT/$mod/$mod.ko
	if [ -f "$ko" ]; then
		not_ok "dm target $t is available" \
			"$ko exists but target '$t' is not registered" \
			"$(cat /tmp/smr-suite/modules.err 2>/dev/null)"
		_show_result
	fi
	modprobe "$mod" 2>/dev/null &&
		dmsetup targets 2>/dev/null | grep -q "^$t " && return 0
	skip_all "dm target $t not available ($ko not built)"
}

# run_checks WHAT CMD...: run a checker program (tests/lib/cv_model.py,
# tests/lib/crashpoints.py); its "CHECK PASS desc" and "CHECK FAIL desc |
# detail" lines become TAP results, every other line a diagnostic, line
# by line as it prints them (so a long check shows progress in the
# test's log; results recorded in the pipeline's subshell count). A
# non-zero exit (a Python error) is a failed check "WHAT ran to the end".
run_checks() {
	local what=$1 line rc
	shift
	"$@" 2>&1 | while IFS= read -r line; do
		case $line in
		"CHECK PASS "*) ok "${line#CHECK PASS }" ;;
		"CHECK FAIL "*)
			line=${line#CHECK FAIL }
			not_ok "${line%% | *}" "${line#* | }" ;;
		"# "*) diag "${line#\# }" ;;
		*) diag "$line" ;;
		esac
	done
	rc=${PIPESTATUS[0]}
	[ "$rc" = 0 ] || not_ok "$what ran to the end" "exit $rc"
	return "$rc"
}

# assert_eq DESC EXPECTED ACTUAL
assert_eq() {
	if [ "$2" = "$3" ]; then ok "$1"
	else not_ok "$1" "expected: '$2'" "actual:   '$3'"; fi
}

# assert_ne DESC UNEXPECTED ACTUAL
assert_ne() {
	if [ "$2" != "$3" ]; then ok "$1"
	else not_ok "$1" "did not expect: '$2'"; fi
}

# check DESC CMD...: ok if CMD succeeds; its output is shown on failure.
check() {
	local desc=$1 out rc; shift
	out=$("$@" 2>&1); rc=$?
	if [ $rc = 0 ]; then ok "$desc"
	else not_ok "$desc" "command failed ($rc): $*" "$out"; fi
	return $rc
}

# check_fail DESC CMD...: ok if CMD fails (e.g. a write off the write
# pointer must be rejected).
check_fail() {
	local desc=$1 out rc; shift
	out=$("$@" 2>&1); rc=$?
	if [ $rc != 0 ]; then ok "$desc"
	else not_ok "$desc" "command succeeded but should fail: $*" "$out"; fi
	[ $rc != 0 ]
}

# ---------------------------------------------------------- data I/O ---

# write_data DEV OFFSET_BYTES LEN_BYTES: write LEN random bytes at OFFSET
# with O_DIRECT; prints the path of a file holding what was written.
# OFFSET and LEN must be multiples of 4096.
write_data() {
	local dev=$1 off=$2 len=$3 f
	f=$(mktemp "$T_WORK/data.XXXXXX")
	head -c "$len" /dev/urandom > "$f"
	if ! dd if="$f" of="$dev" bs=1M oflag=direct,seek_bytes seek="$off" \
		conv=notrunc,fsync status=none; then
		_helper_error "write_data: dd to $dev at $off ($len bytes) failed"
		return 1
	fi
	echo "$f"
}

# read_data DEV OFFSET_BYTES LEN_BYTES: copy bytes from DEV (O_DIRECT
# when 4 KiB aligned, so the page cache cannot hide what the target
# returns) to stdout.
read_data() {
	local dev=$1 off=$2 len=$3 flags=skip_bytes,count_bytes
	if [ $((off % 4096)) = 0 ] && [ $((len % 4096)) = 0 ]; then
		flags=$flags,direct
	fi
	dd if="$dev" bs=1M iflag=$flags skip="$off" count="$len" status=none
}

# assert_data DESC DEV EXPECTED_FILE [OFFSET_BYTES]: DEV holds the bytes
# of EXPECTED_FILE at OFFSET.
assert_data() {
	local desc=$1 dev=$2 exp=$3 off=${4:-0} len got
	if [ ! -s "$exp" ]; then
		not_ok "$desc" "expected-data file '$exp' is missing or empty"
		return 1
	fi
	len=$(stat -c %s "$exp")
	got=$(mktemp "$T_WORK/read.XXXXXX")
	if ! read_data "$dev" "$off" "$len" > "$got"; then
		not_ok "$desc" "read of $len bytes at $off from $dev failed"
		return 1
	fi
	if cmp -s "$exp" "$got"; then
		ok "$desc"; rm -f "$got"
	else
		not_ok "$desc" "data mismatch on $dev at offset $off:" \
			"$(cmp "$exp" "$got" 2>&1 | head -3)" \
			"$(cmp -l "$exp" "$got" 2>/dev/null | wc -l) bytes differ"
		return 1
	fi
}

# assert_zero DESC DEV OFFSET_BYTES LEN_BYTES: the range reads as zeros.
assert_zero() {
	local desc=$1 dev=$2 off=$3 len=$4 n
	n=$(read_data "$dev" "$off" "$len" | tr -d '\0' | wc -c)
	assert_eq "$desc" 0 "$n"
}

# run_fio DESC FIO-ARGS...: run fio in the scratch dir (fio writes verify
# state files to its cwd); ok if it exits 0, else not_ok with its output.
# Adds --direct=1 --ioengine=libaio --group_reporting unless given.
run_fio() {
	local desc=$1 log rc extra=(); shift
	[[ " $* " == *" --direct="* ]] || extra+=(--direct=1)
	[[ " $* " == *" --ioengine="* ]] || extra+=(--ioengine=libaio)
	log=$(mktemp "$T_WORK/fio.XXXXXX.log")
	(cd "$T_WORK" && fio --name="${FIO_NAME:-job}" "${extra[@]}" \
		--group_reporting "$@") > "$log" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		ok "$desc"
	else
		not_ok "$desc" "fio exited $rc: fio $*" "$(tail -n 40 "$log")"
	fi
	return $rc
}

# ----------------------------------------------------- backing devices ---

# _alloc DISK SECTORS: reserve SECTORS on DISK, 1 MiB aligned, never
# reused in this boot. Prints the start sector. Deterministic: the Nth
# call in a fresh boot returns the same start, which crash tests rely on.
_alloc() {
	local disk=$1 len=$2 key start end size
	key=$SMR_ALLOC_DIR/$(basename "$disk")
	mkdir -p "$SMR_ALLOC_DIR"
	size=$(blockdev --getsz "$disk" 2>/dev/null) || {
		_helper_error "cannot read size of $disk"; return 1; }
	(
		flock 9
		start=$(cat "$key" 2>/dev/null || echo 2048)
		start=$(( (start + 2047) / 2048 * 2048 ))
		end=$((start + len))
		if [ "$end" -gt "$size" ]; then
			_helper_error "$disk full: $len sectors wanted at $start, disk has $size"
			exit 1
		fi
		echo "$end" > "$key"
		echo "$start"
	) 9> "$key.lock"
}

_backing_on() {
	local disk=$1 sectors=$2 start n name
	start=$(_alloc "$disk" "$sectors") || return 1
	n=$(( $(grep -c . "$T_WORK/.dm-devices") + 1 ))
	name=t_${TID}_$n
	if ! echo "0 $sectors linear $disk $start" | dmsetup create "$name"; then
		_helper_error "dmsetup create $name (linear $disk $start) failed"
		return 1
	fi
	echo "$name" >> "$T_WORK/.dm-devices"
	# No udevadm settle (see dm_create).
	# A fresh region of a fresh sparse file reads as zeros; discard it
	# anyway so this holds even if the disk was reused. Not in a later
	# boot of a crash test: there the region holds what boot 1 left.
	if [ "$SMR_BOOT" = 1 ]; then
		blkdiscard "/dev/mapper/$name" 2>/dev/null ||
			diag "blkdiscard /dev/mapper/$name failed (ignored)" >&2
	fi
	echo "/dev/mapper/$name"
}

# new_backing SIZE_MB: a dm-linear device over a fresh region of the
# scratch disk (/dev/vda, 24 GiB). Prints /dev/mapper/t_<test>_<n>.
# In boot N>1 of a crash test the same calls return the same regions,
# with boot 1's data in them.
new_backing() {
	_backing_on "$SMR_SCRATCH_DISK" $(( $1 * 2048 ))
}

# new_big_backing SIZE_GB: same, on the huge sparse disk (/dev/vdb,
# SMR_BIG_SIZE bytes, 11 TiB unless the host file system could not).
new_big_backing() {
	_backing_on "$SMR_BIG_DISK" $(( $1 * 2048 * 1024 ))
}

# new_nullb SIZE_MB [ATTR=VALUE...]: a memory-backed null_blk (blk-mq,
# 4 KiB blocks) made through configfs, with its other attributes as
# given (e.g. discard=0); prints its /dev path. Removed at cleanup, after
# the dm devices. For tests that need a backing device with properties
# the scratch disk lacks, or a blk-mq queue of its own under the target.
new_nullb() {
	local mb=$1 nb a
	shift
	# configfs may be a module: null_blk loads it, then it can be mounted.
	modprobe null_blk nr_devices=0 || return
	mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config || return
	nb=/sys/kernel/config/nullb/smr-$TID-$RANDOM
	mkdir "$nb" || return
	echo "$nb" >> "$T_WORK/.nullb-devices"
	echo "$mb" > "$nb/size" && echo 1 > "$nb/memory_backed" &&
		echo 4096 > "$nb/blocksize" || return
	for a in "$@"; do
		echo "${a#*=}" > "$nb/${a%%=*}" || return
	done
	echo 1 > "$nb/power" || return
	udevadm settle 2>/dev/null
	# Named after its configfs directory since 5.17, nullb<index> before.
	if [ -b "/dev/${nb##*/}" ]; then
		echo "/dev/${nb##*/}"
	else
		echo "/dev/nullb$(cat "$nb/index")"
	fi
}

# drop_nullb DEV: remove a null_blk new_nullb made, before cleanup, to
# give its memory back (a path that is not such a device is left alone).
drop_nullb() {
	local nb d
	[ -s "$T_WORK/.nullb-devices" ] || return 0
	while IFS= read -r nb; do
		[ -d "$nb" ] || continue
		d=/dev/${nb##*/}
		[ -b "$d" ] || d=/dev/nullb$(cat "$nb/index")
		[ "$d" = "$1" ] || continue
		echo 0 > "$nb/power" && rmdir "$nb"
		return
	done < "$T_WORK/.nullb-devices"
}

# dm_create NAME TABLE: create a dm device (removed at cleanup, before
# the backing devices under it). Returns dmsetup's status.
dm_create() {
	local name=$1 table=$2
	echo "$table" | dmsetup create "$name" || return
	echo "$name" >> "$T_WORK/.dm-devices"
	# No udevadm settle: dmsetup has waited for udev already. Its resume
	# carries a cookie that udev's last dm rule (95-dm-notify.rules)
	# releases, and udev handles a device's events in order, so the
	# create's own event is done too. A settle cost 0.15-0.5 s under TCG
	# (docs/testing.md, "What a process costs in the guest").
	return 0
}

# backing_reload DEV TABLE: load TABLE (lines) into DEV, a device made by
# new_backing, through suspend, load and resume: to make parts of it fail
# or slow under a device stacked on it, whose I/O waits meanwhile.
# Returns dmsetup's status.
backing_reload() {
	local n=${1#/dev/mapper/}
	dmsetup suspend "$n" && dmsetup load "$n" --table "$2" && dmsetup resume "$n"
}

# dm_remove NAME: remove a device made by dm_create; returns dmsetup's
# status (a test may assert on it).
dm_remove() {
	dmsetup remove --retry "$1"
}

# ------------------------------------------------------------- dmesg ---

# dmesg_drop_known [SEEN [KVER]]: copy kernel log lines from stdin to
# stdout, leaving out the reports of SMR_KNOWN_KERNEL_BUGS that affect
# kernel KVER (default: the running one). A report ("cut here" to "end
# trace") is left out only when its first WARNING line matches the bug,
# nothing else in it is a report of its own (another WARNING, a BUG, an
# Oops, KASAN, UBSAN, a general protection fault), and the bug's message
# follows within 5 lines of its end (then that line goes too). A stack
# dump of SMR_KNOWN_KERNEL_DUMPS ("CPU: N ... Comm:" to "</TASK>", no
# report inside it, its first frame the dump's, its message within 5
# lines after it) is left out the same way; the lines after it stay.
# Anything else is copied as it came. Appends the WHAT of each bug or
# dump left out to file SEEN, if given.
dmesg_drop_known() {
	KB="$SMR_KNOWN_KERNEL_BUGS" KD="$SMR_KNOWN_KERNEL_DUMPS" \
	awk -v kver="${2:-$(uname -r)}" -v seen="$1" '
	function older(v, fixed,   a, b) {
		split(v, a, /[.-]/); split(fixed, b, ".")
		return a[1] + 0 < b[1] + 0 || (a[1] + 0 == b[1] + 0 && a[2] + 0 < b[2] + 0)
	}
	function flush(   i) { for (i = 0; i < nb; i++) print buf[i]; nb = 0; pend = 0 }
	BEGIN {
		n = split(ENVIRON["KB"], lines, "\n")
		for (i = 1; i <= n; i++) {
			if (split(lines[i], f, "|") != 4 || !older(kver, f[1])) continue
			nk++; at[nk] = f[2]; msg[nk] = f[3]; what[nk] = f[4]
		}
		n = split(ENVIRON["KD"], lines, "\n")
		for (i = 1; i <= n; i++) {
			if (split(lines[i], f, "|") != 3) continue
			nd++; frame[nd] = f[1]; dmsg[nd] = f[2]; dwhat[nd] = f[3]
		}
		other = "BUG:|Oops|KASAN|UBSAN|general protection fault"
	}
	# A stack dump: buffered to its end, left out if a known one.
	indump {
		buf[nb++] = $0
		if ($0 ~ other || /WARNING: |cut here/) dfor = 1
		if (!dk && !dfor && /^(\[[ 0-9.]+\] )? +[a-z_]/ && !/ \? / && !/dump_stack/) {
			for (k = 1; k <= nd; k++) if ($0 ~ frame[k]) dk = k
			if (!dk) dfor = 1
		}
		if (/<\/TASK>/ || nb > 200) {
			indump = 0
			if (!dk || dfor || nb > 200) flush()
			else { dn = nb; dpend = 5 }
		}
		next
	}
	dpend {
		buf[nb++] = $0
		if ($0 ~ dmsg[dk]) {
			for (i = dn; i < nb; i++) print buf[i]
			nb = 0; dpend = 0; dhit[dk] = 1
		} else if (--dpend == 0) flush()
		next
	}
	/-+\[ cut here \]-+/ { flush(); inrep = 1; known = 0; warned = 0; foreign = 0 }
	inrep {
		buf[nb++] = $0
		if (/WARNING: /) {
			if (warned++) foreign = 1
			else for (k = 1; k <= nk; k++) if ($0 ~ at[k]) known = k
		}
		if ($0 ~ other) foreign = 1
		if (/---\[ end trace/) {
			inrep = 0
			if (!known || foreign) flush()
			else if (msg[known] == "") { nb = 0; hit[known] = 1 }
			else { pend = 5; pk = known }
		}
		next
	}
	pend {
		if ($0 ~ msg[pk]) { nb = 0; pend = 0; hit[pk] = 1; next }
		buf[nb++] = $0
		if (--pend == 0) flush()
		next
	}
	nd && /(^|\] )CPU: [0-9]+ (UID: [0-9]+ )?PID: [0-9]+ Comm: / {
		flush(); indump = 1; dk = 0; dfor = 0; buf[nb++] = $0; next
	}
	{ print }
	END {
		flush()
		if (seen != "") {
			for (k = 1; k <= nk; k++) if (hit[k]) print what[k] >> seen
			for (k = 1; k <= nd; k++) if (dhit[k]) print dwhat[k] >> seen
		}
	}'
}

# dmesg_find_errors [SEEN]: read kernel log lines on stdin, print the ones
# that match SMR_DMESG_BAD, known kernel bugs left out (dmesg_drop_known,
# which names those it left out in file SEEN, if given). Exit 0 if there
# was at least one.
dmesg_find_errors() {
	dmesg_drop_known "${1:-}" | grep -E -- "$SMR_DMESG_BAD"
}

# kmsg_mark [TAG]: write a unique marker line to the kernel log and print
# it, for dmesg_since.
kmsg_mark() {
	local m="${1:-mark}-$BASHPID-$RANDOM$RANDOM"
	echo "$m" > /dev/kmsg
	echo "$m"
}

# dmesg_since MARK: the kernel log after the last line containing MARK
# (the whole log if MARK is not found, e.g. the ring buffer wrapped).
dmesg_since() {
	dmesg 2>/dev/null | awk -v m="$1" '
		index($0, m) { n = 0; found = 1; next }
		{ buf[n++] = $0 }
		END { for (i = 0; i < n; i++) print buf[i] }'
}

# dm_refuse NAME DESC TABLE LOG: creating NAME with TABLE (one line or
# several) is refused and the kernel log says LOG (one ok/not_ok
# "refused: DESC").
dm_refuse() {
	local mark="$1-refuse-$RANDOM"
	echo "$mark" > /dev/kmsg
	if printf '%s\n' "$3" | dmsetup create "$1" > /dev/null 2>&1; then
		dmsetup remove "$1"
		not_ok "refused: $2" "the table was accepted: $3"
		return
	fi
	if dmesg_since "$mark" | grep -q -- "$4"; then
		ok "refused: $2"
	else
		not_ok "refused: $2 (log: $4)" "$(dmesg_since "$mark" | tail -3)"
	fi
}

# dmesg_check DESC: one assertion that the kernel log is clean since the
# test started (the harness checks this after every test anyway).
dmesg_check() {
	local hits
	hits=$(dmesg_since "$SMR_DMESG_MARK" | dmesg_find_errors)
	if [ -z "$hits" ]; then ok "${1:-no kernel warnings}"
	else not_ok "${1:-no kernel warnings}" "$hits"; fi
}

# ------------------------------------------------------------ crashes ---

# crash_guest: end the VM now, like a power cut (crash tests, BOOTS > 1).
# Before that: if this boot already failed a check, report normally
# instead (the failure must not be lost in the crash); save the kernel
# log and any warnings in SMR_STATE so the next boot fails on them.
crash_guest() {
	local hits
	if grep -q '^fail$' "$T_WORK/.tap-results" || [ -s "$T_WORK/.helper-errors" ]; then
		diag "boot $SMR_BOOT failed a check: not crashing"
		_show_result
	fi
	dmesg > "$SMR_STATE/dmesg-boot$SMR_BOOT.log" 2>/dev/null
	hits=$(dmesg_since "$SMR_DMESG_MARK" | dmesg_find_errors)
	[ -n "$hits" ] && echo "$hits" > "$SMR_STATE/dmesg-boot$SMR_BOOT.bad"
	echo "crashed at $(date +%s) after $(grep -c . "$T_WORK/.tap-results") checks" \
		> "$SMR_STATE/crashed-boot$SMR_BOOT"
	sync
	echo 1 > /proc/sys/kernel/sysrq
	echo b > /proc/sysrq-trigger
	sleep 30
	bail "sysrq-b did not end the VM"
}
