#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/setup-fstests.sh - build fstests (xfstests), the file systems'
# own regression suite, which Debian does not package, for
# tests/conformance/fstests.sh (make fstests). Idempotent: silent when the
# tree is built already, one line per thing it does otherwise.
#
# usage: scripts/setup-fstests.sh [DIR]
#
#   DIR (default: env SMR_FSTESTS_DIR, else /var/lib/dm-smr/fstests) gets
#   the built tree; fstests runs from it (./check), nothing is installed.
#
#   The source: env FSTESTS_SRC, an archive (.tar.gz) or an unpacked
#   tree; by default the archive in ../shared/sources/ beside the
#   project. Elsewhere get it from upstream
#   (git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git, e.g. tag v2026.01.05)
#   and name it in FSTESTS_SRC.
#
#   The build and run dependencies fstests' README lists for Debian are
#   installed when missing, but for lvm2: its udev rules would scan every
#   dm device the guest makes (the VM runs over this root), and the few
#   tests that need it are "not run" without it. The users and group
#   some tests want (fsgqa, 123456-fsgqa, fsgqa2) are added.

set -euo pipefail

ME=setup-fstests
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
DEST=${1:-${SMR_FSTESTS_DIR:-/var/lib/dm-smr/fstests}}
BUILD_DEPS=(autoconf automake libtool libtool-bin make gcc pkg-config
	    uuid-dev xfslibs-dev libacl1-dev libattr1-dev libaio-dev
	    liburing-dev libcap-dev libgdbm-dev libgdbm-compat-dev)
RUN_DEPS=(acl attr bc dbench dump e2fsprogs fio gawk indent psmisc
	  python3 quota sed uuid-runtime xfsprogs btrfs-progs f2fs-tools
	  sqlite3)
STAMP_NAME=.dm-smr-fstests
export DEBIAN_FRONTEND=noninteractive

third_party_tree fstests "$DEST" "git.kernel.org/pub/scm/fs/xfs/xfstests-dev.git"
WANT="$(basename "$SRC") $(stat -c %s:%Y "$SRC")"

STAMP=$DEST/$STAMP_NAME
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -x "$DEST/check" ] &&
   [ -x "$DEST/ltp/fsstress" ]; then
	exit 0
fi
[ "$(id -u)" = 0 ] || die "run as root (apt-get install of the build dependencies, the test users)"
# Installing gawk makes it the system's awk (its alternative outranks
# mawk's); the host's awk stays what it was: tests/conformance/fstests.sh
# gives fstests a gawk of its own.
awk_was=$(readlink -f /usr/bin/awk 2> /dev/null || true)
install_missing "${BUILD_DEPS[@]}" "${RUN_DEPS[@]}"
if [ -n "$awk_was" ] && [ "$(readlink -f /usr/bin/awk)" != "$awk_was" ]; then
	echo "$ME: /usr/bin/awk back to $awk_was (gawk is for fstests alone)"
	update-alternatives --quiet --set awk "$awk_was"
fi
# Users and groups fstests' tests ask for (its README): without them
# those tests are "not run", not failed.
getent group fsgqa > /dev/null || groupadd fsgqa
getent passwd fsgqa > /dev/null || useradd -g fsgqa -M -N -s /usr/sbin/nologin fsgqa
getent passwd 123456-fsgqa > /dev/null || useradd -g fsgqa -M -N -s /usr/sbin/nologin 123456-fsgqa
getent passwd fsgqa2 > /dev/null || useradd -g fsgqa -M -N -s /usr/sbin/nologin fsgqa2

echo "$ME: building fstests from $SRC into $DEST"
unpack_into "$DEST"
cd "$DEST"
# No -march=native: the tree runs in the test VM, under TCG.
quietly make -j"$(nproc)"
[ -x check ] && [ -x ltp/fsstress ] || die "the build left no ./check or ltp/fsstress"
echo "$WANT" > "$STAMP"
