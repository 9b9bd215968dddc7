#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
#
# Host-managed dm-smr: a write that fills a zone and then fails, with an
# active zone limit (issue 27, item 2). Filling the zone makes it FULL and
# frees its active resource; another zone takes it while the write is in
# flight; then the write fails. The zone must not go back to CLOSED: that
# would show max_active + 1 active zones. It stays FULL (finished after
# its durable data, which still reads back), the write fails, and the
# other zone keeps working.
#
# The write is made to fail late by the backing device: a dm-delay holds
# writes to the zone's last block for DELAY ms, then sends them to a dm
# "error" device.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: a failed write that filled a zone keeps the active zone limit"
hm_prep
require_target delay
require_target error

ZS=8192			# 4 MiB zones
NZ=4
DS=2048			# data start on the backing device (metadata: 1 MiB)
DELAY=6000		# ms: time enough for a few execs under TCG
SIZE_MB=24

raw=$(new_backing $SIZE_MB) || bail "no backing device"
err=t_${TID}_err
dm_create "$err" "0 8 error" || bail "cannot create the error device"
last=$((DS + ZS - 8))	# zone 0's last block on the backing device
slow=t_${TID}_slow
dm_create "$slow" "0 $last linear $raw 0
$last 8 delay $raw $last 0 /dev/mapper/$err 0 $DELAY $raw $last 0
$((last + 8)) $((SIZE_MB * 2048 - last - 8)) linear $raw $((last + 8))" ||
	bail "cannot create the backing device"
n=t_${TID}_a
D=/dev/mapper/$n
hm_create "$n" $((NZ * ZS)) "/dev/mapper/$slow" $ZS max_open 2 max_active 2 format ||
	bail "cannot create the device"

# active DEV: the number of implicitly open, explicitly open and closed zones.
active() { hm_report "$1" | awk '$5 ~ /^(oi|oe|cl)$/ { n++ } END { print n + 0 }'; }

hm_put a "$D" 0 $((ZS - 8)) "zone 0 written but for its last block"
hm_put b "$D" $ZS 8 "zone 1: first block (two zones active)"
assert_eq "two active zones" 2 "$(active "$D")"

# The filling write: held by the backing, then failed.
hm_put_bg() { hm_try_write "$D" $((ZS - 8)) 8 > "$T_WORK/fill.out" 2>&1; echo $? > "$T_WORK/fill.rc"; }
hm_put_bg &
bg=$!
# Wait until the zone shows FULL (the write was placed), then take its
# active resource with a third zone.
for _ in $(seq 1 40); do
	[ "$(hm_cond "$D" 0)" = fu ] && break
	sleep 0.1
done
assert_eq "zone 0 full while its last write is in flight" fu "$(hm_cond "$D" 0)"
hm_put c "$D" $((2 * ZS)) 8 "zone 2: first block, while zone 0's last write is in flight"
wait $bg
assert_ne "the filling write failed" 0 "$(cat "$T_WORK/fill.rc")"
assert_eq "active zones within max_active (2) after the failure" 2 "$(active "$D")"
assert_eq "zone 0 stays full" fu "$(hm_cond "$D" 0)"
hm_assert_read "zone 0's durable data reads back" "$D" 0 "$a"
hm_assert_zero "zone 0's failed block reads as zeros" "$D" $((ZS - 8)) 8
hm_put d "$D" $((2 * ZS + 8)) 8 "zone 2 takes the next write"
hm_assert_read "zone 2 reads back" "$D" $((2 * ZS)) "$c"
hm_assert_read "zone 1 reads back" "$D" $ZS "$b"

dmesg_check
_show_result
