#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 1500
# ICOUNT: 0
# bench/clone-bench.sh - a drive cloned end to end: what a user who
# probes a disk with smrctl calibrate and emulates it from the profile
# relies on. Runs in the test VM under instruction counting (the guest's
# clock is its instructions, so the host's load moves no figure):
#   bench/run-clone          (boots the VM; or tests/vm-run bench/clone-bench.sh)
#
# For each of a host-managed and a drive-managed drive whose timing this
# script sets (the figures of test_cal_01: 5400 rpm, seeks 2/12/24 ms,
# 50 to 25 MB/s, 1.5 ms a command; 576 MiB over a RAM-backed null_blk):
#  1. the original is written whole and probed: smrctl calibrate --rpm
#     5400, with --write-probes for the drive-managed one (the rpm is
#     given: over a null_blk the device is not rotational);
#  2. a clone is made from the measured profile (smrctl create --profile)
#     over a second null_blk of the same size, and the original is made
#     again, fresh;
#  3. the same fio jobs run on both, the same random offsets on each:
#     4 KiB random writes at depth 1 (host-managed: in its conventional
#     zones; drive-managed: over the whole device, into its persistent
#     cache until it fills, then each waiting for a band's cleaning);
#     then each is written whole and read: 1 MiB sequential reads of 16
#     MiB at the start and at the end. Drive-managed, from the random
#     writes' latencies: the cache phase's rate, its length (the writes
#     before the first of three within 256 that took ten times the median
#     of the first 256: the probe's rule, which takes its median over
#     fewer) and the rate after it (the collapse).
# A job that gives no figure fails the run (not ok).
# Prints one table ("# bench:" lines): each figure on the original and the
# clone, their ratio, and "off" where they differ by more than 15 %, the
# agreement docs/timing.md asks of a clone. Passes or fails on errors only.
. "$(dirname "$0")/../tests/common.sh"
. "$SMR_ROOT/tests/lib/tm.sh"
_prep_test "a drive cloned from its measured profile"
require_cmd fio dmsetup python3 awk blockdev
require_target smr

SMRCTL=$SMR_ROOT/userspace/smrctl/smrctl
[ -x "$SMRCTL" ] || bail "userspace/smrctl/smrctl is not built"
say() { diag "bench: $*"; }

MB=576
S=$((MB * 2048))
K="rpm 5400 seek_t2t_us 2000 seek_avg_us 12000 seek_full_us 24000 od_mbps 50 id_mbps 25 overhead_us 1500"
KN=$(wc -w <<< "$K")
ZS=$((32 * 2048))	# host-managed: 32 MiB zones, 3 of them conventional
HM="0 $S smr BACKING host-managed $ZS 5 conv_zones 3 max_open 6 format timing $KN $K"
# drive-managed: 8 MiB bands, an 8 MiB cache at 700 per mille of the stroke
DM="0 $S smr BACKING drive-managed 16384 5 cache_sectors 16384 idle_ms 1000 format timing $((KN + 2)) $K cache_at 700"
RANDOM_WRITES_HM=200
RANDOM_WRITES_DM=$((2048 + 64))	# the cache's 4 KiB blocks, then the collapse

# Each backing holds the device, a drive-managed one's cache and its
# metadata (64 MiB more, as test_cal_01's), and takes 1 MiB commands:
# null_blk's default of 124 KiB (255 sectors, in 4 KiB blocks) becomes a
# drive-managed device's own limit, and each piece of a read pays the
# model's overhead (1 MiB reads of such a drive ran at 29 of its 50 MB/s).
nb_a=$(new_nullb $((MB + 64)) max_sectors=2048) || bail "no null_blk device"
nb_b=$(new_nullb $((MB + 64)) max_sectors=2048) || bail "no second null_blk device"
ROWS=$T_WORK/rows

MIB=1048576

# seq_read NAME OFFSET: MB/s of 1 MiB direct reads of 16 MiB from OFFSET.
seq_read() {
	fio --name=r --filename="/dev/mapper/$1" --rw=read --bs=1M --offset="$2" \
		--size=16M --direct=1 --ioengine=psync --output-format=terse \
		--terse-version=3 2>/dev/null |
		awk -F';' '$1 == 3 { printf "%.1f", $7 * 1024 / 1e6 }'
}

# rand_writes NAME SIZE COUNT LOG: COUNT 4 KiB random writes at depth 1
# within the first SIZE bytes, at offsets from a fixed seed; each one's
# latency in LOG (µs, one a line). Prints their IOPS.
rand_writes() {
	local lat=$T_WORK/lat.$1
	rm -f "$lat"_lat.*.log "$4"
	fio --name=w --filename="/dev/mapper/$1" --rw=randwrite --bs=4k --size="$2" \
		--number_ios="$3" --norandommap=1 --randseed=4242 --direct=1 \
		--ioengine=psync --write_lat_log="$lat" --log_avg_msec=0 \
		--output=/dev/null 2>/dev/null || return
	awk -F', *' '{ printf "%d\n", $2 / 1000 }' "$lat"_lat.1.log > "$4"
	awk '{ s += $1; n++ } END { if (s > 0) printf "%.1f", n * 1e6 / s }' "$4"
}

# collapse LOG: from a drive-managed drive's random-write latencies, "the
# cache phase's IOPS, its length in writes, the IOPS after it": the end
# of the phase is the first of three writes within 256 that took ten
# times the median of the first 256 (smr-calibrate's rule).
collapse() {
	python3 -S - "$1" <<'PY'
import sys
lat = [int(x) for x in open(sys.argv[1]) if x.strip()]
first = sorted(lat[:256])
med = first[len(first) // 2]
slow = [i for i, v in enumerate(lat) if v >= 10 * med]
end = len(lat)
for j in range(len(slow) - 2):
    if slow[j + 2] - slow[j] < 256:
        end = slow[j]
        break
phase, after = lat[:end], lat[end:]
iops = lambda xs: len(xs) * 1e6 / sum(xs) if xs and sum(xs) else 0
print("%.1f %d %.2f" % (iops(phase), end, iops(after)))
PY
}

# row MODEL FIGURE UNIT ORIGINAL CLONE: a line of the table ("|"
# between fields: read would merge tabs around an empty one). A figure
# a job did not give fails the run and shows as "-".
row() {
	local v
	for v in "$4" "$5"; do
		[ -n "$v" ] || not_ok "$1: $2 ($3)" "a job gave no figure"
	done
	printf '%s|%s|%s|%s|%s\n' "$1" "$2" "$3" "${4:--}" "${5:--}" >> "$ROWS"
}

# drive MODEL TABLE PROBE_ARGS...: probe the original, make the clone,
# run the jobs on both, add their rows.
drive() {
	local model=$1 table=$2 p=$T_WORK/$1.profile n sz
	local -A f=()	# FIGURE:DEVICE -> value
	shift 2
	# What the rest needs stops the benchmark when it fails (bail).
	check "$model: the original, with the timing set" dm_create orig "${table/BACKING/$nb_a}" ||
		bail "$model: cannot create the original"
	[ "$model" = host-managed ] && check "$model: write it whole" tm_fill orig
	check "$model: smrctl calibrate --rpm 5400 $*" "$SMRCTL" calibrate /dev/mapper/orig \
		--rpm 5400 "$@" --output "$p" --quiet || bail "$model: the probe failed"
	say "$model: the measured profile: $(grep -v '^#' "$p" | tr '\n' ' ')"
	echo clone >> "$T_WORK/.dm-devices"	# removed at exit, if made
	check "$model: the clone, from the measured profile" "$SMRCTL" create clone \
		--profile "$p" --dev "$nb_b" --size "${MB}M" --format ||
		bail "$model: cannot create the clone"
	say "$model: the clone's table: $(dmsetup table clone)"
	check "$model: the original again, fresh" dm_remove orig
	check "$model: ... made again" dm_create orig "${table/BACKING/$nb_a}" ||
		bail "$model: cannot create the original again"
	# The random writes over the size both have (the clone is as large
	# as its profile's layout allows).
	sz=$(blockdev --getsize64 /dev/mapper/orig)
	n=$(blockdev --getsize64 /dev/mapper/clone)
	[ "$n" -ge "$sz" ] || sz=$n
	for n in orig clone; do
		if [ "$model" = host-managed ]; then
			# The conventional zones take random writes.
			f[rw:$n]=$(rand_writes "$n" $((3 * ZS * 512)) $RANDOM_WRITES_HM "$T_WORK/$n.lat")
		else
			f[rw:$n]=$(rand_writes "$n" "$sz" $RANDOM_WRITES_DM "$T_WORK/$n.lat")
			read -r "f[phase:$n]" "f[len:$n]" "f[after:$n]" < <(collapse "$T_WORK/$n.lat")
		fi
		check "$model, $n: write it whole" tm_fill "$n"
		f[od:$n]=$(seq_read "$n" 0)
		f[id:$n]=$(seq_read "$n" $(( $(blockdev --getsize64 "/dev/mapper/$n") - 16 * MIB )))
	done
	if [ "$model" = host-managed ]; then
		row "$model" "random 4 KiB writes, depth 1 (conventional zones)" IOPS "${f[rw:orig]}" "${f[rw:clone]}"
	else
		row "$model" "random 4 KiB writes, depth 1 (all of them)" IOPS "${f[rw:orig]}" "${f[rw:clone]}"
		row "$model" "  the cache phase" IOPS "${f[phase:orig]}" "${f[phase:clone]}"
		row "$model" "  the cache phase's length" writes "${f[len:orig]}" "${f[len:clone]}"
		row "$model" "  after it (the collapse)" IOPS "${f[after:orig]}" "${f[after:clone]}"
	fi
	row "$model" "1 MiB sequential reads, start" MB/s "${f[od:orig]}" "${f[od:clone]}"
	row "$model" "1 MiB sequential reads, end" MB/s "${f[id:orig]}" "${f[id:clone]}"
	check "$model: remove the clone" dm_remove clone
	check "$model: remove the original" dm_remove orig
}

drive host-managed "$HM"
drive drive-managed "$DM" --write-probes

say "a drive and its clone (from smrctl calibrate's profile of it), $MB MiB over RAM-backed null_blk, instruction counting:"
say "$(printf '%-14s %-52s %-7s %10s %10s %6s' model figure unit original clone ratio)"
off=0
while IFS='|' read -r model fig unit a b; do
	r=$(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0) printf "%.3f", b / a; else print "-" }')
	mark=$(awk -v r="$r" 'BEGIN { if (r == "-" || r < 0.85 || r > 1.15) print "off" }')
	[ -z "$mark" ] || off=$((off + 1))
	say "$(printf '%-14s %-52s %-7s %10s %10s %6s %s' "$model" "$fig" "$unit" "$a" "$b" "$r" "$mark")"
done < "$ROWS"
say "$off of $(wc -l < "$ROWS") figures differ by more than 15 % between the drive and its clone"

dmesg_check
_show_result
