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
# test_crash_01_points covers crash points on every kernel, at a third
# of its size on the others: CP_ROUNDS, CP_MAX_POINTS below), and tests
# of what does not depend on the kernel (the harness's self-test, the
# tracepoints, drive-managed bad input). This keeps CI under an hour.
# The smoke set is every test marked "# SMOKE: 1", slow ones included.
#
# Results go to tests/results/<VER>/ (suite.tap, logs). A kernel whose
# build or suite fails does not stop the others; the exit status and the
# last line say how many tests passed and failed over all kernels.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

if [ $# -gt 0 ]; then
	list="$1 ${2:-full}"
else
	list=$(scripts/kernels.sh)
fi
[ -n "$list" ] || { echo "check: no kernel to test: run scripts/setup-deps.sh" >&2; exit 1; }

slow_kernel=$(awk '$2 == "full" { print $1; exit }' <<< "$list")
passed=0 failed=0 bad_kernels=()
while read -r kver set; do
	echo "=== kernel $kver: ${set} suite"
	if ! make --no-print-directory modules KVER="$kver" ||
	   ! make --no-print-directory test-modules KVER="$kver"; then
		echo "check: cannot build the modules for $kver" >&2
		bad_kernels+=("$kver(build)")
		failed=$((failed + 1))
		continue
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
		continue
	fi
	args=(--kernel "$kver" --results "tests/results/$kver")
	envs=()
	# The smoke set is every test marked SMOKE, slow or not (the timing
	# model's test is both, and its hrtimer API differs on the newest).
	if [ "$set" = smoke ]; then
		args+=(--smoke)
	elif [ "$kver" != "$slow_kernel" ]; then
		args+=(--no-slow)
		# Crash points: 3 rounds, 20 states per model (6 and 60 on the first).
		envs=(CP_ROUNDS="${CP_ROUNDS:-3}" CP_MAX_POINTS="${CP_MAX_POINTS:-20}")
	fi
	env "${envs[@]}" tests/vm-run "${args[@]}" || bad_kernels+=("$kver")
	tap=tests/results/$kver/suite.tap
	if [ -f "$tap" ]; then
		passed=$((passed + $(grep -c '^ok ' "$tap")))
		failed=$((failed + $(grep -c '^not ok ' "$tap")))
	fi
done <<< "$list"

[ ${#bad_kernels[@]} = 0 ] || echo "check: failures on: ${bad_kernels[*]}"
echo "vm suites: $passed passed, $failed failed"
[ ${#bad_kernels[@]} = 0 ]
