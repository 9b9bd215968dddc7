#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
#
# btrfs zoned on a host-managed dm-smr device, end to end: mkfs.btrfs -O
# zoned, mount, fio with crc32c verify on files (the O_DIRECT job goes
# through btrfs's zone append path, which the zoned device under the
# target serves natively at the write pointer), umount, btrfs check; then the
# device is removed and re-created from its own "dmsetup table" line (no
# format), must come back with every write pointer where it was, and
# btrfs must mount it again (it checks its block groups' allocation
# offsets against the write pointers) with every file intact (md5),
# keep writing, and pass btrfs check again. Throughout, the target must
# refuse no write (wp_errors, errors) and keep open zones within max_open.
#
# Geometry: 2 GiB, 64 MiB zones (32 zones, all sequential: btrfs zoned
# needs no conventional zone). btrfs wants zones of 4 MiB to 8 GiB and,
# if the device has an active zone limit, at least 8 active zones
# (BTRFS_MIN_ACTIVE_ZONES: 3 superblock mirrors + 5). At exactly 8, 6.12's
# btrfs hangs in this test's fio job (writeback waits in cow_file_range
# for a zone finish that never comes); reproduced on a zoned null_blk
# with the same limits, so it is btrfs's, not the target's. max_active 12
# (and max_open 12) still limits btrfs to fewer zones than it would use,
# so its own active zone accounting is exercised on every kernel. mkfs.btrfs (6.2) needs at least 9 zones
# (measured with 64 MiB zones: 2 for the superblock log, then system,
# metadata DUP and data chunks); with 4 to 8 it fails for lack of space
# for its chunks, with 5 and 7 it aborts inside btrfs_alloc_chunk (a
# btrfs-progs bug: the target refused no write there). 32 leave room.

. "$(dirname "$0")/common.sh"

_prep_test "btrfs zoned on host-managed smr: fio verify, btrfs check, remove/create keeps zones and files"
require_cmd fio mkfs.btrfs btrfs blkzone md5sum dmsetup
require_target smr
modprobe btrfs 2>/dev/null
grep -qw btrfs /proc/filesystems || skip_all "the kernel has no btrfs"

ZS=131072			# 64 MiB zones
NZ=32				# 2 GiB
LEN=$((NZ * ZS))
MAXOPEN=12
MAXACTIVE=12

. "$(dirname "$0")/lib/zoned_fs.sh"

# check_fs WHEN: btrfs check (read-only) must find nothing.
check_fs() {
	local out rc
	out=$(btrfs check --readonly "$dev" 2>&1); rc=$?
	if [ $rc = 0 ] && grep -q 'found [0-9]* bytes used, no error found' <<< "$out"; then
		ok "$1: btrfs check is clean"
	else
		not_ok "$1: btrfs check is clean" "btrfs check exited $rc" \
			"$(tail -n 20 <<< "$out")"
	fi
}

# ---- create, mkfs, mount --------------------------------------------------

back=$(new_backing $((LEN / 2048 + 4))) || bail "no backing device"
name=t_${TID}_hm
dev=/dev/mapper/$name
table="0 $LEN smr $back host-managed $ZS 5 max_open $MAXOPEN max_active $MAXACTIVE format"
check "create 2 GiB, 64 MiB zones, max_open $MAXOPEN, max_active $MAXACTIVE" \
	dm_create "$name" "$table" || bail "dmsetup create failed: $table"
sys=/sys/block/$(basename "$(readlink -f "$dev")")/queue
assert_eq "queue/zoned" host-managed "$(cat $sys/zoned)"
assert_eq "queue/nr_zones" $NZ "$(cat $sys/nr_zones)"
assert_eq "queue/max_open_zones" $MAXOPEN "$(cat $sys/max_open_zones)"
assert_eq "queue/max_active_zones" $MAXACTIVE "$(cat $sys/max_active_zones)"
zamb=$(cat $sys/zone_append_max_bytes)
if [ "${zamb:-0}" -gt 0 ]; then ok "queue/zone_append_max_bytes > 0 ($zamb): btrfs needs zone append"
else not_ok "queue/zone_append_max_bytes > 0" "got '$zamb'"; fi

check "mkfs.btrfs -O zoned" mkfs.btrfs -f -O zoned -L smrtest "$dev" || bail "mkfs.btrfs failed"
# btrfs turns random writes into appends, writes O_DIRECT through zone
# append, and resumes its block groups at the reloaded write pointers
# (it checks their allocation offsets against them at mount).
zfs_round_trip btrfs check_fs

bad=$(dmesg_since "$SMR_DMESG_MARK" | dmesg_drop_known | grep -E 'BTRFS (error|critical|warning)|BTRFS.*(write pointer|mismatch|corrupt)')
assert_eq "no btrfs errors or write pointer complaints in dmesg" "" "$bad"
dmesg_check
_show_result
