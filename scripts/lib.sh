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
