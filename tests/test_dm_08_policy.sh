#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 400
# SLOW: 1
#
# Drive-managed dm-smr: each cleaning policy cleans the bands in the order
# docs/dm-smr.rst gives it, read from smrd's clean_start events, both on
# the state built by writes and on the state loaded from disk (remove and
# create again). The policies keep their bands in structures updated as
# slots come and go (a fifo list, a heap, cost-benefit's buckets by slot
# count); this checks they pick what a scan of every band would.
#
# Four bands get single-block cached writes, in this order (seq_bypass off,
# one sequence number per write, from 1 on a new format):
#   band 4: 2 writes (seq 1-2)   band 1: 8 writes (seq 3-10)
#   band 6: 4 writes (seq 11-14) band 2: 1 write  (seq 15)
# fifo (oldest slot first):        4 1 6 2
# greedy (most slots, lowest first): 1 6 4 2
# cost-benefit (slots x age, now 16): band 1 scores 104, then band 4 (30,
#   ahead of band 6's 20 as long as cleaning advances the sequence by
#   less than 5), band 6, band 2:  1 4 6 2

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"
. "$(dirname "$0")/lib/nl.sh"

_prep_test "dm: cleaning policies pick bands in their documented order"
dms_prep
nl_prep

LEN=$((16 * 2048))
BAND=2048			# 1 MiB bands, 256 blocks
CACHE=4096			# 512 slots
read -r _ NEED <<< "$(dms_need $LEN $BAND $CACHE)"
back=$(new_backing $(( (NEED + 2047) / 2048 ))) || bail "no backing device"
N=t_${TID}
D=/dev/mapper/$N
EV=$T_WORK/events.json

# write_band BAND COUNT: COUNT single-block writes in BAND, never at its
# start (block 1 + i), each flushed on its own.
write_band() {
	local band=$1 n=$2 i
	for i in $(seq 1 "$n"); do
		dd if=/dev/urandom of="$D" bs=4096 count=1 seek=$((band * 256 + i)) \
			oflag=direct,dsync status=none || return 1
	done
}

# run POLICY RELOAD WANT: format, write the pattern, (reload,) clean, and
# compare the order of clean_start bands with WANT.
run() {
	local policy=$1 reload=$2 want=$3 desc got
	desc="$policy${reload:+ after a reload}"
	dms_create "$N" $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0 \
		seq_bypass off policy "$policy" format ||
		{ not_ok "$desc: create"; return; }
	if ! { write_band 4 2 && write_band 1 8 && write_band 6 4 &&
	       write_band 2 1; }; then
		not_ok "$desc: writes"
		dm_remove "$N"
		return
	fi
	dms_expect "$desc: 4 dirty bands, 15 slots used" "$D" \
		"dirty_bands == 4" "cache_used == 15"
	if [ -n "$reload" ]; then
		check "$desc: remove" dm_remove "$N"
		dms_create "$N" $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0 \
			seq_bypass off policy "$policy" ||
			{ not_ok "$desc: create again"; return; }
		dms_expect "$desc: the reload kept 4 dirty bands" "$D" "dirty_bands == 4"
	fi
	smrd_start "$EV" || { not_ok "$desc: smrd"; dm_remove "$N"; return; }
	check "$desc: clean message" dms_msg "$D" clean
	dms_wait_clean "$D" 60 > /dev/null ||
		not_ok "$desc: cleaned within 60 s" "$(dmsetup status "$N")"
	sleep 0.5
	smrd_stop
	got=$(jq -r "select(.event == \"clean_start\" and .device == \"$N\") | .band" "$EV" |
		tr '\n' ' ' | sed 's/ $//')
	assert_eq "$desc: bands cleaned in order" "$want" "$got"
	check "$desc: remove" dm_remove "$N"
}

run fifo "" "4 1 6 2"
run greedy "" "1 6 4 2"
run cost-benefit "" "1 4 6 2"
run fifo reload "4 1 6 2"
run greedy reload "1 6 4 2"
run cost-benefit reload "1 4 6 2"

# cost-benefit's score (slots x age) needs more than 64 bits on a drive
# written long enough. Band 4 gets a write (seq 1), the sequence then
# jumps by 2^63 (the module's test hook seq_jump), band 4 a second write
# (seq 2^63 + 2) and band 1 eight (2^63 + 3 to 2^63 + 10). At now
# 2^63 + 11, band 4 scores 2 x (2^63 + 10) = 2^64 + 20 and band 1 only
# 8 x 8 = 64: band 4 first. (A score wrapped at 2^64 is 20: band 1 first.)
JUMP=$(test_hook dm-smr seq_jump) || bail "no test hook seq_jump"
desc="cost-benefit with scores past 2^64"
if dms_create "$N" $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0 \
	seq_bypass off policy cost-benefit format &&
   write_band 4 1 && echo 9223372036854775808 > $JUMP &&
   dd if=/dev/urandom of="$D" bs=4096 count=1 seek=$((4 * 256 + 2)) \
	oflag=direct,dsync status=none && write_band 1 8; then
	assert_eq "$desc: the jump was taken" 0 "$(cat $JUMP)"
	dms_expect "$desc: 2 dirty bands, 10 slots used" "$D" \
		"dirty_bands == 2" "cache_used == 10"
	if smrd_start "$EV"; then
		check "$desc: clean message" dms_msg "$D" clean
		dms_wait_clean "$D" 60 > /dev/null ||
			not_ok "$desc: cleaned within 60 s" "$(dmsetup status "$N")"
		sleep 0.5
		smrd_stop
		got=$(jq -r "select(.event == \"clean_start\" and .device == \"$N\") | .band" "$EV" |
			tr '\n' ' ' | sed 's/ $//')
		assert_eq "$desc: bands cleaned in order" "4 1" "$got"
	else
		not_ok "$desc: smrd"
	fi
	check "$desc: remove" dm_remove "$N"
else
	not_ok "$desc: create and write"
	echo 0 > $JUMP
	dm_remove "$N" 2>/dev/null
fi

dmesg_check
_show_result
