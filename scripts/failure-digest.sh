#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/failure-digest.sh RESULTS PLAN LANES - what failed in a run of
# scripts/check.sh, short enough to read in the last screen of a CI log:
# for each failed test, its kernel and lane, its failed steps and the end
# of its log (with the passing steps left out). A planned suite that left
# no suite.tap (a VM or vm-run that died) is named too. Prints nothing
# when everything passed.
set -uo pipefail
[ $# = 3 ] || { echo "usage: $0 RESULTS PLAN LANES" >&2; exit 2; }
results=$1 plan=$2 lanes=$3

while read -r lane kver; do
	dir=$results/$kver
	[ "$lanes" = 1 ] || dir+=/lane$lane
	if [ ! -f "$dir/suite.tap" ]; then
		echo "== $kver lane $lane: no suite.tap (its build, the VM or vm-run failed)"
		continue
	fi
	# One line a failed test: its name, then its failed steps, tab-separated.
	# A result line names the test after "selftests: smr: " and may end
	# in a reason: "not ok 3 selftests: smr: test_b.sh # exit=1".
	awk '
		/^# selftests: / { steps = "" }
		/^# not ok / { steps = steps "\t" substr($0, 3) }
		/^not ok / {
			name = $0
			sub(/^.*selftests: [^:]*: /, "", name)
			sub(/[ \t].*$/, "", name)
			print name steps
		}
	' "$dir/suite.tap" | while IFS=$'\t' read -r -a f; do
		echo "== $kver lane $lane: ${f[0]} failed"
		for step in "${f[@]:1}"; do echo "   $step" | cut -c1-200; done
		for log in "$dir/logs/${f[0]%.sh}".*log; do
			[ -f "$log" ] || continue
			echo "   end of ${log#"$results"/}:"
			grep -v '^ok ' "$log" | tail -n 8 | cut -c1-200 | sed 's/^/   | /'
		done
	done
done < <(awk '{ print $1, $2 }' "$plan" | sort -u)
exit 0
