#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/dm-scale.sh - drive-managed dm-smr at the size of real drives: a
# 64 TiB device of 256 MiB bands (262144) with the default 1 % cache
# (655 GiB, 172 million slots), on a dm-thin volume over the huge sparse
# disk. Runs as root where the module can be loaded (the VM that
# bench/run-dm --scale boots, with memory for the cache's slot state);
# prints figures, passes or fails nothing on speed. Exits non-zero only if
# it could not measure.
#
# usage: bench/dm-scale.sh [--big DEV] [--tib N] [--fill N] [--cleans N]
#                          [--out FILE]
#
#   --big DEV    huge sparse disk for the thin pool (/dev/vdb; 66 GiB used
#                at most: pool metadata 1 GiB, data 64 GiB)
#   --tib N      device size in TiB (64)
#   --fill N     random 4 KiB writes spread over the whole device (20000)
#   --cleans N   bands each policy cleans (3)
#   --out FILE   also write the report to FILE
#
# 1. dmsetup create with format: time, and memory (the status line's
#    mem_bytes; what vmalloc and slab grew by around the create).
# 2. The fill: --fill random 4 KiB writes (qd 8, seq_bypass off, so each
#    goes to the cache) over the whole device: nearly one dirty band each.
#    Then mem_bytes and the index figures again.
# 3. Per policy (fifo, greedy, cost-benefit): remove and create again
#    (the load: the slot records read back and the index rebuilt), then
#    the clean message until --cleans bands are rewritten, and
#    clean_stop. The trace events give the time of each cleaning decision
#    (smr_clean_start's pick_ns) and of each band rewrite (smr_clean_end's
#    ns). The yardstick for a rewrite: what its four sequential band
#    passes (band and spare read, spare and band written) cost through
#    dm-linear on a fresh part of the same thin volume.
# 4. dmsetup remove: time.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/thin.sh"
_helper_error() { echo "dm-scale: $*" >&2; }
. "$ROOT/tests/lib/dm.sh"

BIG=/dev/vdb
TIB=64
FILL=20000
CLEANS=3
OUT=
BAND=524288			# 256 MiB
while [ $# -gt 0 ]; do
	case $1 in
	--big) BIG=$2; shift 2 ;;
	--tib) TIB=$2; shift 2 ;;
	--fill) FILL=$2; shift 2 ;;
	--cleans) CLEANS=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	-h|--help) sed -n '3,36s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "dm-scale: unknown argument $1" >&2; exit 2 ;;
	esac
done
for v in TIB FILL CLEANS; do
	[ "${!v}" -ge 1 ] 2> /dev/null || { echo "dm-scale: --${v,,} needs a positive number" >&2; exit 2; }
done

WORK=$(mktemp -d /tmp/dm-scale.XXXXXX)
REPORT=$WORK/report
: > "$REPORT"
N=dms_big
LIN=dms_lin
TR=/sys/kernel/tracing

say() { printf '%s\n' "$*" | tee -a "$REPORT"; }
die() { echo "dm-scale: $*" >&2; cleanup; exit 1; }
cleanup() {
	[ -d $TR/events/dm_smr ] && echo 0 > $TR/events/dm_smr/enable 2> /dev/null
	dm_remove_existing $N $LIN
	thin_remove dms
	[ -n "$OUT" ] && cp "$REPORT" "$OUT"
}
trap cleanup EXIT

for c in fio dmsetup awk; do
	command -v $c > /dev/null || die "$c is not installed"
done
[ -b "$BIG" ] || die "no huge disk $BIG"
modprobe dm-mod 2> /dev/null
if ! dmsetup targets | grep -q '^smr '; then
	insmod "$ROOT/dm-smr/dm-smr.ko" || die "cannot load dm-smr.ko (build it first)"
fi
mountpoint -q $TR || mount -t tracefs nodev $TR 2> /dev/null
[ -d $TR/events/dm_smr ] || die "no dm_smr trace events in $TR"

now_ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b - a) / 1e9 }'; }
meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }
# timed CMD...: run CMD, set T to its wall time in seconds; CMD's status.
timed() {
	local t0 rc
	t0=$(now_ns)
	"$@"; rc=$?
	T=$(secs "$t0" "$(now_ns)")
	return $rc
}

LEN=$((TIB * 2048 * 1024 * 1024))
BANDS=$((LEN / BAND))
# The default cache: 1 % of the length, rounded up to 4 KiB.
CACHE=$(( (LEN / 100 + 7) / 8 * 8 ))
read -r MD NEED <<< "$(dms_need $LEN $BAND $CACHE)"
thin_backing dms "$BIG" $((NEED + 2 * BAND)) || die "cannot make the thin volume on $BIG"
BACK=/dev/mapper/dms_thin
FMT="0 $LEN smr $BACK drive-managed $BAND 5 idle_ms 0 seq_bypass off format"
LOAD="0 $LEN smr $BACK drive-managed $BAND 4 idle_ms 0 seq_bypass off"

say "dm-smr drive-managed at scale: kernel $(uname -r), $(nproc) cpus, $(( $(meminfo MemTotal) / 1024 )) MiB, $(date -u '+%Y-%m-%d %H:%M UTC')"
say "device: $TIB TiB, $((BAND / 2048)) MiB bands ($BANDS), cache $((CACHE / 2048)) MiB ($((CACHE / 8)) slots, the default 1 %)"
say "  metadata $((MD / 2048)) MiB; backing: a thin volume of $NEED sectors on $BIG (64 KiB blocks, stores what is written)"

# ---- 1. create with format --------------------------------------------------
s0=$(meminfo Slab); v0=$(meminfo VmallocUsed)
timed dmsetup create $N --table "$FMT" || die "cannot create the $TIB TiB device: $(dmesg | tail -n 3)"
s1=$(meminfo Slab); v1=$(meminfo VmallocUsed)
udevadm settle 2> /dev/null
mem=$(dms_stat $N mem_bytes)
say ""
say "create with format: $T s"
say "$(awk -v m="$mem" -v b="$BANDS" -v s="$((CACHE / 8))" -v tib="$TIB" -v vm="$((v1 - v0))" -v sl="$((s1 - s0))" 'BEGIN {
	slot = (m - 108 * b - 4 * 2^20) / s
	printf "  mem_bytes %.0f = %.2f GiB: 108 bytes a band, a 4 MiB buffer, and %.2f bytes a slot\n", m, m / 2^30, slot
	printf "  = %.0f KiB per TiB of capacity (bands) + %.2f MiB per GiB of cache (slots)\n", 108 * b / tib / 1024, slot * 2^18 / 2^20
	printf "  VmallocUsed grew %.2f GiB, Slab %.0f KiB", vm / 2^20, sl }')"

# ---- 2. fill ------------------------------------------------------------------
t0=$(now_ns)
out=$(fio --name=fill --filename=/dev/mapper/$N --rw=randwrite --bs=4k --direct=1 \
	--ioengine=libaio --iodepth=8 --number_ios="$FILL" --norandommap=1 \
	--random_generator=tausworthe64 --randseed=1 --output-format=terse \
	--terse-version=3 2>&1) || die "fill: fio failed: $out"
T=$(secs "$t0" "$(now_ns)")
iops=$(awk -F';' '$1 == 3 { print $49 }' <<< "$out")
read -r used dirty ext ib mem <<< "$(dms_stat $N cache_used dirty_bands index_extents index_bytes mem_bytes)"
say ""
say "fill: $FILL random 4 KiB writes at qd 8 over the whole device in $T s ($iops IOPS)"
say "  cache_used $used, dirty_bands $dirty, index_extents $ext, index_bytes $ib, mem_bytes $mem"

# ---- yardstick: a band rewrite's four passes through dm-linear --------------------
# Two fresh band-sized regions past the smr device's end on the thin
# volume, never written (as a band is not before its first rewrite; the
# thin volume reads those as zeros without I/O): read the first, write the
# second, read the second, write the first, in 4 MiB I/Os one at a time,
# as the cleaner copies band -> spare -> band.
dmsetup create $LIN --table "0 $((2 * BAND)) linear $BACK $NEED" || die "cannot create dm-linear"
pass() {
	fio --name=p --filename=/dev/mapper/$LIN --rw="$1" --bs=4M --direct=1 \
		--ioengine=psync --offset=$(($2 * BAND * 512)) --size=$((BAND * 512)) \
		--output-format=terse --terse-version=3 > /dev/null 2>&1
}
timed pass read 0; p1=$T
timed pass write 1; p2=$T
timed pass read 1; p3=$T
timed pass write 0; p4=$T
dmsetup remove --retry $LIN
ystick=$(awk -v a="$p1" -v b="$p2" -v c="$p3" -v d="$p4" 'BEGIN { printf "%.2f", a + b + c + d }')
say ""
say "yardstick: a band's 4 passes of $((BAND / 2048)) MiB through dm-linear, 4 MiB at qd 1 (read $p1, write $p2, read $p3, write $p4 s): $ystick s"

# ---- 3. per policy: load, clean --cleans bands, decisions and rewrites --------
echo 0 > $TR/tracing_on
echo > $TR/trace
echo 1 > $TR/events/dm_smr/smr_clean_start/enable
echo 1 > $TR/events/dm_smr/smr_clean_end/enable
for pol in fifo greedy cost-benefit; do
	timed dmsetup remove --retry $N || die "cannot remove"
	rm_t=$T
	timed dmsetup create $N --table "$LOAD" || die "cannot load the device: $(dmesg | tail -n 3)"
	ld_t=$T
	dmsetup message $N 0 policy $pol || die "policy $pol refused"
	read -r used dirty <<< "$(dms_stat $N cache_used dirty_bands)"
	say ""
	say "$pol: remove $rm_t s; create over the format (load $used slots, $dirty dirty bands) $ld_t s"
	r0=$(dms_stat $N rmw_manual)
	echo > $TR/trace
	echo 1 > $TR/tracing_on
	dmsetup message $N 0 clean || die "clean refused"
	for ((i = 0; i < 1800; i++)); do
		[ "$(dms_stat $N rmw_manual)" -ge $((r0 + CLEANS)) ] && break
		sleep 1
	done
	dmsetup message $N 0 clean_stop
	dms_wait_state $N idle 600 || die "$pol: the cleaning did not stop"
	echo 0 > $TR/tracing_on
	awk -v pol="$pol" -v y="$ystick" '
		/smr_clean_start:/ { for (i = 1; i <= NF; i++) if ($i ~ /^pick_ns=/) { split($i, a, "="); p[np++] = a[2] } }
		/smr_clean_end:/ && / err=0 / { for (i = 1; i <= NF; i++) if ($i ~ /^us=/) { split($i, a, "="); r[nr++] = a[2] / 1e6 } }
		END {
			s = ""; for (i = 0; i < np; i++) s = s sprintf("%s%.1f", i ? " " : "", p[i] / 1000)
			printf "  decisions: %d, pick time in us: %s\n", np, s
			s = ""; for (i = 0; i < nr; i++) s = s sprintf("%s%.2f", i ? " " : "", r[i])
			printf "  band rewrites: %d, each in s: %s (the four passes: %s s)\n", nr, s, y
		}' $TR/trace | tee -a "$REPORT"
	say "  status: $(dmsetup status $N | cut -d' ' -f4-)"
done

# ---- 4. remove ------------------------------------------------------------------
timed dmsetup remove --retry $N || die "cannot remove"
say ""
say "remove: $T s"
