#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# tests/lib/guest-suite.sh - runs inside the VM started by tests/vm-run.
#
# guest-suite.sh --results DIR --boot-id ID [--state-root DIR]
#                [--plan FILE] [K:TIMEOUT:PATH...]
#
# Loads dm-mod and whichever project modules were built, then runs each
# test PATH (TAP number K) under `timeout TIMEOUT` (given as arguments or
# one per line in FILE: vng passes the command on the kernel command line,
# which is limited to 2 KiB, so tests/vm-run uses a plan file), in kselftest runner
# style: the test's output becomes "# " comment lines, followed by
# "ok K name", "not ok K name # reason" or "ok K name # SKIP reason".
# Each result goes to DIR/tap/K.tap (atomically, so a crash leaves either
# the whole result or none); the host assembles suite.tap. A test also
# fails if the kernel log gained a warning while it ran (SMR_DMESG_BAD in
# tests/common.sh). After each test: unmount leftovers, remove all dm
# devices. At the end DIR/boot-ID.done is written: the host treats a boot
# without it as a VM that died.
#
# Lines starting with "smr-suite:" on stdout are progress for the host.

set -u

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RESULTS=
BOOT_ID=
STATE_ROOT=
PLAN=
while [ $# -gt 0 ]; do
	case $1 in
	--results) RESULTS=$2; shift 2 ;;
	--boot-id) BOOT_ID=$2; shift 2 ;;
	--state-root) STATE_ROOT=$2; shift 2 ;;
	--plan) PLAN=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "guest-suite: unknown option $1" >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ -z "$RESULTS" ] || [ -z "$BOOT_ID" ]; then
	echo "usage: $0 --results DIR --boot-id ID [--state-root DIR] [--plan FILE] [K:TIMEOUT:PATH...]" >&2
	exit 2
fi
STATE_ROOT=${STATE_ROOT:-$RESULTS/state}
export SMR_ROOT=$ROOT SMR_BOOT=${SMR_BOOT:-1} SMR_BOOTS=${SMR_BOOTS:-1}

# shellcheck source=../common.sh
. "$ROOT/tests/common.sh"

SUITE_TMP=/tmp/smr-suite
MNT_ROOT=/tmp/smr-mnt
mkdir -p "$SUITE_TMP" "$MNT_ROOT" "$RESULTS/tap" "$RESULTS/logs" "$STATE_ROOT"
: > "$SUITE_TMP/modules.err"

progress() { echo "smr-suite: $*"; }

# The project's modules, the library first, whichever are built
# (scripts/load-modules.sh); what modprobe and insmod said goes to
# modules.err, which a test that skips for want of a target shows.
load_modules() {
	local line
	while IFS= read -r line; do
		progress "$line"
	done < <("$ROOT/scripts/load-modules.sh" --built --verbose 2>> "$SUITE_TMP/modules.err")
}

# Unmount what a test left mounted and remove every dm device. Prints a
# comment per leftover; returns 1 if a dm device could not be removed
# (the next tests would run on a dirty system).
cleanup_after() {
	local m d left rc=0
	findmnt -rn -o TARGET,SOURCE 2>/dev/null |
	awk -v r="$MNT_ROOT" 'index($1, r) == 1 || $2 ~ "^/dev/(dm-|mapper/|vd[ab])" { print $1 }' |
	sort -r | while IFS= read -r m; do
		echo "cleanup: unmounting leftover $m"
		umount "$m" 2>/dev/null || umount -l "$m"
	done
	left=$(dmsetup ls 2>/dev/null | awk '$1 != "No" { print $1 }')
	if [ -n "$left" ]; then
		echo "cleanup: removing leftover dm devices:" $left
		dmsetup remove_all --force >/dev/null 2>&1
		left=$(dmsetup ls 2>/dev/null | awk '$1 != "No" { print $1 }')
		for d in $left; do
			dmsetup remove --force --retry "$d" >/dev/null 2>&1
		done
		left=$(dmsetup ls 2>/dev/null | awk '$1 != "No" { print $1 }')
		if [ -n "$left" ]; then
			echo "cleanup: could not remove dm devices:" $left
			rc=1
		fi
	fi
	rm -rf "${MNT_ROOT:?}"/* 2>/dev/null
	return $rc
}

# SMR_PROFILE=1: where each test's time goes, for tests/profile-report.
# The kernel's process accounting (acct(2), BSD v3 records: command,
# elapsed and CPU time, parent) writes a record for every process that
# ends while the test runs, udev's workers and their programs included,
# and /proc/stat before and after gives the guest's user, system, idle
# and I/O-wait split. Both go to RESULTS/profile/NAME.{acct,stat}. Off by
# default: turning accounting on and off costs two Python starts a test.
profile_start() {
	mkdir -p "$RESULTS/profile"
	: > "$RESULTS/profile/$1.acct"
	head -n 1 /proc/stat > "$RESULTS/profile/$1.stat"
	python3 -S -c 'import ctypes, sys
if ctypes.CDLL(None, use_errno=True).acct(sys.argv[1].encode()):
    sys.exit("acct: " + __import__("os").strerror(ctypes.get_errno()))' \
		"$RESULTS/profile/$1.acct" || progress "  profile: no process accounting for $1"
}

profile_stop() {
	python3 -S -c 'import ctypes; ctypes.CDLL(None).acct(None)'
	head -n 1 /proc/stat >> "$RESULTS/profile/$1.stat"
}

# run_one K TIMEOUT PATH: run a test, write RESULTS/tap/K.tap.
run_one() {
	local k=$1 t=$2 path=$3 name tid log frag rc result reason start secs
	local hits left mark bad crc
	name=$(basename "$path")
	tid=$(basename "$path" .sh); tid=${tid#test_}
	if [ "$SMR_BOOTS" -gt 1 ]; then
		log=$RESULTS/logs/${name%.sh}.boot$SMR_BOOT.log
	else
		log=$RESULTS/logs/${name%.sh}.log
	fi
	frag=$RESULTS/tap/$k.tap
	export SMR_WORK=/tmp/smr-work/$tid SMR_MNT=$MNT_ROOT/$tid
	export SMR_STATE=$STATE_ROOT/${name%.sh}
	rm -rf "$SMR_WORK"
	mkdir -p "$SMR_WORK" "$SMR_MNT" "$SMR_STATE"

	mark="smr-suite-mark-$BOOT_ID-$k-$RANDOM$RANDOM"
	export SMR_DMESG_MARK=$mark
	echo "$mark begin $name" > /dev/kmsg

	progress "start $k $name (timeout ${t}s, boot $SMR_BOOT/$SMR_BOOTS, log $log)"
	start=$(date +%s)
	[ "${SMR_PROFILE:-0}" != 1 ] || profile_start "${name%.sh}"
	(cd "$SMR_WORK" && exec timeout --kill-after=10 "$t" bash "$path") \
		< /dev/null > "$log" 2>&1
	rc=$?
	[ "${SMR_PROFILE:-0}" != 1 ] || profile_stop "${name%.sh}"
	secs=$(( $(date +%s) - start ))

	# Reports of known kernel bugs fail nothing, but the log says so.
	hits=$(dmesg_since "$mark" | dmesg_find_errors "$SMR_WORK/.known-bugs")
	if [ -s "$SMR_WORK/.known-bugs" ]; then
		sort -u "$SMR_WORK/.known-bugs" | sed 's/^/# known kernel report, not a failure: /' >> "$log"
		progress "  $name: the kernel log has a known kernel bug (see $log)"
	fi
	bad=$(cat "$SMR_STATE"/dmesg-boot*.bad 2>/dev/null)
	left=$(cleanup_after); crc=$?

	reason=
	case $rc in
	0) result=ok ;;
	4) result=skip ;;
	124|137) result=fail; reason="TIMEOUT ${t}s" ;;
	*) result=fail; reason="exit=$rc" ;;
	esac
	# A test that printed a skip-all plan is a skip whatever its code.
	if [ $rc = 0 ] && grep -q '^1\.\.0 # SKIP' "$log"; then
		result=skip
	fi
	if [ -n "$hits" ]; then
		result=fail; reason="${reason:+$reason, }kernel warning in dmesg"
	fi
	if [ -n "$bad" ]; then
		result=fail; reason="${reason:+$reason, }kernel warning in an earlier boot"
	fi
	if [ $crc != 0 ]; then
		result=fail; reason="${reason:+$reason, }dm devices left that cannot be removed"
	fi
	if [ $result = skip ]; then
		reason=$(sed -n 's/^1\.\.0 # SKIP *//p; s/^# SKIP *//p' "$log" | tail -n 1)
		[ -n "$reason" ] || reason="exit=4"
	fi

	{
		echo "# selftests: smr: $name"
		sed 's/^/# /' "$log"
		[ -n "$hits" ] && { echo "# dmesg during the test:"; echo "$hits" | sed 's/^/# dmesg: /'; }
		[ -n "$bad" ] && { echo "# dmesg saved by an earlier boot:"; echo "$bad" | sed 's/^/# dmesg: /'; }
		[ -n "$left" ] && echo "$left" | sed 's/^/# /'
		case $result in
		ok) echo "ok $k selftests: smr: $name" ;;
		skip) echo "ok $k selftests: smr: $name # SKIP $reason" ;;
		fail) echo "not ok $k selftests: smr: $name # $reason" ;;
		esac
	} > "$frag.tmp"
	mv "$frag.tmp" "$frag"
	sync
	progress "done $k $name: $result${reason:+ ($reason)} in ${secs}s"
	case $result in
	ok) PASS=$((PASS + 1)) ;;
	skip) SKIP=$((SKIP + 1)) ;;
	fail) FAIL=$((FAIL + 1)) ;;
	esac
}

echo 1 > /proc/sys/kernel/sysrq
progress "boot $BOOT_ID: kernel $(uname -r), $(nproc) cpus, boot $SMR_BOOT/$SMR_BOOTS"
load_modules

# udev probes every dm device at each add and change, and again each time
# a writer closes it (the "watch" of 60-persistent-storage-dm.rules):
# blkid's reads, and a dmsetup or two, for every dd and fio of every test.
# Under TCG that took about a second of CPU an event, a tenth of a
# profiled boot's time (2026-11-29), and its reads land in the counters
# tests assert on. The suite names its devices itself and looks none up
# by label or UUID, so dm devices skip the disk rules (no blkid, no
# watch) after 55-dm.rules has made their /dev/mapper nodes.
# SMR_UDEV_PROBE=1 leaves udev as it is.
UDEV_QUIET=/run/udev/rules.d/56-smr-suite.rules
if [ "${SMR_UDEV_PROBE:-0}" != 1 ]; then
	mkdir -p "${UDEV_QUIET%/*}"
	cat > "$UDEV_QUIET" <<'RULES'
# tests/lib/guest-suite.sh: no blkid and no watch for the suite's dm devices
SUBSYSTEM=="block", KERNEL=="dm-*", ENV{DM_UDEV_RULES_VSN}=="?*", ENV{DM_UDEV_DISABLE_DISK_RULES_FLAG}="1"
RULES
	udevadm control --reload 2>/dev/null
	progress "udev: no probing of dm devices ($UDEV_QUIET)"
fi

# Starting a process is most of what a test costs under TCG, and two
# programs the suite starts hundreds of times spend most of their start
# on what the suite never uses (measured in a 6.1 guest, 2026-11-30):
# - Debian's fio loads 64 shared libraries (ceph, gluster, boost, ICU,
#   ...): 1.76 s to read one block, 0.90 s for `fio --version`. The same
#   fio, built from Debian's source for fio's conformance script
#   (scripts/setup-fio-source.sh), links four: 0.45 s and 0.15 s. Where
#   that build is there and says the same version, it is the suite's fio
#   (it lacks only the engines for ceph, gluster, pmem, nbd and RDMA).
# - python3 takes 0.88 s to run nothing, 0.23 s with -S: site.py runs
#   the code lines of the .pth files in the system's site directories
#   (setuptools' distutils shim, matplotlib's namespace hook, a host's
#   certificate hook), and the suite's python needs none of them. In
#   this guest's own mount namespace each such file is covered by an
#   empty one; the host's files are not touched.
# SMR_HOST_TOOLS=1 leaves both as the host has them.
if [ "${SMR_HOST_TOOLS:-0}" != 1 ]; then
	SMR_BIN=/run/smr-suite/bin
	mkdir -p "$SMR_BIN"
	fio_src=${SMR_FIO_SRC:-/var/lib/dm-smr/fio-src}/fio
	if [ -x "$fio_src" ] && command -v fio > /dev/null &&
	   [ "$("$fio_src" --version 2>/dev/null)" = "$(fio --version 2>/dev/null)" ]; then
		ln -sf "$fio_src" "$SMR_BIN/fio"
		export PATH=$SMR_BIN:$PATH
		progress "fio: $fio_src ($(fio --version), the same version as Debian's, fewer libraries)"
	fi
	masked=0
	for pth in /usr/lib/python3/dist-packages/*.pth /usr/local/lib/python3*/dist-packages/*.pth; do
		[ -f "$pth" ] && grep -qE '^(import|from)[[:space:]]' "$pth" || continue
		mount --bind /dev/null "$pth" && masked=$((masked + 1))
	done
	[ "$masked" = 0 ] || progress "python: $masked start-up hooks (.pth code lines) covered in this guest"
	# matplotlib's FreeType reads its font file through Python's file
	# object in small pieces, each a 9p round trip here: in a 6.12
	# guest (whose 9p root mount caches nothing) one line of text took
	# 2.35 s to lay out from the root's DejaVuSans.ttf and 0.010 s from
	# a copy in the guest's memory (2026-12-02), and test_campaign_01's
	# five plots 4-5 minutes. The files the plots open (DejaVu Sans,
	# its Display face, its bold for titles: 1.5 MB; the other faces 2.4
	# MB more, 20 s a boot under a debug kernel) are copied once and
	# mounted over the root's.
	fonts=0
	mkdir -p /run/smr-suite/fonts
	for ttf in {/usr/share/matplotlib,/usr/lib/python3/dist-packages/matplotlib}/mpl-data/fonts/ttf/DejaVuSans{,-Bold,Display}.ttf; do
		[ -f "$ttf" ] && [ ! -L "$ttf" ] || continue
		cp "$ttf" /run/smr-suite/fonts/$fonts.ttf &&
			mount --bind /run/smr-suite/fonts/$fonts.ttf "$ttf" && fonts=$((fonts + 1))
	done
	[ "$fonts" = 0 ] || progress "matplotlib: $fonts font files read from the guest's memory"
fi
rm -f "$RESULTS/boot-$BOOT_ID.done"

SPECS=("$@")
if [ -n "$PLAN" ]; then
	mapfile -t -O "${#SPECS[@]}" SPECS < <(grep -v '^#' "$PLAN" | grep .)
fi

PASS=0 FAIL=0 SKIP=0
# A checker that reported before any test ran (seen under 6.12-debug: a
# KASAN report in early boot, in an interrupt during identify_cpu) has
# turned checking off for this whole boot. Running the tests would pass
# them unchecked, an hour of a debug run wasted: fail them now instead,
# so the run can be repeated at once.
early=$(dmesg 2>/dev/null | grep -E -m 3 -- "$SMR_CHECKS_OFF")
for spec in "${SPECS[@]}"; do
	k=${spec%%:*}; rest=${spec#*:}
	t=${rest%%:*}; path=${rest#*:}
	if [ -n "$early" ]; then
		{
			echo "# selftests: smr: $(basename "$path")"
			echo "$early" | sed 's/^/# dmesg before any test: /'
			echo "not ok $k selftests: smr: $(basename "$path") # not run: a checker reported before the first test, so nothing in this boot would be checked"
		} > "$RESULTS/tap/$k.tap.tmp"
		mv "$RESULTS/tap/$k.tap.tmp" "$RESULTS/tap/$k.tap"
		FAIL=$((FAIL + 1))
		continue
	fi
	run_one "$k" "$t" "$path"
done
[ -z "$early" ] || progress "boot $BOOT_ID: a checker reported before the first test ($(echo "$early" | head -n 1)); its tests were not run: repeat the run"

# kmemleak (debug kernel): it does not scan by itself there, so scan now,
# with every device removed. An object is reported once it has been
# unreferenced for 5 s; two scans settle references in flight. Leaks whose
# allocation trace runs through this project's modules count as failures.
# (Not when no test ran.)
LEAKS=
if [ -z "$early" ] && [ -w /sys/kernel/debug/kmemleak ]; then
	sleep 6
	echo scan > /sys/kernel/debug/kmemleak
	echo scan > /sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak > "$RESULTS/logs/kmemleak.$BOOT_ID.log"
	all=$(grep -c '^unreferenced object' "$RESULTS/logs/kmemleak.$BOOT_ID.log")
	ours=$(awk '/^unreferenced object/ { o = 0 } /dm_smr|dm_caveat/ && !o { n++; o = 1 }
		END { print n + 0 }' "$RESULTS/logs/kmemleak.$BOOT_ID.log")
	progress "kmemleak: $ours leaked objects allocated by dm-smr/dm-caveat ($all unreferenced in all, logs/kmemleak.$BOOT_ID.log)"
	LEAKS=" kmemleak:$ours"
fi

dmesg > "$RESULTS/logs/dmesg.$BOOT_ID.log" 2>/dev/null
echo "pass:$PASS fail:$FAIL skip:$SKIP$LEAKS" > "$RESULTS/boot-$BOOT_ID.done"
sync
progress "boot $BOOT_ID finished: pass:$PASS fail:$FAIL skip:$SKIP"
exit 0
