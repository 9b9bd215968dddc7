#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 1800
# bench/read-bench.sh - the target's random-read paths against dm-linear,
# and nothing else: bench/run-all takes half an hour a boot under
# instruction counting, these three rows a few minutes, enough to
# measure a change to a read path exactly (docs/benchmarks-log.md,
# 2026-11-30). Boot it the way bench/run-all --exact boots all-bench.sh:
#
#   SMR_VM_ICOUNT=0 SMR_VM_CPUS=1 SMR_VM_MEM=3G \
#       tests/vm-run --results DIR bench/read-bench.sh
#
# Every device sits on a memory-backed null_blk in the guest; dm-linear
# maps exactly the sectors the target reads, through as many dm layers:
#   hm          host-managed, 1 GiB of 256 MiB zones, every zone full
#   dm band     drive-managed, 512 MiB of 16 MiB bands written
#               sequentially (bypass): nothing cached
#   dm cached   the same device, formatted again, its first 32 MiB
#               written once at random in 4 KiB blocks: every block read
#               is in the cache (idle_ms 0: no cleaning moves it home)
# Random 4 KiB reads at depth 16, BENCH_ROUNDS rounds (2) in
# alternating order, BENCH_RUNTIME seconds (3) after a 1 s ramp. Prints
# "# bench:" lines; passes or fails on errors only.
. "$(dirname "$0")/../tests/common.sh"
_prep_test "random reads against dm-linear"
require_cmd fio dmsetup jq awk
require_target smr
. "$SMR_ROOT/bench/lib.sh"
. "$SMR_ROOT/tests/lib/dm.sh"

ROUNDS=${BENCH_ROUNDS:-2}
RUNTIME=${BENCH_RUNTIME:-3}
export BENCH_RATIOS=$T_WORK/ratios
: > "$BENCH_RATIOS"

# iops DEV [FIO ARGS...]: random 4 KiB reads of DEV; prints the IOPS.
iops() {
	local dev=$1
	shift
	fio --name=r --filename="$dev" --rw=randread --bs=4k --iodepth=16 --direct=1 \
		--ioengine=libaio --time_based --runtime="$RUNTIME" --ramp_time=1 \
		--randseed=7 "$@" --output-format=json 2> /dev/null |
		sed -n '/^{/,$p' | jq -r '.jobs[0].read.iops'
}
# row MODEL NAME LINEAR SMR [FIO ARGS...]: one row of rounds.
row() {
	local model=$1 name=$2 lin=$3 smr=$4
	shift 4
	lin_f() { iops "$lin" "$@"; }
	smr_f() { iops "$smr" "$@"; }
	if bench_abba "$ROUNDS" lin_f smr_f "$@" > "$T_WORK/rounds"; then
		diag "bench: $(bench_row "$model" "$name" IOPS "$T_WORK/rounds")"
		ok "$model $name measured"
	else
		not_ok "$model $name measured" "fio gave no figure"
	fi
}
bench_header | while IFS= read -r l; do diag "bench: $l"; done

# Host-managed: the linear device maps the zones' sectors (the target keeps
# its metadata in the first MiB).
ZS=524288
LEN=$((1024 * 2048))
nb=$(new_nullb 1040) || bail "no null_blk"
dm_create rb_hm "0 $LEN smr $nb host-managed $ZS 1 format" || bail "host-managed device"
dm_create rb_hlin "0 $LEN linear $nb 2048" || bail "linear device"
# Every zone full: a read past a zone's data returns zeros without I/O.
dd if=/dev/zero of=/dev/mapper/rb_hm bs=1M count=$((LEN / 2048)) oflag=direct status=none ||
	bail "filling the zones"
row hm "rand read 4K qd16" /dev/mapper/rb_hlin /dev/mapper/rb_hm
dm_remove rb_hm; dm_remove rb_hlin
drop_nullb "$nb"

# Drive-managed, over a linear device of exactly the backing region, as
# bench/dm-bench.sh does; the yardstick maps the bands' sectors of it.
LEN=$((512 * 2048)) BAND=32768 CACHE=$((192 * 2048))
read -r MD NEED <<< "$(dms_need $LEN $BAND $CACHE)"
nb=$(new_nullb $(( (2048 + NEED) / 2048 + 1 ))) || bail "no null_blk"
dm_create rb_back "0 $NEED linear $nb 2048" || bail "backing region"
dm_create rb_dlin "0 $LEN linear /dev/mapper/rb_back $((MD + CACHE + BAND))" || bail "linear device"
dm_table() { echo "0 $LEN smr /dev/mapper/rb_back drive-managed $BAND 5 cache_sectors $CACHE idle_ms 0 format"; }
dm_create rb_dm "$(dm_table)" || bail "drive-managed device"
dd if=/dev/zero of=/dev/mapper/rb_dm bs=1M count=$((LEN / 2048)) oflag=direct status=none ||
	bail "writing the bands"
diag "bench: dm after the sequential writes: $(dmsetup status rb_dm | cut -d' ' -f4-8)"
row dm "band rand read 4K qd16" /dev/mapper/rb_dlin /dev/mapper/rb_dm
dm_remove rb_dm
dm_create rb_dm "$(dm_table)" || bail "drive-managed device, again"
fio --name=w --filename=/dev/mapper/rb_dm --rw=randwrite --bs=4k --size=32M --iodepth=4 \
	--direct=1 --ioengine=libaio --randseed=3 --output=/dev/null || bail "the cached writes"
diag "bench: dm after the random writes: $(dmsetup status rb_dm | cut -d' ' -f4-8)"
row dm "cached rand read 4K qd16" /dev/mapper/rb_dlin /dev/mapper/rb_dm --size=32M
diag "bench: dm after the cached reads: $(dmsetup status rb_dm | cut -d' ' -f4-8)"

rev=$(git -C "$SMR_ROOT" describe --always --dirty 2> /dev/null || echo unknown)
diag "bench: commit $rev, kernel $(uname -r), $(nproc) cpus, icount ${SMR_ICOUNT:-off}, $ROUNDS rounds of ${RUNTIME} s"
_show_result
