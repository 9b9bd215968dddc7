#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
# SLOW: 1
# ICOUNT: 0
# The timing model's command queueing (docs/timing.md, queue_depth), over
# a RAM-backed null_blk:
#   - bad values are refused with the reason in the log;
#   - queue_depth 1 (the event-driven actuator, no reordering) charges
#     what arrival order charges: the model's arithmetic;
#   - queue_depth 32 at depth 32 serves random writes with a far shorter
#     mean service (shortest positioning first);
#   - nothing starves: 31 writes in flight near the outer edge and one
#     at the inner edge; the far one keeps being served, at least once
#     in every k + queue_depth + 1 services (k queued before it: the
#     stated bound), and when the actuator kept the modelled time, no
#     far write waited longer than that many full-stroke services;
#   - suspend with a deep queue ends at once and loses nothing; the same
#     for host-managed zone writes (four zones at once) and drive-managed
#     writes, verified.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"
. "$(dirname "$0")/lib/tm.sh"
_prep_test "timing: command queueing"
require_cmd python3 dmsetup fio awk blkzone
require_target caveat
require_target smr

K=$TM_K
nb=$(new_nullb 1024) || bail "no null_blk device"
S=$((512 * 2048))
CV="0 $S caveat $nb 0 0"
D=/dev/mapper/tm05

# ---------------------------------------------------------- bad input ---
refuse() { dm_refuse tm05x "$@"; }
refuse "queue_depth above 32" "$CV timing 14 $K queue_depth 33" "value out of range"
refuse "queue_depth not a number" "$CV timing 14 $K queue_depth ncq" "value out of range"
refuse "queue_depth twice" "$CV timing 16 $K queue_depth 4 queue_depth 8" "key given twice"

# ---------------------------------------------- mean service by depth ---
# rnd_busy QD: modelled busy ms of 400 random 4 KiB writes at fio depth
# 32 with queue_depth QD.
rnd_busy() {
	dm_create tm05 "$CV 1 format timing 14 $K queue_depth $1" || return
	udevadm settle 2> /dev/null
	dmsetup message tm05 0 clear_stats
	fio --name=r --filename=$D --rw=randwrite --bs=4k --number_ios=400 \
		--norandommap=1 --randseed=7 --direct=1 --ioengine=libaio \
		--iodepth=32 --output=/dev/null
	field tm05 14
	dm_remove tm05
}
read -r svc _ < <($TM random $S 4096 $K)
fifo=$(awk -v s="$svc" 'BEGIN { printf "%.0f", 400 * s / 1000 }')
b1=$(rnd_busy 1)
within "queue_depth 1 serves in arrival order: modelled ms for 400 writes" "$b1" "$fifo" "$(tm_tol 10 5)"
b32=$(rnd_busy 32)
if [ "$b32" -gt 0 ] && [ $((b32 * 10)) -lt $((fifo * 7)) ]; then
	ok "queue_depth 32 reorders: $b32 ms modelled for 400 writes, $fifo ms in arrival order"
else
	not_ok "queue_depth 32 reorders" "$b32 ms modelled, $fifo ms in arrival order"
fi

# ------------------------------------------------------ no starvation ---
# 31 writes in flight over the first 4 MiB, one over the last 4 MiB.
# Shortest positioning first alone would serve the near ones for ever;
# the bound: the far write, with at most 31 queued before it, is served
# within 31 + 32 + 1 = 64 services, each at most a full-stroke seek, half
# a turn and the transfer.
check "create it with queue_depth 32" dm_create tm05 "$CV 1 format timing 14 $K queue_depth 32"
t=$(dmsetup table tm05)
case $t in
*" timing 14 $K queue_depth 32") ok "the table line prints queue_depth back" ;;
*) not_ok "the table line prints queue_depth back" "got: $t" ;;
esac
udevadm settle 2> /dev/null
dmsetup message tm05 0 clear_stats
out=$T_WORK/tm05-starve
fio --direct=1 --output-format=terse --terse-version=3 --ioengine=libaio \
	--time_based --runtime=10 --rw=randwrite --bs=4k --norandommap=1 \
	--name=near --filename=$D --offset=0 --size=4M --iodepth=31 \
	--name=far --filename=$D --offset=$(( (S - 8192) * 512 )) --size=4M --iodepth=1 \
	> "$out" 2>/dev/null
read -r fios fmax < <(awk -F';' '$1 == 3 && $3 == "far" { print $47 / 4, $56 }' "$out")
read -r nios < <(awk -F';' '$1 == 3 && $3 == "near" { print $47 / 4 }' "$out")
smax=$(python3 - "$SMR_ROOT/tests/lib" <<EOF
import sys
sys.path.insert(0, sys.argv[1])
import tm_model
m = tm_model.Model(tm_model.parse_keys("$K".split()), $S)
print(m.service_ns(0, $S - 8, 8) // 1000)
EOF
)
bound=$((64 * smax))
busy=$(field tm05 14)
diag "near: $nios writes; far: $fios writes, the slowest in ${fmax} us; bound $bound us (64 x $smax us); modelled busy $busy ms of 10 s"
# While the far write waits the queue is never empty, so the actuator
# serves without a pause: at most 63 near writes per far one.
nios=${nios%.*} fios=${fios%.*}
if [ "$fios" -ge 1 ] && [ $(( (fios + 1) * 64 )) -ge "$nios" ]; then
	ok "the far writer is served: $fios writes beside $nios near ones (at least one in 64)"
else
	not_ok "the far writer is served at least once in 64 services" "$fios far writes, $nios near ones"
fi
# In wall-clock time the bound holds when the model kept its time: the
# actuator's timer fires late on a loaded host (every service then
# takes longer), which the busy time shows. The host's own time per
# write comes on top (QEMU: milliseconds). Counted ("# ICOUNT: 0") the
# timer is never late, so a drive idle that long fails (tm_too_slow).
if [ "$busy" -lt 8000 ]; then
	tm_too_slow "no far write waited past the bound in time" "the modelled drive was busy $busy ms of 10 s: its timer ran late on this host (slowest far write ${fmax%.*} us, bound $bound us)"
elif [ -n "$fmax" ] && [ "${fmax%.*}" -le $((bound + bound / 2 + 500000)) ]; then
	ok "no far write waited past the bound: slowest ${fmax%.*} us, bound $bound us"
else
	not_ok "no far write waited past the bound" "slowest ${fmax:-?} us, bound $bound us"
fi
dm_remove tm05

# --------------------------------------- suspend with a deep queue ---
# 100 ms of overhead per command: 256 writes queued are 25 s of the
# model. A suspend ends them at once; fio verifies every block after.
KSLOW="$K overhead_us 100000 queue_depth 32"
check "create it with queue_depth 32 and 100 ms per command" \
	dm_create tm05 "$CV 1 format timing 16 $KSLOW"
fio --name=v --filename=$D --rw=randwrite --bs=4k --size=1M --offset=8M \
	--direct=1 --ioengine=libaio --iodepth=256 --iodepth_batch_submit=256 \
	--verify=crc32c --do_verify=1 --randseed=3 --output="$T_WORK/tm05-v" &
fpid=$!
inflight=/sys/block/$(basename "$(readlink -f $D)")/inflight
t0=$SECONDS
while [ "$(awk '{ print $2 }' "$inflight")" -lt 128 ] && [ $((SECONDS - t0)) -lt 60 ]; do
	sleep 0.1
done
diag "writes in flight before the suspend: $(awk '{ print $2 }' "$inflight")"
ms=$(tm_suspend_ms tm05)
dmsetup resume tm05
if [ -n "$ms" ] && [ "$ms" -lt 10000 ]; then
	ok "suspend with a deep queue took $ms ms"
else
	not_ok "suspend with a deep queue" "took ${ms:-?} ms"
fi
if wait "$fpid"; then
	ok "the queued writes complete and read back"
else
	not_ok "the queued writes complete and read back" "$(tail -5 "$T_WORK/tm05-v")"
fi
check "remove" dm_remove tm05

# ------------------------------ host-managed and drive-managed, verified ---
# Host-managed: four zones written at once, one write in flight in each,
# so the drive holds writes of several zones and serves them in its own
# order. One write per zone: a host that keeps several writes of one
# zone in flight can see one fail across any dm suspend, since dm core
# resubmits the writes it held one by one and a new write may pass them
# (dm-linear over a zoned null_blk does the same: docs/dm-smr.rst,
# "Kernel differences").
HS=$((128 * 2048))
check "host-managed with queue_depth 32" \
	dm_create tm05 "0 $HS smr $nb host-managed 32768 1 format timing 14 $K queue_depth 32"
fio --name=z --filename=$D --zonemode=zbd --rw=write --bs=64k --size=16M \
	--offset=16M --offset_increment=16M --numjobs=4 --group_reporting \
	--direct=1 --ioengine=libaio --iodepth=1 --verify=crc32c --do_verify=1 \
	--output="$T_WORK/tm05-hm" &
fpid=$!
sleep 3
dmsetup suspend tm05 && dmsetup resume tm05
if wait "$fpid"; then
	ok "host-managed: zone writes of four zones, queued and reordered, read back across a suspend"
else
	not_ok "host-managed: zone writes read back" "$(tail -5 "$T_WORK/tm05-hm")"
fi
wps=$(blkzone report -o $((16 * 2048)) -c 4 $D | grep -c "zcond:14")
if [ "$wps" = 4 ]; then
	ok "host-managed: the four zones are full"
else
	not_ok "host-managed: the four zones are full" "$(blkzone report -o $((16 * 2048)) -c 4 $D)"
fi
check "remove" dm_remove tm05
DMT="0 $((256 * 2048)) smr $nb drive-managed 32768 5 cache_sectors 16384 idle_ms 600000 format"
check "drive-managed with queue_depth 32" dm_create tm05 "$DMT timing 16 $K cache_at 0 queue_depth 32"
fio --name=d --filename=$D --rw=randwrite --bs=4k --size=4M --offset=32M \
	--direct=1 --ioengine=libaio --iodepth=16 --verify=crc32c --do_verify=1 \
	--randseed=5 --output="$T_WORK/tm05-dm" &
fpid=$!
sleep 3
dmsetup suspend tm05 && dmsetup resume tm05
if wait "$fpid"; then
	ok "drive-managed: queued writes and reads read back, across a suspend"
else
	not_ok "drive-managed: queued writes read back" "$(tail -5 "$T_WORK/tm05-dm")"
fi
s0=$(date +%s%N)
check "remove" dm_remove tm05
diag "remove took $(( ($(date +%s%N) - s0) / 1000000 )) ms"

dmesg_check
_show_result
