# A small host-managed disk for tests: 16 MiB zones, 2 conventional ones
# (f2fs wants some), at most 8 open. Not modelled on a drive.
description = host-managed test disk: 16 MiB zones, 2 conventional, 8 open
model = host-managed
zone = 16M
conv = 2
max_open = 8
