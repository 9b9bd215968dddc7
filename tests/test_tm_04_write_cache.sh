#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
# SLOW: 1
# ICOUNT: 0
# The timing model's volatile write cache (docs/timing.md, buffer_mib;
# wcache_mib, its old name, still accepted and printed back as buffer_mib),
# over a RAM-backed null_blk:
#   - bad values are refused with the reason in the log;
#   - writes at depth 1 are acknowledged from the cache, far sooner than
#     the drive serves them, and a flush then waits for the destage: the
#     writes and the flush together take the modelled busy time; without
#     the cache each write waits for its own service;
#   - a write with O_DSYNC (FUA, or a write and a flush) waits for the
#     destage too;
#   - a full cache paces the writes at the drive's rate;
#   - host-managed: a flush after zone writes waits for the destage;
#   - suspend and remove with a cache full of writes not destaged end at
#     once, lose nothing (fio verifies after the device is made again)
#     and hang nothing.
# The host's own time per write is measured, and a check is skipped when
# the host is too slow for it to mean anything (a debug kernel). It runs
# under instruction counting ("# ICOUNT: 0"), where the host's speed
# cannot be why, so there such a finding fails instead (tm_too_slow).
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"
. "$(dirname "$0")/lib/tm.sh"
_prep_test "timing: the volatile write cache"
require_cmd python3 dmsetup fio awk
require_target caveat
require_target smr

K=$TM_K
nb=$(new_nullb 1024) || bail "no null_blk device"
S=$((512 * 2048))
CV="0 $S caveat $nb 0 0"
D=/dev/mapper/tm04


# burst N BS FLUSH [SEED] [dsync]: N writes of BS bytes at random 4 KiB
# aligned places, one at a time (O_DIRECT), then an fsync of the device
# (a flush) if FLUSH is 1, or the last write with O_DSYNC if "dsync";
# prints "write_ms flush_ms busy_ms", busy from status after the flush
# (read on the same open: a close makes udev probe the device).
burst() {
	python3 - "$D" tm04 "$@" <<'EOF'
import mmap, os, random, subprocess, sys, time
dev, name, n, bs, fl = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
rng = random.Random(int(sys.argv[6]) if len(sys.argv) > 6 else 1)
fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
size = os.lseek(fd, 0, os.SEEK_END)
buf = mmap.mmap(-1, bs)
subprocess.run(["dmsetup", "message", name, "0", "clear_stats"], check=True)
t0 = time.monotonic()
for i in range(n):
    os.pwritev(fd, [buf], rng.randrange(size // bs) * bs)
t1 = time.monotonic()
if fl == "1":
    os.fsync(fd)
elif fl == "dsync":
    fd2 = os.open(dev, os.O_RDWR | os.O_DIRECT | os.O_DSYNC)
    os.pwritev(fd2, [buf], 0)
    os.close(fd2)
t2 = time.monotonic()
st = subprocess.run(["dmsetup", "status", name], capture_output=True, text=True,
                    check=True).stdout.split()
busy = st[int(sys.argv[7]) if len(sys.argv) > 7 else 13]
print("%d %d %s" % ((t1 - t0) * 1000, (t2 - t1) * 1000, busy))
os.close(fd)
EOF
}

# ---------------------------------------------------------- bad input ---
refuse() { dm_refuse tm04x "$@"; }
refuse "buffer_mib above 4096" "$CV timing 14 $K buffer_mib 4097" "value out of range"
refuse "buffer_mib without a value" "$CV timing 13 $K buffer_mib" "every key needs a value"
refuse "buffer_mib not a number" "$CV timing 14 $K buffer_mib 16M" "value out of range"
refuse "buffer_mib twice" "$CV timing 16 $K buffer_mib 16 buffer_mib 8" "key given twice"
refuse "buffer_mib and its old name wcache_mib" "$CV timing 16 $K buffer_mib 16 wcache_mib 8" \
	"key given twice"

# ---------------------------------------- without the cache: the base ---
check "create the 7200 rpm disk without a write cache" dm_create tm04 "$CV 1 format timing 12 $K"
read -r w0 f0 b0 < <(burst 64 4096 1)
diag "no cache: 64 writes $w0 ms, flush $f0 ms, modelled busy $b0 ms"
if [ "$w0" -ge $((b0 * 85 / 100)) ]; then
	ok "without the cache each write waits for its service: $w0 ms for $b0 ms modelled"
else
	not_ok "without the cache each write waits for its service" "64 writes took $w0 ms, the model was busy $b0 ms"
fi
dm_remove tm04

# ------------------------------------------- the cache: ack, then flush ---
check "create it with a 16 MiB write cache (the old key name)" \
	dm_create tm04 "$CV 1 format timing 14 $K wcache_mib 16"
t=$(dmsetup table tm04)
case $t in
*" timing 14 $K buffer_mib 16") ok "the table line prints wcache_mib 16 back as buffer_mib 16" ;;
*) not_ok "the table line prints wcache_mib 16 back as buffer_mib 16" "got: $t" ;;
esac
udevadm settle 2> /dev/null
read -r w1 f1 b1 < <(burst 64 4096 1)
diag "16 MiB cache: 64 writes $w1 ms, flush $f1 ms, modelled busy $b1 ms"
if [ "$w1" -ge $((b1 / 2)) ]; then
	tm_too_slow "writes are acknowledged from the cache" "the host took $w1 ms for 64 writes, half the modelled $b1 ms or more: too slow to tell"
	tm_too_slow "the flush waits for the destage" "as above"
else
	ok "writes are acknowledged from the cache: $w1 ms for 64 writes the drive serves in $b1 ms"
	# The flush ends when the last destage does: writes + flush cover
	# the modelled busy time (the commit's own service on top).
	if [ $((w1 + f1)) -ge $((b1 * 9 / 10)) ]; then
		ok "the flush waits for the destage: $f1 ms after $w1 ms of writes ($b1 ms modelled)"
	else
		not_ok "the flush waits for the destage" "writes $w1 ms + flush $f1 ms, modelled busy $b1 ms"
	fi
fi

# A write with O_DSYNC after a burst: it ends only once the burst is
# destaged (as FUA, or as a write and a flush: either waits).
read -r w2 f2 b2 < <(burst 64 4096 dsync 2)
diag "16 MiB cache: 64 writes $w2 ms, then an O_DSYNC write $f2 ms, modelled busy $b2 ms"
if [ "$w2" -ge $((b2 / 2)) ]; then
	tm_too_slow "an O_DSYNC write waits for the destage" "the host took $w2 ms for 64 writes: too slow to tell"
elif [ $((w2 + f2)) -ge $((b2 * 9 / 10)) ]; then
	ok "an O_DSYNC write waits for the destage: $f2 ms after $w2 ms of writes ($b2 ms modelled)"
else
	not_ok "an O_DSYNC write waits for the destage" "writes $w2 ms + dsync write $f2 ms, modelled busy $b2 ms"
fi
dm_remove tm04

# ------------------------------------------ a full cache paces writes ---
# 1 MiB of cache, 512 writes of 4 KiB: the first 256 fill it, each of the
# next waits for the destage of the one 256 before it. The writes take
# about half the modelled busy time (the flush the rest).
check "create it with a 1 MiB write cache" dm_create tm04 "$CV 1 format timing 14 $K buffer_mib 1"
udevadm settle 2> /dev/null
read -r w3 f3 b3 < <(burst 512 4096 1 3)
diag "1 MiB cache: 512 writes $w3 ms, flush $f3 ms, modelled busy $b3 ms"
if [ "$w1" -ge $((b1 / 2)) ]; then
	tm_too_slow "a full cache paces the writes" "the host is too slow to tell (above)"
elif [ "$w3" -ge $((b3 * 35 / 100)) ] && [ "$w3" -le $((b3 * 70 / 100)) ]; then
	ok "a full cache paces the writes: $w3 ms of $b3 ms modelled (half expected)"
else
	not_ok "a full cache paces the writes" "512 writes took $w3 ms, modelled busy $b3 ms (expected about half)"
fi
dm_remove tm04

# -------------------------------------- host-managed: flush after zones ---
# 16 MiB zones; 64 writes of 128 KiB at zone 1's write pointer, then a
# flush. A drive of 1 MB/s (131 ms a write) so that the host's own time
# per zone write (tens of ms under QEMU, more when the host is loaded)
# is small beside the drive's. Status: 4 words of dm's, 21 fields, then
# model_busy_ms.
HS=$((128 * 2048))
KSLOW="${K/od_mbps 65 id_mbps 31/od_mbps 1 id_mbps 1}"
check "create a host-managed device (1 MB/s) with a 64 MiB write cache" \
	dm_create tm04 "0 $HS smr $nb host-managed 32768 1 format timing 14 $KSLOW buffer_mib 64"
udevadm settle 2> /dev/null
read -r w4 f4 b4 < <(python3 - "$D" <<'EOF'
import mmap, os, subprocess, time
fd = os.open("/dev/mapper/tm04", os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, 128 << 10)
subprocess.run(["dmsetup", "message", "tm04", "0", "clear_stats"], check=True)
t0 = time.monotonic()
for i in range(64):
    os.pwritev(fd, [buf], (16 << 20) + i * (128 << 10))
t1 = time.monotonic()
os.fsync(fd)
t2 = time.monotonic()
st = subprocess.run(["dmsetup", "status", "tm04"], capture_output=True, text=True,
                    check=True).stdout.split()
print("%d %d %s" % ((t1 - t0) * 1000, (t2 - t1) * 1000, st[25]))
os.close(fd)
EOF
)
diag "host-managed, 64 MiB cache: 64 zone writes of 128 KiB $w4 ms, flush $f4 ms, modelled busy $b4 ms"
if [ "$w4" -ge $((b4 / 2)) ]; then
	tm_too_slow "host-managed: the flush waits for the destage" "the host took $w4 ms for the writes: too slow to tell"
elif [ $((w4 + f4)) -ge $((b4 * 9 / 10)) ]; then
	ok "host-managed: zone writes acknowledged from the cache ($w4 ms), the flush waits for the destage ($f4 ms; $b4 ms modelled)"
else
	not_ok "host-managed: the flush waits for the destage" "writes $w4 ms + flush $f4 ms, modelled busy $b4 ms"
fi
check "remove" dm_remove tm04

# ---------------------------- suspend and remove with the cache full ---
# Verified writes at depth 16 through a 64 MiB cache: the host runs far
# ahead of the modelled drive (tens of seconds of destage), then the
# device is suspended and resumed, the writes complete, and the device
# is removed with the destage still pending in the model. Neither may
# wait for the destage; fio reads back every block on a new device.
DT="$CV 1 format timing 14 $K buffer_mib 64"
check "create it with a 64 MiB write cache" dm_create tm04 "$DT"
fio --name=v --filename=$D --rw=randwrite --bs=4k --size=8M --offset=64M \
	--direct=1 --ioengine=libaio --iodepth=16 --randseed=9 --verify=crc32c \
	--do_verify=0 --output="$T_WORK/tm04-write" &
fpid=$!
sleep 3
sms=$(tm_suspend_ms tm04)
dmsetup resume tm04
wait "$fpid"
assert_eq "the writes complete across the suspend" 0 "$?"
# The backlog the model had left: the rest of 2048 writes' service.
if [ -n "$sms" ] && [ "$sms" -lt 10000 ]; then
	ok "suspend with cached writes not destaged took $sms ms"
else
	not_ok "suspend with cached writes not destaged" "took ${sms:-?} ms"
fi
fio --name=more --filename=$D --rw=randwrite --bs=4k --size=4M --offset=200M \
	--direct=1 --ioengine=libaio --iodepth=16 --randseed=4 --output=/dev/null
busy=$(field tm04 14)
rms=$(tm_remove_ms tm04)
if [ -n "$rms" ] && [ "$rms" -lt 10000 ]; then
	ok "remove with cached writes not destaged took $rms ms (model busy $busy ms)"
else
	not_ok "remove with cached writes not destaged" "took ${rms:-?} ms (model busy $busy ms)"
fi
check "create the device again" dm_create tm04 "${DT% 1 format timing*} timing 14 $K buffer_mib 64"
if fio --name=v --filename=$D --rw=randwrite --bs=4k --size=8M --offset=64M \
	--direct=1 --ioengine=libaio --iodepth=16 --randseed=9 --verify=crc32c \
	--verify_only=1 --output="$T_WORK/tm04-verify"; then
	ok "every write acknowledged before the suspend and remove reads back"
else
	not_ok "every write reads back" "$(tail -5 "$T_WORK/tm04-verify")"
fi
check "remove" dm_remove tm04

dmesg_check
_show_result
