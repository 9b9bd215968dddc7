#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 900
#
# Host-managed dm-smr: zone state and data persist. Zones in every
# condition (partially written, closed, full, finished early, reset,
# read-only, offline, explicitly open, open and empty) plus conventional
# zones are re-created by "dmsetup remove" + "create", by a module
# reload, and by "dmsetup reload" of the printed table line: every write
# pointer, condition and byte comes back; open zones come back closed
# (or empty). A torn zone table block falls back to its previous copy.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: state and data survive remove/create, module reload, table reload"
hm_prep
require_cmd od

ZS=$HM_ZS
NZ=12
LEN=$((NZ * ZS))
CAP=12288
zs() { echo $(( $1 * ZS )); }
OPTS=(conv_zones 2 zone_capacity $CAP max_open 4)

back=$(new_backing 96) || bail "no backing device"
name=t_${TID}_hm
dev=/dev/mapper/$name
hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}" || bail "cannot create the device"

# ---- zones in every condition -------------------------------------------
hm_put c0 "$dev" 0 2048
hm_put c1 "$dev" $(( $(zs 1) + 4096 )) 1024
hm_put z2 "$dev" $(zs 2) 2048			# left implicitly open
hm_put z3 "$dev" $(zs 3) 6144
hm_zop "$dev" close $(zs 3) > /dev/null		# closed
hm_put z4 "$dev" $(zs 4) $CAP			# full by data
hm_put z5 "$dev" $(zs 5) 1024
hm_zop "$dev" finish $(zs 5) > /dev/null	# finished early
hm_put z6 "$dev" $(zs 6) 2048
hm_zop "$dev" reset $(zs 6) > /dev/null		# reset
hm_put z7 "$dev" $(zs 7) 4096
hm_msg "$dev" zone_cond $(zs 7) readonly > /dev/null
hm_put z8 "$dev" $(zs 8) 2048
hm_zop "$dev" open $(zs 8) > /dev/null		# explicitly open, with data
hm_zop "$dev" open $(zs 9) > /dev/null		# explicitly open, empty
hm_put z10 "$dev" $(zs 10) 1024
hm_msg "$dev" zone_cond $(zs 10) offline > /dev/null
# zone 11 never touched
check "flush (fsync of the device)" hm_flush "$dev"

want_live="0 nw 0|1 nw 0|2 oi 2048|3 cl 6144|4 fu $ZS|5 fu $ZS|6 em 0|7 ro|8 oe 2048|9 oe 0|10 of|11 em 0"
# After a re-create open zones are closed, or empty if they hold nothing.
want_back="0 nw 0|1 nw 0|2 cl 2048|3 cl 6144|4 fu $ZS|5 fu $ZS|6 em 0|7 ro|8 cl 2048|9 em 0|10 of|11 em 0"

# state: "zone cond wp|..." (no wp for read-only and offline zones).
state() {
	local z=0 s l c w cond t out=()
	while read -r s l c w cond t; do
		case $cond in
		ro|of) out+=("$z $cond") ;;
		*) out+=("$z $cond $w") ;;
		esac
		z=$((z + 1))
	done < <(hm_report "$dev")
	local IFS='|'
	echo "${out[*]}"
}

# data: md5 of the device below and above the offline zone 10.
data() { echo "$(hm_sum "$dev" 0 $(zs 10)) $(hm_sum "$dev" $(zs 11) $ZS)"; }

assert_eq "zone conditions and wps before" "$want_live" "$(state)"
sum0=$(data)
case $sum0 in *READ-ERROR*) not_ok "read the device" "$sum0" ;; esac

# check_all WHEN: state, data, counts and a few ranges byte by byte.
check_all() {
	local when=$1
	assert_eq "$when: zone conditions and wps" "$want_back" "$(state)"
	assert_eq "$when: all data identical (md5)" "$sum0" "$(data)"
	assert_eq "$when: status imp_open exp_open closed full readonly offline" \
		"0 0 3 2 1 1" "$(hm_stat "$dev" imp_open exp_open closed full readonly offline)"
	assert_eq "$when: zone_info of the finished zone keeps its data end" \
		"seq fu $CAP 1024" "$(hm_zinfo "$dev" $(zs 5))"
	hm_assert_read "$when: conventional data" "$dev" $(( $(zs 1) + 4096 )) "$c1"
	hm_assert_read "$when: full zone data" "$dev" $(zs 4) "$z4"
	hm_assert_read "$when: read-only zone data" "$dev" $(zs 7) "$z7"
	hm_assert_zero "$when: the reset zone reads zeros" "$dev" $(zs 6) 2048
}

# ---- dmsetup remove + create -------------------------------------------------
check "dmsetup remove" dm_remove "$name"
check "create again with the same table" hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}"
check_all "after remove/create"
hm_put z2b "$dev" $(( $(zs 2) + 2048 )) 8 "a closed zone takes a write at its wp"
assert_cw "and is implicitly open again" "$dev" $(zs 2) "oi 2056"
hm_zop "$dev" reset $(zs 2) > /dev/null
hm_put z2 "$dev" $(zs 2) 2048
hm_flush "$dev"
sum0=$(data)

# ---- module reload ----------------------------------------------------------
check "dmsetup remove" dm_remove "$name"
if lsmod | grep -q '^dm_smr '; then
	check "rmmod dm-smr" rmmod dm_smr
	check "insmod dm-smr again" insmod "$SMR_ROOT/dm-smr/dm-smr.ko"
	check "create after the module reload" hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}"
	check_all "after module reload"
else
	skip "module reload" "dm-smr is not a loaded module"
	hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}"
fi

# ---- dmsetup reload of the printed table --------------------------------------
reload() {
	local t
	t=$(dmsetup table "$name") &&
	dmsetup reload "$name" --table "$t" &&
	dmsetup resume "$name" &&
	udevadm settle 2>/dev/null
}
check "dmsetup reload + resume of the printed table" reload
check_all "after a table reload"

# A plain suspend + resume commits and changes nothing: the zone state
# lives in the zoned device, which a suspend does not touch (it is not a
# power cycle), so an open zone stays open.
hm_put z2c "$dev" $(( $(zs 2) + 2048 )) 8 "reopen zone 2 with a write"
check "dmsetup suspend" dmsetup suspend "$name"
check "dmsetup resume" dmsetup resume "$name"
assert_cw "after suspend/resume zone 2 is still open at its wp" "$dev" $(zs 2) "oi 2056"
hm_assert_read "and holds the write" "$dev" $(( $(zs 2) + 2048 )) "$z2c"
hm_zop "$dev" reset $(zs 2) > /dev/null
hm_put z2 "$dev" $(zs 2) 2048
hm_zop "$dev" close $(zs 2) > /dev/null
hm_flush "$dev"
check "dmsetup suspend + resume" eval "dmsetup suspend $name && dmsetup resume $name"
sum0=$(data)
check_all "after suspend/resume"

# A table reload with other limits is refused (the live table shares the
# zoned device and shows its limits); remove + create applies them and
# keeps the state.
t=$(dmsetup table "$name")
check_fail "reload with max_open 2 is refused" dmsetup reload "$name" --table "${t/max_open 4/max_open 2}"
assert_eq "the open limit is unchanged" 4 "$(hm_sysfs "$dev" max_open_zones)"
check "dmsetup remove" dm_remove "$name"
check "create with max_open 2" hm_create "$name" $LEN "$back" $ZS "${OPTS[@]:0:4}" max_open 2
assert_eq "the new open limit is published" 2 "$(hm_sysfs "$dev" max_open_zones)"
assert_eq "and the state is kept" "$want_back" "$(state)"
check "dmsetup remove" dm_remove "$name"
check "create with the old table again" hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}"

# Writes that were acknowledged but not flushed yet: a table reload is
# not a crash, it must not lose them.
hm_put z11 "$dev" $(zs 11) 8 "write 4 KiB to zone 11 (no flush)"
assert_cw "zone 11 implicitly open" "$dev" $(zs 11) "oi 8"
check "dmsetup reload + resume" reload
assert_cw "after the reload zone 11 keeps its wp (still open)" "$dev" $(zs 11) "oi 8"
hm_assert_read "after the reload zone 11 keeps its data" "$dev" $(zs 11) "$z11"
hm_put z11b "$dev" $(( $(zs 11) + 8 )) 8 "and takes the next write at its wp"
dm_remove "$name"
hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}"
assert_cw "after remove/create zone 11 holds both writes" "$dev" $(zs 11) "cl 16"

# ---- a torn zone table block falls back to the previous copy -----------------
# Two commits of table block 0 (all 12 zones): zone 11 at wp 8, then 16.
hm_zop "$dev" reset $(zs 11) > /dev/null
hm_put t1 "$dev" $(zs 11) 8
hm_flush "$dev"
hm_put t2 "$dev" $(( $(zs 11) + 8 )) 8
hm_flush "$dev"
check "remove" dm_remove "$name"
# Slot A of block 0 is backing block 1, slot B block 2; gen at offset 8.
slots=$(hm_newfile 16)
dd if="$back" of="$slots" bs=4096 skip=1 count=2 iflag=direct status=none
read -r ga gb <<< "$(od -A n -t u8 -j 8 -N 8 "$slots") $(od -A n -t u8 -j $((4096 + 8)) -N 8 "$slots")"
if [ "${ga:-0}" -gt 0 ] && [ "${gb:-0}" -gt 0 ] && [ "$ga" != "$gb" ]; then
	ok "both slots of table block 0 hold a copy (gens $ga, $gb)"
else
	not_ok "both slots of table block 0 hold a copy" "gens '$ga' '$gb'"
fi
[ "${ga:-0}" -gt "${gb:-0}" ] && newer=1 older=2 || { newer=2; older=1; }
# Tear the newer copy: one flipped byte in its records.
printf '\x5a' | dd of="$back" bs=1 seek=$((newer * 4096 + 2000)) conv=notrunc status=none
hm_flush "$back"
check "create over a torn newer copy" hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}"
assert_cw "the previous copy was loaded: zone 11 at its first commit" "$dev" $(zs 11) "cl 8"
hm_assert_read "its data up to that commit" "$dev" $(zs 11) "$t1"
hm_assert_zero "nothing beyond it" "$dev" $(( $(zs 11) + 8 )) 8
check "remove" dm_remove "$name"
# Tear both copies: refused.
printf '\x5a' | dd of="$back" bs=1 seek=$((older * 4096 + 2000)) conv=notrunc status=none
hm_flush "$back"
mark=$(kmsg_mark hm-mark)
out=$(hm_create "$name" $LEN "$back" $ZS "${OPTS[@]}" 2>&1); rc=$?
log=$(dmesg_since "$mark")
assert_errno "both copies torn: the table is refused" "failed" "$out" $rc
[[ $log == *"zone table block 0 is corrupt in both copies"* ]] &&
	ok "... and the kernel log names the block" ||
	not_ok "... and the kernel log names the block" "$log"
hm_dm_exists "$name" && dm_remove "$name"

# ---- a zone table of many blocks -------------------------------------------
# 10240 zones of 4 KiB: 21 table blocks (508 zones each), more than one
# commit batch (16 blocks) and one load batch (8 blocks), and a short
# last block (80 zones). Zone management of thousands of zones at once
# dirties them all.
MNZ=10240
mname=t_${TID}_many
M=/dev/mapper/$mname
mback=$(new_backing 48) || bail "no backing device"
hm_create "$mname" $((MNZ * 8)) "$mback" 8 format || bail "cannot create the many-zone device"
out=$(hm_zop "$M" finish 0 $MNZ); rc=$?
assert_eq "finish all $MNZ zones" "0" "$rc${out:+ $out}"
out=$(hm_zop "$M" reset 0 5000); rc=$?
assert_eq "reset zones 0-4999" "0" "$rc${out:+ $out}"
hm_put mz "$M" $((4999 * 8)) 8 "fill zone 4999 with one 4 KiB write"
hm_flush "$M"
assert_eq "status: full zones" 5241 "$(hm_stat "$M" full)"
for round in "remove/create" "a second remove/create"; do
	check "remove ($round)" dm_remove "$mname"
	check "create again ($round)" hm_create "$mname" $((MNZ * 8)) "$mback" 8
	assert_eq "after $round: full zones" 5241 "$(hm_stat "$M" full)"
	assert_eq "after $round: zones at table block edges (507 508 4999 5000 5079 5080 10160 10239)" \
		"em 0 em 0 fu 8 fu 8 fu 8 fu 8 fu 8 fu 8" \
		"$(hm_cw "$M" $((507 * 8)) $((508 * 8)) $((4999 * 8)) $((5000 * 8)) \
			$((5079 * 8)) $((5080 * 8)) $((10160 * 8)) $((10239 * 8)))"
	hm_assert_read "after $round: zone 4999 data" "$M" $((4999 * 8)) "$mz"
	n=$(blkzone report "$M" | grep -c 'zcond: *1(em)')
	assert_eq "after $round: empty zones in the report" 4999 "$n"
	# Change a zone in the last, short table block before the next round.
	hm_zop "$M" reset $((10239 * 8)) > /dev/null
	hm_zop "$M" finish $((10239 * 8)) > /dev/null
done

dmesg_check "no kernel warnings"
_show_result
