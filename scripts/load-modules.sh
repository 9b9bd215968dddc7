#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/load-modules.sh - load this tree's modules: dm-mod and whatever
# else modinfo says they need from the kernel, the library smr-common
# (common/smr-common.ko) first, then each target named (dm-smr, dm-caveat;
# default both) that is not loaded yet. For the demo, the benchmarks and
# the campaign runner, which run from the tree without `make install`
# (installed modules load with `modprobe dm-smr`, which finds the library
# by itself). Exits non-zero, saying which, if a module cannot be loaded.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- dm-smr dm-caveat

loaded() { grep -q "^${1//-/_} " /proc/modules; }

load() {	# PATH (without .ko, from the tree's top)
	local m=${1#*/} ko=$ROOT/$1.ko dep out
	loaded "$m" && return 0
	[ -f "$ko" ] || { echo "load-modules: $ko is not built (make)" >&2; return 1; }
	for dep in $(modinfo -F depends "$ko" 2>/dev/null | tr ',' ' '); do
		[ "$dep" = smr-common ] || modprobe "$dep" 2>/dev/null
	done
	out=$(insmod "$ko" 2>&1) || { echo "load-modules: insmod $ko: $out" >&2; return 1; }
}

modprobe dm-mod 2>/dev/null
load common/smr-common || exit 1
for t in "$@"; do
	case $t in
	dm-smr|dm-caveat) load "$t/$t" || exit 1 ;;
	*) echo "load-modules: unknown module '$t' (dm-smr, dm-caveat)" >&2; exit 2 ;;
	esac
done
