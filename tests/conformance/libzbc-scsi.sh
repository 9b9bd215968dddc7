#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 5400
#
# libzbc's own conformance suite (test/zbc_test.sh; sections 00 command
# completion, 01 sense key and code, 02 zone state machine) on a
# host-managed dm-smr drive exported as a SCSI disk (smr-scsi), and on
# the kernel's scsi_debug host-managed disk of the same geometry in the
# same boot: every case that passes on scsi_debug must pass on the
# export. libzbc is built by scripts/setup-libzbc.sh from
# ../shared/sources or LIBZBC_SRC. It takes longer than CI's budget has
# room for, so it is not in tests/test_*.sh: `make libzbc-check` runs it
# (KVER= picks the kernel). The result per case of
# both disks is in the log ("case 01.141 scsi_debug=Passed export=Passed");
# docs/testing.md has the last full run.

. "$(dirname "$0")/../common.sh"
. "$(dirname "$0")/../lib/hm.sh"

_prep_test "scsi: libzbc's conformance suite on the export and on scsi_debug"
hm_prep
LIBZBC=${SMR_LIBZBC_DIR:-/var/lib/dm-smr/libzbc}
[ -x "$LIBZBC/test/zbc_test.sh" ] ||
	skip_all "libzbc's test suite is not built in $LIBZBC (scripts/setup-libzbc.sh)"
SCSI=$SMR_ROOT/userspace/smr-scsi/smr-scsi
[ -x "$SCSI" ] || bail "no $SCSI: make -C userspace"
modprobe target_core_user 2>/dev/null && modprobe tcm_loop 2>/dev/null ||
	skip_all "the kernel has no target_core_user or tcm_loop (CONFIG_TCM_USER2, CONFIG_LOOPBACK_TARGET)"
modprobe -n scsi_debug 2>/dev/null || skip_all "the kernel has no scsi_debug"
SECTIONS=${SMR_LIBZBC_SECTIONS:-00 01 02}

# One geometry for both: 32 zones of 8 MiB, 4 conventional, 6 open.
ZS=$HM_ZS
NZ=32
CONV=4
MAXOPEN=6

EXPORTED=
_zbc_exit() {
	local rc=$?
	[ -n "$EXPORTED" ] && "$SCSI" --stop "$EXPORTED" > /dev/null 2>&1
	rmmod scsi_debug 2> /dev/null
	(exit $rc)
	_cleanup_test
}
trap _zbc_exit EXIT

# The export.
back=$(new_backing $(( NZ * ZS / 2048 + 16 ))) || bail "no backing device"
hm_create t_zbc $((NZ * ZS)) "$back" $ZS conv_zones $CONV max_open $MAXOPEN ||
	bail "cannot create the drive"
out=$("$SCSI" --daemon --log "$T_WORK/export.log" --name zbc "/dev/mapper/t_zbc" 2> "$T_WORK/export.err")
SDX=${out#*: }
[ -b "$SDX" ] || bail "cannot export the drive: $out $(cat "$T_WORK/export.err")"
EXPORTED=zbc
ok "the drive exported as $SDX"

# scsi_debug's host-managed disk of the same geometry.
modprobe scsi_debug zbc=host-managed dev_size_mb=$(( NZ * ZS / 2048 )) \
	zone_size_mb=$(( ZS / 2048 )) zone_nr_conv=$CONV zone_max_open=$MAXOPEN \
	sector_size=512 max_luns=1 num_tgts=1 ||
	bail "cannot load scsi_debug"
udevadm settle 2> /dev/null
SDD=
for d in /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/*; do
	[ -e "$d" ] && SDD=/dev/${d##*/}
done
[ -b "$SDD" ] || bail "scsi_debug made no disk"
ok "scsi_debug's disk is $SDD"
assert_eq "the two disks have one size" "$(blockdev --getsz "$SDX")" "$(blockdev --getsz "$SDD")"

# run_suite NAME DEV: the sections on DEV; the result of each case in
# $T_WORK/NAME.results ("00.001 Passed"), from the suite's own lines
# ("    01.141: FINISH an EMPTY zone ...[Passed]", colours taken out);
# its logs under $T_WORK/zbc-NAME.
run_suite() {
	local name=$1 dev=$2 t0=$SECONDS
	# The suite reads its scripts from its own tree and writes its logs
	# where ZBC_TEST_LOG_PATH_BASE says: the tree stays read-only. Its
	# progress, a line a case, goes to this log as it comes.
	ZBC_TEST_LOG_PATH_BASE=$T_WORK/zbc-$name \
		"$LIBZBC/test/zbc_test.sh" -n -S "$SECTIONS" "$dev" 2>&1 |
		sed -u 's/\x1b\[[0-9;]*[A-Za-z]//g' | tee "$T_WORK/$name.out" |
		sed -u "s/^/# $name: /"
	sed -n 's/^ *\([0-9][0-9]\.[0-9][0-9][0-9]\): .*\[\([^]]*\)\] *$/\1 \2/p' \
		"$T_WORK/$name.out" | tr ' ' '_' | sed 's/_/ /' | sort > "$T_WORK/$name.results"
	diag "$name: $(awk '{ n[$2]++ } END { for (r in n) printf "%s %d, ", r, n[r] }' \
		"$T_WORK/$name.results")in $((SECONDS - t0)) s"
}

# Both disks at once: the suite spends its time starting its small
# programs, so with two CPUs (SMR_VM_CPUS=2) the run takes half as long.
run_suite scsi_debug "$SDD" &
sd_pid=$!
run_suite export "$SDX"
wait $sd_pid
npass=$(grep -c ' Passed$' "$T_WORK/scsi_debug.results")
if [ "$npass" -gt 0 ]; then ok "scsi_debug passes $npass cases"
else not_ok "scsi_debug passes cases" "$(tail -n 20 "$T_WORK/scsi_debug.out")"; fi
# Every case scsi_debug passes, the export passes.
worse=$(join "$T_WORK/scsi_debug.results" "$T_WORK/export.results" -a 1 |
	awk '$2 == "Passed" && $3 != "Passed" { print $1 " " ($3 == "" ? "not run" : $3) }')
if [ -z "$worse" ]; then
	ok "every case that passes on scsi_debug passes on the export"
else
	not_ok "every case that passes on scsi_debug passes on the export" "$worse"
	for c in $(awk '{ print $1 }' <<< "$worse"); do
		diag "--- $c on the export:" \
			"$(grep -rh -A3 'Expected\|sk_ascq\|TESTRESULT' "$T_WORK/zbc-export" 2> /dev/null |
			   grep -A3 "${c#*.}" | tail -n 8)"
	done
fi
# The whole table, in the log (for docs/testing.md).
join -a 1 -a 2 -e - -o 0,1.2,2.2 "$T_WORK/scsi_debug.results" "$T_WORK/export.results" |
	awk '{ printf "case %s scsi_debug=%s export=%s\n", $1, $2, $3 }' > "$T_WORK/cases.txt"
diag "$(cat "$T_WORK/cases.txt")"

check "stop the export" "$SCSI" --stop zbc
EXPORTED=
dmesg_check
_show_result
