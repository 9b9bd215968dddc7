#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/demo.sh - what "make demo" runs after setting up and building:
# boots the VM over a fresh file-backed disk and runs scripts/demo-guest.sh
# there: a campaign (fio-jobs/campaign) on an emulated drive-managed SMR
# drive, showing its persistent cache filling, the throughput collapse and
# the cleaning after it. The transcript, the campaign's summary and its
# plots land in the results directory it names at the end.
#
# usage: scripts/demo.sh [--kernel VER] [--results DIR]
#
# Environment: RUNTIME (seconds of random writes, default 45).
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
RESULTS=$(realpath "$RESULTS")
# The big sparse disk is not used: keep it small.
export SMR_BIG_SIZE=${SMR_BIG_SIZE:-1T}

echo "Booting the test VM (QEMU, software emulation: this takes a minute)..."
"$ROOT/tests/vm-run" "${ARGS[@]}" --results "$RESULTS" \
	--exec "RUNTIME=${RUNTIME:-45} bash scripts/demo-guest.sh" |
	tee "$RESULTS/transcript.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] || { echo "demo failed (exit $rc); see $RESULTS/console-exec.log" >&2; exit "$rc"; }
echo
echo "Drawing the plots (on the host: fio-jobs/campaign --plot)..."
"$ROOT/fio-jobs/campaign" --plot "$RESULTS/campaign" > "$RESULTS/plot.log" 2>&1 ||
	{ cat "$RESULTS/plot.log" >&2; echo "demo: plotting failed" >&2; exit 1; }
PLOT=$RESULTS/campaign/plots/01-randwrite-dm-throughput.png
LAT=$RESULTS/campaign/plots/01-randwrite-dm-latency.png
[ -s "$PLOT" ] || { echo "demo: the throughput plot was not drawn (see $RESULTS/plot.log)" >&2; exit 1; }
sed -n '/^figures:/,$p' "$RESULTS/campaign/summary.txt"
echo "Results in $RESULTS:"
echo "  plot:    $PLOT"
if [ -s "$LAT" ]; then
	echo "  latency: $LAT (p50/p99/max per second, cleaning shaded)"
else
	echo "  latency: not drawn (see $RESULTS/plot.log)"
fi
echo "  summary: $RESULTS/campaign/summary.txt (and .csv, .json; every run in campaign/runs/)"
echo "  demo:    $RESULTS/demo.txt, transcript.txt"
