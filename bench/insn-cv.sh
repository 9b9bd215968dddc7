#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 3000
#
# bench/insn-cv.sh - a bench/run-insns guest script for dm-caveat: over
# one memory-backed null_blk, 1 MiB sequential rewrites at depth 8 (1
# dm-linear, 2 caveat with DID 16, DNOR 6, as cv-bench.sh's), then 4 KiB
# random writes at depth 32 (3 dm-linear, 4 caveat with DID 0 and no
# timing group: all-bench.sh's "timing off" row).

. "$(dirname "$0")/../tests/common.sh"
_prep_test "where caveat's rewrites and DID 0 writes spend their instructions"
require_cmd fio dmsetup od
require_target caveat
. "$SMR_ROOT/bench/lib.sh"
insn_prep

S=$((320 * 2048))
# cav_pair NAME DID DNOR: a caveat device and dm-linear over its data
# extent (the superblock's data_start, le64 at byte 56), on a null_blk of
# their own, every block written once (null_blk's pages, caveat's map).
cav_pair() {
	local nb off
	nb=$(new_nullb 384) || bail "no null_blk"
	dm_create "$1_cav" "0 $S caveat $nb $2 $3 1 format" || bail "caveat $2 $3"
	off=$(dd if="$nb" bs=4096 count=1 iflag=direct status=none | od -An -t u8 -j56 -N8 | tr -d ' ')
	dm_create "$1_lin" "0 $S linear $nb $off" || bail "dm-linear"
	fio --name=f --filename="/dev/mapper/$1_cav" "${W[@]}" || bail "the first fill"
}
W=(--bs=1M --iodepth=8 --direct=1 --ioengine=libaio --rw=write --output=/dev/null)
R=(--rw=randwrite --bs=4k --number_ios=20000 --norandommap=1 --ioengine=libaio
   --iodepth=32 --randseed=5 --direct=1 --output=/dev/null)
cav_pair rw 16 6
cav_pair d0 0 0
"$INSN_MARK"
insn_phase "phase 1: dm-linear 1 MiB rewrites" fio --name=w --filename=/dev/mapper/rw_lin "${W[@]}"
insn_phase "phase 2: caveat 1 MiB rewrites" fio --name=w --filename=/dev/mapper/rw_cav "${W[@]}"
insn_phase "phase 3: dm-linear 4 KiB random writes" fio --name=r --filename=/dev/mapper/d0_lin "${R[@]}"
insn_phase "phase 4: caveat DID 0 4 KiB random writes" fio --name=r --filename=/dev/mapper/d0_cav "${R[@]}"
dmesg_check
_show_result
