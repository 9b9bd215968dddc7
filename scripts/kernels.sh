#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/kernels.sh - the kernels the suite runs on, one per line:
#
#   <version> full|smoke
#
# the newest installed 6.1 kernel, the newest 6.12 and the newest kernel
# set up by scripts/setup-newest-kernel.sh, each with the whole suite.
# Series missing here are left out; SMR_KERNELS (as for setup-deps.sh)
# narrows the list, SMR_WHOLE_SUITE names the series that run the whole
# suite (default all three, "6.1 6.12 newest"); the others run the smoke
# set (tests marked "# SMOKE: 1"; docs/testing.md, "What runs where").
set -euo pipefail
cd "$(dirname "$0")/.."

for series in ${SMR_KERNELS:-6.1 6.12 newest}; do
	set=smoke
	case " ${SMR_WHOLE_SUITE:-6.1 6.12 newest} " in *" $series "*) set=full ;; esac
	case $series in
	6.1|6.12)
		v=$(ls /boot/vmlinuz-"$series".*-amd64 2>/dev/null | sort -V | tail -n 1)
		v=${v#/boot/vmlinuz-}
		[ -n "$v" ] && [ -d "/lib/modules/$v/build" ] && echo "$v $set"
		;;
	newest)
		v=$(scripts/setup-newest-kernel.sh --print 2>/dev/null | sed -n 's/^KVER=//p')
		[ -n "$v" ] && echo "$v $set"
		;;
	esac
done
exit 0
