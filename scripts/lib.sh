# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# scripts/lib.sh - helpers shared by the set-up scripts. Source it after
# setting ME (the name messages start with).

# die MESSAGE...: print "ME: MESSAGE" to stderr and exit 1.
die() {
	echo "$ME: $*" >&2
	exit 1
}

# quietly CMD...: run CMD with its output in a log, shown only if it fails.
quietly() {
	local log

	log=$(mktemp "/tmp/$ME.XXXXXX.log")
	if ! "$@" > "$log" 2>&1; then
		tail -n 40 "$log" >&2
		die "failed: $* (log: $log)"
	fi
	rm -f "$log"
}

# installed PACKAGE: is the Debian package installed?
installed() {
	[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" = "ii " ]
}

# install_missing PACKAGE...: apt-get install those of the Debian packages
# that are not installed (after an apt-get update), saying which.
install_missing() {
	local p missing=()

	for p in "$@"; do
		installed "$p" || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	echo "$ME: installing ${missing[*]}"
	quietly apt-get update -q
	quietly apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# third_party_tree WHAT DEST UPSTREAM: find and check a third-party
# source and the directory its build goes to (DEST), for the set-up
# scripts that build what Debian does not package (setup-libzbc.sh,
# setup-fstests.sh). The source is env WHAT_SRC (upper case: an archive
# or an unpacked tree), else the newest ../shared/sources/WHAT-*.tar.gz
# beside the project. Sets SRC to its real path and DEST to an absolute
# one, never /; dies, naming the variable and UPSTREAM, when there is no
# source.
third_party_tree() {
	local what=$1 var root

	var=$(echo "$what" | tr '[:lower:]' '[:upper:]')_SRC
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	SRC=${!var:-$(ls -d "$root"/../shared/sources/"$what"-*.tar.gz 2>/dev/null | sort -V | tail -n 1)}
	DEST=$2
	[ -n "$SRC" ] && [ -e "$SRC" ] ||
		die "no $what source: set $var to an archive or a tree of $what (upstream: $3)"
	SRC=$(readlink -f "$SRC")
	case $DEST in
	/*) ;;
	*) DEST=$PWD/$DEST ;;
	esac
	DEST=${DEST%/}
	[ -n "$DEST" ] && [ "$(readlink -f "$DEST")" != / ] || die "DIR must not be /"
}

# unpack_into DEST: empty DEST and put SRC's files there (SRC an archive
# with one top directory, or a tree).
unpack_into() {
	rm -rf "$1"
	mkdir -p "$1"
	if [ -d "$SRC" ]; then
		cp -a "$SRC/." "$1/"
	else
		tar -xzf "$SRC" -C "$1" --strip-components=1
	fi
}
