#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 360
#
# Drive-managed dm-smr behaves as documented, asserted from its counters:
# whole bands written sequentially bypass the cache and cause no cleaning;
# a random-write burst larger than the cache forces foreground band RMWs
# (wa > 1); an idle device drains its cache in the background, and with
# idle_ms 0 it does not; "clean" drains it; "clear_stats" zeroes the
# counters and keeps the cache state; the table line prints the options
# back; the cache index costs at most 16 bytes per cached block for random
# writes and far less than a byte per block for sequential runs; a band
# fragmented into 1024 extents indexes writes before them (the worker's
# rebuilt array) and reads back.
#
# Geometry: 128 MiB devices, 4 MiB bands (32), 4 MiB cache (1024 slots).

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"

_prep_test "dm: bypass, foreground/background/manual cleaning, counters, table, index size"
dms_prep
require_cmd fio

LEN=$((128 * 2048))
BAND=8192
CACHE=8192
MiB=1048576
read -r _ NEED <<< "$(dms_need $LEN $BAND $CACHE)"
BACK_MB=$(( (NEED + 2047) / 2048 ))

# ---- P: idle_ms 300, seq_bypass on (default) --------------------------------
P=t_${TID}_p
DP=/dev/mapper/$P
backP=$(new_backing $BACK_MB) || bail "no backing device"
dms_create "$P" $LEN "$backP" $BAND cache_sectors $CACHE idle_ms 300 || bail "cannot create $P"
t=$(dmsetup table "$P")
assert_eq "P: the table line prints the options back" \
	"0 $LEN smr $(dms_majmin "$backP") drive-managed $BAND 4 cache_sectors $CACHE idle_ms 300" "$t"
dms_expect "P: a new device: empty cache, zero counters, idle, fifo" "$DP" \
	"nr_bands == 32" "band_sectors == $BAND" "cache_total == 1024" "cache_used == 0" \
	"host_write_sectors == 0" "wa_milli == 0" "state == idle" "policy == fifo"

# Sequential: bands 0-3 whole, in 1 MiB O_DIRECT writes from band start,
# twice (the second pass rewrites the bands from their start again).
seq=$T_WORK/seq.dat
head -c $((16 * MiB)) /dev/urandom > "$seq"
check "P: 16 MiB sequential 1 MiB writes (bands 0-3)" \
	dd if="$seq" of="$DP" bs=1M oflag=direct conv=notrunc status=none
check "P: the same bands rewritten sequentially" \
	dd if="$seq" of="$DP" bs=1M oflag=direct conv=notrunc status=none
sleep 1	# > idle_ms: background cleaning would run now if there were any
dms_expect "P: sequential writes bypassed the cache and caused no cleaning" "$DP" \
	"host_write_sectors == 65536" "bypass_write_sectors == 65536" \
	"cache_write_sectors == 0" "cache_used == 0" "cache_live == 0" \
	"dirty_bands == 0" "rmw_bg == 0" "rmw_fg == 0" "rmw_manual == 0" \
	"clean_write_sectors == 0" "wa_milli == 1000" "state == idle"
assert_data "P: the sequential data reads back" "$DP" "$seq" 0

# Random burst of 6 MiB (4 KiB) over 16 MiB: 1.5 times the cache. A
# poller samples the status meanwhile.
RB=("$DP" $((64 * MiB)) $((16 * MiB)) rand 6M)
check "P: clear_stats" dms_msg "$DP" clear_stats
(
	while :; do
		dmsetup status "$P" 2>/dev/null
		sleep 0.3
	done
) > "$T_WORK/poll.txt" &
ppid=$!
t0=$SECONDS
# shellcheck disable=SC2046 # word splitting on purpose
run_fio "P: 6 MiB random 4 KiB writes, verified" $(dms_fio_job "${RB[@]}") --do_verify=1
burst=$((SECONDS - t0))
dms_load "$DP"
kill $ppid 2>/dev/null
wait $ppid 2>/dev/null
diag "P: burst took $burst s: $(dms_stats "$DP")"
dms_expect "P: the burst forced foreground RMWs, wa > 1" "$DP" \
	"rmw_fg > 0" "clean_ms_fg > 0" "clean_write_sectors > 0" "wa_milli > 1000" \
	"host_write_sectors == $((6 * 2048))"
# (Not "cache_used > 0" here: with idle_ms 300 on a loaded host, background
# cleaning may already have drained it; the poll below shows it filled.)
states=$(awk '{ print $26 }' "$T_WORK/poll.txt" | sort | uniq -c | tr '\n' ' ')
maxused=$(awk '{ split($7, a, "/"); if (a[1] > m) m = a[1] } END { print m + 0 }' "$T_WORK/poll.txt")
diag "P: states seen during the burst: $states; highest cache_used $maxused"
# (A foreground RMW takes ~50 ms on an idle host and frees a quarter of
# the cache: a 0.3 s poll may see neither state clean-fg nor a full cache.
# rmw_fg above is the assertion that the cache filled, as foreground
# cleaning runs only for a write that found no free slot; the poll is a
# diagnostic.)

# Idle: the cache drains in the background. On a slow host, background
# cleaning may already have run in the pauses of fio's verify reads (and
# host writes reset clean_ms_since_busy); four cached blocks written now, in
# bands 25-28 away from their starts, leave something to clean while the
# host is idle.
for k in 0 1 2 3; do
	dd if=/dev/urandom of="$DP" bs=4096 count=1 seek=$((25600 + k * 1024 + 1)) \
		oflag=direct conv=notrunc status=none || not_ok "P: write block $k for the idle drain"
done
if w=$(dms_wait_clean "$DP" 60); then
	ok "P: background cleaning emptied the cache within $w s of idle"
else
	not_ok "P: background cleaning empties the cache within 60 s" "$(dms_stats "$DP")"
fi
diag "P: after idle: $(dms_stats "$DP")"
dms_expect "P: drained in the background: empty index, time counted" "$DP" \
	"rmw_bg > 0" "cache_used == 0" "cache_live == 0" "dirty_bands == 0" \
	"index_extents == 0" "index_bytes == 0" "clean_ms_bg > 0" \
	"clean_ms_since_busy > 0" "state == idle"
busy_ms=-1
dms_load "$DP" && busy_ms=${DMS[clean_ms_since_busy]}
# shellcheck disable=SC2046
run_fio "P: the burst's data intact after cleaning" $(dms_fio_job "${RB[@]}") --verify_only
assert_data "P: the sequential data intact" "$DP" "$seq" 0
dms_expect "P: host reads keep clean_ms_since_busy (they make no cleaning debt)" "$DP" \
	"clean_ms_since_busy == $busy_ms"
# A write starts the count anew: band 0 rewritten from its start, the
# same data (it bypasses the cache: nothing to clean afterwards).
check "P: band 0 rewritten sequentially" \
	dd if="$seq" of="$DP" bs=1M count=4 oflag=direct conv=notrunc status=none
dms_expect "P: a host write resets clean_ms_since_busy" "$DP" \
	"clean_ms_since_busy == 0" "dirty_bands == 0"

# ---- Q: idle_ms 0, seq_bypass off, options in another order ------------------
Q=t_${TID}_q
DQ=/dev/mapper/$Q
backQ=$(new_backing $BACK_MB) || bail "no backing device"
dms_create "$Q" $LEN "$backQ" $BAND seq_bypass off idle_ms 0 cache_sectors $CACHE ||
	bail "cannot create $Q"
assert_eq "Q: the table line prints the options back in canonical order" \
	"0 $LEN smr $(dms_majmin "$backQ") drive-managed $BAND 6 cache_sectors $CACHE idle_ms 0 seq_bypass off" \
	"$(dmsetup table "$Q")"
QR=("$DQ" 0 $((16 * MiB)) rand 1M)
# shellcheck disable=SC2046
run_fio "Q: 1 MiB random 4 KiB writes, verified" $(dms_fio_job "${QR[@]}") --do_verify=1
dms_expect "Q: all 256 blocks cached, index at most 32 bytes per block" "$DQ" \
	"cache_used == 256" "cache_live == 256" "index_extents > 192" \
	"index_bytes <= $((32 * 256))" "index_bytes > 0"
diag "Q: random: index_extents ${DMS[index_extents]}, index_bytes ${DMS[index_bytes]} for ${DMS[cache_live]} blocks"
sleep 2
dms_expect "Q: idle_ms 0: no background cleaning after 2 s idle" "$DQ" \
	"rmw_bg == 0" "rmw_fg == 0" "cache_used == 256" "state == idle"

sync "$DQ"	# fsync: a flush, so a commit
dms_load "$DQ"
used=${DMS[cache_used]} live=${DMS[cache_live]} ext=${DMS[index_extents]}
ib=${DMS[index_bytes]} db=${DMS[dirty_bands]} mem=${DMS[mem_bytes]}
if [ "${DMS[host_write_sectors]}" -gt 0 ] && [ "${DMS[commits]}" -gt 0 ]; then
	ok "Q: counters are non-zero before clear_stats"
else
	not_ok "Q: counters are non-zero before clear_stats" "$(dms_stats "$DQ")"
fi
check "Q: clear_stats" dms_msg "$DQ" clear_stats
exprs=()
for f in "${DMS_COUNTERS[@]}"; do
	[ "$f" = wa ] && f=wa_milli
	exprs+=("$f == 0")
done
dms_expect "Q: clear_stats zeroed every counter" "$DQ" "${exprs[@]}"
dms_expect "Q: clear_stats kept the cache state" "$DQ" \
	"cache_used == $used" "cache_live == $live" "index_extents == $ext" \
	"index_bytes == $ib" "dirty_bands == $db" "mem_bytes == $mem" \
	"nr_bands == 32" "cache_total == 1024"

check "Q: message clean" dms_msg "$DQ" clean
if w=$(dms_wait_clean "$DQ" 60); then ok "Q: clean emptied the cache in $w s"
else not_ok "Q: clean empties the cache within 60 s" "$(dms_stats "$DQ")"; fi
dms_expect "Q: drained by the message only" "$DQ" \
	"rmw_manual > 0" "rmw_manual <= $db" "rmw_bg == 0" "rmw_fg == 0" \
	"clean_ms_bg > 0" "clean_ms_since_busy > 0" "cache_used == 0" \
	"dirty_bands == 0" "index_bytes == 0"
diag "Q: after clean: $(dms_stats "$DQ")"
# shellcheck disable=SC2046
run_fio "Q: data intact after the manual cleaning" $(dms_fio_job "${QR[@]}") --verify_only

# Sequential runs written into the cache (seq_bypass off): one extent per
# band, far less than a byte of index per block.
seq2=$T_WORK/seq2.dat
head -c $((2 * MiB)) /dev/urandom > "$seq2"
check "Q: 2 MiB sequential 1 MiB writes (band 8)" \
	dd if="$seq2" of="$DQ" bs=1M oflag=direct,seek_bytes seek=$((32 * MiB)) conv=notrunc status=none
dms_expect "Q: sequential runs: cached, a few extents, < 1 byte of index per block" "$DQ" \
	"cache_write_sectors == 4096" "bypass_write_sectors == 0" \
	"cache_live == 512" "index_extents <= 2" "index_bytes < 512" "index_bytes > 0"
diag "Q: sequential: index_extents ${DMS[index_extents]}, index_bytes ${DMS[index_bytes]} for ${DMS[cache_live]} blocks"
assert_data "Q: the sequential data reads back from the cache" "$DQ" "$seq2" $((32 * MiB))
check "Q: message clean" dms_msg "$DQ" clean
w=$(dms_wait_clean "$DQ" 60) || not_ok "Q: clean empties the cache within 60 s" "$(dms_stats "$DQ")"
assert_data "Q: the sequential data reads back from the bands" "$DQ" "$seq2" $((32 * MiB))

# ---- R: every option; the printed table loads back unchanged ---------------
R=t_${TID}_r
DR=/dev/mapper/$R
RLEN=$((32 * 2048))
read -r _ RNEED <<< "$(dms_need $RLEN 2048 4096)"
backR=$(new_backing $(( (RNEED + 2047) / 2048 ))) || bail "no backing device"
dms_create "$R" $RLEN "$backR" 2048 format policy cost-benefit seq_bypass on idle_ms 5 \
	cache_sectors 4096 || bail "cannot create $R"
want="0 $RLEN smr $(dms_majmin "$backR") drive-managed 2048 8 cache_sectors 4096 idle_ms 5 policy cost-benefit seq_bypass on"
assert_eq "R: every option printed back, format not" "$want" "$(dmsetup table "$R")"
dms_expect "R: status shows the policy" "$DR" "policy == cost-benefit" "cache_total == 512"
check "R: policy greedy by message" dms_msg "$DR" policy greedy
want2=${want/cost-benefit/greedy}
assert_eq "R: the table line follows the policy message" "$want2" "$(dmsetup table "$R")"
check "R: reload the printed table" dmsetup reload "$R" --table "$want2"
check "R: resume" dmsetup resume "$R"
assert_eq "R: the reloaded table is the same" "$want2" "$(dmsetup table "$R")"
check "R: remove" dm_remove "$R"
# Only "format" (the default cache, 2048 sectors, differs from the one on
# disk): no option is printed back.
dms_create "$R" $RLEN "$backR" 2048 format || bail "cannot create $R with only format"
assert_eq "R: only format: no options printed" \
	"0 $RLEN smr $(dms_majmin "$backR") drive-managed 2048" "$(dmsetup table "$R")"
dms_expect "R: defaults: cache one band (1% of 32 MiB is less), fifo" "$DR" \
	"cache_total == 256" "policy == fifo"
check "R: remove" dm_remove "$R"

# ---- N: over a backing device without discard --------------------------------
# Discards are accepted and ignored (docs/dm-smr.rst), whatever the
# backing device supports: a memory-backed null_blk with discard off.
N=t_${TID}_n
DN=/dev/mapper/$N
NLEN=$((32 * 2048))
read -r _ NNEED <<< "$(dms_need $NLEN 2048 2048)"
if nbdev=$(new_nullb $(( (NNEED + 2047) / 2048 )) discard=0); then
	assert_eq "N: the null_blk has no discard" 0 \
		"$(cat "/sys/block/${nbdev#/dev/}/queue/discard_max_bytes")"
	if dms_create "$N" $NLEN "$nbdev" 2048 cache_sectors 2048 format; then
		dmq=/sys/block/$(basename "$(readlink -f "$DN")")/queue
		if [ "$(cat "$dmq/discard_max_bytes")" -gt 0 ]; then
			ok "N: the device takes discards ($(cat "$dmq/discard_max_bytes") bytes at most)"
		else
			not_ok "N: the device takes discards" "discard_max_bytes is 0"
		fi
		head -c $MiB /dev/urandom > "$T_WORK/n1"
		check "N: write 1 MiB" dd if="$T_WORK/n1" of="$DN" bs=$MiB seek=3 oflag=direct status=none
		check "N: blkdiscard 1 MiB over it" blkdiscard -o $((3 * MiB)) -l $MiB "$DN"
		cmp -s <(dd if="$DN" bs=$MiB skip=3 count=1 iflag=direct status=none) "$T_WORK/n1" &&
			ok "N: the discarded range still reads its data" ||
			not_ok "N: the discarded range still reads its data"
		check "N: remove" dm_remove "$N"
	else
		not_ok "N: create over the null_blk"
	fi
else
	not_ok "N: a null_blk without discard (configfs)"
fi

# ---- F: a fragmented band's index --------------------------------------------
# 8 MiB bands (2048 blocks): every odd block of band 1 cached on its own
# makes 1024 extents, then blocks 2 and 4 go in before nearly all of them
# (with the sorted array of old, inserts that moved hundreds of extents;
# the band's tree now takes them where they complete): the data and the
# extent count must come out the same.
F=t_${TID}_f
DF=/dev/mapper/$F
FLEN=$((64 * 2048))
read -r _ FNEED <<< "$(dms_need $FLEN 16384 16384)"
backF=$(new_backing $(( (FNEED + 2047) / 2048 ))) || bail "no backing device"
if dms_create "$F" $FLEN "$backF" 16384 cache_sectors 16384 idle_ms 0 seq_bypass off; then
	check "F: 1026 single-block writes into band 1" python3 - "$DF" "$T_WORK/f.img" <<'PY'
import mmap, os, sys
dev, img = sys.argv[1], sys.argv[2]
band = bytearray(8 << 20)
fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
for b in list(range(1, 2048, 2)) + [2, 4]:
    data = os.urandom(4096)
    band[b * 4096:(b + 1) * 4096] = data
    buf.seek(0)
    buf.write(data)
    os.pwrite(fd, buf, (2048 + b) * 4096)
os.close(fd)
open(img, "wb").write(band)
PY
	dms_expect "F: 1026 extents, one per write" "$DF" "index_extents == 1026" "cache_used == 1026"
	check "F: band 1 reads back" cmp "$T_WORK/f.img" \
		<(dd if="$DF" bs=$MiB skip=8 count=8 iflag=direct status=none)
	check "F: clean message" dms_msg "$DF" clean
	dms_wait_clean "$DF" 60 > /dev/null || not_ok "F: cleaned within 60 s"
	check "F: band 1 reads back after its cleaning" cmp "$T_WORK/f.img" \
		<(dd if="$DF" bs=$MiB skip=8 count=8 iflag=direct status=none)
	check "F: remove" dm_remove "$F"
else
	not_ok "F: create"
fi

dmesg_check
_show_result
