#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 900
#
# Media faults on drive-managed dm-smr (docs/dm-smr.rst, "Media faults"):
# the shared checks (tests/lib/faults.sh); then clean_timeout_ms: with the
# cache full, a write that waits for foreground cleaning longer than the
# limit fails with an I/O error and is counted (clean_timeouts), while
# with the limit off (0, the default) the same writes wait and succeed;
# the option prints back in the table line, the message sets it, and bad
# values are refused.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"
. "$SMR_ROOT/tests/lib/faults.sh"
_prep_test "dm: media faults, cleaning timeout"
dms_prep
FL_MODEL=dm

LEN=$((160 * 2048))
BAND=2048
CACHE=2048
read -r _ NEED <<< "$(dms_need $LEN $BAND $CACHE)"
BACK_MB=$(( (NEED + 2047) / 2048 ))

back=$(new_backing $BACK_MB) || bail "no backing device"
N=t_${TID}_a
D=/dev/mapper/$N
dms_create $N $LEN "$back" $BAND cache_sectors $CACHE || bail "cannot create the device"
fl_suite $D 1024
check "remove" dm_remove $N

# --- a delayed read across the cache's edge --------------------------------
# The last band: 8 KiB written in place at its start (a stream from the
# band's start bypasses the cache), then 4 KiB over its second block (not
# the stream's next block: into the cache). A delayed 8 KiB read of both
# is split where band and cache meet; the split is dm's
# (dm_accept_partial_bio()), legal in map() only. Made from the delay
# worker it wrote into a dead stack frame and ended the read after its
# first block. Both blocks must come back, and dm must account one 8 KiB
# read: 16 sectors, nothing left in flight. No idle cleaning, which would
# fold the cached block into its band before the read.
dms_create $N $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0 format ||
	bail "cannot create the device again"
lb=$(( (LEN / BAND - 1) * BAND / 8 ))
e=$T_WORK/edge
head -c 8192 /dev/urandom > "$e.band"
head -c 4096 /dev/urandom > "$e.cache"
w0=$(dms_stat $D bypass_write_sectors)
check "8 KiB in place at the last band's start" fl_write $D $lb "$e.band"
assert_eq "  it bypassed the cache" 16 $(( $(dms_stat $D bypass_write_sectors) - w0 ))
c0=$(dms_stat $D cache_write_sectors)
check "4 KiB over its second block" fl_write $D $((lb + 1)) "$e.cache"
assert_eq "  it went to the cache" 8 $(( $(dms_stat $D cache_write_sectors) - c0 ))
udevadm settle 2>/dev/null
check "delay reads of the two blocks 200 ms" fl_msg $D delay $((lb * 8)) 16 200 read
# Who calls dm_accept_partial_bio(): a kprobe in a trace instance of the
# test's own. The wrong frame's write can be silent (on 6.1 the read came
# back whole before the fix); the caller cannot.
TR=/sys/kernel/tracing
[ -e $TR/kprobe_events ] || mount -t tracefs nodev $TR 2> /dev/null
KP=smr_t${TID}_accept
TI=$TR/instances/smr-t$TID
if echo "p:$KP dm_accept_partial_bio" >> $TR/kprobe_events 2> /dev/null &&
	mkdir $TI 2> /dev/null && echo 1 > $TI/events/kprobes/$KP/enable; then
	kp=1
else
	kp=0
fi
dmn=$(basename "$(readlink -f $D)")
read -r _ _ rs0 _ < /sys/block/$dmn/stat
got=$(fl_read $D $lb 2 | cmp - <(head -c 4096 "$e.band"; cat "$e.cache") 2>&1) &&
	ok "a delayed 8 KiB read returns the band's block and the cache's" ||
	not_ok "a delayed 8 KiB read returns the band's block and the cache's" "$got"
read -r _ _ rs1 _ < /sys/block/$dmn/stat
assert_eq "  dm accounts 16 sectors read" 16 $((rs1 - rs0))
assert_eq "  nothing is left in flight" "0 0" "$(awk '{ print $1, $2 }' /sys/block/$dmn/inflight)"
assert_eq "  the fault held both parts (dm sends the rest as a bio of its own)" 2 \
	"$(fl_stat $D delayed_ios)"
if [ $kp = 1 ]; then
	echo 0 > $TI/events/kprobes/$KP/enable
	# "<task>-<pid> [cpu] ...: smr_t..._accept: ..."; the task before the pid.
	cat $TI/trace > "$T_WORK/accept.trace"
	who=$(sed -n "s/^ *\(.*\)-[0-9]\{1,\} *\[[0-9]\{1,\}\].* $KP:.*/\1/p" "$T_WORK/accept.trace" |
		sort -u | tr '\n' ' ')
	rmdir $TI
	echo "-:$KP" >> $TR/kprobe_events
	assert_eq "  it was split in map(), by the task that read (dm_accept_partial_bio's callers)" \
		"dd " "$who"
	[ "$who" = "dd " ] || diag "$(tail -n 5 "$T_WORK/accept.trace")"
else
	skip "  it was split in map()" "no kprobe on dm_accept_partial_bio here"
fi
check "delay off" fl_msg $D delay off
check "remove" dm_remove $N

# --- clean_timeout_ms ----------------------------------------------------
# 1 MiB bands, a 1 MiB cache (256 slots), nothing bypasses it, no
# background cleaning: 4 KiB writes past the 256th wait for a band
# read-modify-write, far longer than 1 ms. One dd writes 320 blocks, one
# O_DIRECT write each, over two bands.
back2=$(new_backing $BACK_MB) || bail "no backing device"
M=t_${TID}_b
DM=/dev/mapper/$M
dms_create $M $LEN "$back2" $BAND cache_sectors $CACHE idle_ms 0 seq_bypass off \
	clean_timeout_ms 1 format || bail "cannot create the device with clean_timeout_ms"
case $(dmsetup table $M) in
*" clean_timeout_ms 1") ok "the table line prints clean_timeout_ms back" ;;
*) not_ok "the table line prints clean_timeout_ms back" "$(dmsetup table $M)" ;;
esac
f=$T_WORK/burst
head -c $((320 * 4096)) /dev/urandom > "$f"
burst() { dd if="$f" of=$DM bs=4k count=320 oflag=direct conv=notrunc status=none 2>&1; }
out=$(burst)
assert_eq "with the cache full, a write fails with an I/O error" "$FL_EIO" "${out##*: }"
dms_expect "counted: clean_timeouts, errors" $DM "clean_timeouts >= 1" "errors >= 1"
check "clean_timeout 0: off" fl_msg $DM clean_timeout 0
case $(dmsetup table $M) in
*" clean_timeout_ms 0") ok "the message shows in the table line" ;;
*) not_ok "the message shows in the table line" "$(dmsetup table $M)" ;;
esac
t0=$(dms_stat $DM clean_timeouts)
out=$(burst) && ok "with it off, the same writes wait and succeed" ||
	not_ok "with it off, the same writes wait and succeed" "$out"
dms_expect "they waited for foreground cleaning" $DM "rmw_fg >= 1" "clean_timeouts == $t0"
got=$(fl_read $DM 0 1 | cmp - <(dd if="$f" bs=4k count=1 status=none) 2>&1) &&
	ok "the first block reads back" || not_ok "the first block reads back" "$got"
fl_refuse $DM "clean_timeout junk" "clean_timeout must be" clean_timeout 5ms
fl_refuse $DM "clean_timeout over an hour" "clean_timeout must be" clean_timeout 3600001
check "remove" dm_remove $M
dm_refuse "$M" "clean_timeout_ms over an hour" \
	"$(dms_table $LEN "$back2" $BAND cache_sectors $CACHE clean_timeout_ms 3600001)" \
	"clean_timeout_ms must be a number"

dmesg_check
_show_result
