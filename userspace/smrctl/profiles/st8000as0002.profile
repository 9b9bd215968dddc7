# Shaped like the Seagate Archive 8TB (ST8000AS0002) drive-managed SMR disk
# that the ext4-lazy paper measured (Aghayev, Ts'o, Gibson, Desnoyers,
# "Evolving Ext4 for Shingled Disks", FAST 2017), whose translation layer
# the Skylight paper reverse-engineered for the same drive family
# (Aghayev, Desnoyers, "Skylight - A Window on Shingled Disk Operation",
# FAST 2015): a persistent cache of some tens of GiB (about 0.25% of the
# capacity), bands of a few tens of MiB (they vary with the radius), and
# cleaning that starts when the host has been idle for a while.
#
# The figures below are rounded, approximate values in the spirit of those
# papers, not a measurement of a particular unit: dm-smr has one band size
# and no radius effects. Size it with --size or the backing device; the
# cache scales with it.
description = drive-managed, 30 MiB bands, cache 0.25%, idle cleaning after 1 s, 5900 rpm timing (ST8000AS0002-like)
model = drive-managed
band = 30M
cache = 0.25%
idle_ms = 1000
policy = fifo
seq_bypass = on

# The timing model (docs/timing.md): what the drive's actuator costs.
# Published (press, not a data sheet): 5900 rpm (the drive itself reports
# 5980 to smartctl), 190 MB/s at most and 150 MB/s on average. The inner
# rate is derived from those two with the model's linear fall-off
# ((190 + 110) / 2 = 150). Estimates, not found published: the three
# seek times, and the cache at the outer edge (cache_at 0; Skylight
# located the persistent cache by timing, we could not read its figure).
# Capacity: 15,628,053,168 sectors (8,001,563,222,016 bytes), the IDEMA
# LBA count for 8 TB, which this drive reports. The device is a slice of
# that drive (from --start-mb, default the outer edge), and cache_at is
# a position on the whole drive.
rpm = 5900
seek_t2t_us = 1000
seek_avg_us = 11000
seek_full_us = 22000
od_mbps = 190
id_mbps = 110
cache_at = 0
drive_mb = 8001563
# Write cache: 128 MB, as product listings give it for this drive;
# estimate, not read in the data sheet here.
buffer_mib = 128
# Command queueing: SATA NCQ, 32 commands (the depth SATA allows; this
# drive's own figure not checked). Estimate.
queue_depth = 32
