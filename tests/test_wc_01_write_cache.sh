#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
#
# dm-smr's volatile write cache (table option write_cache_kib <KiB>,
# write_cache <MiB> before,
# dm-smr/dm-smr-wcache.h, docs/crash-testing.md), in both modes, one boot.
# The module parameter write_cache_age_ms is set to ten minutes, so what
# the cache holds stays there until something sends it home.
#
# Host-managed, 8 MiB zones, three conventional:
#  1. refusals, each with its reason in the log; the table line prints
#     write_cache_kib back, also for the old spelling write_cache <MiB>;
#     queue/write_cache says "write back".
#  2. acknowledged before durable: after writes to a conventional and a
#     sequential zone the backing device has not changed and the cache
#     holds them; a read returns the new data (it waits for the cache to
#     go home: "held").
#  3. a power cut loses what is cached: an overwrite of the conventional
#     zone and an append since the last commit; the backing device does
#     not change after the cut. After a reload: the flushed data, the
#     write pointer of the flush, and an O_DSYNC write before the cut.
#  4. fio with the cache on: random overwrites of a conventional zone
#     (overlapping writes in flight, serialised by fio) and sequential
#     zones, verified.
#  5. a destage that fails (the backing device turned to dm-error under
#     the cache): the flush fails, and so does all I/O after it, until
#     a reload brings up a new zoned device; the lost write's sectors
#     hold their old data.
# Drive-managed, 2 MiB bands, 4 MiB persistent cache, no idle cleaning:
#  6. random blocks and a sequential band: the backing device has not
#     changed; a clean sends the write cache home first and keeps them.
#  7. a power cut loses the overwrites since the flush: after a reload
#     every block holds what it held at the flush.
#  8. fio random overwrites, verified (reads of cached writes), then
#     again after remove/create.
#  9. power back (a reload) waits for the destages the old table had in
#     flight when its power was cut (a delayed backing device).

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"
. "$(dirname "$0")/lib/dm.sh"

_prep_test "write cache: acknowledged before durable, flushed when asked, lost on a cut"
hm_prep
require_cmd fio sync

AGE=/sys/module/dm_smr/parameters/write_cache_age_ms
[ -w $AGE ] || bail "no module parameter write_cache_age_ms"
age0=$(cat $AGE)
echo 600000 > $AGE
# shellcheck disable=SC2154 # wc_rc is set inside the trap itself
trap 'wc_rc=$?; echo "$age0" > $AGE; (exit $wc_rc); _cleanup_test' EXIT
# udev probes a device a writer closes (blkid, the partition table): a
# read of a cached write sends the cache home. The writes whose caching
# is checked stay clear of what it reads: the first and last few MiB,
# and on a zoned device its first two zones (where btrfs keeps its
# superblock log).

# wc_expect DESC DEV EXPR...: "FIELD OP VALUE" of one write_cache line.
wc_expect() {
	local desc=$1 dev=$2 line e f op v a bad=()
	shift 2
	line=$(dmsetup message "${dev#/dev/mapper/}" 0 write_cache 2>&1) ||
		{ not_ok "$desc" "write_cache message failed: $line"; return 1; }
	for e in "$@"; do
		read -r f op v <<< "$e"
		a=$(tr ' ' '\n' <<< "$line" | sed -n "s/^$f=//p")
		[ -n "$a" ] || { bad+=("no field $f"); continue; }
		if [[ $v =~ ^[0-9]+$ ]]; then
			(( a $op v )) || bad+=("$f is $a, expected $op $v")
		else
			[ "$a" $op "$v" ] || bad+=("$f is $a, expected $op $v")
		fi
	done
	if [ ${#bad[@]} = 0 ]; then ok "$desc"; else not_ok "$desc" "${bad[@]}" "$line"; fi
}
# bsum BACKING: md5 of the backing device as it is on disk.
bsum() { dd if="$1" bs=1M iflag=direct status=none | md5sum; }
power() { dmsetup status "$1" | awk '{ print $(NF - 1), $NF }'; }

# ---- 1. host-managed: refusals and what the device says ------------------
ZS=$HM_ZS
NZ=8
LEN=$((NZ * ZS))
zs() { echo $(( $1 * ZS )); }
back=$(new_backing 80) || bail "no backing device"
name=t_${TID}_hm
dev=/dev/mapper/$name
HMT="0 $LEN smr $back host-managed $ZS"
KIBERR="write_cache_kib must be a size in KiB from 1024 to 1048576"
dm_refuse "${name}x" "write_cache_kib 0" "$HMT 2 write_cache_kib 0" "$KIBERR"
dm_refuse "${name}x" "write_cache_kib 1023" "$HMT 2 write_cache_kib 1023" "$KIBERR"
dm_refuse "${name}x" "write_cache_kib 2 GiB" "$HMT 2 write_cache_kib 2097152" "$KIBERR"
dm_refuse "${name}x" "write_cache_kib x" "$HMT 2 write_cache_kib x" "$KIBERR"
dm_refuse "${name}x" "write_cache_kib not whole pages" "$HMT 2 write_cache_kib 1025" \
	"write_cache_kib must be a whole number of pages"
dm_refuse "${name}x" "write_cache 0 (the old spelling, MiB)" "$HMT 2 write_cache 0" \
	"write_cache (write_cache_kib's old spelling) must be a size in MiB from 1 to 1024"
dm_refuse "${name}x" "write_cache 2000" "$HMT 2 write_cache 2000" "must be a size in MiB from 1 to 1024"
dm_refuse "${name}x" "write_cache_kib and write_cache both" \
	"$HMT 4 write_cache_kib 8192 write_cache 8" "are one option: give one"
dm_refuse "${name}x" "write_cache_kib with the timing model" \
	"$HMT 3 format write_cache_kib 8192 timing 12 rpm 7200 seek_t2t_us 1000 seek_avg_us 8500 seek_full_us 17000 od_mbps 65 id_mbps 30" \
	"write_cache_kib cannot be combined with the timing model"

# The old spelling, write_cache <MiB>, is accepted and printed back as
# write_cache_kib, so a reload of the printed line is the same device.
hm_create "$name" $LEN "$back" $ZS conv_zones 3 write_cache 8 format ||
	bail "cannot create the device"
assert_eq "the table line prints write_cache 8 back as write_cache_kib 8192" \
	"host-managed $ZS 4 conv_zones 3 write_cache_kib 8192" \
	"$(dmsetup table "$name" | cut -d' ' -f5-)"
assert_eq "queue/write_cache of the device" "write back" "$(hm_sysfs "$dev" write_cache)"
wc_expect "the write_cache message: 8 MiB, empty" "$dev" "kib == 8192" "held_kib == 0"
out=$(hm_msg "$dev" write_cache now)
[ $? != 0 ] && ok "refused: write_cache with a word after it" ||
	not_ok "refused: write_cache with a word after it" "$out"
name0=t_${TID}_nowc
back0=$(new_backing 80) || bail "no backing device"
hm_create "$name0" $LEN "$back0" $ZS format || bail "cannot create $name0"
mark=wc-$RANDOM
echo "$mark" > /dev/kmsg
if hm_msg "$name0" write_cache > /dev/null; then
	not_ok "refused: write_cache on a table without one" "accepted"
elif dmesg_since "$mark" | grep -q "the table has none"; then
	ok "refused: write_cache on a table without one"
else
	not_ok "refused: write_cache on a table without one (the log says why)" "$(dmesg_since "$mark" | tail -2)"
fi
check "remove the device without a write cache" dm_remove "$name0"

# ---- 2. acknowledged before durable ----------------------------------------
C=$(zs 2)					# conventional zone 2
hm_put D1 "$dev" $C 2048
hm_put A1 "$dev" $(zs 3) 2048
check "flush" hm_flush "$dev"
wc_expect "the flush left the cache empty" "$dev" "held_kib == 0" "drains >= 1" \
	"cached_writes >= 2"
s0=$(bsum "$back")
hm_put D2 "$dev" $C 2048 "overwrite 1 MiB of a conventional zone"
hm_put A2 "$dev" $(( $(zs 3) + 2048 )) 1024 "append 512 KiB to zone 3"
assert_eq "the backing device has not changed" "$s0" "$(bsum "$back")"
wc_expect "the cache holds both writes" "$dev" "held_kib == 1536" "held == 0"
assert_eq "the write pointer moved at once" 3072 "$(hm_wp "$dev" $(zs 3))"
hm_assert_read "read: the conventional zone's new data" "$dev" $C "$D2"
wc_expect "the read waited for the cache to go home" "$dev" "held >= 1" "held_kib == 0"
hm_assert_read "read: zone 3's appended data" "$dev" $(( $(zs 3) + 2048 )) "$A2"
assert_ne "the backing device has them now" "$s0" "$(bsum "$back")"

# ---- 3. power cut -----------------------------------------------------------
hm_put B1 "$dev" $(zs 4) 1024
E1=$(hm_newfile 1024)
hm_data "$E1" 1024
# O_DSYNC: a FUA write (or a flush after it), which commits.
check "an O_DSYNC write to zone 5" dd if="$E1" of="$dev" bs=512K count=1 \
	oflag=direct,dsync,seek_bytes seek=$(( $(zs 5) * 512 )) conv=notrunc status=none
wc_expect "it left the cache empty" "$dev" "held_kib == 0"
hm_put D3 "$dev" $C 2048 "unflushed: overwrite the conventional zone"
hm_put B2 "$dev" $(( $(zs 4) + 1024 )) 1024 "unflushed: append to zone 4"
wc_expect "the cache holds the two unflushed writes" "$dev" "held_kib == 1536"
s1=$(bsum "$back")
check "power_cut" hm_msg "$dev" power_cut
wc_expect "the cut lost them" "$dev" "lost_sectors == 3072" "held_kib == 0"
assert_eq "the backing device did not change" "$s1" "$(bsum "$back")"
check_fail "a read after the cut fails" hm_read "$dev" $C 8
table=$(dmsetup table "$name")
check "power back: reload the printed table" dmsetup reload "$name" --table "$table"
check "resume" dmsetup resume "$name"
hm_assert_read "the conventional zone holds its flushed data" "$dev" $C "$D2"
assert_eq "zone 4's write pointer is the flush's" 1024 "$(hm_wp "$dev" $(zs 4))"
hm_assert_read "zone 4's flushed data" "$dev" $(zs 4) "$B1"
hm_assert_read "zone 5 holds the O_DSYNC write" "$dev" $(zs 5) "$E1"
hm_assert_read "zone 3 holds what was flushed" "$dev" $(zs 3) "$A1"
assert_eq "power on" "on 0" "$(power "$name")"
wc_expect "the new zoned device's cache is on and empty" "$dev" "state == on" \
	"held_kib == 0" "lost_sectors == 0"

# ---- 4. fio, verified, with the cache on ------------------------------------
run_fio "fio: 4 KiB random overwrites of conventional zone 2, 16 in flight, verified" \
	--filename="$dev" --offset=$((C * 512)) --size=4M --io_size=12M --rw=randwrite \
	--bs=4k --iodepth=16 --norandommap --serialize_overlap=1 \
	--verify=crc32c --do_verify=1
run_fio "fio zbd: sequential writes to zones 6-7, verified" \
	--filename="$dev" --zonemode=zbd --offset=$(( $(zs 6) * 512 )) \
	--size=$(( 2 * ZS * 512 )) --rw=write --bs=128k --iodepth=8 \
	--verify=crc32c --do_verify=1
wc_expect "the cache took writes and held reads" "$dev" "cached_writes > 1000" "held > 0" \
	"failed_sectors == 0"

# ---- 5. a destage that fails ------------------------------------------------
P=$(hm_newfile 2048)
hm_read "$dev" $((C + 4096)) 2048 > "$P"
hm_put C1 "$dev" $((C + 4096)) 2048 "a cached write"
wc_expect "the cache holds it" "$dev" "held_kib == 1024"
bsz=$(blockdev --getsz "$back")
btab=$(dmsetup table "${back#/dev/mapper/}")
check "the backing device fails every I/O now" backing_reload "$back" "0 $bsz error"
check_fail "the flush that covers the cached write fails" hm_flush "$dev"
wc_expect "the destage failed, and the cache with it" "$dev" "state == failed" \
	"failed_sectors == 2048"
check "the backing device works again" backing_reload "$back" "$btab"
check_fail "a read fails (the drive lost a write: all I/O fails)" hm_read "$dev" $(zs 3) 8
check_fail "the next flush fails" hm_flush "$dev"
table=$(dmsetup table "$name")
check "reload the printed table" dmsetup reload "$name" --table "$table"
check "resume" dmsetup resume "$name"
check "a flush on the new zoned device" hm_flush "$dev"
hm_assert_read "the lost write's sectors hold what was there before it" "$dev" $((C + 4096)) "$P"
wc_expect "its cache is on" "$dev" "state == on" "failed_sectors == 0"
check "remove" dm_remove "$name"

# ---- 6. drive-managed: acknowledged before durable ---------------------------
BAND=4096
DLEN=$((32 * BAND))
CACHE=8192
dname=t_${TID}_dm
ddev=/dev/mapper/$dname
dback=$(new_backing 80) || bail "no backing device"
DOPTS=(cache_sectors $CACHE idle_ms 0 write_cache_kib 16384)
dm_refuse "${dname}x" "drive-managed write_cache_kib 0" \
	"$(dms_table $DLEN "$dback" $BAND write_cache_kib 0)" "$KIBERR"
dm_refuse "${dname}x" "drive-managed write_cache 0 (the old spelling)" \
	"$(dms_table $DLEN "$dback" $BAND write_cache 0)" "must be a size in MiB from 1 to 1024"
dms_create "$dname" $DLEN "$dback" $BAND "${DOPTS[@]}" format || bail "cannot create $dname"
assert_eq "drive-managed: the table line prints write_cache_kib back" \
	"drive-managed $BAND 6 cache_sectors $CACHE idle_ms 0 write_cache_kib 16384" \
	"$(dmsetup table "$dname" | cut -d' ' -f5-)"
# Five random blocks (to the persistent cache) and band 5 from its start
# (sequential: bypass), clear of the device's first and last MiB.
BLOCKS=(1000 1017 1040 1041 1600)
put_blocks() {
	local tag=$1 b
	for b in "${BLOCKS[@]}"; do
		head -c 4096 /dev/urandom > "$T_WORK/dm-$tag-$b"
		dd if="$T_WORK/dm-$tag-$b" of="$ddev" bs=4k seek=$b oflag=direct \
			conv=notrunc status=none || return 1
	done
	head -c $((BAND * 512)) /dev/urandom > "$T_WORK/dm-$tag-band"
	dd if="$T_WORK/dm-$tag-band" of="$ddev" bs=1M seek=$((5 * BAND * 512)) \
		oflag=direct,seek_bytes conv=notrunc status=none
}
same_blocks() {
	local tag=$1 b
	for b in "${BLOCKS[@]}"; do
		read_data "$ddev" $((b * 4096)) 4096 | cmp -s - "$T_WORK/dm-$tag-$b" || return 1
	done
	read_data "$ddev" $((5 * BAND * 512)) $((BAND * 512)) | cmp -s - "$T_WORK/dm-$tag-band"
}
check "flush the fresh device" hm_flush "$ddev"
s0=$(bsum "$dback")
check "write five random blocks and a sequential band" put_blocks X
assert_eq "drive-managed: the backing device has not changed" "$s0" "$(bsum "$dback")"
wc_expect "drive-managed: the cache holds them" "$ddev" "held_kib == $((5 * 4 + BAND / 2))"
check "drive-managed: clean (it sends the write cache home first)" dms_msg "$ddev" clean
dms_wait_clean "$ddev" 120 > /dev/null || not_ok "drive-managed: the clean ended"
wc_expect "drive-managed: the clean emptied the write cache" "$ddev" "held_kib == 0" "held == 0"
check "drive-managed: the blocks after the clean" same_blocks X
check "drive-managed: flush" hm_flush "$ddev"
assert_ne "drive-managed: the backing device has them" "$s0" "$(bsum "$dback")"

# ---- 7. drive-managed: power cut ---------------------------------------------
check "overwrite them, unflushed" put_blocks Y
wc_expect "drive-managed: the cache holds the overwrites" "$ddev" \
	"held_kib == $((5 * 4 + BAND / 2))"
s1=$(bsum "$dback")
check "drive-managed: power_cut" dms_msg "$ddev" power_cut
wc_expect "drive-managed: the cut lost the overwrites" "$ddev" \
	"lost_sectors == $((5 * 8 + BAND))"
assert_eq "drive-managed: the backing device did not change" "$s1" "$(bsum "$dback")"
table=$(dmsetup table "$dname")
check "drive-managed: reload the printed table" dmsetup reload "$dname" --table "$table"
check "drive-managed: resume" dmsetup resume "$dname"
check "drive-managed: every block holds what it held at the flush" same_blocks X

# ---- 8. drive-managed: fio ----------------------------------------------------
DJ=(--filename="$ddev" --offset=4M --size=8M --io_size=12M --rw=randwrite --bs=4k
	--iodepth=16 --norandommap --serialize_overlap=1 --verify=crc32c)
run_fio "drive-managed fio: random overwrites, 16 in flight, verified" "${DJ[@]}" --do_verify=1
check "drive-managed: remove" dm_remove "$dname"
check "drive-managed: create again" dms_create "$dname" $DLEN "$dback" $BAND "${DOPTS[@]}"
run_fio "drive-managed fio: the data again after remove/create" "${DJ[@]}" --verify_only
check "drive-managed: remove" dm_remove "$dname"

# ---- 9. drive-managed: power back waits for the old table's destages ---------
# The second half of each band holds writes 15 s (dms_slow_bands:
# dm-delay; the metadata and the cache take them at once): longer than
# the steps below take, shorter than a settle waits (30 s). 3 MiB written at 8 MiB,
# band 4 and half of band 5, fill the 4 MiB write cache past half: it
# sends them home, and the one to band 4's second half waits there. The
# next write cuts the power. The table reloaded at once is the power
# coming back: its resume must wait until the old table has nothing in
# flight, or the old destages land after it, over data it acknowledged.
ename=t_${TID}_dmc
edev=/dev/mapper/$ename
eback=$(new_backing 80) || bail "no backing device"
dms_create "$ename" $DLEN "$eback" $BAND cache_sectors $CACHE idle_ms 0 write_cache_kib 4096 format ||
	bail "cannot create $ename"
etab0=$(dmsetup table "${eback#/dev/mapper/}")
check "each band's second half holds writes 15 s" dms_slow_bands "$eback" $DLEN $BAND $CACHE 15000
check "write 3 MiB (into the write cache)" \
	dd if=/dev/urandom of="$edev" bs=1M seek=8 count=3 oflag=direct conv=notrunc status=none
# dm-delay's status: "<start> <len> delay <reads> <writes> [<flushes>]" held.
bwrites() {
	dmsetup status "${eback#/dev/mapper/}" | awk '$3 == "delay" { n += $5 } END { print n + 0 }'
}
for _ in $(seq 20); do [ "$(bwrites)" != 0 ] && break; sleep 0.1; done
assert_ne "the write cache sends them home: dm-delay holds one" "0" "$(bwrites)"
check "arm: the next write cuts the power" dms_msg "$edev" power_cut after 0 writes
check_fail "  the write that cuts it fails" \
	dd if=/dev/zero of="$edev" bs=4k seek=100 count=1 oflag=direct conv=notrunc status=none
etab=$(dmsetup table "$ename")
check "reload the printed table at once" dmsetup reload "$ename" --table "$etab"
# dmsetup resume returns only once the old table is destroyed, which
# waits for its write cache: look when the new table goes live instead.
dmsetup resume "$ename" > "$T_WORK/resume.out" 2>&1 &
rp=$!
live=
for _ in $(seq 600); do
	if dmsetup info "$ename" 2> /dev/null | grep -q '^State: *ACTIVE'; then
		live=$(bwrites)
		break
	fi
	sleep 0.05
done
wait $rp && ok "resume (the power is back)" || not_ok "resume (the power is back)" "$(cat "$T_WORK/resume.out")"
assert_eq "  when the new table went live, nothing the old one sent was in flight" "0" "$live"
check "the backing device takes writes at once again" backing_reload "$eback" "$etab0"
check "write after the power came back" \
	dd if=/dev/urandom of="$edev" bs=4k seek=100 count=1 oflag=direct,sync conv=notrunc status=none
check "remove" dm_remove "$ename"

dmesg_check
_show_result
