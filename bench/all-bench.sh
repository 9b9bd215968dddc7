#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 3600
# bench/all-bench.sh - every model against dm-linear on the same sectors,
# in one boot of the test VM, and one table of the ratios at the end, so
# that a regression shows in one look. bench/run-all boots the VM and
# runs it (or: tests/vm-run --results DIR bench/all-bench.sh).
#
# The timing model is off throughout: the figures are what each target
# costs over its backing, not the time a modelled drive takes.
#   hm      bench/hm-bench.sh --no-big: sequential writes at depth 1 and 4
#           in one zone, 4 writers on 4 zones, sequential and random reads
#   dm      bench/dm-bench.sh --ratios-only: random writes into the cache,
#           sequential writes (bypass), sequential and random reads
#   caveat  bench/cv-bench.sh on 4 GiB of the scratch disk: sequential
#           and random reads and writes, plain and with write_cache, and
#           the bounds docs/dm-caveat.rst states for random overwrites and
#           sequential rewrites
#   timing  caveat with DID 0 and no timing over a memory-backed null_blk,
#           4 KiB random writes at depth 32: what the model's hooks cost
#           while the model is off (bench/tm-bench.sh part 1)
# BENCH_PARTS (default "hm dm caveat timing") names the parts to run, so
# that work on one path can measure its rows alone; the table says which
# ran. Every figure is the median of BENCH_ROUNDS rounds (4) taken in turn,
# BENCH_RUNTIME seconds each (5). Prints "# bench:" lines; passes or
# fails on errors only, never on a figure. The rows also go to
# $SMR_STATE/ratios.tsv (bench/lib.sh's columns), for bench/run-all to
# set the boots of one run side by side.
#
# BENCH_BACKING says what the devices sit on: "nullb", memory-backed
# null_blk devices in the guest, each created for its part (hm 1 GiB,
# dm 512 MiB behind a 192 MiB cache, caveat 512 MiB; about 3.5 GiB of
# guest memory in all), or "disk", the scratch disk (/dev/vda, a file on
# the host) at the sizes the wall-clock figures of docs/benchmarks.md
# were taken with. The default is nullb in a boot under instruction
# counting (SMR_ICOUNT set; bench/run-all --exact), where a figure must
# not depend on the host's page cache, else disk.
. "$(dirname "$0")/../tests/common.sh"
_prep_test "all benchmarks, one table of ratios"
require_cmd fio dmsetup blkzone jq awk
require_target smr
require_target caveat
. "$SMR_ROOT/bench/lib.sh"

ROUNDS=${BENCH_ROUNDS:-4}
PARTS=" ${BENCH_PARTS:-hm dm caveat timing} "
PARTS=${PARTS//,/ }
for p in $PARTS; do
	case $p in hm|dm|caveat|timing) ;; *) bail "BENCH_PARTS: no part '$p' (hm, dm, caveat, timing)" ;; esac
done
# want NAME: whether part NAME runs.
want() { [[ $PARTS == *" $1 "* ]]; }
RUNTIME=${BENCH_RUNTIME:-5}
BACKING=${BENCH_BACKING:-$([ -n "${SMR_ICOUNT:-}" ] && echo nullb || echo disk)}
case $BACKING in
nullb|disk) ;;
*) bail "BENCH_BACKING is nullb or disk, not '$BACKING'" ;;
esac
if [ -n "${SMR_ICOUNT:-}" ]; then
	MODE="exact: instruction counting (-icount shift=$SMR_ICOUNT,sleep=off), backing $BACKING"
else
	MODE="wall clock, backing $BACKING"
fi
export BENCH_RATIOS=$T_WORK/ratios
: > "$BENCH_RATIOS"
T0=$(date +%s)

# part NAME CMD...: one benchmark script; its report becomes "# bench:"
# lines, its exit code a check.
part() {
	local name=$1 t=$(date +%s) rc
	shift
	"$@" > "$T_WORK/$name.log" 2>&1
	rc=$?
	grep -v '^ok \|^not ok \|^1\.\.' "$T_WORK/$name.log" | sed 's/^# //; s/^/bench: '"$name"': /' |
		while IFS= read -r l; do diag "$l"; done
	if [ $rc = 0 ]; then ok "$name measured ($(($(date +%s) - t)) s)"
	else not_ok "$name measured" "$name exited $rc"; fi
}

# backing MB_DISK MB_NULLB: a backing device of the run's kind.
backing() {
	if [ "$BACKING" = nullb ]; then new_nullb "$2"; else new_backing "$1"; fi
}
diag "bench: mode: $MODE"
diag "bench: parts:$PARTS"
if [ "$BACKING" = nullb ]; then HM_MB=1024 DM_MB=512; else HM_MB=8192 DM_MB=2048; fi
if want hm; then
	disk=$(backing 8300 1040) || bail "no backing for hm"
	part hm bash "$SMR_ROOT/bench/hm-bench.sh" --disk "$disk" --no-big --region-mb $HM_MB \
		--rounds "$ROUNDS" --runtime "$RUNTIME"
	drop_nullb "$disk"
fi
if want dm; then
	disk=$(backing 2700 760) || bail "no backing for dm"
	part dm bash "$SMR_ROOT/bench/dm-bench.sh" --disk "$disk" --ratios-only --dev-mb $DM_MB \
		--phase-cache-mb 192 --phase-mb 128 --rounds "$ROUNDS" --io-runtime "$RUNTIME"
	drop_nullb "$disk"
fi
# caveat over the run's kind of backing: its null_blk part, or its disk part.
if [ "$BACKING" = nullb ]; then CV_ON=(CV_BENCH_DISK=0 CV_BENCH_NULLB_MB=512)
else CV_ON=(CV_BENCH_NULLB=0); fi
want caveat && part caveat env SMR_WORK= CV_BENCH_ROUNDS="$ROUNDS" CV_BENCH_RUNTIME="$RUNTIME" \
	"${CV_ON[@]}" CV_BENCH_MEM=0 bash "$SMR_ROOT/bench/cv-bench.sh"

# The timing model's cost while off: tm-bench.sh part 1 in rounds.
timing_part() {
	nb=$(new_nullb 1024) || bail "no null_blk"
	S=$((960 * 2048))
	dm_create alb_lin "0 $S linear $nb 0" || bail "dm-linear"
	dm_create alb_cav "0 $S caveat $nb 0 0 1 format" || bail "caveat"
	# Written once first, as dm-linear's blocks are: the first write to a
	# block allocates its damage-map page, caveat's cost, not the model's.
	fio --name=f --filename=/dev/mapper/alb_cav --rw=write --bs=1M --direct=1 \
		--ioengine=libaio --iodepth=8 --output=/dev/null
	iops() {
		fio --name=r --filename="/dev/mapper/$1" --rw=randwrite --bs=4k --number_ios=20000 \
			--norandommap=1 --ioengine=libaio --iodepth=32 --randseed=5 --direct=1 \
			--output-format=terse --terse-version=3 2>/dev/null | awk -F';' '$1 == 3 { print $49 }'
	}
	lin_iops() { iops alb_lin; }
	cav_iops() { iops alb_cav; }
	if bench_abba "$ROUNDS" lin_iops cav_iops > "$T_WORK/tm"; then
		diag "bench: timing: $(bench_row "timing off" "rand write 4K qd32" IOPS "$T_WORK/tm")"
		ok "timing off measured"
	else
		not_ok "timing off measured" "fio gave no figure"
	fi
	dm_remove alb_cav
	dm_remove alb_lin
}
want timing && timing_part

# The table.
rev=$(git -C "$SMR_ROOT" describe --always --dirty 2> /dev/null || echo unknown)
diag "bench: ======== target / dm-linear, median of $ROUNDS rounds (range), ${RUNTIME} s runs"
diag "bench: mode: $MODE; parts:$PARTS"
diag "bench: commit $rev, kernel $(uname -r), $(nproc) cpus, $(date -u '+%Y-%m-%d %H:%M UTC'), $(($(date +%s) - T0)) s"
cp "$BENCH_RATIOS" "$SMR_STATE/ratios.tsv" 2> /dev/null
awk -F'\t' '{ printf "%-20s %-22s %6.3f  %5.3f-%5.3f%s\n", $1, $2, $3, $4, $5,
		($3 < 0.95 && $2 !~ /^bound/ ? "  below 0.95" : "") }' "$BENCH_RATIOS" |
	while IFS= read -r l; do diag "bench: $l"; done
_show_result
