#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 14400
#
# fstests (xfstests), the file systems' own suite, on emulated drives and
# on a baseline in the same boot: every test that passes on the baseline
# must pass on the drive (docs/testing.md, "fstests"). fstests is built
# by scripts/setup-fstests.sh from ../shared/sources or FSTESTS_SRC; it
# takes longer than CI has room for, so it is not in tests/test_*.sh:
# `make fstests` runs it (KVER= picks the kernel).
#
# Configurations (SMR_FSTESTS_CONFIGS, default the four without -wc),
# each a test device and a scratch device:
#   f2fs-hm    f2fs on two host-managed drives; baseline: two zoned
#              null_blk devices of the same geometry
#   btrfs-hm   btrfs (zoned) likewise
#   ext4-dm    ext4 on two drive-managed drives; baseline: dm-linear over
#              the same backing ranges
#   xfs-dm     xfs likewise
#   NAME-wc    any of the above with each drive's volatile write cache on
#              (write_cache_kib SMR_FSTESTS_WC_KIB, default 8192), as real
#              drives ship; the baseline is the same
#   NAME-tm    any of the above with the timing model of a profile
#              (SMR_FSTESTS_PROFILE, default st8000as0002 for -dm and
#              hc620 for -hm): the drives take a real disk's time; the
#              baseline is the same. Not with -wc: a table with the
#              timing model takes no write_cache_kib (the model's
#              buffer_mib is the drive's cache in time).
# The tests: SMR_FSTESTS_TESTS (fstests' own arguments, e.g.
# "generic/001 -g zone"), else tests/conformance/fstests.list. Each
# test's result on both sides is in the log
# ("generic/013 baseline=pass drive=pass"), and what fstests said of
# each test that did not pass.
# SMR_FSTESTS_CUT=1 adds, after each configuration, the drive's own
# power cut: the crash tests among those (the ones that use dm-flakey)
# run again on the drives through scripts/fstests-power-cut, which cuts
# the scratch drive's power at a seeded count of writes and has the file
# system's checker judge what the drive kept (SMR_FSTESTS_CUT_SEED gives
# the seed: the same countdowns again where the tests write as much).

. "$(dirname "$0")/../common.sh"
. "$(dirname "$0")/../lib/hm.sh"
. "$(dirname "$0")/../lib/dm.sh"

_prep_test "fstests on emulated drives against a baseline in the same boot"
require_cmd dmsetup blkzone python3
require_target smr
FST=${SMR_FSTESTS_DIR:-/var/lib/dm-smr/fstests}
[ -x "$FST/check" ] || skip_all "fstests is not built in $FST (scripts/setup-fstests.sh)"
CONFIGS=${SMR_FSTESTS_CONFIGS:-f2fs-hm btrfs-hm ext4-dm xfs-dm}
if [ -n "${SMR_FSTESTS_TESTS:-}" ]; then
	read -r -a TESTS <<< "$SMR_FSTESTS_TESTS"
else
	mapfile -t TESTS < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' \
		"$(dirname "$0")/fstests.list" | tr -s ' \t' '\n')
fi
[ ${#TESTS[@]} -gt 0 ] || bail "no tests to run"

# fstests wants GNU awk (its README) and runs "awk": Debian's default
# awk is mawk unless gawk is installed and chosen, which the host's own
# scripts must not depend on; so an awk that is gawk comes first in
# fstests' PATH only.
AWK_DIR=$T_WORK/gawk-bin
mkdir -p "$AWK_DIR"
command -v gawk > /dev/null || bail "fstests needs gawk (scripts/setup-fstests.sh installs it)"
ln -sf "$(command -v gawk)" "$AWK_DIR/awk"

# Each device 1 GiB: fstests' scratch tests mostly want less, and four
# memory-backed null_blk devices must fit the guest (SMR_VM_MEM).
MB=${SMR_FSTESTS_MB:-1024}
ZS=32768		# 16 MiB zones
CONV=4			# f2fs keeps its metadata in conventional zones
BAND=65536		# drive-managed: 32 MiB bands
CACHE=131072		# and a 64 MiB persistent cache
LEN=$((MB * 2048))
WC_KIB=${SMR_FSTESTS_WC_KIB:-8192}
TM_PROFILE=${SMR_FSTESTS_PROFILE:-}
# (the table's bounds: 1024 to 1048576 KiB, whole 4 KiB blocks)
[[ $WC_KIB =~ ^[0-9]+$ ]] && [ "$WC_KIB" -ge 1024 ] && [ "$WC_KIB" -le 1048576 ] &&
	[ $((WC_KIB % 4)) = 0 ] ||
	bail "SMR_FSTESTS_WC_KIB is 1024 to 1048576 KiB in whole 4 KiB blocks, not '$WC_KIB'"
MNT_T=$T_MNT/test MNT_S=$T_MNT/scratch
mkdir -p "$MNT_T" "$MNT_S"

# mkfs_for FSTYP: the mkfs options fstests should use (MKFS_OPTIONS).
mkfs_opts() {
	case $1 in
	f2fs) echo "-m" ;;		# zoned-device support
	btrfs) echo "-O zoned" ;;
	*) echo "" ;;
	esac
}

# mkfs_test FSTYP DEV: make the test device's file system (fstests
# expects TEST_DEV ready).
mkfs_test() {
	case $1 in
	f2fs) mkfs.f2fs -f -m "$2" ;;
	btrfs) mkfs.btrfs -f -O zoned "$2" ;;
	ext4) mkfs.ext4 -F -q "$2" ;;
	xfs) mkfs.xfs -f -q "$2" ;;
	esac > "$T_WORK/mkfs.log" 2>&1
}

# run_side NAME FSTYP TEST_DEV SCRATCH_DEV: fstests on one pair; the
# per-test results go to $T_WORK/NAME.results ("test status").
run_side() {
	local side=$1 fs=$2 tdev=$3 sdev=$4 cfg=$T_WORK/$1.config rb=$T_WORK/$1
	# check's output goes to the results (SMR_STATE), where the host sees
	# it as the tests run: a run of the whole list takes hours under TCG
	local out=$SMR_STATE/$1.out
	umount "$MNT_T" "$MNT_S" 2> /dev/null
	mkfs_test "$fs" "$tdev" || { not_ok "$side: mkfs.$fs of the test device" "$(tail -5 "$T_WORK/mkfs.log")"; return 1; }
	cat > "$cfg" <<-CFG
		export FSTYP=$fs
		export TEST_DEV=$tdev
		export TEST_DIR=$MNT_T
		export SCRATCH_DEV=$sdev
		export SCRATCH_MNT=$MNT_S
		export MKFS_OPTIONS="$(mkfs_opts "$fs")"
		export RESULT_BASE=$rb
		export LOGWRITES_DEV=$LOGDEV
	CFG
	mkdir -p "$rb"
	diag "$side: ./check ${TESTS[*]} ($fs, test $tdev, scratch $sdev)"
	(cd "$FST" && PATH=$AWK_DIR:$PATH HOST_OPTIONS=$cfg ./check "${TESTS[@]}") > "$out" 2>&1
	umount "$MNT_T" "$MNT_S" 2> /dev/null
	# check's summary: "Ran: ...", "Not run: ...", "Failures: ..."; a
	# test that ran and did not fail passed.
	awk '/^Ran:/ { for (i = 2; i <= NF; i++) st[$i] = "pass" }
	     /^Not run:/ { for (i = 3; i <= NF; i++) st[$i] = "notrun" }
	     /^Failures:/ { for (i = 2; i <= NF; i++) st[$i] = "fail" }
	     END { for (t in st) print t, st[t] }' "$out" > "$T_WORK/$side.results"
	# What check said of each test that did not pass, for the log.
	while read -r t st; do
		[ "$st" = pass ] || diag "$side: $(grep -m1 -E "^$t( |$)" "$out" | cut -c1-200)"
	done < "$T_WORK/$side.results"
	if [ -s "$T_WORK/$side.results" ]; then
		ok "$side: fstests ran $(wc -l < "$T_WORK/$side.results") tests ($(grep -c ' pass$' "$T_WORK/$side.results") passed, $(grep -c ' fail$' "$T_WORK/$side.results") failed, $(grep -c ' notrun$' "$T_WORK/$side.results") not run)"
	else
		not_ok "$side: fstests ran" "$(tail -20 "$out")"
		return 1
	fi
}

# compare CONFIG: every test that passed on the baseline passed on the
# drive; each test's pair of results in the log.
compare() {
	local c=$1 t b d bad=0
	while read -r t b; do
		d=$(awk -v t="$t" '$1 == t { print $2 }' "$T_WORK/$c-drive.results")
		diag "$c: $t baseline=$b drive=${d:-missing}"
		if [ "$b" = pass ] && [ "$d" != pass ]; then
			not_ok "$c: $t passes on the baseline and on the drive" "drive: ${d:-missing}"
			bad=1
		fi
	done < <(sort "$T_WORK/$c-baseline.results")
	[ $bad = 1 ] || ok "$c: every test that passed on the baseline passed on the drive"
}

# cut_pass CONFIG: the crash tests among TESTS again on the drives, each
# with the scratch drive's power cut somewhere in what it writes
# (scripts/fstests-power-cut); every file system the cut left must be
# clean after the power comes back.
cut_pass() {
	local c=$1 t crash=() out=$SMR_STATE/$1-cut.out res=$T_WORK/$1-cut.results
	for t in "${TESTS[@]}"; do
		[[ $t =~ ^[a-z0-9]+/[0-9]+$ ]] && [ -f "$FST/tests/$t" ] &&
			grep -q '_require_dm_target flakey' "$FST/tests/$t" && crash+=("$t")
	done
	[ ${#crash[@]} -gt 0 ] || { skip "$c: power cuts" "no dm-flakey crash test among the tests"; return; }
	diag "$c: the drive's own power cut under ${#crash[@]} crash tests (${crash[*]})"
	umount "$MNT_T" "$MNT_S" 2> /dev/null
	: > "$res"
	PATH=$AWK_DIR:$PATH FSTESTS_DIR=$FST HOST_OPTIONS=$T_WORK/$c-drive.config \
		"$SMR_ROOT/scripts/fstests-power-cut" ${SMR_FSTESTS_CUT_SEED:+--seed "$SMR_FSTESTS_CUT_SEED"} \
		--results "$res" "${crash[@]}" > "$out" 2>&1
	local rc=$?
	umount "$MNT_T" "$MNT_S" 2> /dev/null
	diag "$c: $(head -n 1 "$out")"
	while read -r t; do diag "$c: $t"; done < "$res"
	if [ $rc = 0 ] && [ -s "$res" ]; then
		ok "$c: every file system a power cut left was clean ($(grep -c 'clean after the cut' "$res") of ${#crash[@]} tests cut)"
	else
		not_ok "$c: every file system a power cut left was clean" "exit $rc" "$(grep -E 'NOT clean|did not come back|never armed' "$res")" "$(tail -5 "$out")"
	fi
}

zoned_nullb() {	# zoned null_blk of the drives' geometry
	new_nullb "$MB" zoned=1 zone_size=$((ZS / 2048)) zone_nr_conv=$CONV
}

# timing_group MODEL: the timing group of a profile's table for a drive of
# this geometry (smrctl create --dry-run over the backing $k1), to follow
# the table's other arguments.
timing_group() {
	local t p geo
	case $1 in
	host-managed) p=${TM_PROFILE:-hc620} geo=(--zone $((ZS / 2048))M --conv $CONV) ;;
	drive-managed) p=${TM_PROFILE:-st8000as0002} geo=(--band $((BAND / 2048))M --cache $((CACHE / 2048))M) ;;
	esac
	t=$("$SMR_ROOT/userspace/smrctl/smrctl" create fst-dry --model "$1" --dev "$k1" \
		--profile "$p" --size "${MB}M" "${geo[@]}" --dry-run 2>&1) &&
		grep -o ' timing [0-9].*$' <<< "$t" | sed 's/^ //' | grep . ||
		{ echo "# smrctl create --profile $p --dry-run: $t" >&2; return 1; }
}

# The log device of fstests' dm-log-writes tests (generic/482 and the
# log group: _require_log_writes), shared by every side, which run one
# after another: dm-log-writes records each write to the scratch device
# there, and the test replays the log to each flush and checks the file
# system at each. It is not a zoned-capable target, so those tests run
# over the drive-managed drives only.
LOGDEV=$(new_big_backing 4) || bail "no backing device for LOGWRITES_DEV"

for c in $CONFIGS; do
	# NAME-KIND[-wc][-tm]
	IFS=- read -r fs kind opts <<< "$c"
	extra=() tg= tm=0	# the table's optional arguments; its timing group
	for o in ${opts//-/ }; do
		case $o in
		# the drives with their volatile write cache (the baseline
		# without: fstests' flushes and FUA must make up the difference)
		wc) extra+=(write_cache_kib "$WC_KIB") ;;
		tm) tm=1 ;;	# the group once the backing is made (smrctl reads it)
		*) kind=bad ;;
		esac
	done
	if [ $tm = 1 ] && [ ${#extra[@]} -gt 0 ]; then
		# dm-smr refuses the pair: the model's buffer_mib is a cache's time
		not_ok "$c: -wc and -tm cannot be combined (a table with the timing model has no write_cache_kib)"
		continue
	fi
	modprobe "$fs" 2> /dev/null
	grep -qw "$fs" /proc/filesystems || { skip "$c" "the kernel has no $fs"; continue; }
	case $kind in
	hm)
		b1=$(zoned_nullb) && b2=$(zoned_nullb) || { not_ok "$c: zoned null_blk baseline"; continue; }
		run_side "$c-baseline" "$fs" "$b1" "$b2" || continue
		k1=$(new_backing $((MB + 8))) && k2=$(new_backing $((MB + 8))) || bail "no backing device"
		if [ $tm = 1 ]; then
			tg=$(timing_group host-managed) || { not_ok "$c: a profile's timing group"; continue; }
		fi
		dm_create "fst-${fs}-t" "$(hm_table $LEN "$k1" $ZS conv_zones $CONV format "${extra[@]}")${tg:+ $tg}" &&
			dm_create "fst-${fs}-s" "$(hm_table $LEN "$k2" $ZS conv_zones $CONV format "${extra[@]}")${tg:+ $tg}" ||
			{ not_ok "$c: create the drives"; continue; }
		run_side "$c-drive" "$fs" "/dev/mapper/fst-${fs}-t" "/dev/mapper/fst-${fs}-s" || continue
		;;
	dm)
		k1=$(new_backing $((MB + 192))) && k2=$(new_backing $((MB + 192))) || bail "no backing device"
		dm_create "fst-${fs}-lt" "0 $LEN linear $k1 0" &&
			dm_create "fst-${fs}-ls" "0 $LEN linear $k2 0" ||
			{ not_ok "$c: dm-linear baseline"; continue; }
		run_side "$c-baseline" "$fs" "/dev/mapper/fst-${fs}-lt" "/dev/mapper/fst-${fs}-ls" || continue
		dm_remove "fst-${fs}-lt" && dm_remove "fst-${fs}-ls"
		if [ $tm = 1 ]; then
			tg=$(timing_group drive-managed) || { not_ok "$c: a profile's timing group"; continue; }
		fi
		dm_create "fst-${fs}-t" "$(dms_table $LEN "$k1" $BAND cache_sectors $CACHE format "${extra[@]}")${tg:+ $tg}" &&
			dm_create "fst-${fs}-s" "$(dms_table $LEN "$k2" $BAND cache_sectors $CACHE format "${extra[@]}")${tg:+ $tg}" ||
			{ not_ok "$c: create the drives"; continue; }
		run_side "$c-drive" "$fs" "/dev/mapper/fst-${fs}-t" "/dev/mapper/fst-${fs}-s" || continue
		;;
	*) not_ok "unknown configuration $c (f2fs-hm btrfs-hm ext4-dm xfs-dm, each with -wc or -tm)"; continue ;;
	esac
	compare "$c"
	[ "${SMR_FSTESTS_CUT:-0}" = 0 ] || cut_pass "$c"
done
dmesg_check
_show_result
