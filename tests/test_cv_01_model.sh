#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
# The damage rule, exactly: a userspace reference model fed the same seeded
# random writes (sizes around and across DNOR and DID, at the unshingled
# boundary, at the device end) predicts the kernel's dump, its counters,
# and the success or failure (and data) of reads.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: the damage rule matches the userspace model"
require_cmd python3 dmsetup dd
require_target caveat

SEED=${CV_SEED:-20261122}
diag "seed $SEED (set CV_SEED to replay)"
check "model self test" python3 "$CV_MODEL" selftest

# 1: the thesis's parameters (DNOR 6, DID 16 blocks of 4 KiB), an
# unshingled region, error mode. 8192 blocks = 32 MiB.
backing=$(new_backing 64) || bail "no backing device"
dm_create cv01a "0 $((8192 * 8)) caveat $backing 16 6 2 unshingled 256" ||
	bail "cannot create the caveat device"
assert_eq "modsense" "capacity 8192 block_size 4096 did 16 dnor 6 unshingled 256" \
	"$(cv_msg cv01a modsense)"
assert_eq "a new device is all maybe damaged" "0+8192" "$(cv_msg cv01a dump)"
check_fail "a read of a new device fails" \
	dd if=/dev/mapper/cv01a of=/dev/null bs=4096 count=1 iflag=direct status=none
cv_py random --dev /dev/mapper/cv01a --dm cv01a --blocks 8192 --did 16 \
	--dnor 6 --unshingled 256 --seed "$SEED" --writes 300

# 2: on_damaged_read zero, no unshingled region, DNOR 0.
backing=$(new_backing 32) || bail "no backing device"
dm_create cv01b "0 $((4096 * 8)) caveat $backing 8 0 2 on_damaged_read zero" ||
	bail "cannot create the zero-mode device"
cv_py random --dev /dev/mapper/cv01b --dm cv01b --blocks 4096 --did 8 \
	--dnor 0 --seed $((SEED + 1)) --writes 150 --zero

# 3: DNOR = DID (a one-block write damages nothing), a large unshingled
# region reaching close to the end.
backing=$(new_backing 32) || bail "no backing device"
dm_create cv01c "0 $((2048 * 8)) caveat $backing 5 5 2 unshingled 1900" ||
	bail "cannot create the DNOR = DID device"
cv_py random --dev /dev/mapper/cv01c --dm cv01c --blocks 2048 --did 5 \
	--dnor 5 --unshingled 1900 --seed $((SEED + 2)) --writes 100

# 4: DID 0, where a write inside a chunk all valid goes on without the
# lock (cv_write_plain()): it lands where dm-linear would put it, and
# is counted, and clear_stats clears those counts too. 8192 blocks are
# one chunk, full once every block is written.
backing=$(new_backing 40) || bail "no backing device"
dm_create cv01d "0 $((8192 * 8)) caveat $backing 0 0 1 format" || bail "cannot create the DID 0 device"
st() { dmsetup status cv01d | awk -v f="$1" '{ print $(f + 3) }'; }
check "DID 0: the first fill (the locked way: the chunk is not yet all valid)" \
	dd if=/dev/zero of=/dev/mapper/cv01d bs=1M count=32 oflag=direct status=none
assert_eq "DID 0: every block valid after the fill" 8192 "$(st 7)"
assert_eq "DID 0: the fill's writes counted" 32 "$(st 1)"
check "DID 0: clear_stats" cv_msg cv01d clear_stats
assert_eq "DID 0: no writes after clear_stats" 0 "$(st 1)"
pat=$T_WORK/cv01d.pat
head -c $((4096 * 8)) /dev/urandom > "$pat"
blocks=(0 17 4095 4096 8191 1234 777 5000)
for n in "${!blocks[@]}"; do
	dd if="$pat" of=/dev/mapper/cv01d bs=4096 skip="$n" seek="${blocks[n]}" count=1 \
		oflag=direct conv=notrunc status=none || not_ok "DID 0: write of block ${blocks[n]}"
done
assert_eq "DID 0: the 8 writes inside the full chunk counted" 8 "$(st 1)"
assert_eq "DID 0: they damaged nothing" "0 0 0" "$(st 2) $(st 4) $(st 6)"
off=$(dd if="$backing" bs=4096 count=1 iflag=direct status=none | od -An -t u8 -j56 -N8 | tr -d ' ')
assert_eq "DID 0: the device reads as dm-linear over its data would" \
	"$(dd if="$backing" bs=1M skip=$((off * 512)) count=32 iflag=direct,skip_bytes status=none | md5sum)" \
	"$(dd if=/dev/mapper/cv01d bs=1M iflag=direct status=none | md5sum)"
for n in "${!blocks[@]}"; do
	assert_eq "DID 0: block ${blocks[n]} holds its write" \
		"$(dd if="$pat" bs=4096 skip="$n" count=1 status=none | md5sum)" \
		"$(dd if=/dev/mapper/cv01d bs=4096 skip="${blocks[n]}" count=1 iflag=direct status=none | md5sum)"
done
dm_remove cv01d

dmesg_check
_show_result
