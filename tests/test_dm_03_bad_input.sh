#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 360
# SLOW: 1
# (The checks are the target's own, the same on every kernel: make check
# runs this on the first kernel only; hm_03 and cv_02 run everywhere.)
#
# Drive-managed dm-smr: bad input is refused cleanly. Every malformed
# table line fails with its own error in the kernel log (and no kernel
# warning); a backing device too small is refused with the sizes in the
# log; a formatted backing device reopened with another geometry is
# refused unless "format"; bad messages fail with EINVAL and a log line;
# unaligned I/O and I/O beyond the end fail; a backing device that fails
# during a cleaning (before or after its durable intent) fails writes,
# not reads, until the device is activated again, which finishes an
# interrupted band rewrite; nothing cached is lost.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"

_prep_test "dm: malformed tables, small/foreign backing devices, geometry, messages, bad I/O"
dms_prep

BAND=8192		# 4 MiB
NB=16
LEN=$((NB * BAND))	# 64 MiB
CACHE=8192
read -r MD NEED <<< "$(dms_need $LEN $BAND $CACHE)"
BAD=t_${TID}_bad
echo "$BAD" >> "$T_WORK/.dm-devices"

back=$(new_backing $(( (NEED + 2047) / 2048 + 8 ))) || bail "no backing device"

# refused DESC TABLE KERNEL_MSG [DMSETUP_ARGS...]: "dmsetup create" of
# TABLE fails and no device is left; the kernel log must say KERNEL_MSG
# (checked in a batch by dms_kq_check).
refused() {
	local desc=$1 table=$2 msg=$3 mark out rc
	shift 3
	mark=$(dms_kq_mark)
	out=$(dmsetup create "$BAD" "$@" --table "$table" 2>&1); rc=$?
	if [ $rc = 0 ]; then
		not_ok "$desc: refused" "table accepted: $table" \
			"loaded as: $(dmsetup table "$BAD" 2>&1)"
		dmsetup remove --retry "$BAD" > /dev/null 2>&1
		return 1
	fi
	dms_kq_expect "$desc: refused ($msg)" "$mark" "$msg"
	if dms_exists "$BAD"; then
		not_ok "$desc: no device left behind"
		dmsetup remove --retry "$BAD" > /dev/null 2>&1
	fi
	return 0
}

# accepted DESC TABLE: the table loads (device removed again).
accepted() {
	local desc=$1 table=$2 out
	if out=$(dmsetup create "$BAD" --table "$table" 2>&1); then
		ok "$desc: accepted"
		udevadm settle 2>/dev/null
		dmsetup remove --retry "$BAD" > /dev/null 2>&1
	else
		not_ok "$desc: accepted" "table: $table" "$out" "$(dmesg | tail -n 5)"
	fi
}

T() { dms_table "$@"; }
BANDMSG="band_sectors must be a multiple of 2048 (1 MiB) from 2048 to 524288 (256 MiB)"
LENMSG="Target length must be a non-zero multiple of band_sectors"
CMSG="cache_sectors must be a multiple of 8, at least 2048 (1 MiB)"
C1TMSG="cache_sectors must be under 2147483648 (1 TiB)"
IMSG="idle_ms must be a number from 0 to 3600000"
PMSG="policy must be fifo, greedy or cost-benefit"
NOPT="Invalid number of optional arguments"

# ---- table lines --------------------------------------------------------
refused "band not a multiple of 2048" "$(T $LEN "$back" 4104)" "$BANDMSG"
refused "band 3000" "$(T 3000 "$back" 3000)" "$BANDMSG"
refused "band 1024 (too small)" "$(T $((64 * 1024)) "$back" 1024)" "$BANDMSG"
refused "band 0" "$(T $LEN "$back" 0)" "$BANDMSG"
refused "band 1048576 (above 256 MiB)" "$(T 1048576 "$back" 1048576)" "$BANDMSG"
refused "band 2^32" "$(T $LEN "$back" 4294967296)" "$BANDMSG"
refused "band 2^64 + 8192 (must not wrap to 8192)" "$(T $LEN "$back" 18446744073709559808)" "band_sectors"
refused "junk after the band size" "$(T $LEN "$back" 8192x)" "Invalid band_sectors"
refused "band not a number" "$(T $LEN "$back" big)" "Invalid band_sectors"
refused "negative band size" "$(T $LEN "$back" -8192)" "band_sectors"
refused "zero length" "0 0 smr $back drive-managed $BAND" "zero-length target"
refused "length not a multiple of the band" "$(T $((LEN + 2048)) "$back" $BAND)" "$LENMSG"
refused "length of half a band" "$(T $((BAND / 2)) "$back" $BAND)" "$LENMSG"
refused "cache_sectors not a multiple of 8" "$(T $LEN "$back" $BAND cache_sectors 8196)" "$CMSG"
refused "cache_sectors 1024 (below 1 MiB)" "$(T $LEN "$back" $BAND cache_sectors 1024)" "$CMSG"
refused "cache_sectors 0" "$(T $LEN "$back" $BAND cache_sectors 0)" "$CMSG"
refused "cache_sectors of 2^32 slots" "$(T $LEN "$back" $BAND cache_sectors 34359738368)" "$C1TMSG"
refused "cache_sectors of 2^28 slots (1 TiB)" "$(T $LEN "$back" $BAND cache_sectors 2147483648)" "$C1TMSG"
refused "cache_sectors 1 TiB less 4 KiB passes the limit (and not the size)" \
	"$(T $LEN "$back" $BAND cache_sectors 2147483640)" "Backing device too small for this geometry"
refused "length of 256 TiB" "$(T 549755813888 "$back" 524288 cache_sectors $CACHE)" \
	"Target length must be under 256 TiB"
refused "2^24 + 1 bands" "$(T $(( ((1 << 24) + 1) * 2048 )) "$back" 2048 cache_sectors $CACHE)" \
	"Too many bands: at most 16777216 (use larger bands)"
refused "100 TiB with the default cache (1 TiB)" "$(T 214748364800 "$back" 524288)" \
	"The default cache (1% of the length) is 1 TiB or more: give a smaller cache_sectors"
refused "just under 256 TiB passes the limits (and not the size)" \
	"$(T 549755289600 "$back" 524288 cache_sectors $CACHE)" "Backing device too small for this geometry"
refused "junk after cache_sectors" "$(T $LEN "$back" $BAND cache_sectors 8192k)" "Invalid cache_sectors"
refused "cache_sectors not a number" "$(T $LEN "$back" $BAND cache_sectors lots)" "Invalid cache_sectors"
refused "idle_ms 3600001" "$(T $LEN "$back" $BAND idle_ms 3600001)" "$IMSG"
refused "idle_ms 2^64 (must not wrap to 0)" "$(T $LEN "$back" $BAND idle_ms 18446744073709551616)" "$IMSG"
refused "idle_ms with a unit" "$(T $LEN "$back" $BAND idle_ms 300ms)" "$IMSG"
refused "idle_ms junk" "$(T $LEN "$back" $BAND idle_ms soon)" "$IMSG"
refused "unknown policy" "$(T $LEN "$back" $BAND policy lru)" "$PMSG"
refused "policy with junk" "$(T $LEN "$back" $BAND policy fifo2)" "$PMSG"
refused "seq_bypass yes" "$(T $LEN "$back" $BAND seq_bypass yes)" "seq_bypass must be on or off"
refused "seq_bypass 1" "$(T $LEN "$back" $BAND seq_bypass 1)" "seq_bypass must be on or off"
refused "unknown option" "$(T $LEN "$back" $BAND foo 1)" "Unknown optional argument"
refused "policy given twice" "$(T $LEN "$back" $BAND policy fifo policy greedy)" "given twice"
refused "host-managed option in drive-managed mode" "$(T $LEN "$back" $BAND conv_zones 1)" \
	"Unknown optional argument"
refused "option without its value" "$(T $LEN "$back" $BAND cache_sectors)" \
	"Optional argument is missing its value"
refused "idle_ms without its value, before format" \
	"0 $LEN smr $back drive-managed $BAND 2 format idle_ms" "Optional argument is missing its value"
refused "optional count larger than the arguments" \
	"0 $LEN smr $back drive-managed $BAND 3 idle_ms 5" "$NOPT"
refused "optional count smaller than the arguments" \
	"0 $LEN smr $back drive-managed $BAND 2 idle_ms 5 policy fifo" "Too many arguments"
refused "optional count cutting a name from its value" \
	"0 $LEN smr $back drive-managed $BAND 1 idle_ms 5" "Optional argument is missing its value"
refused "optional count above 13" \
	"0 $LEN smr $back drive-managed $BAND 14 idle_ms 5 policy fifo seq_bypass on cache_sectors $CACHE format format clean_timeout_ms 5 write_cache 8" \
	"$NOPT"
refused "optional count not a number" "0 $LEN smr $back drive-managed $BAND x idle_ms 5" "$NOPT"
refused "argument after the band without a count" "0 $LEN smr $back drive-managed $BAND idle_ms" "$NOPT"
refused "no band size" "0 $LEN smr $back drive-managed" "Usage:"
refused "missing backing device" "$(T $LEN /dev/nonexistent $BAND)" "Cannot open the backing device"
accepted "idle_ms 3600000, policy and seq_bypass in upper case" \
	"$(T $LEN "$back" $BAND cache_sectors $CACHE idle_ms 3600000 policy COST-BENEFIT seq_bypass OFF)"
accepted "the same geometry again, idle_ms 0" "$(T $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0)"

dms_kq_check

# ---- backing device size --------------------------------------------------
small=$(new_backing 64) || bail "no small backing device"
refused "backing device too small" "$(T $LEN "$small" $BAND cache_sectors $CACHE)" \
	"Backing device too small for this geometry"
want="has 131072 sectors; $NEED are needed (metadata $MD + cache $CACHE + spare band $BAND + data $LEN)"
dms_kq_expect "kernel log gives the sizes: $want" "${DMS_KQ_MARK[-1]}" "$want"
# Exactly big enough, and 4 KiB short.
sized=$(new_backing $(( (NEED + 2047) / 2048 ))) || bail "no backing device"
dm_create "t_${TID}_exact" "0 $NEED linear $sized 0"
dm_create "t_${TID}_short" "0 $((NEED - 8)) linear $sized 0"
accepted "backing device of exactly the size needed" \
	"$(T $LEN /dev/mapper/t_${TID}_exact $BAND cache_sectors $CACHE format)"
refused "backing device 4 KiB short" \
	"$(T $LEN /dev/mapper/t_${TID}_short $BAND cache_sectors $CACHE format)" \
	"Backing device too small"
dm_remove "t_${TID}_exact"
dm_remove "t_${TID}_short"

dms_kq_check

# ---- foreign data and geometry mismatch ----------------------------------
geo=$(new_backing $(( (NEED + 2047) / 2048 + 8 ))) || bail "no backing device"
junk=$T_WORK/junk.dat
head -c 4096 /dev/urandom > "$junk"
dd if="$junk" of="$geo" bs=4096 oflag=direct conv=fsync,notrunc status=none
refused "backing device holding other data, without format" \
	"$(T $LEN "$geo" $BAND cache_sectors $CACHE)" "holds no valid dm-smr superblock"
assert_data "the refused table wrote nothing" "$geo" "$junk" 0
G=t_${TID}_g
DG=/dev/mapper/$G
check "with format it is accepted" dms_create "$G" $LEN "$geo" $BAND cache_sectors $CACHE idle_ms 0 format
D1=$((4 * 1048576 + 65536))	# not at a band start: into the cache
d1=$(write_data "$DG" $D1 65536)
d2=$(write_data "$DG" $((8 * 1048576)) $((4 * 1048576)))	# band 2, sequential
dms_expect "data in the cache and in a band" "$DG" "cache_live == 16" "bypass_write_sectors == 8192"
check "remove" dm_remove "$G"
GEO="Table geometry differs from the on-disk superblock"
refused "another band size" "$(T $LEN "$geo" $((BAND / 2)) cache_sectors $CACHE)" "$GEO"
want="on-disk geometry: mode 2, $LEN sectors, zone/band sectors $BAND, zone_capacity $BAND, conv_zones 0, cache_sectors $CACHE"
dms_kq_expect "kernel log gives the on-disk geometry" "${DMS_KQ_MARK[-1]}" "$want"
refused "another cache size" "$(T $LEN "$geo" $BAND cache_sectors $((CACHE * 2)))" "$GEO"
refused "another length" "$(T $((LEN - BAND)) "$geo" $BAND cache_sectors $CACHE)" "$GEO"
refused "host-managed over a drive-managed format" \
	"0 $LEN smr $geo host-managed 16384" "$GEO"
dms_kq_check
check "other idle_ms/policy/seq_bypass are not geometry: accepted" \
	dms_create "$G" $LEN "$geo" $BAND cache_sectors $CACHE idle_ms 0 policy greedy seq_bypass off
dms_expect "the cache survived the refused tables" "$DG" "cache_live == 16" "cache_used == 16"
assert_data "the cached data is still there" "$DG" "$d1" $D1
assert_data "the band data is still there" "$DG" "$d2" $((8 * 1048576))

# ---- messages ---------------------------------------------------------------
# bad_msg DESC KERNEL_MSG WORDS...: the message fails with EINVAL and logs
# KERNEL_MSG (checked by dms_kq_check).
bad_msg() {
	local desc=$1 kmsg=$2 mark out rc
	shift 2
	mark=$(dms_kq_mark)
	out=$(dmsetup message "$G" 0 "$@" 2>&1); rc=$?
	assert_errno "message '$*' fails with EINVAL ($desc)" "$EINVAL" "$out" $rc
	dms_kq_expect "message '$*' logs '$kmsg'" "$mark" "$kmsg"
}
UNK="unknown message or wrong arguments"
bad_msg "unknown" "$UNK: foo (argc 1)" foo
bad_msg "unknown, with arguments" "$UNK: foo (argc 3)" foo 1 2
bad_msg "clean with an argument" "$UNK: clean (argc 2)" clean now
bad_msg "clean_stop with an argument" "$UNK: clean_stop (argc 2)" clean_stop 1
bad_msg "clear_stats with an argument" "$UNK: clear_stats (argc 2)" clear_stats now
bad_msg "policy without a name" "$UNK: policy (argc 1)" policy
bad_msg "policy with two names" "$UNK: policy (argc 3)" policy fifo greedy
bad_msg "unknown policy" "$PMSG, not 'lru'" policy lru
bad_msg "host-managed message" "$UNK: zone_info (argc 2)" zone_info 0
dms_expect "bad messages changed nothing" "$DG" "policy == greedy" "cache_live == 16" \
	"rmw_manual == 0" "state == idle"
check "clean_stop with nothing to stop" dms_msg "$DG" clean_stop
check "suspend" dmsetup suspend "$G"
mark=$(dms_kq_mark)
out=$(dms_msg "$DG" clean); rc=$?
assert_errno "clean on a suspended device fails with EBUSY" "Device or resource busy" "$out" $rc
dms_kq_expect "clean on a suspended device logs why" "$mark" "clean: the device is suspended"
check "resume" dmsetup resume "$G"
dms_kq_check
check "clean after resume" dms_msg "$DG" clean
if w=$(dms_wait_clean "$DG" 30); then ok "clean emptied the cache in $w s"
else not_ok "clean empties the cache within 30 s" "$(dms_stats "$DG")"; fi
assert_data "cached data intact after cleaning" "$DG" "$d1" $D1

# ---- unaligned I/O and the device end ---------------------------------------
bs=$(blockdev --getss "$DG") pbs=$(blockdev --getpbsz "$DG")
assert_eq "4 KiB logical and physical blocks" "4096 4096" "$bs $pbs"
assert_eq "not zoned" "none" "$(cat /sys/block/$(basename "$(readlink -f "$DG")")/queue/zoned)"
out=$(dd if=/dev/zero of="$DG" bs=512 count=1 oflag=direct conv=notrunc status=none 2>&1); rc=$?
assert_errno "a 512-byte O_DIRECT write is refused" "$EINVAL" "$out" $rc
out=$(dd if=/dev/zero of="$DG" bs=4096 count=1 oflag=direct,seek_bytes seek=512 \
	conv=notrunc status=none 2>&1); rc=$?
assert_errno "a 4 KiB O_DIRECT write at a 512-byte offset is refused" "$EINVAL" "$out" $rc
last=$(write_data "$DG" $(( (LEN - 8) * 512 )) 4096)
assert_data "the last 4 KiB block takes a write and reads back" "$DG" "$last" $(( (LEN - 8) * 512 ))
out=$(dd if=/dev/zero of="$DG" bs=4096 count=1 oflag=direct,seek_bytes seek=$((LEN * 512)) \
	conv=notrunc status=none 2>&1); rc=$?
assert_errno "a write at the device end fails with ENOSPC" "No space left on device" "$out" $rc
out=$(dd if=/dev/zero of="$DG" bs=8192 count=1 oflag=direct,seek_bytes seek=$(( (LEN - 8) * 512 )) \
	conv=notrunc status=none 2>&1); rc=$?
assert_errno "a write crossing the device end fails" "No space left on device" "$out" $rc
n=$(dd if="$DG" bs=4096 count=1 iflag=direct,skip_bytes skip=$((LEN * 512)) status=none | wc -c)
assert_eq "a read at the device end returns nothing" 0 "$n"
dms_expect "no target errors" "$DG" "errors == 0"
check "remove" dm_remove "$G"

# ---- format over a different geometry --------------------------------------
check "another geometry with format: accepted" \
	dms_create "$G" $((LEN / 2)) "$geo" $((BAND / 2)) cache_sectors 4096 format
dms_expect "and it has the new geometry, an empty cache" "$DG" \
	"nr_bands == 16" "band_sectors == $((BAND / 2))" "cache_total == 512" "cache_used == 0"
check "remove" dm_remove "$G"
check "the new geometry reopens without format" \
	dms_create "$G" $((LEN / 2)) "$geo" $((BAND / 2)) cache_sectors 4096
check "remove" dm_remove "$G"
refused "and the old one is refused" "$(T $LEN "$geo" $BAND cache_sectors $CACHE)" "$GEO"
dms_kq_check

# ---- the backing device fails during a cleaning ----------------------------
# Parts of F's backing dm-linear are remapped: band 2's sectors to a
# dm-delay (no delays) that sends their writes to an all-error device and
# their reads and flushes to the disk, so a cleaning fails copying the
# spare band back, after its intent is durable (dm-flakey would fail the
# flush before it); then the spare band to the error target, so a
# cleaning fails before its intent. Either way
# writes fail until the device is activated again, reads go on, nothing
# cached is lost, and the activation finishes an interrupted rewrite.
F=t_${TID}_fail
DF=/dev/mapper/$F
PY="python3 $SMR_ROOT/tests/lib/dm_crash.py"
fb=$(new_backing $(( (NEED + 2047) / 2048 ))) || bail "no backing device"
fbn=${fb#/dev/mapper/}
read -r _ flen _ fdisk fstart <<< "$(dmsetup table "$fbn")"
SPARE=$((MD + CACHE))			# backing sector of the spare band
bandsec() { echo $((SPARE + BAND + $1 * BAND)); }	# ... of band N
fb_linear="0 $flen linear $fdisk $fstart"
# fb_table START LEN TARGET...: the backing table with [START, START+LEN)
# mapped by TARGET instead of linear.
fb_table() {
	local s=$1 l=$2
	shift 2
	printf '0 %s linear %s %s\n%s %s %s\n%s %s linear %s %s\n' "$s" "$fdisk" "$fstart" \
		"$s" "$l" "$*" $((s + l)) $((flen - s - l)) "$fdisk" $((fstart + s + l))
}
# wait_kmsg MARK TEXT: up to 30 s for TEXT in the kernel log after MARK.
wait_kmsg() {
	local i
	for i in $(seq 1 100); do
		dmesg_since "$1" | grep -q "$2" && return 0
		sleep 0.3
	done
	return 1
}
# cache_blocks BAND FILE K...: write 4 KiB blocks K of BAND (not at its
# start: they go to the cache) and patch them into FILE, the band's
# expected contents.
cache_blocks() {
	local band=$1 exp=$2 k f
	shift 2
	for k in "$@"; do
		f=$(write_data "$DF" $(( (band * BAND + k * 8) * 512 )) 4096) || return 1
		dd if="$f" of="$exp" bs=4096 seek="$k" conv=notrunc status=none
	done
}
EIO="Input/output error"
# failed_clean BAND EXP MSG INTENT: with the backing device remapped to
# fail, "clean" fails with MSG in the kernel log and leaves INTENT on disk
# ("state band", or "0"); writes then fail and reads still return EXP,
# the band's contents. Then the backing device is mended and F activated
# again, its kernel log from $mark on.
failed_clean() {
	local band=$1 exp=$2 msg=$3 intent=$4 out rc
	mark=$(kmsg_mark dm-mark)
	check "F: clean" dms_msg "$DF" clean
	if wait_kmsg "$mark" "$msg"; then
		ok "F: band $band's rewrite fails ($msg)"
	else
		not_ok "F: band $band's rewrite fails ($msg)" \
			"$(dmesg_since "$mark" | tail -n 5)" "$(dms_stats "$DF")"
	fi
	assert_eq "F: the intent on disk" "$intent" \
		"$($PY intent --backing "$fb" | cut -d' ' -f1-"$(wc -w <<< "$intent")")"
	out=$(dd if=/dev/zero of="$DF" bs=4096 count=1 seek=100 oflag=direct conv=notrunc \
		status=none 2>&1); rc=$?
	assert_errno "F: writes now fail with EIO" "$EIO" "$out" $rc
	assert_data "F: reads go on: band $band as written" "$DF" "$exp" $((band * BAND * 512))
	check "F: the backing device works again" backing_reload "$fb" "$fb_linear"
	check "F: remove" dm_remove "$F"
	mark=$(kmsg_mark dm-mark)
	check "F: create again (no format)" dms_create "$F" $LEN "$fb" $BAND cache_sectors $CACHE idle_ms 0
}

dms_create "$F" $LEN "$fb" $BAND cache_sectors $CACHE idle_ms 0 || bail "cannot create $F"
exp2=$(write_data "$DF" $((2 * BAND * 512)) $((BAND * 512)))
cache_blocks 2 "$exp2" 1 5 9 200 511 777 1023
dms_expect "F: band 2 written whole, then 7 blocks of it cached" "$DF" \
	"bypass_write_sectors == $BAND" "cache_used == 7" "dirty_bands == 1"

ERR=t_${TID}_err
dm_create "$ERR" "0 $BAND error" || bail "cannot create the error device"
b2=$(bandsec 2)
check "F: writes to band 2's sectors fail in the backing device (dm-delay to an error device)" \
	backing_reload "$fb" "$(fb_table "$b2" $BAND delay "$fdisk" $((fstart + b2)) 0 \
		/dev/mapper/"$ERR" 0 0 "$fdisk" $((fstart + b2)) 0)"
failed_clean 2 "$exp2" "cleaning band 2 failed: -5; writes fail" "1 2"
assert_eq "F: activation finishes the interrupted rewrite" \
	"finishing the interrupted cleaning of band 2" \
	"$(dmesg_since "$mark" | grep -o "finishing the interrupted cleaning of band [0-9]*")"
assert_eq "F: and clears the intent on disk" 0 "$($PY intent --backing "$fb" | cut -d' ' -f1)"
dms_expect "F: band 2 is clean, its cache slots free" "$DF" \
	"cache_used == 0" "dirty_bands == 0" "errors == 0"
assert_data "F: band 2 holds its merged data" "$DF" "$exp2" $((2 * BAND * 512))

exp5=$(write_data "$DF" $((5 * BAND * 512)) $((BAND * 512)))
cache_blocks 5 "$exp5" 3 4 600
check "F: the spare band fails in the backing device (error target)" \
	backing_reload "$fb" "$(fb_table $SPARE $BAND error)"
failed_clean 5 "$exp5" "cleaning band 5 failed before its intent" 0
assert_eq "F: nothing to finish at activation" "" \
	"$(dmesg_since "$mark" | grep -o "finishing the interrupted cleaning.*")"
dms_expect "F: band 5's cached blocks are kept" "$DF" "cache_used == 3" "dirty_bands == 1"
assert_data "F: band 5 as written" "$DF" "$exp5" $((5 * BAND * 512))
check "F: clean" dms_msg "$DF" clean
if w=$(dms_wait_clean "$DF" 30); then ok "F: and now it cleans ($w s)"
else not_ok "F: and now it cleans" "$(dms_stats "$DF")"; fi
assert_data "F: band 5 holds its merged data" "$DF" "$exp5" $((5 * BAND * 512))
assert_data "F: band 2 still holds its data" "$DF" "$exp2" $((2 * BAND * 512))
dms_expect "F: no errors since the activation" "$DF" "errors == 0"

# ---- the commit at suspend fails ---------------------------------------------
# A write acknowledged into the cache, then a suspend whose metadata commit
# fails (an error target over the metadata area, but for the superblock),
# then a resume with the backing device mended: the write is still read
# back, at once and after remove and create (the resume's commit made it
# durable). Before, resume read the stale state from disk and lost it.
S=t_${TID}_susp
DS=/dev/mapper/$S
sb=$(new_backing $(( (NEED + 2047) / 2048 ))) || bail "no backing device"
read -r _ slen _ sdisk sstart <<< "$(dmsetup table "${sb#/dev/mapper/}")"
s_linear="0 $slen linear $sdisk $sstart"
s_err_md="0 8 linear $sdisk $sstart
8 $((MD - 8)) error
$MD $((slen - MD)) linear $sdisk $((sstart + MD))"
dms_create "$S" $LEN "$sb" $BAND cache_sectors $CACHE idle_ms 0 || bail "cannot create $S"
s1=$(write_data "$DS" $((3 * BAND * 512 + 8192)) 8192)
check "S: flush" sync "$DS"
# Acknowledged, not flushed (write_data would fsync).
s2=$T_WORK/s2
head -c 12288 /dev/urandom > "$s2"
check "S: write 12 KiB, no flush" dd if="$s2" of="$DS" bs=12288 oflag=direct,seek_bytes \
	seek=$((5 * BAND * 512 + 40960)) conv=notrunc status=none
dms_expect "S: both writes in the cache" "$DS" "cache_live == 5" "errors == 0"
check "S: the metadata area fails" backing_reload "$sb" "$s_err_md"
SMRCTL=$SMR_ROOT/userspace/smrctl/smrctl
"$SMRCTL" watch --json > "$T_WORK/s-events" 2>&1 &
watch_pid=$!
sleep 1				# subscribed
mark=$(kmsg_mark dm-mark)
check "S: suspend" dmsetup suspend "$S"
if dmesg_since "$mark" | grep -q "metadata commit at suspend failed"; then
	ok "S: the failed commit at suspend is logged"
else
	not_ok "S: the failed commit at suspend is logged" "$(dmesg_since "$mark" | tail -n 5)"
fi
for _ in $(seq 1 25); do
	grep -q '"commit_error"' "$T_WORK/s-events" && break
	sleep 0.2
done
kill $watch_pid 2> /dev/null
wait $watch_pid 2> /dev/null
if grep '"commit_error"' "$T_WORK/s-events" | grep -q '"errno":5'; then
	ok "S: a commit_error event (errno 5) is sent"
else
	not_ok "S: a commit_error event (errno 5) is sent" "$(cat "$T_WORK/s-events")"
fi
check "S: the metadata area works again" backing_reload "$sb" "$s_linear"
check "S: resume" dmsetup resume "$S"
# (errors >= 1: an I/O sent while the metadata area failed, a flush from
# outside say, counts too.)
dms_expect "S: both writes still in the cache; the failure counted" "$DS" \
	"cache_live == 5" "errors >= 1"
assert_data "S: the flushed write reads back" "$DS" "$s1" $((3 * BAND * 512 + 8192))
assert_data "S: the unflushed write reads back" "$DS" "$s2" $((5 * BAND * 512 + 40960))
check "S: remove" dm_remove "$S"
check "S: create again" dms_create "$S" $LEN "$sb" $BAND cache_sectors $CACHE idle_ms 0
assert_data "S: after create, the unflushed write reads back" "$DS" "$s2" \
	$((5 * BAND * 512 + 40960))
# The same, but the suspended table is replaced by a reload: the new table
# must commit the old one's state before reading the disk.
s3=$T_WORK/s3
head -c 12288 /dev/urandom > "$s3"
check "S: write 12 KiB to band 4, no flush" dd if="$s3" of="$DS" bs=12288 \
	oflag=direct,seek_bytes seek=$((4 * BAND * 512 + 40960)) conv=notrunc status=none
stable=$(dmsetup table "$S")
check "S: the metadata area fails" backing_reload "$sb" "$s_err_md"
check "S: suspend (the commit fails)" dmsetup suspend "$S"
check "S: load the same table" dmsetup load "$S" --table "$stable"
check "S: the metadata area works again" backing_reload "$sb" "$s_linear"
check "S: resume the new table" dmsetup resume "$S"
assert_data "S: the new table reads the write the old one held" "$DS" "$s3" \
	$((4 * BAND * 512 + 40960))
check "S: remove" dm_remove "$S"
check "S: create again" dms_create "$S" $LEN "$sb" $BAND cache_sectors $CACHE idle_ms 0
assert_data "S: after create, that write reads back" "$DS" "$s3" \
	$((4 * BAND * 512 + 40960))

# ---- no memory for the cache index -------------------------------------------
# A cache write is indexed at its completion with an extent allocated
# without waiting, or else by the worker, which allocates (GFP_NOIO).
# When both fail, as under memory pressure (the module's test hook
# fail_ext_allocs makes the next N inserts fail), the write waits and is
# retried: its data is in the cache already, so it must not fail.
FAULT=$(test_hook dm-smr fail_ext_allocs) || bail "no test hook fail_ext_allocs"
dms_expect "M: no errors since the create" "$DS" "errors == 0"
echo 4 > "$FAULT"
for band in 6 7 8 9; do
	f=$T_WORK/m$band
	head -c 4096 /dev/urandom > "$f"
	if out=$(dd if="$f" of="$DS" bs=4096 oflag=direct,seek_bytes \
		seek=$((band * BAND * 512 + 4096)) conv=notrunc status=none 2>&1); then
		ok "M: a cache write to band $band while the index cannot grow succeeds"
	else
		not_ok "M: a cache write to band $band while the index cannot grow succeeds" "$out"
	fi
done
assert_eq "M: the four allocations failed (fault injection used up)" 0 "$(cat "$FAULT")"
echo 0 > "$FAULT"
for band in 6 7 8 9; do
	assert_data "M: band $band's write reads back" "$DS" "$T_WORK/m$band" \
		$((band * BAND * 512 + 4096))
done
dms_expect "M: no write failed; all four in the cache" "$DS" "errors == 0" "cache_live == 12"

dmesg_check
_show_result
