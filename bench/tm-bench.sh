#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 1500
# bench/tm-bench.sh - the timing model (docs/timing.md) against the
# figures it reproduces. Runs in the test VM (it uses tests/common.sh):
#   bench/run-tm            (boots the VM; or tests/vm-run bench/tm-bench.sh)
# Prints "# bench:" lines; passes or fails on nothing but errors.
#
#  1. The conventional 7200 rpm profile (userspace/profiles/cmr-7k500:
#     a caveat device with DID 0) over a memory-backed null_blk, far
#     faster than the modelled disk: sequential MB/s at the outer and
#     inner edge and 4 KiB random-write IOPS (depth 4 and 1), each next
#     to the model's arithmetic (tests/lib/tm_model.py) and the data
#     sheet's figure; and what the model costs when it is off: dm-linear
#     against caveat without timing, 4 KiB random writes at depth 32.
#  2. The ST8000AS0002 profile (drive-managed) over the scratch disk: 4 KiB
#     random writes with its cache (scaled up for a small disk) filling:
#     the fast phase, the collapse, then idle cleaning, against what the
#     model predicts from the bands dirtied times a band rewrite.
. "$(dirname "$0")/../tests/common.sh"
_prep_test "timing model benchmark"
require_cmd fio dmsetup python3 awk
require_target caveat
require_target smr

TM="python3 $SMR_ROOT/tests/lib/tm_model.py"
say() { diag "bench: $*"; }
# profile_keys FILE: the timing keys of a profile, as "key value ...".
profile_keys() {
	awk -F'=' '/^[ \t]*#/ { next }
		{ k = $1; gsub(/[ \t]/, "", k); v = $2; sub(/#.*/, "", v); gsub(/[ \t]/, "", v) }
		k ~ /^(rpm|seek_t2t_us|seek_avg_us|seek_full_us|od_mbps|id_mbps|overhead_us|cache_at)$/ { printf "%s %s ", k, v }' "$1"
}
# fio_terse FIELD ARGS...: one field of fio's terse v3 output.
fio_terse() {
	local f=$1; shift
	fio --direct=1 --output-format=terse --terse-version=3 "$@" 2>/dev/null |
		awk -F';' -v f="$f" '$1 == 3 { print $f }'
}
kib2mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k * 1024 / 1e6 }'; }

# ------------------------------------------------ 1. the CMR profile ---
CMR=$(profile_keys "$SMR_ROOT/userspace/profiles/cmr-7k500.profile")
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
ST=$(profile_keys "$SMR_ROOT/userspace/profiles/st8000as0002.profile")
STN=$(wc -w <<< "$ST")
SIZE_MB=${TM_BENCH_MB:-2048}
CACHE_MB=${TM_BENCH_CACHE_MB:-32}
BAND=61440	# 30 MiB, the profile's
raw=$(new_backing $((SIZE_MB + CACHE_MB + 64))) || bail "no backing"
L=$(( SIZE_MB * 2048 / BAND * BAND ))
CS=$((CACHE_MB * 2048))
say "2. ST8000AS0002 profile ($ST), drive-managed, $((L / 2048)) MiB, 30 MiB bands, ${CACHE_MB} MiB cache (scaled up from 0.25 % for a small disk), over the scratch disk"
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

dmesg_check
_show_result
