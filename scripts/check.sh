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
# under three file systems. This keeps CI under an hour.
# The smoke set is every test marked "# SMOKE: 1", slow ones included.
#
# Two lanes. With more than one kernel, two VMs run at the same time:
# lane 1 runs the first kernel's suite but its crash-boot tests and the
# tests marked "# LANE: 2" (long ones moved to even the lanes out);
# lane 2 runs those, then the other kernels' suites, one after the other. A TCG
# guest keeps only about one of the host's two cores busy (most tests
# are one shell doing one thing at a time), so the second VM uses the
# core the first leaves. Results of the crash-boot tests go to
# tests/results/<VER>-boots/. The modules are
# built in the tree the guest loads them from, one kernel at a time, so
# lane 2 works in a copy of the tree (tests/results/lane2-tree, made
# first; its results still go to tests/results/<VER>/). Lane 2's lines
# are prefixed with "lane2: ". SMR_CHECK_LANES=1 runs everything in one
# lane, as before.
#
# Results go to tests/results/<VER>/ (suite.tap, logs). A kernel whose
# build or suite fails does not stop the others; the exit status and the
# last line say how many tests passed and failed over all kernels.
#
# The host's Python unit tests (tests/unit) run beside the lanes when
# SMR_CHECK_UNIT=1 (make check sets it): they take two minutes here,
# mostly waiting on fio, make and matplotlib, and need no VM, so they
# need not hold up the first boot. Their log is tests/results/unit.log,
# printed whole when they fail, and a failure fails the run (named on the
# "failures on" line); the VM summary counts VM tests only.
#
# Environment (internal, for lane 2): SMR_CHECK_LIST (the kernels, lines
# as scripts/kernels.sh prints), SMR_SLOW_KERNEL (the kernel that runs
# the slow tests), SMR_RESULTS_ROOT (where tests/results is).
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

if [ -n "${SMR_CHECK_LIST:-}" ]; then
	list=$SMR_CHECK_LIST
elif [ $# -gt 0 ]; then
	list="$1 ${2:-full}"
else
	list=$(scripts/kernels.sh)
fi
[ -n "$list" ] || { echo "check: no kernel to test: run scripts/setup-deps.sh" >&2; exit 1; }

slow_kernel=${SMR_SLOW_KERNEL:-$(awk '$2 == "full" { print $1; exit }' <<< "$list")}
passed=0 failed=0 bad_kernels=()

# run_kernel VER SET: build for one kernel and run its suite.
run_kernel() {
	local kver=$1 set=$2 series golden got tap args envs results
	echo "=== kernel $kver: ${set} suite"
	if ! make --no-print-directory modules KVER="$kver" ||
	   ! make --no-print-directory test-modules KVER="$kver"; then
		echo "check: cannot build the modules for $kver" >&2
		bad_kernels+=("$kver(build)")
		failed=$((failed + 1))
		return
	fi
	# The probe results must be the ones known for this series.
	series=$(echo "$kver" | cut -d. -f1-2)
	golden=compat/golden/$series.txt
	got=$(grep '^#define HAVE_' compat/generated/config.h | awk '{ print $2 }' | sort)
	if [ ! -f "$golden" ]; then
		echo "check: no $golden: probe results for $kver are:" $got
	elif [ "$got" != "$(sort "$golden")" ]; then
		echo "check: probe results for $kver differ from $golden:" >&2
		diff <(sort "$golden") <(echo "$got") >&2
		bad_kernels+=("$kver(probes)")
		failed=$((failed + 1))
		return
	fi
	results=$RESULTS_ROOT/$kver
	args=(--kernel "$kver")
	envs=()
	# The smoke set is every test marked SMOKE, slow or not (the timing
	# model's test is both, and its hrtimer API differs on the newest).
	# Lanes split the first kernel's suite: its crash-boot tests (boots)
	# in lane 2, the rest (rest) in lane 1.
	case $set in
	smoke) args+=(--smoke) ;;
	rest) args+=(--no-boots) ;;
	boots) args+=(--boots); results=$RESULTS_ROOT/$kver-boots ;;
	esac
	args+=(--results "$results")
	if [ "$set" = smoke ]; then
		:
	elif [ "$kver" != "$slow_kernel" ]; then
		args+=(--no-slow)
		# Crash points: 2 rounds, 15 states per model (4 and 40 on the first).
		envs=(CP_ROUNDS="${CP_ROUNDS:-2}" CP_MAX_POINTS="${CP_MAX_POINTS:-15}")
	fi
	env "${envs[@]}" tests/vm-run "${args[@]}" || bad_kernels+=("$kver${set:+ $set}")
	tap=$results/suite.tap
	if [ -f "$tap" ]; then
		passed=$((passed + $(grep -c '^ok ' "$tap")))
		failed=$((failed + $(grep -c '^not ok ' "$tap")))
	fi
}

lane2=
if [ "${SMR_CHECK_LANES:-2}" -ge 2 ] && [ -z "${SMR_CHECK_LIST:-}" ] &&
   [ -n "$slow_kernel" ] && [ "$(wc -l <<< "$list")" -gt 1 ]; then
	# The first kernel's crash-boot tests (minutes of boots) go first in
	# lane 2, so that the lanes take about as long as each other.
	lane2=$(printf '%s boots\n' "$slow_kernel"; grep -v "^$slow_kernel " <<< "$list")
	list=$(grep "^$slow_kernel " <<< "$list" | sed 's/ full$/ rest/')
	tree=$RESULTS_ROOT/lane2-tree
	rm -rf "$tree"
	mkdir -p "$tree" &&
	tar -C "$ROOT" --exclude=./.venv --exclude=./.git --exclude=./tests/results \
		-cf - . | tar -C "$tree" -xf - ||
		{ echo "check: cannot copy the tree for lane 2" >&2; exit 1; }
	echo "check: lane 1: $(awk '{ print $1 }' <<< "$list"); lane 2 (in $tree):" \
		$(awk '{ print $1 }' <<< "$lane2")
	summary2=$RESULTS_ROOT/lane2.summary
	rm -f "$summary2"
	# No stale result may count for a kernel lane 2 cannot build.
	while read -r kver set; do
		rm -f "$RESULTS_ROOT/$kver/suite.tap" "$RESULTS_ROOT/$kver-boots/suite.tap"
	done <<< "$lane2"
	( SMR_CHECK_LIST=$lane2 SMR_SLOW_KERNEL=$slow_kernel SMR_CHECK_UNIT= \
	  SMR_RESULTS_ROOT=$RESULTS_ROOT "$tree/scripts/check.sh" > >(sed -u 's/^/lane2: /') 2>&1
	  echo $? > "$summary2" ) &
	lane2_pid=$!
fi

unit_pid=
if [ "${SMR_CHECK_UNIT:-0}" = 1 ]; then
	mkdir -p "$RESULTS_ROOT"
	unit_log=$RESULTS_ROOT/unit.log
	echo "check: host unit tests beside the VM suites (log: $unit_log)"
	/usr/bin/python3 -m unittest discover -s tests/unit -v > "$unit_log" 2>&1 &
	unit_pid=$!
fi

while read -r kver set; do
	run_kernel "$kver" "$set"
done <<< "$list"

if [ -n "$lane2" ]; then
	wait "$lane2_pid"
	# Lane 2's own last lines say what it found; count its results here.
	while read -r kver set; do
		tap=$RESULTS_ROOT/$kver/suite.tap
		[ "$set" = boots ] && tap=$RESULTS_ROOT/$kver-boots/suite.tap
		if [ -f "$tap" ]; then
			passed=$((passed + $(grep -c '^ok ' "$tap")))
			failed=$((failed + $(grep -c '^not ok ' "$tap")))
		else
			failed=$((failed + 1))
		fi
	done <<< "$lane2"
	if [ "$(cat "$summary2" 2>/dev/null)" = 0 ]; then
		rm -rf "$RESULTS_ROOT/lane2-tree"
	else
		# Kept: its build logs and modules, to look into the failure.
		bad_kernels+=("lane 2 ($(awk '{ print $1 }' <<< "$lane2" | xargs))")
	fi
fi

unit_said=
if [ -n "$unit_pid" ]; then
	if wait "$unit_pid"; then
		unit_said="unit tests: $(grep -E '^Ran [0-9]+ tests' "$unit_log") OK"
	else
		cat "$unit_log"
		unit_said="unit tests: FAILED (above; $unit_log)"
		bad_kernels+=("host unit tests")
	fi
fi

[ ${#bad_kernels[@]} = 0 ] || echo "check: failures on: ${bad_kernels[*]}"
[ -z "$unit_said" ] || echo "$unit_said"
echo "vm suites: $passed passed, $failed failed"
[ ${#bad_kernels[@]} = 0 ]
