#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 400
# SLOW: 1
# (Our tracepoints do not depend on the kernel, and bpftrace starts slowly
# under TCG: make check runs this on the first kernel only.)
#
# Tracepoints: "trace-cmd record -e dm_smr -e dm_caveat" around a small
# workload on one device of each model captures every event
# docs/tracing.md lists, with the fields the workload implies:
#   drive-managed: cached and bypass writes (band, slot), writes that
#     waited for a full cache (how long), cleaning start and end (band,
#     reason, bytes), metadata commits;
#   host-managed: writes at the write pointer, zone condition changes
#     (empty -> imp_open, a reset back to empty);
#   caveat: the damage a write did (write and damage range, live blocks),
#     the read that failed on it, metadata commits, the journal block
#     that made the damage durable first; the steps of a damage range of
#     2.2 Mi blocks;
#   media faults: a read failed on a bad sector (drive-managed), a write
#     failed by a transient fault (caveat).
# Then the bpftrace example of docs/tracing.md ("how long did this write
# wait for cleaning") runs on the same workload, where bpftrace works.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "tracepoints: trace-cmd captures the dm_smr and dm_caveat events"
dms_prep
hm_prep
require_target caveat
require_cmd trace-cmd fio

# Drive-managed: 8 bands of 1 MiB, a cache of 256 blocks (the least).
DLEN=$((8 * 2048))
read -r _ NEED <<< "$(dms_need $DLEN 2048 2048)"
dback=$(new_backing $(( (NEED + 2047) / 2048 ))) || bail "no backing device"
DN=t_${TID}_dm
dms_create "$DN" $DLEN "$dback" 2048 cache_sectors 2048 idle_ms 0 format ||
	bail "cannot create the drive-managed device"
# Host-managed: 4 zones, none conventional.
hback=$(new_backing $(( 5 * HM_ZS / 2048 + 8 ))) || bail "no backing device"
HN=t_${TID}_hm
hm_create "$HN" $((4 * HM_ZS)) "$hback" $HM_ZS || bail "cannot create the host-managed device"
# its events name the zoned disk it maps to
HZ=$(dmsetup deps -o devname "$HN" | sed -n 's/.*(\(smrhm[0-9]*\)).*/\1/p')
[ -n "$HZ" ] || bail "no smrhm disk under $HN: $(dmsetup deps -o devname "$HN")"
# Caveat: did 16, dnor 4 (4 KiB blocks): a write of block 5 makes blocks
# max(5+1+4, 6)..5+16 = 10..21 maybe damaged.
cback=$(new_backing 16) || bail "no backing device"
CN=t_${TID}_cv
dm_create "$CN" "0 $((2048 * 8)) caveat $cback 16 4" || bail "cannot create the caveat device"
# Caveat with a damage range of 2.2 Mi blocks (more than 64 chunks of
# 2^15): block 0's write is mapped in steps, and damages block 100.
bback=$(new_big_backing 3) || bail "no backing device"
BN=t_${TID}_cvbig
dm_create "$BN" "0 4194304 caveat $bback 2200000 0 2 block_size 512" ||
	bail "cannot create the large-DID caveat device"

W=$T_WORK/workload.sh
cat > "$W" <<EOF
set -x
# dm: a whole band sequentially (bypass), then 4 KiB random writes over
# six bands, three times the cache (writes wait for foreground cleaning)
dd if=/dev/urandom of=/dev/mapper/$DN bs=1M count=1 seek=7 oflag=direct status=none
fio --name=r --filename=/dev/mapper/$DN --rw=randwrite --bs=4k --size=6M \
	--io_size=3M --direct=1 --ioengine=libaio --iodepth=4 --randseed=3 \
	--output=/dev/null
dmsetup message $DN 0 clean
# hm: two writes at the first zone's write pointer, then a reset
dd if=/dev/urandom of=/dev/mapper/$HN bs=64k count=1 oflag=direct status=none
dd if=/dev/urandom of=/dev/mapper/$HN bs=64k count=1 seek=1 oflag=direct status=none
blkzone reset -o 0 -c 1 /dev/mapper/$HN
# caveat: block 10, then block 5 damages it; reading it fails
dd if=/dev/urandom of=/dev/mapper/$CN bs=4k count=1 seek=10 oflag=direct,dsync status=none
dd if=/dev/urandom of=/dev/mapper/$CN bs=4k count=1 seek=5 oflag=direct,dsync status=none
dd if=/dev/mapper/$CN of=/dev/null bs=4k count=1 skip=10 iflag=direct status=none
# caveat, large DID: block 100, then block 0 damages it in steps
dd if=/dev/urandom of=/dev/mapper/$BN bs=512 count=1 seek=100 oflag=direct status=none
dd if=/dev/urandom of=/dev/mapper/$BN bs=512 count=1 seek=0 oflag=direct status=none
# media faults: a bad sector fails a dm read, a transient fault a caveat write
dmsetup message $DN 0 badblocks add 64 8
dd if=/dev/mapper/$DN of=/dev/null bs=4k count=1 skip=8 iflag=direct status=none
dmsetup message $DN 0 badblocks clear
dmsetup message $CN 0 transient next 0 8 1 write
dd if=/dev/urandom of=/dev/mapper/$CN bs=4k count=1 seek=0 oflag=direct status=none
sync
EOF

cleanup_dm() {
	dms_wait_clean "/dev/mapper/$DN" 60 > /dev/null
}

TR=$T_WORK/trace.dat
(cd "$T_WORK" && trace-cmd record -q -o "$TR" -e dm_smr -e dm_caveat bash "$W") \
	> "$T_WORK/record.log" 2>&1
rc=$?
diag "$(tail -20 "$T_WORK/record.log")"
assert_eq "trace-cmd record ran the workload" 0 "$rc"
cleanup_dm
R=$T_WORK/report.txt
trace-cmd report -i "$TR" > "$R" 2> "$T_WORK/report.err"
check "trace-cmd report" test -s "$R"

# has DESC REGEX: a line of the report matches (ERE); shows a sample.
has() {
	local n
	n=$(grep -cE "$2" "$R")
	if [ "$n" -gt 0 ]; then
		ok "$1 ($n events, e.g. $(grep -m1 -oE "$2.*" "$R" | cut -c1-120))"
	else
		not_ok "$1" "no line matches /$2/" \
			"events seen: $(grep -oE '(smr|cv)_[a-z_]+:' "$R" | sort | uniq -c | tr '\n' ' ')" \
			"$(grep -m3 -E "${2%%:*}:" "$R")"
	fi
}
# the bypass write: band 7 whole, no slot
has "dm: a bypass write of band 7" "smr_dm_write: +$DN sector=14336 nr=[0-9]+ bypass band=7 slot=-1"
has "dm: cached writes name their band and slot" "smr_dm_write: +$DN sector=[0-9]+ nr=8 cache band=[0-5] slot=[0-9]+"
has "dm: writes that waited for a full cache, with the time" "smr_dm_write_waited: +$DN sector=[0-9]+ nr=8 waited_us=[0-9]+ for=cache-full err=0"
has "dm: foreground cleaning started" "smr_clean_start: +$DN band=[0-5] reason=foreground pick_ns=[0-9]+"
has "dm: cleaning ended with the bytes it moved" "smr_clean_end: +$DN band=[0-5] reason=(foreground|manual) err=0 read=[1-9][0-9]* written=[1-9][0-9]* us=[0-9]+"
has "dm: the clean message cleaned" "smr_clean_(start|end): +$DN band=[0-7] reason=manual"
has "dm: metadata commits" "smr_md_commit: +$DN gen=[1-9][0-9]* err=0"
has "hm: a write at wp 0 of zone 0" "smr_hm_write: +$HZ zone=0 wp=0 nr=128"
has "hm: the next at wp 128" "smr_hm_write: +$HZ zone=0 wp=128 nr=128"
has "hm: zone 0 opened implicitly" "smr_zone_cond: +$HZ zone=0 empty -> imp_open"
has "hm: the reset emptied it" "smr_zone_cond: +$HZ zone=0 imp_open -> empty"
has "hm: metadata commits" "smr_md_commit: +$HZ gen=[1-9][0-9]* err=0"
has "caveat: block 5's write damaged 10..21, one live block" "cv_damage: +$CN write=5\.\.5 damaged=10\.\.21 live=1"
has "caveat: the read of block 10 failed" "cv_damaged_read: +$CN read=10\.\.10 failed"
has "caveat: a large damage range counted in steps" "cv_damage_step: +$BN blocks=32768\\.\\.2129919 counted"
has "caveat: ... and cleared in steps" "cv_damage_step: +$BN blocks=32768\\.\\.2129919 cleared"
has "caveat: metadata commits" "cv_md_commit: +$CN gen=[1-9][0-9]* err=0"
has "caveat: block 5's damage went to the journal first" "cv_jr_write: +$CN block=0 records=1 stamp=1 err=0"
has "dm: a bad sector failed a read" "smr_fault: +$DN bad_read read sector=64 nsect=8"
has "caveat: a transient fault failed a write" "cv_fault: +$CN transient write sector=0 nsect=8"

# The waits the trace reports are bounded by the workload's length.
max_us=$(grep -oE "smr_dm_write_waited: +$DN .*waited_us=[0-9]+" "$R" |
	sed 's/.*waited_us=//' | sort -n | tail -1)
el=$(grep -oE '^ *[^ ]+ +\[[0-9]+\] +[0-9]+\.[0-9]+' "$R" |
	awk 'NR == 1 { a = $NF } { b = $NF } END { printf "%d", (b - a) * 1e6 + 1 }')
if [ -n "$max_us" ] && [ "$max_us" -le "$el" ]; then
	ok "the longest wait (${max_us} us) is within the trace (${el} us)"
else
	not_ok "the longest wait is within the trace" "max ${max_us:-none} us, trace ${el} us"
fi

# docs/tracing.md's bpftrace example on the same workload, where bpftrace
# can run (it needs BPF in the kernel and a bpftrace that knows it).
BT=$SMR_ROOT/docs/examples/write-wait.bt
if ! command -v bpftrace > /dev/null; then
	skip "bpftrace example" "bpftrace is not installed"
elif ! timeout 60 bpftrace -e 'BEGIN { exit(); }' > "$T_WORK/bt-probe.log" 2>&1; then
	skip "bpftrace example" "bpftrace does not run here: $(tail -1 "$T_WORK/bt-probe.log")"
else
	dm_remove "$DN" || bail "remove the drive-managed device"
	dms_create "$DN" $DLEN "$dback" 2048 cache_sectors 2048 idle_ms 0 format ||
		bail "cannot create the drive-managed device again"
	timeout 300 bpftrace "$BT" > "$T_WORK/bt.out" 2>&1 &
	bpid=$!
	for _ in $(seq 1 150); do
		grep -q Attaching "$T_WORK/bt.out" && break
		sleep 0.2
	done
	sleep 1
	fio --name=r --filename=/dev/mapper/$DN --rw=randwrite --bs=4k --size=6M \
		--io_size=3M --direct=1 --ioengine=libaio --iodepth=4 --randseed=3 \
		--output=/dev/null
	kill -INT $bpid
	wait $bpid
	diag "$(cat "$T_WORK/bt.out")"
	check "bpftrace: a histogram of waits for a full cache" \
		grep -qE '@wait_us\[cache-full\]' "$T_WORK/bt.out"
	cleanup_dm
fi

dmesg_check
_show_result
