# SPDX-License-Identifier: GPL-2.0
# tests/lib/zoned_fs.sh - a zoned file system on a host-managed dm-smr
# device, end to end, for test_fs_01_f2fs.sh and test_fs_02_btrfs.sh:
# fio with verification on files, a tree of small files, umount and the
# file system's own check; then the device is removed and re-created
# from its own "dmsetup table" line (no format), must come back with
# every write pointer where it was, and the file system must mount it
# again with every file intact, keep writing at the reloaded write
# pointers, and pass its check again. Throughout, the target must refuse
# no write and keep open (and, with MAXACTIVE set, active) zones within
# the device's limits.
#
# The test sets name, dev, MAXOPEN (and MAXACTIVE), creates the device,
# makes the file system, and calls zfs_round_trip FS FSCK_FN.

# The status fields by name (hm_stat, HM_STATUS_FIELDS).
. "$(dirname "${BASH_SOURCE[0]}")/hm.sh"

# st NAME FIELD: one status field of dm device NAME.
st() { hm_stat "$1" "$2"; }

# check_counters NAME WHEN: the target refused nothing and kept the open
# limit, and the active one if MAXACTIVE is set.
check_counters() {
	local name=$1 when=$2 open active
	assert_eq "$when: status has 30 fields after the mode" 30 \
		"$(dmsetup status "$name" | awk '{ print NF - 4 }')"
	assert_eq "$when: wp_errors" 0 "$(st "$name" wp_errors)"
	assert_eq "$when: errors" 0 "$(st "$name" errors)"
	open=$(( $(st "$name" imp_open) + $(st "$name" exp_open) ))
	if [ "$open" -le $MAXOPEN ]; then ok "$when: $open open zones <= max_open $MAXOPEN"
	else not_ok "$when: open zones <= max_open" "$open open, limit $MAXOPEN"; fi
	[ -n "${MAXACTIVE:-}" ] || return 0
	active=$((open + $(st "$name" closed)))
	if [ "$active" -le $MAXACTIVE ]; then ok "$when: $active active zones <= max_active $MAXACTIVE"
	else not_ok "$when: active zones <= max_active" "$active active, limit $MAXACTIVE"; fi
}

# zones DEV: "start wp" per sequential zone, from the zone report (blkzone
# prints the write pointer relative to the zone start).
zones() {
	blkzone report "$1" | awk '/SEQ_WRITE_REQUIRED/ {
		s = $2; w = $8; sub(",", "", s); sub(",", "", w); print s, w }'
}

# sums DIR: md5 of every file under DIR, sorted, paths relative.
sums() {
	(cd "$1" && find . -type f -print0 | sort -z | xargs -0 md5sum)
}

# zfs_round_trip FS FSCK_FN: the round trip above, on the FS just made on
# $dev; FSCK_FN WHEN runs the file system's own check (ok/not_ok).
zfs_round_trip() {
	local fs=$1 fsck=$2 fio_log rc writes printed open_before full_before
	local nwritten out

	check "mount $fs" mount -t "$fs" "$dev" "$T_MNT" || bail "mount failed"
	# 16 MiB of 8 KiB random writes over 4 files (which a zoned file
	# system turns into appends) and a 16 MiB sequential file with
	# O_DIRECT, each read back and checked by fio.
	mkdir -p "$T_MNT/fio"
	fio_log=$T_WORK/fio-$fs.log
	(cd "$T_WORK" && fio --directory="$T_MNT/fio" --ioengine=psync \
		--verify=crc32c --do_verify=1 --end_fsync=1 --group_reporting \
		--name=rand --rw=randwrite --bs=8k --nrfiles=4 --filesize=4M --size=16M \
		--name=seq --rw=write --bs=1M --size=16M --direct=1) > "$fio_log" 2>&1
	rc=$?
	if [ $rc = 0 ]; then ok "fio randwrite+write with crc32c verify on $fs"
	else not_ok "fio randwrite+write with crc32c verify on $fs" "fio exited $rc" \
		"$(tail -n 30 "$fio_log")"; fi

	# Some metadata-heavy work too: a tree of small files, one removed.
	mkdir -p "$T_MNT/tree"
	for i in $(seq 1 40); do
		head -c $((i * 997)) /dev/urandom > "$T_MNT/tree/f$i"
	done
	rm -f "$T_MNT/tree/f7"
	check "sync" sync

	sums "$T_MNT" > "$T_WORK/sums" 2>/dev/null
	assert_eq "files to checksum (5 fio, 39 small)" 44 "$(grep -c . "$T_WORK/sums")"
	check "umount" umount "$T_MNT" || bail "umount failed"

	writes=$(st "$name" writes)
	if [ "${writes:-0}" -gt 0 ]; then ok "status: writes > 0 ($writes)"
	else not_ok "status: writes > 0" "writes=$writes"; fi
	check_counters "$name" "after $fs"
	"$fsck" "first mount"
	check_counters "$name" "after the $fs check"

	# Remove and re-create from the printed table.
	printed=$(dmsetup table "$name")
	if [[ " $printed " != *" format "* ]]; then ok "dmsetup table has no 'format'"
	else not_ok "dmsetup table has no 'format'" "$printed"; fi
	zones "$dev" > "$T_WORK/zones.before"
	open_before=$(( $(st "$name" imp_open) + $(st "$name" exp_open) + $(st "$name" closed) ))
	full_before=$(st "$name" full)
	nwritten=$(awk '$2 !~ /^0x0*$/' "$T_WORK/zones.before" | wc -l)
	if [ "$nwritten" -gt 0 ]; then
		ok "$fs left written sequential zones ($nwritten)"
	else
		not_ok "$fs left written sequential zones" "every write pointer is at its zone start"
	fi

	check "dmsetup remove" dm_remove "$name" || bail "remove failed"
	check "dmsetup create from the printed table (load, no format)" \
		dm_create "$name" "$printed" || bail "re-create failed: $printed"

	assert_eq "reload: nr_zones" $NZ "$(st "$name" nr_zones)"
	assert_eq "reload: no zone open" 0 $(( $(st "$name" imp_open) + $(st "$name" exp_open) ))
	assert_eq "reload: open and closed zones come back closed" "$open_before" "$(st "$name" closed)"
	assert_eq "reload: full zones stay full" "$full_before" "$(st "$name" full)"
	# (reads are not zero: udev probes the new device)
	assert_eq "reload: write counter starts at zero" 0 "$(st "$name" writes)"
	zones "$dev" > "$T_WORK/zones.after"
	if cmp -s "$T_WORK/zones.before" "$T_WORK/zones.after"; then
		ok "reload: every write pointer is where it was"
	else
		not_ok "reload: every write pointer is where it was" \
			"$(diff "$T_WORK/zones.before" "$T_WORK/zones.after" | head -10)"
	fi

	# Mount again: files intact, and writes continue at the write
	# pointers the target reloaded.
	check "mount $fs again" mount -t "$fs" "$dev" "$T_MNT" || bail "second mount failed"
	out=$(cd "$T_MNT" && md5sum --quiet -c "$T_WORK/sums" 2>&1)
	if [ $? = 0 ]; then ok "every file's md5 matches after remove/create"
	else not_ok "every file's md5 matches after remove/create" "$(head -10 <<< "$out")"; fi
	head -c $((8 << 20)) /dev/urandom > "$T_WORK/late"
	check "write 8 MiB after the reload" dd if="$T_WORK/late" of="$T_MNT/late" bs=1M \
		conv=fsync status=none
	check "sync" sync
	check "umount" umount "$T_MNT"
	check "mount a third time" mount -t "$fs" "$dev" "$T_MNT"
	check "the file written after the reload reads back" cmp "$T_WORK/late" "$T_MNT/late"
	check "umount" umount "$T_MNT"
	"$fsck" "after the reload"
	check_counters "$name" "after the reload"
}
