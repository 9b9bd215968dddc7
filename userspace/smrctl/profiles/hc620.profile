# A host-managed SMR drive of the Ultrastar DC HC620 class (14-15 TB,
# 7200 rpm), with the timing model (docs/timing.md).
# Published (zonedstorage.io and the libzbc docs for the HSH721415AL, and
# the 14 TB drive's zone report as Ceph documents it): 256 MiB zones, 524
# conventional zones of 52156 (1 %), 128 open sequential zones at most.
# Published in the launch press, not a data sheet: 7200 rpm and 233 MB/s
# (the SAS model; 223 MB/s SATA) at the outer diameter.
# Estimates, not found published for this drive: the inner rate (about
# half the outer one, as on other 3.5-inch drives), and the seeks, taken
# near the same family's CMR sibling (Ultrastar DC HC310: 7.4 ms average
# and 0.23 ms single-track read seek, its data sheet) with a 15 ms full
# stroke.
# Capacity, from the published zone report above: 52156 zones of
# 256 MiB, 14,000,519,643,136 bytes. A device made with this profile is a
# slice of that drive (from --start-mb, default the outer edge), so zones
# of a small device are as close as on the real drive.
description = host-managed, 256 MiB zones, 1% conventional, max 128 open, 7200 rpm timing (HC620-like)
model = host-managed
zone = 256M
conv = 1%
max_open = 128
rpm = 7200
seek_t2t_us = 300
seek_avg_us = 7500
seek_full_us = 15000
od_mbps = 233
id_mbps = 110
drive_mb = 14000519
# Write cache: 512 MiB; estimate (the size press and listings give for
# the Ultrastar DC HC600 family; we could not read it in the drive's
# specification).
buffer_mib = 512
# Command queueing: a SAS drive queues more than 32 commands (TCQ); the
# model takes 32 at most. Estimate.
queue_depth = 32
