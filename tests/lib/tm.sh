# SPDX-License-Identifier: GPL-2.0
# tests/lib/tm.sh - helpers for the timing-model tests (tests/test_tm_*.sh).
# Source after tests/common.sh.

# The model's arithmetic in Python (the kernel's charges).
TM="python3 $SMR_ROOT/tests/lib/tm_model.py"
# The timing keys of a 7200 rpm disk the tests share (cmr-7k500's).
TM_K="rpm 7200 seek_t2t_us 1000 seek_avg_us 8500 seek_full_us 17000 od_mbps 65 id_mbps 31"

# tm_fill NAME: write dm device NAME whole, sequentially, in 1 MiB
# writes (its size a whole number of MiB): a host-managed one zone by
# zone, in order; a drive-managed one past its cache (sequential bypass).
# The model times only what was written (test_cal_01, bench/clone-bench.sh).
tm_fill() {
	dd if=/dev/zero of="/dev/mapper/$1" bs=1M oflag=direct status=none \
		count=$(( $(blockdev --getsize64 "/dev/mapper/$1") >> 20 ))
}

# field NAME INDEX: the INDEX-th word of NAME's status line (1 = start).
field() { dmsetup status "$1" | awk -v k="$2" '{ print $k }'; }
# The caveat line: 3 words of dm's, then 10 counters, then the model's.
cv_busy() { field "$1" 14; }
cv_lag() { field "$1" 15; }

# tm_suspend_ms NAME, tm_remove_ms NAME: suspend (remove) dm device NAME
# and print how long the kernel took, in ms: the ioctl's time alone, not
# dmsetup's run. Under instruction counting the guest's clock leaps
# whenever the guest waits for the host, and starting dmsetup reads its
# program and libraries over the 9p root, then waits for udev's programs:
# on a loaded host one remove measured 10 s that way (CI, 2026-12-02).
tm_suspend_ms() { python3 -S "$SMR_ROOT/tests/lib/dm_ioctl_time.py" suspend "$1"; }
tm_remove_ms() { python3 -S "$SMR_ROOT/tests/lib/dm_ioctl_time.py" remove "$1"; }
# tm_write_ms DEV BLOCK: one 4 KiB O_DIRECT write of zeroes at 4 KiB
# block BLOCK of DEV; prints the write's own time in ms (not a process's
# start, as above).
tm_write_ms() {
	python3 -S - "$1" "$2" <<'EOF'
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 4096)
t0 = time.monotonic()
os.pwritev(fd, [buf], int(sys.argv[2]) * 4096)
print(int((time.monotonic() - t0) * 1000))
os.close(fd)
EOF
}

# Under instruction counting (a test's "# ICOUNT: 0" header: tests/vm-run
# runs it in a counted boot and sets SMR_ICOUNT) the guest's clock is the
# instructions it ran: the host's load does not reach what a test times,
# so the figures are exact and repeat from run to run (docs/testing.md,
# "Instruction counting").
# tm_tol WALL COUNTED: the tolerance in % a figure is held to, COUNTED
# under instruction counting, WALL in wall-clock time.
tm_tol() { if [ -n "${SMR_ICOUNT:-}" ]; then echo "$2"; else echo "$1"; fi; }
# tm_debug_kernel: the guest runs a kernel with KASAN (a debug kernel,
# docs/testing.md), whose own work per I/O is many times Debian's.
tm_debug_kernel() { grep -q ' kasan_report$' /proc/kallsyms 2> /dev/null; }

# tm_too_slow DESC WHY: the host was too slow for a check to say
# anything: a skip in wall-clock time (a loaded host); under instruction
# counting a failure, since the host's speed cannot be why (the guest's
# own work per I/O outgrew the model), except on a debug kernel, whose
# own work per I/O does outgrow it (2026-12-01, 6.12's lean debug kernel
# under counting: the backing 684 ms behind 1051 ms of modelled busy
# time in test_tm_01): a skip there too.
tm_too_slow() {
	if [ -n "${SMR_ICOUNT:-}" ] && ! tm_debug_kernel; then
		not_ok "$1" "under instruction counting: $2"
	else
		skip "$1" "$2${SMR_ICOUNT:+ (a debug kernel: its own work per I/O)}"
	fi
}

# within DESC GOT WANT PCT: ok if GOT is within PCT % of WANT.
within() {
	if awk -v g="$2" -v w="$3" -v p="$4" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= w * p / 100) }'; then
		ok "$1: $2 (model $3, within $4 %)"
	else
		not_ok "$1" "got $2, the model predicts $3 (tolerance $4 %)"
	fi
}
