#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/build-debug-kernel.sh - build Debian packages of a debug kernel
# for the test VM from Debian's own source (linux-source-SERIES):
# virtme-ng's minimal VM configuration, ../shared/kernels/debug.config
# (the checkers), then scripts/debug-kernel.config (a cheaper kernel
# around them, and LIO and md as modules, so no `make debug-extras`).
#
# usage: scripts/build-debug-kernel.sh WORKDIR [SERIES]
#
#   WORKDIR  where the source is unpacked and built (about 25 GB); the
#            .debs land in it
#   SERIES   6.1 or 6.12 (default 6.12)
#
# The kernel's release ends in SMR_DEBUG_LOCALVERSION (default -smrlean),
# so it installs beside ../shared/kernels' -smrdebug ones. Install with
# dpkg -i WORKDIR/linux-{image,headers}-*.deb; then as any kernel:
# make modules test-modules KVER=..., SMR_TIMEOUT_SCALE=4 tests/vm-run
# --kernel ..., bench/run-costs --kernel ... (docs/testing.md).
# Takes 20-50 minutes on two cores.
set -euo pipefail
ME=build-debug-kernel
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
ROOT=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 1 ] || die "usage: $0 WORKDIR [6.1|6.12]"
work=$1
series=${2:-6.12}
case $series in 6.1|6.12) ;; *) die "series $series: 6.1 or 6.12" ;; esac
shared=${SMR_SHARED:-$ROOT/../shared}/kernels/debug.config
[ -f "$shared" ] || die "no $shared (the checkers' options)"
vng=${SMR_VENV:-$ROOT/.venv}/bin/vng
[ -x "$vng" ] || die "no $vng: run scripts/setup-deps.sh"
local_version=${SMR_DEBUG_LOCALVERSION:--smrlean}
[[ $local_version =~ ^-[a-z0-9]+$ ]] || die "SMR_DEBUG_LOCALVERSION '$local_version': a dash and lower-case letters or digits"

install_missing linux-source-"$series" bc flex bison libelf-dev libssl-dev dwarves debhelper rsync
src=/usr/src/linux-source-$series.tar.xz
[ -f "$src" ] || die "no $src after installing linux-source-$series"
mkdir -p "$work"
cd "$work"
tree=linux-source-$series
if [ ! -f "$tree/Makefile" ]; then
	echo "$ME: unpacking $src"
	tar -xJf "$src"
fi
cd "$tree"
# vng runs virtme-configkernel, which lives beside it in the venv.
# Its merger prints a line per symbol a fragment sets again (hundreds):
# quietly (scripts/lib.sh) shows them only when a step fails.
PATH=${vng%/*}:$PATH quietly "$vng" --kconfig --config "$shared" --config "$ROOT/scripts/debug-kernel.config"
# vng puts its own items after the fragments (debug info among them, which
# debug.config turns off: it doubles the build and the packages), so the
# fragments go over its result once more with the kernel's own merger.
quietly scripts/kconfig/merge_config.sh -m -Q .config "$shared" "$ROOT/scripts/debug-kernel.config"
quietly make olddefconfig
# What the fragments asked for and the configuration did not take (a
# dependency missing, a symbol renamed) is said, not left to be found.
while IFS= read -r line; do
	case $line in
	CONFIG_*=n) sym=${line%=n}; want="# $sym is not set" ;;
	CONFIG_*=*) sym=${line%%=*}; want=$line ;;
	"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *}; want=$line ;;
	*) continue ;;
	esac
	grep -qxF "$want" .config && continue
	case $want in
	"# "*) grep -q "^$sym=" .config || continue ;;	# off, or gone with what it needs
	esac
	have=$(grep "^$sym=\|^# $sym is not set" .config || true)
	if [ -n "$have" ]; then
		echo "$ME: warning: .config has $have, not '$want'" >&2
	else
		echo "$ME: warning: no $sym in this kernel's .config (asked: '$want')" >&2
	fi
done < <(cat "$shared" "$ROOT/scripts/debug-kernel.config")
echo "$ME: building $series with LOCALVERSION=$local_version ($(nproc) jobs)"
make -j"$(nproc)" bindeb-pkg LOCALVERSION="$local_version" KDEB_PKGVERSION=1 > build.log 2>&1 ||
	{ tail -n 30 build.log >&2; die "the build failed (log: $PWD/build.log)"; }
ls -1 "$work"/linux-*"$local_version"*.deb
