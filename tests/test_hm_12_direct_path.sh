#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
#
# Host-managed dm-smr: the smr target hands its bios to the zoned
# device's engine directly, and sends reads of durable data to the
# backing device itself (issue 32: no second trip through the block layer
# per bio, no engine clone per read). What must not change with it:
#
# 1. The path: reads and writes of the dm device no longer pass through
#    /dev/smrhmN's queue (block_bio_queue events: none on smrhmN for the
#    dm device's I/O, some for I/O sent to smrhmN itself, which still
#    works); the reads reach the backing device.
# 2. Reads: whole written ranges (conventional and sequential zones) read
#    back; a read across the write pointer returns the data then zeros,
#    past it zeros; every read is counted in the status line's reads and
#    read_sectors, whichever way it went.
# 3. An offline zone fails its reads; a read-only zone still reads.
# 4. After a power cut reads fail; after the power comes back (the table
#    reloaded) they read what was flushed.
# 5. With the timing model on, reads go through the engine: random 4 KiB
#    reads take the modelled milliseconds.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: the direct path from the target to the engine and the backing"
hm_prep

ZS=8192			# 4 MiB zones
NZ=6
LEN=$((NZ * ZS))
back=$(new_backing 32) || bail "no backing device"
name=t_${TID}_dp
dev=/dev/mapper/$name
hm_create "$name" $LEN "$back" $ZS conv_zones 1 format || bail "cannot create the device"
udevadm settle 2> /dev/null

# rd DEV SECTOR NR: read the range, keep nothing but the status.
rd() { hm_read "$@" > /dev/null; }
engine() { dmsetup deps -o devname "$1" | sed -n 's/.*(\(smrhm[0-9]*\)).*/\1/p'; }
zd=$(engine "$name")
[ -b "/dev/$zd" ] || bail "no zoned device under $name"

# ---- 1. the path ----------------------------------------------------------
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs none $T 2> /dev/null ||
	{ T=/sys/kernel/debug/tracing; mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug; }
I=$T/instances/hm12_$$
if [ -d $T/events/block/block_bio_queue ] && mkdir $I 2> /dev/null; then
	# majmin DEV: "major,minor" as the block events print them.
	majmin() { local r; r=$(stat -L -c '%t %T' "$1"); set -- $r; echo "$((16#$1)),$((16#$2))"; }
	zmm=$(majmin /dev/$zd)
	bmm=$(majmin "$back")
	echo 1 > $I/events/block/block_bio_queue/enable
	: > $I/trace
	hm_put A "$dev" $ZS 128				# zone 1, one write
	hm_put C "$dev" 0 64				# conventional
	hm_read "$dev" $ZS 128 > /dev/null
	hm_read "$dev" 0 64 > /dev/null
	check "a zone reset through the dm device" blkzone reset -o $((2 * ZS)) -c 1 "$dev"
	echo 0 > $I/events/block/block_bio_queue/enable
	ev=$(cat $I/trace)
	n_z=$(grep -c " $zmm " <<< "$ev")
	n_b=$(grep -c " $bmm R" <<< "$ev")
	assert_eq "no bio of the dm device passes through $zd's queue" 0 "$n_z"
	[ "$n_b" -ge 2 ] && ok "the reads reach the backing device ($n_b)" ||
		not_ok "the reads reach the backing device" "read events on $bmm: $n_b"$'\n'"$ev"
	# The control: the zoned device itself still takes I/O, and it shows.
	echo 1 > $I/events/block/block_bio_queue/enable
	out=$(dd if=/dev/$zd of=/dev/null bs=4k count=1 iflag=direct status=none 2>&1) ||
		not_ok "a read of /dev/$zd itself" "$out"
	echo 0 > $I/events/block/block_bio_queue/enable
	n_z=$(grep -c " $zmm " $I/trace)
	[ "$n_z" -ge 1 ] && ok "a read of /dev/$zd itself goes through its queue (the check above can see one)" ||
		not_ok "a read of /dev/$zd shows in the trace" "$(cat $I/trace)"
	rmdir $I
else
	skip "the path (no block tracepoints or tracefs instance)"
	hm_put A "$dev" $ZS 128
	hm_put C "$dev" 0 64
fi

# ---- 2. reads -------------------------------------------------------------
hm_assert_read "sequential zone: the written range reads back" "$dev" $ZS "$A"
hm_assert_read "conventional zone: the written range reads back" "$dev" 0 "$C"
read -r r0 s0 <<< "$(hm_stat "$dev" reads read_sectors)"
hm_read "$dev" $((ZS + 64)) 128 > "$T_WORK/across"		# 64 written, 64 not
if cmp -s -n $((64 * 512)) "$T_WORK/across" <(tail -c +$((64 * 512 + 1)) "$A") &&
   cmp -s -i $((64 * 512)):0 -n $((64 * 512)) "$T_WORK/across" /dev/zero; then
	ok "a read across the write pointer: the data, then zeros"
else
	not_ok "a read across the write pointer: the data, then zeros" "$(od -A d -t x1 "$T_WORK/across" | head)"
fi
hm_assert_zero "a read past the write pointer: zeros" "$dev" $((ZS + 128)) 64
hm_assert_zero "a read of an empty zone: zeros" "$dev" $((3 * ZS)) 64
hm_read "$dev" $ZS 64 > /dev/null
read -r r1 s1 <<< "$(hm_stat "$dev" reads read_sectors)"
assert_eq "status: 4 reads counted, whichever path they took" 4 $((r1 - r0))
assert_eq "status: their sectors counted" $((128 + 64 + 64 + 64)) $((s1 - s0))

# ---- 3. offline and read-only zones --------------------------------------
hm_put B "$dev" $((4 * ZS)) 64
hm_put E "$dev" $((5 * ZS)) 64
check "zone 4 offline" hm_msg "$dev" zone_cond $((4 * ZS)) offline
check "zone 5 read-only" hm_msg "$dev" zone_cond $((5 * ZS)) readonly
check_fail "an offline zone's read fails" rd "$dev" $((4 * ZS)) 64
hm_assert_read "a read-only zone still reads its data" "$dev" $((5 * ZS)) "$E"

# ---- 4. a power cut ------------------------------------------------------
hm_flush "$dev"
table=$(dmsetup table "$name")
check "power_cut" hm_msg "$dev" power_cut
check_fail "after the cut, a read of written data fails" rd "$dev" $ZS 64
check_fail "after the cut, a conventional read fails" rd "$dev" 0 64
check "the power comes back (the table reloaded)" \
	bash -c "dmsetup reload $name --table '$table' && dmsetup resume $name"
hm_assert_read "after the power comes back, the flushed data reads" "$dev" $ZS "$A"
hm_assert_read "and the conventional zone's" "$dev" 0 "$C"

# ---- 5. with the timing model, reads go through the engine ---------------
. "$(dirname "$0")/lib/tm.sh"
tback=$(new_backing 32) || bail "no backing device"
tn=t_${TID}_tm
# A 7200 rpm drive (tests/lib/tm.sh): random 4 KiB reads over a written
# MiB take milliseconds each (rotation alone averages 4 ms); sent to the
# backing directly they would take well under one under TCG.
if dm_create "$tn" "$(hm_table $LEN "$tback" $ZS format) timing 12 $TM_K" 2> "$T_WORK/tm.err"; then
	hm_put F /dev/mapper/$tn $ZS 2048
	out=$(fio --name=r --filename=/dev/mapper/$tn --rw=randread --bs=4k \
		--offset=$((ZS * 512)) --size=1M --number_ios=20 --direct=1 \
		--ioengine=psync --output-format=json 2> "$T_WORK/fio.err" |
		jq -r '.jobs[0].read.clat_ns.mean | floor')
	if [ -n "$out" ] && [ "$out" -ge 1000000 ] 2> /dev/null; then
		ok "timing model on: 4 KiB reads take modelled time (mean $((out / 1000)) us)"
	else
		not_ok "timing model on: 4 KiB reads take modelled time" "mean read: '$out' ns" "$(cat "$T_WORK/fio.err")"
	fi
	hm_assert_read "timing model on: the data reads back" /dev/mapper/$tn $ZS "$F"
else
	not_ok "a device with the timing model" "$(cat "$T_WORK/tm.err")"
fi

dmesg_check "no kernel warnings"
_show_result
