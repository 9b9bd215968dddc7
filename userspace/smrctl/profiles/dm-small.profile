# A small drive-managed disk for tests and demos: small bands and a large
# cache share so a few hundred MiB of random writes fill it, and cleaning
# that starts quickly when the host goes idle. Not modelled on a drive.
description = drive-managed test disk: 4 MiB bands, cache 10%, idle cleaning after 500 ms
model = drive-managed
band = 4M
cache = 10%
idle_ms = 500
policy = fifo
