#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 900
#
# Every crash point of a workload, for each model: the writes the target
# sends to its backing device are recorded with dm-log-writes, then the
# log is replayed to each flush and FUA entry, and to random subsets of
# the writes between two flushes; at each such state the target is
# created again over a snapshot and checked (tests/lib/crashpoints.py
# says what must hold). Unlike the crash-boot tests (test_*_05_crash,
# test_cv_06_crash), this needs no reboot and leaves no point to chance.
#
# The size here is the CI's. CP_MODELS (dm hm cv cvwc), CP_ROUNDS, CP_OPS,
# CP_SUBSETS and CP_MAX_POINTS (0: every point) make it larger;
# docs/testing.md gives the figures of a larger run.

. "$(dirname "$0")/common.sh"

_prep_test "crash points: every flush/FUA point and subsets between them, all models"
require_cmd dmsetup python3 blkzone blockdev
modprobe dm-log-writes 2>/dev/null
modprobe dm-snapshot 2>/dev/null
require_target log-writes
# Each state on a dm-snapshot of the replayed device; where the kernel has
# no dm-snapshot (the debug builds in ../shared/kernels), on a copy.
COPY=
dmsetup targets | grep -q '^snapshot ' || COPY=--copy

CP="python3 $SMR_ROOT/tests/lib/crashpoints.py run"
# crashpoints.py quiets udev for its own devices while it runs (a rule it
# removes at its end); should it be killed, remove the rule here.
# shellcheck disable=SC2154 # cp_rc is set inside the trap itself
trap 'cp_rc=$?; rm -f /run/udev/rules.d/00-smr-crashpoints.rules; udevadm control --reload; (exit $cp_rc); _cleanup_test' EXIT
ROUNDS=${CP_ROUNDS:-4}
OPS=${CP_OPS:-24}
SUBSETS=${CP_SUBSETS:-1}
MAXP=${CP_MAX_POINTS:-40}

# cp_model LABEL MODEL BACKING_MB BLOCKS TABLE [crashpoints options]:
# record and check one model on fresh devices of its own.
cp_model() {
	local label=$1 model=$2 mb=$3 blocks=$4 table=$5 backing log replay cow
	shift 5
	diag "$label: setting up ($(date +%T))"
	backing=$(new_backing "$mb") && log=$(new_backing 512) &&
		replay=$(new_backing "$mb") && cow=$(new_backing 64) ||
		{ not_ok "$label: backing devices"; return; }
	run_checks "crashpoints.py $label" $CP --model "$model" --label "$label" --name "t_${TID}_$label" \
		--backing "$backing" --log "$log" --replay "$replay" --cow "$cow" \
		--table "$table" --blocks "$blocks" --rounds "$ROUNDS" --ops "$OPS" \
		--subsets "$SUBSETS" --max-points "$MAXP" --seed "${CP_SEED:-11}" $COPY "$@"
}

# The checker's udev rule at work: udev runs no program for the devices
# it makes by the hundred (tests/lib/crashpoints.py, UdevQuiet), and
# handles others as usual.
qb=$(new_backing 1) || bail "no backing device"
run_checks "crashpoints.py udev-check" python3 "$SMR_ROOT/tests/lib/crashpoints.py" \
	udev-check --backing "$qb" --name "t_${TID}_quiet" --other "t_${TID}_loud"

for m in ${CP_MODELS:-dm hm cv cvwc}; do
	case $m in
	dm)	# 16 bands of 1 MiB, a 1 MiB cache (256 slots): the workload
		# fills it in the first rounds, then writes wait for foreground
		# band rewrites; a pause before every third round starts
		# background ones.
		require_target smr &&
		cp_model dm dm 24 4096 \
			"0 32768 smr {dev} drive-managed 2048 4 cache_sectors 2048 idle_ms 500" \
			--band-blocks 256 --pause-ms 700 ;;
	hm)	# 16 zones of 256 KiB, the first conventional.
		require_target smr &&
		cp_model hm hm 8 1024 "0 8192 smr {dev} host-managed 512 2 conv_zones 1" \
			--zone-blocks 64 --conv-zones 1 ;;
	cv)	# The thesis's DID 16 and DNOR 6 over 8 MiB, 128 blocks
		# unshingled, scramble on.
		require_target caveat &&
		cp_model cv cv 12 2048 "0 16384 caveat {dev} 16 6 3 unshingled 128 scramble" \
			--did 16 --dnor 6 --unshingled 128 ;;
	cvwc)	# The same with the write cache (which rules out scramble):
		# writes complete before their home writes, which the flushes
		# must wait for.
		require_target caveat &&
		cp_model cvwc cv 12 2048 "0 16384 caveat {dev} 16 6 4 unshingled 128 write_cache_kib 1024" \
			--did 16 --dnor 6 --unshingled 128 ;;
	*) not_ok "CP_MODELS: unknown model $m" ;;
	esac
done
diag "checks done ($(date +%T))"
dmesg_check
_show_result
