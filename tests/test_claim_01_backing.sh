#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
# SMOKE: 1
#
# One emulated drive per backing device, in every model (issue 27):
#  - a table reloaded with "format" over a live device is refused, and the
#    live device keeps its data (before: the reload formatted under the
#    live table; resuming it failed with EUCLEAN, dropping it left the
#    live device on a superblock that no longer matched its metadata);
#  - a reload without "format" is still allowed and keeps the data;
#  - a second device over the same backing device is refused, naming the
#    first in the kernel log; once the first is removed it is allowed;
#  - two targets of one table over one backing device are refused (two
#    host-managed targets mapped the same zones);
#  - an smr drive and a caveat drive over one backing device are refused
#    either way round (one claim registry, in the library module
#    smr-common; each module kept its own before, and both were taken);
#  - smrctl create refuses a backing device another dm device maps (the
#    kernel does not: dm claims with one holder for all its devices).
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/dm.sh"
. "$SMR_ROOT/tests/lib/hm.sh"
_prep_test "backing device claims: format over a live drive, two drives on one disk"
require_cmd dmsetup dd cmp
require_target smr
require_target caveat

# load_refused DESC NAME TABLE LOG: "dmsetup load" of TABLE into the live
# device NAME fails, the kernel log says LOG, and no inactive table is left.
load_refused() {
	local desc=$1 name=$2 table=$3 want=$4 mark="claim-$RANDOM$RANDOM"
	echo "$mark" > /dev/kmsg
	if dmsetup load "$name" --table "$table" > /dev/null 2>&1; then
		not_ok "refused: $desc" "the reload was accepted: $table"
		dmsetup clear "$name" > /dev/null 2>&1
		return
	fi
	if dmesg_since "$mark" | grep -qF -- "$want"; then
		ok "refused: $desc"
	else
		not_ok "refused: $desc (log: $want)" "$(dmesg_since "$mark" | tail -3)"
	fi
	assert_eq "$desc: no inactive table left" "" "$(dmsetup table --inactive "$name")"
}

# reload NAME TABLE: suspend, load TABLE, resume (a reload that must work).
reload() {
	dmsetup suspend "$1" && dmsetup load "$1" --table "$2" && dmsetup resume "$1"
}

# cached_writes DEV: random 4 KiB writes away from band starts (held in the
# drive-managed cache); prints the files, one "offset file" a line.
cached_writes() {
	local off f
	for off in 12288 1056768 2105344 5251072; do
		f=$(write_data "$1" "$off" 4096) || return 1
		echo "$off $f"
	done
}

# check_writes DESC DEV LIST: every write of LIST reads back.
check_writes() {
	local off f bad=0
	while read -r off f; do
		read_data "$2" "$off" 4096 | cmp -s - "$f" || bad=$((bad + 1))
	done <<< "$3"
	assert_eq "$1" 0 "$bad"
}

# ------------------------------------------------------ drive-managed ---
BAND=8192	# 4 MiB
LEN=$((BAND * 4))
CACHE=4096
read -r _ NEED <<< "$(dms_need $LEN $BAND $CACHE)"
MB=$(( (NEED + 2047) / 2048 + 1 ))
back=$(new_backing $MB) || bail "no backing device"
DM=t_claim_dm
# idle_ms 0: no background cleaning, so the writes stay in the cache
# however slow the kernel (a debug build took over a second between the
# writes and the status read, and idle cleaning had emptied it).
TBL=$(dms_table $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0)
check "dm: create with format" dm_create $DM "$(dms_table $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0 format)"
writes=$(cached_writes /dev/mapper/$DM) || bail "writes to $DM failed"
used=$(dms_stat $DM cache_used)
assert_ne "dm: the writes are held in the cache" 0 "$used"

load_refused "dm: reload with format over the live device" $DM \
	"$(dms_table $LEN "$back" $BAND cache_sectors $CACHE idle_ms 0 format)" "Cannot format: a live table"
check_writes "dm: cached data intact after the refused reload" /dev/mapper/$DM "$writes"
check "dm: reload without format" reload $DM "$TBL"
check_writes "dm: cached data intact after a reload" /dev/mapper/$DM "$writes"
dm_refuse t_claim_dm2 "dm: a second device on the same backing device" "$TBL" \
	"is in use by device $DM"
check "dm: remove the first device" dm_remove $DM
check "dm: the second device is allowed once the first is gone" dm_create t_claim_dm2 "$TBL"
check_writes "dm: the data is the second device's" /dev/mapper/t_claim_dm2 "$writes"
check "dm: remove it" dm_remove t_claim_dm2
dm_refuse t_claim_dm3 "dm: two targets of one table on one backing device" \
	"$(printf '0 %d smr %s drive-managed %d 2 cache_sectors %d\n%d %d smr %s drive-managed %d 2 cache_sectors %d' \
		$LEN "$back" $BAND $CACHE $LEN $LEN "$back" $BAND $CACHE)" \
	"Two targets of one table cannot share a backing device"

# ------------------------------------------------------------- caveat ---
CLEN=$((8192 * 2))	# 8 MiB
cback=$(new_backing 16) || bail "no backing device"
CV=t_claim_cv
CTBL="0 $CLEN caveat $cback 16 4"
check "cv: create with format" dm_create $CV "$CTBL 1 format"
f=$(write_data /dev/mapper/$CV 1048576 65536) || bail "write to $CV failed"
load_refused "cv: reload with format over the live device" $CV "$CTBL 1 format" \
	"Cannot format: a live table"
assert_data "cv: data intact after the refused reload" /dev/mapper/$CV "$f" 1048576
check "cv: reload without format" reload $CV "$CTBL"
assert_data "cv: data intact after a reload" /dev/mapper/$CV "$f" 1048576
dm_refuse t_claim_cv2 "cv: a second device on the same backing device" "$CTBL" \
	"is in use by device $CV"
check "cv: remove the first device" dm_remove $CV
check "cv: the second device is allowed once the first is gone" dm_create t_claim_cv2 "$CTBL"
assert_data "cv: the data is the second device's" /dev/mapper/t_claim_cv2 "$f" 1048576
check "cv: remove it" dm_remove t_claim_cv2
dm_refuse t_claim_cv3 "cv: two targets of one table on one backing device" \
	"$(printf '0 %d caveat %s 16 4\n%d %d caveat %s 16 4' $CLEN "$cback" $CLEN $CLEN "$cback")" \
	"Two targets of one table cannot share a backing device"

# ------------------------------------------------------- host-managed ---
ZS=8192		# 4 MiB zones
HLEN=$((ZS * 4))
hback=$(new_backing 24) || bail "no backing device"
HM=t_claim_hm
HTBL=$(hm_table $HLEN "$hback" $ZS)
check "hm: create with format" dm_create $HM "$(hm_table $HLEN "$hback" $ZS format)"
f=$(write_data /dev/mapper/$HM $((ZS * 512)) 65536) || bail "write to $HM failed"
load_refused "hm: reload with format over the live device" $HM \
	"$(hm_table $HLEN "$hback" $ZS format)" "Cannot format: a live table"
check "hm: reload without format" reload $HM "$HTBL"
assert_data "hm: data intact after a reload" /dev/mapper/$HM "$f" $((ZS * 512))
dm_refuse t_claim_hm2 "hm: a second device on the same backing device" "$HTBL" \
	"is in use by device $HM"
check "hm: remove the first device" dm_remove $HM
check "hm: the second device is allowed once the first is gone" dm_create t_claim_hm2 "$HTBL"
assert_data "hm: the data is the second device's" /dev/mapper/t_claim_hm2 "$f" $((ZS * 512))
check "hm: remove it" dm_remove t_claim_hm2
dm_refuse t_claim_hm3 "hm: two targets of one table on one backing device" \
	"$(printf '0 %d smr %s host-managed %d\n%d %d smr %s host-managed %d' \
		$HLEN "$hback" $ZS $HLEN $HLEN "$hback" $ZS)" \
	"Two targets of one table cannot share a backing device"

# ---------------------------------------- smr and caveat on one disk ---
# The claim registry is the library's (common/smr-claim.c in smr-common),
# one for both targets.
check "smr then caveat: a host-managed drive" dm_create t_claim_x1 "$(hm_table $HLEN "$hback" $ZS format)"
dm_refuse t_claim_x2 "smr then caveat: a caveat drive on its backing device" \
	"0 $CLEN caveat $hback 16 4 1 format" "is in use by device t_claim_x1"
check "smr then caveat: remove the smr drive" dm_remove t_claim_x1
check "caveat then smr: a caveat drive" dm_create t_claim_x3 "$CTBL 1 format"
dm_refuse t_claim_x4 "caveat then smr: a host-managed drive on its backing device" \
	"$(hm_table $((ZS * 2)) "$cback" $ZS format)" "is in use by device t_claim_x3"
check "caveat then smr: remove the caveat drive" dm_remove t_claim_x3

# ------------------------------------------------ smrctl: a disk in use ---
# dm lets a dm device map what another dm device maps (one holder for all
# of dm): the kernel takes the table without a word. smrctl looks at the
# backing device's holders first, and refuses it, naming them.
SMRCTL=$SMR_ROOT/userspace/smrctl/smrctl
if [ -x "$SMRCTL" ]; then
	uback=$(new_backing 40) || bail "no backing device"
	ub=$(readlink -f "$uback")
	check "a dm-linear (an LV, say) over a disk" dm_create t_claim_lv "0 8192 linear $ub 0"
	f=$(write_data /dev/mapper/t_claim_lv 0 65536) || bail "write to t_claim_lv failed"
	out=$("$SMRCTL" create t_claim_u --model caveat --did 16 --dnor 4 --dev "$ub" --format 2>&1)
	rc=$?
	assert_eq "smrctl create over it is refused" 1 "$rc"
	case $out in
	*"is in use: dm-"*"(t_claim_lv) on "*"--force"*) ok "  naming what holds it, and --force" ;;
	*) not_ok "  naming what holds it, and --force" "$out" ;;
	esac
	assert_eq "  no device was made" "" "$(dmsetup info -c --noheadings -o name t_claim_u 2> /dev/null)"
	assert_data "  the LV's data is intact" /dev/mapper/t_claim_lv "$f" 0
	check "remove the LV" dm_remove t_claim_lv
	check "smrctl create is allowed once nothing holds the disk" \
		"$SMRCTL" create t_claim_u --model caveat --did 16 --dnor 4 --dev "$ub" --format
	echo t_claim_u >> "$T_WORK/.dm-devices"
	check "remove it" "$SMRCTL" remove t_claim_u
else
	skip "smrctl: a disk in use" "userspace/smrctl/smrctl is not built"
fi

dmesg_check
_show_result
