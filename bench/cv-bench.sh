#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 900
# bench/cv-bench.sh - dm-caveat throughput against dm-linear on the same
# backing, and the damage map's memory per TiB.
#
# Runs in the test VM (it uses tests/common.sh for backing devices):
#   tests/vm-run --results /tmp/cv-bench bench/cv-bench.sh
# Prints "# bench:" lines: MB/s of dm-linear and caveat for sequential
# 1 MiB writes and reads and random 4 KiB reads and writes (iodepth 8, and
# writes at 32 too), their ratio (and caveat's with write_cache where the
# backing has a volatile cache), what a durable (FUA) write costs on the
# same backing, all on the scratch disk and on a memory-backed null_blk
# (no volatile cache); then mem_bytes per TiB after a sequential fill and
# after random 4 KiB writes spread over a 1 TiB device. Under TCG the
# absolute figures mean little; the ratios and the memory figures do.
. "$(dirname "$0")/../tests/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat benchmark"
require_cmd fio dmsetup
require_target caveat

SIZE=${CV_BENCH_MB:-128}
RUNTIME=${CV_BENCH_RUNTIME:-10}

# fio_bw DEV RW BS [QD [FIO-ARGS...]]: bandwidth in KiB/s of one short
# fio job (iodepth QD, default 8).
fio_bw() {
	local dev=$1 rw=$2 bs=$3 qd=${4:-8} out
	shift 4 2>/dev/null || shift $#
	out=$(cd "$T_WORK" && fio --name=b --filename="$dev" --rw="$rw" --bs="$bs" \
		--size=${SIZE}M --direct=1 --ioengine=libaio --iodepth="$qd" \
		--runtime="$RUNTIME" --time_based=0 --randrepeat=1 "$@" \
		--output-format=terse --terse-version=3 2>/dev/null)
	# terse v3: field 7 read bw (KiB/s), field 48 write bw.
	case $rw in
	*read) echo "$out" | awk -F';' '{ print $7 }' ;;
	*) echo "$out" | awk -F';' '{ print $48 }' ;;
	esac
}

# ratio L C: C / L to two places, n/a without L.
ratio() { awk -v l="$1" -v c="$2" 'BEGIN { if (l > 0) printf "%.2f", c / l; else print "n/a" }'; }

# The workloads: name, fio rw, block size, iodepth. Random writes start
# from a device just filled sequentially, so that they damage live data.
WORKLOADS=("write write 1M 8" "read read 1M 8" "randread randread 4k 8"
	"randwrite randwrite 4k 8" "randwrite-qd32 randwrite 4k 32")

# cav_runs TAG BACKING ARRAY TABLE: every workload on a caveat device of
# TABLE over BACKING (discarded first), KiB/s into the associative array
# named ARRAY. Random writes start from a sequential fill.
cav_runs() {
	local tag=$1 dev=$2 table=$4 w
	local -n bw=$3
	blkdiscard "$dev" 2>/dev/null
	dm_create cvb_cav "$table" || bail "cannot create caveat: $table"
	for w in "${WORKLOADS[@]}"; do
		set -- $w
		case $2 in randwrite) fio_bw /dev/mapper/cvb_cav write 1M >/dev/null ;; esac
		bw[$1]=$(fio_bw /dev/mapper/cvb_cav "$2" "$3" "$4")
	done
	diag "bench: $tag: status after the runs on '${table#* caveat }': $(dmsetup status cvb_cav)"
	dm_remove cvb_cav
}

# bench_pair TAG BACKING SECTORS OFFSET: every workload on dm-linear, then
# on caveat, over the same extent of BACKING; prints the ratios.
bench_pair() {
	local tag=$1 dev=$2 sectors=$3 off=$4 w name rw bs qd l c r x
	declare -A LIN CAV WC
	dm_create cvb_lin "0 $sectors linear $dev $off" || bail "cannot create dm-linear"
	for w in "${WORKLOADS[@]}"; do
		set -- $w
		LIN[$1]=$(fio_bw /dev/mapper/cvb_lin "$2" "$3" "$4")
	done
	# What one durable write costs here: the same random writes, each
	# with FUA (O_DSYNC). A write that damages live data cannot be issued
	# before one such write (its journal block) completes.
	LIN[dsync]=$(fio_bw /dev/mapper/cvb_lin randwrite 4k 8 --sync=dsync)
	dm_remove cvb_lin
	cav_runs "$tag" "$dev" CAV "0 $sectors caveat $dev 16 6 1 format"
	# The same with the write cache (docs/dm-caveat.rst, write_cache),
	# where the backing has the volatile cache it requires.
	if [ "$(cat "/sys/block/$(basename "$(readlink -f "$dev")")/queue/write_cache")" = "write back" ]; then
		cav_runs "$tag" "$dev" WC "0 $sectors caveat $dev 16 6 3 format write_cache 1024"
	fi
	for w in "${WORKLOADS[@]}"; do
		set -- $w
		name=$1 l=${LIN[$1]:-0} c=${CAV[$1]:-0} x=${WC[$1]:-}
		r=$(ratio "$l" "$c")
		diag "bench: $tag: $name: dm-linear $((l / 1024)) MB/s, caveat $((c / 1024)) MB/s, ratio $r${x:+; with write_cache $((x / 1024)) MB/s, ratio $(ratio "$l" "$x")}"
		if [ "$l" -gt 0 ] && [ "$c" -gt 0 ] && [ "${x:-1}" -gt 0 ]; then ok "$tag: $name measured (ratio $r)"
		else not_ok "$tag: $name measured" "linear '$l' caveat '$c' write_cache '$x'"; fi
	done
	l=${LIN[randwrite]:-0} c=${LIN[dsync]:-0}
	r=$(awk -v l="$l" -v c="$c" 'BEGIN { if (c > 0) printf "%.1f", l / c; else print "n/a" }')
	diag "bench: $tag: dm-linear random writes with FUA: $((c / 1024)) MB/s, $r times slower than without"
}

backing=$(new_backing $((SIZE + 8))) || bail "no backing device"
# dm-linear over the same extent of the backing the caveat data uses
# (it starts 1 MiB in for devices up to 15 bitmap pages).
bench_pair "disk" "$backing" $((SIZE * 2048)) 2048
# A backing without a volatile write cache (memory-backed null_blk): FUA
# costs what a plain write does, so the journal's price is its own write.
if nb=$(new_nullb $((SIZE + 8))); then
	bench_pair "null_blk" "$nb" $((SIZE * 2048)) 2048
else
	skip "null_blk backing" "cannot create a null_blk device"
fi

# Memory per TiB, on the sparse big disk: a 1 TiB caveat device.
if big=$(new_big_backing 1025 2>/dev/null); then
	TIB=$((1 << 31))	# sectors in 1 TiB
	dm_create cvb_big "0 $TIB caveat $big 16 6" || bail "cannot create the 1 TiB device"
	m0=$(cv_field cvb_big mem_bytes)
	FILL=${CV_BENCH_FILL_MB:-1024}
	dd if=/dev/zero of=/dev/mapper/cvb_big bs=1M count="$FILL" oflag=direct status=none
	m1=$(cv_field cvb_big mem_bytes)
	diag "bench: memory, 1 TiB device: empty $m0 bytes; after a ${FILL} MiB sequential fill $m1 bytes (a full sequential fill leaves every chunk full: the same figure)"
	(cd "$T_WORK" && fio --name=r --filename=/dev/mapper/cvb_big --rw=randwrite --bs=4k \
		--direct=1 --ioengine=libaio --iodepth=16 --number_ios=${CV_BENCH_RANDOM_IOS:-16384} \
		--size=1T --randrepeat=1 --output-format=terse >/dev/null 2>&1)
	m2=$(cv_field cvb_big mem_bytes)
	vb=$(cv_field cvb_big valid_blocks)
	diag "bench: memory, 1 TiB device: after random 4 KiB writes ($vb valid blocks) $m2 bytes (worst case: one 4 KiB page per 2^15 blocks, 32 MiB + 128 KiB per TiB)"
	ok "memory measured: seq fill $m1, random $m2 bytes per TiB"
	dm_remove cvb_big
else
	skip "memory per TiB" "no room on the big disk"
fi
_show_result
