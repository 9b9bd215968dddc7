#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SMOKE: 1
# TIMEOUT: 900
#
# Host-managed dm-smr: zone semantics (docs/dm-smr.rst "Zone semantics").
# Writes at, off and past the write pointer, across zones and into full
# zones; what reads return below and beyond the write pointer; free
# rewrites in conventional zones; open/close/finish/reset transitions,
# idempotent and illegal ones; the open and active zone limits; fault
# injection with zone_cond and the zone_info message; zone append (issued
# by zoned btrfs; the zoned device appends natively).

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: write pointers, reads, zone management, limits, faults, append"
hm_prep

ZS=$HM_ZS
EIO=$HM_EIO
zs() { echo $(( $1 * ZS )); }

# ====================================================================
# Device A: 16 zones, 2 conventional, capacity 6 MiB, no limits.
CAP=12288
backa=$(new_backing 160) || bail "no backing device"
na=t_${TID}_a
A=/dev/mapper/$na
hm_create "$na" $((16 * ZS)) "$backa" $ZS conv_zones 2 zone_capacity $CAP ||
	bail "cannot create device A"

# ---- writes at and off the write pointer ----------------------------
Z=$(zs 2)
hm_put d1 "$A" $Z 128 "write 64 KiB at the wp of an empty zone"
assert_cw "wp advanced, zone implicitly open" "$A" $Z "oi 128"
hm_put d2 "$A" $((Z + 128)) 128 "write 64 KiB at the new wp"
assert_eq "zone_info: type cond wp data_end" "seq oi 256 256" "$(hm_zinfo "$A" $Z)"
hm_assert_read "first write reads back" "$A" $Z "$d1"
hm_assert_read "second write reads back" "$A" $((Z + 128)) "$d2"

assert_write_fails "write ahead of the wp fails with EIO" "$A" $((Z + 264)) 8 "$EIO"
assert_write_fails "write behind the wp (rewrite) fails with EIO" "$A" $Z 8 "$EIO"
assert_write_fails "write 4 KiB below the wp fails with EIO" "$A" $((Z + 248)) 8 "$EIO" "oi 256"
hm_assert_read "data below the wp untouched by refused writes" "$A" $Z "$d1"
hm_put d3 "$A" $((Z + 256)) 8 "write at the wp still works after refused writes"
assert_cw "wp after the refused writes and one good one" "$A" $Z "oi 264"

# ---- reads below, at and beyond the write pointer --------------------
hm_assert_zero "read at the wp returns zeros" "$A" $((Z + 264)) 1024
hm_assert_zero "read beyond the capacity returns zeros" "$A" $((Z + CAP)) $((ZS - CAP))
cat "$d1" "$d2" "$d3" "$(hm_zeros $((512 - 264)))" > "$T_WORK/d123"
hm_assert_read "a read across the wp: data, then zeros" "$A" $Z "$T_WORK/d123" 512
hm_put d4 "$A" $(zs 3) 8
cat "$(hm_zeros 8)" "$d4" > "$T_WORK/across"
hm_assert_read "a read across a zone boundary: zeros past capacity, then the next zone" \
	"$A" $(( $(zs 3) - 8 )) "$T_WORK/across" 16
hm_assert_zero "an empty zone reads as zeros" "$A" $(zs 4) 2048

# Stale data on the backing device must not show through after a reset.
hm_put d5 "$A" $(zs 5) 2048
assert_zop_ok "reset a written zone" "$A" reset $(zs 5) "em 0"
hm_assert_zero "a reset zone reads as zeros (old data hidden)" "$A" $(zs 5) 2048

# ---- capacity, full zones --------------------------------------------
Z=$(zs 6)
hm_put big "$A" $Z $((CAP - 8)) "fill a zone up to 4 KiB below its capacity"
read -r wpe err <<< "$(hm_stat "$A" wp_errors errors)"
assert_write_fails "write past the zone capacity fails with EIO" "$A" $((Z + CAP - 8)) 16 \
	"$EIO" "oi $((CAP - 8))"
read -r wpe2 err2 <<< "$(hm_stat "$A" wp_errors errors)"
assert_eq "wp_errors counts the write past the capacity" $((wpe + 1)) "$wpe2"
if [ "$err2" -ge $((err + 1)) ]; then ok "errors counts it too ($err -> $err2)"
else not_ok "errors counts the write past the capacity" "$err -> $err2"; fi
hm_put last "$A" $((Z + CAP - 8)) 8 "the last 4 KiB up to the capacity"
assert_cw "zone is full, wp at the zone end" "$A" $Z "fu $ZS"
assert_eq "zone_info of a full zone: wp and data end at the capacity" \
	"seq fu $CAP $CAP" "$(hm_zinfo "$A" $Z)"
assert_write_fails "write to a full zone fails with EIO" "$A" $((Z + CAP)) 8 "$EIO"
assert_write_fails "write at the start of a full zone fails with EIO" "$A" $Z 8 "$EIO" "fu $ZS"
hm_assert_read "full zone data reads back (start)" "$A" $Z "$big"
hm_assert_read "full zone data reads back (end)" "$A" $((Z + CAP - 8)) "$last"

# ---- conventional zones ------------------------------------------------
hm_put c1 "$A" 1024 128
hm_put c2 "$A" 1024 128 "rewrite sectors of a conventional zone"
hm_put c3 "$A" 0 8 "write before them (no write pointer)"
hm_assert_read "conventional rewrite reads back" "$A" 1024 "$c2"
hm_assert_read "conventional write at 0 reads back" "$A" 0 "$c3"
hm_put c4 "$A" $((ZS - 8)) 16 "a write across two conventional zones"
hm_assert_read "it reads back" "$A" $((ZS - 8)) "$c4"
assert_write_fails "a write from a conventional into a sequential zone fails" \
	"$A" $((2 * ZS - 8)) 16 "$EIO"
hm_assert_zero "the conventional part of that write was not written" "$A" $((2 * ZS - 8)) 8
assert_eq "conventional zone: nw; zone_info" "nw 0 conv nw 0 0" \
	"$(hm_cw "$A" 0) $(hm_zinfo "$A" 0)"

# ---- zone management ---------------------------------------------------
Z=$(zs 8)
assert_zop_ok "close an empty zone: no change" "$A" close $Z "em 0"
assert_zop_ok "reset an empty zone: no change" "$A" reset $Z "em 0"
assert_zop_ok "open an empty zone -> oe" "$A" open $Z "oe 0"
assert_zop_ok "open an explicitly open zone: no change" "$A" open $Z "oe 0"
assert_zop_ok "close an open zone with no data -> em" "$A" close $Z "em 0"

Z=$(zs 9)
hm_put m1 "$A" $Z 8
assert_cw "written zone is implicitly open" "$A" $Z "oi 8"
assert_zop_ok "open an implicitly open zone -> oe" "$A" open $Z "oe 8"
hm_put m2 "$A" $((Z + 8)) 8
assert_cw "write to an explicitly open zone keeps it oe" "$A" $Z "oe 16"
assert_zop_ok "close an open zone with data -> cl" "$A" close $Z "cl 16"
assert_zop_ok "close a closed zone: no change" "$A" close $Z "cl 16"
hm_put m3 "$A" $((Z + 16)) 8
assert_cw "write to a closed zone opens it implicitly" "$A" $Z "oi 24"
assert_zop_ok "close it again" "$A" close $Z "cl 24"
assert_zop_ok "open a closed zone -> oe" "$A" open $Z "oe 24"
assert_zop_ok "finish an open zone -> fu" "$A" finish $Z "fu $ZS"
assert_eq "zone_info of a finished zone: data end stays" "seq fu $CAP 24" "$(hm_zinfo "$A" $Z)"
assert_zop_ok "finish a full zone: no change" "$A" finish $Z "fu $ZS"
assert_zop_ok "close a full zone: no change" "$A" close $Z "fu $ZS"
assert_zop_fails "open a full zone fails" "$A" open $Z "$EIO" "fu $ZS"
cat "$m1" "$m2" "$m3" > "$T_WORK/m123"
hm_assert_read "finished zone: data below the old wp reads back" "$A" $Z "$T_WORK/m123" 24
hm_assert_zero "finished zone: beyond the old wp reads zeros" "$A" $((Z + 24)) 2048
assert_write_fails "write to a finished zone fails" "$A" $((Z + 24)) 8 "$EIO"
assert_zop_ok "reset a full zone -> em" "$A" reset $Z "em 0"
hm_assert_zero "reset zone reads zeros" "$A" $Z 32
assert_zop_ok "reset an empty zone again: no change" "$A" reset $Z "em 0"
hm_put m4 "$A" $Z 8 "write at 0 after the reset"

Z=$(zs 10)
assert_zop_ok "finish an empty zone -> fu" "$A" finish $Z "fu $ZS"
assert_eq "zone_info: finished empty zone" "seq fu $CAP 0" "$(hm_zinfo "$A" $Z)"
hm_assert_zero "finished empty zone reads zeros" "$A" $Z 64
assert_zop_ok "reset it -> em" "$A" reset $Z "em 0"

Z=$(zs 11)
hm_put m5 "$A" $Z 8
assert_zop_ok "close" "$A" close $Z "cl 8"
assert_zop_ok "finish a closed zone -> fu" "$A" finish $Z "fu $ZS"
assert_eq "status: full zones (zone 6 filled to capacity, zone 11 finished)" \
	2 "$(hm_stat "$A" full)"

# Conventional zones take no zone management.
for op in open close finish reset; do
	assert_zop_fails "$op of a conventional zone fails with EIO" "$A" $op 0 "$EIO"
done
hm_assert_read "conventional data survives the refused operations" "$A" 0 "$c3"

# Counters of explicit operations.
check "clear_stats" dmsetup message "$na" 0 clear_stats
Z=$(zs 12)
for op in open close finish reset; do hm_zop "$A" $op $Z > /dev/null; done
assert_eq "opens closes finishes resets counted" "1 1 1 1" \
	"$(hm_stat "$A" opens closes finishes resets)"

# ---- fault injection: zone_cond, zone_info -----------------------------
Z=$(zs 13)
hm_put r1 "$A" $Z 2048
out=$(hm_msg "$A" zone_cond $Z readonly); rc=$?
assert_eq "zone_cond readonly accepted" "0" "$rc${out:+ $out}"
assert_eq "report: ro; zone_info; status readonly" "ro seq ro 2048 2048 1" \
	"$(hm_cond "$A" $Z) $(hm_zinfo "$A" $Z) $(hm_stat "$A" readonly)"
hm_assert_read "read-only zone: reads work" "$A" $Z "$r1"
assert_write_fails "read-only zone: write at the old wp fails" "$A" $((Z + 2048)) 8 "$EIO"
assert_write_fails "read-only zone: write at 0 fails" "$A" $Z 8 "$EIO"
for op in open close finish reset; do
	assert_zop_fails "read-only zone: $op fails" "$A" $op $Z "$EIO"
done
assert_eq "read-only zone still ro" ro "$(hm_cond "$A" $Z)"
hm_assert_read "read-only zone: data intact" "$A" $Z "$r1"

Z=$(zs 14)
hm_put o1 "$A" $Z 2048
out=$(hm_msg "$A" zone_cond $Z offline); rc=$?
assert_eq "zone_cond offline accepted" "0" "$rc${out:+ $out}"
# zone_info uses the abbreviations blkzone prints (docs/dm-smr.rst).
assert_eq "report: of; zone_info; status offline" "of seq of 2048 2048 1" \
	"$(hm_cond "$A" $Z) $(hm_zinfo "$A" $Z) $(hm_stat "$A" offline)"
out=$(hm_read "$A" $Z 8 2>&1 > /dev/null); rc=$?
assert_errno "offline zone: read fails with EIO" "$EIO" "$out" $rc
assert_write_fails "offline zone: write fails" "$A" $((Z + 2048)) 8 "$EIO"
for op in open close finish reset; do
	assert_zop_fails "offline zone: $op fails" "$A" $op $Z "$EIO"
done
out=$(hm_msg "$A" zone_cond $Z empty); rc=$?
assert_eq "zone_cond empty on the offline zone accepted" "0" "$rc${out:+ $out}"
assert_eq "it is empty again; status offline 0" "em 0 0" "$(hm_cw "$A" $Z) $(hm_stat "$A" offline)"
hm_assert_zero "its data is dropped" "$A" $Z 2048
assert_zop_ok "reset it before writing (as the docs say)" "$A" reset $Z "em 0"
hm_put o2 "$A" $Z 8 "write at 0 after zone_cond empty + reset"
hm_assert_read "and it reads back" "$A" $Z "$o2"

out=$(hm_msg "$A" zone_cond $(zs 13) empty); rc=$?
assert_eq "zone_cond empty on the read-only zone accepted" "0" "$rc${out:+ $out}"
assert_eq "read-only zone empty again; status readonly 0" "em 0 0" \
	"$(hm_cw "$A" $(zs 13)) $(hm_stat "$A" readonly)"

# A write at the old wp of a zone emptied behind the host's back (fault
# injection) reaches the zoned device, which must refuse it.
Z=$(zs 15)
hm_put s1 "$A" $Z 2048
hm_msg "$A" zone_cond $Z empty > /dev/null
wpe=$(hm_stat "$A" wp_errors)
assert_write_fails "write at the stale wp of an emptied zone fails" "$A" $((Z + 2048)) 8 "$EIO"
assert_eq "the target counted it in wp_errors" $((wpe + 1)) "$(hm_stat "$A" wp_errors)"
hm_assert_zero "nothing was written there" "$A" $Z 2056

# ---- reset of the whole device ------------------------------------------
out=$(blkzone reset "$A" 2>&1); rc=$?
assert_eq "blkzone reset of the whole device" "0" "$rc${out:+ $out}"
bad=$(hm_report "$A" | while read -r s l c w cond t; do
	[ "$t" = SEQ_WRITE_REQUIRED ] && [ "$cond $w" != "em 0" ] && echo "$s $cond $w"
done)
assert_eq "every sequential zone is empty after reset-all" "" "$bad"
hm_assert_read "conventional data survives reset-all" "$A" 1024 "$c2"
assert_eq "status after reset-all: imp_open exp_open closed full" "0 0 0 0" \
	"$(hm_stat "$A" imp_open exp_open closed full)"

# ====================================================================
# Device D: 4 zones, capacity = zone size: writes crossing a zone end.
# A zoned disk splits such a write at the boundary (the block layer does
# for blk-mq disks, dm and the engine do here on every kernel): each part
# is checked against its own zone's write pointer.
backd=$(new_backing 40) || bail "no backing device D"
nd=t_${TID}_d
D=/dev/mapper/$nd
hm_create "$nd" $((4 * ZS)) "$backd" $ZS || bail "cannot create device D"
hm_put dfill "$D" 0 $((ZS - 8)) "fill zone 0 up to 4 KiB below its end"
wpe=$(hm_stat "$D" wp_errors)
hm_put dcross "$D" $((ZS - 8)) 16 "a write crossing into the next (empty) zone succeeds"
assert_cw "zone 0 is full" "$D" 0 "fu $ZS"
assert_cw "zone 1 holds the second half" "$D" $ZS "oi 8"
hm_assert_read "the crossing write reads back across the boundary" "$D" $((ZS - 8)) "$dcross"
assert_eq "no write pointer error" "$wpe" "$(hm_stat "$D" wp_errors)"
# Zone 2 is empty, zone 3 too: a crossing write whose second part is
# not at zone 3's write pointer (zone 3 written first) fails there only.
hm_put d3 "$D" $((3 * ZS)) 8 "write 4 KiB at the start of zone 3"
hm_put d2 "$D" $((2 * ZS)) $((ZS - 8)) "fill zone 2 up to 4 KiB below its end"
assert_write_fails "a crossing write whose second part misses the wp fails" \
	"$D" $((3 * ZS - 8)) 16 "$EIO"
assert_eq "zone 3 unchanged" "oi 8" "$(hm_cw "$D" $((3 * ZS)))"
assert_eq "the target counted the second part in wp_errors" $((wpe + 1)) "$(hm_stat "$D" wp_errors)"
hm_assert_read "zone 3's data is intact" "$D" $((3 * ZS)) "$d3"

# ====================================================================
# Device B: 8 zones, 1 conventional, max_open 2.
backb=$(new_backing 80) || bail "no backing device B"
nb=t_${TID}_b
B=/dev/mapper/$nb
hm_create "$nb" $((8 * ZS)) "$backb" $ZS conv_zones 1 max_open 2 ||
	bail "cannot create device B"
hm_put b1 "$B" $(zs 1) 8
hm_put b2 "$B" $(zs 2) 8
assert_cw "two zones implicitly open" "$B" "$(zs 1) $(zs 2)" "oi 8 oi 8"
hm_put b3 "$B" $(zs 3) 8 "a write to a 3rd zone at the open limit succeeds"
assert_eq "an implicitly open zone was closed (imp_closes 1, imp_open 2, closed 1)" \
	"cl 8 oi 8 oi 8 1 2 1" \
	"$(hm_cw "$B" $(zs 1) $(zs 2) $(zs 3)) $(hm_stat "$B" imp_closes imp_open closed)"
assert_zop_ok "explicit open at the limit closes an implicitly open zone" "$B" open $(zs 4) "oe 0"
assert_zop_ok "a second explicit open" "$B" open $(zs 5) "oe 0"
assert_eq "imp_closes imp_open exp_open after the explicit opens" "3 0 2" \
	"$(hm_stat "$B" imp_closes imp_open exp_open)"
assert_write_fails "explicit opens at the limit: a write to an empty zone fails" \
	"$B" $(zs 6) 8 "$HM_ETOOMANYREFS" "em 0"
assert_write_fails "... and a write to a closed zone fails" "$B" $(( $(zs 1) + 8 )) 8 \
	"$HM_ETOOMANYREFS" "cl 8"
assert_zop_fails "... and an explicit open fails" "$B" open $(zs 6) "$HM_ETOOMANYREFS" "em 0"
hm_put b4 "$B" $(zs 4) 8 "a write to an explicitly open zone works"
assert_cw "it stays explicitly open" "$B" $(zs 4) "oe 8"
assert_zop_ok "close one explicitly open zone" "$B" close $(zs 4) "cl 8"
hm_put b6 "$B" $(zs 6) 8 "then a write to an empty zone works"
assert_cw "it is implicitly open" "$B" $(zs 6) "oi 8"
hm_assert_read "B: data of the implicitly closed zone intact" "$B" $(zs 1) "$b1"
hm_assert_read "B: data of the explicitly open zone" "$B" $(zs 4) "$b4"

# ====================================================================
# Device C: 8 zones, 1 conventional, max_active 2 (max_open clamped to 2).
backc=$(new_backing 80) || bail "no backing device C"
nc=t_${TID}_c
C=/dev/mapper/$nc
hm_create "$nc" $((8 * ZS)) "$backc" $ZS conv_zones 1 max_active 2 ||
	bail "cannot create device C"
hm_put c1 "$C" $(zs 1) 8
hm_put c2 "$C" $(zs 2) 8
assert_zop_ok "close one of two active zones" "$C" close $(zs 1) "cl 8"
assert_write_fails "at the active limit a write to an empty zone fails" \
	"$C" $(zs 3) 8 "$HM_EOVERFLOW" "em 0"
assert_zop_fails "at the active limit opening an empty zone fails" "$C" open $(zs 3) \
	"$HM_EOVERFLOW" "em 0"
assert_zop_ok "opening a closed zone works (it is already active)" "$C" open $(zs 1) "oe 8"
hm_put c1b "$C" $(( $(zs 1) + 8 )) 8 "a write to an active zone works"
assert_zop_ok "finish it: one active zone less" "$C" finish $(zs 1) "fu $ZS"
assert_zop_ok "now an empty zone can be opened" "$C" open $(zs 3) "oe 0"
assert_zop_ok "reset an active zone" "$C" reset $(zs 2) "em 0"
hm_put c4 "$C" $(zs 4) 8 "a write to an empty zone below the limit works"
assert_eq "C status: imp_open exp_open closed full" "1 1 0 1" \
	"$(hm_stat "$C" imp_open exp_open closed full)"

# ====================================================================
# Device F: 8 zones, 1 conventional, max_open 2; zones opened in the
# order 5, 3: at the limit the zone opened first is closed, not the
# lowest-numbered one (the target keeps them in a queue, no zone scan).
backf=$(new_backing 80) || bail "no backing device F"
nf=t_${TID}_f
F=/dev/mapper/$nf
hm_create "$nf" $((8 * ZS)) "$backf" $ZS conv_zones 1 max_open 2 ||
	bail "cannot create device F"
hm_put f5 "$F" $(zs 5) 8
hm_put f3 "$F" $(zs 3) 8
hm_put f6 "$F" $(zs 6) 8 "F: a write to a third zone at the open limit"
assert_cw "F: zone 5, opened first, was closed; 3 and 6 are open" "$F" \
	"$(zs 3) $(zs 5) $(zs 6)" "oi 8 cl 8 oi 8"
hm_put f3b "$F" $(( $(zs 3) + 8 )) 8 "F: zone 3 written again (still open)"
hm_put f2 "$F" $(zs 2) 8 "F: a write to a fourth zone"
assert_cw "F: then zone 3 (opened before 6) was closed" "$F" \
	"$(zs 2) $(zs 3) $(zs 5) $(zs 6)" "oi 8 cl 16 cl 8 oi 8"
assert_eq "F: imp_closes imp_open closed" "2 2 2" "$(hm_stat "$F" imp_closes imp_open closed)"
hm_assert_read "F: data of zone 3 intact" "$F" $(zs 3) "$f3"

# ====================================================================
# Zone append. fio 3.33 cannot issue zone appends to a block device (its
# io_uring engine has none for them), and zonefs on this 6.1 kernel fails
# every append even on a native null_blk (its written-sector check). btrfs
# in zoned mode writes all file data with REQ_OP_ZONE_APPEND and records
# the sector each append returns as the extent's location: if the zoned
# device (through dm) returned a wrong sector, the data read
# back after a remount would be wrong (or fail its checksum).
if ! command -v mkfs.btrfs > /dev/null; then
	skip "zone append through btrfs" "mkfs.btrfs is not installed"
elif ! modprobe btrfs 2> /dev/null; then
	skip "zone append through btrfs" "btrfs module not available"
else
	backe=$(new_backing 272) || bail "no backing device E"
	ne=t_${TID}_e
	E=/dev/mapper/$ne
	hm_create "$ne" $((32 * ZS)) "$backe" $ZS || bail "cannot create device E"
	mnt=$T_MNT/btrfs
	mkdir -p "$mnt"
	if ! out=$(mkfs.btrfs -f -q -O zoned -d single -m single "$E" 2>&1); then
		not_ok "mkfs.btrfs -O zoned on the dm-smr device" "$out"
	elif ! out=$(mount -t btrfs "$E" "$mnt" 2>&1); then
		not_ok "mount zoned btrfs on the dm-smr device" "$out"
	else
		ok "zoned btrfs made and mounted"
		a1=$(hm_newfile 8192); hm_data "$a1" 8192
		out=$(dd if="$a1" of="$mnt/direct" bs=256k oflag=direct status=none 2>&1); rc=$?
		assert_eq "btrfs: 4 MiB of O_DIRECT writes (zone appends)" "0" "$rc${out:+ $out}"
		cp "$a1" "$mnt/buffered" && sync
		w=$(hm_stat "$E" writes)
		if [ "${w:-0}" -ge 16 ]; then ok "the appends reached the target as writes ($w)"
		else not_ok "the appends reached the target as writes" "$(hm_stats "$E")"; fi
		check "umount" umount "$mnt"
		check "mount again" mount -t btrfs "$E" "$mnt"
		check "btrfs: direct-written file reads back after remount" cmp "$a1" "$mnt/direct"
		check "btrfs: buffered file reads back after remount" cmp "$a1" "$mnt/buffered"
		check "umount" umount "$mnt"
	fi
fi

dmesg_check "no kernel warnings"
_show_result
