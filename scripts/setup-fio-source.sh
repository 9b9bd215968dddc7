#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/setup-fio-source.sh - fetch fio's source as Debian 12 packages it
# and build fio from it, for fio's own zoned conformance script
# t/zbd/test-zbd-support (tests/test_fio_02_zbd_conformance.sh runs it).
# Idempotent: silent when the tree is already built, one line per thing it
# does otherwise.
#
# usage: scripts/setup-fio-source.sh [DIR]
#
#   DIR (default: env SMR_FIO_SRC, else /var/lib/dm-smr/fio-src) gets the
#   unpacked source with Debian's patches applied, a `fio` binary built
#   from it at its top and t/zbd/ beside it: test-zbd-support runs
#   $(dirname $0)/../../fio, so the binary must sit there. t/zbd/ needs no
#   compiled helper (its scripts use blkzone, from util-linux).
#
#   Debian's fio binary package has no t/zbd/, hence the source. The
#   version fetched is the one of the installed fio package (3.33-3 on
#   Debian 12), or bookworm's current one if fio is not installed. The
#   host's apt configuration is left alone: the deb-src line, the package
#   lists and apt's caches are private to a temporary directory.
#
#   fio's configure adds -march=native when the compiler accepts it; the
#   test VM runs under TCG, whose CPU lacks many host instructions (the
#   binary dies of SIGILL there), so configure runs with --disable-native,
#   as Debian's own build does.
#
#   Build dependencies installed when missing: dpkg-dev (dpkg-source),
#   build-essential, libaio-dev (fio's libaio engine, which most of
#   test-zbd-support uses) and zlib1g-dev.
#
# Environment: SMR_FIO_SRC (DIR), SMR_FIO_VERSION (Debian version of the
# source package, e.g. 3.33-3; default: that of the installed fio),
# SMR_DEBIAN_MIRROR (default http://deb.debian.org/debian),
# SMR_FIO_SUITE (default bookworm).

set -euo pipefail

ME=setup-fio-source
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
DEST=${1:-${SMR_FIO_SRC:-/var/lib/dm-smr/fio-src}}
MIRROR=${SMR_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=${SMR_FIO_SUITE:-bookworm}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
BUILD_DEPS=(dpkg-dev build-essential libaio-dev zlib1g-dev)
# In DEST, from a build that completed: what was built.
STAMP_NAME=.dm-smr-fio-src
export DEBIAN_FRONTEND=noninteractive

[ "$(id -u)" = 0 ] || die "run as root (apt-get install of the build dependencies)"
case $DEST in
/*) ;;
*) DEST=$PWD/$DEST ;;
esac
DEST=${DEST%/}
if [ -z "$DEST" ] || [ "$(readlink -f "$DEST")" = / ]; then
	die "DIR must not be /"
fi

VERSION=${SMR_FIO_VERSION:-}
if [ -z "$VERSION" ] && installed fio; then
	VERSION=$(dpkg-query -W -f='${Version}' fio)
fi
WANT="fio ${VERSION:-any} configure --disable-native"

# ------------------------------------------------------- already done ---

STAMP=$DEST/$STAMP_NAME
if [ -f "$STAMP" ] && [ -x "$DEST/fio" ] &&
   [ -x "$DEST/t/zbd/test-zbd-support" ]; then
	have=$(cat "$STAMP")
	if [ "$have" = "$WANT" ] || [ -z "$VERSION" ]; then
		exit 0
	fi
	echo "$ME: $DEST holds '$have', want '$WANT': building again"
elif [ -e "$DEST" ] && [ ! -f "$STAMP" ]; then
	die "$DEST exists but was not made by this script: remove it or choose another DIR"
fi

# ------------------------------------------------- build dependencies ---

install_missing "${BUILD_DEPS[@]}"

# ------------------------------------------------------------- source ---

TMP=$(mktemp -d "/tmp/$ME.XXXXXX")
PARTIAL=$DEST.partial
trap 'rm -rf "$TMP" "$PARTIAL"' EXIT

# apt with a deb-src line, package lists and caches of its own: the host's
# sources, lists and caches are neither read for this nor changed.
mkdir -p "$TMP/lists/partial" "$TMP/cache/archives/partial" "$TMP/dl"
echo "deb-src [signed-by=$KEYRING] $MIRROR $SUITE main" > "$TMP/sources.list"
APT_OPTS=(
	-o "Dir::Etc::SourceList=$TMP/sources.list"
	-o Dir::Etc::SourceParts=/dev/null
	-o "Dir::State::Lists=$TMP/lists"
	-o "Dir::Cache=$TMP/cache"
)
# apt downloads as the unprivileged _apt user where it can.
if id _apt > /dev/null 2>&1; then
	chmod 755 "$TMP"
	chown -R _apt:root "$TMP/lists" "$TMP/cache" "$TMP/dl"
fi

echo "$ME: downloading the source of fio${VERSION:+ $VERSION} ($SUITE)"
quietly apt-get "${APT_OPTS[@]}" update
(cd "$TMP/dl" && quietly apt-get "${APT_OPTS[@]}" source --download-only \
	"fio${VERSION:+=$VERSION}")
dscs=("$TMP"/dl/fio_*.dsc)
dsc=${dscs[0]}
[ -f "$dsc" ] || die "apt-get source left no fio_*.dsc in $TMP/dl"

echo "$ME: unpacking $(basename "$dsc") into $DEST"
mkdir -p "$(dirname "$DEST")"
rm -rf "$PARTIAL"
quietly dpkg-source --no-copy -x "$dsc" "$PARTIAL"

# -------------------------------------------------------------- build ---

echo "$ME: building fio (configure --disable-native, $(nproc) jobs)"
(cd "$PARTIAL" && quietly ./configure --disable-native)
grep -q '^CONFIG_BUILD_NATIVE=y' "$PARTIAL/config-host.mak" &&
	die "configure enabled -march=native despite --disable-native"
grep -q '^CONFIG_LIBAIO=y' "$PARTIAL/config-host.mak" ||
	die "configure found no libaio (is libaio-dev installed?)"
(cd "$PARTIAL" && quietly make -j"$(nproc)" fio)
"$PARTIAL/fio" --version > /dev/null || die "the fio built does not run"
[ -x "$PARTIAL/t/zbd/test-zbd-support" ] || die "the source has no t/zbd/test-zbd-support"

echo "$WANT" > "$PARTIAL/$STAMP_NAME"
rm -rf "$DEST"
mv "$PARTIAL" "$DEST"
echo "$ME: $DEST: $("$DEST/fio" --version), t/zbd/test-zbd-support ready"
