#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SMOKE: 1
# TIMEOUT: 360
#
# Drive-managed dm-smr keeps data: fio writes (4 KiB random and 1 MiB
# sequential, crc32c verified) across a cache that fills up (foreground
# cleaning), background cleaning, a manual cleaning with reads verified
# while it runs, and dmsetup remove/create (with a clean and with a dirty
# cache; fio --verify_only with the same seed re-checks every block).
# Also with seq_bypass off, and with the policy switched from greedy to
# cost-benefit by message while writes go on; with a slot search narrowed
# to a quarter of the cache; 1 MiB bios reaching the backing whole, and
# bios across a band's end; and a 20 TiB device, whose block numbers need
# more than 32 bits, across remove/create and cleaning.
#
# Geometry: 128 MiB device, 4 MiB bands (32), 4 MiB cache (1024 slots):
# small, so that a few MiB of 4 KiB writes fill it (TCG is slow).

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"

_prep_test "dm: data survives cache fill, cleaning (fg, bg, manual) and remove/create"
dms_prep
require_cmd fio

LEN=$((128 * 2048))
BAND=8192
CACHE=8192
MiB=1048576
read -r _ NEED <<< "$(dms_need $LEN $BAND $CACHE)"
BACK_MB=$(( (NEED + 2047) / 2048 ))

# verify DESC DEV JOB...: fio --verify_only of a job (dms_fio_job words).
verify() {
	local desc=$1
	shift
	# shellcheck disable=SC2046 # word splitting on purpose
	run_fio "$desc" $(dms_fio_job "$@") --verify_only
}
# write DESC DEV JOB...: write and verify a job.
write() {
	local desc=$1
	shift
	# shellcheck disable=SC2046
	run_fio "$desc" $(dms_fio_job "$@") --do_verify=1
}

# ---- A: fifo, seq_bypass on, idle_ms 300 -------------------------------------
A=t_${TID}_a
backA=$(new_backing $BACK_MB) || bail "no backing device"
TA=(0 $LEN "$backA" $BAND cache_sectors $CACHE idle_ms 300)
dms_create "$A" "${TA[@]:1}" || bail "cannot create $A"
DA=/dev/mapper/$A

# R1: 6 MiB of random 4 KiB writes over 16 MiB: 1.5 times the cache.
R1=("$DA" 0 $((16 * MiB)) rand 6M)
S1=("$DA" $((16 * MiB)) $((32 * MiB)) seq)
t0=$SECONDS
write "A: 6 MiB random writes over a 4 MiB cache, verified" "${R1[@]}"
diag "R1 took $((SECONDS - t0)) s: $(dms_stats "$DA")"
dms_expect "A: the cache filled up and bands were cleaned in the foreground" "$DA" \
	"rmw_fg > 0" "host_write_sectors == $((6 * 2048))" \
	"cache_write_sectors > $((5 * 2048))"
write "A: 32 MiB of sequential 1 MiB writes, verified" "${S1[@]}"
if w=$(dms_wait_clean "$DA" 60); then
	ok "A: background cleaning emptied the cache in $w s"
else
	not_ok "A: background cleaning empties the cache within 60 s" "$(dms_stats "$DA")"
fi
dms_expect "A: cleaned in the background" "$DA" "rmw_bg > 0" "cache_live == 0" "dirty_bands == 0"

# remove/create with a clean cache.
check "A: remove" dm_remove "$A"
check "A: create again over the same backing device" dms_create "$A" "${TA[@]:1}"
dms_expect "A: recreated with an empty cache" "$DA" "cache_used == 0" "cache_live == 0"
verify "A: R1 intact after background cleaning and remove/create" "${R1[@]}"
verify "A: S1 intact after background cleaning and remove/create" "${S1[@]}"
check "A: remove" dm_remove "$A"

# ---- B: seq_bypass off, idle_ms 0: a dirty cache across remove/create ------
B=t_${TID}_b
backB=$(new_backing $BACK_MB) || bail "no backing device"
TB=(0 $LEN "$backB" $BAND cache_sectors $CACHE idle_ms 0 seq_bypass off)
dms_create "$B" "${TB[@]:1}" || bail "cannot create $B"
DB=/dev/mapper/$B
BS1=("$DB" 0 $((2 * MiB)) seq)
BR1=("$DB" $((32 * MiB)) $((16 * MiB)) rand 1M)
BS2=("$DB" $((64 * MiB)) $((8 * MiB)) seq)
write "B: 2 MiB sequential writes into the cache, verified" "${BS1[@]}"
write "B: 1 MiB random writes, verified" "${BR1[@]}"
dms_expect "B: seq_bypass off: everything went to the cache, nothing cleaned" "$DB" \
	"bypass_write_sectors == 0" "cache_write_sectors == $((3 * 2048))" \
	"cache_live == 768" "rmw_bg == 0" "rmw_fg == 0"
dms_load "$DB"
live=${DMS[cache_live]} ext=${DMS[index_extents]} used=${DMS[cache_used]}
check "B: remove with a dirty cache" dm_remove "$B"
check "B: create again" dms_create "$B" "${TB[@]:1}"
dms_expect "B: the cache index was rebuilt from the slot records" "$DB" \
	"cache_used == $used" "cache_live == $live" "index_extents == $ext"
verify "B: sequential data intact after remove/create (from the cache)" "${BS1[@]}"
verify "B: random data intact after remove/create (from the cache)" "${BR1[@]}"
# 8 MiB more, sequential, through a 4 MiB cache: foreground cleaning.
write "B: 8 MiB sequential writes through the cache, verified" "${BS2[@]}"
dms_expect "B: sequential writes filled the cache: foreground cleaning" "$DB" \
	"rmw_fg > 0" "bypass_write_sectors == 0" "rmw_bg == 0"
check "B: message clean" dms_msg "$DB" clean
if w=$(dms_wait_clean "$DB" 60); then ok "B: clean emptied the cache in $w s"
else not_ok "B: clean empties the cache within 60 s" "$(dms_stats "$DB")"; fi
verify "B: BS1 intact after cleaning" "${BS1[@]}"
verify "B: BR1 intact after cleaning" "${BR1[@]}"
verify "B: BS2 intact after cleaning" "${BS2[@]}"
check "B: remove" dm_remove "$B"

# ---- C: greedy, then cost-benefit by message ------------------------------
C=t_${TID}_c
backC=$(new_backing $BACK_MB) || bail "no backing device"
TC=(0 $LEN "$backC" $BAND cache_sectors $CACHE idle_ms 0 policy greedy)
dms_create "$C" "${TC[@]:1}" || bail "cannot create $C"
DC=/dev/mapper/$C
CR1=("$DC" 0 $((16 * MiB)) rand 5M)
CR2=("$DC" $((64 * MiB)) $((64 * MiB)) rand 5M)
write "C: greedy: 5 MiB random writes, verified" "${CR1[@]}"
dms_expect "C: greedy cleaned in the foreground" "$DC" "policy == greedy" "rmw_fg > 0"
fg1=${DMS[rmw_fg]}
# Switch while writes are in flight.
# shellcheck disable=SC2046
(cd "$T_WORK" && fio --name=job $(dms_fio_job "${CR2[@]}") --do_verify=1 \
	> "$T_WORK/c2.log" 2>&1) &
fpid=$!
sleep 2
check "C: message policy cost-benefit during writes" dms_msg "$DC" policy cost-benefit
dms_expect "C: status shows cost-benefit" "$DC" "policy == cost-benefit"
wait $fpid
rc=$?
if [ $rc = 0 ]; then ok "C: writes during the switch verified"
else not_ok "C: writes during the switch verified" "$(tail -n 30 "$T_WORK/c2.log")"; fi
dms_expect "C: cost-benefit cleaned in the foreground" "$DC" "rmw_fg > $fg1" "policy == cost-benefit"
t=$(dmsetup table "$C")
if [[ $t == *" policy cost-benefit"* ]]; then ok "C: the table line shows the new policy"
else not_ok "C: the table line shows the new policy" "$t"; fi
check "C: message policy fifo" dms_msg "$DC" policy fifo
dms_expect "C: status shows fifo" "$DC" "policy == fifo"
# Manual cleaning of the full cache (random blocks over many bands) with
# reads verified all through it: a reader loop (fio --verify_only of CR2,
# then of CR1, again and again) starts before the "clean" message and is
# stopped only after the cache is empty, so every band rewrite runs under
# reads, whatever the host's speed. idle_ms 0: no background cleaning can
# get there first.
dms_expect "C: the cache is full of random blocks" "$DC" "dirty_bands > 8" \
	"cache_used > 768" "state == idle"
man0=${DMS[rmw_manual]} used0=${DMS[cache_used]}
: > "$T_WORK/reads.log"
(
	n=0
	while [ ! -e "$T_WORK/stop-reads" ]; do
		for job in CR2 CR1; do
			declare -n J=$job
			# shellcheck disable=SC2046 # word splitting on purpose
			if (cd "$T_WORK" && fio --name=job $(dms_fio_job "${J[@]}") --verify_only \
				> "$T_WORK/reader.out" 2>&1); then
				echo "pass $job" >> "$T_WORK/reads.log"
			else
				echo "FAIL $job" >> "$T_WORK/reads.log"
				cat "$T_WORK/reader.out" >> "$T_WORK/reads.log"
			fi
			unset -n J
		done
		n=$((n + 1))
	done
) &
rpid=$!
sleep 1		# the reader is under way before cleaning starts
check "C: message clean" dms_msg "$DC" clean
if w=$(dms_wait_clean "$DC" 60); then ok "C: clean emptied the cache under reads in $w s"
else not_ok "C: clean empties the cache within 60 s" "$(dms_stats "$DC")"; fi
touch "$T_WORK/stop-reads"
wait $rpid
passes=$(grep -c '^pass' "$T_WORK/reads.log")
fails=$(grep -c '^FAIL' "$T_WORK/reads.log")
dms_load "$DC"
diag "C: $passes verified read passes ran while $((DMS[rmw_manual] - man0)) bands were cleaned ($used0 slots)"
if [ "$fails" = 0 ] && [ "$passes" -gt 0 ]; then
	ok "C: reads during the cleaning returned the right data ($passes passes)"
else
	not_ok "C: reads during the cleaning returned the right data" "$(head -n 40 "$T_WORK/reads.log")"
fi
dms_expect "C: the cleaning ran under the reads" "$DC" "rmw_manual > $man0" "cache_used == 0"
dms_expect "C: cleaned by the message only" "$DC" "rmw_manual > 0" "rmw_bg == 0" "dirty_bands == 0"
verify "C: CR2 intact after cleaning" "${CR2[@]}"
diag "C: $(dms_stats "$DC")"

# ---- E: a slot search that sees only part of the cache ----------------------
# The search for a write's free slots looks at 2^20 slots from where the
# last one ended, so that it never walks a large cache with interrupts off
# (dm-smr-dm-cache.c). The test hook slot_search_window makes that 256
# slots here (of 1024): writes of 4 to 64 KiB fragment the cache, a search
# fails in its stretch while other stretches have room, the write waits
# for a cleaning and the next search starts further on. Data must survive
# it all, and a remove/create.
WIN=$(test_hook dm-smr slot_search_window) || bail "no test hook slot_search_window"
E=t_${TID}_e
backE=$(new_backing $BACK_MB) || bail "no backing device"
TE=(0 $LEN "$backE" $BAND cache_sectors $CACHE idle_ms 0 seq_bypass off)
dms_create "$E" "${TE[@]:1}" || bail "cannot create $E"
DE=/dev/mapper/$E
win0=$(cat $WIN)
echo 256 > $WIN
assert_eq "E: slot_search_window set to 256" 256 "$(cat $WIN)"
EJ=($(dms_fio_job "$DE" 0 $((LEN * 512)) rand 12M) --bsrange=4k-64k --blockalign=4k)
run_fio "E: 12 MiB of 4-64 KiB random writes over a 4 MiB cache, verified" "${EJ[@]}" --do_verify=1
echo "$win0" > $WIN
dms_expect "E: the cache filled and was cleaned in the foreground" "$DE" "rmw_fg > 0" "errors == 0"
check "E: remove" dm_remove "$E"
check "E: create again" dms_create "$E" "${TE[@]:1}"
run_fio "E: the data again after remove/create" "${EJ[@]}" --verify_only
check "E: remove" dm_remove "$E"

# A cache no larger than the window is searched whole: a free run across
# the cursor is found too. (Searching [cursor, end) and then only
# [0, cursor) missed it: a 1 MiB write into an empty 1 MiB cache with the
# cursor at slot 1 waited for a cleaning that had nothing to clean, for
# ever.)
F=t_${TID}_f
backF=$(new_backing $(( $(dms_need $((16 * 2048)) 2048 2048 | cut -d' ' -f2) / 2048 + 1 ))) ||
	bail "no backing device"
dms_create "$F" $((16 * 2048)) "$backF" 2048 cache_sectors 2048 idle_ms 0 seq_bypass off ||
	bail "cannot create $F"
DF=/dev/mapper/$F
F1=$(write_data "$DF" 4096 4096)
check "F: message clean" dms_msg "$DF" clean
dms_wait_clean "$DF" 60 > /dev/null || not_ok "F: the 4 KiB write cleaned" "$(dms_stats "$DF")"
head -c 1048576 /dev/urandom > "$T_WORK/f2"
if timeout 60 dd if="$T_WORK/f2" of="$DF" bs=1M seek=1 oflag=direct status=none; then
	ok "F: a 1 MiB write into the empty 1 MiB cache, its cursor at slot 1"
else
	not_ok "F: a 1 MiB write into the empty 1 MiB cache, its cursor at slot 1" \
		"dd failed or hung for 60 s" "$(dms_stats "$DF")"
fi
dms_expect "F: all of it in the cache" "$DF" "cache_used == 256"
assert_data "F: the 1 MiB write reads back" "$DF" "$T_WORK/f2" 1048576
assert_data "F: the 4 KiB write reads back" "$DF" "$F1" 4096

# ---- G: large bios, cut at 1 MiB and at band ends by map() -------------------
# Over a null_blk whose requests hold 124 KiB, behind a dm-linear device
# whose counters count the bios the target sends. A 1 MiB write or read
# reaches the backing as one bio, as dm-linear's would (until 2026-12-01
# dm cut each into nine at the queue's max_sectors, because the target set
# max_io_len); one that crosses a 1 MiB boundary and a band's end is cut
# there and keeps its data.
nbG=$(new_nullb $((BACK_MB + 1)) max_sectors=248) || bail "no null_blk"
BG=t_${TID}_gb
dm_create "$BG" "0 $NEED linear $nbG 0" || bail "cannot map the null_blk"
G=t_${TID}_g
check "G: create over null_blk (124 KiB requests)" dms_create "$G" $LEN /dev/mapper/$BG $BAND cache_sectors $CACHE idle_ms 0 format
DG=/dev/mapper/$G
bgstat() { awk -v f="$1" '{ print $f }' "/sys/block/$(basename "$(readlink -f /dev/mapper/$BG)")/stat"; }
w0=$(bgstat 5) r0=$(bgstat 1)
G1=$(write_data "$DG" 0 $((8 * MiB)))
w1=$(bgstat 5)
assert_data "G: 8 MiB in 1 MiB writes reads back" "$DG" "$G1" 0
r1=$(bgstat 1)
# 8 writes (a metadata commit may add one or two); 8 reads
if [ $((w1 - w0)) -ge 8 ] && [ $((w1 - w0)) -le 10 ] && [ $((r1 - r0)) = 8 ]; then
	ok "G: a 1 MiB write or read reaches the backing as one bio ($((w1 - w0)) writes, $((r1 - r0)) reads for 8 MiB)"
else
	not_ok "G: a 1 MiB write or read reaches the backing as one bio" "$((w1 - w0)) writes and $((r1 - r0)) reads for 8 MiB of 1 MiB bios (8 each expected)"
fi
# 3 MiB from 3.5 MiB: each 1 MiB bio crosses a 1 MiB boundary, the first
# the end of band 0 (4 MiB bands); then the same again through the cache
# (no longer sequential in band 1)
G2=$(write_data "$DG" $((7 * MiB / 2)) $((3 * MiB)))
assert_data "G: 3 MiB across a band's end, unaligned to 1 MiB, reads back" "$DG" "$G2" $((7 * MiB / 2))
G3=$(write_data "$DG" $((7 * MiB / 2)) $((3 * MiB)))
assert_data "G: the same range rewritten (cache and band) reads back" "$DG" "$G3" $((7 * MiB / 2))
head -c $((7 * MiB / 2)) "$G1" > "$T_WORK/g1head"
assert_data "G: the first 3.5 MiB kept" "$DG" "$T_WORK/g1head" 0
check "G: remove" dm_remove "$G"

# ---- D: 20 TiB, block numbers past 32 bits ----------------------------------
# 64 MiB bands, a 64 MiB cache. Only what the test touches is stored: the
# backing is the metadata, cache and spare band on the scratch disk, dm-zero
# up to the bands at 16 TiB (block 2^32), two of those bands and the last
# one on the scratch disk again, dm-zero between. Three writes land past
# block 2^32 through the cache; they must read back, across a remove and
# create (the slot records keep the block's upper bits), and after a
# cleaning wrote them into their bands.
DBAND=131072
DLEN=$((327680 * DBAND))		# 20 TiB: 327680 bands
DCACHE=131072
read -r DMD _ <<< "$(dms_need $DLEN $DBAND $DCACHE)"
BSTART=$((DMD + DCACHE + DBAND))	# where band 0 starts on the backing
HIB=262144				# the band at 16 TiB
LASTB=$((DLEN / DBAND - 1))
modprobe dm-zero 2> /dev/null
lo=$(_alloc "$SMR_SCRATCH_DISK" $BSTART) && hi=$(_alloc "$SMR_SCRATCH_DISK" $((2 * DBAND))) &&
	last=$(_alloc "$SMR_SCRATCH_DISK" $DBAND) || bail "no room for the 20 TiB device's backing"
HUGE=t_${TID}_huge
dm_create "$HUGE" "0 $BSTART linear $SMR_SCRATCH_DISK $lo
$BSTART $((HIB * DBAND)) zero
$((BSTART + HIB * DBAND)) $((2 * DBAND)) linear $SMR_SCRATCH_DISK $hi
$((BSTART + (HIB + 2) * DBAND)) $(((LASTB - HIB - 2) * DBAND)) zero
$((BSTART + LASTB * DBAND)) $DBAND linear $SMR_SCRATCH_DISK $last" || bail "cannot create the sparse backing"
D=t_${TID}_d
TD=("$D" $DLEN /dev/mapper/$HUGE $DBAND cache_sectors $DCACHE idle_ms 0 seq_bypass off)
if ! dms_create "${TD[@]}" format; then
	not_ok "D: create a 20 TiB drive-managed device" "$(dmesg | tail -n 3)"
	dmesg_check
	_show_result
	exit
fi
ok "D: create a 20 TiB drive-managed device"
DD=/dev/mapper/$D
B32=$((1 << 44))			# byte offset of block 2^32
D1=$(write_data "$DD" $B32 4096)
D2=$(write_data "$DD" $((B32 + DBAND * 512 + 5 * 4096)) 65536)
D3=$(write_data "$DD" $((DLEN * 512 - 4096)) 4096)
dms_expect "D: the writes went to the cache (1 + 16 + 1 blocks)" "$DD" "cache_used == 18" "dirty_bands == 3"
mem=$(dms_stat "$DD" mem_bytes)
# docs/dm-smr.rst "Memory": 108 bytes a band, 20 a slot, a 4 MiB buffer.
low=$((108 * DLEN / DBAND + 20 * DCACHE / 8 + 4194304))
if [ "${mem:-0}" -ge $low ] && [ "$mem" -le $((low + 2097152)) ]; then
	ok "D: mem_bytes as documented ($mem, the figures give $low)"
else
	not_ok "D: mem_bytes as documented" "mem_bytes ${mem:-none}, the figures give $low (+ up to 2 MiB)"
fi
check "D: remove" dm_remove "$D"
check "D: create again (the cache is read from its slot records)" dms_create "${TD[@]}"
dms_expect "D: the cache index is back" "$DD" "cache_used == 18" "dirty_bands == 3"
assert_data "D: block 2^32 read back" "$DD" "$D1" $B32
assert_data "D: 16 blocks in the next band read back" "$DD" "$D2" $((B32 + DBAND * 512 + 5 * 4096))
assert_data "D: the last block read back" "$DD" "$D3" $((DLEN * 512 - 4096))
check "D: message clean" dms_msg "$DD" clean
if w=$(dms_wait_clean "$DD" 180); then ok "D: the cache emptied in $w s"
else not_ok "D: the cache empties within 180 s" "$(dms_stats "$DD")"; fi
dms_expect "D: three bands rewritten" "$DD" "rmw_manual == 3"
assert_data "D: block 2^32 in its band" "$DD" "$D1" $B32
assert_data "D: 16 blocks in their band" "$DD" "$D2" $((B32 + DBAND * 512 + 5 * 4096))
assert_data "D: the last block in its band" "$DD" "$D3" $((DLEN * 512 - 4096))
assert_zero "D: the rest of the band at 2^32 reads zeros" "$DD" $((B32 + 4096)) 1048576

dmesg_check
_show_result
