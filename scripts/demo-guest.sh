#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/demo-guest.sh - the demo, as it runs inside the VM (see demo.sh).
#
# Runs the campaign fio-jobs/matrices/demo.ini over the VM's file-backed
# disk (/dev/vda): a 1 GiB drive-managed SMR drive with the ST8000AS0002
# profile (30 MiB bands, idle cleaning after 1 s, and the timing model of
# a 5900 rpm disk: docs/timing.md) and a 32 MiB persistent cache takes
# 4 KiB random writes until its cache is full and the throughput
# collapses, is left to clean (smrctl wait-clean: the drive's cleaning
# time), then takes 256 MiB of sequential writes that bypass the cache. The campaign's results directory (summary, per-run data) is
# $SMR_RESULTS/campaign; $SMR_RESULTS/demo.txt names the plot, which
# demo.sh draws on the host afterwards (campaign --plot: matplotlib
# builds its font cache for a minute or more under QEMU).
#
# Environment: RUNTIME (seconds of random writes, default 30).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
# The matrix has no default backing (it formats it): name the VM's scratch disk.
export BACKING=${SMR_SCRATCH_DISK:-/dev/vda}
RESULTS=${SMR_RESULTS:-/tmp/smr-demo}
OUT=$RESULTS/campaign
PLOT=$OUT/plots/01-randwrite-dm-throughput.png

"$ROOT/scripts/load-modules.sh" dm-smr || exit 1
rm -rf "$OUT"

echo
echo "== A drive-managed SMR drive over $BACKING, 4 KiB random writes into its cache"
echo "   (fio-jobs/matrices/demo.ini; progress every 10 s: cache use, cleaning state, band RMWs)"
echo
"$ROOT/fio-jobs/campaign" -o "$OUT" --no-plots "$ROOT/fio-jobs/matrices/demo.ini"

row() { python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][int(sys.argv[2])]; print(r.get(sys.argv[3], ""))' "$OUT/summary.json" "$@"; }
{
	echo "dm-smr demo, $(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r)"
	echo "drive-managed drive: $(row 0 size), profile $(row 0 profile) (its bands and timing model), $(row 0 cache) persistent cache"
	echo "  $(cat "$OUT/runs/01-randwrite-dm/table.txt")"
	echo "random 4 KiB writes: cache phase $(row 0 cache_phase_mibs) MiB/s, cache full after $(row 0 cache_full_at_s) s,"
	echo "  then $(row 0 collapsed_mibs) MiB/s (foreground band RMWs: $(row 0 rmw_fg)); write amplification $(row 0 wa)"
	echo "cleaning after the run: clean after $(row 0 wait_clean_s) s, cleaning time $(row 0 cleaning_s) s (smrctl wait-clean)"
	echo "sequential 1 MiB writes: $(row 1 write_mibs) MiB/s, bypassing the cache: $(row 1 bypass_write_sectors) of $(row 1 host_write_sectors) sectors, wa $(row 1 wa)"
	echo "plot: $PLOT"
	echo "summary: $OUT/summary.txt"
} > "$RESULTS/demo.txt"
echo
cat "$RESULTS/demo.txt"
