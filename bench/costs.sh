#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# bench/costs.sh - what the suite's everyday operations cost in the guest
# it runs in: process starts, device-mapper calls, a dm-linear write
# stream, and how long the boot took to get here (udev's coldplug
# included). Run by bench/run-costs through tests/vm-run --exec; prints
# "COST name count seconds ms-each" lines and "BOOT" lines.
#
# The suite is mostly short processes, so these figures are what a kernel
# build (a debug one, say) does to the suite's time; docs/testing.md,
# "Where a debug kernel's time goes".
set -uo pipefail

now() { date +%s.%N; }

# cost NAME COUNT CMD...: run CMD COUNT times, print the mean.
cost() {
	local name=$1 n=$2 t0 t1 i
	shift 2
	t0=$(now)
	for ((i = 0; i < n; i++)); do "$@" > /dev/null 2>&1 || { echo "costs: $name failed: $*" >&2; return 1; }; done
	t1=$(now)
	awk -v n="$n" -v a="$t0" -v b="$t1" -v name="$name" \
		'BEGIN { printf "COST %-28s %4d %8.2f s %9.1f ms\n", name, n, b - a, (b - a) * 1000 / n }'
}

up=$(cut -d' ' -f1 /proc/uptime)
echo "BOOT kernel $(uname -r), $(nproc) CPU, first command at ${up%.*} s of uptime"
dmesg | sed -n 's/^\[ *\([0-9.]*\)\] virtme-ng-init: \(triggering udev coldplug\|waiting for udev to settle\|udev is done\)$/BOOT \1 s: \2/p'
echo "BOOT command line extras: $(tr ' ' '\n' < /proc/cmdline | grep -vE '^(virtme|console=|earlyprintk|root|quiet|loglevel|panic=|nr_open|raid=|ro$)' | tr '\n' ' ')"

N=${COSTS_N:-20}
cost "/bin/true" $((N * 5)) /bin/true
cost "python3 -c pass" $((N / 4 + 1)) python3 -c pass
cost "dmsetup version" "$N" dmsetup version
modprobe dm_mod 2> /dev/null
modprobe null_blk nr_devices=1 gb=1 memory_backed=1 ||
	{ echo "costs: cannot load null_blk" >&2; exit 1; }
dev=/dev/nullb0
sz=$(blockdev --getsz $dev)
create_remove() {
	echo "0 2048 linear $dev 0" | dmsetup create costs_t --noudevsync &&
		dmsetup remove costs_t --noudevsync
}
cost "dmsetup create+remove" $((N / 2)) create_remove
echo "0 $sz linear $dev 0" | dmsetup create costs_lin || exit 1
cost "dd 64 x 1 MiB O_DIRECT" 4 dd if=/dev/zero of=/dev/mapper/costs_lin bs=1M count=64 oflag=direct
cost "dd 4096 x 4 KiB O_DIRECT" 2 dd if=/dev/zero of=/dev/mapper/costs_lin bs=4k count=4096 oflag=direct
dmsetup remove costs_lin
rmmod null_blk 2> /dev/null
exit 0
