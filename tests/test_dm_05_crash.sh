#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# BOOTS: 4
# TIMEOUT: 240
# SLOW: 1
# (Real crashes cost a boot each: make check runs this on the first
# kernel only; test_crash_01_points checks every crash point of a
# recorded workload on every kernel without a reboot.)
#
# Drive-managed dm-smr: crash consistency across repeated guest crashes
# (docs/dm-smr.rst "Durability (drive-managed)").
#
# A 128 MiB device of 2 MiB bands with a 4 MiB cache: random writes fill
# the cache within seconds, after which every write waits for foreground
# band rewrites (RMW through the spare band), so crashes land in cleaning
# as often as in plain writes. Two writer processes (tests/lib/dm_crash.py)
# each own half of the bands and write a deterministic sequence of ops (1
# block, runs of 2-16 blocks, whole bands sequentially, O_DSYNC blocks);
# every block says which write it came from, and each writer logs to the
# state dir (on the host, fsync'd) what it was about to issue, what an
# fdatasync made durable and which O_DSYNC writes were acknowledged.
#
#   boot 1  format; writers; crash at a random moment (fg cleaning busy)
#   boot 2  check; writers, policy greedy; crash a random 0-2 ms after a
#           band rewrite's intent became durable (steps 3-5 of cleaning)
#   boot 3  check; writers, policy cost-benefit, then stop them; the
#           second half of every band made slow to write (dm-delay in the
#           backing device, 5 s); "clean" (manual); crash 0-1 s after the
#           first intent: the band rewrite is stuck half done, so this
#           crash always lands between the intent and its completion
#   boot 4  check; a full "clean" changes no block; the device still
#           takes and returns writes (fio verify)
#
# The check after each crash (same table, no format): every block holds
# exactly its last durable write (a write acknowledged before an
# fdatasync, or an acknowledged O_DSYNC write) or a later write that was
# issued; never an older one, never a mix of two writes, never another
# block's data; blocks the boot did not write hold what they held before
# (zeros at first). A whole-band write is durable as a whole, so a band
# cannot come back half old, half new. If the on-disk intent said "spare
# band full" at the crash, the next activation must log "finishing the
# interrupted cleaning of band N" and clear it. Boot 2's crash aims for
# that window (it lasts milliseconds: whether it hit is reported); boot
# 3's must hit it.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"

_prep_test "dm: repeated crashes during writes and band cleaning; durable writes survive, no band mixes"
require_cmd dmsetup python3 fio blockdev
require_target smr

PY="python3 $SMR_ROOT/tests/lib/dm_crash.py"
ST=$SMR_STATE
BAND=4096			# 2 MiB bands
LEN=$((64 * BAND))		# 128 MiB, 64 bands
CACHE=8192			# 4 MiB cache: 1024 slots
BLOCKS=$((LEN / 8))
BB=$((BAND / 8))
NW=2
name=t_${TID}_dm
dev=/dev/mapper/$name
# idle_ms 10000: no background cleaning between the activation and the
# check, so the check reads through the cache index rebuilt from disk.
TABLE_OPTS="cache_sectors $CACHE idle_ms 10000 policy fifo"

# Same call in every boot: the same region (discarded only in boot 1).
back=$(new_backing 140) || bail "no backing device"

# stf FIELD_NUMBER: one field of the status line (1 = drive-managed,
# 23 = state; /tmp/dm-spec.md), from one dmsetup call.
stf() { local s; s=($(dmsetup status "$name")); echo "${s[$1 + 2]}"; }
status_brief() {
	dmsetup status "$name" | awk '{ printf "cache %s live %s dirty_bands %s rmw bg/fg/manual %s/%s/%s bg_aborts %s wa %s state %s policy %s commits %s errors %s",
		$7, $8, $11, $12, $13, $14, $15, $25, $26, $27, $28, $29 }'
}

create() {
	dm_create "$name" "0 $LEN smr $back drive-managed $BAND $(( $(wc -w <<< "$TABLE_OPTS") + $# )) $TABLE_OPTS $*"
}

start_writers() {
	local w
	WPIDS=()
	for ((w = 0; w < NW; w++)); do
		$PY write --dev "$dev" --state "$ST" --run "$RUN" --boot "$SMR_BOOT" \
			--writer $w --writers $NW --blocks $BLOCKS --band-blocks $BB \
			2> "$ST/writer.b$SMR_BOOT.w$w.err" &
		WPIDS+=($!)
	done
}

# writers_ok: both writers alive and each logged a durable batch.
writers_ok() {
	local w p
	for ((w = 0; w < NW; w++)); do
		kill -0 "${WPIDS[w]}" 2> /dev/null || return 1
		grep -q '^D ' "$ST/wlog.b$SMR_BOOT.w$w" 2> /dev/null || return 1
	done
}

# wait_writers SECS: let them run SECS seconds; ok/not_ok on their health.
wait_writers() {
	local t
	for ((t = 0; t < 60; t++)); do
		writers_ok && break
		sleep 1
	done
	sleep "$1"
	if writers_ok; then
		ok "writers running, each with durable batches ($(tail -qn 1 "$ST"/wlog.b$SMR_BOOT.w* | tr '\n' ' '))"
	else
		not_ok "writers running, each with durable batches" \
			"$(cat "$ST"/writer.b$SMR_BOOT.w*.err 2> /dev/null | tail -n 20)"
	fi
}

# arm_crash: what crash_guest does before sysrq-b (tests/common.sh): a
# failed boot reports instead of crashing; the kernel log is saved and
# the crash announced. The trigger itself comes from dm_crash.py crash.
arm_crash() {
	local hits
	if grep -q '^fail$' "$T_WORK/.tap-results" || [ -s "$T_WORK/.helper-errors" ]; then
		diag "boot $SMR_BOOT failed a check: not crashing"
		kill "${WPIDS[@]}" 2> /dev/null
		_show_result
	fi
	dmesg > "$ST/dmesg-boot$SMR_BOOT.log" 2> /dev/null
	hits=$(dmesg_since "$SMR_DMESG_MARK" | dmesg_find_errors)
	[ -n "$hits" ] && echo "$hits" > "$ST/dmesg-boot$SMR_BOOT.bad"
	echo "crash armed at $(date +%s) after $(grep -c . "$T_WORK/.tap-results") checks" \
		> "$ST/crashed-boot$SMR_BOOT"
	sync
	echo 1 > /proc/sys/kernel/sysrq
}

# crash_at_intent [--then CMD] ARGS...: arm, start dm_crash.py crash
# (ARGS) and, once it polls, run CMD (e.g. start a cleaning); the guest
# crashes when it finds its intent.
crash_at_intent() {
	local then= pid t
	if [ "$1" = --then ]; then then=$2; shift 2; fi
	arm_crash
	diag "status before the crash: $(status_brief)"
	rm -f "$T_WORK/crash.ready"
	$PY crash --backing "$back" --state "$ST" --boot "$SMR_BOOT" \
		--ready "$T_WORK/crash.ready" "$@" &
	pid=$!
	for ((t = 0; t < 300; t++)); do
		[ -e "$T_WORK/crash.ready" ] && break
		sleep 0.1
	done
	[ -n "$then" ] && eval "$then"
	wait $pid
	rm -f "$ST/crashed-boot$SMR_BOOT"
	bail "dm_crash.py crash returned: the guest did not crash"
}


# ---- every boot after the first: recover and check ---------------------
if [ "$SMR_BOOT" -gt 1 ]; then
	prev=$((SMR_BOOT - 1))
	read -r RUN < "$ST/run" || bail "no run id in $ST"
	[ -f "$ST/crashed-boot$prev" ] && ok "boot $prev crashed as planned ($(cat "$ST/crashed-boot$prev"))" ||
		not_ok "boot $prev crashed as planned" "no $ST/crashed-boot$prev"
	[ -f "$ST/crash.b$prev" ] && diag "boot $prev crash point: $(cat "$ST/crash.b$prev")"

	# The intent on disk as the crash left it.
	intent=$($PY intent --backing "$back")
	diag "on-disk cleaning intent after the crash (state band seq gen): $intent"
	mark="dm05-recover-$SMR_BOOT-$RANDOM"
	echo "$mark" > /dev/kmsg
	check "re-create the device with the same table (no format)" create
	dmsetup info "$name" > /dev/null 2>&1 || bail "device not re-created"
	diag "status after activation: $(status_brief)"
	if out=$($PY check --dev "$dev" --state "$ST" --run "$RUN" --boot $prev \
		--writers $NW --blocks $BLOCKS --band-blocks $BB 2>&1); then
		ok "boot $prev's durable writes all read back; no block older, torn or mixed"
		diag "$out"
	else
		not_ok "boot $prev's durable writes all read back; no block older, torn or mixed" "$out"
	fi
	rec=$(dmesg_since "$mark" | grep -o "finishing the interrupted cleaning of band [0-9]*")
	set -- $intent
	[ "$prev" = 3 ] && assert_eq "boot 3's crash left its band rewrite's intent on disk" 1 "${1:-0}"
	if [ "${1:-0}" = 1 ]; then
		echo "boot $SMR_BOOT: intent for band $2 on disk; kernel: ${rec:-nothing}" >> "$ST/recovery.log"
		assert_eq "the durable intent is finished at activation" \
			"finishing the interrupted cleaning of band $2" "$rec"
		assert_eq "the intent is cleared on disk after activation" 0 \
			"$($PY intent --backing "$back" | cut -d' ' -f1)"
	else
		echo "boot $SMR_BOOT: no intent on disk${rec:+; kernel: $rec}" >> "$ST/recovery.log"
		assert_eq "no interrupted cleaning to finish" "" "$rec"
	fi

	assert_eq "no I/O errors" 0 "$(stf 26)"
fi

case $SMR_BOOT in
1)
	rm -f "$ST"/wlog.* "$ST"/base.bin "$ST"/crash.b* "$ST"/recovery.log
	RUN=$RANDOM$RANDOM
	echo "$RUN" > "$ST/run"
	check "create the device (format)" create format
	dmsetup info "$name" > /dev/null 2>&1 || bail "no device"
	start_writers
	wait_writers $((6 + RANDOM % 10))
	diag "crashing at a random moment (writers running); status: $(status_brief)"
	if grep -q '^fail$' "$T_WORK/.tap-results"; then
		kill "${WPIDS[@]}" 2> /dev/null
		_show_result
	fi
	crash_guest
	;;
2)
	check "policy greedy" dmsetup message "$name" 0 policy greedy
	start_writers
	wait_writers $((2 + RANDOM % 5))
	crash_at_intent --delay-ms 2 --timeout 40
	;;
3)
	check "policy cost-benefit" dmsetup message "$name" 0 policy cost-benefit
	start_writers
	wait_writers 3
	kill -9 "${WPIDS[@]}" 2> /dev/null
	wait "${WPIDS[@]}" 2> /dev/null
	dirty=$(stf 8)
	diag "writers stopped; $dirty dirty bands; manual clean"
	[ "$dirty" -gt 4 ] && ok "bands to clean: $dirty" || not_ok "bands to clean" "dirty_bands $dirty"
	# Writes to the second half of every band wait 5 s in the backing
	# device (reads and flushes do not): the first band rewrite of the
	# clean copies the spare band's first half back, then hangs with
	# its intent durable. The trigger polls first, then the clean
	# starts; it crashes a random 0-1 s after the intent is on disk.
	check "the second half of every band is slow to write (dm-delay)" dms_slow_bands "$back" $LEN $BAND $CACHE
	crash_at_intent --then 'dmsetup message "$name" 0 clean; diag "state during the manual clean: $(stf 23)"' \
		--delay-ms 1000 --timeout 40
	;;
*)
	# A full cleaning of what the crashes left changes no block.
	check "clean message" dmsetup message "$name" 0 clean
	for ((t = 0; t < 120; t++)); do
		[ "$(stf 4)" = "0/$((CACHE / 8))" ] && break
		sleep 1
	done
	assert_eq "the cache drains" "0/$((CACHE / 8))" "$(stf 4)"
	diag "status after the clean: $(status_brief)"
	if out=$($PY check --dev "$dev" --state "$ST" --run "$RUN" --boot 0 \
		--writers $NW --blocks $BLOCKS --band-blocks $BB --baseline-only 2>&1); then
		ok "after a full cleaning every block reads as before it"
	else
		not_ok "after a full cleaning every block reads as before it" "$out"
	fi
	# The device works after all this: fio writes and verifies a range.
	run_fio "fio write+verify 16 MiB after the crashes" --filename="$dev" \
		--rw=randwrite --bs=4k --offset=32M --size=16M --iodepth=4 \
		--verify=crc32c --do_verify=1 --fsync=64
	assert_eq "no I/O errors after fio" 0 "$(stf 26)"
	hit=$(grep -c "intent for band" "$ST/recovery.log")
	diag "recovery log over the boots:" "$(cat "$ST/recovery.log")"
	diag "crashes that hit a durable band-rewrite intent: $hit of $((SMR_BOOT - 1))"
	dmesg_check "no kernel warnings"
	;;
esac
_show_result
