#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 600
#
# Host-managed dm-smr: a power cut on demand (the power_cut message,
# docs/crash-testing.md).
#
# 1. Refusals: bad power_cut messages say why; the status line ends in
#    "<power> <power_left>".
# 2. Cut now, after flushed and unflushed writes, a reset, a finish and
#    an O_DSYNC write: I/O and zone operations fail at once; the backing
#    device does not change any more. Reloading the printed table brings
#    the power back over a new zoned device (smrhmN): every write pointer
#    is where the last commit left it (flushed data is there, the
#    unflushed appends are gone and read as zeros), reset and finish held,
#    the conventional zone holds its old or its new data, and the zones
#    take writes again.
# 3. "after N writes" and "after N flushes": the N+1th command fails and
#    cuts; what was flushed before it is there after a remove and create.
# 4. "random MAX SEED": the same seed draws the same N.
# 5. A cut in the middle of a writer appending to four zones, some writes
#    O_DSYNC (a seeded countdown, armed once it runs): after the power comes back every zone holds exactly the
#    writer's data up to its write pointer, at least up to what was
#    durable, and zeros after it.
# 6. A cut while a flush waits for the timing model's write cache to
#    destage: the cut does not wait for it, the flush fails.
# 7. Power back while 64 writers keep writing to the cut drive: their
#    writes fail at once and do not hold the reload up.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/hm.sh"

_prep_test "hm: power cuts: what was flushed stays, the rest is the last commit's"
hm_prep

ZS=$HM_ZS
NZ=8
LEN=$((NZ * ZS))
zs() { echo $(( $1 * ZS )); }
back=$(new_backing 80) || bail "no backing device"
name=t_${TID}_pc
dev=/dev/mapper/$name
hm_create "$name" $LEN "$back" $ZS conv_zones 2 format || bail "cannot create the device"

# engine NAME: the zoned device (smrhmN) under dm device NAME.
engine() { dmsetup deps -o devname "$1" | sed -n 's/.*(\(smrhm[0-9]*\)).*/\1/p'; }
# bsum: md5 of the backing device as it is on disk (O_DIRECT).
bsum() { dd if="$back" bs=1M iflag=direct status=none | md5sum; }
# power: the status line's last two fields.
power() { dmsetup status "$name" | awk '{ print $(NF - 1), $NF }'; }
# refused DESC WORDS...: the message fails and the log says why.
refused() {
	local desc=$1 out
	shift
	if out=$(hm_msg "$dev" "$@"); then
		not_ok "refused: $desc" "accepted: $*"
	elif dmesg | tail -n 3 | grep -q "power_cut"; then
		ok "refused: $desc"
	else
		not_ok "refused: $desc: the log says why" "$(dmesg | tail -n 3)"
	fi
}

# ---- 1. refusals and the status fields ----------------------------------
assert_eq "status: the power is on" "on 0" "$(power)"
refused "no count word" power_cut after 3
refused "a count that is not a number" power_cut after x writes
refused "an unknown thing to count" power_cut after 3 bananas
refused "random without a seed" power_cut random 10 writes
refused "random: max not a number" power_cut random ten 1 writes
refused "an unknown word" power_cut sideways
check "power_cut off when nothing is armed" hm_msg "$dev" power_cut off
check "arm: after 1000 writes" hm_msg "$dev" power_cut after 1000 writes
assert_eq "status: armed, 1000 left" "armed 1000" "$(power)"
check "disarm" hm_msg "$dev" power_cut off
assert_eq "status: on again" "on 0" "$(power)"

# ---- 2. cut now ------------------------------------------------------------
hm_put D1 "$dev" 0 2048				# conventional
hm_put A1 "$dev" $(zs 2) 2048
check "flush" hm_flush "$dev"
hm_put B1 "$dev" $(zs 3) 1024
check "reset zone 3 (durable once done)" hm_zop "$dev" reset $(zs 3)
hm_put C1 "$dev" $(zs 4) 1024
check "finish zone 4 (durable once done)" hm_zop "$dev" finish $(zs 4)
E1=$(hm_newfile 1024)
hm_data "$E1" 1024
check "O_DSYNC write to zone 5" dd if="$E1" of="$dev" bs=512K count=1 \
	oflag=direct,dsync,seek_bytes seek=$(( $(zs 5) * 512 )) conv=notrunc status=none
# Unflushed, after the last commit:
hm_put D2 "$dev" 0 2048
hm_put A2 "$dev" $(( $(zs 2) + 2048 )) 1024
hm_put F1 "$dev" $(zs 6) 1024
eng0=$(engine "$name")
[ -n "$eng0" ] && ok "the device runs on $eng0" || not_ok "the device runs on a zoned device smrhmN"

check "power_cut" hm_msg "$dev" power_cut
assert_eq "status: cut" "cut 0" "$(power)"
sum0=$(bsum)
check_fail "a read fails" hm_read "$dev" $(zs 2) 8
check_fail "a write at the write pointer fails" hm_try_write "$dev" $(( $(zs 2) + 3072 )) 8
check_fail "a conventional write fails" hm_try_write "$dev" 4096 8
check_fail "a zone reset fails" hm_zop "$dev" reset $(zs 2)
check_fail "a flush fails" hm_flush "$dev"
refused "arming a cut drive" power_cut after 1 writes
assert_eq "the backing device did not change after the cut" "$sum0" "$(bsum)"
if dmesg | grep -q "$eng0: power cut"; then ok "the log names the cut"
else not_ok "the log names the cut" "no '$eng0: power cut' line"; fi

# The power comes back: the printed table, loaded again.
table=$(dmsetup table "$name")
check "reload the printed table" dmsetup reload "$name" --table "$table"
check "resume" dmsetup resume "$name"
eng1=$(engine "$name")
assert_ne "a new zoned device under the table ($eng0 before)" "$eng0" "$eng1"
assert_eq "status: on" "on 0" "$(power)"
got=$(hm_sum "$dev" 0 2048)
if [ "$got" = "$(md5sum < "$D1" | cut -d' ' -f1)" ] ||
   [ "$got" = "$(md5sum < "$D2" | cut -d' ' -f1)" ]; then
	ok "conventional zone: the old or the new data"
else
	not_ok "conventional zone: the old or the new data" "neither"
fi
assert_cw "zone 2: closed at the flushed write pointer" "$dev" $(zs 2) "cl 2048"
hm_assert_read "zone 2: flushed data" "$dev" $(zs 2) "$A1"
hm_assert_zero "zone 2: the unflushed write is gone" "$dev" $(( $(zs 2) + 2048 )) 1024
assert_cw "zone 3: the reset held" "$dev" $(zs 3) "em 0"
assert_cw "zone 4: the finish held" "$dev" $(zs 4) "fu $ZS"
hm_assert_read "zone 4: its data" "$dev" $(zs 4) "$C1"
assert_cw "zone 5: the O_DSYNC write held" "$dev" $(zs 5) "cl 1024"
hm_assert_read "zone 5: its data" "$dev" $(zs 5) "$E1"
assert_cw "zone 6: opened after the last commit: empty" "$dev" $(zs 6) "em 0"
hm_put A3 "$dev" $(( $(zs 2) + 2048 )) 1024 "a write at zone 2's write pointer"
check "flush" hm_flush "$dev"
hm_assert_read "zone 2: the new write reads back" "$dev" $(( $(zs 2) + 2048 )) "$A3"

# ---- 3. after N writes, after N flushes ---------------------------------
check "arm: after 2 writes" hm_msg "$dev" power_cut after 2 writes
hm_put W1 "$dev" $(zs 7) 8 "write 1 of 2 passes"
hm_put W2 "$dev" $(( $(zs 7) + 8 )) 8 "write 2 of 2 passes"
assert_eq "status: armed, 0 left" "armed 0" "$(power)"
check_fail "write 3 (the cut) fails" hm_try_write "$dev" $(( $(zs 7) + 16 )) 8
assert_eq "status: cut" "cut 0" "$(power)"
check "remove" dm_remove "$name"
check "create again" hm_create "$name" $LEN "$back" $ZS conv_zones 2
assert_cw "zone 7: nothing was flushed there: empty" "$dev" $(zs 7) "em 0"
hm_assert_read "zone 2 kept its data" "$dev" $(( $(zs 2) + 2048 )) "$A3"

check "arm: after 1 flushes" hm_msg "$dev" power_cut after 1 flushes
hm_put G1 "$dev" $(zs 7) 16 "a write"
check "flush 1 of 1 passes" hm_flush "$dev"
hm_put G2 "$dev" $(( $(zs 7) + 16 )) 16 "a write after it"
check_fail "flush 2 (the cut) fails" hm_flush "$dev"
check "remove" dm_remove "$name"
check "create again" hm_create "$name" $LEN "$back" $ZS conv_zones 2
assert_cw "zone 7: at the first flush" "$dev" $(zs 7) "cl 16"
hm_assert_read "zone 7: the flushed write" "$dev" $(zs 7) "$G1"

# ---- 4. random: the seed decides --------------------------------------
r1=$(hm_msg "$dev" power_cut random 1000 4242 writes)
check "disarm" hm_msg "$dev" power_cut off
r2=$(hm_msg "$dev" power_cut random 1000 4242 writes)
r3=$(hm_msg "$dev" power_cut random 1000 77 writes)
check "disarm" hm_msg "$dev" power_cut off
if [[ $r1 =~ ^after\ ([0-9]+)\ writes$ ]] && [ "${BASH_REMATCH[1]}" -le 1000 ]; then
	ok "random prints what it armed ($r1)"
else
	not_ok "random prints what it armed" "'$r1'"
fi
assert_eq "random: the same seed draws the same count" "$r1" "$r2"
assert_ne "random: another seed, another count" "$r1" "$r3"

# ---- 5. a cut under a writer -------------------------------------------
WZ="3 5 6 7"
seed=$RANDOM$RANDOM
check "reset the writer's zones" hm_zop "$dev" reset $(zs 3) 5
check "flush" hm_flush "$dev"
: > "$T_WORK/durable.log"
writer() {
	local i=0 z n f fl out
	local -A wpb
	while :; do
		for z in $WZ; do
			n=$((RANDOM % 8 + 1))
			f=${wpb[$z]:-0}
			fl=
			[ $((i % 3)) = 2 ] && fl=dsync
			if ! out=$(hm_pattern_write "$dev" $(zs $z) "$seed" $z "$f" $n $fl); then
				echo "E $z $f $n" >> "$T_WORK/durable.log"
				exit 0
			fi
			wpb[$z]=$((f + n))
			echo "A $z $(( (f + n) * 8 ))" >> "$T_WORK/durable.log"
			[ -n "$fl" ] && echo "D $z $(( (f + n) * 8 ))" >> "$T_WORK/durable.log"
			i=$((i + 1))
		done
	done
}
writer &
wpid=$!
# Armed once the writer is under way: 8 writes done, up to 40 more.
for t in $(seq 1 120); do
	[ "$(grep -c '^A' "$T_WORK/durable.log")" -ge 8 ] && break
	sleep 0.5
done
r=$(hm_msg "$dev" power_cut random 40 "$seed" writes)
diag "writer seed $seed: armed $r"
for t in $(seq 1 240); do
	kill -0 $wpid 2>/dev/null || break
	sleep 1
done
if kill -0 $wpid 2>/dev/null; then
	kill $wpid
	not_ok "the writer met the cut within 240 s" "status: $(power)"
else
	ok "the writer met the cut ($(grep -c '^A' "$T_WORK/durable.log") writes acknowledged)"
fi
wait $wpid 2>/dev/null
assert_eq "status: cut" "cut 0" "$(power)"
check "remove" dm_remove "$name"
check "create again" hm_create "$name" $LEN "$back" $ZS conv_zones 2
declare -A dwp awp
while read -r tag z wp; do
	case $tag in
	D) dwp[$z]=$wp ;;
	A) awp[$z]=$wp ;;
	esac
done < "$T_WORK/durable.log"
for z in $WZ; do
	cw=$(hm_cw "$dev" $(zs $z))
	wp=${cw#* }
	if [ "$wp" -ge "${dwp[$z]:-0}" ] && [ "$wp" -le "${awp[$z]:-0}" ]; then
		ok "zone $z: wp $wp between its durable ${dwp[$z]:-0} and acknowledged ${awp[$z]:-0}"
	else
		not_ok "zone $z: wp between durable and acknowledged" \
			"wp $wp, durable ${dwp[$z]:-0}, acknowledged ${awp[$z]:-0}"
	fi
	case ${cw% *} in
	em|cl) ok "zone $z came back closed or empty ($cw)" ;;
	*) not_ok "zone $z came back closed or empty" "$cw" ;;
	esac
	if out=$(cmp <(hm_read "$dev" $(zs $z) "$wp") <(hm_pattern "$seed" $z 0 $((wp / 8))) 2>&1); then
		ok "zone $z: [0, wp) is exactly the writer's data"
	else
		not_ok "zone $z: [0, wp) is exactly the writer's data" "$out"
	fi
	hm_assert_zero "zone $z: zeros after the wp" "$dev" $(( $(zs $z) + wp )) 64
done

# ---- 6. a cut while a flush waits for the modelled destage -----------
# A 1 MB/s drive with a 64 MiB write cache: 8 MiB of zone writes are
# acknowledged from the cache at once, and a flush then waits about 8 s
# for the model to destage them. A cut meanwhile ends that wait: the
# message returns within seconds, the flush fails.
check "remove" dm_remove "$name"
K="rpm 7200 seek_t2t_us 1000 seek_avg_us 8500 seek_full_us 17000 od_mbps 1 id_mbps 1"
check "create with a 1 MB/s timing model and a 64 MiB write cache" \
	dm_create "$name" "0 $LEN smr $back host-managed $ZS 2 conv_zones 2 timing 14 $K buffer_mib 64"
udevadm settle 2> /dev/null
check "reset zone 3" hm_zop "$dev" reset $(zs 3)
read -r fl_ms fl_err cut_ms < <(python3 - "$dev" "$name" $(( $(zs 3) * 512 )) <<'EOF'
import mmap, os, subprocess, sys, threading, time
dev, name, off = sys.argv[1], sys.argv[2], int(sys.argv[3])
fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
buf = mmap.mmap(-1, 128 << 10)
for i in range(64):
    os.pwritev(fd, [buf], off + i * (128 << 10))
res = {}
def flush():
    t = time.monotonic()
    try:
        os.fsync(fd)
        res["err"] = "none"
    except OSError as e:
        res["err"] = e.strerror.replace(" ", "_")
    res["ms"] = int((time.monotonic() - t) * 1000)
th = threading.Thread(target=flush)
th.start()
time.sleep(1)
t = time.monotonic()
subprocess.run(["dmsetup", "message", name, "0", "power_cut"], check=True)
cut = int((time.monotonic() - t) * 1000)
th.join(60)
print(res.get("ms", -1), res.get("err", "hung"), cut)
EOF
)
diag "flush ${fl_ms} ms (${fl_err}), power_cut message ${cut_ms} ms"
# Under the 8 s destage: a slow (debug) kernel's scale widens the
# limits, never past 6 and 7 s.
sc=${SMR_TIMEOUT_SCALE:-1}
lc=$((4000 * sc)) lf=$((5000 * sc))
[ $lc -le 6000 ] || lc=6000
[ $lf -le 7000 ] || lf=7000
if [ "${cut_ms:-99999}" -lt $lc ]; then ok "the cut does not wait for the destage (${cut_ms} ms)"
else not_ok "the cut does not wait for the destage" "power_cut took ${cut_ms:-?} ms"; fi
assert_eq "the flush waiting for the destage fails" Input/output_error "$fl_err"
if [ "${fl_ms:-99999}" -lt $lf ]; then ok "the flush ended at the cut (${fl_ms} ms)"
else not_ok "the flush ended at the cut" "${fl_ms:-?} ms"; fi

# ---- 7. a host that keeps writing to the cut drive --------------------------
# Power back waits until the cut drive has nothing in flight. Writes that
# arrive after the cut fail at once and must not count as in flight, or
# writers hammering the cut drive could keep the count above 0 and the
# reload would fail (EBUSY) after the settle's 30 s. On one vCPU the code
# before that fix got through here too (in 10 s, 2026-11-29): this checks
# the behaviour, it does not reproduce the race.
name7=t_${TID}_fl
dev7=/dev/mapper/$name7
back7=$(new_backing 80) || bail "no backing device"
hm_create "$name7" $LEN "$back7" $ZS conv_zones 2 format || bail "cannot create $name7"
check "cut the power" hm_msg "$dev7" power_cut
fio --name=flood --filename="$dev7" --rw=randwrite --bs=4k --ioengine=libaio \
	--iodepth=32 --numjobs=2 --direct=1 --size=$((2 * ZS * 512)) --time_based \
	--runtime=300 --continue_on_error=all > "$T_WORK/flood.log" 2>&1 &
flood=$!
sleep 3
kill -0 $flood 2> /dev/null && ok "64 writers keep writing to the cut drive" ||
	not_ok "64 writers keep writing to the cut drive" "$(tail -n 5 "$T_WORK/flood.log")"
table7=$(dmsetup table "$name7")
t0=$SECONDS
check "the power comes back meanwhile (reload)" dmsetup reload "$name7" --table "$table7"
check "resume" dmsetup resume "$name7"
diag "reload and resume: $((SECONDS - t0)) s"
kill $flood 2> /dev/null
wait $flood 2> /dev/null
assert_eq "status: on" "on 0" "$(dmsetup status "$name7" | awk '{ print $(NF - 1), $NF }')"
hm_put w7 "$dev7" $(zs 2) 8 "it takes writes again"
check "remove" dm_remove "$name7"

dmesg_check "no kernel warnings"
_show_result
