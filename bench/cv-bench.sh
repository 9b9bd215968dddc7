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
# backing has a volatile cache), in CV_BENCH_ROUNDS rounds (2) taken in
# turn, as rows of bench/lib.sh (median ratio and range); what a durable
# (FUA) write costs on the same backing; all on the scratch disk and on a
# memory-backed null_blk (no volatile cache; CV_BENCH_NULLB=0 leaves it
# out; CV_BENCH_DISK=0 leaves the scratch disk out); then mem_bytes per TiB after a sequential fill and after random
# 4 KiB writes spread over a 1 TiB device (CV_BENCH_MEM=0 leaves it out).
# Under TCG the absolute figures mean little; the ratios and the memory
# figures do.
#
# Sequential runs are one whole pass over the extent, random ones stop
# after CV_BENCH_RUNTIME seconds. The extent is CV_BENCH_MB (4096) on the
# scratch disk, so that a sequential pass at dm-linear's 1.5-3 GB/s here
# lasts over a second (at 128 MiB, as until 2026-11-28, a pass took a
# tenth of a second), and CV_BENCH_NULLB_MB (128) on null_blk, which
# holds its data in the VM's memory.
. "$(dirname "$0")/../tests/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat benchmark"
require_cmd fio dmsetup
require_target caveat

. "$SMR_ROOT/bench/lib.sh"
SIZE=${CV_BENCH_MB:-4096}
NULLB_SIZE=${CV_BENCH_NULLB_MB:-128}
RUNTIME=${CV_BENCH_RUNTIME:-10}
ROUNDS=${CV_BENCH_ROUNDS:-2}

# fio_bw DEV RW BS [QD [FIO-ARGS...]]: bandwidth in KiB/s of one fio
# job (iodepth QD, default 8): a whole pass over the extent for
# sequential I/O (a pass cut short would leave the blocks after its last
# write damaged, and the next run's reads would fail there), at most
# RUNTIME seconds of random I/O.
fio_bw() {
	local dev=$1 rw=$2 bs=$3 qd=${4:-8} out rt=$RUNTIME
	shift 4 2>/dev/null || shift $#
	case $rw in rand*) ;; *) rt=600 ;; esac
	out=$(cd "$T_WORK" && fio --name=b --filename="$dev" --rw="$rw" --bs="$bs" \
		--size=${SIZE}M --direct=1 --ioengine=libaio --iodepth="$qd" \
		--runtime="$rt" --time_based=0 --randrepeat=1 "$@" \
		--output-format=terse --terse-version=3 2>/dev/null)
	# terse v3: field 7 read bw (KiB/s), field 48 write bw.
	case $rw in
	*read) echo "$out" | awk -F';' '{ print $7 }' ;;
	*) echo "$out" | awk -F';' '{ print $48 }' ;;
	esac
}

# The workloads: name, then fio rw, block size, iodepth, and "fresh" for
# a caveat device formatted before each run. Sequential writes run twice:
# into an empty device (no write damages live data: a drive being
# filled), and over the data of the run before (every write damages the
# live blocks after it until the next write covers them, so each waits
# for its damage to be durable, as a random overwrite does). Random
# writes start from a device just filled sequentially, so that they
# damage live data.
WORKLOADS=("seq write 1M qd8:write 1M 8 fresh"
	"seq rewrite 1M qd8:write 1M 8" "seq read 1M qd8:read 1M 8"
	"rand read 4K qd8:randread 4k 8" "rand write 4K qd8:randwrite 4k 8"
	"rand write 4K qd32:randwrite 4k 32")

# on_cav FRESH OPT...: the caveat device cvb_cav over CV_BASE with the
# optional arguments OPT; FRESH=fresh: created anew and formatted, else
# the live one reloaded (its state carries over through the metadata).
on_cav() {
	local fresh=$1
	shift
	if [ "$fresh" = fresh ]; then
		dmsetup info cvb_cav > /dev/null 2>&1 && dm_remove cvb_cav
		dm_create cvb_cav "$CV_BASE $(($# + 1)) $* format"
	elif dmsetup info cvb_cav > /dev/null 2>&1; then
		dmsetup reload cvb_cav --table "$CV_BASE $# $*" && dmsetup resume cvb_cav
	else
		dm_create cvb_cav "$CV_BASE $# $*"
	fi
}
# cav_run RW BS QD [fresh]: one workload on cvb_cav; random writes start
# from a sequential fill.
cav_run() {
	case $1 in randwrite) fio_bw /dev/mapper/cvb_cav write 1M 8 > /dev/null ;; esac
	fio_bw /dev/mapper/cvb_cav "$1" "$2" "$3"
}

# bench_pair TAG BACKING SECTORS: every workload on dm-linear, on
# caveat and (where the backing has a volatile cache) on caveat with
# write_cache, over the same extent of BACKING, CV_BENCH_ROUNDS times in
# turn (linear, caveat, write_cache; then the other way round); prints
# the rows of the ratios (bench/lib.sh).
bench_pair() {
	local tag=$1 dev=$2 sectors=$3 w name r l c x wc=0 dsync m=caveat fresh
	local order back seq v l1m=0 off
	SIZE=$((sectors / 2048))
	[ "$tag" = disk ] || m="caveat/$tag"
	CV_BASE="0 $sectors caveat $dev 16 6"
	[ "$(cat "/sys/block/$(basename "$(readlink -f "$dev")")/queue/write_cache")" = "write back" ] &&
		[ "${CV_BENCH_WC:-1}" = 1 ] && wc=1
	blkdiscard "$dev" 2>/dev/null
	on_cav fresh || bail "cannot create caveat"
	# dm-linear over the extent caveat keeps its data in: after its
	# superblock, bitmap pages and journal, where the superblock's
	# data_start (le64 at byte 56; common/smr-ondisk.h) says. It moves
	# with the device's size (1 MiB in up to 15 bitmap pages, 2 MiB at
	# 2-4 GiB), and a dm-linear starting short of it would write over
	# the journal of the live caveat device.
	off=$(dd if="$dev" bs=4096 count=1 iflag=direct status=none | od -An -t u8 -j56 -N8 | tr -d ' ')
	[ "${off:-0}" -gt 0 ] || bail "cannot read caveat's data_start from $dev"
	dm_create cvb_lin "0 $sectors linear $dev $off" || bail "cannot create dm-linear"
	diag "bench: $tag: caveat's data and dm-linear start at sector $off of $dev"
	# Written once, so that no measured run is the first write to a
	# sector (which allocates space in a sparse disk image, or a page of
	# null_blk), whichever device happens to run first.
	fio_bw /dev/mapper/cvb_lin write 1M 8 > /dev/null
	if [ $wc = 1 ]; then
		diag "bench: $tag: $ROUNDS round(s) of dm-linear, caveat, caveat with write_cache_kib 4096 in turn"
	else
		diag "bench: $tag: $ROUNDS round(s) of dm-linear and caveat in turn"
	fi
	diag "bench: $tag: $(bench_header)"
	for w in "${WORKLOADS[@]}"; do
		name=${w%%:*}
		set -- ${w#*:}
		fresh=${4:-}
		: > "$T_WORK/cav"; : > "$T_WORK/wc"
		order="lin cav" back="cav lin"
		[ $wc = 1 ] && order="lin cav wc" back="wc cav lin"
		for ((r = 0; r < ROUNDS; r++)); do
			x=
			# linear, caveat, write_cache; the other way round in odd rounds
			seq=$order
			[ $((r % 2)) = 1 ] && seq=$back
			for v in $seq; do
				case $v in
				lin) l=$(fio_bw /dev/mapper/cvb_lin "$1" "$2" "$3") ;;
				# (a table that did not load leaves the other one live:
				# its figure would be filed under the wrong name)
				cav) on_cav "$fresh" || bail "cannot load caveat"
				     c=$(cav_run "$1" "$2" "$3") ;;
				wc) on_cav "$fresh" write_cache_kib 4096 || bail "cannot load caveat with write_cache_kib"
				    x=$(cav_run "$1" "$2" "$3") ;;
				esac
			done
			echo "$l $c" >> "$T_WORK/cav"
			[ -n "$x" ] && echo "$l $x" >> "$T_WORK/wc"
			if [ "${l:-0}" -gt 0 ] && [ "${c:-0}" -gt 0 ] && [ "${x:-1}" -gt 0 ]; then :
			else not_ok "$tag: $name round $((r + 1)) measured" "linear '$l' caveat '$c' write_cache '$x'"; fi
		done
		[ "$name" = "seq rewrite 1M qd8" ] &&
			l1m=$(bench_median < <(awk 'NF >= 2 { print $1 }' "$T_WORK/cav"))
		diag "bench: $tag: $(bench_row "$m" "$name" KiB/s "$T_WORK/cav")"
		[ $wc = 1 ] && diag "bench: $tag: $(bench_row "$m+write_cache" "$name" KiB/s "$T_WORK/wc")"
		ok "$tag: $name measured"
	done
	diag "bench: $tag: status after the runs: $(dmsetup status cvb_cav)"
	dm_remove cvb_cav
	# What one durable write costs here: random writes with and without
	# FUA (O_DSYNC). A write that damages live data cannot be issued
	# before one such write (its journal block) completes: at a fixed
	# depth caveat's random overwrites reach about W / (J + W) of
	# dm-linear's (docs/dm-caveat.rst). A sequential rewrite waits for
	# the same 4 KiB journal write J, before a 1 MiB write W: its bound
	# takes W from dm-linear's 1 MiB writes at the same depth (the
	# rewrite row's own dm-linear runs).
	l=$(fio_bw /dev/mapper/cvb_lin randwrite 4k 8)
	dsync=$(fio_bw /dev/mapper/cvb_lin randwrite 4k 8 --sync=dsync)
	dm_remove cvb_lin
	r=$(awk -v l="$l" -v c="$dsync" 'BEGIN { if (c > 0) printf "%.3f", 1 / (1 + l / c); else print "n/a" }')
	diag "bench: $tag: dm-linear random writes $((l / 1024)) MB/s, with FUA $((dsync / 1024)) MB/s: the bound W / (J + W) for caveat's random overwrites at depth 8 is $r"
	bound_row "$m" "bound W/(J+W) qd8" "$r" "$l" "$dsync"
	# Per write at depth 8: W = 1 MiB / (dm-linear's 1 MiB rate), J =
	# 4 KiB / (the FUA rate); the ratio W / (J + W).
	r=$(awk -v l="${l1m:-0}" -v c="$dsync" 'BEGIN { if (c > 0 && l > 0) printf "%.3f", (1024 / l) / (4 / c + 1024 / l); else print "n/a" }')
	l=${l1m%.*}
	diag "bench: $tag: dm-linear 1 MiB writes $((${l:-0} / 1024)) MB/s: the bound W / (J + W) for caveat's sequential rewrites at depth 8 is $r"
	bound_row "$m" "bound rewrite 1M qd8" "$r" "${l1m:-0}" "$dsync"
}

# bound_row MODEL NAME RATIO LINEAR OTHER: a bound, as a row of
# all-bench.sh's table (one "round", no range).
bound_row() {
	[ -n "${BENCH_RATIOS:-}" ] && [ "$3" != n/a ] || return 0
	printf '%s\t%s\t%s\t%s\t%s\t1\t%s\t%s\tKiB/s\n' "$1" "$2" "$3" "$3" "$3" "$4" "$5" >> "$BENCH_RATIOS"
}

if [ "${CV_BENCH_DISK:-1}" = 0 ]; then
	skip "scratch disk backing" "CV_BENCH_DISK=0"
else
	backing=$(new_backing $((SIZE + 8))) || bail "no backing device"
	bench_pair "disk" "$backing" $((SIZE * 2048))
fi
# A backing without a volatile write cache (memory-backed null_blk): FUA
# costs what a plain write does, so the journal's price is its own write.
if [ "${CV_BENCH_NULLB:-1}" = 0 ]; then
	skip "null_blk backing" "CV_BENCH_NULLB=0"
elif nb=$(new_nullb $((NULLB_SIZE + 8))); then
	bench_pair "null_blk" "$nb" $((NULLB_SIZE * 2048))
else
	skip "null_blk backing" "cannot create a null_blk device"
fi

# Memory per TiB, on the sparse big disk: a 1 TiB caveat device.
if [ "${CV_BENCH_MEM:-1}" = 0 ]; then
	skip "memory per TiB" "CV_BENCH_MEM=0"
elif big=$(new_big_backing 1025 2>/dev/null); then
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
