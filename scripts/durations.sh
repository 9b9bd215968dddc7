#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/durations.sh - tests/durations again, from what make check
# (scripts/check.sh) printed: each test's seconds, the mean over the
# kernels (and logs) it ran in. A test in a shared boot counts its own
# time (the "done ... in Ns" line), a crash test the time of all its
# boots (the "VM ended ... after Ns" or "VM killed after Ns" lines of
# the boots named after it); the tests of a counted boot (ICOUNT), whose
# clock runs ahead of the host's, share its host time in proportion to
# their own. A test no log has keeps its line.
#
#   scripts/durations.sh CHECK-LOG... > d && mv d tests/durations
#
# (Through a file: the table's header and old lines are read from
# tests/durations.) check.sh's lines carry a "laneN: " prefix (two
# lanes), and a "=== kernel VER:" line starts each kernel of a lane.
set -euo pipefail
[ $# -gt 0 ] || { sed -n '3,14s/^# \{0,1\}//p' "$0"; exit 2; }
table=$(dirname "$0")/../tests/durations

sed -n '/^#/p; /^[^#]/q' "$table"
awk '
	FNR == 1 { file++; delete kernel }
	{
		lane = "1"
		if (match($0, /lane[0-9]+: /)) lane = substr($0, RSTART + 4, RLENGTH - 6)
	}
	/=== kernel [^ ]+:/ {
		match($0, /=== kernel [^ ]+:/)
		kernel[lane] = substr($0, RSTART + 11, RLENGTH - 12)
		next
	}
	/ boot [^ ]+: starting VM/ {
		for (i = 1; i <= NF; i++) if ($i == "boot") break
		id = $(i + 1); sub(/:$/, "", id)
		boot[lane] = id; npend[lane] = 0; gsum[lane] = 0
		next
	}
	/ done [0-9]+ test_[^ ]+\.sh: .* in [0-9]+s$/ {
		for (i = 1; i <= NF; i++) if ($i == "done") break
		name = $(i + 2); sub(/:$/, "", name)
		secs = $NF; sub(/s$/, "", secs)
		key = name SUBSEP file SUBSEP kernel[lane]
		if (boot[lane] ~ /^icount/) {
			# The guest clock of a counted boot runs ahead of the
			# host: scaled when the boot ends, below.
			pend[lane, ++npend[lane]] = key; gsecs[lane, npend[lane]] = secs
			gsum[lane] += secs
		} else {
			run[key] += secs
		}
		next
	}
	/ boot icount[0-9]+: VM ended .* after [0-9]+s$/ {
		secs = $NF; sub(/s$/, "", secs)
		scale = (gsum[lane] > secs) ? secs / gsum[lane] : 1
		for (j = 1; j <= npend[lane]; j++) run[pend[lane, j]] += gsecs[lane, j] * scale
		npend[lane] = 0
		next
	}
	/ boot test_[^ ]+\.b[0-9]+: VM (ended .* after|killed after) [0-9]+s$/ {
		for (i = 1; i <= NF; i++) if ($i == "boot") break
		name = $(i + 1); sub(/\.b[0-9]+:$/, ".sh", name)
		secs = $NF; sub(/s$/, "", secs)
		boots[name, file SUBSEP kernel[lane]] += secs
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
		# The tests no log has keep their old line.
		while ((getline line < old) > 0)
			if (line !~ /^#/ && split(line, f, " ") == 2 && !(f[1] in n)) print line
	}
' old="$table" "$@" | sort
