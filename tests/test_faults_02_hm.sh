#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
#
# Media faults on host-managed dm-smr (docs/dm-smr.rst, "Media faults"):
# the shared checks (tests/lib/faults.sh) in a conventional zone, then in
# a sequential zone: a write refused on a bad sector leaves the write
# pointer where it was, and once the range is removed the same write at
# the write pointer succeeds; a read below the write pointer over a bad
# sector fails. A delayed write keeps its zone's later writes behind it.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"
. "$SMR_ROOT/tests/lib/faults.sh"
_prep_test "hm: media faults"
hm_prep
FL_MODEL=hm
ZS=$HM_ZS

# 20 zones of 8 MiB, the first conventional.
back=$(new_backing 240) || bail "no backing device"
N=t_${TID}_a
D=/dev/mapper/$N
hm_create $N $((20 * ZS)) "$back" $ZS conv_zones 1 || bail "cannot create the device"
fl_suite $D 1024

# A sequential zone: zone 4.
Z=$((4 * ZS))
hm_put d1 $D $Z 64 "write 32 KiB at the wp of zone 4"
check "bad sectors at the write pointer" fl_msg $D badblocks add $((Z + 64)) 16
check "on_write fail" fl_msg $D badblocks on_write fail
hm_data "$T_WORK/w2" 64
out=$(hm_pwrite $D $((Z + 64)) "$T_WORK/w2" 64)
assert_eq "a write at the wp over them fails with a medium error" "$FL_ENODATA" "${out##*: }"
assert_eq "the write pointer did not move" 64 "$(hm_wp $D $Z)"
assert_eq "counted: bad_write_errors" 1 "$(hm_stat $D bad_write_errors)"
assert_eq "and no wp error" 0 "$(hm_stat $D wp_errors)"
check "bad sectors below the write pointer" fl_msg $D badblocks add $((Z + 8)) 1
assert_eq "a read there fails with a medium error" "$FL_ENODATA" \
	"$(fl_try hm_read $D $Z 64)"
check "badblocks clear" fl_msg $D badblocks clear
hm_assert_read "the zone's data reads back" $D $Z "$d1"
# 6.12 fails writes to a zone after a failed one until a report (hm_wp did one).
out=$(hm_pwrite $D $((Z + 64)) "$T_WORK/w2" 64) &&
	ok "the same write at the wp succeeds once the range is gone" ||
	not_ok "the same write at the wp succeeds once the range is gone" "$out"
assert_eq "the write pointer moved" 128 "$(hm_wp $D $Z)"
hm_assert_read "the write reads back" $D $((Z + 64)) "$T_WORK/w2" 64

# A slow first block of zone 5: a zone's writes still reach the drive in
# the order they came, so the one after it, sent while it waits, waits
# behind it rather than meeting a write pointer it is not at.
Z=$((5 * ZS))
hm_data "$T_WORK/s1" 8
hm_data "$T_WORK/s2" 8
check "delay writes of zone 5's first block 1 s" fl_msg $D delay $Z 8 1000 write
t0=$(fl_stat $D delayed_ios)
hm_pwrite $D $Z "$T_WORK/s1" 8 > "$T_WORK/s1.out" &
p1=$!
# Sent once the first is held (counted), long before it is due.
for _ in $(seq 50); do [ "$(fl_stat $D delayed_ios)" != "$t0" ] && break; sleep 0.02; done
out=$(hm_pwrite $D $((Z + 8)) "$T_WORK/s2" 8) &&
	ok "the next write, sent while the first waits, succeeds" ||
	not_ok "the next write, sent while the first waits, succeeds" "$out"
wait $p1 && ok "the delayed write succeeds" ||
	not_ok "the delayed write succeeds" "$(cat "$T_WORK/s1.out")"
assert_eq "the write pointer is past both" 16 "$(hm_wp $D $Z)"
assert_eq "no write pointer error" 0 "$(hm_stat $D wp_errors)"
assert_eq "one I/O was delayed (the one behind it only waited)" $((t0 + 1)) \
	"$(fl_stat $D delayed_ios)"
hm_assert_read "the first reads back" $D $Z "$T_WORK/s1" 8
hm_assert_read "the second reads back" $D $((Z + 8)) "$T_WORK/s2" 8
check "delay off" fl_msg $D delay off

dmesg_check
_show_result
