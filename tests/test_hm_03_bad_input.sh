#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
# SLOW: 1
# (Parsing and refusals: make check runs it on the first kernel only, as
# the other bad-input tests.)
#
# Host-managed dm-smr: bad input is refused cleanly. Every malformed
# table line fails with its own error in the kernel log (and no kernel
# warning); a backing device that holds something else is refused
# without "format" and wiped with it; a superblock whose geometry differs
# from the table is refused unless "format"; bad messages fail with
# EINVAL and a log line; unaligned I/O and I/O at the device end fail.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: malformed tables, foreign backing devices, bad messages, bad I/O"
hm_prep

ZS=$HM_ZS
NZ=16
LEN=$((NZ * ZS))
EINVAL="Invalid argument"
BAD=t_${TID}_bad
echo "$BAD" >> "$T_WORK/.dm-devices"

back=$(new_backing 160) || bail "no backing device"

# refused DESC TABLE KERNEL_MSG [DMSETUP_ARGS...]: "dmsetup create" of
# TABLE fails, the kernel log says KERNEL_MSG, and no device is left.
refused() {
	local desc=$1 table=$2 msg=$3 mark out rc log
	shift 3
	mark=$(kmsg_mark hm-mark)
	out=$(dmsetup create "$BAD" "$@" --table "$table" 2>&1); rc=$?
	log=$(dmesg_since "$mark")
	if [ $rc = 0 ]; then
		not_ok "$desc: refused" "table accepted: $table"
		dmsetup remove --retry "$BAD" > /dev/null 2>&1
		return 1
	fi
	if [[ $log == *"$msg"* ]]; then
		ok "$desc: refused ($msg)"
	else
		not_ok "$desc: refused with '$msg' in the kernel log" \
			"table: $table" "dmsetup: $out" "kernel log: $log"
	fi
	if hm_dm_exists "$BAD"; then
		not_ok "$desc: no device left behind"
		dmsetup remove --retry "$BAD" > /dev/null 2>&1
	fi
	return 0
}

# accepted DESC TABLE [DMSETUP_ARGS...]: the table loads (device removed).
accepted() {
	local desc=$1 table=$2 out
	shift 2
	if out=$(dmsetup create "$BAD" "$@" --table "$table" 2>&1); then
		ok "$desc: accepted"
		udevadm settle 2>/dev/null
		dmsetup remove --retry "$BAD" > /dev/null 2>&1
	else
		not_ok "$desc: accepted" "table: $table" "$out" \
			"$(dmesg | tail -n 5)"
	fi
}

T() { hm_table "$@"; }
POW2="zone_sectors must be a power of two"

# ---- table lines --------------------------------------------------------
refused "zone size not a power of two" "$(T $LEN "$back" 12288)" "$POW2"
refused "zone size 0" "$(T $LEN "$back" 0)" "$POW2"
refused "zone size 4 (below 4 KiB)" "$(T $LEN "$back" 4)" "$POW2"
refused "zone size 2^32 (above 2^31)" "$(T $LEN "$back" 4294967296)" "$POW2"
refused "zero length" "0 0 smr $back host-managed $ZS" "zero-length target"
refused "length not a multiple of the zone size" "$(T $((LEN + 8)) "$back" $ZS)" \
	"Target length must be a non-zero multiple of zone_sectors"
refused "length of half a zone" "$(T $((ZS / 2)) "$back" $ZS)" \
	"Target length must be a non-zero multiple of zone_sectors"
refused "conv_zones = nr_zones" "$(T $LEN "$back" $ZS conv_zones $NZ)" \
	"conv_zones must leave at least one sequential zone"
refused "conv_zones > nr_zones" "$(T $LEN "$back" $ZS conv_zones 99)" \
	"conv_zones must leave at least one sequential zone"
CAPMSG="zone_capacity must be a non-zero multiple of 8 sectors"
refused "zone_capacity > zone size" "$(T $LEN "$back" $ZS zone_capacity $((ZS + 8)))" "$CAPMSG"
refused "zone_capacity not a multiple of 8" "$(T $LEN "$back" $ZS zone_capacity 12)" "$CAPMSG"
refused "zone_capacity 0" "$(T $LEN "$back" $ZS zone_capacity 0)" "$CAPMSG"
# More zones than one kvcalloc() may hold (issue 27): over a backing device
# large enough to pass the size check, this used to reach the allocation,
# which warned (a panic with panic_on_warn). 2^27 zones of 4 KiB.
if bigback=$(new_big_backing 520); then
	refused "2^27 zones (at most 2^22; the zone array would pass INT_MAX bytes)" \
		"$(T $((1 << 30)) "$bigback" 8)" "Too many zones"
else
	skip "2^27 zones refused" "no 520 GiB region on the huge disk"
fi
refused "unknown option" "$(T $LEN "$back" $ZS foo 1)" "Unknown optional argument"
refused "max_open given twice" "$(T $LEN "$back" $ZS max_open 2 max_open 3)" "given twice"
refused "junk after the zone size" "$(T $LEN "$back" 131072x)" "Invalid zone_sectors"
refused "negative zone size" "$(T $LEN "$back" -16384)" "Invalid zone_sectors"
refused "junk after conv_zones" "$(T $LEN "$back" $ZS conv_zones 2x)" "Invalid conv_zones"
refused "junk after zone_capacity" "$(T $LEN "$back" $ZS zone_capacity 8k)" "Invalid zone_capacity"
refused "negative max_open" "$(T $LEN "$back" $ZS max_open -1)" "Invalid max_open"
refused "max_active above 2^32" "$(T $LEN "$back" $ZS max_active 4294967296)" "Invalid max_active"
refused "optional count larger than the arguments" \
	"0 $LEN smr $back host-managed $ZS 3 conv_zones 2" "Invalid number of optional arguments"
refused "optional count smaller than the arguments" \
	"0 $LEN smr $back host-managed $ZS 2 conv_zones 2 max_open 2" "Too many arguments"
refused "optional count cutting a name from its value" \
	"0 $LEN smr $back host-managed $ZS 1 conv_zones 2" "Optional argument is missing its value"
refused "optional count above 11" \
	"0 $LEN smr $back host-managed $ZS 12 conv_zones 2 zone_capacity 8 max_open 1 max_active 1 write_cache 8 format format" \
	"Invalid number of optional arguments"
refused "optional count not a number" \
	"0 $LEN smr $back host-managed $ZS x conv_zones 2" "Invalid number of optional arguments"
refused "option without its value" "$(T $LEN "$back" $ZS conv_zones)" \
	"Optional argument is missing its value"
refused "no zone size" "0 $LEN smr $back host-managed" "Usage:"
refused "no mode" "0 $LEN smr $back" "Usage:"
refused "unknown mode" "0 $LEN smr $back host-aware $ZS" \
	"Mode must be host-managed or drive-managed"
refused "drive-managed with a band size that is not whole MiB" \
	"0 $LEN smr $back drive-managed 1000" "band_sectors must be a multiple of 2048"
refused "missing backing device" "$(T $LEN /dev/nonexistent $ZS)" "Cannot open the backing device"
refused "read-only table" "$(T $LEN "$back" $ZS)" "A read-only table is not supported" --readonly

# ---- backing device size --------------------------------------------------
small=$(new_backing 64) || bail "no small backing device"
mark=$(kmsg_mark hm-mark)
refused "backing device too small" "$(T $LEN "$small" $ZS)" \
	"Backing device too small for this geometry"
log=$(dmesg_since "$mark")
want="has 131072 sectors; 264192 are needed (metadata 2048 + data 262144)"
if [[ $log == *"$want"* ]]; then ok "kernel log gives the sizes: $want"
else not_ok "kernel log gives the sizes: $want" "$log"; fi
# Sequential zones are packed by capacity: 2 * 16384 + 14 * 8192 + 2048.
need=$((2 * ZS + 14 * 8192 + 2048))
mark=$(kmsg_mark hm-mark)
refused "too small for conv_zones 2 zone_capacity 8192" \
	"$(T $LEN "$small" $ZS conv_zones 2 zone_capacity 8192)" "Backing device too small"
log=$(dmesg_since "$mark")
want="has 131072 sectors; $need are needed (metadata 2048 + data $((need - 2048)))"
if [[ $log == *"$want"* ]]; then ok "kernel log gives the sizes: $want"
else not_ok "kernel log gives the sizes: $want" "$log"; fi
# Exactly big enough, and 4 KiB short.
sized=$(new_backing 80) || bail "no backing device"
dm_create "t_${TID}_exact" "0 $need linear $sized 0"
dm_create "t_${TID}_short" "0 $((need - 8)) linear $sized 0"
accepted "backing device of exactly the size needed" \
	"$(T $LEN /dev/mapper/t_${TID}_exact $ZS conv_zones 2 zone_capacity 8192 format)"
refused "backing device 4 KiB short" \
	"$(T $LEN /dev/mapper/t_${TID}_short $ZS conv_zones 2 zone_capacity 8192 format)" \
	"Backing device too small"
dm_remove "t_${TID}_exact"
dm_remove "t_${TID}_short"

# ---- a backing device that holds something else ------------------------
foreign=$(new_backing 160) || bail "no backing device"
junk=$(hm_newfile 8); hm_data "$junk" 8
dd if="$junk" of="$foreign" bs=4096 oflag=direct conv=fsync,notrunc status=none
refused "backing device holding other data, without format" \
	"$(T $LEN "$foreign" $ZS conv_zones 2)" "holds no valid dm-smr superblock"
hm_assert_read "the refused table wrote nothing" "$foreign" 0 "$junk"
nf=t_${TID}_f
F=/dev/mapper/$nf
check "with format it is accepted" hm_create "$nf" $LEN "$foreign" $ZS conv_zones 2 format
rep=$(hm_report "$F")
assert_eq "the formatted device: every sequential zone empty" $((NZ - 2)) \
	"$(grep -c ' 0 em SEQ_WRITE_REQUIRED$' <<< "$rep")"
hm_assert_zero "a sequential zone reads zeros" "$F" $((2 * ZS)) 256
hm_put fw "$F" $((2 * ZS)) 8 "and takes a write at its wp"
check "remove" dm_remove "$nf"

# Formats whose first 4 KiB are zero: their signature further in is found.
# put_sig OFFSET PRINTF_BYTES: a zeroed 1 MiB start with those bytes at OFFSET.
put_sig() {
	dd if=/dev/zero of="$foreign" bs=1M count=1 oflag=direct conv=fsync,notrunc status=none
	printf "$2" | dd of="$foreign" bs=1 seek="$1" conv=fsync,notrunc status=none
	# ZFS: two uberblocks, 1 KiB apart.
	[ "$1" != 132096 ] ||
		printf "$2" | dd of="$foreign" bs=1 seek=$(($1 + 1024)) conv=fsync,notrunc status=none
}
for sig in "4096 \xfc\x4e\x2b\xa9 a Linux md (RAID) member" \
	   "65600 _BHRfS_M a btrfs file system" \
	   "132096 \x0c\xb1\xba\x00\x00\x00\x00\x00 a ZFS vdev"; do
	read -r off bytes what <<< "$sig"
	put_sig "$off" "$bytes"
	mark=$(kmsg_mark hm-mark)
	refused "first 4 KiB zero, $what further in, without format" \
		"$(T $LEN "$foreign" $ZS conv_zones 2)" "Backing device holds another format"
	if dmesg_since "$mark" | grep -qF "the backing device holds $what"; then
		ok "the kernel log names $what"
	else
		not_ok "the kernel log names $what" "$(dmesg_since "$mark" | tail -n 3)"
	fi
done
check "with format it is accepted" hm_create "$nf" $LEN "$foreign" $ZS conv_zones 2 format
check "remove" dm_remove "$nf"
dd if=/dev/zero of="$foreign" bs=1M count=1 oflag=direct conv=fsync,notrunc status=none
check "all zero: formatted without format" hm_create "$nf" $LEN "$foreign" $ZS conv_zones 2
hm_put fw "$F" $((2 * ZS)) 8 "and takes a write at its wp"
check "remove" dm_remove "$nf"

# A dm-smr superblock with a bad checksum is not a dm-smr superblock.
sb=$(hm_newfile 8)
dd if="$foreign" of="$sb" bs=4096 count=1 iflag=direct status=none
cp "$sb" "$sb.bad"
printf '\x01' | dd of="$sb.bad" bs=1 seek=100 conv=notrunc status=none
dd if="$sb.bad" of="$foreign" bs=4096 oflag=direct conv=fsync,notrunc status=none
refused "superblock with a bad checksum" "$(T $LEN "$foreign" $ZS conv_zones 2)" \
	"holds no valid dm-smr superblock"
dd if="$sb" of="$foreign" bs=4096 oflag=direct conv=fsync,notrunc status=none
check "the restored superblock loads" hm_create "$nf" $LEN "$foreign" $ZS conv_zones 2
assert_cw "and its zone state" "$F" $((2 * ZS)) "cl 8"
hm_assert_read "and its data" "$F" $((2 * ZS)) "$fw"
check "remove" dm_remove "$nf"

# ---- geometry mismatch -------------------------------------------------------
GEO="Table geometry differs from the on-disk superblock"
mark=$(kmsg_mark hm-mark)
refused "another zone size" "$(T $LEN "$foreign" $((ZS / 2)) conv_zones 2)" "$GEO"
log=$(dmesg_since "$mark")
want="on-disk geometry: mode 1, $LEN sectors, zone/band sectors $ZS, zone_capacity $ZS, conv_zones 2, cache_sectors 0"
if [[ $log == *"$want"* ]]; then ok "kernel log gives the on-disk geometry"
else not_ok "kernel log gives the on-disk geometry: $want" "$log"; fi
refused "other conv_zones" "$(T $LEN "$foreign" $ZS conv_zones 3)" "$GEO"
refused "no conv_zones" "$(T $LEN "$foreign" $ZS)" "$GEO"
refused "another zone_capacity" "$(T $LEN "$foreign" $ZS conv_zones 2 zone_capacity 8192)" "$GEO"
refused "another length" "$(T $((LEN - ZS)) "$foreign" $ZS conv_zones 2)" "$GEO"
check "other open/active limits are not geometry: accepted" \
	hm_create "$nf" $LEN "$foreign" $ZS conv_zones 2 max_open 3 max_active 4
assert_eq "and the data is still there" "cl 8" "$(hm_cw "$F" $((2 * ZS)))"
check "remove" dm_remove "$nf"
check "another geometry with format: accepted" \
	hm_create "$nf" $LEN "$foreign" $((ZS / 2)) conv_zones 3 format
assert_eq "and it has the new geometry" "32 $((ZS / 2))" \
	"$(hm_sysfs "$F" nr_zones) $(hm_sysfs "$F" chunk_sectors)"
assert_cw "and starts empty" "$F" $((3 * ZS / 2)) "em 0"
check "remove" dm_remove "$nf"

# ---- messages ---------------------------------------------------------------
nm=t_${TID}_m
M=/dev/mapper/$nm
hm_create "$nm" $LEN "$back" $ZS conv_zones 2 format || bail "cannot create device M"

# bad_msg DESC KERNEL_MSG WORDS...: the message fails with EINVAL and logs.
bad_msg() {
	local desc=$1 kmsg=$2 mark out rc log
	shift 2
	mark=$(kmsg_mark hm-mark)
	out=$(dmsetup message "$nm" 0 "$@" 2>&1); rc=$?
	log=$(dmesg_since "$mark")
	assert_errno "message '$*' fails with EINVAL ($desc)" "$EINVAL" "$out" $rc
	if [[ $log == *"$kmsg"* ]]; then ok "... and logs '$kmsg'"
	else not_ok "... and logs '$kmsg'" "kernel log: $log"; fi
}
bad_msg "unknown" "unknown message or wrong arguments" foo
bad_msg "unknown, with arguments" "unknown message or wrong arguments" foo 1 2
bad_msg "zone_info, sector not a zone start" "is not the start of a zone" zone_info 100
bad_msg "zone_info, sector at the device end" "is not within the device" zone_info $LEN
bad_msg "zone_info, sector far beyond" "is not within the device" zone_info 99999999999999
bad_msg "zone_info, junk" "is not within the device" zone_info $((2 * ZS))x
bad_msg "zone_info, hex" "is not within the device" zone_info 0x8000
bad_msg "zone_info without its sector" "unknown message or wrong arguments" zone_info
bad_msg "zone_info, extra argument" "unknown message or wrong arguments" zone_info 0 0
bad_msg "zone_cond on a conventional zone" "is conventional" zone_cond 0 readonly
bad_msg "zone_cond, unknown condition" "condition must be readonly, offline or empty" \
	zone_cond $((2 * ZS)) broken
bad_msg "zone_cond, not a zone start" "is not the start of a zone" zone_cond $((2 * ZS + 8)) offline
bad_msg "zone_cond, beyond the device" "is not within the device" zone_cond $LEN offline
bad_msg "zone_cond without a condition" "unknown message or wrong arguments" zone_cond $((2 * ZS))
bad_msg "clear_stats with an argument" "unknown message or wrong arguments" clear_stats now
assert_eq "the bad messages changed no zone (zones 0 and 2)" "nw 0 em 0" \
	"$(hm_cw "$M" 0 $((2 * ZS)))"
assert_eq "no zone went read-only or offline" "0 0" "$(hm_stat "$M" readonly offline)"

# ---- unaligned I/O and the device end ---------------------------------------
out=$(dd if=/dev/zero of="$M" bs=512 count=1 oflag=direct conv=notrunc status=none 2>&1); rc=$?
assert_errno "a 512-byte O_DIRECT write is refused (4 KiB logical blocks)" "$EINVAL" "$out" $rc
out=$(dd if="$M" of=/dev/null bs=512 count=1 iflag=direct status=none 2>&1); rc=$?
assert_errno "a 512-byte O_DIRECT read is refused" "$EINVAL" "$out" $rc
out=$(dd if=/dev/zero of="$M" bs=4096 count=1 oflag=direct,seek_bytes seek=512 \
	conv=notrunc status=none 2>&1); rc=$?
assert_errno "a 4 KiB O_DIRECT write at a 512-byte offset is refused" "$EINVAL" "$out" $rc
hm_assert_zero "nothing was written by them" "$M" 0 16

Z=$((LEN - ZS))
hm_put endfill "$M" $Z $((ZS - 8)) "fill the last zone up to its last 4 KiB"
hm_put endlast "$M" $((LEN - 8)) 8 "write the last 4 KiB of the device"
assert_cw "the last zone is full" "$M" $Z "fu $ZS"
hm_assert_read "the last 4 KiB read back" "$M" $((LEN - 8)) "$endlast"
out=$(dd if=/dev/zero of="$M" bs=4096 count=1 oflag=direct,seek_bytes seek=$((LEN * 512)) \
	conv=notrunc status=none 2>&1); rc=$?
assert_errno "a write at the device end fails with ENOSPC" "No space left on device" "$out" $rc
n=$(dd if="$M" bs=4096 count=1 iflag=direct,skip_bytes skip=$((LEN * 512)) status=none | wc -c)
assert_eq "a read at the device end returns nothing" 0 "$n"

# ---- the backing device fails ---------------------------------------------
# Remap parts of M's backing dm-linear to the error target: the data of
# zone 3, then the zone table. A failed data write leaves the wp where the
# write started; a failed commit fails the flush, and a later flush makes
# everything durable.
bname=${back#/dev/mapper/}
read -r _ blen _ bdisk bstart <<< "$(dmsetup table "$bname")"
D3=$((2048 + 3 * ZS))		# zone 3 data: 1 MiB of metadata, 3 zones before it
orig_table="0 $blen linear $bdisk $bstart"
err_data="0 $D3 linear $bdisk $bstart
$D3 $ZS error
$((D3 + ZS)) $((blen - D3 - ZS)) linear $bdisk $((bstart + D3 + ZS))"
err_md="0 8 linear $bdisk $bstart
8 2040 error
2048 $((blen - 2048)) linear $bdisk $((bstart + 2048))"

hm_put e1 "$M" $((3 * ZS)) 8 "write 4 KiB to zone 3"
err=$(hm_stat "$M" errors)
check "the backing device fails zone 3's data" backing_reload "$back" "$err_data"
assert_write_fails "a write the backing device fails fails with EIO" "$M" $((3 * ZS + 8)) 8 \
	"$HM_EIO" "oi 8"
err2=$(hm_stat "$M" errors)
if [ "$err2" -gt "$err" ]; then ok "errors counts the failed write ($err -> $err2)"
else not_ok "errors counts the failed write" "$(hm_stats "$M")"; fi
check "the backing device works again" backing_reload "$back" "$orig_table"
hm_put e2 "$M" $((3 * ZS + 8)) 8 "a write at the unchanged wp succeeds"
assert_cw "zone 3 wp" "$M" $((3 * ZS)) "oi 16"
cat "$e1" "$e2" > "$T_WORK/e12"
hm_assert_read "zone 3 holds both good writes" "$M" $((3 * ZS)) "$T_WORK/e12" 16

hm_put e3 "$M" $((4 * ZS)) 8 "write 4 KiB to zone 4"
check "the backing device fails the zone table" backing_reload "$back" "$err_md"
out=$(hm_flush "$M" 2>&1); rc=$?
assert_errno "a flush whose commit fails fails with EIO" "$HM_EIO" "$out" $rc
check "the backing device works again" backing_reload "$back" "$orig_table"
check "the next flush succeeds" hm_flush "$M"
check "remove" dm_remove "$nm"
check "create again" hm_create "$nm" $LEN "$back" $ZS conv_zones 2
assert_cw "zones 3 and 4 kept their wps" "$M" "$((3 * ZS)) $((4 * ZS))" "cl 16 cl 8"
hm_assert_read "zone 4 data" "$M" $((4 * ZS)) "$e3"

# ---- a table mixing host-managed and drive-managed targets ------------------
# dm makes a table zoned if one target is, and a drive-managed target has
# no zones: refused at construction, naming the cause, leaving neither a
# device nor a zoned engine behind.
mix_a=$(new_backing 160) || bail "no backing device"
mix_b=$(new_backing 160) || bail "no backing device"
HMLINE="0 $LEN smr $mix_a host-managed $ZS 1 format"
MIXMSG="cannot mix host-managed and drive-managed smr targets"
mixed() {
	local desc=$1 lines=$2 mark out rc log engines
	engines=$(ls -d /sys/block/smrhm* 2>/dev/null | wc -l)
	mark=$(kmsg_mark hm-mark)
	out=$(printf '%s\n' "$lines" | dmsetup create "$BAD" 2>&1); rc=$?
	log=$(dmesg_since "$mark")
	if [ $rc != 0 ] && [[ $log == *"$MIXMSG"* ]]; then
		ok "$desc: refused ($MIXMSG)"
	else
		not_ok "$desc: refused with '$MIXMSG' in the kernel log" \
			"dmsetup ($rc): $out" "kernel log: $log"
	fi
	hm_dm_exists "$BAD" && { not_ok "$desc: no device left behind"; dmsetup remove --retry "$BAD" > /dev/null 2>&1; }
	udevadm settle 2>/dev/null
	assert_eq "$desc: no zoned engine left behind" "$engines" \
		"$(ls -d /sys/block/smrhm* 2>/dev/null | wc -l)"
}
mixed "host-managed, then drive-managed" "$HMLINE
$LEN 65536 smr $mix_b drive-managed 8192 1 format"
mixed "drive-managed, then host-managed" "0 65536 smr $mix_b drive-managed 8192 1 format
65536 $LEN smr $mix_a host-managed $ZS 1 format"
# Two targets of one mode in a table are fine.
if out=$(printf '%s\n' "$HMLINE" "$LEN $LEN smr $mix_b host-managed $ZS 1 format" |
	dmsetup create "$BAD" 2>&1); then
	ok "two host-managed targets in one table: accepted"
	assert_eq "the two-target device is zoned" host-managed \
		"$(cat "/sys/block/$(basename "$(readlink -f "/dev/mapper/$BAD")")/queue/zoned")"
	dmsetup remove --retry "$BAD" > /dev/null 2>&1
else
	not_ok "two host-managed targets in one table: accepted" "$out"
fi

dmesg_check "no kernel warnings"
_show_result
