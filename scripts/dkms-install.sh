#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/dkms-install.sh - register the modules with DKMS, so that every
# kernel a test box installs gets them built (dkms.conf: AUTOINSTALL).
#
#   scripts/dkms-install.sh [--build-only] [KVER...]
#   scripts/dkms-install.sh --register-only
#
# Copies the module sources (and nothing else: no .git, no results, no
# objects) to /usr/src/dm-smr-<version>, runs "dkms add", then "dkms
# build" and, unless --build-only, "dkms install" for each KVER (default:
# the running kernel). DKMS builds through the top-level Makefile, so the
# compat probes run against each kernel's headers. A failed build prints
# the end of DKMS's make.log.
#
# One run at a time: each starts by removing the registration and the
# source copy the last one made, which would pull them from under a build
# still running (CI builds beside its tests, and a unit test registers).
# A second run waits for the first (at most SMR_DKMS_WAIT seconds, default
# 1800), on a lock in DKMS's tree.
#
# Environment: SMR_DKMS_TREE and SMR_DKMS_SOURCE, the trees DKMS keeps
# its builds and the sources in (default /var/lib/dkms and /usr/src):
# the unit tests register in trees of their own.
set -euo pipefail
cd "$(dirname "$0")/.."
ME=dkms-install
# shellcheck source=scripts/lib.sh
. scripts/lib.sh

INSTALL=1
if [ "${1:-}" = --build-only ]; then INSTALL=0; shift; fi
if [ "${1:-}" = --register-only ]; then shift; set -- ; REGISTER_ONLY=1; fi
[ $# -gt 0 ] || [ "${REGISTER_ONLY:-0}" = 1 ] || set -- "$(uname -r)"
command -v dkms > /dev/null || die "install dkms first (apt-get install dkms)"

name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' dkms.conf)
version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
dkms_tree=${SMR_DKMS_TREE:-/var/lib/dkms}
source_tree=${SMR_DKMS_SOURCE:-/usr/src}
dkms() {
	command dkms --dkmstree "$dkms_tree" --sourcetree "$source_tree" "$@"
}
src=$source_tree/$name-$version
tree=$dkms_tree/$name/$version

mkdir -p "$dkms_tree" "$source_tree"
exec 9> "$dkms_tree/.$name.lock"
if ! flock -n 9; then
	echo "$ME: another run is registering or building $name; waiting for it"
	flock -w "${SMR_DKMS_WAIT:-1800}" 9 ||
		die "another run still holds $dkms_tree/.$name.lock after ${SMR_DKMS_WAIT:-1800} s"
fi

# Forget an earlier registration first. "dkms status" cannot see one
# whose source directory is gone (it only complains on stderr), yet "dkms
# add" refuses while its tree exists, so look at the tree itself; and if
# "dkms remove" cannot read it either, drop the tree by hand.
if [ -e "$tree" ] || [ -L "$tree" ]; then
	dkms remove -m "$name" -v "$version" --all > /dev/null 2>&1 || true
	rm -rf "$tree"
fi
# The sources DKMS needs, as a clean copy: the files git tracks or, with
# no git (a fresh Debian has none) or no repository (a tarball), the same
# set by name, leaving out what a build in this tree made.
rm -rf "$src"
mkdir -p "$src"
if command -v git > /dev/null && git ls-files --error-unmatch Kbuild > /dev/null 2>&1; then
	git ls-files -z -- Kbuild Makefile dkms.conf compat common dm-smr dm-caveat |
		xargs -0 cp --parents -t "$src"
else
	cp -r --parents Kbuild Makefile dkms.conf compat/probe.sh compat/*.h \
		compat/probes compat/golden common/*.[ch] common/Kbuild dm-smr/*.[ch] dm-smr/Kbuild \
		dm-smr/uapi dm-caveat/*.[ch] dm-caveat/Kbuild dm-caveat/uapi "$src"
	rm -f "$src"/common/*.mod.c "$src"/dm-smr/*.mod.c "$src"/dm-caveat/*.mod.c
fi
rm -rf "$src/compat/generated"
dkms add -m "$name" -v "$version" > /dev/null

for k in "$@"; do
	echo "$ME: building $name $version for $k"
	if ! dkms build -m "$name" -v "$version" -k "$k"; then
		if [ -f "$tree/build/make.log" ]; then
			echo "$ME: the end of $tree/build/make.log:"
			tail -n 40 "$tree/build/make.log"
		fi
		die "the DKMS build for $k failed"
	fi
	[ $INSTALL = 0 ] || dkms install -m "$name" -v "$version" -k "$k"
done
