#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 1200
# bench/scsi-bench.sh - the SCSI view's cost: the same device through its
# dm node and as a SCSI disk (userspace/smr-scsi/smr-scsi, docs/scsi.md), in
# one run, SCSI_BENCH_ROUNDS rounds (2) taken in turn (bench/lib.sh: the
# "dm-linear" column is the dm node here, "target" the SCSI disk).
#
# Runs in the test VM:
#   tests/vm-run --results /tmp/scsi-bench bench/scsi-bench.sh
#
# Two devices on the scratch disk, each exported while it is measured:
# - dm-linear: sequential 1 MiB writes and reads at depth 8, random
#   4 KiB reads and writes at depth 8 and at depth 1;
# - a host-managed dm-smr drive (timing off): sequential 1 MiB writes
#   (fio zonemode=zbd, zones reset first) and reads at depth 8.
# The figures are KiB/s; the ratio is SCSI over dm. Under TCG the
# absolute figures mean little.
. "$(dirname "$0")/../tests/common.sh"
. "$SMR_ROOT/tests/lib/hm.sh"
_prep_test "the SCSI view against the dm device"
require_cmd fio dmsetup blkzone
require_target smr
SCSI=$SMR_ROOT/userspace/smr-scsi/smr-scsi
[ -x "$SCSI" ] || bail "no $SCSI: make -C userspace"
modprobe target_core_user 2>/dev/null && modprobe tcm_loop 2>/dev/null ||
	skip_all "the kernel has no target_core_user or tcm_loop"

. "$SMR_ROOT/bench/lib.sh"
SIZE=${SCSI_BENCH_MB:-256}
RUNTIME=${BENCH_RUNTIME:-${SCSI_BENCH_RUNTIME:-8}}
ROUNDS=${BENCH_ROUNDS:-${SCSI_BENCH_ROUNDS:-2}}

# fio_bw DEV RW BS QD [FIO-ARGS...]: KiB/s of one fio job.
fio_bw() {
	local dev=$1 rw=$2 bs=$3 qd=$4 out
	shift 4
	out=$(cd "$T_WORK" && fio --name=b --filename="$dev" --rw="$rw" --bs="$bs" \
		--size=${SIZE}M --direct=1 --ioengine=libaio --iodepth="$qd" \
		--runtime="$RUNTIME" --randrepeat=1 "$@" \
		--output-format=terse --terse-version=3 2>/dev/null)
	case $rw in
	*read) echo "$out" | awk -F';' '{ print $7 }' ;;
	*) echo "$out" | awk -F';' '{ print $48 }' ;;
	esac
}

SD=
export_dev() {
	local out
	out=$("$SCSI" --daemon --log "$T_WORK/$1.log" --name "$1" "$2") || return 1
	SD=${out#*: }
	udevadm settle 2> /dev/null
	[ -b "$SD" ]
}
_bench_exit() {
	local rc=$?
	"$SCSI" --stop sb_lin > /dev/null 2>&1
	"$SCSI" --stop sb_hm > /dev/null 2>&1
	(exit $rc)
	_cleanup_test
}
trap _bench_exit EXIT

# run_dm / run_sd RW BS QD [ARGS...]: one workload on each path
run_dm() { fio_bw "$DMDEV" "$@"; }
run_sd() { fio_bw "$SD" "$@"; }
# the zoned ones start from empty zones, reset through the SCSI disk
# (smr-scsi holds the dm node open exclusively, which blkzone wants too;
# and sd's zone write plugs must see the reset)
run_dm_zbd() { blkzone reset "$SD" && fio_bw "$DMDEV" "$@" --zonemode=zbd; }
run_sd_zbd() { blkzone reset "$SD" && fio_bw "$SD" "$@" --zonemode=zbd; }

# measure MODEL NAME BASE_FN TARGET_FN RW BS QD [ARGS]: one row
measure() {
	local model=$1 name=$2 bf=$3 tf=$4
	shift 4
	if bench_abba "$ROUNDS" "$bf" "$tf" "$@" > "$T_WORK/r"; then
		diag "bench: $(bench_row "$model" "$name" KiB/s "$T_WORK/r")"
		ok "$model: $name measured"
	else
		not_ok "$model: $name measured" "$(cat "$T_WORK/r")"
	fi
}

back=$(new_backing $((SIZE + 8))) || bail "no backing device"
dm_create sb_lin "0 $((SIZE * 2048)) linear $back 0" || bail "cannot create dm-linear"
DMDEV=/dev/mapper/sb_lin
export_dev sb_lin "$DMDEV" || bail "cannot export sb_lin"
diag "bench: dm-linear ($((SIZE)) MiB) as $SD: $ROUNDS round(s), ${RUNTIME} s each"
diag "bench: $(bench_header | sed 's/dm-linear/  dm node/; s/  target/    SCSI/')"
dd if=/dev/zero of="$DMDEV" bs=1M count="$SIZE" oflag=direct status=none
measure scsi/linear "seq write 1M qd8" run_dm run_sd write 1M 8
measure scsi/linear "seq read 1M qd8" run_dm run_sd read 1M 8
measure scsi/linear "rand read 4K qd8" run_dm run_sd randread 4k 8
measure scsi/linear "rand write 4K qd8" run_dm run_sd randwrite 4k 8
measure scsi/linear "rand read 4K qd1" run_dm run_sd randread 4k 1
measure scsi/linear "rand write 4K qd1" run_dm run_sd randwrite 4k 1
check "stop sb_lin" "$SCSI" --stop sb_lin
dm_remove sb_lin

ZS=$HM_ZS
hm_create sb_hm $((SIZE * 2048)) "$back" $ZS format || bail "cannot create the host-managed drive"
DMDEV=/dev/mapper/sb_hm
export_dev sb_hm "$DMDEV" || bail "cannot export sb_hm"
diag "bench: host-managed dm-smr ($((SIZE)) MiB, 8 MiB zones) as $SD"
measure scsi/hm "seq write 1M qd8" run_dm_zbd run_sd_zbd write 1M 8
measure scsi/hm "seq read 1M qd8" run_dm run_sd read 1M 8
diag "bench: the export's log: $(tail -n 2 "$T_WORK/sb_hm.log")"
check "stop sb_hm" "$SCSI" --stop sb_hm
_show_result
