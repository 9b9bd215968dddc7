#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 3000
#
# bench/insn-rread.sh - a bench/run-insns guest script for the random-read
# rows of bench/run-all: 4 KiB random reads at depth 16 of written data,
# the same 20000 offsets each time, over dm-linear and over the target on
# the same sectors of a memory-backed null_blk: 1 dm-linear, 2 host-managed
# (as hm-bench.sh lays it out: metadata in the first MiB), 3 dm-linear, 4
# drive-managed (as dm-bench.sh: bands after metadata, cache and spare).

. "$(dirname "$0")/../tests/common.sh"
_prep_test "where a random 4 KiB read's instructions go: host-managed, drive-managed"
require_cmd fio dmsetup
require_target smr
. "$SMR_ROOT/bench/lib.sh"
. "$SMR_ROOT/tests/lib/dm.sh"
insn_prep

LEN=$((256 * 2048)) ZS=$((64 * 2048)) BAND=32768 CACHE=$((192 * 2048))
W=(--bs=1M --iodepth=4 --direct=1 --ioengine=libaio --rw=write --output=/dev/null)
R=(--rw=randread --bs=4k --number_ios=20000 --norandommap=1 --ioengine=libaio
   --iodepth=16 --randseed=7 --direct=1 --output=/dev/null)

nb=$(new_nullb $((LEN / 2048 + 2))) || bail "no null_blk"
dm_create rr_hm "0 $LEN smr $nb host-managed $ZS 1 format" || bail "host-managed device"
dm_create rr_hlin "0 $LEN linear $nb 2048" || bail "linear device (host-managed)"
# Every zone written in order, to its end: reads of it go to the disk.
fio --name=f --filename=/dev/mapper/rr_hm "${W[@]}" || bail "the host-managed fill"

read -r MD NEED <<< "$(dms_need $LEN $BAND $CACHE)"
nb2=$(new_nullb $(( (2048 + NEED) / 2048 + 1 ))) || bail "no second null_blk"
dm_create rr_back "0 $NEED linear $nb2 2048" || bail "backing region"
dm_create rr_dm "0 $LEN smr /dev/mapper/rr_back drive-managed $BAND 3 cache_sectors $CACHE format" ||
	bail "drive-managed device"
dm_create rr_dlin "0 $LEN linear /dev/mapper/rr_back $((MD + CACHE + BAND))" || bail "linear device (drive-managed)"
# Sequential 1 MiB writes bypass the cache to the bands.
fio --name=f --filename=/dev/mapper/rr_dm "${W[@]}" || bail "the drive-managed fill"
assert_eq "the fill bypassed the cache" 0 "$(dmsetup status rr_dm | awk '{ print $7 }' | cut -d/ -f1)"

"$INSN_MARK"
insn_phase "phase 1: dm-linear random reads" fio --name=r --filename=/dev/mapper/rr_hlin "${R[@]}"
insn_phase "phase 2: host-managed random reads" fio --name=r --filename=/dev/mapper/rr_hm "${R[@]}"
insn_phase "phase 3: dm-linear random reads" fio --name=r --filename=/dev/mapper/rr_dlin "${R[@]}"
insn_phase "phase 4: drive-managed random reads" fio --name=r --filename=/dev/mapper/rr_dm "${R[@]}"
dmesg_check
_show_result
