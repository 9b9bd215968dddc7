#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
#
# fio zonemode=zbd on a host-managed dm-smr device, with the job files
# fio-jobs/hm-seq.fio (4 sequential writers) and fio-jobs/hm-randwrite.fio
# (writes at the write pointers of randomly chosen open zones), both with
# --verify=crc32c --do_verify=1. Each run must exit 0 with every written
# byte read back and checked, and the target must refuse nothing
# (wp_errors, errors) and never hold more open zones than its limit.
#
# The limit reaches fio two ways: max_open_zones equal to the device's
# limit in the job, and (the Pitfall in design.md) max_open_zones left at
# 0, so that fio must read queue/max_open_zones from sysfs; the 6.1 dm
# core leaves that at 0 ("no limit") unless the target publishes it. That
# fio kept within the limit shows in imp_closes: the target closes an
# implicitly open zone only when a write would open one zone too many. A
# last run lets fio exceed the limit (ignore_zone_limits) to show the
# counter catches that, and that the target then closes zones implicitly
# instead of failing writes.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "fio zbd: sequential and random-offset writes with verify, open limit from the job and from sysfs"
require_cmd fio dmsetup awk jq
require_target smr

ZS=16384			# 8 MiB zones
NZ=128				# 1 GiB
LEN=$((NZ * ZS))
CONV=2
MAXOPEN=6
JOBS=$SMR_ROOT/fio-jobs

# st NAME FIELD: one status field of dm device NAME (tests/lib/hm.sh).
st() { hm_stat "$1" "$2"; }

# poll_open NAME OUT: until killed, keep in OUT the most zones seen open
# (imp_open + exp_open) in the status line.
poll_open() {
	local max=0 n
	while :; do
		n=$(dmsetup status "$1" | awk '{ print $7 + $8 }')
		[ "${n:-0}" -gt $max ] && { max=$n; echo $max > "$2"; }
		sleep 0.5
	done
}

# fio_job DESC [VAR=VALUE...] -- FIO-ARGS...: run fio with the
# environment given (the job files read DEV, MAXOPEN, SIZE, IOSIZE), JSON
# output; ok if fio exits 0 and read back (verify) as many bytes as it
# wrote. Sets FIO_OUT to the JSON file.
fio_job() {
	local desc=$1 vars=() rc wr rd err; shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	FIO_OUT=$T_WORK/fio-$(date +%s%N).json
	(cd "$T_WORK" && env "${vars[@]}" fio --output-format=json \
		--output="$FIO_OUT" "$@") > "$FIO_OUT.err" 2>&1
	rc=$?
	# One job entry (group_reporting): bytes written, bytes read by
	# verify. fio may print warnings into the file before the JSON.
	read -r wr rd err < <(sed -n '/^{/,$p' "$FIO_OUT" | jq -r \
		'.jobs[0] | "\(.write.io_bytes) \(.read.io_bytes) \(.error)"' 2>/dev/null)
	if [ $rc = 0 ] && [ "${err:-1}" = 0 ] && [ "${wr:-0}" -gt 0 ]; then
		ok "$desc: fio exit 0, wrote $((wr >> 20)) MiB"
	else
		not_ok "$desc: fio exit 0" "fio exited $rc (job error ${err:-?}): ${vars[*]} fio $*" \
			"$(tail -n 20 "$FIO_OUT.err")" "$(grep -E '"error"|verify' "$FIO_OUT" | head -5)"
		return 1
	fi
	if [ "${rd:-0}" = "$wr" ]; then
		ok "$desc: crc32c verify read back all $((rd >> 20)) MiB"
	else
		not_ok "$desc: crc32c verify read back what was written" \
			"wrote $wr bytes, verify read ${rd:-?}"
	fi
}

# run_case DESC EXPECT_IMP_CLOSES(0|>0) [VAR=VALUE...] -- FIO-ARGS...: one
# fio run (fio_job) on fresh counters, then the target's view of it.
run_case() {
	local desc=$1 want=$2 pid maxf n; shift 2
	dmsetup message "$name" 0 clear_stats
	maxf=$T_WORK/maxopen.$RANDOM
	echo 0 > "$maxf"
	poll_open "$name" "$maxf" &
	pid=$!
	fio_job "$desc" DEV="$dev" "$@"
	kill $pid; wait $pid 2>/dev/null

	n=$(st "$name" writes)
	if [ "${n:-0}" -gt 0 ]; then ok "$desc: status writes > 0 ($n)"
	else not_ok "$desc: status writes > 0" "writes=$n"; fi
	assert_eq "$desc: status wp_errors" 0 "$(st "$name" wp_errors)"
	assert_eq "$desc: status errors" 0 "$(st "$name" errors)"
	n=$(cat "$maxf")
	if [ "$n" -le $MAXOPEN ]; then ok "$desc: at most $n zones seen open (limit $MAXOPEN)"
	else not_ok "$desc: open zones within the limit" "$n open, limit $MAXOPEN"; fi
	n=$(st "$name" imp_closes)
	if [ "$want" = 0 ]; then
		assert_eq "$desc: imp_closes 0 (fio kept within the open limit)" 0 "$n"
	elif [ "${n:-0}" -gt 0 ]; then
		ok "$desc: imp_closes > 0 ($n): the target closed zones fio left open"
	else
		not_ok "$desc: imp_closes > 0 when fio ignores the limit" "imp_closes=$n"
	fi
}

back=$(new_backing $((LEN / 2048 + 4))) || bail "no backing device"
name=t_${TID}_hm
dev=/dev/mapper/$name
check "create 1 GiB, 8 MiB zones, $CONV conventional, max_open $MAXOPEN" \
	dm_create "$name" "0 $LEN smr $back host-managed $ZS 5 conv_zones $CONV max_open $MAXOPEN format" ||
	bail "dmsetup create failed"
sys=/sys/block/$(basename "$(readlink -f "$dev")")/queue
assert_eq "queue/zoned" host-managed "$(cat $sys/zoned)"
assert_eq "queue/max_open_zones published for fio" $MAXOPEN "$(cat $sys/max_open_zones)"

# 4 writers x 16 MiB, from zone 0 (the 2 conventional zones included).
run_case "seq, max_open_zones=$MAXOPEN" 0 MAXOPEN=$MAXOPEN SIZE=16M -- "$JOBS/hm-seq.fio"
n=$(st "$name" full)
if [ "$n" -ge 6 ]; then ok "seq: sequential zones written full ($n)"
else not_ok "seq: sequential zones written full" "full=$n, want >= 6"; fi

# 16 MiB of 16 KiB writes over 256 MiB (32 zones, of which the seq run
# left 6 full: fio resets them before writing them again).
run_case "randwrite, max_open_zones=$MAXOPEN" 0 \
	MAXOPEN=$MAXOPEN SIZE=256M IOSIZE=16M -- "$JOBS/hm-randwrite.fio"
n=$(st "$name" resets)
if [ "$n" -gt 0 ]; then ok "randwrite: fio reset zones holding data ($n)"
else not_ok "randwrite: fio reset zones holding data" "resets=$n"; fi

# The Pitfall: no limit in the job; fio must take it from sysfs.
run_case "randwrite, max_open_zones unset (limit from sysfs)" 0 \
	MAXOPEN=0 SIZE=256M IOSIZE=16M -- "$JOBS/hm-randwrite.fio"

# Control: the same writes with fio told to ignore the device's limit
# and keep 12 zones open (the job file's options on the command line).
run_case "randwrite, 12 open zones, ignore_zone_limits" '>0' -- \
	--name=hm-randwrite-12 --filename="$dev" --ioengine=libaio --direct=1 \
	--zonemode=zbd --max_open_zones=12 --ignore_zone_limits=1 \
	--rw=randwrite --bs=16k --iodepth=4 --size=256M --io_size=8M \
	--verify=crc32c --do_verify=1 --group_reporting=1

dmesg_check
_show_result
