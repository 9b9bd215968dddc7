#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 360
#
# Unmodified ext4 on a drive-managed device: mkfs, a metadata-heavy
# workload (2000 small files in 100 directories, a traversal, half of them
# removed) and a 64 MiB file (smaller than 200 MiB: TCG writes /dev/urandom
# at ~2.5 MiB/s); e2fsck -fn is clean after unmount, after dmsetup
# remove/create with a dirty cache (idle_ms 0; the small cache also forces
# foreground cleaning) and after cleaning; every file's sha256 (computed
# from the data written, not read back) matches after remove/create and a
# remount, and again after the cache was cleaned into the bands.
#
# Geometry: 512 MiB device, 8 MiB bands, 16 MiB cache.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"

_prep_test "dm: ext4 metadata and large-file workloads, fsck, remove/create, checksums"
dms_prep
require_cmd mkfs.ext4 e2fsck perl

LEN=$((512 * 2048))
BAND=16384
CACHE=32768
read -r _ NEED <<< "$(dms_need $LEN $BAND $CACHE)"
back=$(new_backing $(( (NEED + 2047) / 2048 ))) || bail "no backing device"
E=t_${TID}_e
DE=/dev/mapper/$E
TE=($LEN "$back" $BAND cache_sectors $CACHE idle_ms 0)
dms_create "$E" "${TE[@]}" || bail "cannot create $E"
MAN=$T_WORK/manifest

check "mkfs.ext4" mkfs.ext4 -q -F -b 4096 -E nodiscard,lazy_itable_init=0,lazy_journal_init=0 "$DE"
dms_expect "mkfs wrote through the device" "$DE" "host_write_sectors > 0" "errors == 0"
diag "after mkfs: $(dms_stats "$DE")"
check "mount" mount -t ext4 "$DE" "$T_MNT"

# 2000 files of 1..12 KiB in 100 directories, content from their name;
# the expected sha256 of each goes to the manifest.
t0=$SECONDS
check "create 2000 files in 100 directories" perl -MDigest::SHA=sha256_hex -e '
	my ($root, $man) = @ARGV;
	open(my $m, ">", $man) or die "$man: $!";
	srand(7);
	for my $d (0 .. 99) {
		mkdir("$root/d$d") or die "mkdir: $!";
		for my $f (0 .. 19) {
			my $n = 1024 * (1 + int(rand(12))) + int(rand(1000));
			my $seed = "dir $d file $f|";
			my $data = substr($seed x (int($n / length($seed)) + 1), 0, $n);
			substr($data, $_ * 97, 4) = pack("N", int(rand(2**32))) for 0 .. int($n / 97) - 1;
			open(my $o, ">", "$root/d$d/f$f") or die "open: $!";
			print $o $data;
			close($o) or die "close: $!";
			print $m sha256_hex($data), "  $root/d$d/f$f\n";
		}
	}
	close($m);' "$T_MNT" "$MAN"
check "sync" sync -f "$T_MNT"
diag "small files took $((SECONDS - t0)) s: $(dms_stats "$DE")"
n=$(find "$T_MNT" -type f | wc -l)
assert_eq "traversal finds 2000 files" 2000 "$n"
n=$(find "$T_MNT" -mindepth 1 -type d | wc -l)
assert_eq "traversal finds 100 directories (and lost+found)" 101 "$n"
# Remove the odd-numbered files: half of them.
check "remove 1000 files" perl -e '
	my ($root) = @ARGV;
	for my $d (0 .. 99) { for my $f (0 .. 19) {
		next unless $f % 2;
		unlink("$root/d$d/f$f") or die "unlink: $!";
	} }' "$T_MNT"
grep -vE '/f[0-9]*[13579]$' "$MAN" > "$MAN.kept" && mv "$MAN.kept" "$MAN"
assert_eq "1000 files left in the manifest" 1000 "$(wc -l < "$MAN")"
assert_eq "traversal finds 1000 files" 1000 "$(find "$T_MNT" -type f | wc -l)"

# A 64 MiB file; its sha256 from the stream written.
t0=$SECONDS
sum=$(set -o pipefail; dd if=/dev/urandom bs=1M count=64 iflag=fullblock status=none |
	tee "$T_MNT/big" | sha256sum) || not_ok "write the 64 MiB file"
echo "${sum%% *}  $T_MNT/big" >> "$MAN"
check "sync" sync -f "$T_MNT"
diag "big file took $((SECONDS - t0)) s: $(dms_stats "$DE")"
assert_eq "the big file is 64 MiB" $((64 * 1048576)) "$(stat -c %s "$T_MNT/big")"

dms_expect "ext4 used the cache and bypassed it for long runs" "$DE" \
	"cache_write_sectors > 0" "bypass_write_sectors > 65536" "errors == 0"

# checksums DESC: every file in the manifest, read from the device.
checksums() {
	local out t0=$SECONDS
	sync
	echo 3 > /proc/sys/vm/drop_caches
	if out=$(sha256sum --quiet -c "$MAN" 2>&1); then
		ok "$1: all $(wc -l < "$MAN") checksums match ($((SECONDS - t0)) s)"
	else
		not_ok "$1: checksums match" "$(head -n 20 <<< "$out")"
	fi
}
check "umount" umount "$T_MNT"
check "e2fsck -fn is clean" e2fsck -fn "$DE"
dms_load "$DE"
used=${DMS[cache_used]} live=${DMS[cache_live]}
diag "before remove: $(dms_stats "$DE")"
if [ "$used" -gt 0 ]; then ok "the cache holds $used blocks ($live live) before remove"
else not_ok "the cache holds blocks before remove (idle_ms 0)" "$(dms_stats "$DE")"; fi
check "remove" dm_remove "$E"
check "create again" dms_create "$E" "${TE[@]}"
dms_expect "the cache index was rebuilt" "$DE" "cache_used == $used" "cache_live == $live"
check "e2fsck -fn is clean after remove/create" e2fsck -fn "$DE"
check "mount again" mount -t ext4 "$DE" "$T_MNT"
checksums "after remove/create and remount"
assert_eq "traversal finds 1001 files" 1001 "$(find "$T_MNT" -type f | wc -l)"
check "umount" umount "$T_MNT"

check "message clean" dms_msg "$DE" clean
if w=$(dms_wait_clean "$DE" 90); then ok "clean emptied the cache in $w s"
else not_ok "clean empties the cache within 90 s" "$(dms_stats "$DE")"; fi
diag "after clean: $(dms_stats "$DE")"
check "e2fsck -fn is clean after cleaning" e2fsck -fn "$DE"
check "mount after cleaning" mount -t ext4 -o ro "$DE" "$T_MNT"
checksums "after cleaning (data now in the bands)"
check "umount" umount "$T_MNT"

dmesg_check
_show_result
