#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
# Unmodified ext4 on a caveat device: a workload runs, the counters and
# the log show the live data it destroys, and exactly the files whose
# blocks the target reports damaged read back wrong.
#
# What works (found here): mkfs.ext4 and mount read blocks never written
# (every block starts maybe damaged), so the device uses on_damaged_read
# zero: damaged blocks read as zeros (counted in damaged_reads). mkfs on a
# fully shingled device destroys its own metadata (its later writes damage
# the blocks after the earlier ones) and the mount fails; so, as the
# thesis's file system did, the metadata lives in an unshingled region:
# mkfs runs once on an image file to learn where the last metadata block
# (inode table, journal) is, and the unshingled region ends just after it.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: ext4 workload, live damage counted and consistent with reads"
require_cmd python3 dmsetup mkfs.ext4 filefrag md5sum dumpe2fs debugfs
require_target caveat

backing=$(new_backing 160) || bail "no backing device"
BLOCKS=$((128 * 256))	# 128 MiB
MKFS=(mkfs.ext4 -q -F -b 4096 -N 4096 -J size=4 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0)
img=$T_WORK/probe.img
truncate -s $((BLOCKS * 4096)) "$img"
"${MKFS[@]}" "$img" || bail "mkfs.ext4 on an image file failed"
mdend=$( { dumpe2fs "$img" 2>/dev/null | sed -n 's/.*Inode table at [0-9]*-\([0-9]*\).*/\1/p'
	   debugfs -R "blocks <8>" "$img" 2>/dev/null | tr ' ' '\n'; } |
	grep -E '^[0-9]+$' | sort -n | tail -n 1)
rm -f "$img"
[ -n "$mdend" ] || bail "could not find the end of the ext4 metadata"
UNSH=$(( (mdend + 1 + 255) / 256 * 256 ))
diag "ext4 metadata ends at block $mdend: unshingled $UNSH of $BLOCKS blocks"
dm_create cv05 "0 $((BLOCKS * 8)) caveat $backing 16 6 4 on_damaged_read zero unshingled $UNSH" ||
	bail "cannot create the caveat device"
check "mkfs.ext4" "${MKFS[@]}" /dev/mapper/cv05
assert_eq "mkfs destroyed no live data" 0 "$(cv_field cv05 live_damaged_blocks)"
check "mount" mount -o errors=continue /dev/mapper/cv05 "$T_MNT"
d=$T_MNT/data
mkdir -p "$d"
: > "$T_WORK/manifest"
# 40 files of 64..1024 KiB, then in-place overwrites of parts of 12 of them
# (ext4 rewrites data blocks in place): each damages what follows it.
for i in $(seq 1 40); do
	head -c $(( (RANDOM % 16 + 1) * 65536 )) /dev/urandom > "$d/f$i"
done
sync
for i in $(seq 1 12); do
	f=$d/f$(( (RANDOM % 40) + 1 ))
	sz=$(stat -c %s "$f")
	off=$(( (RANDOM % (sz / 4096)) ))
	dd if=/dev/urandom of="$f" bs=4096 seek=$off count=1 conv=notrunc status=none
	sync
done
for i in $(seq 1 40); do
	echo "$(md5sum < "$d/f$i" | cut -d' ' -f1) $d/f$i" >> "$T_WORK/manifest"
done
sync
ldb=$(cv_field cv05 live_damaged_blocks)
ldw=$(cv_field cv05 live_damage_writes)
diag "after the workload: $(dmsetup status cv05)"
if [ "$ldb" -gt 0 ] && [ "$ldw" -gt 0 ]; then
	ok "ext4 destroyed live data: $ldb blocks in $ldw writes"
else
	not_ok "ext4 destroyed live data" "live_damaged_blocks $ldb, live_damage_writes $ldw"
fi
n=$(dmesg_since "$SMR_DMESG_MARK" | grep -c "caveat: .*: write of blocks .* damaged .* live blocks in")
if [ "$n" -gt 0 ]; then ok "the log names $n damaging writes"
else not_ok "the log names the damaging writes"; fi
cv_py ext4check --dm cv05 --manifest "$T_WORK/manifest"
diag "after reading: $(dmsetup status cv05)"
umount "$T_MNT"
dmesg_check
_show_result
