#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/setup-newest-kernel.sh - set up Debian's newest kernel (from
# trixie-backports) to build the modules against and to boot in the test
# VM, on a Debian 12 host, idempotently. Silent when everything is there;
# one line per thing it installs otherwise.
#
# usage: scripts/setup-newest-kernel.sh                set up, then print
#        scripts/setup-newest-kernel.sh --print        print only
#        scripts/setup-newest-kernel.sh --build DIR [TARGET...]
#        scripts/setup-newest-kernel.sh --dkms DIR
#
#   The kernel's headers need gcc-14, which bookworm does not have, so they
#   live in a trixie chroot (debootstrap, minbase) with trixie-backports in
#   the chroot's own apt sources; the host's sources are left alone. Set up:
#     - the newest linux-headers-VER-amd64 of trixie-backports whose image
#       is there too, in the chroot;
#     - boot-VER/ in the chroot's directory: that kernel's image and modules
#       unpacked from their packages (since 7.x: linux-binary-VER and
#       linux-modules-VER), with a modules.dep made by the host's depmod.
#       Booted as `vng --run $KIMG ...`, virtme-ng finds the modules beside
#       the image and links them to /lib/modules/VER in the guest.
#   Kernels set up by an earlier run are removed.
#
#   --print prints, without looking for a newer kernel, shell assignments
#   for the kernel set up: eval "$(scripts/setup-newest-kernel.sh --print)"
#     KVER    kernel release
#     KIMG    kernel image, for vng --run
#     MODDIR  its modules
#     CHROOT  the trixie chroot
#     KDIR    kernel build tree, a path inside CHROOT
#
#   --build DIR [TARGET...] runs the project's Makefile in DIR in the chroot,
#   `make -C DIR KDIR=$KDIR KVER=$KVER TARGET...` (default target: modules),
#   with DIR bind-mounted at its own path.
#
#   --dkms DIR builds the project in DIR with DKMS in the chroot, as a
#   Debian 13 box would (scripts/dkms-install.sh --build-only), installing
#   dkms (and openssl, for its module signing key) there first if needed.
#
# Environment: SMR_TRIXIE_ROOT (the chroot, default /var/lib/dm-smr/trixie),
# SMR_DEBIAN_MIRROR (default http://deb.debian.org/debian).

set -euo pipefail

ME=setup-newest-kernel
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
ROOT=${SMR_TRIXIE_ROOT:-/var/lib/dm-smr/trixie}
MIRROR=${SMR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
CHROOT_PACKAGES=make,gcc-14,libc6-dev,bc,libelf-dev,libssl-dev,kmod
export DEBIAN_FRONTEND=noninteractive

usage() {
	sed -n 's/^# \{0,1\}//; /^usage:/,/^$/p' "$0" >&2
	exit "$1"
}

MODE=setup
case "${1:-}" in
"") ;;
--print) MODE=print ;;
--build) MODE=build; [ $# -ge 2 ] || usage 1 ;;
--dkms) MODE=dkms; [ $# = 2 ] || usage 1 ;;
-h|--help) usage 0 ;;
*) usage 1 ;;
esac

[ "$(id -u)" = 0 ] || die "run as root (debootstrap, chroot, mount)"
[ "$(readlink -f "$ROOT")" != / ] || die "SMR_TRIXIE_ROOT must not be /"

# Run in a mount namespace of our own: what we mount in the chroot (/proc,
# the --build directory) goes away with us, even if we are killed, and no
# later `rm -rf` of the chroot can reach through a stale bind mount.
if [ -z "${SMR_IN_OWN_MOUNT_NS:-}" ]; then
	SMR_IN_OWN_MOUNT_NS=1 exec unshare --mount --propagation private -- \
		"$BASH" "$0" "$@"
fi

in_chroot() {
	chroot "$ROOT" "$@"
}

mount_proc() {
	mountpoint -q "$ROOT/proc" || mount -t proc proc "$ROOT/proc"
}

# The newest kernel set up in the chroot: its release, or nothing.
installed_kver() {
	local dir kver

	for dir in "$ROOT"/boot-*; do
		kver=${dir##*/boot-}
		if [ -d "$ROOT/usr/src/linux-headers-$kver" ]; then
			echo "$kver"
		fi
	done | sort -V | tail -n 1
}

# The image of kernel VER unpacked in BOOT: since 7.x beside the modules,
# before that in /boot.
kimg() {
	local boot=$1 kver=$2

	if [ -f "$boot/usr/lib/modules/$kver/vmlinuz" ]; then
		echo "$boot/usr/lib/modules/$kver/vmlinuz"
	else
		echo "$boot/boot/vmlinuz-$kver"
	fi
}

print_kernel() {
	local kver=$1

	printf 'KVER=%q\n' "$kver"
	printf 'KIMG=%q\n' "$(kimg "$ROOT/boot-$kver" "$kver")"
	printf 'MODDIR=%q\n' "$ROOT/boot-$kver/lib/modules/$kver"
	printf 'CHROOT=%q\n' "$ROOT"
	printf 'KDIR=%q\n' "/usr/src/linux-headers-$kver"
}

setup_chroot() {
	if ! command -v debootstrap > /dev/null; then
		echo "$ME: installing debootstrap"
		quietly apt-get update -q
		quietly apt-get install -y -q --no-install-recommends debootstrap
	fi

	# debootstrap removes $ROOT/debootstrap/ once it has finished.
	if [ ! -f "$ROOT/etc/debian_version" ] || [ -d "$ROOT/debootstrap" ]; then
		echo "$ME: installing a trixie chroot in $ROOT"
		mkdir -p "$ROOT"
		quietly debootstrap --variant=minbase \
			--include="$CHROOT_PACKAGES" trixie "$ROOT" "$MIRROR"
	fi

	local list=$ROOT/etc/apt/sources.list.d/trixie-backports.list
	if [ ! -f "$list" ]; then
		echo "$ME: adding trixie-backports to the chroot's apt sources"
		echo "deb $MIRROR trixie-backports main" > "$list"
	fi
	mount_proc
	quietly in_chroot apt-get update -q
}

# The newest VER for which the chroot's archives have both
# linux-headers-VER-amd64 and linux-image-VER-amd64 (the image comes from
# another source package, linux-signed-amd64, and can lag behind).
newest_kver() {
	in_chroot apt-cache search --names-only \
		'^linux-(headers|image)-[0-9][^-]*-amd64$' |
		sed 's/^linux-[a-z]*-\([^ ]*\) .*/\1/' | sort -V | uniq -d | tail -n 1
}

install_headers() {
	local pkg=linux-headers-$1

	# shellcheck disable=SC2016 # a dpkg-query format, not an expansion
	[ "$(in_chroot dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null)" != "ii " ] ||
		return 0
	echo "$ME: installing $pkg in the chroot"
	quietly in_chroot apt-get install -y -q --no-install-recommends \
		-t trixie-backports "$pkg"
	quietly in_chroot apt-get clean
}

# Unpack the kernel image and modules into $ROOT/boot-VER: the packages
# linux-image-VER depends on that are named after VER (since 7.x the image
# itself is split into linux-binary-VER, linux-modules-VER, linux-base-VER).
install_boot() {
	local kver=$1 boot=$ROOT/boot-$1 debs pkgs=() deb

	[ ! -d "$boot" ] || return 0
	echo "$ME: installing linux $kver (image and modules) in $boot"
	mapfile -t pkgs < <(in_chroot apt-cache depends "linux-image-$kver" |
		sed -n "s/^ *Depends: \(linux-[a-z]*-$kver\)$/\1/p")
	debs=$(mktemp -d "$ROOT/tmp/$ME.XXXXXX")
	# apt-get download writes to the current directory.
	quietly in_chroot env -C "${debs#"$ROOT"}" apt-get download -q \
		-o APT::Sandbox::User=root "linux-image-$kver" "${pkgs[@]}"

	rm -rf "$boot.new"
	mkdir "$boot.new"
	for deb in "$debs"/*.deb; do
		dpkg-deb -x "$deb" "$boot.new"
	done
	rm -rf "$debs"
	# Merged /usr, as in the chroot: lib/modules is where depmod -b and
	# virtme-ng look.
	[ -e "$boot.new/lib" ] || ln -s usr/lib "$boot.new/lib"
	[ -f "$(kimg "$boot.new" "$kver")" ] ||
		die "no kernel image in the packages of linux-image-$kver"
	# The guest runs the host's modprobe: index the modules with its depmod.
	depmod -b "$boot.new" "$kver"
	mv "$boot.new" "$boot"
}

# Keep the newest kernel only: remove those an earlier run set up.
remove_old() {
	local kver=$1 dir old

	for dir in "$ROOT"/boot-*; do
		old=${dir##*/boot-}
		if [ ! -d "$dir" ] || [ "$old" = "$kver" ]; then
			continue
		fi
		echo "$ME: removing linux $old"
		quietly in_chroot apt-get purge -y -q "linux-headers-$old"
		quietly in_chroot apt-get autoremove --purge -y -q
		rm -rf "$dir"
	done
}

build() {
	local kver=$1 src

	src=$(realpath "$2")
	shift 2
	[ -d "$src" ] || die "$src: not a directory"
	[ $# -gt 0 ] || set -- modules
	mkdir -p "$ROOT$src"
	mount --bind "$src" "$ROOT$src"
	mount_proc
	# The project's own Makefile, so the compat probes run against it too.
	in_chroot make -C "$src" KDIR="/usr/src/linux-headers-$kver" \
		KVER="$kver" "$@"
}

dkms_build() {
	local kver=$1 src

	src=$(realpath "$2")
	[ -f "$src/dkms.conf" ] || die "$src: no dkms.conf"
	mount_proc
	if ! in_chroot sh -c "command -v dkms && command -v openssl" > /dev/null; then
		echo "$ME: installing dkms in the chroot"
		quietly in_chroot apt-get install -y -q --no-install-recommends dkms openssl
	fi
	mkdir -p "$ROOT$src"
	mount --bind "$src" "$ROOT$src"
	in_chroot bash "$src/scripts/dkms-install.sh" --build-only "$kver"
}

case $MODE in
setup)
	setup_chroot
	kver=$(newest_kver)
	[ -n "$kver" ] || die "no kernel (headers and image) in the chroot's archives"
	install_headers "$kver"
	install_boot "$kver"
	remove_old "$kver"
	print_kernel "$kver"
	;;
print|build|dkms)
	kver=$(installed_kver)
	[ -n "$kver" ] || die "no kernel set up in $ROOT: run $0 first"
	case $MODE in
	print) print_kernel "$kver" ;;
	build) build "$kver" "${@:2}" ;;
	dkms) dkms_build "$kver" "$2" ;;
	esac
	;;
esac
