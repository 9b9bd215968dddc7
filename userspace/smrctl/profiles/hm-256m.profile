# A host-managed SMR disk with the geometry of current HM-SMR drives
# (e.g. WD/HGST Ultrastar DC HC6x0): 256 MiB sequential-write-required
# zones, with about 1% of the zones conventional at the start of the LBA
# space (see the drive family's zone report or zonedstorage.io). Open and
# active limits are left unset: give --max-open / --max-active to model
# a particular drive.
description = host-managed, 256 MiB zones, 1% conventional
model = host-managed
zone = 256M
conv = 1%
