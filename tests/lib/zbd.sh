# SPDX-License-Identifier: GPL-2.0
# tests/lib/zbd.sh - fio's zoned conformance script, t/zbd/test-zbd-support,
# run against a device with one TAP line per case: the dm device
# (test_fio_02) or the same drive as a SCSI disk (test_scsi_02). Source
# after tests/common.sh and tests/lib/hm.sh; test_fio_02's header says
# why the script is copied and patched, and which case is left out.

# The device: 2 MiB zones, 8 conventional (16 MiB: enough for case 14's
# random writes to conventional zones, and the 8 conventional zones cases
# 50-52 ask for) and 136 sequential zones (cases 3 and 4 need 130), max_open
# 16. The cases that fill every sequential zone write the device's size:
# 2 MiB zones halve what 4 MiB zones cost, for the same count of zones.
ZS=4096
CONV=8
NZ=144
MAXOPEN=16
LEN=$((NZ * ZS))
# test-zbd-support gets the calling test's TIMEOUT less 300 s, which are
# for reporting, both times SMR_TIMEOUT_SCALE as the harness scales the
# TIMEOUT (under the debug kernel a fixed 3300 s stopped test_scsi_02's
# script at its case 46, with 9000 s of the test's budget unused).
BUDGET=$(sed -n 's/^# TIMEOUT: \([0-9]*\)$/\1/p' "$0")
BUDGET=$(( (${BUDGET:-3600} - 300) * ${SMR_TIMEOUT_SCALE:-1} ))

# zbd_prep: the script's tree in T_WORK (skips the test without fio's
# source); sets suite and script.
zbd_prep() {
	FIO_SRC=${SMR_FIO_SRC:-/var/lib/dm-smr/fio-src}
	if [ ! -x "$FIO_SRC/fio" ] || [ ! -x "$FIO_SRC/t/zbd/test-zbd-support" ]; then
		skip_all "no fio source tree built in $FIO_SRC (run scripts/setup-fio-source.sh on the host)"
	fi
	hm_prep
	require_cmd timeout gzip

	# The test-zbd-support tree: its scripts, and the fio it runs.
	suite=$T_WORK/fio-src
	script=$suite/t/zbd/test-zbd-support
	mkdir -p "$suite/t/zbd"
	cp "$FIO_SRC/t/zbd/test-zbd-support" "$FIO_SRC/t/zbd/functions" "$suite/t/zbd/"
	ln -s "$FIO_SRC/fio" "$suite/fio"
	diag "fio: $("$suite/fio" --version) from $FIO_SRC"

	# The script sets the device's I/O scheduler to deadline and exits when it
	# cannot. A bio-based device such as a dm device has no scheduler: 6.1
	# still shows a queue/scheduler file that accepts any write, 6.12 shows
	# none, and the write fails ("Permission denied"). In the copy,
	# set_io_scheduler does nothing when the file is absent (later fio
	# versions write it only when it is writable).
	# shellcheck disable=SC2016 # the script's own text, not expanded here
	sched_line='    echo "$sched" >"/sys/block/$dev/queue/scheduler"'
	# shellcheck disable=SC2016
	sched_skip='    [ -e "/sys/block/$dev/queue/scheduler" ] || return 0'
	n=$(grep -cxF -- "$sched_line" "$script")
	[ "$n" = 1 ] || bail "test-zbd-support: set_io_scheduler is not as expected ($n matches)"
	awk -v l="$sched_line" -v s="$sched_skip" '$0 == l { print s } { print }' \
		"$script" > "$script.new" && mv "$script.new" "$script" && chmod +x "$script"

	# Eight cases are time-based (seven run: case 54 is not), 30 s of
	# random I/O each (most of the 6 minutes the script took under TCG):
	# in the copy they run for SMR_ZBD_RUNTIME seconds, 10 unless set (30
	# is the script's own).
	# Under TCG 10 s is still thousands of commands and dozens of zone
	# resets per case; what they check (write pointers, open-zone limits,
	# verification) does not depend on the length.
	ZBD_RUNTIME=${SMR_ZBD_RUNTIME:-10}
	[[ $ZBD_RUNTIME =~ ^[1-9][0-9]*$ ]] || bail "SMR_ZBD_RUNTIME is a count of seconds, not '$ZBD_RUNTIME'"
	n=$(grep -Eo -- '--runtime=30s?\b' "$script" | wc -l)
	[ "$n" = 9 ] || bail "test-zbd-support: $n --runtime=30 options, not the 9 expected"
	sed -E -i "s/--runtime=30s?\b/--runtime=${ZBD_RUNTIME}s/" "$script"
}

# zbd_create NAME: the host-managed device the script runs on (formatted);
# sets dev.
zbd_create() {
	local name=$1 back
	back=$(new_backing $((LEN / 2048 + 4))) || bail "no backing device"
	dev=/dev/mapper/$name
	check "create $((LEN / 2048)) MiB, $((ZS / 2048)) MiB zones, $CONV conventional, max_open $MAXOPEN" \
		hm_create "$name" $LEN "$back" $ZS conv_zones $CONV max_open $MAXOPEN format ||
		bail "cannot create the device"
	assert_eq "queue/max_open_zones" $MAXOPEN "$(hm_sysfs "$dev" max_open_zones)"
	sched=$(hm_sysfs "$dev" scheduler 2>/dev/null)
	diag "queue/scheduler: ${sched:-absent}"
}

# zbd_describe N: "case N" and the first sentence of the comment above
# testN() in the script.
zbd_describe() {
	local d
	d=$(awk -v t="test$1()" '
		/^#/ { c = c (c ? " " : "") substr($0, 3); next }
		index($0, t) == 1 { print c; exit }
		{ c = "" }' "$script")
	d=${d%%. *}
	d=${d%.}
	echo "case $(printf %02d "$1")${d:+: ${d:0:90}}"
}

# zbd_run DEV [LEAVE...]: run the script on DEV; a TAP line per case, and
# each case's outcome (N PASS|SKIP|FAIL|NONE) in $SMR_STATE/cases.txt.
# Cases LEAVE (numbers) are not run unless SMR_ZBD_TESTS names them; each
# is reported as a skip.
zbd_run() {
	local dev=$1 n args cases out start rc desc log logs status kept leave
	shift
	leave=" $* "
	# The cases to expect: those asked for, else every testN() of the script.
	if [ -n "${SMR_ZBD_TESTS:-}" ]; then
		read -ra cases <<< "$SMR_ZBD_TESTS"
	else
		mapfile -t cases < <(sed -n 's/^test\([0-9][0-9]*\)().*/\1/p' "$script" | sort -n)
	fi
	read -ra args <<< "${SMR_ZBD_ARGS:-}"
	# Every case but 54 (test_fio_02's header), named with -t.
	FIO_BUG=54
	for n in "${cases[@]}"; do
		[ "$n" = $FIO_BUG ] && continue
		[ -z "${SMR_ZBD_TESTS:-}" ] && [[ $leave == *" $n "* ]] && continue
		args+=(-t "$n")
	done

	out=$T_WORK/test-zbd-support.out
	start=$(date +%s)
	timeout --kill-after=20 $BUDGET "$script" "${args[@]}" "$dev" > "$out" 2>&1
	rc=$?
	diag "test-zbd-support exited $rc after $(( $(date +%s) - start )) s"
	diag "$(grep -v '^Running test' "$out")"

	# Keep every case's log; fio's --debug=zbd output makes some of them big.
	logs=$script.log
	cp "$out" "$SMR_STATE/"
	for log in "$logs".*; do
		[ -f "$log" ] || continue
		if [ "$(stat -c %s "$log")" -gt 1048576 ]; then
			gzip -c "$log" > "$SMR_STATE/$(basename "$log").gz"
		else
			cp "$log" "$SMR_STATE/"
		fi
	done

	: > "$SMR_STATE/cases.txt"
	# One TAP line per case, from the last line of its log (test-zbd-support
	# appends PASS, SKIP or FAIL to it; a SKIP's reason is the line before).
	for n in "${cases[@]}"; do
		desc=$(zbd_describe "$n")
		log=$logs.$n
		if [ "$n" = $FIO_BUG ]; then
			skip "$desc" "not run: fio 3.33 fails it on any zoned device (test_fio_02's header)"
			continue
		fi
		if [ -z "${SMR_ZBD_TESTS:-}" ] && [[ $leave == *" $n "* ]]; then
			skip "$desc" "not run here (SMR_ZBD_TESTS=\"$n\" runs it)"
			continue
		fi
		status=$(tail -n 1 "$log" 2>/dev/null)
		case $status in PASS|SKIP|FAIL) ;; *) status=NONE ;; esac
		echo "$n $status" >> "$SMR_STATE/cases.txt"
		case $status in
		PASS) ok "$desc" ;;
		SKIP) skip "$desc" "$(tail -n 2 "$log" | head -n 1)" ;;
		FAIL)
			# Its fio command lines and the end of what they printed,
			# without fio's --debug=zbd trace.
			kept=$SMR_STATE/$(basename "$log")
			[ -f "$kept" ] || kept=$kept.gz
			not_ok "$desc" "log: $kept" \
				"$(grep -v -E '^zbd +[0-9]+ ' "$log" | tail -n 60)" ;;
		*)
			not_ok "$desc" "no result: test-zbd-support stopped before it finished (exit $rc)" \
				"$(tail -n 20 "$log" 2>/dev/null)" ;;
		esac
	done
}
