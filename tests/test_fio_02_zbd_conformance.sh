#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 3600
# SLOW: 1
# LANE: 2
# (About 6 minutes: make check runs it in its second lane, after the
# crash boots, to even the lanes out.)
#
# fio's own zoned block device conformance script, t/zbd/test-zbd-support
# from fio's source (scripts/setup-fio-source.sh fetches and builds it;
# Debian's fio package does not ship it), run against a host-managed
# dm-smr device, with the fio built from that source. Each of its test
# cases is one TAP line here: ok when it passed, a skip with its reason
# (SCSI-only cases, cases for regular block devices, cases that need 8
# conventional zones), not ok when it failed or never ran.
#
# Geometry: 4 MiB zones, 4 conventional (16 MiB: enough for case 14's
# random writes to conventional zones) and 136 sequential zones (cases 3
# and 4 need 130), max_open 16. test-zbd-support runs 5.5-6.5 minutes
# under TCG: eight of its cases are time-based (30 s each).
#
# Case 54 (randrw with verify_backlog) is not run: fio 3.33 fails it on
# any zoned device that checks write pointers. As shipped, with
# --experimental_verify=1, fio turns a write io_u into a verify read after
# the engine prepared it as a write, so libaio submits a write behind the
# write pointer and the device refuses it (here a zone_error event names
# it); without that option fio asserts in zbd_replay_write_order()
# (zbd.c:1508) and double-frees, with the target having refused nothing.
# Later fio versions rework the case. It is reported as a skip.
#
# test-zbd-support logs to files beside itself and runs the fio two
# directories up ($(dirname $0)/../../fio); the guest sees the host's
# file system read-only, so its two scripts are copied to the scratch
# directory next to a link to the built fio. The logs of all cases are
# kept in SMR_STATE (the results directory's state/<test>/ on the host),
# gzipped when large (the cases with --debug=zbd).
#
# Environment (when running the test by hand in a guest): SMR_FIO_SRC
# (default /var/lib/dm-smr/fio-src), SMR_ZBD_TESTS (case numbers to run,
# e.g. "5 12 48"; default all), SMR_ZBD_ARGS (more test-zbd-support
# options, e.g. "-z" for --debug=zbd or "-u" for io_uring).

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "fio t/zbd/test-zbd-support on a host-managed device"
FIO_SRC=${SMR_FIO_SRC:-/var/lib/dm-smr/fio-src}
if [ ! -x "$FIO_SRC/fio" ] || [ ! -x "$FIO_SRC/t/zbd/test-zbd-support" ]; then
	skip_all "no fio source tree built in $FIO_SRC (run scripts/setup-fio-source.sh on the host)"
fi
hm_prep
require_cmd timeout gzip

ZS=8192				# 4 MiB zones
CONV=4
NZ=140				# 4 conventional + 136 sequential: 560 MiB
MAXOPEN=16
LEN=$((NZ * ZS))
# test-zbd-support gets this long; the rest of TIMEOUT is for reporting.
BUDGET=3300

# The test-zbd-support tree: its scripts, and the fio it runs.
suite=$T_WORK/fio-src
script=$suite/t/zbd/test-zbd-support
mkdir -p "$suite/t/zbd"
cp "$FIO_SRC/t/zbd/test-zbd-support" "$FIO_SRC/t/zbd/functions" "$suite/t/zbd/"
ln -s "$FIO_SRC/fio" "$suite/fio"
diag "fio: $("$suite/fio" --version) from $FIO_SRC"

# The script sets the device's I/O scheduler to deadline and exits when it
# cannot. A bio-based device such as a dm device has no scheduler: 6.1
# still shows a queue/scheduler file that accepts any write, 6.12 shows
# none, and the write fails ("Permission denied"). In the copy,
# set_io_scheduler does nothing when the file is absent (later fio
# versions write it only when it is writable).
# shellcheck disable=SC2016 # the script's own text, not expanded here
sched_line='    echo "$sched" >"/sys/block/$dev/queue/scheduler"'
# shellcheck disable=SC2016
sched_skip='    [ -e "/sys/block/$dev/queue/scheduler" ] || return 0'
n=$(grep -cxF -- "$sched_line" "$script")
[ "$n" = 1 ] || bail "test-zbd-support: set_io_scheduler is not as expected ($n matches)"
awk -v l="$sched_line" -v s="$sched_skip" '$0 == l { print s } { print }' \
	"$script" > "$script.new" && mv "$script.new" "$script" && chmod +x "$script"

back=$(new_backing $((LEN / 2048 + 4))) || bail "no backing device"
name=t_${TID}_hm
dev=/dev/mapper/$name
check "create $((LEN / 2048)) MiB, 4 MiB zones, $CONV conventional, max_open $MAXOPEN" \
	hm_create "$name" $LEN "$back" $ZS conv_zones $CONV max_open $MAXOPEN format ||
	bail "cannot create the device"
assert_eq "queue/max_open_zones" $MAXOPEN "$(hm_sysfs "$dev" max_open_zones)"
sched=$(hm_sysfs "$dev" scheduler 2>/dev/null)
diag "queue/scheduler: ${sched:-absent}"

# The cases to expect: those asked for, else every testN() of the script.
if [ -n "${SMR_ZBD_TESTS:-}" ]; then
	read -ra cases <<< "$SMR_ZBD_TESTS"
else
	mapfile -t cases < <(sed -n 's/^test\([0-9][0-9]*\)().*/\1/p' "$script" | sort -n)
fi
read -ra args <<< "${SMR_ZBD_ARGS:-}"
# Every case but 54 (see above), named with -t.
FIO_BUG=54
for n in "${cases[@]}"; do [ "$n" = $FIO_BUG ] || args+=(-t "$n"); done

out=$T_WORK/test-zbd-support.out
start=$(date +%s)
timeout --kill-after=20 $BUDGET "$script" "${args[@]}" "$dev" > "$out" 2>&1
rc=$?
diag "test-zbd-support exited $rc after $(( $(date +%s) - start )) s"
diag "$(grep -v '^Running test' "$out")"

# describe N: "case N" and the first sentence of the comment above testN().
describe() {
	local d
	d=$(awk -v t="test$1()" '
		/^#/ { c = c (c ? " " : "") substr($0, 3); next }
		index($0, t) == 1 { print c; exit }
		{ c = "" }' "$script")
	d=${d%%. *}
	d=${d%.}
	echo "case $(printf %02d "$1")${d:+: ${d:0:90}}"
}

# Keep every case's log; fio's --debug=zbd output makes some of them big.
logs=$script.log
cp "$out" "$SMR_STATE/"
for log in "$logs".*; do
	[ -f "$log" ] || continue
	if [ "$(stat -c %s "$log")" -gt 1048576 ]; then
		gzip -c "$log" > "$SMR_STATE/$(basename "$log").gz"
	else
		cp "$log" "$SMR_STATE/"
	fi
done

# One TAP line per case, from the last line of its log (test-zbd-support
# appends PASS, SKIP or FAIL to it; a SKIP's reason is the line before).
for n in "${cases[@]}"; do
	desc=$(describe "$n")
	log=$logs.$n
	if [ "$n" = $FIO_BUG ]; then
		skip "$desc" "not run: fio 3.33 fails it on any zoned device (see the header)"
		continue
	fi
	status=$(tail -n 1 "$log" 2>/dev/null)
	case $status in
	PASS) ok "$desc" ;;
	SKIP) skip "$desc" "$(tail -n 2 "$log" | head -n 1)" ;;
	FAIL)
		# Its fio command lines and the end of what they printed,
		# without fio's --debug=zbd trace.
		kept=$SMR_STATE/$(basename "$log")
		[ -f "$kept" ] || kept=$kept.gz
		not_ok "$desc" "log: $kept" \
			"$(grep -v -E '^zbd +[0-9]+ ' "$log" | tail -n 60)" ;;
	*)
		not_ok "$desc" "no result: test-zbd-support stopped before it finished (exit $rc)" \
			"$(tail -n 20 "$log" 2>/dev/null)" ;;
	esac
done

diag "target status: $(hm_stats "$dev")"
dmesg_check "no kernel warnings"
_show_result
