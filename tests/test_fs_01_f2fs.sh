#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
#
# f2fs on a host-managed dm-smr device, end to end: mkfs.f2fs -m, mount,
# fio with crc32c verify on files, umount, fsck.f2fs; then the device is
# removed and re-created from its own "dmsetup table" line (no format),
# must come back with every write pointer where it was, and f2fs must
# mount it again with every file intact (md5), keep writing at the
# reloaded write pointers, and pass fsck again. Throughout, the target
# must refuse no write (wp_errors, errors) and keep open zones within
# max_open.
#
# Geometry: 2 GiB, 16 MiB zones (128 zones). mkfs.f2fs (1.15) puts its
# metadata (checkpoint, SIT, NAT, SSA) in conventional zones and refuses
# a device with fewer than it needs: measured here, 3 for 2 GiB with
# 16 MiB zones (4 for 4 GiB; 2 for 2 GiB with 64 MiB zones; 13 with
# 2 MiB zones), so conv_zones is 3, the minimum. Smaller zones keep f2fs's
# reserved sections (6 sections of one zone each, plus overprovisioning)
# from eating a small device: with 64 MiB zones a 2 GiB f2fs has 74 MiB
# free. f2fs writes 6 logs at once (active_logs=6); max_open 8 covers them
# with room, as a drive's limit would.

. "$(dirname "$0")/common.sh"

_prep_test "f2fs on host-managed smr: fio verify, fsck, remove/create keeps zones and files"
require_cmd fio mkfs.f2fs fsck.f2fs blkzone md5sum dmsetup
require_target smr
modprobe f2fs 2>/dev/null
grep -qw f2fs /proc/filesystems || skip_all "the kernel has no f2fs"

ZS=32768			# 16 MiB zones
NZ=128				# 2 GiB
LEN=$((NZ * ZS))
CONV=3
MAXOPEN=8

. "$(dirname "$0")/lib/zoned_fs.sh"

# fsck_f2fs WHEN: a full check must find nothing.
fsck_f2fs() {
	local out rc
	out=$(fsck.f2fs -f "$dev" 2>&1); rc=$?
	# Each [FSCK] line ends in [Ok..] or [Fail].
	if [ $rc = 0 ] && grep -q '^\[FSCK\]' <<< "$out" &&
	   ! grep -qE '\[Fail\]|Error' <<< "$out"; then
		ok "$1: fsck.f2fs -f is clean"
	else
		not_ok "$1: fsck.f2fs -f is clean" "fsck.f2fs exited $rc" \
			"$(grep -E 'FSCK|Fail|Error' <<< "$out" | head -20)"
	fi
}

# ---- create, mkfs, mount --------------------------------------------------

back=$(new_backing $((LEN / 2048 + 4))) || bail "no backing device"
name=t_${TID}_hm
dev=/dev/mapper/$name
table="0 $LEN smr $back host-managed $ZS 5 conv_zones $CONV max_open $MAXOPEN format"
check "create 2 GiB, 16 MiB zones, $CONV conventional, max_open $MAXOPEN" \
	dm_create "$name" "$table" || bail "dmsetup create failed: $table"
sys=/sys/block/$(basename "$(readlink -f "$dev")")/queue
assert_eq "queue/zoned" host-managed "$(cat $sys/zoned)"
assert_eq "queue/nr_zones" $NZ "$(cat $sys/nr_zones)"
assert_eq "queue/max_open_zones" $MAXOPEN "$(cat $sys/max_open_zones)"

check "mkfs.f2fs -m" mkfs.f2fs -f -m -l smrtest "$dev" || bail "mkfs.f2fs failed"
# f2fs turns random writes into appends, falls back to buffered I/O for
# O_DIRECT in LFS mode, and resumes its logs at the reloaded write
# pointers.
zfs_round_trip f2fs fsck_f2fs

# 6.12's f2fs notes at every mount of a zoned device that it checks the
# write pointers ("Checking entire write pointers"): not a complaint.
bad=$(dmesg_since "$SMR_DMESG_MARK" | grep -E 'F2FS-fs.*(write pointer|[Ii]nconsistent|error)' |
	grep -v 'Checking entire write pointers$')
assert_eq "no f2fs write pointer or consistency complaints in dmesg" "" "$bad"
dmesg_check
_show_result
