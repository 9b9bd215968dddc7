#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
#
# Drive-managed dm-smr: power cuts (the power_cut message,
# docs/crash-testing.md), in one boot, with the checker of the crash test
# (tests/lib/dm_crash.py: every block names the write it came from).
#
# A 128 MiB device of 2 MiB bands with a 4 MiB cache; two writers of
# random blocks, runs, whole bands and O_DSYNC blocks, each logging what
# it issued and what an fdatasync or O_DSYNC made durable. Each round
# cuts the power, brings it back and checks: every block holds exactly
# its last durable write or a later issued one, never older, never torn
# or mixed.
#
#   round 1  cut by a seeded countdown of commands (power_cut random),
#            the writers still filling the cache; back by reloading the
#            printed table
#   round 2  cut now, a few seconds into foreground cleaning (the cache
#            is full); back by remove and create
#   round 3  cut in the middle of a manual clean, with its band rewrite's
#            intent durable and the copy back held by dm-delay: the next
#            load finishes the rewrite from the spare band
#   then     a full clean changes no block; the device takes writes
# After each cut: I/O fails, the status says "cut", the writers end on
# EIO, and the table is removed or reloaded without hanging.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"

_prep_test "dm: power cuts during writes and cleaning; durable writes survive"
require_cmd dmsetup python3 blockdev
require_target smr

PY="python3 $SMR_ROOT/tests/lib/dm_crash.py"
ST=$T_WORK/pc
mkdir -p "$ST"
BAND=4096			# 2 MiB bands
LEN=$((64 * BAND))		# 128 MiB, 64 bands
CACHE=8192			# 4 MiB cache
BLOCKS=$((LEN / 8))
BB=$((BAND / 8))
NW=2
RUN=$RANDOM$RANDOM
name=t_${TID}_pc
dev=/dev/mapper/$name
TABLE_OPTS="cache_sectors $CACHE idle_ms 10000 policy fifo"
back=$(new_backing 140) || bail "no backing device"

create() {
	dm_create "$name" "0 $LEN smr $back drive-managed $BAND $(( $(wc -w <<< "$TABLE_OPTS") + $# )) $TABLE_OPTS $*"
}
power() { dmsetup status "$name" | awk '{ print $(NF - 1), $NF }'; }
stf() { local s; s=($(dmsetup status "$name")); echo "${s[$1 + 2]}"; }

start_writers() {
	local w
	WPIDS=()
	for ((w = 0; w < NW; w++)); do
		$PY write --dev "$dev" --state "$ST" --run "$RUN" --boot "$ROUND" \
			--writer $w --writers $NW --blocks $BLOCKS --band-blocks $BB \
			2> "$ST/writer.r$ROUND.w$w.err" &
		WPIDS+=($!)
	done
}

# writers_durable: each writer logged a durable batch.
writers_durable() {
	local w
	for ((w = 0; w < NW; w++)); do
		grep -q '^D ' "$ST/wlog.b$ROUND.w$w" 2> /dev/null || return 1
	done
}

wait_durable() {
	local t
	for ((t = 0; t < 120; t++)); do
		writers_durable && break
		sleep 1
	done
	if writers_durable; then ok "round $ROUND: each writer made a batch durable"
	else not_ok "round $ROUND: each writer made a batch durable" \
		"$(cat "$ST"/writer.r$ROUND.w*.err 2> /dev/null | tail -n 10)"; fi
}

# writers_end: after the cut, each writer ends on an I/O error.
writers_end() {
	local t w n=0
	for ((t = 0; t < 120; t++)); do
		n=0
		for w in "${WPIDS[@]}"; do kill -0 "$w" 2> /dev/null && n=$((n + 1)); done
		[ $n = 0 ] && break
		sleep 1
	done
	if [ $n = 0 ]; then ok "round $ROUND: the writers ended"
	else
		kill -9 "${WPIDS[@]}" 2> /dev/null
		not_ok "round $ROUND: the writers ended" "$n still running"
	fi
	wait "${WPIDS[@]}" 2> /dev/null
	if grep -q "Input/output error" "$ST"/writer.r$ROUND.w*.err; then
		ok "round $ROUND: on an I/O error"
	else
		not_ok "round $ROUND: on an I/O error" "$(tail -qn 2 "$ST"/writer.r$ROUND.w*.err)"
	fi
}

after_cut() {
	local out
	assert_eq "round $ROUND: status: cut" "cut 0" "$(power)"
	if out=$(dd if="$dev" of=/dev/null bs=4096 count=1 iflag=direct 2>&1); then
		not_ok "round $ROUND: a read fails after the cut" "it succeeded"
	else
		ok "round $ROUND: a read fails after the cut"
	fi
}

check_round() {
	local out
	if out=$($PY check --dev "$dev" --state "$ST" --run "$RUN" --boot $ROUND \
		--writers $NW --blocks $BLOCKS --band-blocks $BB 2>&1); then
		ok "round $ROUND: durable writes all read back; no block older, torn or mixed"
		diag "$out"
	else
		not_ok "round $ROUND: durable writes all read back; no block older, torn or mixed" "$out"
	fi
}


check "create the device (format)" create format
assert_eq "status: the power is on" "on 0" "$(power)"

# ---- round 1: a seeded countdown ----------------------------------------
ROUND=1
start_writers
wait_durable
r=$(dmsetup message "$name" 0 power_cut random 300 $RUN ios 2>&1)
[[ $r =~ ^after\ [0-9]+\ ios$ ]] && ok "round 1: armed ($r)" || not_ok "round 1: armed" "$r"
writers_end
after_cut
table=$(dmsetup table "$name")
check "round 1: reload the printed table" dmsetup reload "$name" --table "$table"
check "round 1: resume" dmsetup resume "$name"
assert_eq "round 1: status: on" "on 0" "$(power)"
check_round

# ---- round 2: cut now, in foreground cleaning -------------------------
ROUND=2
start_writers
wait_durable
sleep $((3 + RANDOM % 4))
diag "round 2: rmw_fg $(stf 10) before the cut"
check "round 2: power_cut" dmsetup message "$name" 0 power_cut
writers_end
after_cut
check "round 2: remove" dm_remove "$name"
check "round 2: create again" create
check_round

# ---- round 3: cut in the middle of a band rewrite ---------------------
ROUND=3
start_writers
wait_durable
kill -9 "${WPIDS[@]}" 2> /dev/null
wait "${WPIDS[@]}" 2> /dev/null
check "round 3: flush" sync "$dev"
SLOW_SAVED=$(dmsetup table "${back#/dev/mapper/}")
check "round 3: the second half of every band is slow to write (dm-delay)" dms_slow_bands "$back" $LEN $BAND $CACHE
check "round 3: clean" dmsetup message "$name" 0 clean
intent=none
for ((t = 0; t < 300; t++)); do
	intent=$($PY intent --backing "$back")
	[ "${intent%% *}" = 1 ] && break
	sleep 0.1
done
if [ "${intent%% *}" = 1 ]; then
	ok "round 3: a band rewrite's intent is durable ($intent)"
	check "round 3: power_cut" dmsetup message "$name" 0 power_cut
else
	not_ok "round 3: a band rewrite's intent is durable" "$intent"
	dmsetup message "$name" 0 power_cut
fi
after_cut
check "round 3: remove" dm_remove "$name"
check "round 3: the backing device without its delay" backing_reload "$back" "$SLOW_SAVED"
set -- $intent
mark="dm09-$RANDOM$RANDOM"
echo "$mark" > /dev/kmsg
check "round 3: create again" create
assert_eq "round 3: the load finishes the band rewrite" \
	"finishing the interrupted cleaning of band ${2:-?}" \
	"$(dmesg_since "$mark" | grep -o "finishing the interrupted cleaning of band [0-9]*")"
check_round

# ---- then: a full clean changes nothing ---------------------------------
check "clean" dmsetup message "$name" 0 clean
for ((t = 0; t < 120; t++)); do
	[ "$(stf 8)" = 0 ] && break
	sleep 1
done
assert_eq "every band cleaned" 0 "$(stf 8)"
if out=$($PY check --dev "$dev" --state "$ST" --run "$RUN" --boot 3 \
	--writers $NW --blocks $BLOCKS --band-blocks $BB --baseline-only 2>&1); then
	ok "the clean changed no block"
else
	not_ok "the clean changed no block" "$out"
fi
check "a write after all that" dd if=/dev/urandom of="$dev" bs=64K count=4 oflag=direct status=none
check "a flush" sync "$dev"

dmesg_check "no kernel warnings"
_show_result
