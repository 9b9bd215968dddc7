#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
# smrd on a drive-managed device: a random-write burst followed by idle
# cleaning gives the expected event sequence (occupancy crossings, one
# start/finish pair per dirty band, the cache emptied, idle and clean with
# a cleaning time that matches status within 1 s); the dump matches
# dmsetup status; smrctl wait-clean returns once the cache is empty; a
# flood over the rate limit is counted as dropped.
#
# Geometry: 256 MiB device, 4 MiB bands, 32 MiB cache, idle_ms 1000; the
# bursts write 4 KiB blocks at random in the first 64 MiB (bands 0-15).
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/nl.sh"
_prep_test "netlink: drive-managed cleaning events, wait-clean, rate limit"
nl_prep
require_cmd fio
require_target smr

N=nl02
D=/dev/mapper/$N
EV=$T_WORK/events.json
b=$(new_backing 300) || bail "no backing device"
out=$("$SMRCTL" create $N --model drive-managed --dev "$b" --size 256M --band 4M \
	--cache 32M --idle-ms 1000 2>&1)
rc=$?
nl_track $N
diag "$out"
[ $rc = 0 ] || bail "smrctl create drive-managed failed: $out"
ok "smrctl create drive-managed"
assert_eq "table computed by smrctl" \
	"0 524288 smr $(dm_devt "$(basename "$b")") drive-managed 8192 4 cache_sectors 65536 idle_ms 1000" \
	"$(dmsetup table $N)"

smrd_start "$EV" || bail "smrd did not start"

# burst MIB [nosettle]: 4 KiB random writes, no block twice, in bands 0-15.
burst() {
	fio --name=burst --filename=$D --rw=randwrite --bs=4k --direct=1 \
		--ioengine=psync --offset=0 --size=64M --io_size="$1M" \
		--randrepeat=0 --output=/dev/null || return
	# udev probes the device when a writer closes it (2 MiB of reads):
	# let it finish now rather than at a random point of what follows.
	[ "$2" = nosettle ] || udevadm settle 2>/dev/null
	return 0
}

# status FIELD: one drive-managed status field by name (docs/dm-smr.rst).
DM_FIELDS=(nr_bands band_sectors cache cache_live index_extents index_bytes
	dirty_bands rmw_bg rmw_fg rmw_manual bg_aborts clean_read_sectors
	clean_write_sectors clean_ms_bg clean_ms_fg clean_ms_since_busy
	host_read_sectors host_write_sectors cache_write_sectors
	bypass_write_sectors wa state policy commits errors mem_bytes)
status() {
	local s i
	read -r -a s <<< "$(dmsetup status $N)"
	for i in "${!DM_FIELDS[@]}"; do
		[ "${DM_FIELDS[$i]}" = "$1" ] && { echo "${s[$((i + 4))]}"; return; }
	done
}

check "burst 1: 26 MiB of random 4 KiB writes" burst 26
dirty=$(status dirty_bands)
diag "after the burst: cache $(status cache), dirty bands $dirty, state $(status state)"

if wait_json "$EV" ".event == \"idle_clean\" and .device == \"$N\"" 300; then
	ok "idle_clean event received"
else
	not_ok "idle_clean event received" "$(tail -n 20 "$EV")"
fi
sleep 1
jq -c "select(.device == \"$N\")" "$EV" > "$T_WORK/dev.json"
diag "$(jq -r '[.event, (.band // .pct // .clean_ms // "" | tostring)] | join(" ")' "$T_WORK/dev.json" | tr '\n' ',' | head -c 1500)"

# Occupancy: 26 of 32 MiB crosses 25, 50 and 75 on the way up, in order,
# each once, before any cleaning.
assert_eq "cache_level crossings before cleaning: 25 50 75" "25 50 75" \
	"$(jq -r 'select(.event == "cache_level" or .event == "clean_start") | .event + ":" + (.pct // .band | tostring)' "$T_WORK/dev.json" |
		sed '/^clean_start/,$d' | cut -d: -f2 | tr '\n' ' ' | sed 's/ $//')"
# A background cleaning abandoned for host I/O (bg_aborts) has a
# clean_start and no clean_done; every finished one (rmw_bg) has both.
starts=$(jq_count "$T_WORK/dev.json" '.event == "clean_start"')
dones=$(jq_count "$T_WORK/dev.json" '.event == "clean_done"')
rmw=$(status rmw_bg)
aborts=$(status bg_aborts)
diag "dirty bands after the burst $dirty; rmw_bg $rmw, bg_aborts $aborts; events: $starts starts, $dones dones"
assert_eq "one clean_done per band cleaned (rmw_bg)" "$rmw" "$dones"
assert_eq "one clean_start per band cleaned or abandoned (rmw_bg + bg_aborts)" "$((rmw + aborts))" "$starts"
[ "$dones" -ge "$dirty" ] && [ "$dones" -le 16 ] && ok "every dirty band cleaned ($dones >= $dirty)" ||
	not_ok "every dirty band cleaned" "$dones cleanings, $dirty dirty bands"
# Pairs: start B then done B (or another start: B was abandoned), every
# band done once, bands 0-15.
pairs=$(jq -r 'select(.event == "clean_start" or .event == "clean_done") | "\(.event) \(.band)"' "$T_WORK/dev.json" |
	awk '$1 == "clean_start" { if (open != "") ab++; open = $2; next }
	     { if ($2 != open) bad++; open = ""; seen[$2]++ }
	     END { n = 0; for (k in seen) { n++; if (seen[k] != 1 || k + 0 < 0 || k + 0 > 15) bad++ }
		   print (bad + 0) " " n " " (ab + 0) }')
assert_eq "each done follows its band's start; bands distinct, in 0-15; abandoned starts = bg_aborts" \
	"0 $dones $aborts" "$pairs"
assert_eq "every cleaning was for idle" "" \
	"$(jq -r 'select(.event == "clean_start" or .event == "clean_done") | select(.reason != "idle") | .reason' "$T_WORK/dev.json")"
# After the last clean_start: its clean_done and the cache becoming empty
# (level 0), in either order, then idle and clean, last.
tail_ev=$(jq -r '.event + (if .event == "cache_level" then ":\(.pct)" else "" end)' "$T_WORK/dev.json" |
	awk '/^clean_start/ { n = 0; next } { a[n++] = $0 } END { for (i = 0; i < n; i++) print a[i] }')
assert_eq "after the last clean_start: clean_done, cache_level 0, then idle_clean" \
	"cache_level:0 clean_done | idle_clean" \
	"$(head -n -1 <<< "$tail_ev" | sort | tr '\n' ' ')| $(tail -n 1 <<< "$tail_ev")"
ev_ms=$(jq -r 'select(.event == "idle_clean") | .clean_ms' "$T_WORK/dev.json" | tail -n 1)
st_ms=$(status clean_ms_since_busy)
diag "cleaning time: event $ev_ms ms, status $st_ms ms"
d=$(( ev_ms - st_ms )); d=${d#-}
[ -n "$ev_ms" ] && [ "$d" -le 1000 ] && ok "idle_clean cleaning time matches status within 1 s ($ev_ms vs $st_ms ms)" ||
	not_ok "idle_clean cleaning time matches status within 1 s" "event '$ev_ms' status '$st_ms'"
# An abandoned cleaning wrote some of the spare band: counted in status,
# in no clean_done.
cw=$(( $(status clean_write_sectors) * 512 ))
ew=$(jq -s 'map(select(.event == "clean_done") | .write_bytes) | add' "$T_WORK/dev.json")
if [ "$aborts" = 0 ]; then
	assert_eq "clean_done write bytes add up to clean_write_sectors" "$cw" "$ew"
else
	[ "$ew" -le "$cw" ] && [ "$ew" -gt 0 ] &&
		ok "clean_done write bytes ($ew) within clean_write_sectors ($cw, with $aborts abandoned)" ||
		not_ok "clean_done write bytes within clean_write_sectors" "$ew vs $cw"
fi
assert_eq "cache empty" "0/8192" "$(status cache)"
# Reads make no cleaning debt: they leave the cleaning time alone.
dd if=$D of=/dev/null bs=4k count=64 skip=100 iflag=direct status=none
assert_eq "a host read keeps clean_ms_since_busy" "$st_ms" "$(status clean_ms_since_busy)"

# The dump carries the same counters as dmsetup status (38 fields).
want=$(dmsetup status $N | cut -d' ' -f4-)
got=$("$SMRCTL" status $N --json | jq -r '["drive-managed", .nr_bands, .band_sectors,
	"\(.cache_used)/\(.cache_total)", .cache_live, .index_extents, .index_bytes,
	.dirty_bands, .rmw_bg, .rmw_fg, .rmw_manual, .bg_aborts, .clean_read_sectors,
	.clean_write_sectors, .clean_ms_bg, .clean_ms_fg, .clean_ms_since_busy,
	.host_read_sectors, .host_write_sectors, .cache_write_sectors,
	.bypass_write_sectors,
	"\(.wa_milli / 1000 | floor).\(("00" + (.wa_milli % 1000 | tostring))[-3:])",
	.state, .policy, .commits, .errors, .mem_bytes, .model_busy_ms, .model_clean_ms,
	.model_lag_ms, .bad_read_errors, .bad_write_errors, .bad_remaps,
	.transient_errors, .delayed_ios, .clean_timeouts, .power, .power_left] |
	map(tostring) | join(" ")')
assert_eq "dump == dmsetup status (38 fields)" "$want" "$got"
assert_eq "dump devt" "$(dm_devt $N)" "$("$SMRCTL" status $N --json | jq -r .devt)"

# --- wait-clean ---
# Read the cache right after fio: waiting for udev first can outlast
# idle_ms on a loaded host, and the cache would be clean already.
check "burst 2: 8 MiB" burst 8 nosettle
before=$(status cache)
out=$("$SMRCTL" wait-clean $N --timeout 300 2>&1)
rc=$?
diag "wait-clean: $out (rc $rc)"
assert_eq "wait-clean returns 0" 0 "$rc"
cache=$(status cache)
assert_eq "cache empty when wait-clean returns" "0/8192" "$cache"
assert_eq "state idle when wait-clean returns" idle "$(status state)"
if [[ $out =~ ^clean\ after\ ([0-9.]+)\ s\;\ cleaning\ time\ ([0-9.]+)\ s$ ]]; then
	ok "wait-clean prints the cleaning time"
	wc_ms=$(awk -v s="${BASH_REMATCH[2]}" 'BEGIN { printf "%d", s * 1000 }')
	st_ms=$(status clean_ms_since_busy)
	d=$(( wc_ms - st_ms )); d=${d#-}
	[ "$d" -le 1000 ] && ok "wait-clean cleaning time matches status within 1 s ($wc_ms vs $st_ms ms)" ||
		not_ok "wait-clean cleaning time matches status within 1 s" "$wc_ms vs $st_ms"
	# The idle period runs from fio's last write, before wait-clean
	# started: how long it waited says little; that it started on a
	# dirty cache and returned on an empty one says it waited.
	[ "${before%/*}" -gt 0 ] && [ "$cache" = 0/8192 ] &&
		ok "wait-clean started on a dirty cache ($before) and returned on an empty one" ||
		not_ok "wait-clean started on a dirty cache and returned on an empty one" "before $before, after $cache: $out"
else
	not_ok "wait-clean prints the cleaning time" "$out"
fi
out=$(timeout 20 "$SMRCTL" wait-clean $N --timeout 10 2>&1)
assert_eq "wait-clean on a clean device returns at once" 0 "$?"
case $out in "clean after 0."*) ok "... in under a second ($out)" ;; *) not_ok "... in under a second" "$out" ;; esac
# The same here: wait-clean must look while the cache is dirty.
check "burst 3: 4 MiB" burst 4 nosettle
out=$("$SMRCTL" wait-clean $N --timeout 0.3 2>&1)
assert_eq "wait-clean times out on a dirty device" 1 "$?"
diag "$out"
case $out in *"not clean after"*) ok "timeout message" ;; *) not_ok "timeout message" "$out" ;; esac
check "wait for it" "$SMRCTL" wait-clean $N --timeout 300

# --- rate limit: a flood is counted as dropped ---
check "reset counters, rate 3/s" "$SMRCTL" event-stats --rate 3 --reset
t0=$(date +%s)
check "burst 4: 26 MiB" burst 26
check "wait-clean after burst 4" "$SMRCTL" wait-clean $N --timeout 300
secs=$(( $(date +%s) - t0 + 1 ))
st=$("$SMRCTL" event-stats --json | jq -c 'select(.family == "dm-smr")')
diag "$st"
sent=$(jq -r .events_sent <<< "$st")
dropped=$(jq -r .events_dropped <<< "$st")
# A host slow enough (a debug kernel beside other VMs) spreads the
# events out so far that none is over the rate: nothing to drop then.
if [ "$dropped" -gt 0 ]; then
	ok "events over the rate were dropped and counted ($dropped)"
elif [ "$sent" -le $((3 * secs)) ]; then
	skip "events over the rate were dropped and counted" "the host was slow: $sent events in $secs s never went over 3/s"
else
	not_ok "events over the rate were dropped and counted" "$st ($secs s)"
fi
ev4=$(( $(grep -c . "$EV") ))
diag "smrd lines: $ev4, kernel sent $sent"
check "rate back to 1000" "$SMRCTL" event-stats --rate 1000 --reset
assert_eq "the device still works: no I/O errors" 0 "$(status errors)"
smrd_stop
dmesg_check
_show_result
