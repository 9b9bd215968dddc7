# SPDX-License-Identifier: GPL-2.0
# bench/lib.sh - what the benchmarks share: rounds against a baseline in
# alternating order, one row per ratio, and the median of a column of
# figures. Sourced by hm-bench.sh, dm-bench.sh, cv-bench.sh, nl-bench.sh
# and all-bench.sh.
#
# A benchmark measures a workload on the baseline (dm-linear over the same
# sectors) and on the target, ROUNDS times, linear first in even rounds
# and the target first in odd ones (a shared host's speed drifts, and the
# first run after a switch of device is often slower under TCG). The
# figure is the median of each round's target/linear ratio, with the
# lowest and highest ratio beside it.
#
# BENCH_RATIOS (environment): a file to which bench_row appends one line
# per ratio, for bench/all-bench.sh's table:
#   model <TAB> workload <TAB> median <TAB> lo <TAB> hi <TAB> rounds
#   <TAB> linear median <TAB> target median <TAB> unit

# bench_median: the median of the figures on stdin, one per line.
bench_median() {
	sort -n | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else printf "%.4f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

# bench_abba ROUNDS BASE_FN TARGET_FN [ARGS...]: runs the two functions
# (each prints one figure; ARGS go to both) ROUNDS times in alternating
# order; prints "base target" per round. Returns non-zero if a function
# printed nothing.
bench_abba() {
	local n=$1 bf=$2 tf=$3 r b t
	shift 3
	for ((r = 0; r < n; r++)); do
		if [ $((r % 2)) = 0 ]; then
			b=$("$bf" "$@"); t=$("$tf" "$@")
		else
			t=$("$tf" "$@"); b=$("$bf" "$@")
		fi
		[ -n "$b" ] && [ -n "$t" ] || return 1
		echo "$b $t"
	done
}

# bench_row MODEL WORKLOAD UNIT FILE: FILE holds "base target" per round.
# Prints the report row (workload, medians, ratio, range; "below 0.95"
# where the median ratio is) and appends the ratio to BENCH_RATIOS.
bench_row() {
	local model=$1 name=$2 unit=$3 file=$4
	awk -v n="$name" -v u="$unit" -v m="$model" -v out="${BENCH_RATIOS:-}" '
		function median(a, k,   i, j, t) {
			if (k == 0) return 0
			for (i = 2; i <= k; i++)
				for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
			return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
		}
		NF >= 2 { k++; l[k] = $1; s[k] = $2; q[k] = $1 > 0 ? $2 / $1 : 0 }
		END {
			if (k == 0) { printf "  %-20s no figures", n; exit }
			lo = hi = q[1]
			for (i = 2; i <= k; i++) { if (q[i] < lo) lo = q[i]; if (q[i] > hi) hi = q[i] }
			qm = median(q, k); lm = median(l, k); sm = median(s, k)
			printf "  %-20s %10.1f %10.1f  %-5s  %5.3f  %5.3f-%5.3f%s", n, lm, sm, u, qm, lo, hi,
				(qm < 0.95 ? "  (below 0.95)" : "")
			if (out != "")
				printf "%s\t%s\t%.3f\t%.3f\t%.3f\t%d\t%.1f\t%.1f\t%s\n", m, n, qm, lo, hi, k, lm, sm, u >> out
		}' "$file"
}

# bench_header: the column heads of bench_row's rows.
bench_header() {
	echo "  workload              dm-linear     target  unit   ratio  range"
}

# insn_prep: for a guest script of bench/run-insns: saves the kernel's
# symbols for the host ($SMR_STATE/kallsyms) and sets INSN_MARK, the
# program to run before and after each phase the host compares.
insn_prep() {
	INSN_MARK=/var/lib/dm-smr/insn-prof/insn-mark
	[ -x "$INSN_MARK" ] || bail "no $INSN_MARK: run this through bench/run-insns"
	cat /proc/kallsyms > "$SMR_STATE/kallsyms" || bail "cannot save /proc/kallsyms"
}

# insn_phase DESC CMD...: one phase of a run-insns script, a check, then
# the mark that ends it (the script marks once before its first phase;
# run-insns compares phase 1 with 2, 3 with 4, ...).
insn_phase() {
	check "$@"
	"$INSN_MARK"
}
