# SPDX-License-Identifier: GPL-2.0
# tests/lib/dm.sh - helpers for the drive-managed dm-smr tests (test_dm_*.sh).
#
# Source after tests/common.sh:
#
#	. "$(dirname "$0")/common.sh"
#	. "$(dirname "$0")/lib/dm.sh"
#
# Sizes are 512-byte sectors unless a name says bytes or MiB. Like
# common.sh, this file only defines functions and variables. Under TCG
# every exec costs 0.3-1 s: one dmsetup call reads every status field.

# Status fields after the target name, in order (docs/dm-smr.rst,
# "Status (drive-managed)"). Field 4 is "cache_used/cache_total".
DMS_STATUS_FIELDS=(mode nr_bands band_sectors cache_used/cache_total
	cache_live index_extents index_bytes dirty_bands rmw_bg rmw_fg
	rmw_manual bg_aborts clean_read_sectors clean_write_sectors
	clean_ms_bg clean_ms_fg clean_ms_since_busy host_read_sectors
	host_write_sectors cache_write_sectors bypass_write_sectors wa state
	policy commits errors mem_bytes model_busy_ms model_clean_ms
	model_lag_ms bad_read_errors bad_write_errors bad_remaps
	transient_errors delayed_ios clean_timeouts power power_left)

# The counters clear_stats zeroes (the rest describe the device's state).
DMS_COUNTERS=(rmw_bg rmw_fg rmw_manual bg_aborts clean_read_sectors
	clean_write_sectors clean_ms_bg clean_ms_fg clean_ms_since_busy
	host_read_sectors host_write_sectors cache_write_sectors
	bypass_write_sectors wa commits errors model_busy_ms model_clean_ms
	model_lag_ms bad_read_errors bad_write_errors bad_remaps
	transient_errors delayed_ios clean_timeouts)

EINVAL="Invalid argument"

# dms_prep: skip unless the smr target and the tools are there.
dms_prep() {
	require_cmd dmsetup blockdev dd cmp md5sum
	require_target smr
}

# dms_table LEN BACKING BAND_SECTORS [OPT...]: a drive-managed table line;
# each OPT word counts one in the optional argument count.
dms_table() {
	local len=$1 dev=$2 band=$3
	shift 3
	if [ $# -gt 0 ]; then
		echo "0 $len smr $dev drive-managed $band $# $*"
	else
		echo "0 $len smr $dev drive-managed $band"
	fi
}

# dms_create NAME LEN BACKING BAND_SECTORS [OPT...]: create a drive-managed
# device (removed at cleanup). dmsetup's errors on stderr; returns its status.
dms_create() {
	local name=$1
	shift
	dm_create "$name" "$(dms_table "$@")"
}

# dms_need LEN BAND_SECTORS CACHE_SECTORS: backing sectors the geometry
# needs: metadata (superblock + two copies of the table, 1 MiB aligned) +
# cache + spare band + data (dm-smr-dm.c smr_dm_geometry()).
dms_need() {
	local len=$1 band=$2 cache=$3 slots bands tb md
	slots=$((cache / 8))
	bands=$((len / band))
	tb=$((1 + (slots + 253) / 254 + (bands + 507) / 508))
	md=$(( ((1 + 2 * tb) * 8 + 2047) / 2048 * 2048 ))
	echo "$md $((md + cache + band + len))"
}

# dms_slow_bands BACKING LEN BAND_SECTORS CACHE_SECTORS: reload BACKING (a
# new_backing dm-linear) with the second half of each band's sectors of a
# drive-managed device of that geometry behind a dm-delay that holds
# writes for 5 s (reads and flushes pass): a band rewrite then hangs
# half copied back, with its intent durable (crash and power-cut tests).
# On a slow kernel (SMR_TIMEOUT_SCALE, a debug kernel) the hold is longer,
# up to 20 s: a test must act on the intent it saw before the rewrite
# moves on to the next band, and its commands start slowly there. MS, a
# fifth argument, holds them that long instead.
dms_slow_bands() {
	local back=$1 len=$2 band=$3 cache=$4
	local bn=${1#/dev/mapper/} blen bdisk bstart md bs0 k s h=$((band / 2)) t
	local ms=${5:-$(( 5000 * (${SMR_TIMEOUT_SCALE:-1} < 4 ? ${SMR_TIMEOUT_SCALE:-1} : 4) ))}
	read -r _ blen _ bdisk bstart <<< "$(dmsetup table "$bn")"
	read -r md _ <<< "$(dms_need "$len" "$band" "$cache")"
	bs0=$((md + cache + band))		# metadata, cache, spare band
	t="0 $bs0 linear $bdisk $bstart"
	for ((k = 0; k < len / band; k++)); do
		s=$((bs0 + k * band))
		t+=$'\n'"$s $h linear $bdisk $((bstart + s))"
		t+=$'\n'"$((s + h)) $h delay $bdisk $((bstart + s + h)) 0 $bdisk $((bstart + s + h)) $ms $bdisk $((bstart + s + h)) 0"
	done
	s=$((bs0 + len))
	[ "$s" -lt "$blen" ] && t+=$'\n'"$s $((blen - s)) linear $bdisk $((bstart + s))"
	backing_reload "$back" "$t"
}

# dms_load DEV: read the status once into the associative array DMS
# (DMS[cache_used], DMS[wa], ...; DMS[wa_milli] = wa * 1000). Returns 1
# (and records a helper error) if the line is not a drive-managed status.
declare -gA DMS
dms_load() {
	local st i f n=${1#/dev/mapper/}
	DMS=()
	st=($(dmsetup status "$n" 2>&1))
	if [ ${#st[@]} != $((3 + ${#DMS_STATUS_FIELDS[@]})) ] || [ "${st[3]}" != drive-managed ]; then
		_helper_error "dms_load: $n: not a drive-managed status: ${st[*]}"
		return 1
	fi
	for i in "${!DMS_STATUS_FIELDS[@]}"; do
		f=${DMS_STATUS_FIELDS[i]}
		if [ "$f" = cache_used/cache_total ]; then
			DMS[cache_used]=${st[i + 3]%/*}
			DMS[cache_total]=${st[i + 3]#*/}
		else
			DMS[$f]=${st[i + 3]}
		fi
	done
	f=${DMS[wa]}
	DMS[wa_milli]=$(( 10#${f%.*} * 1000 + 10#${f#*.} ))
}

# dms_stat DEV FIELD...: values of status fields, by name, space separated
# (one dmsetup call).
dms_stat() {
	local f out=()
	dms_load "$1" || return 1
	shift
	for f in "$@"; do
		if [ -z "${DMS[$f]+x}" ]; then
			_helper_error "dms_stat: unknown status field $f"
			return 1
		fi
		out+=("${DMS[$f]}")
	done
	echo "${out[*]}"
}

# dms_stats DEV: every status field as name=value (diagnostics).
dms_stats() {
	local f out=()
	dms_load "$1" || return 1
	for f in "${DMS_STATUS_FIELDS[@]}"; do
		case $f in
		mode) ;;
		cache_used/cache_total) out+=("cache=${DMS[cache_used]}/${DMS[cache_total]}") ;;
		*) out+=("$f=${DMS[$f]}") ;;
		esac
	done
	echo "${out[*]}"
}

# dms_expect DESC DEV EXPR...: after one status read, each EXPR ("FIELD OP
# VALUE", OP one of == != > >= < <=, integers; wa as wa_milli; state and
# policy with == / !=) holds. One check; failures name the fields.
dms_expect() {
	local desc=$1 dev=$2 e f op v a bad=()
	shift 2
	dms_load "$dev" || { not_ok "$desc" "no status for $dev"; return 1; }
	for e in "$@"; do
		read -r f op v <<< "$e"
		a=${DMS[$f]-}
		if [ -z "${DMS[$f]+x}" ]; then
			bad+=("unknown field $f"); continue
		fi
		case $f:$op in
		state:==|policy:==) [ "$a" = "$v" ] || bad+=("$f is $a, expected $op $v"); continue ;;
		state:!=|policy:!=) [ "$a" != "$v" ] || bad+=("$f is $a, expected $op $v"); continue ;;
		esac
		case $op in
		==|!=|'>'|'>='|'<'|'<=') ;;
		*) bad+=("bad operator in '$e'"); continue ;;
		esac
		(( a $op v )) || bad+=("$f is $a, expected $op $v")
	done
	if [ ${#bad[@]} = 0 ]; then
		ok "$desc"
	else
		not_ok "$desc" "${bad[@]}" "status: $(dms_stats "$dev")"
		return 1
	fi
}

# dms_msg DEV WORDS...: send a message; dmsetup's output and errors on
# stdout, its status returned.
dms_msg() {
	local dev=${1#/dev/mapper/}
	shift
	dmsetup message "$dev" 0 "$@" 2>&1
}

# _dms_now_ms: wall clock in milliseconds (bash built-in, no exec).
_dms_now_ms() { local t=${EPOCHREALTIME/./}; echo $((t / 1000)); }

# dms_wait_clean DEV TIMEOUT_S: poll (every 0.3 s) until the cache is
# empty and the state idle. Prints the seconds waited ("12.3"); returns 1
# on timeout (the caller asserts on it).
dms_wait_clean() {
	local dev=$1 tmo=$2 t0 now
	t0=$(_dms_now_ms)
	while :; do
		dms_load "$dev" || return 1
		now=$(_dms_now_ms)
		if [ "${DMS[cache_used]}" = 0 ] && [ "${DMS[state]}" = idle ]; then
			printf '%d.%d\n' $(( (now - t0) / 1000 )) $(( (now - t0) % 1000 / 100 ))
			return 0
		fi
		if [ $((now - t0)) -ge $((tmo * 1000)) ]; then
			printf '%d.%d\n' $(( (now - t0) / 1000 )) $(( (now - t0) % 1000 / 100 ))
			return 1
		fi
		sleep 0.3
	done
}

# dms_wait_state DEV PATTERN TIMEOUT_S: poll until the state matches the
# glob PATTERN (e.g. 'clean-*'); returns 1 on timeout.
dms_wait_state() {
	local dev=$1 pat=$2 tmo=$3 t0
	t0=$(_dms_now_ms)
	while :; do
		dms_load "$dev" || return 1
		# shellcheck disable=SC2053 # a glob on purpose
		[[ ${DMS[state]} == $pat ]] && return 0
		[ $(( $(_dms_now_ms) - t0 )) -ge $((tmo * 1000)) ] && return 1
		sleep 0.2
	done
}

# dms_exists NAME: does dm device NAME exist? (no exec)
dms_exists() {
	local n=${1#/dev/mapper/} d dn
	for d in /sys/block/dm-*; do
		read -r dn < "$d/dm/name" 2>/dev/null || continue
		[ "$dn" = "$n" ] && return 0
	done
	return 1
}

# dms_majmin DEV: "major:minor" of a dm device, as dm tables print it.
dms_majmin() {
	local n=${1#/dev/mapper/} d dn v
	for d in /sys/block/dm-*; do
		read -r dn < "$d/dm/name" 2>/dev/null || continue
		if [ "$dn" = "$n" ]; then
			read -r v < "$d/dev"
			echo "$v"
			return 0
		fi
	done
	return 1
}

# dms_fio_job DEV OFFSET SIZE KIND [IO_SIZE]: the fio arguments (for
# run_fio, word-split) of a verifiable job (KIND rand: 4 KiB random writes, iodepth 4; seq: 1 MiB
# sequential writes). The same call gives the same offsets and data, so
# "run_fio ... $(dms_fio_job ...) --verify_only" re-checks it later.
dms_fio_job() {
	local dev=$1 off=$2 size=$3 kind=$4 io=${5:-}
	echo "--filename=$dev --offset=$off --size=$size" \
		"--verify=crc32c --verify_state_save=0 --randrepeat=1 --randseed=4242" \
		"--ioengine=libaio --direct=1"
	case $kind in
	rand) echo "--rw=randwrite --bs=4k --iodepth=4${io:+ --io_size=$io}" ;;
	seq) echo "--rw=write --bs=1M --iodepth=2" ;;
	esac
}

# assert_errno DESC EXPECTED_MSG ACTUAL_MSG RC: a command failed (RC != 0)
# with the strerror text EXPECTED_MSG in its message (as in lib/hm.sh).
declare -F assert_errno > /dev/null ||
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

# Kernel log expectations, checked in one batch (one dmesg for many
# cases: under TCG every exec costs about a second).
#   dms_kq_mark: write a unique marker to the kernel log, print it;
#   dms_kq_expect DESC MARK MSG: the log after MARK (up to the next
#     marker) must contain MSG;
#   dms_kq_check: one dmesg, one check per expectation queued.
DMS_KQ_DESC=() DMS_KQ_MARK=() DMS_KQ_MSG=()
dms_kq_mark() {
	local m="dmkq-$BASHPID-$RANDOM$RANDOM-"
	echo "$m" > /dev/kmsg
	echo "$m"
}
dms_kq_expect() {
	DMS_KQ_DESC+=("$1") DMS_KQ_MARK+=("$2") DMS_KQ_MSG+=("$3")
}
dms_kq_check() {
	local log i seg
	log=$(dmesg)
	for i in "${!DMS_KQ_DESC[@]}"; do
		# awk, not ${seg%%dmkq-*}: bash's pattern removal is quadratic
		# on a long kernel log and took minutes.
		seg=$(awk -v m="${DMS_KQ_MARK[i]}" \
			'index($0, m) { f = 1; next } f && /dmkq-/ { exit } f' <<< "$log")
		if [[ $seg == *"${DMS_KQ_MSG[i]}"* ]]; then
			ok "${DMS_KQ_DESC[i]}"
		else
			not_ok "${DMS_KQ_DESC[i]}" "expected in the kernel log: ${DMS_KQ_MSG[i]}" \
				"kernel log after the marker: ${seg:-(marker not found)}"
		fi
	done
	DMS_KQ_DESC=() DMS_KQ_MARK=() DMS_KQ_MSG=()
}
