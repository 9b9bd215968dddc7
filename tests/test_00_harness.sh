#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 300
# SLOW: 1
# (It tests the harness, which does not depend on the kernel under test:
# make check runs it on the first kernel only.)
#
# The harness tests itself: backing regions are fresh, zeroed and
# disjoint; data written through dm-linear reads back (fio crc32c verify
# and byte compare); the checkers catch corruption; the result helpers
# cannot pass vacuously; dmesg scanning matches what it must (on
# synthetic lines, no kernel warning is triggered) and only after the
# test's marker.

. "$(dirname "$0")/common.sh"

_prep_test "harness: backing devices, data checks, result helpers, dmesg scan"
require_cmd fio dmsetup blkdiscard cmp

# ---- backing regions -------------------------------------------------
a=$(new_backing 64)
b=$(new_backing 32)
check "backing device A exists" test -b "$a"
check "backing device B exists" test -b "$b"
assert_eq "A is 64 MiB" $((64 << 20)) "$(blockdev --getsize64 "$a")"
assert_eq "B is 32 MiB" $((32 << 20)) "$(blockdev --getsize64 "$b")"

read -r _ lena _ diska starta <<< "$(dmsetup table "${a#/dev/mapper/}")"
read -r _ _ _ diskb startb <<< "$(dmsetup table "${b#/dev/mapper/}")"
if [ "$startb" -ge $((starta + lena)) ]; then
	ok "regions are disjoint (A at $starta+$lena, B at $startb)"
else
	not_ok "regions are disjoint" "A: $diska $starta+$lena, B: $diskb $startb"
fi
assert_eq "A is 1 MiB aligned" 0 $((starta % 2048))
assert_zero "fresh A reads as zeros (start)" "$a" 0 $((1 << 20))
assert_zero "fresh A reads as zeros (end)" "$a" $((63 << 20)) $((1 << 20))

# ---- byte-exact round trip through a dm-linear stacked on A ----------
off=$((1 << 20))
dm_create "t_${TID}_lin" "0 $(( (32 << 20) / 512 )) linear $a $((off / 512))"
lin=/dev/mapper/t_${TID}_lin
check "stacked dm-linear exists" test -b "$lin"

data=$(write_data "$lin" 8192 $((1 << 20)))
assert_data "data reads back through the stacked device" "$lin" "$data" 8192
assert_data "data sits at the mapped offset of A" "$a" "$data" $((off + 8192))
assert_zero "B is untouched by writes to A (start)" "$b" 0 $((4 << 20))
assert_zero "B is untouched by writes to A (end)" "$b" $((31 << 20)) $((1 << 20))

# ---- the checkers catch what they must -------------------------------
# Run a helper against a throwaway result file and look at what it
# recorded, so its failure does not fail this test.
probe() {
	local dir
	dir=$(mktemp -d "$T_WORK/probe.XXXXXX")
	( T_WORK=$dir; : > "$dir/.tap-results"; "$@" ) > "$dir/out" 2>&1
	cat "$dir/.tap-results"
}
bad=$(mktemp "$T_WORK/bad.XXXXXX")
cp "$data" "$bad"
v=$(od -An -tu1 -j4097 -N1 "$bad")
printf "\\x$(printf %02x $((v ^ 0xff)))" |	# flip every bit of one byte
	dd of="$bad" bs=1 seek=4097 conv=notrunc status=none
assert_eq "assert_data detects a 1-byte difference" fail \
	"$(probe assert_data x "$lin" "$bad" 8192)"
assert_eq "assert_data accepts the right data" pass \
	"$(probe assert_data x "$lin" "$data" 8192)"
assert_eq "assert_data fails on a missing expected file" fail \
	"$(probe assert_data x "$lin" "$T_WORK/nonexistent" 0)"
assert_eq "assert_zero detects data" fail \
	"$(probe assert_zero x "$lin" 8192 4096)"
assert_eq "assert_eq detects a difference" fail "$(probe assert_eq x 1 2)"
assert_eq "check_fail detects success" fail "$(probe check_fail x true)"
assert_eq "run_fio reports fio failure" fail \
	"$(probe run_fio x --filename=/nonexistent/dev --rw=read --size=4k)"

# ---- fio write + crc32c verify (overwrites the data above) -----------
run_fio "fio randwrite 16M verify=crc32c" --filename="$lin" \
	--rw=randwrite --bs=4k --size=16M --iodepth=8 \
	--verify=crc32c --do_verify=1 --verify_fatal=1 --randrepeat=0
run_fio "fio seq write 8M verify=crc32c" --filename="$b" \
	--rw=write --bs=64k --size=8M --iodepth=4 \
	--verify=crc32c --do_verify=1 --verify_fatal=1

# ---- result helpers: exit codes and vacuous passes -------------------
# Mini tests, each with its own scratch dir (SMR_WORK) so they do not
# touch this test's results.
mini() {
	local body=$1 f dir
	dir=$(mktemp -d "$T_WORK/mini.XXXXXX")
	f=$dir/test_mini.sh
	printf '. %q\n_prep_test mini\n%s\n' "$SMR_ROOT/tests/common.sh" "$body" > "$f"
	SMR_WORK=$dir/work SMR_MNT=$dir/mnt bash "$f" > "$dir/out" 2>&1
	echo $?
}
assert_eq "no assertion at all fails (exit 1)" 1 "$(mini '_show_result')"
assert_eq "one ok passes (exit 0)" 0 "$(mini 'ok x; _show_result')"
assert_eq "ok + not_ok fails" 1 "$(mini 'ok x; not_ok y; _show_result')"
assert_eq "skip_all exits 4" 4 "$(mini 'skip_all nothing here')"
assert_eq "only skipped checks exit 4" 4 "$(mini 'skip x why; _show_result')"
assert_eq "a result recorded in a subshell counts" 1 \
	"$(mini 'ok x; ( not_ok y ); _show_result')"
assert_eq "a helper error in \$(...) fails the test" 1 \
	"$(mini 'ok x; d=$(_helper_error boom); _show_result')"
assert_eq "exit without _show_result fails" 1 "$(mini 'ok x; exit 0')"
assert_eq "require_cmd skips on a missing command" 4 \
	"$(mini 'require_cmd no-such-command-smr; ok x; _show_result')"
# The exit trap undoes what a test left: devices newest first (one made
# twice under one name, one stacked on another), mounts deepest first.
rc=$(mini "dm_create h00x '0 2048 linear $a 0' && dmsetup remove h00x &&
	dm_create h00x '0 4096 linear $a 0' &&
	dm_create h00y \"0 2048 linear /dev/mapper/h00x 0\" &&
	mkdir -p \"\$T_MNT/m\" && mount -t tmpfs none \"\$T_MNT/m\" &&
	mkdir -p \"\$T_MNT/m/n\" && mount -t tmpfs none \"\$T_MNT/m/n\" && ok made; _show_result")
left=$( (dmsetup info -c --noheadings -o name h00x h00y 2>/dev/null; grep -F "$T_WORK/mini." /proc/self/mounts) | wc -l)
assert_eq "the exit trap removed the devices and mounts a test left" "0 0" "$rc $left"
out=$(SMR_WORK=$T_WORK/mini-skip SMR_MNT=$T_WORK/mini-skip-mnt bash -c ". $SMR_ROOT/tests/common.sh; _prep_test x; skip_all because" 2>&1)
assert_eq "skip_all prints a kselftest skip plan" "1..0 # SKIP because" "$(echo "$out" | tail -n 1)"

# ---- dmesg scanning on synthetic kernel log lines --------------------
bad_lines=(
	'[   12.345678] WARNING: CPU: 1 PID: 321 at drivers/md/dm-smr.c:123 smr_map+0x10/0x20 [dm_smr]'
	'[   12.345679] BUG: KASAN: use-after-free in smr_end_io+0x1/0x2'
	'[   12.345680] kernel BUG at drivers/md/dm-smr.c:456!'
	'[   12.345681] general protection fault, probably for non-canonical address 0xdead: 0000 [#1] PREEMPT SMP'
	'[   12.345682] WARNING: possible circular locking dependency detected'
	'[   12.345683] WARNING: inconsistent lock state'
	'[   12.345684] WARNING: suspicious RCU usage'
	'[   12.345685] UBSAN: shift-out-of-bounds in drivers/md/dm-smr.c:42:9'
	'[   12.345686] Call Trace:'
	'[   12.345687] Oops: 0000 [#1] PREEMPT SMP NOPTI'
	'[   12.345688] kmemleak: 2 new suspected memory leaks (see /sys/kernel/debug/kmemleak)'
	'[   12.345689] INFO: task kworker/0:1:12 blocked for more than 120 seconds.'
)
good_lines=(
	'[    1.000000] device-mapper: ioctl: 4.47.0-ioctl (2022-07-28) initialised: dm-devel@redhat.com'
	'[    2.000000] virtio_blk virtio1: [vda] 33554432 512-byte logical blocks (17.2 GB/16.0 GiB)'
	'[    3.000000] EXT4-fs (dm-1): mounted filesystem with ordered data mode. Quota mode: none.'
	'[    4.000000] device-mapper: smr: dm-2: cache 1% full, cleaning band 7'
	'[    5.000000] F2FS-fs (dm-3): Mounted with checkpoint version = 3c4b1a2'
	'[    6.000000] sysrq: Resetting'
)
for l in "${bad_lines[@]}"; do
	hit=$(printf '%s\n' "$l" | dmesg_find_errors)
	assert_eq "dmesg scan flags: ${l:15:50}" "$l" "$hit"
done
hits=$(printf '%s\n' "${good_lines[@]}" | dmesg_find_errors)
assert_eq "dmesg scan ignores ordinary messages" "" "$hits"
assert_eq "dmesg scan finds all warnings in a mixed log" "${#bad_lines[@]}" \
	"$(printf '%s\n' "${good_lines[@]}" "${bad_lines[@]}" | dmesg_find_errors | wc -l)"

# dmesg_since returns only what follows the newest marker (real kmsg,
# harmless lines).
tag=smr-harness-$$-$RANDOM
echo "$tag before" > /dev/kmsg
echo "$tag-mark" > /dev/kmsg
echo "$tag after" > /dev/kmsg
since=$(dmesg_since "$tag-mark")
assert_eq "dmesg_since keeps lines after the marker" 1 "$(echo "$since" | grep -c "$tag after")"
assert_eq "dmesg_since drops lines before the marker" 0 "$(echo "$since" | grep -c "$tag before")"

# A boot whose kernel log already has a checker's report runs no test:
# guest-suite.sh, on a one-test plan, with a dmesg that shows an early
# KASAN report (a stand-in on PATH; the real log is left alone).
for l in "${bad_lines[@]}"; do
	case $l in *KASAN*|*UBSAN*) hit=1 ;; *) hit=0 ;; esac
	assert_eq "checks-off scan: ${l:15:40}" $hit \
		"$(printf '%s\n' "$l" | grep -cE -- "$SMR_CHECKS_OFF")"
done
gs=$T_WORK/early; mkdir -p "$gs/bin" "$gs/res"
printf '#!/bin/sh\necho "[    0.002345] BUG: KASAN: slab-out-of-bounds in do_raw_spin_lock+0x1/0x2"\n' > "$gs/bin/dmesg"
printf '#!/bin/sh\ntouch %q\necho 1..0\n' "$gs/ran" > "$gs/test_x.sh"
chmod +x "$gs/bin/dmesg"
PATH=$gs/bin:$PATH SMR_BOOT=1 SMR_BOOTS=1 bash "$SMR_ROOT/tests/lib/guest-suite.sh" \
	--results "$gs/res" --boot-id early 1:60:"$gs/test_x.sh" > "$gs/out" 2>&1
assert_eq "a boot with an early checker report does not run its tests" no \
	"$([ -e "$gs/ran" ] && echo yes || echo no)"
assert_eq "... and fails them, saying why" 1 \
	"$(grep -c '^not ok 1 .*a checker reported before the first test' "$gs/res/tap/1.tap")"
assert_eq "... and counts them failed" 1 "$(grep -c ' fail:1 ' "$gs/res/boot-early.done")"

# ---- the VM the harness gives us -------------------------------------
if [ -n "${SMR_BIG_SIZE:-}" ]; then
	assert_eq "big disk $SMR_BIG_DISK has SMR_BIG_SIZE bytes" "$SMR_BIG_SIZE" \
		"$(blockdev --getsize64 "$SMR_BIG_DISK")"
	big=$(new_big_backing 1)
	d=$(write_data "$big" $(((1 << 30) - (1 << 20))) $((1 << 20)))
	assert_data "big-disk backing round trip" "$big" "$d" $(((1 << 30) - (1 << 20)))
else
	skip "big disk" "not run by tests/vm-run (SMR_BIG_SIZE unset)"
fi
sysrq=$(cat /proc/sys/kernel/sysrq)
assert_eq "magic sysrq reboot is enabled for crash tests (sysrq=$sysrq)" 1 \
	"$(( sysrq == 1 || (sysrq & 128) != 0 ))"

dmesg_check "no kernel warnings during the harness test"
_show_result
