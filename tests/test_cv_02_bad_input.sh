#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
# SLOW: 1
# (Parsing, no kernel interface in between: make check runs it on the
# first kernel only, as test_dm_03_bad_input.)
# Bad table arguments, bad messages and I/O past the end or off the block
# size are refused with a clear error and no kernel warning.
. "$(dirname "$0")/common.sh"
. "$SMR_ROOT/tests/lib/cv.sh"
_prep_test "caveat: bad input is refused with clear errors"
require_cmd dmsetup dd
require_target caveat

backing=$(new_backing 64) || bail "no backing device"
LEN=$((8192 * 8))	# 32 MiB

# refused DESC EXPECTED_LOG_TEXT TABLE: creating the device fails and the
# kernel log says why (ti->error).
n=0
refused() {
	local desc=$1 want=$2 table=$3 name log mark
	n=$((n + 1)); name=cv02bad$n
	mark=$(kmsg_mark cv02)
	if echo "$table" | dmsetup create "$name" >/dev/null 2>&1; then
		echo "$name" >> "$T_WORK/.dm-devices"
		not_ok "refused: $desc" "table accepted: $table"
		dmsetup remove "$name" >/dev/null 2>&1
		return
	fi
	# The target's own lines and the library's (smr-common) both count.
	log=$(dmesg_since "$mark" | tail -n 4)
	if grep -qF -- "$want" <<< "$log"; then
		ok "refused: $desc"
	else
		not_ok "refused: $desc" "table: $table" "expected log text: $want" "log: $log"
	fi
}

refused "too few arguments" "Usage: <dev> <did> <dnor>" "0 $LEN caveat $backing 16"
refused "no such device" "Cannot open the backing device" "0 $LEN caveat /dev/nonexistent 16 6"
refused "DID with trailing junk" "Invalid DID" "0 $LEN caveat $backing 16x 6"
refused "negative DID" "Invalid DID" "0 $LEN caveat $backing -1 0"
refused "DNOR not a number" "Invalid DNOR" "0 $LEN caveat $backing 16 six"
refused "DNOR > DID" "DNOR must not exceed DID" "0 $LEN caveat $backing 6 16"
refused "huge DID" "DID too large" "0 $LEN caveat $backing 99999999999 0"
# 2^42 + 2^15 blocks of 512 bytes: the chunk array would pass INT_MAX
# bytes, where kvmalloc() warns (a panic with panic_on_warn); refused
# before it is allocated (the harness fails the test on the warning).
refused "capacity past the damage map's limit" "Device too large for the damage map" \
	"0 $(( (1 << 42) + (1 << 15) )) caveat $backing 16 6 2 block_size 512"
refused "optional count larger than the arguments" "Invalid number of optional arguments" \
	"0 $LEN caveat $backing 16 6 3 block_size 4096"
# The options take at most 10 words (four with a value, two flags).
refused "optional count too large" "Invalid number of optional arguments" \
	"0 $LEN caveat $backing 16 6 11 $(printf 'format %.0s' {1..11})"
refused "optional count junk" "Invalid number of optional arguments" \
	"0 $LEN caveat $backing 16 6 x format"
refused "extra argument after the options" "Too many arguments" \
	"0 $LEN caveat $backing 16 6 1 format extra"
refused "block_size not a power of two" "block_size must be a power of two" \
	"0 $LEN caveat $backing 16 6 2 block_size 3000"
refused "block_size too small" "block_size must be a power of two" \
	"0 $LEN caveat $backing 16 6 2 block_size 256"
refused "block_size too large" "block_size must be a power of two" \
	"0 $LEN caveat $backing 16 6 2 block_size 131072"
refused "block_size with a unit" "block_size must be a power of two" \
	"0 $LEN caveat $backing 16 6 2 block_size 4k"
refused "block_size without its value" "missing its value" \
	"0 $LEN caveat $backing 16 6 1 block_size"
refused "unshingled past the end" "unshingled exceeds the capacity" \
	"0 $LEN caveat $backing 16 6 2 unshingled 8193"
refused "unshingled junk" "Invalid unshingled" \
	"0 $LEN caveat $backing 16 6 2 unshingled 1e3"
refused "on_damaged_read unknown" "on_damaged_read must be error or zero" \
	"0 $LEN caveat $backing 16 6 2 on_damaged_read ignore"
refused "unknown option" "Unknown optional argument" \
	"0 $LEN caveat $backing 16 6 1 fast"
refused "option given twice" "given twice" \
	"0 $LEN caveat $backing 16 6 4 unshingled 1 unshingled 2"
refused "length not a whole number of blocks" "multiple of block_size" \
	"0 $((LEN + 1)) caveat $backing 16 6"
refused "length not a whole number of 64 KiB blocks" "multiple of block_size" \
	"0 $((LEN - 8)) caveat $backing 16 6 2 block_size 65536"
refused "backing device too small" "Backing device too small" \
	"0 $((64 * 2048)) caveat $backing 16 6"
n=$((n + 1))
if echo "0 $LEN caveat $backing 16 6" | dmsetup create --readonly cv02ro >/dev/null 2>&1; then
	echo cv02ro >> "$T_WORK/.dm-devices"
	not_ok "refused: a read-only table"
else
	ok "refused: a read-only table"
fi

# A blank start, a Linux md superblock 1.2 at 4 KiB: refused without format.
dd if=/dev/zero of="$backing" bs=1M count=1 oflag=direct conv=notrunc status=none
printf '\xfc\x4e\x2b\xa9' | dd of="$backing" bs=1 seek=4096 conv=fsync,notrunc status=none
mark=$(kmsg_mark cv02md)
refused "first 4 KiB zero, an md member further in, without format" \
	"Backing device holds another format" "0 $LEN caveat $backing 16 6"
# The slot store in the library module (smr-common) names what it found.
if dmesg_since "$mark" | grep -qF "the backing device holds a Linux md (RAID) member"; then
	ok "the kernel log names the md member"
else
	not_ok "the kernel log names the md member" "$(dmesg | tail -n 3)"
fi

# Superblock checks: garbage is refused without format; a geometry change
# is refused without format.
head -c 4096 /dev/urandom | dd of="$backing" bs=4096 count=1 oflag=direct conv=notrunc status=none
refused "garbage superblock without format" "no valid dm-caveat superblock" \
	"0 $LEN caveat $backing 16 6"
check "garbage superblock with format" \
	dm_create cv02 "0 $LEN caveat $backing 16 6 1 format"
assert_eq "table line printed back without format" \
	"0 $LEN caveat $(dmsetup table cv02 | awk '{print $4}') 16 6" "$(dmsetup table cv02)"
check "remove" dm_remove cv02
refused "geometry change (DID) without format" "Table geometry differs" \
	"0 $LEN caveat $backing 8 6"
refused "geometry change (length) without format" "Table geometry differs" \
	"0 $((LEN - 8)) caveat $backing 16 6"
check "same geometry again" dm_create cv02 "0 $LEN caveat $backing 16 6"

# Messages.
msg_refused() {
	local desc=$1; shift
	if out=$(dmsetup message cv02 0 "$@" 2>&1); then
		not_ok "message refused: $desc" "accepted: $*" "$out"
	else
		ok "message refused: $desc"
	fi
}
msg_refused "unknown message" frobnicate
msg_refused "dump with one argument" dump 0
msg_refused "dump past the end" dump 8000 193
msg_refused "dump start at the end" dump 8192 1
msg_refused "dump of zero blocks" dump 0 0
msg_refused "dump with junk" dump 0x10 5
msg_refused "dump with a huge count" dump 1 18446744073709551615
msg_refused "query past the end" query 8192
msg_refused "query negative" query -1
msg_refused "query junk" query 12abc
msg_refused "query without a block" query
msg_refused "modsense with an argument" modsense now
msg_refused "clear_stats with an argument" clear_stats all
assert_eq "last block can be queried" "damaged" "$(cv_msg cv02 query 8191)"
assert_eq "dump of the last block" "8191+1" "$(cv_msg cv02 dump 8191 1)"
check "clear_stats" cv_msg cv02 clear_stats
if dmesg | grep -qF "unrecognised message 'frobnicate'"; then
	ok "unknown message is logged"
else
	not_ok "unknown message is logged"
fi

# I/O past the end and off the block size.
check_fail "write past the end" dd if=/dev/zero of=/dev/mapper/cv02 bs=4096 \
	seek=8192 count=1 oflag=direct status=none
check_fail "read past the end" sh -c "dd if=/dev/mapper/cv02 of=/dev/null bs=4096 \
	skip=8192 count=1 iflag=direct status=none | grep -q ."
assert_eq "writes past the end reach no target" 0 "$(cv_field cv02 writes)"
check "remove" dm_remove cv02

backing2=$(new_backing 32) || bail "no backing device"
check "64 KiB blocks" dm_create cv02b "0 $((16 * 2048)) caveat $backing2 4 1 2 block_size 65536"
check_fail "a 4 KiB write to a 64 KiB-block device" dd if=/dev/zero of=/dev/mapper/cv02b \
	bs=4096 count=1 oflag=direct status=none
if dmesg | grep -q "caveat: .*is not aligned to the 65536-byte block size"; then
	ok "unaligned write is logged"
else
	not_ok "unaligned write is logged"
fi
check "a 64 KiB write" dd if=/dev/zero of=/dev/mapper/cv02b bs=65536 count=1 \
	oflag=direct status=none
assert_eq "64 KiB write made block 0 valid" "valid" "$(cv_msg cv02b query 0)"
assert_eq "modsense of the 64 KiB device" \
	"capacity 256 block_size 65536 did 4 dnor 1 unshingled 0" "$(cv_msg cv02b modsense)"

# 512-byte blocks: DID and DNOR count sectors; sub-page writes work.
check "remove the 64 KiB device" dm_remove cv02b
check "512-byte blocks" dm_create cv02d "0 $((16 * 2048)) caveat $backing2 16 6 3 block_size 512 format"
assert_eq "512-byte blocks: logical block size" 512 "$(blockdev --getss /dev/mapper/cv02d)"
check "a 512-byte write at sector 3" dd if=/dev/urandom of=/dev/mapper/cv02d bs=512 seek=3 \
	count=1 oflag=direct status=none
assert_eq "512-byte blocks: dump" "0+3 4+32764" "$(cv_msg cv02d dump)"
check "a 512-byte read of the written sector" dd if=/dev/mapper/cv02d of=/dev/null bs=512 \
	skip=3 count=1 iflag=direct status=none
check_fail "a 512-byte read of the next sector" dd if=/dev/mapper/cv02d of=/dev/null bs=512 \
	skip=4 count=1 iflag=direct status=none

# A dump longer than dmsetup's buffer ends in "truncated next=<block>"
# and can be continued from there: DID 1 and every other block written
# gives 8192 one-block extents (about 60 KiB of text).
backing3=$(new_backing 80) || bail "no backing device"
check "DID 1 device" dm_create cv02c "0 $((16384 * 8)) caveat $backing3 1 0"
out=$(SMR_ROOT=$SMR_ROOT python3 - /dev/mapper/cv02c cv02c <<'PY'
import os, sys
sys.path.insert(0, os.environ['SMR_ROOT'] + '/tests/lib')
import cv_model
w = cv_model.Writer(sys.argv[1])
for b in range(0, 16384, 2):
    ok, err = w.write(b, 1, b + 1)
    assert ok, err
w.close()
got = cv_model.kernel_dump(sys.argv[2])
want = [(b, 1) for b in range(1, 16384, 2)]
print('match' if got == want else 'differ %s' % got[:5])
PY
)
assert_eq "a long dump, followed through its truncation markers, is complete" match "$out"
full=$(cv_msg cv02c dump)
case $full in
*"truncated next="*) ok "a dump too long for the buffer says so (${#full} bytes)" ;;
*) [ "$(wc -w <<< "$full")" = 8192 ] && ok "the whole dump fit (${#full} bytes)" ||
	not_ok "long dump complete or marked" "${full: -80}" ;;
esac

# dump scans 2^21 blocks per hold of the lock: runs that cross a step
# are still one token each. 4 Mi blocks of 512 bytes, DID 0.
big=$(new_big_backing 3) || bail "no backing device"
if dm_create cv02s "0 4194304 caveat $big 0 0 2 block_size 512"; then
	assert_eq "a new device: one damaged run across both steps" "0+4194304" \
		"$(cv_msg cv02s dump)"
	check "write blocks 2097148..2097155, across the step" dd if=/dev/urandom \
		of=/dev/mapper/cv02s bs=512 count=8 seek=2097148 oflag=direct status=none
	assert_eq "the runs on each side of it" "0+2097148 2097156+2097148" \
		"$(cv_msg cv02s dump)"
	assert_eq "a dump from inside the written run" "2097156+4" \
		"$(cv_msg cv02s dump 2097150 10)"
	check "remove" dm_remove cv02s
else
	not_ok "create a 4 Mi-block device"
fi

dmesg_check
_show_result
