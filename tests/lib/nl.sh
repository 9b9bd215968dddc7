# SPDX-License-Identifier: GPL-2.0
# tests/lib/nl.sh - helpers for the netlink / smrd / smrctl tests
# (tests/test_nl_*.sh). Source after tests/common.sh.
#
# The binaries are the host's userspace/ build (make -C userspace; make
# check builds them), seen read-only in the guest.

SMRCTL=$SMR_ROOT/userspace/smrctl/smrctl
SMRD=$SMR_ROOT/userspace/smrd/smrd
SMRD_PID=

# nl_prep: skip unless the tools and the binaries are there.
nl_prep() {
	require_cmd jq dmsetup setpriv
	[ -x "$SMRCTL" ] && [ -x "$SMRD" ] ||
		skip_all "userspace not built: make -C userspace"
	# smrd runs in the background: stop it whatever way the test ends.
	trap '_nl_rc=$?; smrd_stop; (exit $_nl_rc); _cleanup_test' EXIT
}

# nl_track NAME: remove dm device NAME (made by smrctl) at cleanup.
nl_track() { echo "$1" >> "$T_WORK/.dm-devices"; }

# smrd_start FILE [ARGS...]: start smrd writing JSON lines to FILE, wait
# until it has subscribed.
smrd_start() {
	local f=$1 i; shift
	: > "$f"
	"$SMRD" --json "$f" "$@" 2> "$f.err" &
	SMRD_PID=$!
	for i in $(seq 1 100); do
		grep -q '"event":"subscribed"' "$f" && return 0
		sleep 0.2
	done
	_helper_error "smrd did not subscribe: $(cat "$f.err")"
	return 1
}

smrd_stop() {
	[ -n "$SMRD_PID" ] || return 0
	kill "$SMRD_PID" 2>/dev/null
	wait "$SMRD_PID" 2>/dev/null
	SMRD_PID=
}

# wait_json FILE JQ_SELECT TIMEOUT_S: wait until a line of FILE matches
# the jq boolean expression. Returns 1 on timeout.
wait_json() {
	local f=$1 sel=$2 t=$3 end
	end=$(( $(date +%s) + t ))
	while [ "$(date +%s)" -le "$end" ]; do
		[ -n "$(jq -c "select($sel)" "$f" 2>/dev/null | head -n 1)" ] && return 0
		sleep 0.5
	done
	return 1
}

# jq_count FILE JQ_SELECT: lines matching.
jq_count() { jq -c "select($2)" "$1" 2>/dev/null | grep -c .; }

# dm_devt NAME: "major:minor" of a dm device.
dm_devt() { dmsetup info -c --noheadings -o major,minor "$1" | tr -d ' '; }

# as_nobody CMD...: run as an unprivileged user.
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
