#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
# SLOW: 1
# ICOUNT: 0
# The timing model's read cache (docs/timing.md, read_segments and
# read_ahead_kib), over a RAM-backed null_blk, each read timed alone
# (O_DIRECT, one at a time) and the drive's work read from status
# (model_busy_ms):
#   - bad values are refused with the reason in the log, and the table
#     line prints the keys back;
#   - a block read again comes from the cache: in microseconds, with no
#     work for the actuator; without read_segments it is a seek again;
#   - the segments: with 4 of them the last 4 far blocks read are kept,
#     the least recently used goes (not the first filled), and 8 far
#     blocks read twice in turn miss every time;
#   - the look-ahead: after a pause, a block 512 KiB past one just read
#     comes from the cache with read_ahead_kib 1024 and costs a seek
#     without it or 2 MiB past it, and so does 1 MiB from 512 KiB past
#     it (a look-ahead that ended holds no more than it read);
#     a sequential stream of 4 KiB reads
#     costs the actuator one read, never runs faster than the media, and
#     runs faster than without the look-ahead (each read then waits for
#     its transfer after the reader's own time; skipped when the guest's
#     own time per read is longer than the media's, a debug kernel's);
#   - a write over a cached block drops it, and so does a suspend (its
#     look-ahead's times are stale after it);
#   - with queue_depth a read the cache holds is answered at once.
# Under instruction counting ("# ICOUNT: 0") the guest's clock counts its
# instructions: the host's load does not move a figure.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"
. "$(dirname "$0")/lib/tm.sh"
_prep_test "timing: the read cache"
require_cmd python3 dmsetup dd awk
require_target caveat

K=$TM_K
nb=$(new_nullb 300) || bail "no null_blk device"
S=$((256 * 2048))
CV="0 $S caveat $nb 0 0"
D=/dev/mapper/tm06
MIB=1048576

# ---------------------------------------------------------- bad input ---
refuse() { dm_refuse tm06x "$@"; }
refuse "read_segments above 32" "$CV timing 14 $K read_segments 33" "value out of range"
refuse "read_ahead_kib above 16 MiB" "$CV timing 16 $K read_segments 4 read_ahead_kib 16385" "value out of range"
refuse "read_ahead_kib without read_segments" "$CV timing 14 $K read_ahead_kib 1024" "give read_segments too"
refuse "read_ahead_kib with no segments" "$CV timing 16 $K read_segments 0 read_ahead_kib 64" "give read_segments too"

# A caveat device fails reads of blocks never written: write it whole
# without the model, then load each timing over the same data.
check "create a caveat device (DID 0: a plain disk) and format it" dm_create tm06 "$CV 1 format"
check "write it whole" tm_fill tm06

# load KEYS...: the same data under timing KEYS (with K).
load() {
	local words=$((12 + $#))
	dmsetup reload tm06 --table "$CV timing $words $K $*" &&
		dmsetup resume tm06 && udevadm settle 2> /dev/null
}

# rd OP...: one process, one O_DIRECT read at a time; prints a line per
# read, its time in us. OP is a byte offset to read 4 KiB at, "OFF:LEN"
# to read LEN bytes, "w:OFF" to write 4 KiB there, "s:SECONDS" to sleep.
# The device is opened for writing only when an OP writes. The model's
# busy time is cleared before the first OP (cv_busy reads it after).
rd() {
	python3 - "$D" tm06 "$@" <<'EOF'
import mmap, os, subprocess, sys, time
dev, name, ops = sys.argv[1], sys.argv[2], sys.argv[3:]
mode = os.O_RDWR if any(op.startswith("w:") for op in ops) else os.O_RDONLY
fd = os.open(dev, mode | os.O_DIRECT)
buf = mmap.mmap(-1, 1 << 20)
subprocess.run(["dmsetup", "message", name, "0", "clear_stats"], check=True)
for op in ops:
    if op.startswith("s:"):
        time.sleep(float(op[2:]))
        continue
    t = time.monotonic()
    if op.startswith("w:"):
        os.pwritev(fd, [memoryview(buf)[:4096]], int(op[2:]))
    else:
        off, _, n = op.partition(":")
        os.preadv(fd, [memoryview(buf)[:int(n or 4096)]], int(off))
    print("%.0f" % ((time.monotonic() - t) * 1e6))
EOF
}

# A hit is served in the command's time and the link's (7 us for 4 KiB
# at 600 MB/s) plus the guest's own (18-40 us on Debian's kernels, 0.6-1.6
# ms on a debug kernel); a miss after a seek takes a track-to-track seek
# and half a turn at least (5.2 ms at 7200 rpm).
HIT=3500 MISS=5000
# expect DESC US hit|miss
expect() {
	if [ "$3" = hit ] && [ "$2" -lt $HIT ]; then ok "$1: from the cache ($2 us)"
	elif [ "$3" = miss ] && [ "$2" -ge $MISS ]; then ok "$1: from the media ($2 us)"
	else not_ok "$1: expected a $3" "$2 us (a hit takes under $HIT us, a miss $MISS us or more)"; fi
}

# Eight far places, 32 MiB apart.
far=()
for i in 0 1 2 3 4 5 6 7; do far+=($(( (i * 32 + 3) * MIB ))); done

# ------------------------------------------------------------ re-reads ---
check "load with 4 segments, no look-ahead" load read_segments 4
t=$(dmsetup table tm06)
case $t in
*" timing 14 $K read_segments 4") ok "the table line prints read_segments back" ;;
*) not_ok "the table line prints read_segments back" "got: $t" ;;
esac
mapfile -t r < <(rd "${far[0]}" "${far[0]}" "${far[1]}" "${far[2]}" "${far[3]}" \
	"${far[0]}" "${far[1]}" "${far[2]}" "${far[3]}")
busy=$(cv_busy tm06)
diag "4 segments: ${r[*]}; busy $busy ms"
expect "a far block" "${r[0]}" miss
expect "the same block again" "${r[1]}" hit
expect "the first of 4 far blocks read again" "${r[5]}" hit
expect "the last of them again" "${r[8]}" hit
hit_us=${r[8]}	# the guest's own time for a read (below)
# Only the 4 misses' service, about 10 ms each here (9 reads from the
# media would be over 80 ms).
if [ "$busy" -gt 0 ] && [ "$busy" -le 50 ]; then
	ok "the actuator worked for the 4 misses only: $busy ms"
else
	not_ok "the actuator worked for the 4 misses only" "busy $busy ms"
fi
# The least recently used goes, not the first filled: far[0], read again
# last but three, stays when a fifth block comes; far[1] goes.
mapfile -t r < <(rd "${far[1]}" "${far[2]}" "${far[3]}" "${far[0]}" "${far[4]}" "${far[0]}" "${far[1]}")
diag "LRU: ${r[*]}"
expect "a fifth far block" "${r[4]}" miss
expect "the block read most recently of the four, after the fifth" "${r[5]}" hit
expect "the least recently read of the four, after the fifth" "${r[6]}" miss
mapfile -t r < <(rd "${far[@]}" "${far[@]}")
diag "8 far blocks twice over 4 segments: ${r[*]}"
misses=0
for i in 8 9 10 11 12 13 14 15; do [ "${r[$i]}" -ge $MISS ] && misses=$((misses + 1)); done
assert_eq "8 far blocks read again in turn over 4 segments: every one a miss" 8 "$misses"

check "load without a read cache" load
mapfile -t r < <(rd "${far[4]}" "${far[4]}")
expect "no read cache: a far block" "${r[0]}" miss
# The same block again: the head is past it, a seek back and half a turn.
expect "no read cache: the same block again" "${r[1]}" miss

# ---------------------------------------------------------- look-ahead ---
check "load with 4 segments and 1 MiB of look-ahead" load read_segments 4 read_ahead_kib 1024
case $(dmsetup table tm06) in
*" timing 16 $K read_segments 4 read_ahead_kib 1024") ok "the table line prints read_ahead_kib back" ;;
*) not_ok "the table line prints read_ahead_kib back" "got: $(dmsetup table tm06)" ;;
esac
# 1 MiB is 24 ms at the rate there at most: a pause of 100 ms lets the
# look-ahead end.
x=${far[5]}
mapfile -t r < <(rd "$x" s:0.1 $((x + 512 * 1024)) "${far[6]}" s:0.1 $((far[6] + 2 * MIB)) \
	"${far[4]}" s:0.1 "$((far[4] + 512 * 1024)):$MIB")
diag "look-ahead: ${r[*]}"
expect "512 KiB past a block read, after a pause" "${r[1]}" hit
expect "2 MiB past a block read, after a pause (past the look-ahead)" "${r[3]}" miss
# A look-ahead that ended holds what it read, no more: 1 MiB from 512
# KiB past a block read, after a pause, runs past it and comes from the
# media (it was a hit at the interface's speed, 1.7 ms, when the
# look-ahead counted as running for ever).
expect "1 MiB from 512 KiB past a block read, after a pause (past the look-ahead's end)" "${r[5]}" miss

# stream: 4 MiB in 4 KiB reads from far[7]; sets us (their time) and busy.
stream() {
	local n=1024 i ops=() r
	for ((i = 0; i < n; i++)); do ops+=($(( far[7] + i * 4096 ))); done
	mapfile -t r < <(rd "${ops[@]}")
	busy=$(cv_busy tm06)
	us=$(printf '%s\n' "${r[@]}" | awk '{ s += $1 } END { print s }')
}
# The media rate there (the model's, without overhead: K has none).
mbps=$($TM seq $S $MIB $((far[7] / 512)) $K)
media_us=$(awk -v r="$mbps" 'BEGIN { printf "%.0f", 4 * 1048576 / r }')
# With the look-ahead the first read is from the media and the rest from
# the look-ahead, which goes on while the reader is between reads.
stream
ahead_us=$us
diag "4 MiB in 4 KiB reads with the look-ahead: $us us, busy $busy ms; at the media's $mbps MB/s: $media_us us"
if [ "$busy" -le 30 ]; then
	ok "a sequential stream costs the actuator one read: $busy ms busy for 4 MiB"
else
	not_ok "a sequential stream costs the actuator one read" "busy $busy ms for 4 MiB"
fi
if [ "$us" -ge $((media_us * 98 / 100)) ]; then
	ok "the stream is no faster than the media: $us us, $media_us us at $mbps MB/s"
else
	not_ok "the stream is no faster than the media" "$us us, the media takes $media_us us"
fi

check "load with 4 segments and no look-ahead" load read_segments 4
mapfile -t r < <(rd "$x" s:0.1 $((x + 512 * 1024)))
expect "no look-ahead: 512 KiB past a block read, after a pause" "${r[1]}" miss
# Without it each read waits for its own transfer, after the reader's
# own time between reads: slower than the stream the look-ahead fed, by
# up to a transfer a read. That shows only when the guest's own time for
# a read (a hit's, above) is shorter than the media's time for it: past
# that the model's end has passed when the backing completes, with or
# without the look-ahead (a debug kernel: 0.6 ms a read, 0.12 ms at the
# media rate; 2026-12-01 both streams took 911 ms there).
stream
diag "4 MiB in 4 KiB reads without the look-ahead: $us us, busy $busy ms"
if [ "$busy" -ge $((media_us * 95 / 100000)) ]; then
	ok "without the look-ahead the actuator reads it all: $busy ms"
else
	not_ok "without the look-ahead the actuator reads it all" "busy $busy ms, the media takes $((media_us / 1000)) ms"
fi
per_read=$((media_us / 1024))
if [ "$hit_us" -ge "$per_read" ]; then
	skip "without the look-ahead the stream is slower" \
		"the guest's own time for a read ($hit_us us, a hit's) is longer than its transfer at the media rate ($per_read us): the model's time is hidden either way ($us us against $ahead_us us)"
elif [ "$us" -gt "$ahead_us" ]; then
	ok "without the look-ahead the stream is slower: $us us against $ahead_us us"
else
	not_ok "without the look-ahead the stream is slower" "$us us against $ahead_us us with it"
fi

# ------------------------------------------------ what drops a segment ---
check "load with 4 segments" load read_segments 4
mapfile -t r < <(rd "${far[2]}" "w:${far[2]}" "${far[2]}" "${far[3]}")
expect "a block written over after it was read" "${r[2]}" miss
mapfile -t r < <(rd "${far[3]}")
expect "a block read before" "${r[0]}" hit
check "suspend and resume it" bash -c "dmsetup suspend tm06 && dmsetup resume tm06"
mapfile -t r < <(rd "${far[3]}")
expect "the same block after a suspend" "${r[0]}" miss

# ---------------------------------------------------------- queueing ---
check "load with queue_depth 32 and 4 segments" load queue_depth 32 read_segments 4
mapfile -t r < <(rd "${far[1]}" "${far[1]}")
expect "queued: a far block" "${r[0]}" miss
expect "queued: the same block again" "${r[1]}" hit

check "remove it" dm_remove tm06
dmesg_check
_show_result
