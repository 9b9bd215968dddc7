# SPDX-License-Identifier: GPL-2.0
# bench/thin.sh - sourced by the benchmarks that need a device larger than
# the huge sparse disk: a dm-thin volume on it, which stores only what is
# written (64 KiB blocks); and the removal of what a benchmark made.

# dm_remove_existing NAME...: remove each dm device that exists.
dm_remove_existing() {
	local d
	for d in "$@"; do
		dmsetup info "$d" > /dev/null 2>&1 && dmsetup remove --retry "$d" > /dev/null 2>&1
	done
	return 0
}

# thin_backing PREFIX DISK SECTORS: a thin volume /dev/mapper/PREFIX_thin
# of SECTORS on DISK: pool metadata in DISK's first GiB, pool data in the
# next 64 GiB, both sparse. False (with a line on stderr) if dm-thin is
# missing or a step fails.
thin_backing() {
	local p=$1 disk=$2 sectors=$3
	modprobe dm-thin-pool 2> /dev/null
	dmsetup targets | grep -q '^thin-pool ' || { echo "no dm-thin target" >&2; return 1; }
	dmsetup create ${p}_tmeta --table "0 2097152 linear $disk 0" &&
	dmsetup create ${p}_tdata --table "0 134217728 linear $disk 2097152" &&
	dd if=/dev/zero of=/dev/mapper/${p}_tmeta bs=4k count=1 oflag=direct status=none &&
	dmsetup create ${p}_pool --table "0 134217728 thin-pool /dev/mapper/${p}_tmeta /dev/mapper/${p}_tdata 128 0 1 skip_block_zeroing" &&
	dmsetup message ${p}_pool 0 "create_thin 0" &&
	dmsetup create ${p}_thin --table "0 $sectors thin /dev/mapper/${p}_pool 0"
}

# thin_remove PREFIX: remove what thin_backing made (what exists of it).
thin_remove() {
	dm_remove_existing ${1}_thin ${1}_pool ${1}_tdata ${1}_tmeta
}
