#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# scripts/demo-guest.sh - the demo, as it runs inside the VM (see demo.sh).
#
# Creates a host-managed emulated SMR drive over the VM's file-backed disk,
# shows it as the kernel and zoned tools see it, runs a short fio zbd
# workload with data verification, re-creates the drive to show that its
# write pointers persist, and writes a summary to $SMR_RESULTS/demo.txt.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
DISK=${SMR_SCRATCH_DISK:-/dev/vda}
OUT=${SMR_RESULTS:-/tmp}/demo.txt
NAME=smr-demo

# 1 GiB drive, 32 MiB zones, 4 conventional, at most 6 open zones.
ZONE=65536
SECTORS=$((1024 * 1024 * 1024 / 512))
OPTS="conv_zones 4 max_open 6"
TABLE="0 $SECTORS smr $DISK host-managed $ZONE 4 $OPTS"
cd /tmp	# fio writes its verify state files in the current directory

step() { printf '\n== %s\n' "$*"; }

status_line() {
	# host-managed <nr_zones> <conv> <imp> <exp> <closed> <full> <ro> <off>
	#   <writes> <wsect> <reads> <rsect> <resets> <finishes> <opens> <closes>
	#   <imp_closes> <wp_errors> <errors> <commits> <mem>
	dmsetup status "$NAME" | awk '{
		printf "zones %s (%s conventional): %s implicitly open, %s explicitly open, %s closed, %s full\n", $5, $6, $7, $8, $9, $10;
		printf "writes %s (%d MiB), reads %s, zone resets %s, implicit closes %s, write-pointer errors %s, errors %s\n", $13, $14/2048, $15, $17, $21, $22, $23;
		printf "metadata commits %s, target memory %d KiB\n", $24, $25/1024 }'
}

lsmod | grep -q '^dm_smr' || insmod "$ROOT/dm-smr/dm-smr.ko"

step "Create a host-managed SMR drive over $DISK"
echo "dmsetup create $NAME --table \"${TABLE/ 4 / 5 } format\""
dmsetup create "$NAME" --table "${TABLE/ 4 / 5 } format"
DEV=/dev/mapper/$NAME
DM=$(basename "$(readlink -f "$DEV")")
for f in zoned chunk_sectors nr_zones max_open_zones logical_block_size; do
	printf '  queue/%-18s %s\n' "$f" "$(cat /sys/block/$DM/queue/$f)"
done
echo "  blkzone report (first 6 zones):"
blkzone report -c 6 "$DEV" | sed 's/^/  /'

step "fio: sequential writes to 8 zones, zonemode=zbd, crc32c verify"
fio --name=seq --filename="$DEV" --zonemode=zbd --direct=1 --ioengine=libaio \
	--iodepth=4 --rw=write --bs=128k --offset=$((4 * ZONE * 512)) \
	--size=$((8 * ZONE * 512)) --verify=crc32c --do_verify=1 \
	--output-format=json | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["write"]
print("  wrote %d MiB at %.1f MiB/s, verified" % (j["io_kbytes"]/1024, j["bw"]/1024))' 
status_line | sed 's/^/  /'

step "fio: random-offset writes across zones (fio keeps to the write pointers)"
fio --name=rnd --filename="$DEV" --zonemode=zbd --direct=1 --ioengine=libaio \
	--iodepth=4 --rw=randwrite --bs=16k --offset=$((12 * ZONE * 512)) \
	--size=$((16 * ZONE * 512)) --io_size=24M --verify=crc32c --do_verify=1 \
	--output-format=json | python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]["write"]
print("  wrote %d MiB in %d writes at %.0f IOPS, verified" % (j["io_kbytes"]/1024, j["total_ios"], j["iops"]))' 
status_line | sed 's/^/  /'

step "A write that is not at the write pointer fails, as on a real drive"
if dd if=/dev/zero of="$DEV" bs=4k count=1 oflag=direct \
	seek=$((4 * ZONE / 8 + 1)) 2>/dev/null; then
	echo "  UNEXPECTED: the misplaced write succeeded"; exit 1
else
	echo "  dd at zone 4 + 4 KiB: Input/output error (expected)"
fi

step "Remove and re-create the drive: write pointers persist"
wps() { blkzone report "$DEV" | awk '{print $2, $8}'; }
wps > /tmp/wp.before
dmsetup remove "$NAME"
dmsetup create "$NAME" --table "$TABLE"
wps > /tmp/wp.after
if cmp -s /tmp/wp.before /tmp/wp.after; then
	echo "  all $(wc -l < /tmp/wp.after) write pointers identical after re-create"
else
	echo "  write pointers differ after re-create:"; diff /tmp/wp.before /tmp/wp.after; exit 1
fi
blkzone report "$DEV" | awk '/SEQ_WRITE/ {c[$0 ~ /\(fu\)/ ? "full" : ($0 ~ /\(em\)/ ? "empty" : "closed")]++}
	END {printf "  %d full, %d closed (open zones come back closed), %d empty\n", c["full"], c["closed"], c["empty"]}'
status_line | sed 's/^/  /'

step "Reset every zone"
blkzone reset "$DEV"
status_line | sed 's/^/  /'
dmsetup remove "$NAME"

{
	echo "dm-smr demo, $(date -u '+%Y-%m-%d %H:%M UTC'), kernel $(uname -r)"
	echo "host-managed drive: 1 GiB, 32 MiB zones, 4 conventional, max_open 6"
	echo "fio zbd sequential and random-offset writes verified; misplaced write refused;"
	echo "write pointers kept across dmsetup remove/create."
} > "$OUT"
echo
echo "Summary written to $OUT"
