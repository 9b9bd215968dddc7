#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
# SLOW: 1
#
# The verdict of scripts/fstests-power-cut, which says whether a file
# system came back clean after the drive's power cut: it must say so of
# a clean one, and not of one damaged on purpose, whether the damage
# still mounts (only the checker finds it) or stops the mount. Through
# its --check-only, over a drive of each target. Kernel-independent
# (the script's own logic): the first kernel of the suite only.

. "$(dirname "$0")/common.sh"
_prep_test "fstests-power-cut: clean, damaged and unmountable file systems judged"
require_cmd dmsetup mkfs.ext4 debugfs e2fsck mount

CUT=$SMR_ROOT/scripts/fstests-power-cut
MNT=$T_WORK/mnt
mkdir -p "$MNT"

# verdict NAME DEV: the script's exit status and its line, over DEV.
verdict() {
	local cfg=$T_WORK/$1.cfg
	printf 'FSTYP=ext4\nSCRATCH_DEV=%s\nSCRATCH_MNT=%s\n' "$2" "$MNT" > "$cfg"
	HOST_OPTIONS=$cfg "$CUT" --check-only > "$T_WORK/$1.out" 2>&1
	echo $?
}

b1=$(new_backing 64) || bail "no backing device"
dm_create fv_dm "0 $((32 * 2048)) smr $b1 drive-managed 16384 3 cache_sectors 8192 format" ||
	bail "drive-managed device"
b2=$(new_backing 64) || bail "no second backing device"
dm_create fv_cv "0 $((32 * 2048)) caveat $b2 0 0 1 format" || bail "caveat device"
# Every block of a new caveat device is maybe damaged, and mkfs reads.
dd if=/dev/zero of=/dev/mapper/fv_cv bs=1M count=32 oflag=direct status=none ||
	bail "the caveat device's first fill"

for d in fv_dm fv_cv; do
	dev=/dev/mapper/$d
	check "$d: mkfs.ext4" mkfs.ext4 -q -F "$dev"
	assert_eq "$d: a new ext4 is judged clean" 0 "$(verdict "$d-clean" "$dev")"
	check "$d: ... and the script says so" grep -q "ext4 clean" "$T_WORK/$d-clean.out"
	# The root directory's link count off: it mounts, e2fsck -fn finds it.
	check "$d: damage the root inode's link count" debugfs -w -R "sif <2> links_count 9" "$dev"
	assert_eq "$d: the damaged ext4 is judged not clean" 1 "$(verdict "$d-links" "$dev")"
	check "$d: ... naming what e2fsck found" grep -qi "ref count is 9" "$T_WORK/$d-links.out"
	# The superblock's magic gone: the mount fails, and says so.
	check "$d: zero the primary superblock (the first 4 KiB)" dd if=/dev/zero of="$dev" bs=4096 count=1 \
		oflag=direct status=none
	assert_eq "$d: an ext4 that does not mount is judged not clean" 1 "$(verdict "$d-sb" "$dev")"
	check "$d: ... because the mount failed" grep -q "the mount failed" "$T_WORK/$d-sb.out"
	assert_eq "$d: nothing left mounted" "" "$(findmnt -rn -S "$dev" -o TARGET)"
done
# Bad use is refused, not run.
HOST_OPTIONS=$T_WORK/fv_dm-clean.cfg "$CUT" --check-only generic/001 > "$T_WORK/use.out" 2>&1
assert_eq "--check-only with a test named: refused" 2 $?
dm_remove fv_cv
dm_remove fv_dm
dmesg_check
_show_result
