#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 500
# bench/cv-bench.sh - dm-caveat throughput against dm-linear on the same
# backing, and the damage map's memory per TiB.
#
# Runs in the test VM (it uses tests/common.sh for backing devices):
#   tests/vm-run --results /tmp/cv-bench bench/cv-bench.sh
# Prints "# bench:" lines: MB/s of dm-linear and caveat for sequential
# 1 MiB writes and reads and random 4 KiB writes and reads, their ratio
# (target 0.9 or better), and mem_bytes per TiB after a sequential fill and
# after random 4 KiB writes spread over a 1 TiB device. Under TCG the
# absolute figures mean little; the ratios and the memory figures do.
. "$(dirname "$0")/../tests/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat benchmark"
require_cmd fio dmsetup
require_target caveat

SIZE=${CV_BENCH_MB:-128}
RUNTIME=${CV_BENCH_RUNTIME:-10}

# fio_bw DEV RW BS: bandwidth in KiB/s of one short fio job.
fio_bw() {
	local dev=$1 rw=$2 bs=$3 out
	out=$(cd "$T_WORK" && fio --name=b --filename="$dev" --rw="$rw" --bs="$bs" \
		--size=${SIZE}M --direct=1 --ioengine=libaio --iodepth=8 \
		--runtime="$RUNTIME" --time_based=0 --randrepeat=1 \
		--output-format=terse --terse-version=3 2>/dev/null)
	# terse v3: field 7 read bw (KiB/s), field 48 write bw.
	case $rw in
	*read) echo "$out" | awk -F';' '{ print $7 }' ;;
	*) echo "$out" | awk -F';' '{ print $48 }' ;;
	esac
}

backing=$(new_backing $((SIZE + 8))) || bail "no backing device"
sectors=$((SIZE * 2048))
# dm-linear over the same extent of the backing the caveat data uses
# (the caveat data starts 1 MiB in for devices under ~120 GiB).
dm_create cvb_lin "0 $sectors linear $backing 2048" || bail "cannot create dm-linear"
declare -A LIN CAV
for w in "write 1M" "read 1M" "randread 4k" "randwrite 4k"; do
	set -- $w
	LIN[$1]=$(fio_bw /dev/mapper/cvb_lin "$1" "$2")
done
dm_remove cvb_lin
blkdiscard "$backing" 2>/dev/null
dm_create cvb_cav "0 $sectors caveat $backing 16 6" || bail "cannot create caveat"
for w in "write 1M" "read 1M" "randread 4k" "randwrite 4k"; do
	set -- $w
	CAV[$1]=$(fio_bw /dev/mapper/cvb_cav "$1" "$2")
done
diag "bench: status after the runs: $(dmsetup status cvb_cav)"
for w in write read randread randwrite; do
	l=${LIN[$w]:-0} c=${CAV[$w]:-0}
	r=$(awk -v l="$l" -v c="$c" 'BEGIN { if (l > 0) printf "%.2f", c / l; else print "n/a" }')
	diag "bench: $w: dm-linear $((l / 1024)) MB/s, caveat $((c / 1024)) MB/s, ratio $r"
	if [ "$l" -gt 0 ] && [ "$c" -gt 0 ]; then ok "$w measured (ratio $r)"
	else not_ok "$w measured" "linear '$l' caveat '$c'"; fi
done
dm_remove cvb_cav

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
