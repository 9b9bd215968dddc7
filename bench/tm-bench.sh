#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 1500
# bench/tm-bench.sh - the timing model (docs/timing.md) against the
# figures it reproduces. Runs in the test VM (it uses tests/common.sh):
#   bench/run-tm            (boots the VM; or tests/vm-run bench/tm-bench.sh)
# Prints "# bench:" lines; passes or fails on nothing but errors.
#
#  1. The conventional 7200 rpm profile (userspace/smrctl/profiles/cmr-7k500:
#     a caveat device with DID 0) over a memory-backed null_blk, far
#     faster than the modelled disk: sequential MB/s at the outer and
#     inner edge and 4 KiB random-write IOPS (depth 4 and 1), each next
#     to the model's arithmetic (tests/lib/tm_model.py) and the data
#     sheet's figure; and what the model costs when it is off: dm-linear
#     against caveat without timing, 4 KiB random writes at depth 32.
#  2. The ST8000AS0002 profile (drive-managed) over the scratch disk, as
#     the first 2 GiB of the 8 TB drive (drive_mb): 4 KiB random writes
#     with its cache (scaled up for a small disk) filling: the fast
#     phase, the collapse, then idle cleaning, against what the model
#     predicts from the bands dirtied times a band rewrite.
#  3. Placement (drive_mb): the hc620 profile, host-managed, 256 MiB
#     zones; one stream against two streams in zones 0 and 2, with the
#     device stretched over the stroke and as a slice of the 14 TB
#     drive, next to the real drive's 0.46.
#  4. IOPS against queue depth (1, 4, 32), cmr-7k500 as the whole drive
#     and as a 1000 MB slice of it, in arrival order and with
#     queue_depth 32, next to published figures and the model's
#     arithmetic (tm_model.py queue).
#  5. The volatile write cache (buffer_mib): 1 MiB sequential writes at
#     depth 1, and a burst of 4 KiB random writes at depth 1, with and
#     without it.
#  6. The read cache (read_segments, read_ahead_kib): 4 KiB reads in
#     order and at random, at depth 1, without a read cache, with 16
#     segments and no look-ahead, and with 16 segments of 1 MiB of
#     look-ahead.
. "$(dirname "$0")/../tests/common.sh"
_prep_test "timing model benchmark"
require_cmd fio dmsetup python3 awk
require_target caveat
require_target smr

TM="python3 $SMR_ROOT/tests/lib/tm_model.py"
say() { diag "bench: $*"; }
# profile_keys FILE [KEY...]: the timing keys of a profile, as
# "key value ...": the drive's mechanics, and of the other keys
# (drive_mb, buffer_mib) the ones named.
profile_keys() {
	local f=$1
	shift
	awk -F'=' -v more=" $* " '/^[ \t]*#/ { next }
		{ k = $1; gsub(/[ \t]/, "", k); v = $2; sub(/#.*/, "", v); gsub(/[ \t]/, "", v) }
		k ~ /^(rpm|seek_t2t_us|seek_avg_us|seek_full_us|od_mbps|id_mbps|overhead_us|cache_at)$/ ||
		index(more, " " k " ") { printf "%s %s ", k, v }' "$f"
}
# fio_terse FIELD ARGS...: one field of fio's terse v3 output.
fio_terse() {
	local f=$1; shift
	fio --direct=1 --output-format=terse --terse-version=3 "$@" 2>/dev/null |
		awk -F';' -v f="$f" '$1 == 3 { print $f }'
}
kib2mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }'; }

# ------------------------------------------------ 1. the CMR profile ---
CMR=$(profile_keys "$SMR_ROOT/userspace/smrctl/profiles/cmr-7k500.profile")
CMRN=$(wc -w <<< "$CMR")
nb=$(new_nullb 1024) || bail "no null_blk"
S=$((960 * 2048))
D=/dev/mapper/tmb
say "1. conventional 7200 rpm disk (cmr-7k500: $CMR) over a RAM-backed null_blk, $((S / 2048)) MiB"

# Cost when off: dm-linear, then caveat DID 0 without timing.
dm_create tmb "0 $S linear $nb 0" || bail "dm-linear"
lin=$(fio_terse 49 --name=r --filename=$D --rw=randwrite --bs=4k --number_ios=20000 \
	--norandommap=1 --ioengine=libaio --iodepth=32 --randseed=5)
dm_remove tmb
dm_create tmb "0 $S caveat $nb 0 0 1 format" || bail "caveat"
# Written once first, as dm-linear's blocks are: the first write to a
# block allocates its damage-map page, which is caveat's cost, not the
# model's.
fio --name=f --filename=$D --rw=write --bs=1M --direct=1 --ioengine=libaio \
	--iodepth=8 --output=/dev/null
off=$(fio_terse 49 --name=r --filename=$D --rw=randwrite --bs=4k --number_ios=20000 \
	--norandommap=1 --ioengine=libaio --iodepth=32 --randseed=5)
dm_remove tmb
say "  timing off: 4 KiB random writes, depth 32: dm-linear ${lin%.*} IOPS, caveat ${off%.*} IOPS, ratio $(awk -v a="$off" -v b="$lin" 'BEGIN { printf "%.2f", a / b }')"

dm_create tmb "0 $S caveat $nb 0 0 1 format timing $CMRN $CMR" || bail "caveat with timing"
end=$((S - 65536 * 2))
for where in "outer 0 131072" "inner $end $((end + 131072))"; do
	set -- $where
	got=$(fio_terse 48 --name=s --filename=$D --rw=write --bs=1M --size=64M \
		--offset=$(($2 * 512)) --ioengine=libaio --iodepth=2)
	want=$($TM range $S 1048576 "$2" "$3" $CMR)
	say "  sequential 1 MiB writes at the $1 edge: $(kib2mb "$got") MB/s; model $want MB/s; data sheet $([ "$1" = outer ] && echo 64.8 || echo 31.0) MB/s (zone $([ "$1" = outer ] && echo 0 || echo 29))"
done
read -r svc want < <($TM random $S 4096 $CMR)
# fio opens the device once to size it, and the close of a writable open
# makes udev probe it: blkid reads its start and its end, here valid
# blocks at both edges, and the drive serves those reads too (about 90
# of them, 0.8 s of modelled time, in the middle of the measurement).
# Hold udev's queue while measuring.
udevadm settle 2> /dev/null
udevadm control --stop-exec-queue 2> /dev/null
dmsetup message tmb 0 clear_stats
r0=$(awk '{ print $1 }' "/sys/block/$(basename "$(readlink -f $D)")/stat")
qd4=$(fio_terse 49 --name=r --filename=$D --rw=randwrite --bs=4k --number_ios=600 \
	--norandommap=1 --ioengine=libaio --iodepth=4 --randseed=11)
st=$(dmsetup status tmb)
r1=$(awk '{ print $1 }' "/sys/block/$(basename "$(readlink -f $D)")/stat")
udevadm control --start-exec-queue 2> /dev/null
qd1=$(fio_terse 49 --name=r --filename=$D --rw=randwrite --bs=4k --number_ios=200 \
	--norandommap=1 --ioengine=psync --randseed=12)
say "  random 4 KiB writes, depth 4: ${qd4%.*} IOPS; model ${want} IOPS (${svc} us each: 8.5 ms average seek + $(awk 'BEGIN { printf "%.2f", 30000 / 7200 }') ms half turn + transfer); data-sheet arithmetic $(awk 'BEGIN { printf "%.1f", 1000 / (8.5 + 30000 / 7200 + 0.09) }') IOPS"
say "  random 4 KiB writes, depth 1: ${qd1%.*} IOPS (the host's turnaround between commands adds to each under QEMU)"
say "  status after depth 4: model_busy_ms $(awk '{ print $14 }' <<< "$st") for 600 writes (model: $(awk -v s="$svc" 'BEGIN { printf "%.0f", 600 * s / 1000 }') for uniform positions), model_lag_ms $(awk '{ print $15 }' <<< "$st"), reads by others meanwhile $((r1 - r0))"
dm_remove tmb

# ------------------------------------ 2. ST8000AS0002, drive-managed ---
ST=$(profile_keys "$SMR_ROOT/userspace/smrctl/profiles/st8000as0002.profile" drive_mb)
STN=$(wc -w <<< "$ST")
SIZE_MB=${TM_BENCH_MB:-2048}
CACHE_MB=${TM_BENCH_CACHE_MB:-32}
BAND=61440	# 30 MiB, the profile's
raw=$(new_backing $((SIZE_MB + CACHE_MB + 64))) || bail "no backing"
L=$(( SIZE_MB * 2048 / BAND * BAND ))
CS=$((CACHE_MB * 2048))
say "2. ST8000AS0002 profile ($ST), drive-managed, $((L / 2048)) MiB at the start of the 8 TB drive, 30 MiB bands, ${CACHE_MB} MiB cache (scaled up from 0.25 % for a small disk) at its outer edge, over the scratch disk"
dm_create tmb "0 $L smr $raw drive-managed $BAND 5 cache_sectors $CS idle_ms 1000 format timing $STN $ST" || bail "drive-managed with timing"
log=$T_WORK/tmb
fio --name=b --filename=$D --rw=randwrite --bs=4k --runtime="${TM_BENCH_RUNTIME:-30}" \
	--time_based --direct=1 --ioengine=libaio --iodepth=4 --norandommap=1 \
	--write_iops_log="$log" --log_avg_msec=1000 --output=/dev/null
st=$(dmsetup status tmb)
# 7 cache used/total, 11 dirty_bands, 31-33 the model's
read -r cache dirty busy mclean < <(awk '{ print $7, $11, $31, $32 }' <<< "$st")
say "  IOPS per second: $(awk -F, '{ printf "%d ", $2 }' "${log}_iops.1.log")"
awk -F, '{ v[NR] = $2 } END {
	f = 0; for (i = 1; i <= 5 && i <= NR; i++) if (v[i] > f) f = v[i];
	s = 0; k = 0; for (i = NR - 9; i <= NR; i++) if (i > 5) { s += v[i]; k++ }
	printf "# bench:   fast phase %d IOPS, then %.1f IOPS over the last %d s: %.0fx\n", f, s / k, k, f / (s / k) }' "${log}_iops.1.log"
used=${cache%/*}
pred=$($TM clean "$L" "$BAND" "$CS" "$dirty" "$used" $ST)
say "  after the burst: cache $cache slots, $dirty dirty bands; the model predicts ${pred} s to rewrite them (tests/lib/tm_model.py clean)"
t0=$(date +%s)
while :; do
	read -r u db state < <(dmsetup status tmb | awk '{ split($7, c, "/"); print c[1], $11, $26 }')
	[ "$u" = 0 ] && [ "$state" = idle ] && break
	[ $(( $(date +%s) - t0 )) -gt 1200 ] && { say "  cleaning did not finish in 1200 s ($db bands left)"; break; }
	sleep 2
done
t1=$(date +%s)
st=$(dmsetup status tmb)
say "  idle cleaning emptied the cache in $((t1 - t0)) s (wall, with idle_ms 1000 first); clean_ms_bg $(awk '{ print $18 }' <<< "$st"), model_clean_ms $(awk '{ print $32 }' <<< "$st") (includes the foreground cleaning during the burst), model_lag_ms $(awk '{ print $33 }' <<< "$st")"
dm_remove tmb

# ------------------------------------- 3. placement: two zone streams ---
HC=$(profile_keys "$SMR_ROOT/userspace/smrctl/profiles/hc620.profile")
HCD="drive_mb $(profile_keys "$SMR_ROOT/userspace/smrctl/profiles/hc620.profile" drive_mb | awk '{ for (i = 1; i < NF; i++) if ($i == "drive_mb") print $(i + 1) }')"
ZS=524288	# 256 MiB
HL=$((3 * ZS))
# The 1 GiB null_blk of section 1: a second one does not fit in the
# guest's memory beside it. Zones 0 and 2 are 512 MiB apart, as zones 1
# and 3 of the measurement were.
say "3. hc620 ($HC), host-managed, 3 zones of 256 MiB over the RAM-backed null_blk; 1 MiB writes, 64 MiB per zone"
for place in stretched slice; do
	keys=$HC
	[ $place = slice ] && keys="$HC $HCD"
	n=$(wc -w <<< "$keys")
	dm_create tmb "0 $HL smr $nb host-managed $ZS 1 format timing $n $keys" || bail "host-managed with timing"
	blkzone reset $D
	one=$(fio_terse 48 --name=one --filename=$D --zonemode=zbd --rw=write --bs=1M \
		--offset=0 --size=256M --io_size=64M --ioengine=libaio --iodepth=2)
	blkzone reset $D
	two=$(fio --direct=1 --output-format=terse --terse-version=3 --group_reporting \
		--name=z0 --filename=$D --zonemode=zbd --rw=write --bs=1M --offset=0 \
		--size=256M --io_size=64M --ioengine=psync \
		--name=z2 --filename=$D --zonemode=zbd --rw=write --bs=1M --offset=$((2 * ZS * 512)) \
		--size=256M --io_size=64M --ioengine=psync 2>"$T_WORK/zbd.err" | awk -F';' '$1 == 3 { print $48 }')
	m1=$($TM seq $HL 1048576 0 $keys)
	m2=$($TM alt $HL 1048576 0 $((2 * ZS)) $keys)
	say "  $place: one stream (depth 2) $(kib2mb "$one") MB/s, model $m1; two streams (zones 0 and 2, depth 1 each) $(kib2mb "$two") MB/s, model $m2; ratio $(awk -v a="$two" -v b="$one" 'BEGIN { printf "%.2f", a / b }'), model $(awk -v a="$m2" -v b="$m1" 'BEGIN { printf "%.2f", a / b }'); real drive 0.46 (112 / 246 MB/s, the zoned_qd1_writes measurement)"
	[ "${two%.*}" -gt 0 ] 2>/dev/null || say "  ($place: fio failed: $(tail -3 "$T_WORK/zbd.err" 2>/dev/null))"
	dm_remove tmb
done

# ------------------------------------------ 4. IOPS against queue depth ---
# 4 KiB random writes without a write cache (the model serves reads and
# writes alike; caveat fails reads of blocks never written), at fio
# depth 1, 4 and 32, in arrival order and with queue_depth 32; on the
# device as the whole drive, and as a 1000 MB slice of the 500 GB drive
# (the test area of the published figures).
CMRD=$(profile_keys "$SMR_ROOT/userspace/smrctl/profiles/cmr-7k500.profile" drive_mb)
SL=$((1000000000 / 512 / 8 * 8))
say "4. cmr-7k500, 4 KiB random writes by fio depth, in arrival order (FIFO) and with queue_depth 32 (NCQ)"
for where in "whole $S" "slice $SL"; do
	set -- $where
	base=$CMR
	[ "$1" = slice ] && base=$CMRD
	for q in 0 32; do
		keys=$base
		[ $q = 0 ] || keys="$base queue_depth $q"
		dm_create tmb "0 $2 caveat $nb 0 0 1 format timing $(wc -w <<< "$keys") $keys" || bail "caveat"
		udevadm settle 2> /dev/null
		line=""
		for qd in 1 4 32; do
			got=$(fio_terse 49 --name=r --filename=$D --rw=randwrite --bs=4k \
				--number_ios=$((qd == 1 ? 150 : 400)) --norandommap=1 \
				--ioengine=libaio --iodepth=$qd --randseed=$((20 + qd)))
			want=$($TM queue "$2" 4096 $((q ? (qd < q ? qd : q) : 1)) $base | awk '{ printf "%.0f", $2 }')
			line="$line depth $qd: ${got%.*} IOPS (model $want);"
		done
		say "  $1 ($(($2 / 2048)) MiB), $([ $q = 0 ] && echo FIFO || echo "queue_depth $q"):$line"
		dm_remove tmb
	done
done
say "  published, a 7200 rpm disk over a 1000 MB test area (CrystalDiskMark 3.0 random 4 KiB reads, user runs, drives not named: pastebin.com/XrkgJVUX and pastebin.com/3Q7RYtj9): 95.0 / 79.7 IOPS at depth 1, 209.5 / 232.3 IOPS at depth 32"
say "  published, the Deskstar 7K500 over its whole stroke (its specification, table 12: 4096 random reads in 55.5 s typical): 73.8 IOPS at depth 1"

# --------------------------------------------- 5. the write cache ---
say "5. the write cache (buffer_mib), cmr-7k500 as the whole drive, 960 MiB over the RAM-backed null_blk"
for wc in 0 16; do
	keys="$CMR"
	[ $wc = 0 ] || keys="$CMR buffer_mib $wc"
	dm_create tmb "0 $S caveat $nb 0 0 1 format timing $(wc -w <<< "$keys") $keys" || bail "caveat with timing"
	seq1=$(fio_terse 48 --name=s --filename=$D --rw=write --bs=1M --size=128M --ioengine=psync)
	udevadm settle 2> /dev/null
	rnd1=$(fio_terse 49 --name=r --filename=$D --rw=randwrite --bs=4k --number_ios=256 \
		--norandommap=1 --ioengine=psync --randseed=31)
	say "  buffer_mib $wc: sequential 1 MiB writes, depth 1: $(kib2mb "$seq1") MB/s (media rate at the outer edge: $($TM seq $S 1048576 0 $CMR) MB/s); a burst of 256 random 4 KiB writes (1 MiB), depth 1: ${rnd1%.*} IOPS (no cache: model $($TM random $S 4096 $CMR | awk '{ print $2 }'))"
	dm_remove tmb
done

# ---------------------------------------------- 6. the read cache ---
# Caveat fails reads of blocks never written: written whole without the
# model first, then loaded with each timing over the same data.
say "6. the read cache (read_segments, read_ahead_kib), cmr-7k500 as the whole drive, 960 MiB over the RAM-backed null_blk"
dm_create tmb "0 $S caveat $nb 0 0 1 format" || bail "caveat"
fio --name=f --filename=$D --rw=write --bs=1M --direct=1 --ioengine=libaio \
	--iodepth=8 --output=/dev/null
for rc in "" "read_segments 16" "read_segments 16 read_ahead_kib 1024"; do
	keys="$CMR${rc:+ $rc}"
	dmsetup reload tmb --table "0 $S caveat $nb 0 0 timing $(wc -w <<< "$keys") $keys" &&
		dmsetup resume tmb || bail "caveat with timing $keys"
	udevadm settle 2> /dev/null
	seq=$(fio_terse 7 --name=s --filename=$D --rw=read --bs=4k --size=16M --ioengine=psync)
	rnd=$(fio_terse 8 --name=r --filename=$D --rw=randread --bs=4k --number_ios=150 \
		--norandommap=1 --ioengine=psync --randseed=41)
	say "  ${rc:-no read cache}: sequential 4 KiB reads, depth 1: $(kib2mb "$seq") MB/s (media rate at the outer edge: $($TM seq $S 1048576 0 $CMR) MB/s); random 4 KiB reads, depth 1: ${rnd%.*} IOPS (model without a cache: $($TM random $S 4096 $CMR | awk '{ print $2 }'))"
done
dm_remove tmb

dmesg_check
_show_result
