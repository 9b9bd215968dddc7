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
