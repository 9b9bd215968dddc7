#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SMOKE: 1
# TIMEOUT: 600
#
# Host-managed dm-smr under fio's zonemode=zbd: concurrent writers in
# several zones at once, queue depth > 1 (several writes in flight in a
# zone, completed in write pointer order by the zoned device), the device's open limit read from sysfs by fio and
# enforced by the target (implicit closes), zone resets by fio, and
# crc32c verification of everything written, before and after the device
# is re-created.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: fio zonemode=zbd concurrent writers with verify"
hm_prep
require_cmd fio

ZS=$HM_ZS
NZ=16
LEN=$((NZ * ZS))
back=$(new_backing 160) || bail "no backing device"
name=t_${TID}_hm
dev=/dev/mapper/$name
OPTS=(conv_zones 2 zone_capacity 12288 max_open 2)
hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}" || bail "cannot create the device"
assert_eq "max_open_zones published for fio" 2 "$(hm_sysfs "$dev" max_open_zones)"

# Three jobs, each on its own 4 sequential zones, writing at once with
# libaio depth 4, fio told to ignore the open limit: three zones open at
# once where two are allowed, so the target closes implicitly open zones
# under the writers' feet, and their next writes reopen them.
seq0=$((2 * ZS * 512))
zbytes=$((ZS * 512))
run_fio "fio zbd: 3 concurrent writers over the open limit, iodepth 4, crc32c verify" \
	--filename="$dev" --zonemode=zbd --rw=write --bs=64k --iodepth=4 \
	--numjobs=3 --offset=$seq0 --offset_increment=$((4 * zbytes)) \
	--size=$((4 * zbytes)) --io_size=8M --verify=crc32c --do_verify=1 \
	--verify_fatal=1 --ignore_zone_limits=1
st=($(hm_stat "$dev" errors wp_errors imp_closes write_sectors))
assert_eq "no I/O errors at the target (errors wp_errors)" "0 0" "${st[*]:0:2}"
assert_eq "all three jobs wrote 8 MiB (write_sectors)" $((3 * 16384)) "${st[3]}"
if [ "${st[2]:-0}" -gt 0 ]; then ok "the open limit closed zones implicitly (imp_closes ${st[2]})"
else not_ok "the open limit closed zones implicitly" "$(hm_stats "$dev")"; fi

# Random zones (fio resets full ones to go on), then re-create the device:
# every wp and every byte must come back.
run_fio "fio zbd: random zone writes, one job, iodepth 8, crc32c verify" \
	--filename="$dev" --zonemode=zbd --rw=randwrite --bs=16k --iodepth=8 \
	--offset=$seq0 --size=$(( (NZ - 2) * zbytes )) --io_size=16M \
	--verify=crc32c --do_verify=1 --verify_fatal=1
check "fsync" hm_flush "$dev"
# Open zones come back closed, or empty if they hold nothing.
state() {
	hm_report "$dev" | while read -r s l c w cond t; do
		case $cond in oi|oe) [ "$w" = 0 ] && cond=em || cond=cl ;; esac
		echo "$cond $w"
	done | paste -sd ' '
}
st0=$(state)
sum0=$(hm_sum "$dev" 0 $LEN)
check "remove" dm_remove "$name"
check "create again" hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}"
assert_eq "every zone's condition and wp after re-creating" "$st0" "$(state)"
assert_eq "every byte after re-creating (md5 of the device)" "$sum0" "$(hm_sum "$dev" 0 $LEN)"

dmesg_check "no kernel warnings"
_show_result
