#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/setup-deps.sh - install what building and testing the project
# needs, on Debian 12, idempotently. Silent when everything is there;
# one line per thing it installs otherwise.
#
#   apt packages: kernel image + headers (the VM boots Debian's kernel and
#     the modules are built against it), QEMU, fio, file system tools,
#     libdevmapper/libnl/libzbd for smrctl/smrd, zbd tools when the
#     archive has them, prove, python3-venv, matplotlib for the plots,
#     trace-cmd and bpftrace (docs/tracing.md, test_trace_01);
#   .venv/ (repo root): a venv with virtme-ng, which boots the test VM.
#
# Environment: VIRTME_NG_SPEC (pip requirement, default virtme-ng==1.42,
# the version the harness is tested with), SMR_VENV (venv path),
# SMR_KERNELS (which kernel series to install, see below), SMR_FIO_SOURCE
# (0: skip fio's source tree, which only test_fio_02 needs; default 1).
# make demo runs it with SMR_KERNELS=6.1 SMR_FIO_SOURCE=0 (what the demo
# boots and runs); make check and .ci/run with the defaults (everything).

set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
ME=setup-deps
# shellcheck source=scripts/lib.sh
. "$ROOT/scripts/lib.sh"
VENV=${SMR_VENV:-$ROOT/.venv}
VIRTME_NG_SPEC=${VIRTME_NG_SPEC:-virtme-ng==1.42}
export DEBIAN_FRONTEND=noninteractive

PACKAGES=(
	build-essential
	perl
	kmod
	linux-image-amd64
	linux-headers-amd64
	qemu-system-x86
	qemu-utils
	busybox-static
	util-linux
	e2fsprogs
	f2fs-tools
	btrfs-progs
	dmsetup
	fio
	mdadm
	sg3-utils
	jq
	libdevmapper-dev
	libnl-genl-3-dev
	libzbd-dev
	dkms
	pkg-config
	python3
	python3-venv
	python3-matplotlib
	trace-cmd
)
# The kernel series to set up (below).
SERIES=${SMR_KERNELS:-6.1 6.12 newest}
# The newest kernel's chroot needs debootstrap: installed with the rest, so
# that its set-up (below) never runs apt-get on the host beside ours.
case " $SERIES " in
*" newest "*) PACKAGES+=(debootstrap) ;;
esac
# Installed only if the archive has them (libzbd is not in every release).
OPTIONAL=(
	zbd-utils
	bpftrace
)

SUDO=
if [ "$(id -u)" != 0 ]; then
	command -v sudo >/dev/null || { echo "setup-deps: run as root (or install sudo)" >&2; exit 1; }
	SUDO=sudo
fi

missing=()
for p in "${PACKAGES[@]}" "${OPTIONAL[@]}"; do
	installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	log=$(mktemp /tmp/setup-deps.XXXXXX.log)
	if ! $SUDO apt-get update -q > "$log" 2>&1; then
		cat "$log" >&2; echo "setup-deps: apt-get update failed" >&2; exit 1
	fi
	want=()
	for p in "${missing[@]}"; do
		case " ${OPTIONAL[*]} " in
		*" $p "*)
			cand=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
			[ -n "$cand" ] && [ "$cand" != "(none)" ] || continue
			;;
		esac
		echo "setup-deps: installing $p"
		want+=("$p")
	done
	if [ ${#want[@]} -gt 0 ] &&
	   ! $SUDO apt-get install -y -q --no-install-recommends "${want[@]}" >> "$log" 2>&1; then
		tail -n 40 "$log" >&2
		echo "setup-deps: apt-get install failed (log: $log)" >&2
		exit 1
	fi
	rm -f "$log"
fi

# The kernels the VM boots, each with its headers (the modules are built
# against them). SMR_KERNELS lists the series, default all three:
#   6.1     Debian 12's own kernel (linux-image-amd64);
#   6.12    the newest 6.12 LTS kernel of bookworm-security, built with
#           gcc-12 like 6.1 (linux-image-6.12.*+deb12-amd64);
#   newest  Debian's newest kernel (trixie-backports), which needs gcc-14:
#           set up in a chroot by scripts/setup-newest-kernel.sh.
# Versions are looked up in the archive at run time, never written here.
install_kernel() {	# VER: image and headers of one Debian kernel
	local v=$1 reinstall=

	[ -f "/boot/vmlinuz-$v" ] && [ -f "/lib/modules/$v/build/Makefile" ] && return 0
	# Installed but with files gone (a machine restored in part): apt
	# would call that done, so ask for a reinstall.
	if installed "linux-image-$v" || installed "linux-headers-$v"; then
		reinstall=--reinstall
	fi
	echo "setup-deps: installing linux-image-$v and its headers ${reinstall:+(again)}"
	$SUDO apt-get install -y -q --no-install-recommends $reinstall \
		"linux-image-$v" "linux-headers-$v" > /dev/null
}

for series in $SERIES; do
	case $series in
	6.1|6.12|newest) ;;
	*)
		echo "setup-deps: unknown kernel series '$series' in SMR_KERNELS (6.1, 6.12, newest)" >&2
		exit 1
		;;
	esac
done
# The newest kernel first: its minutes of debootstrap and apt run in a
# chroot of its own (its own dpkg database), beside the installs of the
# other two kernels, fio's source and the venv here. (If the set-up here
# fails first, that one still finishes: it stops cleanly only by itself,
# and a later run takes up what it left.)
case " $SERIES " in
*" newest "*)
	newest_log=$(mktemp /tmp/setup-newest.XXXXXX.log)
	"$ROOT/scripts/setup-newest-kernel.sh" > /dev/null 2> "$newest_log" &
	newest_pid=$!
	;;
esac
for series in $SERIES; do
	case $series in
	6.1)
		kver=$(ls /boot/vmlinuz-6.1.*-amd64 2>/dev/null | sort -V | tail -n 1)
		kver=${kver#/boot/vmlinuz-}
		[ -n "$kver" ] || { echo "setup-deps: no 6.1 kernel after installing linux-image-amd64" >&2; exit 1; }
		install_kernel "$kver"
		;;
	6.12)
		[ -n "$(apt-cache search --names-only '^linux-image-6\.12\..*\+deb12-amd64$' 2>/dev/null)" ] ||
			$SUDO apt-get update -q > /dev/null
		kver=$(apt-cache search --names-only '^linux-image-6\.12\..*\+deb12-amd64$' |
			sed -n 's/^linux-image-\([^ ]*\) .*/\1/p' | grep -v -- '-unsigned' | sort -V | tail -n 1)
		[ -n "$kver" ] || { echo "setup-deps: bookworm-security has no 6.12 kernel" >&2; exit 1; }
		install_kernel "$kver"
		;;
	newest) ;;	# started above
	esac
done

# fio's source tree, for its zoned conformance script (test_fio_02).
if [ "${SMR_FIO_SOURCE:-1}" != 0 ]; then
	"$ROOT/scripts/setup-fio-source.sh"
fi

# virtme-ng in the project's own venv (Debian's python, from python3-venv).
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if ! "$VENV/bin/vng" --version >/dev/null 2>&1; then
	echo "setup-deps: installing $VIRTME_NG_SPEC into $VENV"
	rm -rf "$VENV"
	"$py" -m venv "$VENV"
	"$VENV/bin/pip" install -q --disable-pip-version-check "$VIRTME_NG_SPEC"
	"$VENV/bin/vng" --version >/dev/null
fi

if [ -n "${newest_pid:-}" ]; then
	if ! wait "$newest_pid"; then
		cat "$newest_log" >&2
		echo "setup-deps: setting up the newest kernel failed" >&2
		exit 1
	fi
	# Its progress lines ("installing ...") went to stderr: show them.
	cat "$newest_log" >&2
	rm -f "$newest_log"
fi
