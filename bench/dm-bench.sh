#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/dm-bench.sh - dm-smr drive-managed: random writes through the
# persistent cache and into the collapse, cleaning time and bandwidth by
# policy, and dm-linear on the same backing as the yardstick. Runs as root
# where the dm-smr module can be loaded (the VM that bench/run-dm boots);
# prints figures, passes or fails nothing on speed. Exits non-zero only if
# it could not measure.
#
# usage: bench/dm-bench.sh [--disk DEV] [--runtime S] [--cache-mb N] [--dev-mb N]
#                          [--phase-cache-mb N] [--phase-mb N] [--rounds N]
#                          [--policies LIST] [--io-runtime S] [--ratios-only]
#                          [--out FILE]
#
#   --disk DEV       scratch disk (/dev/vda); its first --dev-mb plus the
#                    larger cache and a band are overwritten
#   --dev-mb N       device size (12288)
#   --cache-mb N     cache size for the collapse and the policies (48, 0.4 %
#                    of the device, as on the drives the ext4-lazy study
#                    measured: 25 GiB on 8 TB). Once the cache is full a
#                    write waits for an RMW that frees only the slots of
#                    one band, cache/bands on average, so the collapsed
#                    rate is about cache x (backing bandwidth) / (4 x
#                    device): the smaller the cache's share, the deeper
#   --phase-cache-mb N  cache size for the cache-phase comparison (384):
#                    large enough that a run lasts long enough to measure
#   --phase-mb N     data written per cache-phase run (256, under that cache)
#   --rounds N       cache-phase rounds, even (4): linear/smr, smr/linear, ...
#   --runtime S      seconds of the long random-write run per policy (60)
#   --policies LIST  comma-separated (fifo,greedy,cost-benefit)
#   --io-runtime S   seconds per run of the host I/O comparison (5)
#   --ratios-only    only the comparisons with dm-linear (2 and 2b), as
#                    bench/all-bench.sh runs it
#   --out FILE       also write the report to FILE
#
# Geometry: a --dev-mb device of 16 MiB bands, idle_ms 500, seq_bypass on.
# The backing region (metadata, cache, spare band, bands; for the larger
# of the two caches) is written once first so that no later write
# allocates space in the sparse disk image. dm-linear maps exactly the
# sectors that hold the smr device's bands.
#
# 1. Backing sequential bandwidth: fio 1 MiB, qd 1 (cleaning copies 1 MiB
#    at a time, one I/O in flight), write then read, 8 s each, dm-linear;
#    measured first and again last (a shared host's speed drifts).
# 2. Cache phase vs dm-linear: fio randwrite 4 KiB, qd 4, direct, libaio,
#    --phase-mb in all over the whole device, same seed on both; smr with
#    the --phase-cache-mb cache, freshly formatted (empty) before each of
#    its runs; --rounds rounds, linear/smr then smr/linear alternately;
#    ratio = median of the rounds' ratios.
# 2b. Host I/O vs dm-linear on a freshly formatted device (cache 48 MiB,
#    seq_bypass): sequential 1 MiB writes at depth 4 (they bypass the
#    cache into the bands), then sequential 1 MiB reads at depth 4 and
#    random 4 KiB reads at depth 16 of what they wrote; --io-runtime s
#    each, --rounds rounds, linear/smr in alternating order.
# 3. Per policy, on a freshly formatted device: the same randwrite job,
#    time_based, --runtime seconds, bandwidth logged every second
#    (--write_bw_log, --log_avg_msec=1000; an entry stands for the time
#    since the one before it, as fio logs late on a busy guest). The
#    cache phase is the seconds before the cumulative data written
#    reaches 95 % of the cache; the collapsed phase the seconds from 5 s
#    after it reached the whole cache (the transition is left out). Then
#    the device is left idle and the status polled (1 s) until cache_used
#    is 0: wall time from the end of fio, and clean_ms_bg (time inside
#    band rewrites). Band RMW bandwidth = (clean_read_sectors +
#    clean_write_sectors) per second of clean_ms, for the foreground RMWs
#    during the run and the background ones after it; compared with the
#    backing's sequential bandwidth for as many bytes read as written
#    (2 / (1/read + 1/write)), first and last. Per RMW: the data moved (4
#    band-sized sequential passes, band -> spare -> band, plus one 4 KiB
#    read per cached block merged in, read one run at a time), the time,
#    and what the 4 passes alone take at the backing's sequential
#    bandwidth.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/thin.sh"
. "$ROOT/bench/lib.sh"
DISK=/dev/vda
RUNTIME=60
POLICIES=fifo,greedy,cost-benefit
OUT=
CACHE_MB=48
DEV_MB=12288
PHASE_CACHE_MB=384
PHASE_MB=256
ROUNDS=4
IO_RUNTIME=5
RATIOS_ONLY=0

while [ $# -gt 0 ]; do
	case $1 in
	--disk) DISK=$2; shift 2 ;;
	--runtime) RUNTIME=$2; shift 2 ;;
	--cache-mb) CACHE_MB=$2; shift 2 ;;
	--dev-mb) DEV_MB=$2; shift 2 ;;
	--phase-cache-mb) PHASE_CACHE_MB=$2; shift 2 ;;
	--phase-mb) PHASE_MB=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--policies) POLICIES=$2; shift 2 ;;
	--io-runtime) IO_RUNTIME=$2; shift 2 ;;
	--ratios-only) RATIOS_ONLY=1; shift ;;
	--out) OUT=$2; shift 2 ;;
	-h|--help) sed -n '4,75s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "dm-bench: unknown argument $1" >&2; exit 2 ;;
	esac
done

case $ROUNDS in *[!0-9]*|''|0) echo "dm-bench: --rounds takes a whole number from 1" >&2; exit 2 ;; esac
[ "$PHASE_MB" -lt "$PHASE_CACHE_MB" ] || { echo "dm-bench: --phase-mb must be under --phase-cache-mb" >&2; exit 2; }
LEN=$((DEV_MB * 2048))
BAND=32768			# 16 MiB
CACHE=$((CACHE_MB * 2048))
PCACHE=$((PHASE_CACHE_MB * 2048))
SLOTS=$((CACHE / 8))
NBANDS=$((LEN / BAND))
# Backing layout: metadata, the cache, the spare band, the bands; the
# tests' dms_need computes it (from dm-smr-dm.c smr_dm_geometry()).
. "$ROOT/tests/lib/dm.sh"
read -r MD NEED <<< "$(dms_need $LEN $BAND $CACHE)"
BANDS_START=$((MD + CACHE + BAND))
read -r _ PNEED <<< "$(dms_need $LEN $BAND $PCACHE)"
[ $PNEED -gt $NEED ] && NEED=$PNEED
PHASE_IO=${PHASE_MB}M			# cache-phase job: under its cache
# median(a, m): the median of a[1..m] (sorts a); 0 when m is 0.
AWK_MEDIAN='function median(a, m,   i, j, t) {
	if (m == 0) return 0
	for (i = 2; i <= m; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
	return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}'

WORK=$(mktemp -d /tmp/dm-bench.XXXXXX)
REPORT=$WORK/report
: > "$REPORT"
SMR=dmb_smr
LIN=dmb_linear
BACK=dmb_back

say() { printf '%s\n' "$*" | tee -a "$REPORT"; }
log() { printf '# %s\n' "$*"; }
die() { echo "dm-bench: $*" >&2; cleanup; exit 1; }

cleanup() {
	dm_remove_existing $SMR $LIN $BACK
	[ -n "$OUT" ] && cp "$REPORT" "$OUT"
}
trap cleanup EXIT

for c in fio dmsetup jq awk; do
	command -v $c > /dev/null || die "$c is not installed"
done
[ -b "$DISK" ] || die "no scratch disk $DISK"
[ "$(blockdev --getsz "$DISK")" -ge $((2048 + NEED)) ] || die "$DISK is too small"

modprobe dm-mod 2> /dev/null
if ! dmsetup targets | grep -q '^smr '; then
	"$ROOT/scripts/load-modules.sh" dm-smr || die "cannot load $ROOT/dm-smr/dm-smr.ko"
fi

now_ns() { date +%s%N; }

# The backing region starts 1 MiB into the disk, as a dm-linear device of
# its own so that the smr table names a device of exactly NEED sectors.
# dm-linear, the yardstick, maps the bands' sectors of that same device:
# each then passes one dm layer of its own over $BACK. Over $DISK itself
# it had one layer fewer, which cost the target about 10 % of its random
# reads in exact figures (0.883 of dm-linear until 2026-11-30, 0.978 with
# both over one device).
dmsetup create $BACK --table "0 $NEED linear $DISK 2048" || die "cannot map the backing region"
dmsetup create $LIN --table "0 $LEN linear /dev/mapper/$BACK $BANDS_START" ||
	die "cannot create the linear device"
udevadm settle 2> /dev/null

# st FIELD...: status fields of the smr device by name (/tmp/dm-spec.md).
ST_NAMES="mode nr_bands band_sectors cache cache_live index_extents index_bytes dirty_bands rmw_bg rmw_fg rmw_manual bg_aborts clean_read_sectors clean_write_sectors clean_ms_bg clean_ms_fg clean_ms_since_busy host_read_sectors host_write_sectors cache_write_sectors bypass_write_sectors wa state policy commits errors mem_bytes"
st() {
	local line
	line=$(dmsetup status $SMR) || return 1
	awk -v names="$ST_NAMES" -v want="$*" '
		BEGIN { n = split(names, a, " "); for (i = 1; i <= n; i++) idx[a[i]] = i }
		{ m = split(want, w, " "); out = ""
		  for (i = 1; i <= m; i++) {
			v = $(3 + idx[w[i]])
			if (w[i] == "cache_used") { v = $(3 + idx["cache"]); sub("/.*", "", v) }
			out = out (i > 1 ? " " : "") v }
		  print out }' <<< "$line"
}

# smr_fresh [POLICY [CACHE_SECTORS]]: a freshly formatted smr device.
smr_fresh() {
	local pol=${1:-fifo} cache=${2:-$CACHE}
	dmsetup info $SMR > /dev/null 2>&1 && { dmsetup remove --retry $SMR || die "cannot remove $SMR"; }
	dmsetup create $SMR --table "0 $LEN smr /dev/mapper/$BACK drive-managed $BAND 7 cache_sectors $cache idle_ms 500 policy $pol format" ||
		die "cannot create the smr device"
	udevadm settle 2> /dev/null
}

# fio_bw DEV ARGS...: one fio run; prints the write (or read) bandwidth in MiB/s.
fio_bw() {
	local dev=$1 json=$WORK/fio.json; shift
	fio --name=bench --filename="$dev" --ioengine=libaio --direct=1 \
		--output-format=json --output="$json" "$@" > "$WORK/fio.err" 2>&1 ||
		{ cat "$WORK/fio.err" "$json" >&2; die "fio failed on $dev: $*"; }
	sed -n '/^{/,$p' "$json" | jq -r '.jobs[0] |
		(if .write.io_bytes > 0 then .write else .read end) | .bw_bytes / 1048576'
}

T_START=$(now_ns)
say "dm-smr drive-managed: random writes, cleaning, policies; dm-linear on the same backing"
say "  device $DEV_MB MiB, $NBANDS bands of $((BAND / 2048)) MiB, cache $((CACHE / 2048)) MiB ($SLOTS slots), idle_ms 500"
say "  backing: $DISK sectors 2048..$((2048 + NEED)) (metadata $MD, cache $CACHE, spare $BAND, bands $LEN); linear maps the bands' sectors"
say "  (the cache-phase comparison uses a $PHASE_CACHE_MB MiB cache instead)"
say "  $(fio --version), direct=1, libaio; kernel $(uname -r), $(nproc) cpus; $(date -u '+%Y-%m-%d %H:%M UTC')"

log "filling the backing region once ($((NEED / 2048)) MiB)"
dd if=/dev/zero of=/dev/mapper/$BACK bs=1M count=$((NEED / 2048)) oflag=direct status=none ||
	die "fill failed"

# ---- 1. backing sequential bandwidth --------------------------------------
# seq_bw WHEN: sequential write and read on dm-linear; sets SEQ_RW.
seq_bw() {
	local w r
	w=$(fio_bw /dev/mapper/$LIN --rw=write --bs=1M --iodepth=1 --time_based --runtime=8 --ramp_time=1)
	r=$(fio_bw /dev/mapper/$LIN --rw=read --bs=1M --iodepth=1 --time_based --runtime=8 --ramp_time=1)
	SEQ_RW=$(awk -v r="$r" -v w="$w" 'BEGIN { printf "%.1f", 2 / (1 / r + 1 / w) }')
	say ""
	say "backing (dm-linear) sequential 1 MiB qd1, $1: write $(printf %.1f "$w") MiB/s, read $(printf %.1f "$r") MiB/s;"
	say "  as many bytes read as written: $SEQ_RW MiB/s"
}
[ $RATIOS_ONLY = 1 ] || { seq_bw first; SEQ_FIRST=$SEQ_RW; }

# ---- 2. cache phase vs linear ---------------------------------------------
RW_PHASE="--rw=randwrite --bs=4k --iodepth=4 --io_size=$PHASE_IO --randrepeat=1 --randseed=1234"
lin_phase() { fio_bw /dev/mapper/$LIN $RW_PHASE; }
smr_phase() {
	smr_fresh fifo $PCACHE
	fio_bw /dev/mapper/$SMR $RW_PHASE
	log "  smr $(st cache rmw_fg bypass_write_sectors)" >&2
}
bench_abba "$ROUNDS" lin_phase smr_phase > "$WORK/cp" || die "cache phase: no figure"
say ""
say "cache phase: randwrite 4 KiB qd4, $PHASE_IO over $DEV_MB MiB into a $PHASE_CACHE_MB MiB cache (empty at the start; $ROUNDS rounds, ABBA)"
say "$(awk '{ l = l sprintf(" %.1f", $1); s = s sprintf(" %.1f", $2); r = r sprintf(" %.3f", $2 / $1) }
	END { printf "  dm-linear MiB/s:%s\n  smr MiB/s:      %s\n  smr/linear:     %s", l, s, r }' "$WORK/cp")"
bench_header | tee -a "$REPORT"
say "$(bench_row dm "rand write 4K qd4" MiB/s "$WORK/cp")  (target >= 0.9)"

# ---- 2b. host I/O vs linear -------------------------------------------------
# io_run KIND: one fio run of workload KIND on device DEVN.
io_run() {
	case $1 in
	seqw) fio_bw /dev/mapper/$DEVN --rw=write --bs=1M --iodepth=4 --time_based --runtime="$IO_RUNTIME" --ramp_time=1 ;;
	seqr) fio_bw /dev/mapper/$DEVN --rw=read --bs=1M --iodepth=4 --time_based --runtime="$IO_RUNTIME" --ramp_time=1 ;;
	randr) fio_bw /dev/mapper/$DEVN --rw=randread --bs=4k --iodepth=16 --time_based --runtime="$IO_RUNTIME" --ramp_time=1 ;;
	esac
}
lin_io() { DEVN=$LIN io_run "$1"; }
smr_io() { DEVN=$SMR io_run "$1"; }
smr_fresh fifo
say ""
say "host I/O: ${IO_RUNTIME} s per run (1 s ramp), $ROUNDS rounds, ABBA; smr freshly formatted, cache $CACHE_MB MiB, seq_bypass"
bench_header | tee -a "$REPORT"
for w in "seqw:seq write 1M qd4" "seqr:seq read 1M qd4" "randr:rand read 4K qd16"; do
	bench_abba "$ROUNDS" lin_io smr_io "${w%%:*}" > "$WORK/io" || die "${w#*:}: no figure"
	say "$(bench_row dm "${w#*:}" MiB/s "$WORK/io")"
done
log "  smr after the host I/O: $(st cache bypass_write_sectors cache_write_sectors rmw_fg)"
if [ $RATIOS_ONLY = 1 ]; then
	say "total benchmark time $(awk -v a="$T_START" -v b="$(now_ns)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') s"
	exit 0
fi

# ---- 3. long run per policy -------------------------------------------------
ROWS=()
for pol in ${POLICIES//,/ }; do
	smr_fresh "$pol"
	bwlog=$WORK/bw_$pol
	log "policy $pol: randwrite 4 KiB qd4 for ${RUNTIME}s"
	fio_bw /dev/mapper/$SMR --rw=randwrite --bs=4k --iodepth=4 --randrepeat=1 --randseed=1234 \
		--time_based --runtime="$RUNTIME" --write_bw_log="$bwlog" --log_avg_msec=1000 \
		> "$WORK/avg_$pol"
	t0=$(now_ns)
	read -r rfg cr0 cw0 mfg used < <(st rmw_fg clean_read_sectors clean_write_sectors clean_ms_fg cache_used)
	log "  after fio: cache_used $used, rmw_fg $rfg, clean_ms_fg $mfg; $(dmsetup status $SMR | cut -d' ' -f4-)"
	wall=
	for ((i = 0; i < 600; i++)); do
		[ "$(st cache_used)" = 0 ] && { wall=$(awk -v a="$t0" -v b="$(now_ns)" 'BEGIN { printf "%.1f", (b - a) / 1e9 }'); break; }
		sleep 1
	done
	read -r rbg rfg2 cr1 cw1 mbg mfg2 wa aborts hw < <(st rmw_bg rmw_fg clean_read_sectors clean_write_sectors clean_ms_bg clean_ms_fg wa bg_aborts host_write_sectors)
	log "  clean: $(dmsetup status $SMR | cut -d' ' -f4-)"
	# Per-second bandwidth (MiB/s) and the two phases.
	f=$(ls "$bwlog"_bw*.log 2> /dev/null | head -n 1)
	[ -n "$f" ] || die "no bandwidth log for $pol"
	series=$(awk -F', *' '{ printf "%s%.1f", (NR > 1 ? " " : ""), $2 / 1024 }' "$f")
	phases=$(awk -F', *' -v cache=$((CACHE * 512)) "$AWK_MEDIAN"'
		# an entry is the rate over the time since the one before it
		# (fio logs late on a busy guest), or over 1 s after a gap
		{ dt = ($1 - prev) / 1000; prev = $1; if (dt > 3) dt = 1
		  bw = $2 * 1024; cum += bw * dt
		  if (cum <= 0.95 * cache) hi[++nh] = bw / 1048576
		  else if (full == 0 && cum >= cache) full = NR
		  if (full && NR > full + 5) lo[++nl] = bw / 1048576 }
		END { mh = median(hi, nh); ml = median(lo, nl)
		      printf "%d %.1f %d %.1f %s", nh, mh, nl, ml, (ml > 0 ? sprintf("%.1f", mh / ml) : "inf") }' "$f")
	read -r nh mh nl ml ratio <<< "$phases"
	say ""
	say "policy $pol: randwrite 4 KiB qd4, ${RUNTIME} s, MiB/s per second:"
	say "$(tr ' ' '\n' <<< "$series" | awk '{ printf "%s%6s", (NR % 15 == 1 ? (NR > 1 ? "\n" : "") "  " : ""), $1 } END { print "" }')"
	say "  cache phase: median $mh MiB/s over $nh s; collapsed: median $ml MiB/s over $nl s; ratio $ratio"
	say "  fio average $(printf %.1f "$(cat "$WORK/avg_$pol")") MiB/s; host wrote $((hw / 2048)) MiB"
	fgbw=$(awk -v s=$((cr0 + cw0)) -v ms="$mfg" 'BEGIN { printf "%.1f", (ms > 0 ? s / 2048 / (ms / 1000) : 0) }')
	bgbw=$(awk -v s=$((cr1 + cw1 - cr0 - cw0)) -v ms="$mbg" 'BEGIN { printf "%.1f", (ms > 0 ? s / 2048 / (ms / 1000) : 0) }')
	# Per RMW: data moved, time, cached blocks merged; the 4 passes alone.
	per=$(awk -v r=$cr1 -v w=$cw1 -v n=$((rbg + rfg2)) -v ms=$((mbg + mfg2)) -v band=$BAND \
		-v fg=$((mfg2 / (rfg2 > 0 ? rfg2 : 1))) -v bg=$((mbg / (rbg > 0 ? rbg : 1))) -v seq="$SEQ_FIRST" 'BEGIN {
		if (!n) exit
		printf "per RMW: %.1f MiB moved, %.0f ms (foreground %d, background %d); %.0f cached blocks merged; the 4 band passes alone at %.1f MiB/s: %.0f ms",
			(r + w) / n / 2048, ms / n, fg, bg, (r / n - 2 * band) / 8, seq, 4 * band / 2048 / seq * 1000 }')
	say "  after the run: cache empty after ${wall:-(not within 600 s)} s wall, clean_ms_bg $mbg ms ($rbg RMWs, $aborts aborted)"
	say "  band RMW bandwidth: foreground $fgbw MiB/s ($rfg RMWs in $mfg ms), background $bgbw MiB/s"
	say "  $per"
	ROWS+=("$(printf '  %-13s %6s %6s %6s  %7s %9s %9s  %6s %6s' "$pol" "$rfg2" "$rbg" "$wa" "${wall:--}" "$((mbg))" "$mfg2" "$fgbw" "$bgbw")")
	echo "$fgbw $bgbw" >> "$WORK/rmwbw"
done

say ""
say "by policy (same job, same seed, freshly formatted device each):"
say "  policy        rmw_fg rmw_bg     wa  clean_s  clean_ms_bg clean_ms_fg  fg_MiB/s bg_MiB/s"
for r in "${ROWS[@]}"; do say "$r"; done
seq_bw last
say ""
say "$(awk -v s1="$SEQ_FIRST" -v s2="$SEQ_RW" '
	{ f += $1; b += $2; n++ }
	END { if (!n) exit
	      printf "band RMW bandwidth (mean over the policies) / backing sequential (read = write bytes; first %.1f, last %.1f MiB/s):\n  foreground %.3f / %.3f, background %.3f / %.3f (target >= 0.8)",
		s1, s2, f / n / s1, f / n / s2, b / n / s1, b / n / s2 }' "$WORK/rmwbw")"
say "total benchmark time $(awk -v a="$T_START" -v b="$(now_ns)" 'BEGIN { printf "%.0f", (b - a) / 1e9 }') s"
log "report in $REPORT${OUT:+ and $OUT}"
