#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SMOKE: 1
# TIMEOUT: 600
#
# The emulated drives as SCSI disks (userspace/smr-scsi/smr-scsi: TCMU and
# tcm_loop). A host-managed dm-smr device becomes a ZBC disk: the sd
# driver sees it zoned with the dm device's zones, sg3_utils' zone
# commands act on the dm device's zones, fio zonemode=zbd verifies its
# data through /dev/sdX, f2fs mounts on it, and broken rules get ZBC's
# sense data. A drive-managed one is a disk that says it is
# device-managed; a caveat one reports a damaged read as MEDIUM ERROR at
# the first damaged LBA. Stopping an export leaves nothing behind.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"
. "$SMR_ROOT/tests/lib/cv.sh"

_prep_test "scsi: emulated drives as SCSI disks through TCMU and tcm_loop"
hm_prep
require_cmd fio sg_inq sg_vpd sg_rep_zones sg_reset_wp sg_zone sg_raw sg_readcap mkfs.f2fs
require_target caveat
SCSI=$SMR_ROOT/userspace/smr-scsi/smr-scsi
[ -x "$SCSI" ] || bail "no $SCSI: make -C userspace"
modprobe target_core_user 2>/dev/null && modprobe tcm_loop 2>/dev/null ||
	skip_all "the kernel has no target_core_user or tcm_loop (CONFIG_TCM_USER2, CONFIG_LOOPBACK_TARGET)"

# Exports still there at the end (a failed check on the way) are stopped
# before the harness removes the dm devices under them.
EXPORTS=()
_scsi_exit() {
	local rc=$? n
	for n in "${EXPORTS[@]}"; do
		[ -n "$n" ] && "$SCSI" --stop "$n" > /dev/null 2>&1
	done
	(exit $rc)
	_cleanup_test
}
trap _scsi_exit EXIT

# export NAME DEV: smr-scsi --daemon; sets SD to the disk (/dev/sdX).
export_dev() {
	local out
	out=$("$SCSI" --daemon --log "$T_WORK/$1.log" --name "$1" "$2" 2> "$T_WORK/$1.err")
	SD=${out#*: }
	if [ -b "$SD" ]; then
		EXPORTS+=("$1")
		ok "$1: exported as $SD"
	else
		not_ok "$1: exported" "$out" "$(cat "$T_WORK/$1.err")"
		return 1
	fi
	udevadm settle 2> /dev/null || sleep 1
}
sdq() { cat "/sys/block/${SD#/dev/}/queue/$1"; }
# sense TEXT CMD...: the command fails and sg3_utils prints TEXT
sense() {
	local what=$1 want=$2 out
	shift 2
	out=$("$@" 2>&1) && { not_ok "$what: fails" "$out"; return; }
	if grep -qi -- "$want" <<< "$out"; then ok "$what: $want"
	else not_ok "$what: $want" "$out"; fi
}
# hex16 N: N as the 8 bytes of a CDB's LBA field, for sg_raw
hex8() { printf '%016x' "$1" | sed 's/../& /g'; }
hex4() { printf '%08x' "$1" | sed 's/../& /g'; }

# ------------------------------------------------- 1. host-managed ---
ZS=$HM_ZS			# 8 MiB zones
NZ=32
back=$(new_backing 300) || bail "no backing device"
hm_create t_hm $((NZ * ZS)) "$back" $ZS conv_zones 4 max_open 6 || bail "cannot create t_hm"
dev=/dev/mapper/t_hm
export_dev scsi_hm "$dev" || bail "cannot export the host-managed drive"
assert_eq "sd: host-managed" host-managed "$(sdq zoned)"
assert_eq "sd: the zone size" "$(hm_sysfs "$dev" chunk_sectors)" "$(sdq chunk_sectors)"
assert_eq "sd: the number of zones" $NZ "$(cat /sys/block/${SD#/dev/}/queue/nr_zones)"
assert_eq "sd: the open limit (VPD 0xb6)" 6 "$(sdq max_open_zones)"
assert_eq "sd: the capacity" "$(blockdev --getsz "$dev")" "$(blockdev --getsz "$SD")"
assert_eq "sd: the logical block size" "$(blockdev --getss "$dev")" "$(blockdev --getss "$SD")"
# SCSI addresses logical blocks; the tests here and hm.sh, 512-byte sectors
SPL=$(( $(blockdev --getss "$SD") / 512 ))
lba() { echo $(( $1 / SPL )); }
out=$(sg_inq "$SD" 2>&1)
if grep -q "PDT=20" <<< "$out" && grep -q "DM-SMR" <<< "$out"; then ok "sg_inq: peripheral type 20 (zoned), vendor DM-SMR"
else not_ok "sg_inq: peripheral type 20" "$out"; fi
out=$(sg_vpd -p zbdch "$SD" 2>&1)
if grep -qi "URSWRZ.*1" <<< "$out" && grep -qiE "open sequential write required zones: *6" <<< "$out"; then
	ok "sg_inq VPD 0xb6: URSWRZ, 6 open zones at most"
else not_ok "sg_inq VPD 0xb6" "$out"; fi

# what blkzone sees through sd is what it sees on the dm device
seq0=$((4 * ZS))
check "a write through sd at a zone's write pointer" \
	dd if=/dev/urandom of="$SD" bs=64k count=3 seek=$((seq0 * 512 / 65536)) oflag=direct status=none
assert_eq "the dm device's zone moved with it" "oi 384" "$(hm_cw "$dev" $seq0)"
assert_eq "blkzone report: sd and dm device agree" "$(hm_report "$dev")" "$(hm_report "$SD")"

# sg3_utils' zone commands, seen on the dm device
out=$(sg_rep_zones --start="$(lba $seq0)" --num=1 "$SD" 2>&1)
if grep -qiE "write pointer lba: 0x0*$(printf '%x' "$(lba $((seq0 + 384)))")\b" <<< "$out"; then
	ok "sg_rep_zones: the zone's write pointer"
else not_ok "sg_rep_zones: the zone's write pointer" "$out"; fi
z5=$((5 * ZS))
check "sg_zone --open" sg_zone --open --zone="$(lba $z5)" "$SD"
assert_eq "explicitly open on the dm device" "oe 0" "$(hm_cw "$dev" $z5)"
check "sg_zone --close" sg_zone --close --zone="$(lba $z5)" "$SD"
assert_eq "empty again (closed with nothing written)" "em 0" "$(hm_cw "$dev" $z5)"
check "sg_zone --finish" sg_zone --finish --zone="$(lba $z5)" "$SD"
assert_eq "full on the dm device" "fu $ZS" "$(hm_cw "$dev" $z5)"
check "sg_reset_wp" sg_reset_wp --zone="$(lba $seq0)" "$SD"
assert_eq "reset on the dm device" "em 0" "$(hm_cw "$dev" $seq0)"
check "sg_reset_wp --all" sg_reset_wp --all "$SD"
assert_eq "all reset on the dm device" "em 0" "$(hm_cw "$dev" $z5)"

# broken rules and bad commands: ZBC's sense data
# wr16 LBA BLOCKS: WRITE(16) of zeros
wr16() { sg_raw -s $(( $2 * SPL * 512 )) -i /dev/zero "$SD" 8a 00 $(hex8 "$1") $(hex4 "$2") 00 00; }
sense "a write off the write pointer" "Unaligned write command" wr16 "$(lba $((seq0 + 8 * SPL)))" 1
sense "a write across a zone's end" "Write boundary violation" wr16 "$(lba $((z5 + ZS - 8 * SPL)))" 16
check "sg_zone --finish (a full zone)" sg_zone --finish --zone="$(lba $z5)" "$SD"
sense "a write into a full zone" "Invalid field in cdb" wr16 "$(lba $z5)" 1
sense "REPORT ZONES past the end" "LBA out of range" \
	sg_rep_zones --start="$(lba $((NZ * ZS)))" "$SD"
sense "an unknown operation code" "Invalid command operation code" sg_raw "$SD" c0 00 00 00 00 00
for i in 6 7 8 9 10 11; do
	check "zone $i opened" sg_zone --open --zone="$(lba $((i * ZS)))" "$SD"
done
# (sg_zone names the sense key only; sg_raw decodes the rest)
sense "a seventh open zone (limit 6)" "Insufficient zone resources" \
	sg_raw "$SD" 94 03 $(hex8 "$(lba $((12 * ZS)))") 00 00 00 00 00 00
check "sg_zone --close --all" sg_zone --close --all "$SD"
check "sg_reset_wp --all" sg_reset_wp --all "$SD"
# Commands through SG_IO pass the block layer by: since 6.10 its zone
# write plugs keep the write pointer of a zone written through sd, and
# do not see these resets. A reset through the block layer puts them
# right (docs/scsi.md, "Limits"), as it must on a real drive.
check "blkzone reset through sd" blkzone reset "$SD"

# fio zonemode=zbd through the SCSI path: data verified
run_fio "fio zbd on $SD: 2 writers, iodepth 4, crc32c verify" \
	--filename="$SD" --zonemode=zbd --rw=write --bs=64k --iodepth=4 --ioengine=libaio \
	--direct=1 --numjobs=2 --offset=$((seq0 * 512)) --offset_increment=$((8 * ZS * 512)) \
	--size=$((8 * ZS * 512)) --io_size=24M --verify=crc32c --do_verify=1 --verify_fatal=1
assert_eq "fio's data reads back the same through the dm device" \
	"$(hm_sum "$SD" $seq0 $((2 * ZS)))" "$(hm_sum "$dev" $seq0 $((2 * ZS)))"

# f2fs on the SCSI disk (its conventional zones hold the metadata)
if modprobe f2fs 2> /dev/null && grep -qw f2fs /proc/filesystems; then
	check "sg_reset_wp --all before mkfs" sg_reset_wp --all "$SD"
	check "mkfs.f2fs -m" mkfs.f2fs -q -f -m "$SD"
	mkdir -p "$T_MNT/f2fs"
	if check "mount f2fs" mount -t f2fs "$SD" "$T_MNT/f2fs"; then
		check "a file written and synced" \
			dd if=/dev/urandom of="$T_MNT/f2fs/a" bs=1M count=8 conv=fsync status=none
		sum=$(md5sum < "$T_MNT/f2fs/a")
		check "umount" umount "$T_MNT/f2fs"
		check "mount again" mount -t f2fs "$SD" "$T_MNT/f2fs"
		assert_eq "the file's data after a remount" "$sum" "$(md5sum < "$T_MNT/f2fs/a")"
		check "umount" umount "$T_MNT/f2fs"
	fi
else
	skip "f2fs on the SCSI disk" "the kernel has no f2fs"
fi

# the dm device is the export's while it lasts
check_fail "dmsetup remove of an exported device fails (busy)" dmsetup remove t_hm
sdname=${SD#/dev/}
check "smr-scsi --stop" "$SCSI" --stop scsi_hm
EXPORTS=("${EXPORTS[@]/scsi_hm}")
udevadm settle 2> /dev/null
check_fail "the sd device is gone" test -e "/sys/block/$sdname"
assert_eq "no backstore left in configfs" "" \
	"$(ls -d /sys/kernel/config/target/core/user_*/scsi_hm 2> /dev/null)"
assert_eq "no tcm_loop target left" "" "$(ls /sys/kernel/config/target/loopback/ 2> /dev/null | grep naa)"
assert_eq "smr-scsi --list: empty" "" "$("$SCSI" --list)"

# ----------------------------------------------- 2. drive-managed ---
back=$(new_backing 200) || bail "no backing device"
. "$SMR_ROOT/tests/lib/dm.sh"
dms_create t_dm $((128 * 2048)) "$back" 65536 || bail "cannot create t_dm"
# (a marker in the kernel log, not a line count: a long boot's log wraps)
mark="scsi01-dm-$$-$RANDOM"
echo "$mark" > /dev/kmsg
export_dev scsi_dm /dev/mapper/t_dm || bail "cannot export the drive-managed drive"
assert_eq "sd: not zoned" none "$(sdq zoned)"
if dmesg_since "$mark" | grep -q "Drive-managed SMR disk"; then
	ok "sd: \"Drive-managed SMR disk\" (VPD 0xb1 ZONED)"
else not_ok "sd: Drive-managed SMR disk" "$(dmesg_since "$mark" | grep sd)"; fi
check "16 MiB written at random offsets through sd, verified" \
	fio --name=dmv --filename="$SD" --rw=randwrite --bs=16k --size=64M --io_size=16M \
	--direct=1 --ioengine=libaio --iodepth=4 --verify=crc32c --verify_fatal=1 \
	--output=/dev/null
check "smr-scsi --stop" "$SCSI" --stop scsi_dm
EXPORTS=("${EXPORTS[@]/scsi_dm}")

# ------------------------------------------------------- 3. caveat ---
back=$(new_backing 40) || bail "no backing device"
dm_create t_cv "0 $((8192 * 8)) caveat $back 16 6 2 unshingled 256" || bail "cannot create t_cv"
check "the caveat drive written from end to end (nothing maybe damaged)" \
	dd if=/dev/zero of=/dev/mapper/t_cv bs=1M count=32 oflag=direct status=none
check "block 1000 rewritten: blocks after it maybe damaged" \
	dd if=/dev/urandom of=/dev/mapper/t_cv bs=4096 count=1 seek=1000 oflag=direct status=none
dump=$(cv_msg t_cv dump)
bad=${dump%%+*}
diag "maybe damaged: $dump"
export_dev scsi_cv /dev/mapper/t_cv || bail "cannot export the caveat drive"
lbs=$(blockdev --getss "$SD")
badlba=$((bad * 4096 / lbs))
out=$(sg_raw -r 65536 "$SD" 88 00 $(hex8 $((badlba - 4 * 4096 / lbs))) $(hex4 $((16 * 4096 / lbs))) 00 00 2>&1)
if grep -qi "Medium Error" <<< "$out" && grep -qi "Unrecovered read error" <<< "$out" &&
   grep -qiE "info fld=0x0*$(printf '%x' $badlba) |information: 0x0*$(printf '%x' $badlba)\b" <<< "$out"; then
	ok "a damaged read: MEDIUM ERROR, UNRECOVERED READ ERROR at LBA $badlba"
else not_ok "a damaged read: MEDIUM ERROR at LBA $badlba" "$out"; fi
check "the blocks before it read" \
	dd if="$SD" of=/dev/null bs=4096 count=1 skip=$((bad - 1)) iflag=direct status=none
sense "the same name exported twice" "exported already" "$SCSI" --name scsi_cv /dev/mapper/t_cv
check "smr-scsi --stop" "$SCSI" --stop scsi_cv
EXPORTS=("${EXPORTS[@]/scsi_cv}")

# ------------------------------------------------- 4. bad input ---
sense "a device that is not one" "No such file" "$SCSI" /dev/nonexistent
sense "a bad name" "not a name" "$SCSI" --name "a/b" "$dev"
sense "--stop of no export" "no such export" "$SCSI" --stop nothing
sense "--rpm out of range" "from 1025 to 65534" "$SCSI" --rpm 70000 "$dev"
sense "--rpm a value SBC-4 reserves" "from 1025 to 65534" "$SCSI" --rpm 1000 "$dev"
sense "a name ending in .tmp (the state file's temporary name)" "not a name" \
	"$SCSI" --name x.tmp "$dev"
back=$(new_backing 40) || bail "no backing device"
hm_create t_hmmo $((4 * ZS)) "$back" $ZS max_open 2 || bail "cannot create t_hmmo"
sense "--max-open above the device's own limit" "above the device's own limit of 2" \
	"$SCSI" --max-open 3 /dev/mapper/t_hmmo
sense "--max-open 0 (none) on a device with a limit" "above the device's own limit of 2" \
	"$SCSI" --max-open 0 /dev/mapper/t_hmmo
back=$(new_backing 40) || bail "no backing device"
hm_create t_hmcap $((4 * ZS)) "$back" $ZS zone_capacity $((ZS / 2)) || bail "cannot create t_hmcap"
sense "a drive with a zone capacity below its zone size" "export a drive without zone_capacity" \
	"$SCSI" /dev/mapper/t_hmcap
assert_eq "nothing left of the refused export" "" "$("$SCSI" --list; ls /sys/kernel/config/target/core/ | grep user_)"

# what the handlers logged: each command that got CHECK CONDITION
for n in scsi_hm scsi_dm scsi_cv; do
	[ -s "$T_WORK/$n.log" ] && diag "$n: $(wc -l < "$T_WORK/$n.log") lines logged, the last:" \
		"$(tail -n 8 "$T_WORK/$n.log")"
done
dmesg_check
_show_result
