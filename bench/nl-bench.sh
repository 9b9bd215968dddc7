#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/nl-bench.sh - what listening to the netlink events costs: the I/O
# throughput of a drive-managed dm-smr device with smrd attached and with
# nobody listening, as a ratio (target: 0.98 or better). Runs as root where
# the module can be loaded (the VM bench/run-nl boots); prints figures,
# passes or fails nothing. Exits non-zero only if it could not measure.
#
# usage: bench/nl-bench.sh [--disk DEV] [--runtime S] [--rounds N] [--out FILE]
#
#   --disk DEV    scratch disk (/dev/vda); its first 600 MiB are overwritten
#   --runtime S   seconds per fio run (10)
#   --rounds N    pairs of runs, even (4): quiet, smrd, smrd, quiet, ... so
#                 that drift in the host's speed hits both alike; figures are
#                 medians, the ratio is the median of the rounds' ratios
#   --out FILE    also write the report to FILE
#
# The device: 512 MiB, 4 MiB bands, 32 MiB cache, idle_ms 0. The workload,
# fio randwrite 4 KiB, direct, queue depth 4, over the whole device, keeps
# the cache full, so the target cleans bands in the foreground all the
# time: every run sends clean_start/clean_done and cache_level events (the
# event-heaviest path), which smrd receives and writes as JSON lines.

set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/lib.sh"
DISK=/dev/vda
RUNTIME=10
ROUNDS=4
OUT=
while [ $# -gt 0 ]; do
	case $1 in
	--disk) DISK=$2; shift 2 ;;
	--runtime) RUNTIME=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	-h|--help) sed -n '3,24s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "nl-bench: unknown option $1" >&2; exit 2 ;;
	esac
done
[ $((ROUNDS % 2)) = 0 ] || { echo "nl-bench: --rounds must be even" >&2; exit 2; }
SMRD=$ROOT/userspace/smrd/smrd
SMRCTL=$ROOT/userspace/smrctl/smrctl
[ -x "$SMRD" ] || { echo "nl-bench: build userspace first (make -C userspace)" >&2; exit 1; }
WORK=$(mktemp -d /tmp/nl-bench.XXXXXX)
REPORT=$WORK/report.txt
say() { echo "$*" | tee -a "$REPORT"; }

modprobe dm-mod
"$ROOT/scripts/load-modules.sh" dm-smr || exit 1
N=nlbench
dmsetup remove $N 2>/dev/null
echo "0 $((600 * 2048)) linear $DISK 2048" | dmsetup create nlbench_back || exit 1
trap 'kill $SMRD_PID 2>/dev/null; dmsetup remove $N 2>/dev/null; dmsetup remove nlbench_back 2>/dev/null' EXIT
"$SMRCTL" create $N --model drive-managed --dev /dev/mapper/nlbench_back \
	--size 512M --band 4M --cache 32M --idle-ms 0 --format > "$WORK/create.txt" || exit 1
SMRD_PID=

run() {	# run NAME: one fio run, prints IOPS
	fio --name="$1" --filename=/dev/mapper/$N --rw=randwrite --bs=4k \
		--direct=1 --ioengine=libaio --iodepth=4 --time_based \
		--runtime="$RUNTIME" --randrepeat=0 --output-format=json \
		--output="$WORK/$1.json" > /dev/null 2>&1 || return 1
	python3 -c 'import json,sys; print("%.0f" % json.load(open(sys.argv[1]))["jobs"][0]["write"]["iops"])' \
		"$WORK/$1.json"
}
start_smrd() {
	"$SMRD" --json "$WORK/events-$1.json" 2>/dev/null &
	SMRD_PID=$!
	for _ in $(seq 50); do grep -q subscribed "$WORK/events-$1.json" 2>/dev/null && return; sleep 0.2; done
}
stop_smrd() { kill "$SMRD_PID"; wait "$SMRD_PID" 2>/dev/null; SMRD_PID=; }

say "nl-bench: $(uname -r), $(nproc) cpus; drive-managed 512 MiB, 4 MiB bands, 32 MiB cache, idle_ms 0"
say "fio randwrite 4 KiB, direct, libaio depth 4, ${RUNTIME}s per run, $ROUNDS rounds"
"$SMRCTL" event-stats --reset > /dev/null
warm=$(run warmup) || { echo "nl-bench: fio failed" >&2; exit 1; }
say "warm-up (fills the cache): $warm IOPS"
: > "$WORK/q"; : > "$WORK/s"; : > "$WORK/r"
for r in $(seq 1 $((ROUNDS / 2))); do
	for order in qs sq; do
		for who in $(echo $order | fold -w1); do
			if [ $who = s ]; then
				start_smrd "$r$order"
				v=$(run "s$r$order") || exit 1
				stop_smrd
				lines=$(grep -c '"family":"dm-smr"' "$WORK/events-$r$order.json")
				say "  round $r$order smrd attached: $v IOPS ($lines events received)"
				echo "$v" >> "$WORK/s"; s=$v
			else
				v=$(run "q$r$order") || exit 1
				say "  round $r$order nobody listening: $v IOPS"
				echo "$v" >> "$WORK/q"; q=$v
			fi
		done
		awk -v s="$s" -v q="$q" 'BEGIN { printf "%.4f\n", s / q }' >> "$WORK/r"
	done
done
qm=$(bench_median < "$WORK/q")
sm=$(bench_median < "$WORK/s")
rm_=$(bench_median < "$WORK/r")
say "median IOPS: nobody listening $qm, smrd attached $sm"
say "ratio smrd/nobody: $rm_ (median of rounds; range $(sort -n "$WORK/r" | head -n1)..$(sort -n "$WORK/r" | tail -n1)); target >= 0.98"
say "kernel event counters: $("$SMRCTL" event-stats --json | grep dm-smr)"
"$SMRCTL" status $N --json | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("device: rmw_fg %d, wa %.3f, errors %d" % (d["rmw_fg"], d["wa_milli"]/1000, d["errors"]))' | tee -a "$REPORT"
[ -n "$OUT" ] && cp "$REPORT" "$OUT"
exit 0
