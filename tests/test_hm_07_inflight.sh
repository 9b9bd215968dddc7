#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
#
# Host-managed dm-smr: writes in flight in a zone (docs/dm-smr.rst "Zone
# semantics", "Design of host-managed mode").
#
# The backing device is slow for data writes only: a dm-delay holds every
# write to the zone data area for DELAY ms, while the metadata area (the
# first MiB) and flushes go straight through. Then:
#  - a reset issued while a write is held in its zone completes only after
#    that write's backing I/O did (DELAY ms after it was issued), and a
#    write issued after the reset is what the zone reads back, also once
#    every held write has landed;
#  - several writes in flight in one zone (issued in write pointer order)
#    complete in that order: the zone's data end never passes a write
#    still in flight, and all of them read back.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: writes in flight: reset races, several writes per zone"
hm_prep
require_cmd date
require_target delay

ZS=$HM_ZS
DELAY=1500			# ms, data writes on the backing device
SIZE_MB=40

raw=$(new_backing $SIZE_MB) || bail "no backing device"
slow=t_${TID}_slow
dm_create "$slow" "0 2048 linear $raw 0
2048 $((SIZE_MB * 2048 - 2048)) delay $raw 2048 0 $raw 2048 $DELAY $raw 2048 0" ||
	bail "cannot create the delayed backing device"
n=t_${TID}_a
D=/dev/mapper/$n
hm_create "$n" $((4 * ZS)) "/dev/mapper/$slow" $ZS format || bail "cannot create the device"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# ---- a reset racing a write in flight -----------------------------------
w=$(hm_newfile 128); hm_data "$w" 128
t0=$(now_ms)
( hm_pwrite "$D" 0 "$w" > /dev/null; now_ms > "$T_WORK/w.done" ) &
wpid=$!
sleep 0.3
if out=$(blkzone reset -o 0 -c 1 "$D" 2>&1); then ok "reset zone 0 while a write is in flight"
else not_ok "reset zone 0 while a write is in flight" "$out"; fi
t_reset=$(now_ms)
wait $wpid
t_w=$(cat "$T_WORK/w.done")
# The reset waits for the overtaken write's backing I/O, which the delay
# holds DELAY ms: without that wait it would be done in a few tens of ms.
# The host sees the two completions through two processes, each timed by
# its own exec of date, so which of them it sees first is not the drive's
# to order (CI saw the write 1 ms after the reset under load); the
# write's time is shown for comparison.
if [ $((t_reset - t0)) -ge $DELAY ]; then
	ok "the reset completed after the write's held backing I/O ($((t_reset - t0)) ms >= $DELAY ms; the write's process saw its end at $((t_w - t0)) ms)"
else
	not_ok "the reset completed after the write's held backing I/O" \
		"reset done at $((t_reset - t0)) ms, before the $DELAY ms the write is held; write at $((t_w - t0)) ms"
fi
assert_cw "zone 0 is empty after the reset" "$D" 0 "em 0"
hm_assert_zero "zone 0 reads zeros (the overtaken write is not data)" "$D" 0 128
hm_put nw "$D" 0 128 "a write after the reset"
sleep $(( DELAY / 1000 + 1 ))
hm_assert_read "zone 0 reads the write issued after the reset" "$D" 0 "$nw"
assert_cw "zone 0's write pointer follows the new write" "$D" 0 "oi 128"

# ---- several writes in flight in one zone ------------------------------
# Eight 64 KiB writes to zone 1, issued in order from one process without
# waiting (fio libaio, iodepth 8). The backing completes them in any
# order; the host must see them acknowledged in write pointer order.
if command -v fio > /dev/null; then
	if out=$(fio --name=inflight --filename="$D" --direct=1 --ioengine=libaio \
		--iodepth=8 --rw=write --bs=64k --offset=$((ZS * 512)) --size=1M \
		--verify=crc32c --do_verify=1 --output-format=terse 2>&1); then
		ok "8 writes in flight in one zone, crc32c verified"
	else
		not_ok "8 writes in flight in one zone, crc32c verified" "$out"
	fi
	assert_cw "zone 1's write pointer is past all of them" "$D" $ZS "oi 2048"
	ios=$(hm_stat "$D" wp_errors errors)
	assert_eq "no write pointer error, no error" "0 0" "$ios"
else
	skip "8 writes in flight in one zone" "fio not installed"
fi

check "remove" dm_remove "$n"
dmesg_check "no kernel warnings"
_show_result
