#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 1800
# bench/hm-pairs.sh - one host-managed row, measured finely enough to tell
# a 5 % cost from the noise: many short pairs of runs (dm-linear then smr,
# smr then dm-linear, ...) over the same sectors in one boot, and the
# median of the pairs' ratios with a bootstrap confidence interval.
#
# Runs in the test VM:
#   tests/vm-run --results DIR bench/hm-pairs.sh
# PAIRS_N (40) pairs of one PAIRS_MB (2048) MiB pass each of 1 MiB
# sequential writes at depth PAIRS_QD (4), fio zonemode=zbd on both
# devices (dm-linear with fio's emulated 256 MiB zones), every smr zone
# reset before its run, the region written once before the first.
#
# bench/hm-bench.sh's rounds are few and long (a pass over 8 GiB); its
# per-round ratios span a fifth either way under TCG, so a row's median
# moves by up to a tenth between runs of the same code. Here each run is
# shorter and noisier, but the pairs are many, and the interval says how
# far the median can be trusted. Prints "# bench:" lines; passes or
# fails on errors only.
. "$(dirname "$0")/../tests/common.sh"
_prep_test "host-managed writes, many short pairs"
require_cmd fio dmsetup blkzone jq python3
require_target smr
. "$SMR_ROOT/bench/lib.sh"

N=${PAIRS_N:-40}
MB=${PAIRS_MB:-2048}
QD=${PAIRS_QD:-4}
ZS=524288	# 256 MiB zones
len=$(( (MB + 255) / 256 * ZS ))

disk=$(new_backing $((len / 2048 + 1))) || bail "no backing device"
dm_create hpp_smr "0 $len smr $disk host-managed $ZS 1 format" || bail "cannot create smr"
# smr keeps its zone data after its first MiB of metadata.
dm_create hpp_lin "0 $len linear $disk 2048" || bail "cannot create dm-linear"
dd if=/dev/zero of=/dev/mapper/hpp_lin bs=1M count=$((len / 2048)) oflag=direct status=none ||
	bail "cannot fill the region"

# pass DEV FIO-ARGS...: MiB/s of one pass.
pass() {
	local dev=$1
	shift
	fio --name=p --filename="/dev/mapper/$dev" --ioengine=libaio --direct=1 \
		--rw=write --bs=1M --iodepth="$QD" --size="${MB}M" \
		--output-format=json "$@" 2> /dev/null |
		jq -r '.jobs[0].write.bw_bytes / 1048576'
}
lin() { pass hpp_lin --zonemode=zbd --zonesize=256M; }
smr() { blkzone reset /dev/mapper/hpp_smr && pass hpp_smr --zonemode=zbd; }

diag "bench: $N pairs of one $MB MiB pass, 1 MiB writes at depth $QD, kernel $(uname -r), $(nproc) cpus"
if bench_abba "$N" lin smr > "$T_WORK/pairs"; then
	ok "$N pairs measured"
else
	not_ok "$N pairs measured" "fio gave no figure"
fi
diag "bench: $(bench_header)"
diag "bench: $(bench_row hm "seq write 1M qd$QD" MiB/s "$T_WORK/pairs")"
# The median's 90 % interval: 2000 resamples of the pairs, with
# replacement; the 5th and 95th percentile of their medians.
python3 - "$T_WORK/pairs" <<'EOF' | while IFS= read -r l; do diag "bench: $l"; done
import random, statistics, sys
p = [x.split() for x in open(sys.argv[1])]
q = [float(s) / float(l) for l, s in (x for x in p if len(x) == 2) if float(l) > 0]
if not q:
    sys.exit(print("no pairs to take a median of"))
random.seed(1)
m = sorted(statistics.median(random.choices(q, k=len(q))) for _ in range(2000))
print("smr/linear over %d pairs: median %.3f, 90%% interval of the median %.3f-%.3f, mean %.3f"
      % (len(q), statistics.median(q), m[100], m[1899], statistics.mean(q)))
EOF
diag "bench: smr status after: $(dmsetup status hpp_smr)"
_show_result
