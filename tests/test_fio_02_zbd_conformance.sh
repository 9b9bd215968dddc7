#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 3600
# SLOW: 1
# (About 6 minutes, the longest test: make check gives it to a lane
# first, by tests/durations.)
#
# fio's own zoned block device conformance script, t/zbd/test-zbd-support
# from fio's source (scripts/setup-fio-source.sh fetches and builds it;
# Debian's fio package does not ship it), run against a host-managed
# dm-smr device, with the fio built from that source. Each of its test
# cases is one TAP line here: ok when it passed, a skip with its reason
# (SCSI-only cases, cases for regular block devices, cases that need 8
# conventional zones), not ok when it failed or never ran.
#
# The running and the reporting are tests/lib/zbd.sh's, which
# test_scsi_02 shares to run the script through the SCSI view.
#
# Geometry (tests/lib/zbd.sh): 2 MiB zones, 8 conventional, 136
# sequential, max_open 16. Eight of the script's cases are time-based
# (seven run; case 54, below, does not): 30 s each as shipped, 10 s in
# the copy run here (SMR_ZBD_RUNTIME=30 restores
# them). test-zbd-support then runs about 2.5 minutes under TCG (6 with
# 4 MiB zones and 30 s).
#
# Case 54 (randrw with verify_backlog) is not run: fio 3.33 fails it on
# any zoned device that checks write pointers. As shipped, with
# --experimental_verify=1, fio turns a write io_u into a verify read after
# the engine prepared it as a write, so libaio submits a write behind the
# write pointer and the device refuses it (here a zone_error event names
# it); without that option fio asserts in zbd_replay_write_order()
# (zbd.c:1508) and double-frees, with the target having refused nothing.
# Later fio versions rework the case. It is reported as a skip.
#
# test-zbd-support logs to files beside itself and runs the fio two
# directories up ($(dirname $0)/../../fio); the guest sees the host's
# file system read-only, so its two scripts are copied to the scratch
# directory next to a link to the built fio. The logs of all cases are
# kept in SMR_STATE (the results directory's state/<test>/ on the host),
# gzipped when large (the cases with --debug=zbd).
#
# Environment (when running the test by hand in a guest): SMR_FIO_SRC
# (default /var/lib/dm-smr/fio-src), SMR_ZBD_TESTS (case numbers to run,
# e.g. "5 12 48"; default all), SMR_ZBD_ARGS (more test-zbd-support
# options, e.g. "-z" for --debug=zbd or "-u" for io_uring).

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"
. "$(dirname "$0")/lib/zbd.sh"

_prep_test "fio t/zbd/test-zbd-support on a host-managed device"
zbd_prep
zbd_create t_${TID}_hm
zbd_run "$dev"

diag "target status: $(hm_stats "$dev")"
dmesg_check "no kernel warnings"
_show_result
