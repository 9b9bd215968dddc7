#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# SMOKE: 1
# TIMEOUT: 450
#
# Host-managed dm-smr: what the device publishes. sysfs queue limits
# (zoned model, zone size and count, open/active limits, which the 6.1 dm
# core leaves at 0 unless the target sets them, block sizes, zone append
# size), the BLKGETZONESZ/BLKGETNRZONES ioctls, the zone report (types,
# capacities, conditions, write pointers), "dmsetup table" (the table
# line back, without "format") and "dmsetup status" (docs/dm-smr.rst).

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: sysfs limits, ioctls, zone report, table and status lines"
hm_prep

ZS=$HM_ZS			# 8 MiB zones
NZ=16
LEN=$((NZ * ZS))
CAP=12288			# 6 MiB usable per sequential zone
CONV=2

back=$(new_backing 256) || bail "no backing device"
name=t_${TID}_hm
dev=/dev/mapper/$name

# "format" first: the printed table must drop it and count one less.
check "create: $NZ zones, $CONV conventional, capacity $CAP, max_open 3, max_active 5" \
	hm_create "$name" "$LEN" "$back" "$ZS" format conv_zones $CONV \
	zone_capacity $CAP max_open 3 max_active 5
hm_dm_exists "$name" || bail "device was not created"

# ---- sysfs ------------------------------------------------------------
assert_eq "queue/zoned" host-managed "$(hm_sysfs "$dev" zoned)"
assert_eq "queue/chunk_sectors is the zone size" $ZS "$(hm_sysfs "$dev" chunk_sectors)"
assert_eq "queue/nr_zones" $NZ "$(hm_sysfs "$dev" nr_zones)"
assert_eq "queue/max_open_zones is published (not 0)" 3 "$(hm_sysfs "$dev" max_open_zones)"
assert_eq "queue/max_active_zones is published (not 0)" 5 "$(hm_sysfs "$dev" max_active_zones)"
assert_eq "queue/zone_write_granularity" 4096 "$(hm_sysfs "$dev" zone_write_granularity)"
assert_eq "queue/logical_block_size" 4096 "$(hm_sysfs "$dev" logical_block_size)"
assert_eq "queue/physical_block_size" 4096 "$(hm_sysfs "$dev" physical_block_size)"
assert_eq "queue/discard_max_bytes is 0 (no discard)" 0 "$(hm_sysfs "$dev" discard_max_bytes)"
assert_eq "queue/write_zeroes_max_bytes is 0" 0 "$(hm_sysfs "$dev" write_zeroes_max_bytes)"

# The zoned device under the table takes appends of up to its largest
# I/O (it splits the write to the backing device as that one needs).
zamb=$(hm_sysfs "$dev" zone_append_max_bytes)
bmax=$(( $(hm_sysfs "$dev" max_hw_sectors_kb) * 1024 ))
exp=$((CAP * 512))
[ "$bmax" -lt "$exp" ] && exp=$bmax
if [ "${zamb:-0}" -gt 0 ]; then ok "queue/zone_append_max_bytes > 0 ($zamb)"
else not_ok "queue/zone_append_max_bytes > 0" "got '$zamb'"; fi
assert_eq "zone_append_max_bytes = zone capacity bounded by the max I/O" \
	"$exp" "$zamb"

# ---- ioctls and sizes -------------------------------------------------
assert_eq "blockdev --getsz --getss --getpbsz: nr_zones * zone size, 4096, 4096" \
	"$LEN 4096 4096" "$(echo $(blockdev --getsz --getss --getpbsz "$dev"))"
if command -v perl > /dev/null; then
	# _IOR(0x12, 132, __u32) and _IOR(0x12, 133, __u32)
	ioc=$(perl -e 'open(my $f, "<", $ARGV[0]) or die "$!\n";
		my ($a, $b) = ("\0" x 4, "\0" x 4);
		ioctl($f, 0x80041284, $a) or die "BLKGETZONESZ: $!\n";
		ioctl($f, 0x80041285, $b) or die "BLKGETNRZONES: $!\n";
		print unpack("L", $a), " ", unpack("L", $b), "\n"' "$dev" 2>&1)
	assert_eq "BLKGETZONESZ BLKGETNRZONES" "$ZS $NZ" "$ioc"
else
	skip "BLKGETZONESZ/BLKGETNRZONES" "perl is not installed"
fi

# ---- zone report ------------------------------------------------------
rep=$(hm_report "$dev")
assert_eq "blkzone report lists every zone" $NZ "$(grep -c . <<< "$rep")"
want=$(for ((z = 0; z < NZ; z++)); do
	if [ $z -lt $CONV ]; then
		echo "$((z * ZS)) $ZS $ZS 0 nw CONVENTIONAL"
	else
		echo "$((z * ZS)) $ZS $CAP 0 em SEQ_WRITE_REQUIRED"
	fi
done)
if [ "$rep" = "$want" ]; then
	ok "report: conventional zones first (nw), then empty sequential zones with capacity $CAP"
else
	not_ok "report: zone starts, lengths, capacities, wps, conditions, types" \
		"expected:" "$want" "got:" "$rep"
fi

if command -v zbd > /dev/null; then
	# libzbd reads the limits and zones the way zoned applications do.
	zrep=$(zbd report -i "$dev" 2>&1)
	assert_eq "zbd: model, zones, open and active limits" \
		"host-managed|16 zones of 8.0 MB|3|5" \
		"$(sed -n 's/^ *Zone model: //p; s/^ *Zones: //p;
			s/^ *Maximum number of open zones: //p;
			s/^ *Maximum number of active zones: //p' <<< "$zrep" | paste -sd '|')"
	assert_eq "zbd: conventional zones" $CONV "$(grep -c '^Zone [0-9]*: cnv' <<< "$zrep")"
	assert_eq "zbd: empty sequential zones with capacity $((CAP * 512)) bytes" $((NZ - CONV)) \
		"$(grep -c "^Zone [0-9]*: swr, .*cap 0*$((CAP * 512)), .*, em," <<< "$zrep")"
else
	skip "zbd report" "zbd (libzbd tools) is not installed"
fi

# ---- table line -------------------------------------------------------
mm=$(hm_majmin "$back")
assert_eq "dmsetup table: the table line back, without format" \
	"0 $LEN smr $mm host-managed $ZS 8 conv_zones $CONV zone_capacity $CAP max_open 3 max_active 5" \
	"$(dmsetup table "$name")"

# ---- status line ------------------------------------------------------
st=($(dmsetup status "$name"))
assert_eq "status: 34 words (start len target mode + 30 fields: then 5 media faults, the power switch)" 34 "${#st[@]}"
assert_eq "status: mode, nr_zones, conv_zones, zones by condition" \
	"host-managed $NZ $CONV 0 0 0 0 0 0" "${st[*]:3:9}"
mem=${st[24]}
# 12 bytes a zone plus 64 KiB of buffers, at least.
if [ "${mem:-0}" -ge $((65536 + 12 * NZ)) ] && [ "$mem" -lt $((1 << 20)) ]; then
	ok "status: mem_bytes plausible ($mem)"
else
	not_ok "status: mem_bytes between 64 KiB + 12 B/zone and 1 MiB" "got '$mem'"
fi

# Counters move as documented: one 4 KiB write, one read, one flush.
check "clear_stats" dmsetup message "$name" 0 clear_stats
z=$((CONV * ZS))
hm_put f "$dev" $z 8 "write 4 KiB at the first sequential zone"
hm_read "$dev" $z 8 > /dev/null
hm_flush "$dev"
st=($(hm_stat "$dev" writes write_sectors imp_open reads commits))
assert_eq "status after a write: writes write_sectors imp_open" "1 8 1" "${st[*]:0:3}"
if [ "${st[3]:-0}" -ge 1 ]; then ok "status: reads counted (${st[3]})"
else not_ok "status: reads counted" "$(hm_stats "$dev")"; fi
if [ "${st[4]:-0}" -ge 1 ]; then ok "status: a flush made a commit (${st[4]})"
else not_ok "status: a flush made a commit" "$(hm_stats "$dev")"; fi
check "clear_stats again" dmsetup message "$name" 0 clear_stats
assert_eq "clear_stats zeroes the counters, keeps the zone counts" \
	"0 0 0 0 0 1" "$(hm_stat "$dev" writes write_sectors resets errors commits imp_open)"

# Counters start at zero when the table is loaded: look at a freshly
# loaded (still inactive) table, which no I/O can have reached yet.
check "remove" dm_remove "$name"
check "create with no table" dmsetup create "$name" --notable
echo "$name" >> "$T_WORK/.dm-devices"
check "load the table (no format: the device is loaded from disk)" \
	dmsetup load "$name" --table "$(hm_table $LEN "$back" $ZS conv_zones $CONV \
	zone_capacity $CAP max_open 3 max_active 5)"
st=($(dmsetup status --inactive "$name"))
assert_eq "inactive table status: counters start at zero" \
	"0 0 0 0 0 0 0 0 0 0 0 0" "${st[*]:12:12}"
check "resume" dmsetup resume "$name"
udevadm settle 2>/dev/null
assert_eq "re-created device keeps its written zone (cond wp)" "cl 8" "$(hm_cw "$dev" $z)"
hm_assert_read "re-created device keeps the data" "$dev" $z "$f"

# A fresh format: counters must start at zero there too.
back2=$(new_backing 80) || bail "no second backing device"
n2=t_${TID}_fresh
check "create --notable (fresh device)" dmsetup create "$n2" --notable
echo "$n2" >> "$T_WORK/.dm-devices"
check "load a table that formats" dmsetup load "$n2" \
	--table "$(hm_table $((4 * ZS)) "$back2" $ZS format)"
st=($(dmsetup status --inactive "$n2"))
assert_eq "freshly formatted table: counters start at zero" \
	"0 0 0 0 0 0 0 0 0 0 0 0" "${st[*]:12:12}"
diag "freshly formatted table status: ${st[*]}"
check "remove the fresh device" dm_remove "$n2"

# ---- limits: clamping and "no limit" --------------------------------
# 8 zones, 1 conventional: 7 sequential zones.
n3=t_${TID}_lim
d3=/dev/mapper/$n3
limits() {
	local opts=("$@")
	if ! hm_create "$n3" $((8 * ZS)) "$back2" $ZS format conv_zones 1 "${opts[@]}" 2>&1; then
		echo "create failed"
		return
	fi
	echo "$(hm_sysfs "$d3" max_open_zones) $(hm_sysfs "$d3" max_active_zones)"
	dm_remove "$n3" > /dev/null
}
assert_eq "max_open 7 of 7 sequential zones: no limit (0 0)" "0 0" "$(limits max_open 7)"
assert_eq "max_open 6: published (6 0)" "6 0" "$(limits max_open 6)"
assert_eq "max_active 2: max_open clamped to it (2 2)" "2 2" "$(limits max_active 2)"
assert_eq "max_open 4 max_active 2: max_open clamped (2 2)" "2 2" \
	"$(limits max_open 4 max_active 2)"
assert_eq "max_active 7 (no limit), max_open 3 (3 0)" "3 0" \
	"$(limits max_active 7 max_open 3)"
assert_eq "no limits (0 0)" "0 0" "$(limits)"

# ---- a 10 TiB device with 256 MiB zones (docs: "Memory") --------------
if [ "${SMR_BIG_SIZE:-0}" -ge $(( 10241 << 30 )) ]; then
	bigb=$(new_big_backing 10241) || bail "no big backing device"
	nbig=t_${TID}_big
	BZ=524288
	BNZ=40960
	if hm_create "$nbig" $((BNZ * BZ)) "$bigb" $BZ conv_zones 4 format; then
		ok "create a 10 TiB device with 256 MiB zones"
		assert_eq "10 TiB: nr_zones, chunk_sectors" "$BNZ $BZ" \
			"$(hm_sysfs "$nbig" nr_zones) $(hm_sysfs "$nbig" chunk_sectors)"
		assert_eq "10 TiB: the last zone" "$(( (BNZ - 1) * BZ )) $BZ $BZ 0 em SEQ_WRITE_REQUIRED" \
			"$(hm_report "/dev/mapper/$nbig" $(( (BNZ - 1) * BZ )) 1)"
		mem=$(hm_stat "$nbig" mem_bytes)
		# docs: 32 bytes a zone + 64 KiB of buffers, "about 1.3 MiB".
		if [ "${mem:-0}" -ge $((1300 << 10)) ] && [ "$mem" -le $((1400 << 10)) ]; then
			ok "10 TiB: mem_bytes about 1.3 MiB ($mem)"
		else
			not_ok "10 TiB: mem_bytes about 1.3 MiB" "got $mem"
		fi
		dm_remove "$nbig"
	else
		not_ok "create a 10 TiB device with 256 MiB zones" "$(dmesg | tail -n 3)"
	fi
else
	skip "10 TiB device" "the big scratch disk is only ${SMR_BIG_SIZE:-0} bytes"
fi

dmesg_check "no kernel warnings"
_show_result
