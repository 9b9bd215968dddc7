#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
#
# Drive-managed dm-smr: two writes in flight to the same block, both
# acknowledged and flushed, read the same before and after the device is
# loaded again from its metadata (dmsetup remove, create). The newest copy
# in memory and the newest copy on disk must be the same one, whichever
# write completes first.
#
# Two threads write patterns A and B to the same blocks, released
# together block by block (tests/lib/dm_race.py), to blocks that are not
# at a band start (those go to the cache, not the band). Then flush, read
# every block, remove and create the device, read again.
#
# Then a hot band: four passes over the same 255 blocks of one band, each
# in its own order, leave 1020 slots of one band in the cache, four copies
# of each block. A load must index the newest copy of each block (the
# rebuild resolves them per block, not by sorting every record), and a
# cleaning must free them all (it frees a band's slots in batches, 64 at
# a time here through the test hook free_batch_slots).

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"

_prep_test "dm: racing writes to one block read the same after a reload"
dms_prep
require_cmd python3

LEN=$((64 * 2048))
BAND=2048			# 1 MiB bands, 256 blocks
CACHE=16384			# 2048 slots: room for every round
ROUNDS=3
PER_ROUND=128
read -r _ NEED <<< "$(dms_need $LEN $BAND $CACHE)"
back=$(new_backing $(( (NEED + 2047) / 2048 ))) || bail "no backing device"
N=t_${TID}
D=/dev/mapper/$N
# idle_ms 0: no background cleaning; the cache keeps both copies.
dms_create "$N" $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0 format ||
	bail "cannot create the device"

RACE=$SMR_ROOT/tests/lib/dm_race.py
mismatch=0 other=0 total=0
for r in $(seq 1 $ROUNDS); do
	# Blocks 1 + 2 * i + r of each band: never a band start, new each round.
	blocks=()
	for i in $(seq 0 $((PER_ROUND - 1))); do
		band=$((i % 64))
		blocks+=($((band * 256 + 1 + 2 * (i / 64) + 4 * r)))
	done
	if ! out=$(python3 "$RACE" write "$D" "${blocks[@]}" 2>&1); then
		not_ok "round $r: racing writes succeed" "$out"
		continue
	fi
	check "round $r: flush" sync "$D"
	python3 "$RACE" read "$D" "${blocks[@]}" > "$T_WORK/before.$r"
	check "round $r: remove" dm_remove "$N"
	dms_create "$N" $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0 ||
		bail "round $r: cannot create the device again"
	python3 "$RACE" read "$D" "${blocks[@]}" > "$T_WORK/after.$r"
	n=$(diff "$T_WORK/before.$r" "$T_WORK/after.$r" | grep -c '^>')
	o=$(cat "$T_WORK/before.$r" "$T_WORK/after.$r" | grep -c ' other$')
	a=$(grep -c ' A$' "$T_WORK/before.$r")
	diag "round $r: $PER_ROUND blocks, $a read A and $((PER_ROUND - a)) B before the reload; $n changed"
	[ "$n" = 0 ] || diag "$(diff "$T_WORK/before.$r" "$T_WORK/after.$r" | head -6)"
	mismatch=$((mismatch + n))
	other=$((other + o))
	total=$((total + PER_ROUND))
done
assert_eq "blocks reading another write after the reload (of $total)" 0 "$mismatch"
assert_eq "blocks reading neither write" 0 "$other"

# ---- A hot band ---------------------------------------------------------------
# A load walks each band's records from the highest slot down. For it to
# meet older copies first, the hot passes must wrap around the end of the
# cache: 1000 slots of filler (band 20, cleaned away again) first take
# the allocation cursor from about slot 768 (after the rounds above) to
# about 1768 of 2048, so the first pass lands at the top of the cache and
# the later ones wrap to its bottom.
HOT=$((10 * 256 + 1)) HOTN=255 HOTR=4
hotcheck() { python3 "$RACE" hotcheck "$D" $HOT $HOTN $HOTR; }
hotclean() {	# DESC: a manual cleaning that must empty the cache
	check "$1: message clean" dms_msg "$D" clean
	dms_wait_clean "$D" 120 > /dev/null ||
		not_ok "$1: the cache empties" "$(dms_stats "$D")"
}
hotclean "hot band: before it"
check "hot band: 1000 slots of filler" python3 "$RACE" hot "$D" $((20 * 256 + 1)) 250 4
hotclean "hot band: the filler"
if out=$(python3 "$RACE" hot "$D" $HOT $HOTN $HOTR 2>&1); then
	ok "hot band: $HOTR passes over $HOTN blocks of band 10"
else
	not_ok "hot band: $HOTR passes over $HOTN blocks of band 10" "$out"
fi
check "hot band: flush" sync "$D"
dms_expect "hot band: every copy is in the cache" "$D" \
	"cache_used == $((HOTN * HOTR))" "cache_live == $HOTN" "dirty_bands == 1"
assert_eq "hot band: blocks not holding their last write" 0 "$(hotcheck)"
check "hot band: remove" dm_remove "$N"
dms_create "$N" $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0 ||
	bail "hot band: cannot create the device again"
dms_expect "hot band: the load found every copy, and one live block each" "$D" \
	"cache_used == $((HOTN * HOTR))" "cache_live == $HOTN" "dirty_bands == 1"
assert_eq "hot band: blocks not holding their last write after the load" 0 "$(hotcheck)"
BATCH=$(test_hook dm-smr free_batch_slots) || bail "no test hook free_batch_slots"
batch0=$(cat $BATCH)
echo 64 > $BATCH
assert_eq "hot band: free_batch_slots set to 64" 64 "$(cat $BATCH)"
hotclean "hot band: freed 64 slots at a time"
echo "$batch0" > $BATCH
dms_expect "hot band: cleaned, every slot free" "$D" \
	"cache_used == 0" "cache_live == 0" "dirty_bands == 0" "rmw_manual >= 1"
assert_eq "hot band: blocks not holding their last write after the cleaning" 0 "$(hotcheck)"

dms_load "$D"
assert_eq "no write failed" 0 "${DMS[errors]:-?}"

dmesg_check
_show_result
