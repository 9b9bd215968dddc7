# A Caveat Scriptor disk as in docs/dm-caveat.rst's example: 4 KiB blocks,
# a write damages up to DID = 16 blocks after it, none of the next
# DNOR = 4. Illustrative values, not a measured drive.
description = Caveat Scriptor, 4 KiB blocks, DID 16, DNOR 4
model = caveat
did = 16
dnor = 4
