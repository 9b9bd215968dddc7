# SPDX-License-Identifier: GPL-2.0
# tests/lib/hm.sh - helpers for the host-managed dm-smr tests (test_hm_*.sh).
#
# Source after tests/common.sh:
#
#	. "$(dirname "$0")/common.sh"
#	. "$(dirname "$0")/lib/hm.sh"
#
# Sizes are 512-byte sectors unless a name says bytes. Zones are named by
# their start sector on the dm device. Like common.sh, this file only
# defines functions and variables.
#
# Speed: under TCG every exec costs 0.3-1 s (binaries come over 9p), so
# the helpers parse with bash built-ins and exec as few programs as they
# can (one blkzone, one dmsetup or one dd per call).

# Default geometry of the tests: 8 MiB zones.
HM_ZS=16384

# Field names of "dmsetup status" after the mode word (docs/dm-smr.rst).
HM_STATUS_FIELDS=(nr_zones conv_zones imp_open exp_open closed full readonly
	offline writes write_sectors reads read_sectors resets finishes opens
	closes imp_closes wp_errors errors commits mem_bytes model_busy_ms
	model_lag_ms bad_read_errors bad_write_errors bad_remaps
	transient_errors delayed_ios power power_left)

HM_EIO="Input/output error"
HM_ETOOMANYREFS="Too many references"
HM_EOVERFLOW="Value too large for defined data type"

# hm_prep: skip unless the smr target and the tools are there.
hm_prep() {
	require_cmd dmsetup blkzone blockdev dd cmp md5sum
	require_target smr
	HM_SEQ=0
}

# hm_table LEN BACKING ZONE_SECTORS [OPT...]: an smr table line; each
# OPT word counts one in the optional argument count.
hm_table() {
	local len=$1 dev=$2 zs=$3
	shift 3
	if [ $# -gt 0 ]; then
		echo "0 $len smr $dev host-managed $zs $# $*"
	else
		echo "0 $len smr $dev host-managed $zs"
	fi
}

# hm_create NAME LEN BACKING ZONE_SECTORS [OPT...]: create an smr device
# (removed at cleanup). dmsetup's errors go to stderr; returns its status.
hm_create() {
	local name=$1
	shift
	dm_create "$name" "$(hm_table "$@")"
}

# hm_sysfs DEV ATTR: /sys/block/dm-N/queue/ATTR of dm device DEV.
hm_sysfs() {
	local n=${1#/dev/mapper/} d dn v
	for d in /sys/block/dm-*; do
		read -r dn < "$d/dm/name" || continue
		if [ "$dn" = "$n" ]; then
			read -r v < "$d/queue/$2"
			echo "$v"
			return 0
		fi
	done
	echo "no-such-dm-device"
	return 1
}

# hm_majmin DEV: "major:minor" of a dm device, as dm tables print it.
hm_majmin() {
	local n=${1#/dev/mapper/} d dn v
	for d in /sys/block/dm-*; do
		read -r dn < "$d/dm/name" || continue
		if [ "$dn" = "$n" ]; then
			read -r v < "$d/dev"
			echo "$v"
			return 0
		fi
	done
	return 1
}

# hm_stat DEV FIELD...: fields of the status line, by their docs names,
# space separated (one dmsetup call).
hm_stat() {
	local st f i out=()
	st=($(dmsetup status "${1#/dev/mapper/}")) || return 1
	shift
	for f in "$@"; do
		for i in "${!HM_STATUS_FIELDS[@]}"; do
			[ "${HM_STATUS_FIELDS[i]}" = "$f" ] && break
		done
		if [ "${HM_STATUS_FIELDS[i]}" != "$f" ]; then
			_helper_error "hm_stat: unknown status field $f"
			return 1
		fi
		out+=("${st[i + 4]}")
	done
	echo "${out[*]}"
}

# hm_stats DEV: all status fields as "name=value" words (diagnostics).
hm_stats() {
	local st i
	st=($(dmsetup status "${1#/dev/mapper/}"))
	for i in "${!HM_STATUS_FIELDS[@]}"; do
		printf '%s=%s ' "${HM_STATUS_FIELDS[i]}" "${st[i + 4]}"
	done
	echo
}

# hm_report DEV [SECTOR [COUNT]]: the zone report, one zone a line:
# "start len cap wp cond type", numbers in decimal sectors, wp relative to
# the zone start (as blkzone prints it), cond as blkzone abbreviates it
# (nw em oi oe cl fu ro of), type CONVENTIONAL or SEQ_WRITE_REQUIRED.
hm_report() {
	local dev=$1 args=() line re
	[ -n "${2:-}" ] && args+=(-o "$2")
	[ -n "${3:-}" ] && args+=(-c "$3")
	re='start: *(0x[0-9a-f]+), len (0x[0-9a-f]+), cap (0x[0-9a-f]+), wptr (0x[0-9a-f]+).*zcond: *[0-9]+\(([a-z?]+)\) \[type: [0-9]+\(([A-Z_]+)\)\]'
	while IFS= read -r line; do
		[[ $line =~ $re ]] || continue
		echo "$((BASH_REMATCH[1])) $((BASH_REMATCH[2])) $((BASH_REMATCH[3])) $((BASH_REMATCH[4])) ${BASH_REMATCH[5]} ${BASH_REMATCH[6]}"
	done < <(blkzone report "${args[@]}" "$dev" 2>&1)
}

# hm_cw DEV SECTOR...: "cond wp" of each zone, space separated, e.g.
# "oi 2048 em 0" (one blkzone call per zone).
hm_cw() {
	local dev=$1 s out=() l
	shift
	for s in "$@"; do
		l=($(hm_report "$dev" "$s" 1))
		out+=("${l[4]:-?} ${l[3]:-?}")
	done
	echo "${out[*]}"
}

# hm_cond DEV SECTOR: condition of a zone (nw em oi oe cl fu ro of).
hm_cond() { local l; l=$(hm_cw "$1" "$2"); echo "${l% *}"; }

# hm_wp DEV SECTOR: write pointer of a zone, sectors from its start.
hm_wp() { local l; l=$(hm_cw "$1" "$2"); echo "${l#* }"; }

# hm_zinfo DEV SECTOR: the zone_info message's answer.
hm_zinfo() { dmsetup message "${1#/dev/mapper/}" 0 zone_info "$2" 2>&1; }

# hm_msg DEV WORDS...: send a message; dmsetup's output and errors on
# stdout, its status returned.
hm_msg() {
	local dev=${1#/dev/mapper/}
	shift
	dmsetup message "$dev" 0 "$@" 2>&1
}

# hm_newfile NR_SECTORS: a fresh file name for NR_SECTORS of data; the
# size is part of the name (hm_fsize reads it back without an exec).
hm_newfile() { echo "$T_WORK/hm-$1-$BASHPID-$RANDOM$RANDOM.dat"; }

# hm_fsize FILE: size in sectors of a file named by hm_newfile.
hm_fsize() { local b=${1##*/hm-}; echo "${b%%-*}"; }

# hm_data FILE NR_SECTORS: FILE gets NR_SECTORS of random bytes.
hm_data() { head -c $(( $2 * 512 )) /dev/urandom > "$1"; }

# hm_zeros NR_SECTORS: the name of a file of NR_SECTORS zeros (cached).
hm_zeros() {
	local f=$T_WORK/hm-$1-zeros.dat
	[ -f "$f" ] || head -c $(( $1 * 512 )) /dev/zero > "$f"
	echo "$f"
}

# hm_pwrite DEV SECTOR FILE [NR_SECTORS]: write FILE at SECTOR as ONE
# O_DIRECT write(2) (the block layer may split it in 1 MiB bios). Prints
# dd's error message, if any; returns dd's status.
hm_pwrite() {
	local n=${4:-$(hm_fsize "$3")}
	dd if="$3" of="$1" bs=$(( n * 512 )) count=1 iflag=fullblock \
		oflag=direct,seek_bytes seek=$(( $2 * 512 )) conv=notrunc \
		status=none 2>&1
}

# hm_put VAR DEV SECTOR NR_SECTORS [DESC]: write NR_SECTORS of fresh
# random data at SECTOR (one O_DIRECT write); VAR gets the name of a file
# holding that data. A failed write is a failed check; with DESC a
# successful one is a passed check.
hm_put() {
	# Locals are prefixed: VAR is set in the caller's scope by name.
	local _hp_var=$1 _hp_dev=$2 _hp_s=$3 _hp_n=$4 _hp_desc=${5:-} _hp_f _hp_out
	_hp_f=$(hm_newfile "$_hp_n")
	hm_data "$_hp_f" "$_hp_n"
	if _hp_out=$(hm_pwrite "$_hp_dev" "$_hp_s" "$_hp_f" "$_hp_n"); then
		[ -n "$_hp_desc" ] && ok "$_hp_desc"
	else
		not_ok "${_hp_desc:-write $_hp_n sectors at sector $_hp_s of $_hp_dev}" "$_hp_out"
	fi
	printf -v "$_hp_var" %s "$_hp_f"
}

# hm_try_write DEV SECTOR NR_SECTORS: write NR_SECTORS of zeros at SECTOR
# (one O_DIRECT write); prints dd's error message; returns dd's status.
hm_try_write() { hm_pwrite "$1" "$2" "$(hm_zeros "$3")" "$3"; }

# hm_read DEV SECTOR NR_SECTORS: the bytes there (O_DIRECT) on stdout;
# dd's errors on stderr; returns dd's status.
hm_read() {
	dd if="$1" bs=1M iflag=direct,skip_bytes,count_bytes \
		skip=$(( $2 * 512 )) count=$(( $3 * 512 )) status=none
}

# hm_assert_read DESC DEV SECTOR FILE: DEV holds FILE (named by
# hm_newfile, or of NR_SECTORS given as 5th argument) at SECTOR.
hm_assert_read() {
	local desc=$1 dev=$2 s=$3 f=$4 n=${5:-} out
	[ -n "$n" ] || n=$(hm_fsize "$f")
	if [ ! -s "$f" ]; then
		not_ok "$desc" "expected-data file '$f' is missing"
		return 1
	fi
	if out=$(hm_read "$dev" "$s" "$n" | cmp - "$f" 2>&1); then
		ok "$desc"
	else
		not_ok "$desc" "$dev at sector $s, $n sectors: $out"
		return 1
	fi
}

# hm_assert_zero DESC DEV SECTOR NR_SECTORS: the range reads as zeros.
hm_assert_zero() {
	local out
	if out=$(hm_read "$2" "$3" "$4" | cmp -n $(( $4 * 512 )) - /dev/zero 2>&1); then
		ok "$1"
	else
		not_ok "$1" "$2 at sector $3, $4 sectors: $out"
		return 1
	fi
}

# hm_sum DEV SECTOR NR_SECTORS: md5 of a range (or "READ-ERROR").
hm_sum() {
	local out
	if out=$(set -o pipefail; hm_read "$1" "$2" "$3" 2>/dev/null | md5sum); then
		echo "${out%% *}"
	else
		echo READ-ERROR
		return 1
	fi
}

# hm_flush DEV: fsync(2) on the device, i.e. an empty REQ_PREFLUSH bio.
# (blockdev --flushbufs only writes back the page cache: no flush bio.)
hm_flush() { sync "$1"; }

# hm_zop DEV OP SECTOR [COUNT]: blkzone OP (open, close, finish, reset) on
# COUNT zones (default 1) from SECTOR. Prints blkzone's messages; returns
# its status.
hm_zop() { blkzone "$2" -o "$3" -c "${4:-1}" "$1" 2>&1; }

# assert_errno DESC EXPECTED_MSG ACTUAL_MSG RC: a command failed (RC != 0)
# with the strerror text EXPECTED_MSG in its message.
assert_errno() {
	local desc=$1 exp=$2 msg=$3 rc=$4
	if [ "$rc" != 0 ] && [[ $msg == *"$exp"* ]]; then
		ok "$desc"
	elif [ "$rc" = 0 ]; then
		not_ok "$desc" "succeeded, expected failure with '$exp'"
	else
		not_ok "$desc" "expected failure with '$exp'" "got ($rc): $msg"
	fi
}

# assert_cw DESC DEV "SECTOR..." "COND WP...": zones' conditions and wps.
assert_cw() { assert_eq "$1" "$4" "$(hm_cw "$2" $3)"; }

# assert_zop_ok DESC DEV OP SECTOR "COND WP": OP succeeds and leaves the
# zone in COND at WP.
assert_zop_ok() {
	local desc=$1 dev=$2 op=$3 s=$4 want=$5 out rc
	out=$(hm_zop "$dev" "$op" "$s"); rc=$?
	if [ $rc != 0 ]; then
		not_ok "$desc" "blkzone $op -o $s failed ($rc): $out"
		return 1
	fi
	assert_eq "$desc" "$want" "$(hm_cw "$dev" "$s")"
}

# assert_zop_fails DESC DEV OP SECTOR ERRMSG ["COND WP"]: OP fails with
# ERRMSG (and the zone is still in COND at WP, when given).
assert_zop_fails() {
	local desc=$1 dev=$2 op=$3 s=$4 msg=$5 want=${6:-} out rc
	out=$(hm_zop "$dev" "$op" "$s"); rc=$?
	assert_errno "$desc" "$msg" "$out" $rc
	[ -n "$want" ] && assert_eq "$desc: zone unchanged" "$want" "$(hm_cw "$dev" "$s")"
	return 0
}

# assert_write_fails DESC DEV SECTOR NR_SECTORS ERRMSG ["COND WP"]: an
# O_DIRECT write fails with ERRMSG (and its zone is still in COND at WP,
# when given).
assert_write_fails() {
	local desc=$1 dev=$2 s=$3 n=$4 msg=$5 want=${6:-} out rc
	out=$(hm_try_write "$dev" "$s" "$n"); rc=$?
	assert_errno "$desc" "$msg" "$out" $rc
	[ -n "$want" ] && assert_eq "$desc: zone unchanged" "$want" \
		"$(hm_cw "$dev" $(( s / HM_ZS * HM_ZS )))"
	return 0
}

# hm_dm_exists NAME: does dm device NAME exist? (no exec)
hm_dm_exists() {
	local n=${1#/dev/mapper/} d dn
	for d in /sys/block/dm-*; do
		read -r dn < "$d/dm/name" 2>/dev/null || continue
		[ "$dn" = "$n" ] && return 0
	done
	return 1
}

# hm_pattern SEED ZONE FIRST_BLOCK NR_BLOCKS: NR_BLOCKS deterministic
# 4 KiB blocks on stdout, each naming the seed, the zone and its block
# number in the zone, so any block can be recomputed later (crash tests).
hm_pattern() {
	perl -e 'my ($s, $z, $f, $n) = @ARGV;
		for my $b ($f .. $f + $n - 1) {
			my $l = sprintf("dm-smr seed %s zone %d block %d|", $s, $z, $b);
			print substr($l x (int(4096 / length($l)) + 1), 0, 4096);
		}' "$@"
}

# hm_pattern_write DEV ZONE_SECTOR SEED ZONE FIRST_BLOCK NR_BLOCKS [OFLAGS]:
# write hm_pattern blocks at block FIRST_BLOCK of the zone starting at
# ZONE_SECTOR, as one O_DIRECT write (OFLAGS, e.g. "dsync", are added to
# dd's oflag). Prints dd's errors; returns its status.
hm_pattern_write() {
	local dev=$1 zsec=$2 seed=$3 z=$4 f=$5 n=$6 fl=${7:+,$7}
	hm_pattern "$seed" "$z" "$f" "$n" |
	dd of="$dev" bs=$((n * 4096)) count=1 iflag=fullblock \
		oflag=direct,seek_bytes$fl seek=$(( (zsec + f * 8) * 512 )) \
		conv=notrunc status=none 2>&1
	return "${PIPESTATUS[1]}"
}
