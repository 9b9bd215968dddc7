#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/hm-bench.sh - dm-smr host-managed against dm-linear, and the
# huge-device figures. Runs as root where the dm-smr module can be loaded
# (the VM that bench/run-hm boots); prints figures, passes or fails
# nothing on speed. Exits non-zero only if it could not measure.
#
# usage: bench/hm-bench.sh [--disk DEV] [--big DEV] [--runtime S]
#                          [--region-mb N] [--rounds N] [--no-big]
#                          [--write-cache MIB] [--out FILE]
#
#   --disk DEV      scratch disk for the throughput runs (/dev/vda); its
#                   first region is overwritten
#   --big DEV       huge (sparse) disk for the 10 TiB device (/dev/vdb);
#                   its start is overwritten
#   --runtime S     seconds per fio run of the reads (10; the writes
#                   make one pass over the region)
#   --region-mb N   backing region for the throughput runs (8192: a
#                   write pass then lasts seconds even at 3 GB/s; at
#                   least 4 zones, 1024)
#   --rounds N      pairs of runs per workload, even (4: linear, smr,
#                   smr, linear, ... so that drift in a shared host's
#                   speed, and whichever device runs first after the
#                   other, hit both alike: the first run after a switch
#                   is often slower here); figures are medians, the
#                   ratio is the median of the rounds' ratios, with its
#                   range
#   --big-tib N     size of the huge device in TiB (10); larger than BIG:
#                   on a dm-thin volume on BIG (sparse, 64 KiB blocks)
#   --churn-ios N   4 KiB writes of the open-zone churn (20000)
#   --reps N        creates timed per figure of the huge device (5)
#   --no-big        skip the huge-device part
#   --no-throughput skip the linear/smr comparison
#   --write-cache MIB  the smr device with a write cache of MIB MiB
#                   (docs/dm-smr.rst, "The write cache"): what it costs
#   --out FILE      also write the report to FILE
#
# Throughput: one backing region of DISK, filled once. dm-linear maps the
# part of it that dm-smr uses for zone data (dm-smr keeps its metadata in
# the first MiB), so both read and write the very same sectors. fio,
# direct=1, libaio; the reads time_based, the writes one pass over the
# region after a reset of every smr zone (a wrap-around in zbd mode would
# reset zones inside the timed run: each reset is a commit, whose cost
# is given on its own line, "zone reset"):
#   seq write 1 MiB, queue depth 1 and 4 (zonemode=zbd on both: smr's
#                    zones, and fio's emulated zones of the same size on
#                    dm-linear, so that fio's own per-I/O zone work, a
#                    tenth of the rate under TCG, is in both figures;
#                    depth 4 keeps 4 writes in flight in one zone: the
#                    zoned device allows it, 6.1's dm core zone lock
#                    did not),
#                    and 4 writers at depth 1, each on its own quarter
#                    of the device
#                    (4 zones written at once: depth 4 the zoned way)
#   seq read 1 MiB, queue depth 4
#   random read 4 KiB, queue depth 16
# Before the reads every zone of the smr device is reset and written full
# (a read past a zone's written data returns zeros without I/O, which
# would flatter the target).
#
# Write order: dm-smr acknowledges a zone's writes in write pointer order
# (docs/dm-smr.rst), so a write the backing disk completes before an
# earlier one waits for it; dm-linear passes each completion on at once.
# One more depth-4 pass over each device, with the block layer's bio
# events on the device and its request events on the disk under DISK,
# gives the "write order" line: the mean time from the disk's completion
# of a write to the device's, on each device, how much of smr's is the
# wait for earlier writes (and how often the disk completed a write
# before an earlier one, so that it waited), and the disk's own time per
# write. Needs tracefs and one request-based disk at the bottom.
#
# Huge device: a 10 TiB smr device with 256 MiB zones (40960) on BIG,
# created with "format", then removed and created again without it (the
# load path): each "dmsetup create" timed as one command (what a user
# waits for, udev included) and in its steps (load = the constructor,
# resume = the dm core's zone checks); memory per zone from the status
# line's mem_bytes, with the kernel's Slab growth around the create as a
# cross-check; dm-linear over the same 10 TiB as the baseline of what
# dmsetup and udev cost for any device in this VM. Then open-zone churn:
# 4 KiB writes at the write pointers of random zones all over the device
# (fio zonemode=zbd, ignore_zone_limits) with max_open 128, so that
# nearly every write opens a zone and implicitly closes the oldest.

set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/bench/thin.sh"
. "$ROOT/bench/lib.sh"
DISK=/dev/vda
BIG=/dev/vdb
RUNTIME=10
REGION_MB=8192
ROUNDS=4
BIG_TIB=10
REPS=5
DO_BIG=1
DO_TP=1
OUT=
WCACHE=
ZS_BENCH=524288			# 256 MiB zones, as HM-SMR drives have
ZS_BIG=524288

while [ $# -gt 0 ]; do
	case $1 in
	--disk) DISK=$2; shift 2 ;;
	--big) BIG=$2; shift 2 ;;
	--runtime) RUNTIME=$2; shift 2 ;;
	--region-mb) REGION_MB=$2; shift 2 ;;
	--rounds) ROUNDS=$2; shift 2 ;;
	--big-tib) BIG_TIB=$2; shift 2 ;;
	--churn-ios) CHURN_IOS=$2; shift 2 ;;
	--reps) REPS=$2; shift 2 ;;
	--no-big) DO_BIG=0; shift ;;
	--no-throughput) DO_TP=0; shift ;;
	--write-cache) WCACHE=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	-h|--help) sed -n '4,49s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "hm-bench: unknown argument $1" >&2; exit 2 ;;
	esac
done

# An odd count would put one device after the other once more.
[ "$ROUNDS" -ge 1 ] 2> /dev/null || { echo "hm-bench: --rounds needs a number" >&2; exit 2; }
ROUNDS=$(( (ROUNDS + 1) / 2 * 2 ))

WORK=$(mktemp -d /tmp/hm-bench.XXXXXX)
REPORT=$WORK/report
: > "$REPORT"
LIN=hmb_linear
SMR=hmb_smr
BIGN=hmb_big
THIN=hmb_thin		# thin_backing hmb (bench/thin.sh)
CHURN_IOS=20000

# say: a line of the report (also on stdout).
say() { printf '%s\n' "$*" | tee -a "$REPORT"; }
log() { printf '# %s\n' "$*"; }
die() { echo "hm-bench: $*" >&2; cleanup; exit 1; }

cleanup() {
	dm_remove_existing $BIGN $SMR $LIN
	thin_remove hmb
	[ -n "$OUT" ] && cp "$REPORT" "$OUT"
}
trap cleanup EXIT

for c in fio dmsetup blkzone jq awk; do
	command -v $c > /dev/null || die "$c is not installed"
done
[ -b "$DISK" ] || die "no scratch disk $DISK"

# The module: loaded already (vm-run's suite does it), else from the tree.
modprobe dm-mod 2> /dev/null
if ! dmsetup targets | grep -q '^smr '; then
	insmod "$ROOT/dm-smr/dm-smr.ko" || die "cannot load $ROOT/dm-smr/dm-smr.ko"
fi

# now_ns, and secs FROM_NS: seconds since FROM_NS, 3 decimals.
now_ns() { date +%s%N; }
secs() { awk -v a="$1" -v b="$(now_ns)" 'BEGIN { printf "%.3f", (b - a) / 1e9 }'; }

# st NAME FIELD: a status field of an smr device (docs/dm-smr.rst).
st() {
	dmsetup status "$1" | awk -v f="$2" '
		BEGIN { n = split("nr_zones conv_zones imp_open exp_open closed full readonly offline writes write_sectors reads read_sectors resets finishes opens closes imp_closes wp_errors errors commits mem_bytes", a, " ") }
		$4 == "host-managed" { for (i = 1; i <= n; i++) if (a[i] == f) { print $(4 + i); exit } }'
}

# fio_run DEV KIND EXTRA...: one time_based fio run; prints "MiB/s" for
# bandwidth runs or "IOPS" for KIND=iops.
# With --once first: one pass over the job's range instead (the writes).
fio_run() {
	local dev=$1 kind=$2 json=$WORK/fio.json
	local -a timing=(--time_based --runtime="$RUNTIME" --ramp_time=1)
	shift 2
	if [ "${1:-}" = --once ]; then
		timing=()
		shift
	fi
	fio --name=bench --filename="$dev" --ioengine=libaio --direct=1 \
		"${timing[@]}" \
		--output-format=json --output="$json" "$@" > "$WORK/fio.err" 2>&1 ||
		{ cat "$WORK/fio.err" "$json" >&2; die "fio failed on $dev: $*"; }
	sed -n '/^{/,$p' "$json" | jq -r --arg k "$kind" '.jobs[0] |
		(if .write.io_bytes > 0 then .write else .read end) as $d |
		if $k == "iops" then $d.iops else $d.bw_bytes / 1048576 end'
}


# ------------------------------------------------------ throughput ---

# reset_cost: what one zone reset costs (a commit: the zone table made
# durable), zone by zone over the full zones the writes left: the median
# time of a blkzone reset of one zone, with that of a blkzone report of
# the same zone beside it (the command's own cost in this VM). Said in
# the report; dm-linear has no counterpart.
reset_cost() {
	local z nz=$((len / ZS_BENCH)) t0 full
	full=$(st $SMR full)
	: > "$WORK/rq"; : > "$WORK/rr"
	for ((z = 0; z < nz; z++)); do
		t0=$(now_ns)
		blkzone report -o $((z * ZS_BENCH)) -c 1 /dev/mapper/$SMR > /dev/null ||
			die "zone report failed"
		echo $(($(now_ns) - t0)) >> "$WORK/rq"
		t0=$(now_ns)
		blkzone reset -o $((z * ZS_BENCH)) -c 1 /dev/mapper/$SMR ||
			die "zone reset failed"
		echo $(($(now_ns) - t0)) >> "$WORK/rr"
	done
	RESET_LINE=$(printf '  zone reset (a commit): %.1f ms, median of %d zones (%s full); blkzone report of one zone: %.1f ms' \
		"$(median_ms "$WORK/rr")" "$nz" "$full" "$(median_ms "$WORK/rq")")
}

# bottom_disk DEV: the whole disk at the bottom of DEV's stack (one
# device-mapper or partition layer after another, one device under each),
# as "major:minor"; fails if a layer has more than one device under it.
bottom_disk() {
	local b under
	b=$(basename "$(readlink -f "$1")")
	while :; do
		[ -e "/sys/class/block/$b/partition" ] &&
			b=$(basename "$(readlink -f "/sys/class/block/$b/..")")
		under=($(ls "/sys/class/block/$b/slaves" 2> /dev/null))
		[ ${#under[@]} = 0 ] && break
		[ ${#under[@]} = 1 ] || return 1
		b=${under[0]}
	done
	cat "/sys/class/block/$b/dev"
}

# devno MAJ:MIN: the number tracefs block events filter "dev" on.
devno() {
	echo $(( (${1%:*} << 20) | ${1#*:} ))
}

# overruns: events the trace buffers have lost so far, on every CPU.
overruns() {
	cat /sys/kernel/tracing/per_cpu/cpu*/stats 2> /dev/null |
		awk '$1 == "overrun:" { n += $2 } END { print n + 0 }'
}

# traced_pass DEV FIO_ARGS...: one fio pass on /dev/mapper/DEV with the
# block layer's bio events on DEV and its request events on the disk at
# the bottom (MAJ:MIN in BOTTOM); the trace lines go to stdout, after a
# "lost N" line if the buffers overran (a pass of 8 GiB makes about
# 40000 events; the buffers are made 32 MiB per CPU for it).
traced_pass() {
	local t=/sys/kernel/tracing dev=$1 top ev size o0
	shift
	top=$(cat "/sys/block/$(basename "$(readlink -f "/dev/mapper/$dev")")/dev")
	# "1408", or "7 (expanded: 1408)" before anything traced: the size
	# to put back is the one tracing would use.
	size=$(cat $t/buffer_size_kb)
	case $size in
	*expanded:*) size=${size##*expanded: }; size=${size%)*} ;;
	*) size=${size%% *} ;;
	esac
	echo 0 > $t/tracing_on; echo > $t/trace
	echo 32768 > $t/buffer_size_kb
	o0=$(overruns)
	for ev in block_bio_queue block_bio_complete; do
		echo "dev == $(devno "$top")" > $t/events/block/$ev/filter
		echo 1 > $t/events/block/$ev/enable
	done
	for ev in block_rq_issue block_rq_complete; do
		echo "dev == $(devno "$BOTTOM")" > $t/events/block/$ev/filter
		echo 1 > $t/events/block/$ev/enable
	done
	echo 1 > $t/tracing_on
	fio_run /dev/mapper/$dev bw "$@" > /dev/null
	echo 0 > $t/tracing_on
	for ev in block_bio_queue block_bio_complete block_rq_issue block_rq_complete; do
		echo 0 > $t/events/block/$ev/enable
		echo 0 > $t/events/block/$ev/filter
	done
	echo "lost $(( $(overruns) - o0 ))"
	echo "top ${top/:/,}"
	cat $t/trace
	echo > $t/trace
	echo "$size" > $t/buffer_size_kb
	echo 1 > $t/tracing_on
}

# after_disk: reads traced_pass's output; prints "n late wait after svc"
# in microseconds per write: how many 1 MiB writes of the device there
# were, how many the disk completed before an earlier one (these waited
# on smr), the mean wait for earlier writes, the mean time from the
# disk's completion of a write (its last piece) to the device's, and the
# disk's own time per write. A write's pieces on the disk are found by
# sector: the pass starts at sector 0 of the device, so the disk's
# lowest sector is the device's 0 (the trace must have lost nothing:
# prints nothing if it did).
after_disk() {
	awk -v disk="${BOTTOM/:/,}" '
		$1 == "lost" { if ($2 > 0) lost = 1; next }
		$1 == "top" { top = $2; next }
		/block_(bio|rq)_[a-z]*: / {
			for (i = 1; i <= NF; i++) if ($i == top || $i == disk) break
			if (i > NF || $(i + 1) !~ /W/) next
			for (j = i + 2; j <= NF && $j != "+"; j++) ;
			if (j > NF || $(j + 1) + 0 == 0) next
			ts = $0; sub(/: block_.*/, "", ts); sub(/.* /, "", ts)
			ts += 0	# compared as numbers below, not as text
			s = $(j - 1)
			if ($i == top && /block_bio_queue/ && !(s in q)) q[s] = ts
			else if ($i == top && /block_bio_complete/) c[s] = ts
			else if ($i == disk && /block_rq_issue/) iss[s] = ts
			else if ($i == disk && /block_rq_complete/ && (s in iss)) {
				n++; rs[n] = s; ri[n] = iss[s]; rc[n] = ts
				if (min == "" || s + 0 < min) min = s + 0
			}
		}
		END {
			if (lost) exit
			for (k = 1; k <= n; k++) {
				b = int((rs[k] - min) / 2048) * 2048
				if (!(b in f) || ri[k] < f[b]) f[b] = ri[k]
				if (!(b in l) || rc[k] > l[b]) l[b] = rc[k]
			}
			for (b in q) if ((b in c) && (b in f))
				printf "%d %.6f %.6f %.6f\n", b, f[b], l[b], c[b]
		}' | sort -n | awk '
		{ n++; svc += $3 - $2; after += $4 - $3
		  if ($3 < last) { late++; wait += last - $3 } else last = $3 }
		END { if (n) printf "%d %d %.1f %.1f %.1f\n", n, late, 1e6 * wait / n, 1e6 * after / n, 1e6 * svc / n }'
}

# order_cost FIO_ARGS...: the "write order" line (see the header), from
# one traced pass of the depth-4 write row's job on each device. Leaves
# every smr zone full, as the write rows do.
order_cost() {
	local t=/sys/kernel/tracing lin smr
	ORDER_LINE="  write order: not measured"
	[ -d $t/events ] || mount -t tracefs nodev $t 2> /dev/null
	[ -w $t/events/block/block_bio_complete/enable ] || {
		ORDER_LINE+=" (no tracefs block events)"; return 0; }
	BOTTOM=$(bottom_disk "$DISK") || {
		ORDER_LINE+=" ($DISK is over more than one disk)"; return 0; }
	blkzone reset /dev/mapper/$SMR || die "zone reset failed"
	lin=$(traced_pass $LIN "${LIN_ORDER_ARGS[@]}" | after_disk)
	smr=$(traced_pass $SMR "$@" | after_disk)
	set -- $lin $smr
	if [ $# != 10 ] || [ "$1" -lt 100 ] || [ "$6" -lt 100 ]; then
		ORDER_LINE+=" (the trace lost events or saw too few writes: '$lin' '$smr')"
		return 0
	fi
	# dm-linear's count, late writes and wait ($1-$3) are not reported:
	# it does not wait for order.
	ORDER_LINE=$(awk -v la="$4" -v ls="$5" \
		-v sn="$6" -v sl="$7" -v sw="$8" -v sa="$9" -v ss="${10}" 'BEGIN {
		printf "  write order (seq write 1M qd4, one traced pass each): from the disk'"'"'s completion of a write to the device'"'"'s, dm-linear %.0f us, smr %.0f us, of which %.0f us waiting for earlier writes (the disk completed %.0f%% of smr'"'"'s writes before an earlier one: those waited); the disk'"'"'s own time per write: dm-linear %.0f us, smr %.0f us; smr'"'"'s extra time after the disk: %.1f%% of its time per write (disk and after)\n",
			la, sa, sw, 100 * sl / sn, ls, ss, 100 * (sa - la) / (ss + sa) }')
}

# median_ms FILE: the median of FILE's nanosecond figures, in ms.
median_ms() {
	bench_median < "$1" | awk '{ print $1 / 1e6 }'
}

run_throughput() {
	local md=2048 len ver
	local -a names kinds units lin_args smr_args
	local lz sz
	RESET_LINE="  zone reset: not measured"

	# dm-smr keeps its metadata first: 1 MiB for up to 64516 zones
	# (docs/dm-smr.rst, Backing device size). The region is that plus
	# the zones.
	len=$(( REGION_MB * 2048 / ZS_BENCH * ZS_BENCH ))
	# 4 writers, each on whole zones of its own quarter.
	[ $len -ge $((4 * ZS_BENCH)) ] ||
		die "region of $REGION_MB MiB holds fewer than 4 zones of $((ZS_BENCH / 2048)) MiB (--region-mb $((4 * ZS_BENCH / 2048)) or more)"
	[ $(( (md + len) * 512 )) -le "$(blockdev --getsize64 "$DISK")" ] ||
		die "$DISK is smaller than $REGION_MB MiB + 1 MiB"

	opts="1 format"
	[ -n "$WCACHE" ] && opts="3 format write_cache_kib $((WCACHE * 1024))"
	dmsetup create $SMR --table "0 $len smr $DISK host-managed $ZS_BENCH $opts" ||
		die "cannot create the smr device"
	dmsetup create $LIN --table "0 $len linear $DISK $md" ||
		die "cannot create the linear device"
	udevadm settle 2> /dev/null

	ver=$(fio --version)
	say "dm-smr host-managed${WCACHE:+ (write_cache $WCACHE MiB)} vs dm-linear on the same backing sectors"
	say "  backing: $DISK sectors $md..$((md + len)) ($((len / 2048)) MiB), zones of $((ZS_BENCH / 2048)) MiB ($((len / ZS_BENCH)) zones)"
	say "  $ver, direct=1, libaio, ${RUNTIME} s per run (1 s ramp), $ROUNDS round(s) of linear/smr in alternating order"
	say "  writes: fio zonemode=zbd on both (dm-linear: fio's emulated $((ZS_BENCH / 2048)) MiB zones), so fio's zone work is in both figures"
	say "  kernel $(uname -r), $(nproc) cpus; $(date -u '+%Y-%m-%d %H:%M UTC')"

	log "filling the backing region once (both devices then overwrite, never allocate)"
	dd if=/dev/zero of=/dev/mapper/$LIN bs=1M count=$((len / 2048)) oflag=direct status=none ||
		die "fill failed"

	# 4 writers, each over its own quarter of the device (whole zones).
	q4="--numjobs=4 --size=$((len / 4 / 2048))M --offset_increment=$((len / 4 / 2048))M --group_reporting"
	names=("seq write 1M qd1" "seq write 1M qd4" "seq write 1M 4 jobs"
	       "seq read 1M qd4" "rand read 4K qd16")
	kinds=(bw bw bw bw iops)
	units=(MiB/s MiB/s MiB/s MiB/s IOPS)
	# The writes: fio's zone logic on both sides, one pass over the
	# region after a reset (see the header).
	lz="--once --zonemode=zbd --zonesize=$((ZS_BENCH / 2048))M"
	lin_args=("$lz --rw=write --bs=1M --iodepth=1"
		  "$lz --rw=write --bs=1M --iodepth=4"
		  "$lz --rw=write --bs=1M --iodepth=1 $q4"
		  "--rw=read --bs=1M --iodepth=4"
		  "--rw=randread --bs=4k --iodepth=16")
	sz="--once --zonemode=zbd"
	smr_args=("$sz --rw=write --bs=1M --iodepth=1"
		  "$sz --rw=write --bs=1M --iodepth=4"
		  "$sz --rw=write --bs=1M --iodepth=1 $q4"
		  "--rw=read --bs=1M --iodepth=4"
		  "--rw=randread --bs=4k --iodepth=16")

	local i r l s
	for i in 0 1 2 3 4; do
		if [ $i = 3 ]; then
			LIN_ORDER_ARGS=(${lin_args[1]})
			order_cost ${smr_args[1]}
			# Reset zone by zone, timed: every zone is empty after it.
			reset_cost
			# Reads: every smr zone full of data, as linear's region is.
			log "filling every smr zone before the reads"
			dd if=/dev/zero of=/dev/mapper/$SMR bs=1M count=$((len / 2048)) \
				oflag=direct status=none ||
				die "filling the smr zones failed"
			[ "$(st $SMR full)" = $((len / ZS_BENCH)) ] ||
				die "smr zones not all full: $(dmsetup status $SMR)"
		fi
		: > "$WORK/l"; : > "$WORK/s"
		for ((r = 0; r < ROUNDS; r++)); do
			# The writes start on empty zones: a reset costs a
			# commit, timed on its own (below), not in a write run.
			if [ $i -lt 3 ]; then
				blkzone reset /dev/mapper/$SMR || die "zone reset failed"
			fi
			# ABBA: linear first in even rounds, smr first in odd ones.
			if [ $((r % 2)) = 0 ]; then
				l=$(fio_run /dev/mapper/$LIN ${kinds[i]} ${lin_args[i]})
				s=$(fio_run /dev/mapper/$SMR ${kinds[i]} ${smr_args[i]})
			else
				s=$(fio_run /dev/mapper/$SMR ${kinds[i]} ${smr_args[i]})
				l=$(fio_run /dev/mapper/$LIN ${kinds[i]} ${lin_args[i]})
			fi
			# fio_run's die only left the $(...) it ran in.
			[ -n "$l" ] && [ -n "$s" ] ||
				die "${names[i]} round $((r + 1)): no figure (linear '$l', smr '$s')"
			log "${names[i]} round $((r + 1)): linear $l, smr $s"
			echo "$l" >> "$WORK/l"; echo "$s" >> "$WORK/s"
		done
		ROWS+=("$(paste "$WORK/l" "$WORK/s" | bench_row hm${WCACHE:+-wc} "${names[i]}" "${units[i]}" -)")
	done

	say ""
	say "  medians of $ROUNDS round(s); smr/linear is the median of each round's ratio (target >= 0.95)"
	say "  workload              dm-linear     dm-smr  unit   smr/linear  range"
	for r in "${ROWS[@]}"; do say "$r"; done
	say "$ORDER_LINE"
	say "$RESET_LINE"
	say "  smr status after: wp_errors $(st $SMR wp_errors), errors $(st $SMR errors), resets $(st $SMR resets)"
	dmsetup remove $SMR; dmsetup remove $LIN
}

# ----------------------------------------------------- huge device ---

meminfo() { awk -v k="$1:" '$1 == k { print $2 }' /proc/meminfo; }

run_big() {
	local len zones need size mem s0 v0 f0 s1 v1 f1 dev fmt load lin
	[ -b "$BIG" ] || { say "huge device: no $BIG, skipped"; return; }
	len=$((BIG_TIB * 2048 * 1024 * 1024))
	zones=$((len / ZS_BIG))
	need=$((len + 2048))
	size=$(blockdev --getsz "$BIG")
	BACK=$BIG
	# (The metadata of many zones takes more than the 1 MiB "need" allows
	# for: a thin volume costs nothing for the room, so give it a GiB.)
	if [ "$size" -lt $need ] && thin_backing hmb "$BIG" $((len + 2097152)); then
		BACK=/dev/mapper/$THIN
		size=$((len + 2097152))
		say "huge device: $BIG holds $(($(blockdev --getsz "$BIG") / 2048 / 1024 / 1024)) TiB: a dm-thin volume of $size sectors on it instead (64 KiB blocks)"
	elif [ "$size" -lt $need ]; then
		# vm-run makes a smaller disk if the host cannot hold 11 TiB.
		BIG_TIB=$(( (size - 2048) / (2048 * 1024 * 1024) ))
		[ $BIG_TIB -gt 0 ] || { say "huge device: $BIG is under 1 TiB: skipped"; return; }
		say "huge device: $BIG has only $size sectors: $BIG_TIB TiB instead"
		len=$((BIG_TIB * 2048 * 1024 * 1024))
		zones=$((len / ZS_BIG))
	fi
	say ""
	say "huge device: $BIG_TIB TiB, $((ZS_BIG / 2048)) MiB zones ($zones zones) on $BIG ($((size / 2048 / 1024 / 1024)) TiB, sparse)"
	say "  (target: dmsetup create < 2 s, memory <= 64 bytes per zone)"

	fmt="0 $len smr $BACK host-managed $ZS_BIG 1 format"
	load="0 $len smr $BACK host-managed $ZS_BIG"
	lin="0 $len linear $BACK 2048"
	dev=/dev/mapper/$BIGN
	dmsetup version > /dev/null

	# Memory, on one create with format.
	s0=$(meminfo Slab); v0=$(meminfo VmallocUsed); f0=$(meminfo MemFree)
	dmsetup create $BIGN --table "$fmt" || die "cannot create the $BIG_TIB TiB device"
	s1=$(meminfo Slab); v1=$(meminfo VmallocUsed); f1=$(meminfo MemFree)
	udevadm settle 2> /dev/null
	mem=$(st $BIGN mem_bytes)
	say "  nr_zones $(st $BIGN nr_zones), sysfs nr_zones $(cat /sys/block/$(basename "$(readlink -f $dev)")/queue/nr_zones)"
	say "$(awk -v m="$mem" -v z="$zones" -v s="$((s1 - s0))" 'BEGIN {
		printf "  mem_bytes %d = %.1f bytes per zone; Slab grew %d KiB = %.1f bytes per zone", m, m / z, s, s * 1024 / z }')"
	say "  (whole-system deltas around the create: VmallocUsed $((v1 - v0)) KiB, MemFree $((f0 - f1)) KiB)"
	dmsetup remove --retry $BIGN || die "cannot remove the huge device"

	say "  times in s over $REPS creates each, min / median / max (a shared host is noisy: min is the cost)"
	# What a user waits for: one "dmsetup create" (udev included). The
	# page cache is left alone: the target reads its metadata with its
	# own bios; dropping caches would only time reloading dmsetup and
	# udev's files over 9p.
	timed_reps "dmsetup create, format" create "$fmt" || die "create with format failed"
	timed_reps "  load (constructor)" load "$fmt" || die "create with format failed"
	timed_reps "  resume" resume "$fmt" || die "create with format failed"

	# Write at both ends of the device so that the load has a zone
	# table with something in it to read.
	dmsetup create $BIGN --table "$fmt" || die "cannot create the huge device"
	dd if=/dev/zero of=$dev bs=1M count=4 oflag=direct status=none
	dd if=/dev/zero of=$dev bs=1M count=4 seek=$(( (zones - 1) * (ZS_BIG / 2048) )) \
		oflag=direct status=none
	udevadm settle 2> /dev/null
	dmsetup remove --retry $BIGN || die "cannot remove the huge device"

	timed_reps "dmsetup create, load (no format)" create "$load" || die "create without format failed"
	timed_reps "  load (constructor)" load "$load" || die "create without format failed"
	timed_reps "  resume" resume "$load" || die "create without format failed"
	timed_reps "dmsetup remove" remove "$load" || die "remove failed"
	dmsetup create $BIGN --table "$load" || die "cannot re-create the huge device"
	say "  after the loads: $(st $BIGN closed) closed zone(s), $(st $BIGN full) full (2 were written: want 2 closed)"
	udevadm settle 2> /dev/null
	dmsetup remove --retry $BIGN

	# What dmsetup and udev cost for any device this size here.
	timed_reps "baseline: dmsetup create, dm-linear" create "$lin" || return
	timed_reps "baseline: dmsetup remove, dm-linear" remove "$lin" || return
	run_churn "0 $len smr $BACK host-managed $ZS_BIG 2 max_open 128" "$zones"
	[ "$BACK" = "$BIG" ] || thin_remove hmb
}

# churn_fio FIO-ARGS...: CHURN_IOS random 4 KiB writes, one at a time,
# with FIO-ARGS (the target and its placement); sets FIO_OUT (fio's output),
# FIO_IOPS and FIO_LAT (mean completion latency, us), both empty if it wrote
# nothing.
churn_fio() {
	FIO_OUT=$(fio --direct=1 --rw=randwrite --bs=4k --ioengine=psync \
		--norandommap=1 --random_generator=tausworthe64 \
		--number_ios="$CHURN_IOS" --output-format=terse --terse-version=3 \
		"$@" 2>&1)
	# terse v3: field 49 write IOPS, field 81 mean completion latency (us)
	FIO_IOPS=$(awk -F';' '$1 == 3 && $49 > 0 { print $49 }' <<< "$FIO_OUT")
	FIO_LAT=$(awk -F';' '$1 == 3 && $49 > 0 { printf "%.0f", $81 }' <<< "$FIO_OUT")
}

# run_churn TABLE ZONES: open-zone churn on a device made from TABLE.
run_churn() {
	local table=$1 zones=$2 dev=/dev/mapper/$BIGN
	command -v fio > /dev/null || return
	dmsetup create $BIGN --table "$table" || { say "  churn: cannot create the device"; return; }
	udevadm settle 2> /dev/null
	# fio keeps its zone table in its shared pool (16 MiB by default,
	# too small for 2^18 zones): --alloc-size, in KiB.
	churn_fio --alloc-size=262144 --name=churn --filename=$dev --zonemode=zbd \
		--ignore_zone_limits=1 --randrepeat=1
	if [ -z "$FIO_IOPS" ]; then
		say "  churn: fio wrote nothing: $(grep -v '^3;' <<< "$FIO_OUT" | tail -3)"
		dmsetup remove --retry $BIGN
		return
	fi
	say "  open-zone churn, max_open 128: $CHURN_IOS writes of 4 KiB at the write pointers of random zones of $zones: $FIO_IOPS IOPS, mean latency $FIO_LAT us"
	say "    status: writes $(st $BIGN writes), implicit closes $(st $BIGN imp_closes), implicitly open $(st $BIGN imp_open), closed $(st $BIGN closed), mem_bytes $(st $BIGN mem_bytes)"
	dmsetup remove --retry $BIGN
	# Baseline: the same writes straight to the backing, 4 KiB at random
	# 256 MiB boundaries (where the zones start; on a thin volume each
	# first write to a block allocates it, as the churn's did), another
	# random sequence so that they land on blocks not written yet.
	churn_fio --name=base --filename="$BACK" --blockalign=$((ZS_BIG * 512)) \
		--offset=1g --randseed=77
	say "  baseline: the same writes on the backing itself: ${FIO_IOPS:-?} IOPS, mean latency ${FIO_LAT:-?} us"
}

# timed_reps DESC WHAT TABLE: REPS times, create the huge device with
# TABLE and remove it, timing WHAT: "create" (one dmsetup create, which
# waits for udev), "load" (dmsetup load of a device created without a
# table: the target's constructor), "resume" (the dm core reads the
# zone report, every zone, and sets up its zone append emulation;
# without the wait for udev) or "remove". One report line.
timed_reps() {
	local desc=$1 what=$2 table=$3 i t0 t times=()
	for ((i = 0; i < REPS; i++)); do
		case $what in
		create)
			t0=$(now_ns)
			dmsetup create $BIGN --table "$table" || return
			t=$(secs "$t0")
			;;
		load|resume)
			dmsetup create $BIGN --notable || return
			t0=$(now_ns)
			dmsetup load $BIGN --table "$table" || return
			t=$(secs "$t0")
			t0=$(now_ns)
			dmsetup resume --noudevsync $BIGN || return
			[ $what = resume ] && t=$(secs "$t0")
			;;
		remove)
			dmsetup create $BIGN --table "$table" || return
			;;
		esac
		udevadm settle 2> /dev/null
		t0=$(now_ns)
		dmsetup remove --retry $BIGN || return
		[ $what = remove ] && t=$(secs "$t0")
		times+=("$t")
	done
	say "$(printf '%s\n' "${times[@]}" | sort -n | awk -v d="$desc" '
		{ v[NR] = $1 }
		END { printf "  %-38s %6.3f / %6.3f / %6.3f", d ":", v[1], v[int((NR + 1) / 2)], v[NR] }')"
}

ROWS=()
[ $DO_TP = 1 ] && run_throughput
[ $DO_BIG = 1 ] && run_big
say ""
log "report in $REPORT${OUT:+ and $OUT}"
