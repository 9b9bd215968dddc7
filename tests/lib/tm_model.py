#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The timing model's arithmetic (common/smr-timing.c), for predictions.

What a timing group predicts for a workload, computed the way the kernel
charges it: the tests and bench/tm-bench.sh compare what fio measures with
these figures.

    tm_model.py random SPAN BS KEY VALUE...   mean service time (us) and
                                              IOPS of random I/O of BS
                                              bytes over SPAN sectors
    tm_model.py seq SPAN BS POS KEY VALUE...  MB/s of sequential I/O of BS
                                              bytes at sector POS
    tm_model.py range SPAN BS START END KEY VALUE...
                                              MB/s of sequential I/O of BS
                                              bytes from sector START to END
    tm_model.py clean SPAN BAND CACHE DIRTY CACHED KEY VALUE...
                                              seconds to rewrite DIRTY
                                              drive-managed bands of BAND
                                              sectors with CACHED cached
                                              blocks, cache of CACHE
                                              sectors at cache_at
    tm_model.py queue SPAN BS QD KEY VALUE... mean service time (us) and
                                              IOPS of random I/O of BS
                                              bytes with QD always queued,
                                              served as smr_tm_dispatch()
                                              does with queue_depth QD
    tm_model.py alt SPAN BS A B KEY VALUE...  MB/s of two sequential
                                              streams of BS-byte writes
                                              from sectors A and B, one
                                              write of each in turn

SPAN is the device's length in sectors. With drive_mb (and start_mb)
among the keys the device is that slice of a drive of drive_mb decimal
MB, as smr_tm_create() places it; positions stay the device's sectors.
"""
import sys

FRAC = 20  # fixed-point bits, as SMR_TM_FRAC_SHIFT
KEYS = ("rpm", "seek_t2t_us", "seek_avg_us", "seek_full_us", "od_mbps",
        "id_mbps", "overhead_us", "cache_at", "drive_mb", "start_mb",
        "buffer_mib",  # the drive's buffer changes when, not how long
        "read_segments", "read_ahead_kib")  # the read cache: hits (rc_*)
RENAMED = {"wcache_mib": "buffer_mib"}  # old name: the kernel takes both


def mb_sectors(mb):
    """smr_tm_mb(): decimal MB to sectors, rounded down."""
    return mb * 1000000 // 512


def isqrt(n):
    """int_sqrt64(): the integer square root."""
    if n < 0:
        raise ValueError(n)
    x = int(n ** 0.5)
    while x * x > n:
        x -= 1
    while (x + 1) * (x + 1) <= n:
        x += 1
    return x


class Model:
    """One timing group for a device of LENGTH sectors (smr_tm_create()):
    over [0, LENGTH), or at start_mb on a drive of drive_mb. span and
    base are the kernel's: the platter's sectors, the device's first."""

    def __init__(self, keys, length):
        self.p = dict.fromkeys(KEYS, 0)
        for k, v in keys.items():
            k = RENAMED.get(k, k)
            if k not in KEYS:
                raise ValueError("unknown timing key %s" % k)
            self.p[k] = int(v)
        p = self.p
        f = (p["seek_full_us"] - p["seek_t2t_us"]) * 1000
        v = (p["seek_avg_us"] - p["seek_t2t_us"]) * 1000
        if 5 * f > 15 * v or 15 * v > 8 * f:
            raise ValueError("seek_avg_us outside the curve's bounds")
        self.len = length
        self.span, self.base = length, 0
        if p["drive_mb"]:
            self.span = mb_sectors(p["drive_mb"])
            self.base = mb_sectors(p["start_mb"])
            if self.base + length > self.span:
                raise ValueError("the device does not fit on the drive")
        elif p["start_mb"]:
            raise ValueError("start_mb needs drive_mb")
        self.t2t = p["seek_t2t_us"] * 1000
        self.a = (15 * v - 5 * f) // 3
        self.b = f - self.a
        self.half_rev = 30 * 10**9 // p["rpm"]
        self.overhead = p["overhead_us"] * 1000
        self.od = p["od_mbps"] * 1000
        self.id = p["id_mbps"] * 1000

    def frac(self, x):
        return (min(x, self.span) << FRAC) // self.span

    def service_ns(self, head, pos, nsect):
        """smr_tm_service(): one I/O with the head at HEAD."""
        t = self.overhead
        if pos != head:
            d = self.frac(abs(pos - head))
            t += (self.t2t + self.half_rev +
                  ((self.a * isqrt(d << FRAC)) >> FRAC) +
                  ((self.b * d) >> FRAC))
        kbps = self.od - (((self.od - self.id) * self.frac(pos)) >> FRAC)
        return t + nsect * 512 * 1000000 // kbps

    def pos(self, s):
        """smr_tm_pos(): the platter position of device sector S."""
        return self.base + s

    def random_us(self, nsect, n=400):
        """Mean service time of NSECT at uniformly random positions over
        the device, from the previous one: a deterministic n x n grid."""
        step = self.len // n
        tot = 0
        for i in range(n):
            for j in range(n):
                tot += self.service_ns(self.pos(i * step + step // 2),
                                       self.pos(j * step + step // 3), nsect)
        return tot / (n * n) / 1000.0

    def seq_mbps(self, pos, nsect):
        """MB/s of back-to-back sequential I/O of NSECT at device POS."""
        pos = self.pos(pos)
        return nsect * 512 / self.service_ns(pos, pos, nsect) * 1000.0

    def queue_us(self, nsect, qd, n=4000, seed=1):
        """Mean service time of NSECT-sector I/O at random positions over
        the device with QD requests always queued (a new one arrives as
        one is served), served as smr_tm_dispatch() does: the shortest
        service among the oldest QD, unless the oldest was overtaken QD
        times."""
        import random
        rng = random.Random(seed)
        q = [[self.pos(rng.randrange(self.len - nsect)), 0] for _ in range(qd)]
        head, tot = self.base, 0
        for _ in range(n):
            if q[0][1] >= qd:
                k = 0
            else:
                k = min(range(len(q)), key=lambda i: self.service_ns(head, q[i][0], nsect))
                for i in range(k):
                    q[i][1] += 1
            pos = q.pop(k)[0]
            tot += self.service_ns(head, pos, nsect)
            head = pos + nsect
            q.append([self.pos(rng.randrange(self.len - nsect)), 0])
        return tot / n / 1000.0

    def alt_mbps(self, a, b, nsect, n=64):
        """MB/s of two sequential streams from device sectors A and B,
        one write of NSECT from each in turn (a seek between every two)."""
        t, head, w = 0, None, [self.pos(a), self.pos(b)]
        for i in range(2 * n):
            s = w[i % 2]
            t += self.service_ns(s if head is None else head, s, nsect)
            head = w[i % 2] = s + nsect
        return 2 * n * nsect * 512 / t * 1000.0

    def range_mbps(self, start, end, nsect):
        """MB/s of sequential I/O of NSECT from START to END: the sum of
        the charges, so the rate falling across the range counts as it
        does on the device (the harmonic mean of the rates)."""
        t = 0
        for pos in range(start, end, nsect):
            p = self.pos(pos)
            t += self.service_ns(p, p, min(nsect, end - pos))
        return (end - start) * 512 / t * 1000.0


CHUNK = 8192  # sectors the cleaner copies at a time (SMR_DM_CHUNK_SECTORS)


def band_rewrite_ns(m, band_pos, band_sectors, cache_pos, cache_sectors,
                    cached, rng):
    """Modelled time of one drive-managed band rewrite, charged the way
    dm-smr-dm-rewrite.c charges it: per 4 MiB chunk, read the band's chunk,
    read its cached blocks (CACHED of them over the band, at random slots:
    RNG), write the spare band's chunk; commit; copy the spare band back
    chunk by chunk; commit. The head starts at the cache (host writes)."""
    spare = cache_pos + cache_sectors
    head, t = cache_pos, 0
    nchunks = (band_sectors + CHUNK - 1) // CHUNK
    per_chunk = [0] * nchunks
    for _ in range(cached):
        per_chunk[rng.randrange(nchunks)] += 1

    def io(pos, n):
        nonlocal head, t
        t += m.service_ns(head, pos, n)
        head = pos + n

    for c in range(nchunks):
        off = c * CHUNK
        n = min(CHUNK, band_sectors - off)
        io(band_pos + off, n)
        for s in sorted(rng.randrange(cache_sectors // 8) for _ in range(per_chunk[c])):
            io(cache_pos + s * 8, 8)
        io(spare + off, n)
    io(cache_pos, 8)
    for c in range(nchunks):
        off = c * CHUNK
        n = min(CHUNK, band_sectors - off)
        io(spare + off, n)
        io(band_pos + off, n)
    io(cache_pos, 8)
    return t


def cache_pos(m, cache_sectors, band_sectors):
    """smr_dm_timing(): cache and spare band fit after cache_at of the
    whole drive (the platter span)."""
    room = cache_sectors + band_sectors
    return (m.span - room) * m.p["cache_at"] // 1000 if room < m.span else 0


def cleaning_s(m, nr_bands, band_sectors, cache_pos, cache_sectors, dirty,
               cached, seed=1):
    """Predicted seconds to rewrite DIRTY bands (spread over all NR_BANDS
    positions) holding CACHED blocks between them."""
    import random
    rng = random.Random(seed)
    per = max(1, cached // max(1, dirty))
    tot = 0
    for i in range(dirty):
        band = (i * nr_bands) // dirty
        tot += band_rewrite_ns(m, m.pos(band * band_sectors), band_sectors,
                               cache_pos, cache_sectors, per, rng)
    return tot / 1e9


def parse_keys(words):
    if len(words) % 2:
        raise ValueError("keys come in pairs")
    return {words[i]: int(words[i + 1]) for i in range(0, len(words), 2)}


def main(argv):
    if len(argv) < 4 or argv[1] not in ("random", "seq", "range", "clean", "alt",
                                         "queue"):
        sys.stderr.write(__doc__)
        return 2
    span, bs = int(argv[2]), int(argv[3])
    if argv[1] == "random":
        m = Model(parse_keys(argv[4:]), span)
        us = m.random_us(bs // 512)
        print("%.1f %.1f" % (us, 1e6 / us))
    elif argv[1] == "range":
        m = Model(parse_keys(argv[6:]), span)
        print("%.2f" % m.range_mbps(int(argv[4]), int(argv[5]), bs // 512))
    elif argv[1] == "queue":
        m = Model(parse_keys(argv[5:]), span)
        us = m.queue_us(bs // 512, int(argv[4]))
        print("%.1f %.1f" % (us, 1e6 / us))
    elif argv[1] == "alt":
        m = Model(parse_keys(argv[6:]), span)
        print("%.2f" % m.alt_mbps(int(argv[4]), int(argv[5]), bs // 512))
    elif argv[1] == "seq":
        m = Model(parse_keys(argv[5:]), span)
        print("%.2f" % m.seq_mbps(int(argv[4]), bs // 512))
    else:
        band, cache, dirty, cached = bs, int(argv[4]), int(argv[5]), int(argv[6])
        m = Model(parse_keys(argv[7:]), span)
        pos = cache_pos(m, cache, band)
        print("%.1f" % cleaning_s(m, span // band, band, pos, cache, dirty, cached))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
