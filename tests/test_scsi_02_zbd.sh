#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 1800
# SLOW: 1
#
# fio's zoned conformance script (t/zbd/test-zbd-support, as test_fio_02
# runs it) against the host-managed drive as a SCSI disk: /dev/sdX from
# smr-scsi (docs/scsi.md), with the same geometry as test_fio_02's dm
# device. The sd driver, its ZBC translation and the block layer's zone
# write plugging for a request-based disk are on the path; so are the
# SCSI-only cases (9 and 10: the sg ioengine) the dm device skips.
#
# The result must be the dm device's: every case that passed there passes
# here. "There" is test_fio_02's $SMR_STATE/cases.txt when it ran earlier
# in the same results directory; otherwise the cases it passes on every
# kernel (docs/testing.md, "fio's zoned conformance script"). In make
# check the two run in different lanes, so it is the latter.
#
# The seven time-based cases (30, 31, 32, 48, 51, 57, 58; 10 s each here,
# tests/lib/zbd.sh) are left out to keep CI within its time:
# SMR_ZBD_TESTS="30 31 32 48 51 57 58" (or any list) runs them. All of
# them passed through SCSI on 2026-11-27 (docs/scsi.md, "Tests").

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"
. "$(dirname "$0")/lib/zbd.sh"

_prep_test "fio t/zbd/test-zbd-support on a host-managed drive as a SCSI disk"
zbd_prep
require_cmd sg_inq
SCSI=$SMR_ROOT/userspace/smr-scsi/smr-scsi
[ -x "$SCSI" ] || bail "no $SCSI: make -C userspace"
modprobe target_core_user 2>/dev/null && modprobe tcm_loop 2>/dev/null ||
	skip_all "the kernel has no target_core_user or tcm_loop"

zbd_create t_${TID}_hm
hmdev=$dev
_scsi02_exit() {
	local rc=$?
	"$SCSI" --stop t_scsi02 > /dev/null 2>&1
	(exit $rc)
	_cleanup_test
}
trap _scsi02_exit EXIT
out=$("$SCSI" --daemon --log "$SMR_STATE/smr-scsi.log" --name t_scsi02 "$hmdev")
SD=${out#*: }
[ -b "$SD" ] || bail "smr-scsi did not export $hmdev: $out $(tail -5 "$SMR_STATE/smr-scsi.log")"
ok "exported as $SD"
udevadm settle 2> /dev/null
assert_eq "sd: host-managed" host-managed "$(cat "/sys/block/${SD#/dev/}/queue/zoned")"
diag "queue/scheduler of $SD: $(cat "/sys/block/${SD#/dev/}/queue/scheduler")"

TIMED="30 31 32 48 51 57 58"
zbd_run "$SD" $TIMED

# The dm device's outcomes: test_fio_02's in this run, else those it has
# on every kernel.
ref=$SMR_STATE/../test_fio_02_zbd_conformance/cases.txt
if [ ! -s "$ref" ]; then
	ref=$T_WORK/dm-cases.txt
	# (50 and 52: measured with 8 conventional zones on 6.1 and 6.12)
	for n in $(seq 1 8) $(seq 11 41) $(seq 44 48) 50 52 53 55 57 58; do
		echo "$n PASS"
	done > "$ref"
	diag "the dm device's outcomes: those test_fio_02 has on every kernel"
fi
# (the cases left out here are no case to compare)
worse=$(join <(sort "$ref") <(sort "$SMR_STATE/cases.txt") |
	awk '$2 == "PASS" && $3 != "PASS" { printf "%s%s: %s", s, $1, $3; s = ", " }')
more=$(join -a 2 -e NONE -o 0,1.2,2.2 <(sort "$ref") <(sort "$SMR_STATE/cases.txt") |
	awk '$2 != "PASS" && $3 == "PASS" { printf "%s%s", s, $1; s = " " }')
assert_eq "every case that passed on the dm device passes through SCSI" "" "$worse"
diag "cases that pass only through SCSI: ${more:-none}"
diag "the export: $(tail -n 3 "$SMR_STATE/smr-scsi.log")"
check "smr-scsi --stop" "$SCSI" --stop t_scsi02
dmesg_check "no kernel warnings"
_show_result
