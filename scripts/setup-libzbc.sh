#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/setup-libzbc.sh - build libzbc with its conformance suite
# (test/zbc_test.sh), which Debian does not package, for
# tests/conformance/libzbc-scsi.sh (make libzbc-check). Idempotent:
# silent when the tree is built already, one line per thing it does
# otherwise.
#
# usage: scripts/setup-libzbc.sh [DIR]
#
#   DIR (default: env SMR_LIBZBC_DIR, else /var/lib/dm-smr/libzbc) gets
#   the built tree: DIR/test/zbc_test.sh with its programs. Nothing is
#   installed: the suite runs from the tree.
#
#   The source: env LIBZBC_SRC, an archive (.tar.gz) or an unpacked tree;
#   by default the archive in ../shared/sources/ beside the project. A
#   machine without either gets it from upstream
#   (github.com/westerndigitalcorporation/libzbc, tag v6.2.0) and names
#   it in LIBZBC_SRC.
#
#   Build dependencies installed when missing: autoconf, automake,
#   libtool (autogen.sh) and build-essential; and lsscsi, which
#   zbc_test.sh runs to tell an ATA disk from a SCSI one.

set -euo pipefail

ME=setup-libzbc
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
DEST=${1:-${SMR_LIBZBC_DIR:-/var/lib/dm-smr/libzbc}}
BUILD_DEPS=(autoconf automake libtool build-essential)
RUN_DEPS=(lsscsi)
STAMP_NAME=.dm-smr-libzbc
export DEBIAN_FRONTEND=noninteractive

third_party_tree libzbc "$DEST" "github.com/westerndigitalcorporation/libzbc, 6.x"
WANT="$(basename "$SRC") $(stat -c %s:%Y "$SRC") configure --with-test"

if ! command -v lsscsi > /dev/null; then
	[ "$(id -u)" = 0 ] || die "run as root (apt-get install of lsscsi)"
	install_missing "${RUN_DEPS[@]}"
fi
STAMP=$DEST/$STAMP_NAME
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && [ -x "$DEST/test/zbc_test.sh" ]; then
	exit 0
fi
[ "$(id -u)" = 0 ] || die "run as root (apt-get install of the build dependencies)"
install_missing "${BUILD_DEPS[@]}"

echo "$ME: building libzbc from $SRC into $DEST"
unpack_into "$DEST"
cd "$DEST"
quietly sh ./autogen.sh
# No -march=native: the tree runs in the test VM, under TCG.
quietly ./configure --with-test --disable-dependency-tracking CFLAGS="-O2 -g"
quietly make -j"$(nproc)"
[ -x test/zbc_test.sh ] && [ -d test/programs ] || die "the build left no test/zbc_test.sh"
echo "$WANT" > "$STAMP"
