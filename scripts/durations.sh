#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/durations.sh - print tests/durations again from what make check
# (scripts/check.sh) printed: each test's seconds, the mean over the
# kernels it ran on. A test in the shared boot counts its own time (the
# "done ... in Ns" line), a crash test the time of all its boots (the
# "VM ended ... after Ns" lines of boots named after it).
#
#   scripts/durations.sh CHECK-LOG... > tests/durations
#
# check.sh's lines carry a "laneN: " prefix (two lanes) and a "===
# kernel VER:" line starts each kernel of a lane.
set -euo pipefail
[ $# -gt 0 ] || { sed -n '3,12s/^# \{0,1\}//p' "$0"; exit 2; }

sed -n '/^#/p; /^[^#]/q' "$(dirname "$0")/../tests/durations"
awk '
	{
		lane = "1"
		if (match($0, /lane[0-9]+: /)) lane = substr($0, RSTART + 4, RLENGTH - 6)
	}
	/=== kernel [^ ]+:/ {
		match($0, /=== kernel [^ ]+:/)
		kernel[lane] = substr($0, RSTART + 11, RLENGTH - 12)
		next
	}
	/ done [0-9]+ test_[^ ]+\.sh: .* in [0-9]+s$/ {
		for (i = 1; i <= NF; i++) if ($i == "done") break
		name = $(i + 2); sub(/:$/, "", name)
		secs = $NF; sub(/s$/, "", secs)
		run[name, kernel[lane]] += secs
		next
	}
	/ boot test_[^ ]+\.b[0-9]+: VM ended .* after [0-9]+s$/ {
		for (i = 1; i <= NF; i++) if ($i == "boot") break
		name = $(i + 1); sub(/\.b[0-9]+:$/, ".sh", name)
		secs = $NF; sub(/s$/, "", secs)
		boots[name, kernel[lane]] += secs
	}
	END {
		# A crash test: its boots; any other: its own time.
		for (key in run) if (!(key in boots)) val[key] = run[key]
		for (key in boots) val[key] = boots[key]
		for (key in val) {
			split(key, f, SUBSEP)
			n[f[1]]++; sum[f[1]] += val[key]
		}
		for (name in n) printf "%s %d\n", name, sum[name] / n[name] + 0.5
	}
' "$@" | sort
