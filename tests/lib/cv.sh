# SPDX-License-Identifier: GPL-2.0
# tests/lib/cv.sh - helpers for the dm-caveat tests (tests/test_cv_*.sh).
# Source after tests/common.sh.

CV_MODEL=$SMR_ROOT/tests/lib/cv_model.py

# cv_py ARGS...: run cv_model.py through run_checks (tests/common.sh).
cv_py() {
	run_checks "cv_model.py $1" python3 "$CV_MODEL" "$@"
}

# cv_field NAME FIELD: one field of the caveat status line (see
# docs/dm-caveat.rst): writes damaging_writes damaged_blocks
# live_damage_writes live_damaged_blocks damaged_reads valid_blocks
# commits mem_bytes journal_writes model_busy_ms model_lag_ms
# cached_writes bad_read_errors bad_write_errors bad_remaps
# transient_errors delayed_ios power power_left.
cv_field() {
	local i=0 f
	for f in writes damaging_writes damaged_blocks live_damage_writes \
		live_damaged_blocks damaged_reads valid_blocks commits mem_bytes \
		journal_writes model_busy_ms model_lag_ms cached_writes \
		bad_read_errors bad_write_errors bad_remaps transient_errors \
		delayed_ios power power_left; do
		if [ "$f" = "$2" ]; then
			dmsetup status "$1" | awk -v k=$((i + 4)) '{ print $k }'
			return
		fi
		i=$((i + 1))
	done
	echo "cv_field: unknown field $2" >&2
	return 1
}

# cv_msg NAME ARGS...: a target message; prints its result.
cv_msg() {
	local n=$1; shift
	dmsetup message "$n" 0 "$@"
}
