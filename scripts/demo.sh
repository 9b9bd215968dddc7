#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/demo.sh - what "make demo" runs after setting up and building:
# boots the VM over a fresh file-backed disk and runs scripts/demo-guest.sh
# there (an emulated host-managed SMR drive at work). The transcript and a
# summary land in the results directory it names at the end.
#
# usage: scripts/demo.sh [--kernel VER] [--results DIR]
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RESULTS=$ROOT/results/demo
ARGS=()
while [ $# -gt 0 ]; do
	case $1 in
	--kernel) ARGS+=(--kernel "${2:?}"); shift 2 ;;
	--results) RESULTS=${2:?}; shift 2 ;;
	*) echo "usage: $0 [--kernel VER] [--results DIR]" >&2; exit 2 ;;
	esac
done
mkdir -p "$RESULTS"

echo "Booting the test VM (QEMU, software emulation: this takes a minute)..."
"$ROOT/tests/vm-run" "${ARGS[@]}" --results "$RESULTS" --exec scripts/demo-guest.sh |
	tee "$RESULTS/transcript.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || { echo "demo failed (exit $rc); see $RESULTS/console-exec.log" >&2; exit "$rc"; }
echo
echo "Results: $RESULTS/transcript.txt and $RESULTS/demo.txt"
