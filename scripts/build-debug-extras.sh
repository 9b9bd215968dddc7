#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/build-debug-extras.sh - the modules the SCSI and array tests need
# that the debug kernels of ../shared/kernels were built without: LIO
# (target_core_mod, target_core_user, tcm_loop, and uio under
# target_core_user) and md's RAID 1 and RAID 4/5/6 (raid1, raid456, and
# the async_tx modules under raid456). Built as external modules from
# Debian's source of the kernel's series (linux-source-6.1, -6.12) against
# the debug kernel's own build tree and configuration, so they carry its
# KASAN, lockdep and UBSAN instrumentation, and installed under
# /lib/modules/KVER/updates/smr-debug-extras. Idempotent: silent when
# they are there already.
#
# usage: scripts/build-debug-extras.sh KVER...
#
#   KVER   an installed kernel whose name ends in -smrdebug (the others
#          have these modules from Debian), e.g. 6.1.192-smrdebug
#
# The debug kernels are built without module versions, so a module from
# the same upstream release (6.1.192) loads; Debian's revisions of one
# release change no structure these modules share with the kernel. The
# work tree is /var/lib/dm-smr/debug-extras/KVER (SMR_DEBUG_EXTRAS_DIR).

set -euo pipefail
ME=build-debug-extras
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
export DEBIAN_FRONTEND=noninteractive
[ $# -gt 0 ] || die "usage: $0 KVER... (a -smrdebug kernel)"
[ "$(id -u)" = 0 ] || die "run as root (it installs modules)"

# The modules, by the directory of the source tree they come from, with
# the kconfig symbols that select them (set to m on make's command line:
# the debug config has them off, so its auto.conf does not name them).
WANT_KOS="uio target_core_mod target_core_user tcm_loop async_tx async_memcpy async_xor async_pq async_raid6_recov raid1 raid456"

build_one() {
	local kver=$1 series build work dest src tarball d
	case $kver in
	*-smrdebug) ;;
	*) die "$kver is not a debug kernel of ../shared/kernels: its own packages have these modules" ;;
	esac
	build=/lib/modules/$kver/build
	[ -f "$build/Makefile" ] || die "no build tree for $kver ($build): install its linux-headers package"
	series=$(echo "$kver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
	[ -n "$series" ] || die "cannot tell the series of $kver"
	work=${SMR_DEBUG_EXTRAS_DIR:-/var/lib/dm-smr/debug-extras}/$kver
	dest=/lib/modules/$kver/updates/smr-debug-extras
	local have=1 m
	for m in $WANT_KOS; do [ -f "$dest/$m.ko" ] || have=0; done
	[ $have = 1 ] && return 0

	tarball=/usr/src/linux-source-$series.tar.xz
	[ -f "$tarball" ] || install_missing "linux-source-$series"
	[ -f "$tarball" ] || die "no $tarball after installing linux-source-$series"
	echo "$ME: $kver: unpacking drivers/target, drivers/uio, drivers/md, crypto/async_tx of linux-source-$series"
	rm -rf "$work"
	mkdir -p "$work"
	src=linux-source-$series
	tar -xJf "$tarball" -C "$work" "$src/drivers/target" "$src/drivers/uio" \
		"$src/drivers/md" "$src/crypto/async_tx"
	src=$work/$src

	# md: raid1 and raid456 only, in a folder of their own (drivers/md's
	# Makefile would build every dm target again under auto.conf's
	# CONFIG_BLK_DEV_DM=m).
	d=$work/md
	mkdir -p "$d"
	cp "$src"/drivers/md/*.h "$src"/drivers/md/raid1.c "$src"/drivers/md/raid1-10.c \
		"$src"/drivers/md/raid5*.c "$d/"
	cat > "$d/Kbuild" <<-'EOF'
	obj-m := raid1.o raid456.o
	raid456-y := raid5.o raid5-cache.o raid5-ppl.o
	EOF

	kmake() {
		local dir=$1
		shift
		echo "$ME: $kver: building ${dir#"$work"/}"
		make -s -C "$build" M="$dir" -j"$(nproc)" "$@" modules > "$dir.log" 2>&1 ||
			{ tail -n 30 "$dir.log" >&2; die "$kver: building $dir failed (log: $dir.log)"; }
	}
	kmake "$src/drivers/uio" CONFIG_UIO=m
	kmake "$src/drivers/target" CONFIG_TARGET_CORE=m CONFIG_TCM_USER2=m CONFIG_LOOPBACK_TARGET=m \
		KBUILD_EXTRA_SYMBOLS="$src/drivers/uio/Module.symvers"
	kmake "$src/crypto/async_tx" CONFIG_ASYNC_CORE=m CONFIG_ASYNC_MEMCPY=m CONFIG_ASYNC_XOR=m \
		CONFIG_ASYNC_PQ=m CONFIG_ASYNC_RAID6_RECOV=m
	kmake "$d" KBUILD_EXTRA_SYMBOLS="$src/crypto/async_tx/Module.symvers"

	rm -rf "$dest"
	mkdir -p "$dest"
	for m in $WANT_KOS; do
		find "$work" -name "$m.ko" -exec cp {} "$dest/" \;
		[ -f "$dest/$m.ko" ] || die "$kver: $m.ko was not built"
	done
	depmod -a "$kver"
	echo "$ME: $kver: installed $(echo "$WANT_KOS" | wc -w) modules in $dest"
}

for kver in "$@"; do
	build_one "$kver"
done
