#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# TIMEOUT: 240
#
# Drive-managed dm-smr ends each bio it sends to the backing device once.
# The backing queue's completion accounting (rq_qos_done_bio: blk-iocost,
# blk-iolatency) runs at every bio_endio() of a bio it throttled; a bio
# ended twice while still charged to its cgroup would be counted out
# twice, which blk-iolatency catches with a WARNING when its in-flight
# count goes negative.
#
# The target used to end dm's clone twice (DM_ENDIO_INCOMPLETE, then
# bio_endio() from the worker). On 6.1 and 6.12 that did no harm: the
# first completion's bio_uninit() drops the bio's cgroup (bi_blkg), and
# both policies return early without one; this test passed then too. It
# now sends cache writes through clones of its own, ended once, and this
# test guards the accounting of that path against regressions.
#
# Cache writes whose band's extent array must grow are indexed by the
# worker (it may allocate) and ended there; the first write to a band is
# one. So: a drive-managed device directly over a blk-mq null_blk whose
# queue has io.latency set for a cgroup, random 4 KiB writes from that
# cgroup to many bands, then the kernel log must hold no warning.
#
# Needs CONFIG_BLK_CGROUP_IOLATENCY (the debug kernels of shared/kernels/;
# Debian's own kernels leave it out): skipped without it.

. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/lib/dm.sh"

_prep_test "dm: each backing bio ended once (io.latency accounting)"
dms_prep
require_cmd fio

CG=/sys/fs/cgroup
if [ ! -f "$CG/cgroup.controllers" ]; then
	mount -t cgroup2 none "$CG" 2>/dev/null ||
		skip_all "no cgroup v2 hierarchy"
fi
grep -qw io "$CG/cgroup.controllers" || skip_all "no io cgroup controller"
echo +io > "$CG/cgroup.subtree_control" 2>/dev/null ||
	skip_all "cannot enable the io controller"
grp=$CG/smr-$TID
mkdir -p "$grp"
[ -f "$grp/io.latency" ] || { rmdir "$grp"; skip_all "kernel without blk-iolatency (CONFIG_BLK_CGROUP_IOLATENCY)"; }

LEN=$((64 * 2048))		# 64 MiB: 64 bands of 1 MiB
BAND=2048
CACHE=8192
read -r _ NEED <<< "$(dms_need $LEN $BAND $CACHE)"
nb=$(new_nullb $(( (NEED + 2047) / 2048 ))) || bail "no null_blk"
N=t_${TID}
D=/dev/mapper/$N
dms_create "$N" $LEN "$nb" $BAND cache_sectors $CACHE idle_ms 0 format ||
	bail "cannot create the device"
majmin=$(cat "/sys/block/${nb#/dev/}/dev")
check "io.latency set for the null_blk" sh -c "echo '$majmin target=100000' > '$grp/io.latency'"
grep -q "^$majmin" "$grp/io.latency" && ok "io.latency reads back for $majmin" ||
	not_ok "io.latency reads back for $majmin" "$(cat "$grp/io.latency")"

# Random 4 KiB writes over every band, from inside the cgroup. fio's
# verify reads them back afterwards.
job="--name=qos --filename=$D --direct=1 --ioengine=libaio --iodepth=8
	--rw=randwrite --bs=4k --size=$((LEN * 512)) --number_ios=2048
	--randrepeat=0 --verify=crc32c --verify_fatal=1 --output-format=terse"
# shellcheck disable=SC2086 # word splitting of the job is intended
if out=$(sh -c "echo \$\$ > '$grp/cgroup.procs' && exec fio $(echo $job)" 2>&1); then
	ok "random writes over 64 bands from the io.latency cgroup, verified"
else
	not_ok "random writes over 64 bands from the io.latency cgroup, verified" "$out"
fi
dms_load "$D"
if [ "${DMS[cache_used]:-0}" -gt 0 ]; then
	ok "the writes went through the cache (cache_used ${DMS[cache_used]})"
else
	not_ok "the writes went through the cache" "cache_used ${DMS[cache_used]:-?}"
fi
assert_eq "no write failed" 0 "${DMS[errors]:-?}"
check "flush" sync "$D"
check "remove the device" dm_remove "$N"
rmdir "$grp" 2>/dev/null

dmesg_check "no kernel warnings (blk-iolatency: in-flight count never negative)"
_show_result
