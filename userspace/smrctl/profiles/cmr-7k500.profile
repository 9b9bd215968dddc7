# A conventional (CMR) 7200 rpm disk of the 500 GB class, as a baseline
# with the timing model (docs/timing.md): a caveat device with DID 0
# damages nothing, so it is an ordinary disk that takes a disk's time.
# The ext4-lazy paper's CMR baseline was a WD5000YS; we found no data
# sheet for it, so this is the Hitachi Deskstar 7K500 (HDS725050KLA360),
# the same class:
#   published, data sheet table 10: 64.8 MB/s sustained at zone 0 (outer)
#   and 31.0 MB/s at zone 29 (inner);
#   published in a review's spec table, not the data sheet: 7200 rpm,
#   8.5 ms average read seek;
#   estimates: 1 ms track-to-track, 17 ms full stroke;
#   capacity: 976,773,168 sectors (500,107,862,016 bytes), the IDEMA
#   LBA count for 500 GB that this drive reports; a device made with this
#   profile is a slice of it, from --start-mb (default the outer edge).
description = conventional 7200 rpm disk, 500 GB class (Deskstar 7K500 timing)
model = caveat
did = 0
dnor = 0
# A conventional disk reads what it was never sent (zeros, on a new
# disk); caveat would fail such a read as maybe damaged.
on_damaged_read = zero
rpm = 7200
seek_t2t_us = 1000
seek_avg_us = 8500
seek_full_us = 17000
od_mbps = 65
id_mbps = 31
drive_mb = 500107
# Write cache: 16 MB, the buffer listed for the SATA model (KLA360) in
# product listings; estimate, not read in the data sheet here.
buffer_mib = 16
# Command queueing: SATA NCQ takes 32 commands; that this drive queues
# 32 is an estimate (hdparm -I shows a real drive's depth).
queue_depth = 32
