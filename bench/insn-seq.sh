#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 3000
#
# bench/insn-seq.sh - bench/run-insns' default guest script: 1 GiB of
# sequential 1 MiB direct writes, then reads, at depth 4, over dm-linear
# and over a drive-managed dm-smr device (bypass writes, band reads)
# mapping the same sectors of one memory-backed null_blk, as
# bench/dm-bench.sh lays them out. Phases: 1 dm-linear writes, 2 dm-smr
# writes, 3 dm-linear reads, 4 dm-smr reads.

. "$(dirname "$0")/../tests/common.sh"
_prep_test "where a sequential 1 MiB I/O's instructions go: dm-linear, dm-smr"
require_cmd fio dmsetup
require_target smr
. "$SMR_ROOT/bench/lib.sh"
. "$SMR_ROOT/tests/lib/dm.sh"
insn_prep

LEN=$((512 * 2048)) BAND=32768 CACHE=$((192 * 2048))
read -r MD NEED <<< "$(dms_need $LEN $BAND $CACHE)"
nb=$(new_nullb $(( (2048 + NEED) / 2048 + 1 ))) || bail "no null_blk"
dm_create ins_back "0 $NEED linear $nb 2048" || bail "backing region"
dm_create ins_lin "0 $LEN linear /dev/mapper/ins_back $((MD + CACHE + BAND))" || bail "linear device"
dm_create ins_dm "0 $LEN smr /dev/mapper/ins_back drive-managed $BAND 3 cache_sectors $CACHE format" ||
	bail "drive-managed device"
# null_blk allocates a page at its first write: both devices then find them
dd if=/dev/zero of=/dev/mapper/ins_lin bs=1M count=$((LEN / 2048)) oflag=direct status=none ||
	bail "the first fill"
F=(--bs=1M --iodepth=4 --direct=1 --ioengine=libaio --size=$((LEN / 2048))M --loops=2 --output=/dev/null)
"$INSN_MARK"
insn_phase "phase 1: dm-linear writes" fio --name=w --filename=/dev/mapper/ins_lin --rw=write "${F[@]}"
insn_phase "phase 2: dm-smr writes" fio --name=w --filename=/dev/mapper/ins_dm --rw=write "${F[@]}"
insn_phase "phase 3: dm-linear reads" fio --name=r --filename=/dev/mapper/ins_lin --rw=read "${F[@]}"
insn_phase "phase 4: dm-smr reads" fio --name=r --filename=/dev/mapper/ins_dm --rw=read "${F[@]}"
assert_eq "the writes bypassed the cache" 0 "$(dmsetup status ins_dm | awk '{ print $7 }' | cut -d/ -f1)"
dmesg_check
_show_result
