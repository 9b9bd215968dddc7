#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# BOOTS: 2
# TIMEOUT: 600
# SLOW: 1
# (Real crashes cost a boot each: make check runs this on the first
# kernel only; test_crash_01_points checks every crash point of a
# recorded workload on every kernel without a reboot.)
#
# Host-managed dm-smr: crash consistency (docs/dm-smr.rst "Durability").
#
# Boot 1 writes a deterministic pattern (every 4 KiB block names its zone
# and block number) to several zones, makes it durable (fsync, a zone
# finish, a zone reset) and records what was durable in the state dir;
# then a background writer keeps appending the same pattern to those
# zones, some writes O_DSYNC (FUA + flush: logged as durable once
# acknowledged), and the guest is crashed with sysrq-b in the middle.
#
# Boot 2 re-creates the device with the same table over the same region
# and checks: every durable write is there; every zone's wp is at or
# above its durable wp; [0, wp) holds exactly the pattern (no wp points
# past data that is not there, whatever was lost); beyond the wp reads
# are zeros; no zone comes back open; the device takes writes again.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: crash with writes in flight; durable data and write pointers"
hm_prep
require_cmd perl

ZS=$HM_ZS
NZ=12
LEN=$((NZ * ZS))
WZONES="1 2 3 4 5 6 7 8 11"	# zones the background writer appends to
name=t_${TID}_hm
dev=/dev/mapper/$name
ST=$SMR_STATE

# Same call order in both boots: same backing region (not discarded in
# boot 2, so it holds what boot 1 left).
back=$(new_backing 112) || bail "no backing device"

if [ "$SMR_BOOT" = 1 ]; then
	rm -f "$ST"/durable.* "$ST"/writer.*
	seed=$RANDOM$RANDOM
	echo "$seed" > "$ST/seed"
	hm_create "$name" $LEN "$back" $ZS conv_zones 1 format ||
		bail "cannot create the device"

	# ---- durable phase ------------------------------------------------
	# nblk[z]: 4 KiB blocks of pattern at the start of zone z.
	declare -A nblk=([0]=64 [9]=16 [10]=16)
	for z in 1 2 3 4 5 6 7 8; do nblk[$z]=$((z * 8)); done
	for z in 0 1 2 3 4 5 6 7 8 9 10; do
		out=$(hm_pattern_write "$dev" $((z * ZS)) "$seed" $z 0 ${nblk[$z]}) ||
			not_ok "pattern write to zone $z" "$out"
	done
	hm_zop "$dev" close $((5 * ZS)) > /dev/null
	check "fsync the device" hm_flush "$dev"
	check "finish zone 9 (durable when done)" hm_zop "$dev" finish $((9 * ZS))
	check "reset zone 10 (durable when done)" hm_zop "$dev" reset $((10 * ZS))

	# Record: zone cond wp data_end md5-of-[0,data_end).
	rep=($(hm_report "$dev" | awk '{ print $5 "/" $4 }'))
	: > "$ST/durable.tmp"
	for z in $(seq 0 $((NZ - 1))); do
		case $z in
		10|11) end=0 ;;
		*) end=$(( ${nblk[$z]} * 8 )) ;;
		esac
		cw=${rep[z]}
		sha=$(hm_sum "$dev" $((z * ZS)) $end)
		echo "$z ${cw%/*} ${cw#*/} $end $sha" >> "$ST/durable.tmp"
	done
	mv "$ST/durable.tmp" "$ST/durable.zones"
	want="0 nw 0 512"
	for z in 1 2 3 4 5 6 7 8; do
		c=oi; [ $z = 5 ] && c=cl
		want+="|$z $c $((z * 64)) $((z * 64))"
	done
	want+="|9 fu $ZS 128|10 em 0 0|11 em 0 0"
	got=$(awk '{ printf "%s%s %s %s %s", (NR > 1 ? "|" : ""), $1, $2, $3, $4 }' "$ST/durable.zones")
	assert_eq "durable state recorded: zone cond wp data_end" "$want" "$got"
	sync

	# ---- writer and crash ---------------------------------------------
	writer() {
		local i=0 z n f fl out
		local -A wpb
		for z in $WZONES; do wpb[$z]=${nblk[$z]:-0}; done
		while :; do
			for z in $WZONES; do
				n=$((RANDOM % 16 + 1))
				f=${wpb[$z]}
				[ $(( (f + n) * 8 )) -le $ZS ] || continue
				fl=
				[ $((i % 3)) = 2 ] && fl=dsync
				if ! out=$(hm_pattern_write "$dev" $((z * ZS)) "$seed" $z "$f" $n $fl); then
					echo "zone $z block $f +$n ($fl): $out" >> "$ST/writer.err"
					exit 1
				fi
				wpb[$z]=$((f + n))
				[ -n "$fl" ] && echo "D $z $(( (f + n) * 8 ))" >> "$ST/durable.log"
				i=$((i + 1))
				echo "$i" > "$T_WORK/writer.count"
			done
		done
	}
	writer &
	wpid=$!
	for t in $(seq 1 120); do
		sleep 1
		read -r cnt 2>/dev/null < "$T_WORK/writer.count"
		[ "${cnt:-0}" -ge 12 ] && break
		kill -0 $wpid 2>/dev/null || break
	done
	if kill -0 $wpid 2>/dev/null; then
		ok "the writer is running with writes in flight (${cnt:-0} writes so far)"
	else
		not_ok "the background writer keeps writing" "$(cat "$ST/writer.err" 2>/dev/null)"
	fi
	if [ "${cnt:-0}" -ge 12 ]; then ok "the writer made at least 12 writes before the crash"
	else not_ok "the writer made at least 12 writes before the crash" "count ${cnt:-0}"; fi
	diag "crashing with the writer at ${cnt:-0} writes; status: $(hm_stats "$dev")"
	crash_guest
fi

# ==== boot 2 ===========================================================
[ -s "$ST/durable.zones" ] || bail "boot 1 left no durable.zones in $ST"
read -r seed < "$ST/seed"
[ -f "$ST/crashed-boot1" ] && ok "boot 1 crashed as planned ($(cat "$ST/crashed-boot1"))" ||
	not_ok "boot 1 crashed as planned" "no $ST/crashed-boot1"
check "re-create the device with the same table (no format)" \
	hm_create "$name" $LEN "$back" $ZS conv_zones 1
hm_dm_exists "$name" || bail "device not re-created"

# Highest wp acknowledged durable per zone (O_DSYNC writes of the writer).
declare -A dwp
while read -r tag z wp; do
	[ "$tag" = D ] && [[ $z =~ ^[0-9]+$ ]] && [[ $wp =~ ^[0-9]+$ ]] || continue
	[ "$wp" -gt "${dwp[$z]:-0}" ] && dwp[$z]=$wp
done < <(cat "$ST/durable.log" 2>/dev/null)
diag "durable O_DSYNC wps logged by the writer: $(for z in "${!dwp[@]}"; do printf 'z%s:%s ' $z ${dwp[$z]}; done)"

rep=($(hm_report "$dev" | awk '{ print $5 "/" $4 }'))
assert_eq "the zone report has every zone" $NZ "${#rep[@]}"
gained=0
while read -r z cond0 wp0 end0 sha0; do
	cw=${rep[z]}
	cond=${cw%/*} wp=${cw#*/}
	zs=$((z * ZS))
	case $z in
	0)
		assert_eq "zone 0 (conventional) still nw" nw "$cond"
		assert_eq "zone 0: durable data" "$sha0" "$(hm_sum "$dev" $zs $end0)"
		continue ;;
	9)
		assert_eq "zone 9 (finished) still full" "fu $ZS" "$cond $wp"
		assert_eq "zone 9: data end kept" "seq fu $ZS $end0" "$(hm_zinfo "$dev" $zs)"
		assert_eq "zone 9: durable data" "$sha0" "$(hm_sum "$dev" $zs $end0)"
		hm_assert_zero "zone 9: zeros beyond its data" "$dev" $((zs + end0)) $((ZS - end0))
		continue ;;
	10)
		assert_eq "zone 10 (reset) still empty" "em 0" "$cond $wp"
		hm_assert_zero "zone 10: the old data does not come back" "$dev" $zs 256
		continue ;;
	esac
	# Sequential zones the writer appended to.
	case $cond in
	cl|em) ok "zone $z came back closed or empty ($cond $wp)" ;;
	*) not_ok "zone $z came back closed or empty" "cond $cond wp $wp" ;;
	esac
	[ "$cond" = em ] && [ "$wp" != 0 ] && not_ok "zone $z: empty with wp $wp"
	floor=$wp0
	[ "${dwp[$z]:-0}" -gt "$floor" ] && floor=${dwp[$z]}
	if [ "$wp" -ge "$floor" ]; then
		ok "zone $z: wp $wp >= durable wp $floor (fsync'd $wp0, O_DSYNC ${dwp[$z]:-none})"
	else
		not_ok "zone $z: wp $wp >= durable wp $floor" \
			"fsync'd wp $wp0, O_DSYNC wp ${dwp[$z]:-none}, wp after the crash $wp"
	fi
	[ "$wp" -gt "$wp0" ] && gained=$((gained + 1))
	assert_eq "zone $z: fsync'd data intact" "$sha0" "$(hm_sum "$dev" $zs $wp0)"
	if [ $((wp % 8)) != 0 ] || [ "$wp" -gt $ZS ]; then
		not_ok "zone $z: wp $wp is a whole 4 KiB block inside the zone"
		continue
	fi
	if out=$(cmp <(hm_read "$dev" $zs "$wp") <(hm_pattern "$seed" $z 0 $((wp / 8))) 2>&1); then
		ok "zone $z: [0, wp) is exactly what the writer wrote"
	else
		not_ok "zone $z: [0, wp) is exactly what the writer wrote" "$out"
	fi
	[ "$wp" -lt $ZS ] && hm_assert_zero "zone $z: zeros beyond the wp" "$dev" $((zs + wp)) $((ZS - wp))
done < "$ST/durable.zones"
diag "$gained zones kept writes made after the fsync"
assert_eq "no zone is open after the crash" "0 0" "$(hm_stat "$dev" imp_open exp_open)"

# The device works after the crash.
z=1
wp=$(hm_wp "$dev" $ZS)
if out=$(hm_pattern_write "$dev" $ZS "$seed" $z $((wp / 8)) 4); then
	ok "a write at the wp of zone 1 after the crash"
else
	not_ok "a write at the wp of zone 1 after the crash" "$out"
fi
check "fsync after the crash" hm_flush "$dev"
assert_cw "zone 1 advanced" "$dev" $ZS "oi $((wp + 32))"

dmesg_check "no kernel warnings"
_show_result
