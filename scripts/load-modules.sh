#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/load-modules.sh [--built] [--verbose] [dm-smr] [dm-caveat]
#
# Load this tree's modules: dm-mod and whatever else modinfo says they
# need from the kernel, the library smr-common (common/smr-common.ko)
# first, then each target named (default both) that is not loaded yet.
# For the demo, the benchmarks, the campaign runner and the test suite in
# the guest, which run from the tree without `make install` (installed
# modules load with `modprobe dm-smr`, which finds the library by
# itself).
#
#   --built    a module that is not built is passed over, and a failed
#              load does not stop the others (the test suite: tests that
#              need a missing target skip); the exit status still says
#              whether every built one loaded
#   --verbose  one line per module on stdout: loaded, already loaded,
#              not built, or insmod FAILED and why
#
# Exits non-zero, saying which on stderr, if a module cannot be loaded.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILT=0 VERBOSE=0
while [ $# -gt 0 ]; do
	case $1 in
	--built) BUILT=1 ;;
	--verbose) VERBOSE=1 ;;
	*) break ;;
	esac
	shift
done
[ $# -gt 0 ] || set -- dm-smr dm-caveat

say() { [ $VERBOSE = 0 ] || echo "module $*"; }
loaded() { grep -q "^${1//-/_} " /proc/modules; }

load() {	# PATH (without .ko, from the tree's top)
	local m=${1#*/} ko=$ROOT/$1.ko dep out
	if loaded "$m"; then
		say "$m: already loaded"
		return 0
	fi
	if [ ! -f "$ko" ]; then
		say "$m: not built"
		[ $BUILT = 1 ] && return 0
		echo "load-modules: $ko is not built (make)" >&2
		return 1
	fi
	for dep in $(modinfo -F depends "$ko" 2>/dev/null | tr ',' ' '); do
		[ "$dep" = smr-common ] || modprobe "$dep"
	done
	if ! out=$(insmod "$ko" 2>&1); then
		say "$m: insmod FAILED: $out"
		echo "load-modules: insmod $ko: $out" >&2
		return 1
	fi
	say "$m: loaded"
}

rc=0
modprobe dm-mod
load common/smr-common || { [ $BUILT = 1 ] || exit 1; rc=1; }
for t in "$@"; do
	case $t in
	dm-smr|dm-caveat) load "$t/$t" || { [ $BUILT = 1 ] || exit 1; rc=1; } ;;
	*) echo "load-modules: unknown module '$t' (dm-smr, dm-caveat)" >&2; exit 2 ;;
	esac
done
exit $rc
