#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 420
# SLOW: 1
# ICOUNT: 0
# The timing model's placement on a whole drive (docs/timing.md, keys
# drive_mb and start_mb), over a RAM-backed null_blk:
#   - bad placements are refused, each with its reason in the log;
#   - the table line prints the keys back and loads again;
#   - a small device on a 500 GB drive seeks a thousandth of the stroke:
#     the modelled busy time of random writes is what the model's
#     arithmetic (tests/lib/tm_model.py) gives for the slice, well below
#     the same device stretched over the stroke;
#   - the media rate comes from the device's place on the drive;
#   - drive-managed: cache_at is a position on the whole drive, so a
#     device in the middle of the drive with its cache at the outer edge
#     pays half-stroke seeks between cache and bands.
# The checks are on the modelled busy time (status), which is the sum of
# what the model charged, whatever the host's speed; the wall-clock IOPS
# are printed as diagnostics. It runs under instruction counting ("#
# ICOUNT: 0") only to take less time: the guest leaps over the modelled
# waits.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"
. "$(dirname "$0")/lib/tm.sh"
_prep_test "timing: the device on the whole drive's geometry"
require_cmd python3 dmsetup fio awk
require_target caveat
require_target smr

K=$TM_K
DRIVE="drive_mb 500107"		# the cmr-7k500 profile's drive
nb=$(new_nullb 1024) || bail "no null_blk device"
S=$((512 * 2048))
CV="0 $S caveat $nb 0 0"
D=/dev/mapper/tm03


# ---------------------------------------------------------- bad input ---
refuse() { dm_refuse tm03x "$@"; }
refuse "start_mb without drive_mb" "$CV timing 14 $K start_mb 10" "give drive_mb too"
refuse "a device larger than the drive" "$CV timing 14 $K drive_mb 100" "does not fit on the drive"
refuse "a device that runs past the drive's end" \
	"$CV timing 16 $K $DRIVE start_mb 500000" "does not fit on the drive"
refuse "drive_mb 0" "$CV timing 14 $K drive_mb 0" "value out of range"
refuse "drive_mb above 2^32 - 1" "$CV timing 14 $K drive_mb 4294967296" "value out of range"
refuse "start_mb with junk" "$CV timing 16 $K $DRIVE start_mb 1x" "value out of range"
refuse "drive_mb twice" "$CV timing 16 $K $DRIVE drive_mb 9" "key given twice"
refuse "host-managed: past the drive's end" \
	"0 $((64 * 2048)) smr $nb host-managed 65536 1 format timing 14 $K drive_mb 60" \
	"does not fit on the drive"
refuse "drive-managed: past the drive's end" \
	"0 $((64 * 2048)) smr $nb drive-managed 16384 1 format timing 14 $K drive_mb 60" \
	"does not fit on the drive"

# ------------------------------------------------ table line, reload ---
check "create a caveat device on a 500 GB drive, 250 GB in" \
	dm_create tm03 "$CV 1 format timing 16 $K $DRIVE start_mb 250053"
t=$(dmsetup table tm03)
case $t in
*" timing 16 $K $DRIVE start_mb 250053") ok "the table line prints drive_mb and start_mb back" ;;
*) not_ok "the table line prints drive_mb and start_mb back" "got: $t" ;;
esac
check "reload the printed table" dmsetup reload tm03 --table "$t"
check "resume it" dmsetup resume tm03

# ---------------------------------------------- media rate by place ---
# 64 MiB written sequentially: busy = 64 MiB at the rate of the place.
# In the middle of the drive the rate is (65 + 31) / 2 = 48 MB/s; at the
# start of the same device stretched over the stroke it is 65 MB/s.
seq_busy() {
	udevadm settle 2> /dev/null
	dmsetup message tm03 0 clear_stats
	fio --name=s --filename=$D --rw=write --bs=1M --size=64M --direct=1 \
		--ioengine=libaio --iodepth=2 --output=/dev/null
	cv_busy tm03
}
mid=$(seq_busy)
want=$($TM range $S 1048576 0 131072 $K $DRIVE start_mb 250053 |
	awk '{ printf "%.0f", 64 * 1048576 / ($1 * 1000) }')
within "64 MiB in the middle of the drive: modelled ms (48 MB/s)" "$mid" "$want" 5
dm_remove tm03

# ------------------------------------------------ seeks on a slice ---
# rnd_busy TABLE: modelled busy ms of 240 random 4 KiB writes, depth 4;
# the wall-clock IOPS go to the log.
rnd_busy() {
	dm_create tm03 "$1" || return
	udevadm settle 2> /dev/null
	dmsetup message tm03 0 clear_stats
	local iops
	iops=$(fio --direct=1 --output-format=terse --terse-version=3 --name=r \
		--filename=$D --rw=randwrite --bs=4k --number_ios=240 --norandommap=1 \
		--randseed=7 --ioengine=libaio --iodepth=4 2>/dev/null |
		awk -F';' '$1 == 3 { print $49 }')
	diag "random 4 KiB writes, depth 4: ${iops%.*} IOPS with: ${1#*timing }" >&2
	cv_busy tm03
	dm_remove tm03
}
read -r svc_whole _ < <($TM random $S 4096 $K)
read -r svc_slice _ < <($TM random $S 4096 $K $DRIVE)
whole=$(rnd_busy "$CV 1 format timing 12 $K")
slice=$(rnd_busy "$CV 1 format timing 14 $K $DRIVE")
within "the device as the whole stroke: modelled ms for 240 writes" "$whole" \
	"$(awk -v s="$svc_whole" 'BEGIN { printf "%.0f", 240 * s / 1000 }')" 10
within "the device as 512 MiB of a 500 GB drive: modelled ms for 240 writes" "$slice" \
	"$(awk -v s="$svc_slice" 'BEGIN { printf "%.0f", 240 * s / 1000 }')" 10
if [ "$slice" -gt 0 ] && [ $((slice * 2)) -lt "$whole" ]; then
	ok "placement shortens the seeks: $slice ms against $whole ms stretched"
else
	not_ok "placement shortens the seeks" "slice $slice ms, stretched $whole ms"
fi

# ------------------------------- drive-managed: cache_at on the drive ---
# The device 250 GB into the drive, its cache at the outer edge: each
# 4 KiB write goes to the cache (it does not start a band) and each
# read of a band block (4 MiB into the device) seeks back, half a stroke
# each way. Without drive_mb the same table has the cache at the
# device's start, 4 MiB of a 256 MiB stroke from those blocks.
# The pairs come from one process, on one open of the device (a close
# would make udev probe it); status is read before the close.
DL=$((256 * 2048))
DMT="0 $DL smr $nb drive-managed 32768 5 cache_sectors 16384 idle_ms 600000 format"
pairs() {
	python3 - "$D" tm03 <<'EOF'
import mmap, os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
subprocess.run(["dmsetup", "message", sys.argv[2], "0", "clear_stats"], check=True)
for i in range(20):
    os.pwritev(fd, [buf], (i * 37 + 5) * 4096)            # cached
    os.preadv(fd, [buf], (4 << 20) + i * 65536)           # the band, near
st = subprocess.run(["dmsetup", "status", sys.argv[2]], capture_output=True,
                    text=True, check=True).stdout.split()
print(st[30])   # model_busy_ms
os.close(fd)
EOF
}
dm_create tm03 "$DMT timing 18 $K cache_at 0 $DRIVE start_mb 250053" ||
	bail "cannot create the drive-managed device"
udevadm settle 2> /dev/null
placed=$(pairs)
dm_remove tm03
dm_create tm03 "$DMT timing 14 $K cache_at 0" || bail "cannot create the drive-managed device"
udevadm settle 2> /dev/null
near=$(pairs)
dm_remove tm03
# 40 seeks of half the stroke: t2t + a sqrt(1/2) + b / 2 + half a turn.
want=$(python3 - "$SMR_ROOT/tests/lib" <<EOF
import sys
sys.path.insert(0, sys.argv[1])
import tm_model
m = tm_model.Model(tm_model.parse_keys("$K cache_at 0 $DRIVE start_mb 250053".split()), $DL)
half = m.span // 2
print("%.0f" % (40 * m.service_ns(0, half, 8) / 1e6))
EOF
)
within "drive-managed in mid-drive, cache at the outer edge: modelled ms for 20 write/read pairs" \
	"$placed" "$want" 15
if [ "$near" -ge 0 ] && [ $((near * 2)) -lt "$placed" ]; then
	ok "cache_at is on the whole drive: $placed ms placed, $near ms with the device as the drive"
else
	not_ok "cache_at is on the whole drive" "placed $placed ms, device-only $near ms"
fi

dmesg_check
_show_result
