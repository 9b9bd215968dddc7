#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
# Netlink families, smrd and smrctl on host-managed and caveat devices:
# the dump matches dmsetup status; zone errors and live-data damage reach
# smrd as events; an unprivileged user can dump but not change; malformed
# requests are refused without kernel warnings; smrd picks up a module
# loaded after it started.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/hm.sh"
. "$SMR_ROOT/tests/lib/nl.sh"
_prep_test "netlink: dump, events, permissions, bad input (hm, caveat)"
nl_prep
require_cmd python3 dd
require_target smr
require_target caveat

EV=$T_WORK/events.json
smrd_start "$EV" || bail "smrd did not start"
assert_eq "smrd subscribed to both families" "dm-smr,dm-caveat" \
	"$(jq -r 'select(.event == "subscribed") | .families' "$EV")"

# --- host-managed: created by smrctl, dump == status, zone error event ---
hb=$(new_backing 80) || bail "no backing device"
out=$("$SMRCTL" create nl01hm --model host-managed --dev "$hb" --zone 8M --conv 1 --size 64M 2>&1)
rc=$?
nl_track nl01hm
assert_eq "smrctl create host-managed" 0 "$rc"
diag "$out"
assert_eq "table computed by smrctl" \
	"0 131072 smr $(dm_devt "$(basename "$hb")") host-managed 16384 2 conv_zones 1" \
	"$(dmsetup table nl01hm)"
udevadm settle 2>/dev/null
st=$("$SMRCTL" status nl01hm --json)
assert_eq "dump: mode" "host-managed" "$(jq -r .mode <<< "$st")"
assert_eq "dump: devt" "$(dm_devt nl01hm)" "$(jq -r .devt <<< "$st")"
want=$(dmsetup status nl01hm | cut -d' ' -f5-)
got=$(jq -r '[.nr_zones,.conv_zones,.imp_open,.exp_open,.closed,.full,.readonly,.offline,.writes,.write_sectors,.reads,.read_sectors,.resets,.finishes,.opens,.closes,.imp_closes,.wp_errors,.errors,.commits,.mem_bytes,.model_busy_ms,.model_lag_ms,.bad_read_errors,.bad_write_errors,.bad_remaps,.transient_errors,.delayed_ios,.power,.power_left]|map(tostring)|join(" ")' <<< "$st")
assert_eq "dump counters == dmsetup status (30 fields)" "$want" "$got"

# A write to a zone made read-only (zone 3, sector 49152): refused by the
# target, which sends the event. (A write off the write pointer is refused
# by the dm core, which tracks write pointers for zone append emulation,
# before the target sees it: no event for those.)
check "zone 3 read-only" dmsetup message nl01hm 0 zone_cond 49152 readonly
dd if=/dev/zero of=/dev/mapper/nl01hm bs=4096 seek=$(( 49152 / 8 )) count=1 \
	oflag=direct status=none 2>/dev/null
assert_ne "write to a read-only zone fails" 0 "$?"
if wait_json "$EV" '.event == "zone_error" and .device == "nl01hm"' 20; then
	ok "zone_error event received"
	e=$(jq -c 'select(.event == "zone_error" and .device == "nl01hm")' "$EV" | head -n 1)
	diag "$e"
	assert_eq "zone_error fields" "dm-smr $(dm_devt nl01hm) 3 ro 49152 8" \
		"$(jq -r '[.family,.devt,.zone,.cond,.sector,.sectors]|map(tostring)|join(" ")' <<< "$e")"
else
	not_ok "zone_error event received" "$(cat "$EV")"
fi
assert_eq "one zone_error event" 1 "$(jq_count "$EV" '.event == "zone_error"')"

# Zone report through libzbd: 8 zones, 1 conventional, zone 3 read-only.
zr=$("$SMRCTL" zones nl01hm 2>&1)
diag "$zr"
assert_eq "smrctl zones: conv, seq x7, zone 3 ro" "conv seq seq seq seq seq seq seq ro" \
	"$(awk 'NR > 2 { t = t $5 " " } $1 == 49152 { c = $6 } END { print t c }' <<< "$zr")"
# The same device named by its /dev/mapper path and by its /dev/dm-N node.
node=/dev/$(basename "$(readlink -f /dev/mapper/nl01hm)")
assert_eq "smrctl zones /dev/mapper/nl01hm: the same report" "$zr" \
	"$("$SMRCTL" zones /dev/mapper/nl01hm 2>&1)"
assert_eq "smrctl zones $node: the same report" "$zr" "$("$SMRCTL" zones "$node" 2>&1)"

# Prometheus endpoint: loopback only; device counters by name.
check_fail "smrd refuses a non-loopback metrics address" "$SMRD" --metrics 0.0.0.0:9433
"$SMRD" --json /dev/null --metrics 127.0.0.1:9433 2>/dev/null &
mpid=$!
m=
for i in $(seq 1 40); do
	m=$(python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:9433/metrics", timeout=5).read().decode())' 2>/dev/null) && break
	sleep 0.3
done
kill $mpid; wait $mpid 2>/dev/null
assert_eq "metrics: zones of nl01hm" 'smr_zones{family="dm-smr",device="nl01hm"} 8' \
	"$(grep '^smr_zones{' <<< "$m")"
problems=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import test_smrd_metrics as t; print("\n".join(t.check_exposition(sys.stdin.read())))' \
	"$SMR_ROOT/tests/unit" <<< "$m" 2>&1)
assert_eq "metrics: the exposition passes the promtool rules" "" "$problems"
grep -q '^smrd_family_loaded{family="dm-caveat"} 1$' <<< "$m" && ok "metrics: families loaded" ||
	not_ok "metrics: families loaded" "$(head -n 20 <<< "$m")"

# --- caveat: live damage event, dump map ---
cb=$(new_backing 40) || bail "no backing device"
check "smrctl create caveat" "$SMRCTL" create nl01cv --model caveat --dev "$cb" --did 16 --dnor 4 --size 32M
nl_track nl01cv
dd if=/dev/urandom of=/dev/mapper/nl01cv bs=4096 seek=100 count=1 oflag=direct status=none
dd if=/dev/urandom of=/dev/mapper/nl01cv bs=4096 seek=90 count=1 oflag=direct status=none
if wait_json "$EV" '.event == "damage" and .device == "nl01cv"' 20; then
	ok "damage event received"
	e=$(jq -c 'select(.event == "damage" and .device == "nl01cv")' "$EV" | head -n 1)
	diag "$e"
	assert_eq "damage: writer 90, victim 100, range 95..106, 1 live block" \
		"dm-caveat $(dm_devt nl01cv) 90 90 100 100 95 106 1" \
		"$(jq -r '[.family,.devt,.write_first,.write_last,.victim_first,.victim_last,.damage_first,.damage_last,.live_blocks]|map(tostring)|join(" ")' <<< "$e")"
else
	not_ok "damage event received" "$(cat "$EV")"
fi
assert_eq "one damage event for one damaging write" 1 "$(jq_count "$EV" '.event == "damage"')"
st=$("$SMRCTL" status nl01cv --json)
assert_eq "caveat dump: writes, live damage, valid blocks" "2 1 1 1" \
	"$(jq -r '[.writes,.live_damage_writes,.live_damaged_blocks,.valid_blocks]|map(tostring)|join(" ")' <<< "$st")"
assert_eq "smrctl dump: the damage map" '[[0,90],[91,8101]] 8191' \
	"$("$SMRCTL" dump nl01cv --json | jq -c '[.damaged, .damaged_blocks]' | sed 's/^\[\(.*\),\([0-9]*\)\]$/\1 \2/')"

# --- permissions ---
out=$(as_nobody "$SMRCTL" status --json 2>&1)
rc=$?
assert_eq "unprivileged: status works" 0 "$rc"
assert_eq "unprivileged: status lists both devices" "nl01cv nl01hm" \
	"$(jq -r .device <<< "$out" | sort | tr '\n' ' ' | sed 's/ $//')"
out=$(as_nobody "$SMRCTL" event-stats --rate 7 2>&1)
rc=$?
assert_eq "unprivileged: changing the event rate fails" 1 "$rc"
case $out in
*CAP_NET_ADMIN*) ok "unprivileged: the error says what is needed" ;;
*) not_ok "unprivileged: the error says what is needed" "$out" ;;
esac
assert_eq "rate unchanged" "1000 1000" \
	"$("$SMRCTL" event-stats --json | jq -r .event_rate | tr '\n' ' ' | sed 's/ $//')"
out=$(as_nobody "$SMRCTL" remove nl01hm 2>&1)
assert_eq "unprivileged: remove refused" 1 "$?"
diag "$out"
check "root: changing the event rate works" "$SMRCTL" event-stats --rate 500
assert_eq "rate changed" "500 500" "$("$SMRCTL" event-stats --json | jq -r .event_rate | tr '\n' ' ' | sed 's/ $//')"
check "root: rate back to 1000" "$SMRCTL" event-stats --rate 1000

# --- malformed requests (as root, so SET reaches its policy) ---
cv_py_out=$(python3 "$SMR_ROOT/tests/lib/nl_malformed.py" dm-smr dm-caveat 2>&1)
while IFS= read -r line; do
	case $line in
	"CHECK PASS "*) ok "${line#CHECK PASS }" ;;
	"CHECK FAIL "*) line=${line#CHECK FAIL }; not_ok "${line%% | *}" "${line#* | }" ;;
	*) diag "$line" ;;
	esac
done <<< "$cv_py_out"

# --- smrctl errors that say what to do ---
out=$("$SMRCTL" create nl01hm --model host-managed --dev "$hb" --zone 8M 2>&1)
assert_eq "create over an existing name fails" 1 "$?"
diag "$out"
out=$("$SMRCTL" create nl01x --model host-managed --dev "$hb" --zone 8M --size 1G 2>&1)
assert_eq "create larger than the backing device fails" 1 "$?"
diag "$out"
exec 7< /dev/mapper/nl01hm
out=$("$SMRCTL" remove nl01hm 2>&1)
assert_eq "remove of an open device fails" 1 "$?"
case $out in *busy*) ok "busy: the error says so" ;; *) not_ok "busy: the error says so" "$out" ;; esac
exec 7<&-

# --- a module loaded after smrd started ---
check "smrctl remove caveat" "$SMRCTL" remove nl01cv
if [ -z "$(dmsetup table --target caveat 2>/dev/null | grep -v 'No devices')" ]; then
	check "rmmod dm-caveat" rmmod dm_caveat
	wait_json "$EV" '.event == "family_down" and .name == "dm-caveat"' 20
	assert_eq "smrd saw dm-caveat go" 0 "$?"
	check "insmod dm-caveat" insmod "$SMR_ROOT/dm-caveat/dm-caveat.ko"
	wait_json "$EV" '.event == "family_up" and .name == "dm-caveat"' 20
	assert_eq "smrd saw dm-caveat come back" 0 "$?"
	check "create the caveat device again" "$SMRCTL" create nl01cv --model caveat --dev "$cb" --did 16 --dnor 4 --size 32M
	dd if=/dev/urandom of=/dev/mapper/nl01cv bs=4096 seek=200 count=1 oflag=direct status=none
	dd if=/dev/urandom of=/dev/mapper/nl01cv bs=4096 seek=190 count=1 oflag=direct status=none
	wait_json "$EV" '.event == "damage" and .write_first == 190' 20
	assert_eq "damage event from the reloaded module" 0 "$?"
else
	skip "module loaded later" "other caveat devices exist"
fi

# --- SIGUSR1 summary ---
kill -USR1 "$SMRD_PID"
wait_json "$EV" '.event == "summary" and .device == "nl01hm"' 20
assert_eq "summary on SIGUSR1" 0 "$?"
assert_eq "summary: zone errors of nl01hm" 1 \
	"$(jq -r 'select(.event == "summary" and .device == "nl01hm") | .zone_errors' "$EV" | tail -n 1)"
grep -q 'nl01hm' "$EV.err" && ok "summary on stderr" || not_ok "summary on stderr" "$(cat "$EV.err")"
smrd_stop
dmesg_check
_show_result
