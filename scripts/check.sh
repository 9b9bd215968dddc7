#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/check.sh - build the modules for each kernel the suite runs on
# and run the VM suite there (make check does this after the unit tests).
#
#   scripts/check.sh                 every kernel scripts/kernels.sh lists
#   scripts/check.sh VER [smoke]     one kernel (the whole suite unless smoke)
#
# Tests marked "# SLOW: 1" run on the first kernel of the whole suite
# only: fio's own zoned conformance script (minutes long), the campaign
# runner's plots, the crash-boot tests (a boot per crash;
# test_crash_01_points covers crash points on every kernel, smaller on
# the others: CP_ROUNDS, CP_MAX_POINTS below), and tests
# of what does not depend on the kernel (the harness's self-test, the
# tracepoints, bad input of every model), and the power cut
# under three file systems. The smoke set is every test marked
# "# SMOKE: 1", slow ones included.
#
# Two lanes: two VMs at a time, one vCPU each. A TCG guest keeps about
# one of the host's two cores busy (most tests are one shell doing one
# thing at a time), so the second VM uses the core the first leaves.
# Every kernel's tests are split between the lanes by tests/durations:
# the longest first, each to the lane with less work so far, counted over
# all kernels, so both lanes end at about the same time (lanes.plan in
# the results says which test went where). Lane 1 takes the kernels in
# order, lane 2 from the second on, the first last (6.12, the newest,
# 6.1): the lanes start on kernels of their own, and the newest, whose
# builds run in its chroot, comes after the minutes in which CI's DKMS
# build installs dkms there (.ci/run). Each kernel's modules are built
# once, by the lane that comes to it first, in a copy of the tree kept for that
# kernel (tests/results/trees/VER: the guest loads the modules from the
# tree its tests run from), and the other lane finds them built. Results
# go to tests/results/VER/laneN/ (suite.tap, logs); lane N's lines are
# prefixed with "laneN: ". The trees are removed when every test passed.
# SMR_CHECK_LANES=1 runs everything in one lane, in the tree itself,
# results in tests/results/VER/.
#
# A kernel whose build or suite fails does not stop the others; the exit
# status and the last line say how many tests passed and failed over all
# kernels.
#
# The host's Python unit tests (tests/unit) run beside the lanes when
# SMR_CHECK_UNIT=1 (make check sets it): they take two minutes here,
# mostly waiting on fio, make and matplotlib, and need no VM, so they
# need not hold up the first boot. Their log is tests/results/unit.log,
# printed whole when they fail, and a failure fails the run (named on the
# "failures on" line); the VM summary counts VM tests only.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
ROOT=$PWD
RESULTS_ROOT=${SMR_RESULTS_ROOT:-$ROOT/tests/results}
export SMR_VENV=${SMR_VENV:-$ROOT/.venv}
# One virtual CPU per VM. Under TCG a second vCPU made the guest slower,
# not faster, and two 2-vCPU VMs on two cores three times slower each
# (lock holders and IPI targets descheduled); two 1-vCPU VMs side by side
# each ran as fast as one 2-vCPU VM alone, or faster (2026-11-26: boot
# 23 s against 60, test_cv_03 28 s against 54). The price: tests of races
# get their interleavings from preemption only; run those by hand with
# SMR_VM_CPUS=2 (tests/vm-run's default) when touching what they race.
export SMR_VM_CPUS=${SMR_VM_CPUS:-1}
LANES=${SMR_CHECK_LANES:-2}
[[ $LANES =~ ^[12]$ ]] || { echo "check: SMR_CHECK_LANES is 1 or 2, not '$LANES'" >&2; exit 2; }

if [ $# -gt 0 ]; then
	list="$1 ${2:-full}"
else
	list=$(scripts/kernels.sh)
fi
[ -n "$list" ] || { echo "check: no kernel to test: run scripts/setup-deps.sh" >&2; exit 1; }
slow_kernel=$(awk '$2 == "full" { print $1; exit }' <<< "$list")
kernels=$(awk '{ print $1 }' <<< "$list")

mkdir -p "$RESULTS_ROOT"
FAILED=$RESULTS_ROOT/.check-failed	# one line for each build or run that failed
PLAN=$RESULTS_ROOT/lanes.plan		# LANE KVER TEST SECONDS, one line a test
: > "$FAILED"

# select_tests VER SET: the file names of one kernel's tests.
select_tests() {
	local args=(--list)
	[ "$2" = smoke ] && args+=(--smoke)
	[ "$2" = smoke ] || [ "$1" = "$slow_kernel" ] || args+=(--no-slow)
	tests/vm-run "${args[@]}" | awk '{ print $2 }'
}

# The plan: each kernel's tests, longest first, each to the lane with
# the least work so far (tests/durations; 60 s for a test not listed).
i=0
while read -r kver set; do
	i=$((i + 1))
	select_tests "$kver" "$set" | sed "s/^/$i $kver /"
done <<< "$list" |
awk '
	FNR == NR { if ($1 !~ /^#/ && NF == 2) secs[$1] = $2; next }
	{ print $1, $2, $3, ($3 in secs) ? secs[$3] : 60 }
' tests/durations - | sort -s -k1,1n -k4,4nr |
awk -v lanes="$LANES" '{
	l = 1
	for (j = 2; j <= lanes; j++) if (work[j] < work[l]) l = j
	work[l] += $4
	print l, $2, $3, $4
}' > "$PLAN"
# A kernel with nothing to run (a filter that matched nothing, vm-run
# --list failing) is a failure, not a pass.
for kver in $kernels; do
	grep -qF " $kver " "$PLAN" || echo "$kver(no tests)" >> "$FAILED"
done
for l in $(seq 1 "$LANES"); do
	awk -v l="$l" '$1 == l { n++; t += $4 }
		END { printf "check: lane %d: %d tests, about %d s by tests/durations\n", l, n, t }' "$PLAN"
done

# tree_of VER: the tree VER's modules are built in and its tests run from.
tree_of() {
	if [ "$LANES" = 1 ]; then echo "$ROOT"; else echo "$RESULTS_ROOT/trees/$1"; fi
}

# build VER TREE: build the modules for VER in TREE and check that the
# kernel's compatibility probes found what they find for its series.
build() {
	local kver=$1 tree=$2 series golden got
	echo "=== kernel $kver: building in $tree"
	if ! make -C "$tree" --no-print-directory modules KVER="$kver" ||
	   ! make -C "$tree" --no-print-directory test-modules KVER="$kver"; then
		echo "check: cannot build the modules for $kver" >&2
		echo "$kver(build)" >> "$FAILED"
		return 1
	fi
	series=$(echo "$kver" | cut -d. -f1-2)
	golden=$ROOT/compat/golden/$series.txt
	got=$(grep '^#define HAVE_' "$tree/compat/generated/config.h" | awk '{ print $2 }' | sort)
	if [ ! -f "$golden" ]; then
		echo "check: no $golden: probe results for $kver are:" $got
	elif [ "$got" != "$(sort "$golden")" ]; then
		echo "check: probe results for $kver differ from $golden:" >&2
		diff <(sort "$golden") <(echo "$got") >&2
		echo "$kver(probes)" >> "$FAILED"
		return 1
	fi
}

# build_once VER: build VER's tree unless a lane already has (or failed
# to); the other lane waits on the lock meanwhile. A failure is recorded
# once, by the lane that built.
build_once() {
	local kver=$1 tree
	tree=$(tree_of "$kver")
	[ "$LANES" = 1 ] && { build "$kver" "$tree"; return; }
	(
		flock 9
		[ -f "$tree/.check-built" ] && exit "$(cat "$tree/.check-built")"
		rc=0
		build "$kver" "$tree" || rc=1
		echo "$rc" > "$tree/.check-built"
		exit "$rc"
	) 9> "$tree.lock"
}

# run_lane LANE: the lane's tests, kernel by kernel.
run_lane() {
	local lane=$1 kver set tree results tests envs order paths t
	order=$kernels
	[ "$lane" = 2 ] && order=$(sed 1d <<< "$kernels"; head -n 1 <<< "$kernels")
	for kver in $order; do
		tests=$(awk -v l="$lane" -v k="$kver" '$1 == l && $2 == k { print $3 }' "$PLAN")
		[ -n "$tests" ] || continue
		set=$(awk -v k="$kver" '$1 == k { print $2 }' <<< "$list")
		tree=$(tree_of "$kver")
		results=$RESULTS_ROOT/$kver
		[ "$LANES" = 1 ] || results+=/lane$lane
		echo "=== kernel $kver: $(wc -w <<< "$tests") tests of its $set suite in lane $lane"
		build_once "$kver" || continue
		envs=()
		# Crash points: 2 rounds, 15 states per model (4 and 40 on the first).
		[ "$kver" = "$slow_kernel" ] || [ "$set" = smoke ] ||
			envs=(CP_ROUNDS="${CP_ROUNDS:-2}" CP_MAX_POINTS="${CP_MAX_POINTS:-15}")
		paths=()
		for t in $tests; do paths+=("$tree/tests/$t"); done
		env "${envs[@]}" "$tree/tests/vm-run" --kernel "$kver" --results "$results" "${paths[@]}" ||
			echo "$kver ($set suite, lane $lane)" >> "$FAILED"
		echo "=== kernel $kver: lane $lane done at $SECONDS s of check.sh"
	done
}

# Fresh results and, with two lanes, a tree for each kernel.
for kver in $kernels; do
	rm -rf "${RESULTS_ROOT:?}/$kver"
	[ "$LANES" = 1 ] && continue
	tree=$(tree_of "$kver")
	rm -rf "$tree" "$tree.lock"
	mkdir -p "$tree" &&
	tar -C "$ROOT" --exclude=./.venv --exclude=./.git --exclude=./tests/results \
		-cf - . | tar -C "$tree" -xf - ||
		{ echo "check: cannot copy the tree for $kver" >&2; exit 1; }
done

unit_pid=
if [ "${SMR_CHECK_UNIT:-0}" = 1 ]; then
	unit_log=$RESULTS_ROOT/unit.log
	echo "check: host unit tests beside the VM suites (log: $unit_log)"
	/usr/bin/python3 -m unittest discover -s tests/unit -v > "$unit_log" 2>&1 &
	unit_pid=$!
fi

if [ "$LANES" = 1 ]; then
	run_lane 1
else
	# Waiting for the sed waits for its lane too, and for its last lines.
	run_lane 1 2>&1 | sed -u 's/^/lane1: /' &
	pid1=$!
	run_lane 2 2>&1 | sed -u 's/^/lane2: /' &
	pid2=$!
	wait "$pid1" "$pid2"
fi

# Every planned (kernel, lane) must have left its suite.tap.
passed=0 failed=0
while read -r lane kver; do
	tap=$RESULTS_ROOT/$kver/suite.tap
	[ "$LANES" = 1 ] || tap=$RESULTS_ROOT/$kver/lane$lane/suite.tap
	if [ -f "$tap" ]; then
		passed=$((passed + $(grep -c '^ok ' "$tap")))
		failed=$((failed + $(grep -c '^not ok ' "$tap")))
	else
		failed=$((failed + 1))
	fi
done < <(awk '{ print $1, $2 }' "$PLAN" | sort -u)
mapfile -t bad < "$FAILED"

# A digest of every failed test (scripts/failure-digest.sh), printed
# last (.ci/run prints it again at its very end): a CI log is often read
# from its tail only.
DIGEST=$RESULTS_ROOT/failures.txt
scripts/failure-digest.sh "$RESULTS_ROOT" "$PLAN" "$LANES" > "$DIGEST"
if [ -s "$DIGEST" ]; then
	echo "check: the failed tests ($DIGEST):"
	cat "$DIGEST"
fi

unit_said=
if [ -n "$unit_pid" ]; then
	if wait "$unit_pid"; then
		unit_said="unit tests: $(grep -E '^Ran [0-9]+ tests' "$unit_log") OK"
	else
		cat "$unit_log"
		unit_said="unit tests: FAILED (above; $unit_log)"
		bad+=("host unit tests")
	fi
fi

if [ ${#bad[@]} = 0 ] && [ "$failed" = 0 ] && [ "$LANES" != 1 ]; then
	rm -rf "$RESULTS_ROOT/trees"
elif [ "$LANES" != 1 ]; then
	echo "check: the kernels' trees are kept in $RESULTS_ROOT/trees (build logs, modules)"
fi
[ $((passed + failed)) -gt 0 ] || bad+=("no test ran")
[ ${#bad[@]} = 0 ] || echo "check: failures on: ${bad[*]}"
[ -z "$unit_said" ] || echo "$unit_said"
echo "vm suites: $passed passed, $failed failed"
[ ${#bad[@]} = 0 ] && [ "$failed" = 0 ]
