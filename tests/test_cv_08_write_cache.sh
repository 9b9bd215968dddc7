#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
# SMOKE: 1
# The write cache (docs/dm-caveat.rst, "write_cache_kib"): a write that must
# wait for its damage to be durable is completed from a copy, and the
# copy goes home later. The backing device's data area sits behind a
# dm-delay that holds writes for a while, so the copies are still on
# their way when the next read, write or flush comes:
#  - bad tables are refused (too large, with scramble, with timing, over
#    a backing device without a volatile cache), a good one prints back;
#  - a read right after a cached write reads that write, and a second
#    write to the same block lands after the first;
#  - random writes, each read back, agree with the reference model
#    (tests/lib/cv_model.py) and, after remove/create, still do;
#  - a flush covers the cached writes completed before it: with every
#    backing write failing right after the flush, the data survives;
#  - a cached write that never reaches its home fails the next flush,
#    once: the first flush issued after the write was completed, not one
#    issued before it that was still being handled when the copy failed.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: the write cache"
require_cmd python3 dmsetup dd cmp
require_target caveat
require_target delay

raw=$(new_backing 24) || bail "no backing device"
rsect=$(blockdev --getsz "$raw")
# caveat -> cv08d -> cv08b (linear, or error to fail every write) -> the
# scratch disk. cv08d passes the metadata (the first MiB: superblock,
# bitmap pages, journal) and flushes straight through and holds writes to
# the data area for a while (dm-delay: read, write and flush classes), so
# that a copy is still on its way when the journal block and the commits
# it waits for are done.
delay_table() {
	local b=/dev/mapper/cv08b
	printf '0 2048 linear %s 0\n%s delay %s 2048 0 %s 2048 %s %s 2048 0' \
		$b "2048 $((rsect - 2048))" $b $b "$1" $b
}
dm_create cv08b "0 $rsect linear $raw 0" || bail "cannot create the backing device"
dm_create cv08d "$(delay_table 0)" || bail "cannot create the delay device"
B=/dev/mapper/cv08d
D=/dev/mapper/cv08
NB=4096
TABLE="0 $((NB * 8)) caveat $B 4 1 2 write_cache_kib 256"
write_delay() { backing_reload cv08d "$(delay_table "$1")"; }

# wr BLOCK FILE: write FILE (4 KiB) at BLOCK; rd BLOCK FILE: read it back.
wr() { dd if="$2" of=$D bs=4k count=1 seek="$1" oflag=direct status=none; }
rd() { dd if=$D of="$2" bs=4k count=1 skip="$1" iflag=direct status=none; }
flush() { python3 -c 'import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY); os.fsync(fd)' "$D"; }
pat() { head -c 4096 /dev/urandom > "$T_WORK/$1"; }

# --- tables --------------------------------------------------------------
refuse() { dm_refuse cv08x "$@"; }
CV="0 $((NB * 8)) caveat $B 4 1"
K="rpm 7200 seek_t2t_us 1000 seek_avg_us 8500 seek_full_us 17000 od_mbps 65 id_mbps 31"
KIBERR="write_cache_kib must be a size in KiB from 0 to 65536"
refuse "write_cache_kib over 64 MiB" "$CV 2 write_cache_kib 65537" "$KIBERR"
refuse "write_cache_kib not a number" "$CV 2 write_cache_kib 1x" "$KIBERR"
refuse "write_cache_kib less than one block" "$CV 2 write_cache_kib 2" \
	"write_cache_kib is less than one block"
refuse "write_cache over 64 MiB (the old spelling, blocks)" "$CV 2 write_cache 16385" \
	"write_cache too large"
refuse "write_cache not a number (the old spelling)" "$CV 2 write_cache 1x" "Invalid write_cache"
refuse "write_cache_kib and write_cache both" "$CV 4 write_cache_kib 256 write_cache 64" \
	"are one option: give one"
refuse "write_cache_kib with scramble" "$CV 3 write_cache_kib 256 scramble" \
	"write_cache_kib cannot be combined with scramble or timing"
refuse "write_cache_kib with a timing group" "$CV 2 write_cache_kib 256 timing 12 $K" \
	"write_cache_kib cannot be combined with scramble or timing"
nb=$(new_nullb 64) || bail "no null_blk"
if [ "$(cat "/sys/block/${nb#/dev/}/queue/write_cache")" = "write through" ]; then
	refuse "write_cache over a backing device without a volatile cache" \
		"0 $((NB * 8)) caveat $nb 4 1 2 write_cache_kib 256" \
		"write_cache_kib needs a backing device with a volatile write cache"
else
	skip "write_cache over a backing device without a volatile cache" "this null_blk has one"
fi

# The old spelling, write_cache <blocks>, prints back as write_cache_kib.
dm_create cv08 "0 $((NB * 8)) caveat $B 4 1 2 write_cache 64" ||
	bail "cannot create the caveat device"
BDEV=$(cat "/sys/block/$(basename "$(readlink -f $B)")/dev")
assert_eq "the old spelling write_cache 64 (blocks) prints back in KiB" \
	"0 $((NB * 8)) caveat $BDEV 4 1 2 write_cache_kib 256" "$(dmsetup table cv08)"
check "remove" dm_remove cv08
dm_create cv08 "$TABLE" || bail "cannot create the caveat device"
assert_eq "the table prints back" "0 $((NB * 8)) caveat $BDEV 4 1 2 write_cache_kib 256" \
	"$(dmsetup table cv08)"
assert_eq "the device has a volatile write cache" "write back" \
	"$(cat "/sys/block/$(basename "$(readlink -f $D)")/queue/write_cache")"

# --- a read and a write right after a cached write ----------------------
# Blocks 0..63 valid: every later write damages valid blocks after it.
check "fill blocks 0..63" dd if=/dev/urandom of=$D bs=4k count=64 oflag=direct,sync status=none
check "flush" flush
check "data writes to the backing now take 300 ms" write_delay 300
c0=$(cv_field cv08 cached_writes)
bad=
for b in 10 20 30; do
	pat p$b
	wr $b "$T_WORK/p$b" && rd $b "$T_WORK/r$b" &&
		cmp -s "$T_WORK/p$b" "$T_WORK/r$b" || bad+=" $b"
done
assert_eq "a read right after a cached write reads it (blocks 10, 20, 30)" "" "$bad"
assert_eq "those writes were completed from the cache" $((c0 + 3)) \
	"$(cv_field cv08 cached_writes)"
check_fail "block 12, in block 10's damage range, reads as maybe damaged" \
	rd 12 "$T_WORK/x"
pat a40
pat b40
wr 40 "$T_WORK/a40" && wr 40 "$T_WORK/b40" && rd 40 "$T_WORK/r40"
check "a second write to a cached block lands after the first" \
	cmp -s "$T_WORK/b40" "$T_WORK/r40"

# --- random writes against the model, then remove/create ----------------
check "data writes to the backing now take 20 ms" write_delay 20
check "remove" dm_remove cv08
dm_create cv08 "0 $((NB * 8)) caveat $B 4 1 3 write_cache_kib 256 format" ||
	bail "cannot format"
cv_py random --dev $D --dm cv08 --blocks $NB --did 4 --dnor 1 \
	--seed "${CV_SEED:-8}" --writes 200 --reads 200 --state "$T_WORK/model.json"
cached=$(cv_field cv08 cached_writes)
if [ "$cached" -gt 0 ]; then
	ok "the cache completed $cached of the random writes"
else
	not_ok "the cache completed some of the random writes" "cached_writes $cached"
fi
check "remove (its suspend puts every copy home first)" dm_remove cv08
check "create again" dm_create cv08 "$TABLE"
cv_py verify --dev $D --dm cv08 --state "$T_WORK/model.json" \
	--desc "after remove/create"

# --- a flush covers the cached writes before it -------------------------
# The copy takes 3 s to reach its home; the commit takes no time.
check "fill blocks 100..163" dd if=/dev/urandom of=$D bs=4k count=64 seek=100 oflag=direct,sync status=none
check "flush" flush
check "data writes to the backing now take 3 s" write_delay 3000
pat q
c0=$(cv_field cv08 cached_writes)
check "write block 110" wr 110 "$T_WORK/q"
assert_eq "it was completed from the cache" $((c0 + 1)) "$(cv_field cv08 cached_writes)"
check "flush" flush
# Every backing write fails from here: whatever the flush did not make
# durable is lost, as in a power cut.
check "the backing starts failing writes" backing_reload cv08b "0 $rsect error"
dm_remove cv08 >/dev/null 2>&1
check "the backing works again" backing_reload cv08b "0 $rsect linear $raw 0"
check "data writes to the backing are quick again" write_delay 0
check "create again" dm_create cv08 "$TABLE"
rd 110 "$T_WORK/r110"
check "block 110 holds the write the flush covered" cmp -s "$T_WORK/q" "$T_WORK/r110"

# --- a cached write that never reaches its home fails the next flush ----
# The data area of the backing fails writes, the metadata still works:
# the write's journal block is written, the write is completed from the
# cache, and its copy then fails. The flush comes once the backing works
# again, so only the lost write can fail it.
pat r
mark="cv08-lost-$RANDOM"
echo "$mark" > /dev/kmsg
c0=$(cv_field cv08 cached_writes)
check "the backing's data area starts failing writes" backing_reload cv08b \
	"$(printf '0 2048 linear %s 0\n2048 %s error' "$raw" $((rsect - 2048)))"
check "write block 130" wr 130 "$T_WORK/r"
assert_eq "it was completed from the cache" $((c0 + 1)) "$(cv_field cv08 cached_writes)"
lost() { dmesg_since "$mark" | grep -q "caveat: .*: cached write of blocks 130+1 failed"; }
for _ in $(seq 60); do lost && break; sleep 0.5; done
if lost; then
	ok "the kernel log names the lost write"
else
	not_ok "the kernel log names the lost write" "$(dmesg_since "$mark" | tail -5)"
fi
check "the backing works again" backing_reload cv08b "0 $rsect linear $raw 0"
check_fail "the next flush fails" flush
check "the flush after it succeeds (the loss is reported once)" flush

# --- a lost write fails the flushes that cover it, then no more ---------
# Flush F0 waits for W0's copy (10 s on its way home). F1 is issued
# meanwhile, then W is written and completed from the cache. Then the
# data area fails writes, so both copies are lost: F0 and F1 were both
# issued after W0 completed and are in flight when it is lost, so both
# fail; F2, the first flush after W (and after the losses), fails; F3
# succeeds (each loss is reported to the flushes in flight and the next).
# (An error once went to one flush only: F1 succeeded though it was
# issued after W0 completed.)
check "fill blocks 140..163" dd if=/dev/urandom of=$D bs=4k count=24 seek=140 oflag=direct,sync status=none
check "flush" flush
# A slow kernel (SMR_TIMEOUT_SCALE, a debug kernel) gets a longer window.
S=${SMR_TIMEOUT_SCALE:-1}
check "data writes to the backing now take $((10 * S)) s" write_delay $((10000 * S))
pat w0
pat w1
c0=$(cv_field cv08 cached_writes)
mark2="cv08-lost2-$RANDOM"
echo "$mark2" > /dev/kmsg
check "write block 145 (W0)" wr 145 "$T_WORK/w0"
flush > /dev/null 2>&1 &
f0=$!
sleep $((2 * S))
flush > /dev/null 2>&1 &
f1=$!
sleep $((2 * S))
check "write block 155 (W), after F1 was issued" wr 155 "$T_WORK/w1"
assert_eq "W0 and W were completed from the cache" $((c0 + 2)) "$(cv_field cv08 cached_writes)"
check "the backing's data area starts failing writes" backing_reload cv08b \
	"$(printf '0 2048 linear %s 0\n2048 %s error' "$raw" $((rsect - 2048)))"
wait $f0
r0=$?
wait $f1
r1=$?
# On a host too slow for the window (a debug kernel beside other VMs
# without SMR_TIMEOUT_SCALE), W0's copy lands before the backing fails: nothing is lost, and
# every flush rightly succeeds. Only a loss the log names is checked.
if dmesg_since "$mark2" | grep -q "cached write of blocks 145+1 failed"; then
	assert_eq "F0, issued after W0, fails (W0 lost)" 1 $r0
	assert_eq "F1, issued after W0 and in flight when it was lost, fails" 1 $r1
	check "the backing works again" backing_reload cv08b "0 $rsect linear $raw 0"
	check "data writes to the backing are quick again" write_delay 0
	check_fail "F2, the first flush issued after W, fails" flush
	check "F3 succeeds" flush
else
	skip "lost writes fail the flushes that cover them" \
		"W0's copy reached the backing before it failed (a host this slow cannot hold the $((10 * S)) s window)"
	check "the backing works again" backing_reload cv08b "0 $rsect linear $raw 0"
	check "data writes to the backing are quick again" write_delay 0
	flush > /dev/null 2>&1
	flush > /dev/null 2>&1
fi
check "remove" dm_remove cv08

dmesg_check
_show_result
