#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/lib/dm_crash.py - writer, checker and crash trigger for
tests/test_dm_05_crash.sh (drive-managed dm-smr across guest crashes).

Subcommands (all sizes in 4 KiB blocks):

  write  --dev DEV --state DIR --run R --boot K --writer W --writers N
         --blocks B --band-blocks BB
      Writer W of boot K: an endless deterministic sequence of writes
      (op j = 1, 2, ... drawn from random.Random("R:K:W")) to the bands it
      owns (band % N == W), O_DIRECT, queue depth 1. Every 4 KiB block it
      writes carries (run, block number, generation = K << 32 | j) in each
      of its 8 sectors, so a read names exactly which write it came from.
      Op kinds: one block; a run of 2-16 blocks in one band; a whole band
      in 256 KiB sequential writes (the bypass path when nothing of the
      band is cached); one block through an O_DSYNC descriptor (FUA).
      Its log DIR/wlog.bK.wW, appended and fsync'd (the state dir is on
      the host over 9p: a guest crash cannot lose what was fsync'd):
        I j   written BEFORE op j (and up to 31 more) may be issued
        D j   fdatasync of the device returned after ops 1..j completed
        S j   op j, an O_DSYNC write, was acknowledged
      So after a crash: ops <= max D and the S ops are durable; nothing
      after max I was ever issued.

  check  --dev DEV --state DIR --run R --boot K --writers N --blocks B
         --band-blocks BB
      After the crash of boot K: replay each writer's sequence up to its
      max I and read the whole device. For each block, with floor = the
      last durable op (D prefix or S) that wrote it in boot K (or, if none,
      what the block held when boot K started: DIR/base.bin, zeros at
      first), the block must hold exactly the floor's generation or that
      of a later op of boot K that wrote it (issued, maybe not durable),
      and all 8 sectors must be that one write's (no torn or mixed block).
      Prints a summary and up to 20 bad blocks; exit 1 if any is bad.
      Then saves what every block holds as the next baseline and flushes.
      --baseline-only: no writer logs; every block must hold exactly what
      the baseline says (e.g. before and after a full cleaning).

  intent --backing DEV
      The cleaning intent in the newest valid copy of metadata table
      block 0 on the backing device: "state band seq gen".

  crash  --backing DEV --state DIR --boot K [--arm-after S] [--skip N]
         [--delay-ms M] [--timeout S] [--ready FILE]
      After S seconds, poll table block 0 on the backing device every
      ~2 ms; at the (N+1)th distinct durable intent (a band rewrite in
      steps 3-5: the spare band holds the band) wait a random 0..M ms and
      crash the guest (sysrq-b). After --timeout seconds without one,
      crash anyway. Writes what it is armed for to DIR/crash.bK first
      (the next boot reads the intent on disk to see what it hit). --ready:
      create FILE once polling runs (start the cleaning after that).
"""

import argparse
import mmap
import os
import random
import struct
import sys
import time

BLK = 4096
MAGIC = b"DMSMRCR1"
ZERO = bytes(BLK)
BATCH = 32
PIECE = 64			# blocks per I/O of a whole-band write (256 KiB)
ZT_MAGIC = 0x745A4D53
SB_MAGIC = 0x64524D53


def pattern(run, blk, gen):
    """The 4 KiB a write of generation @gen puts in block @blk."""
    h = struct.pack("<8sQQQ", MAGIC, run, blk, gen)
    return b"".join(((h + struct.pack("<Q", s)) * 13)[:512] for s in range(8))


def own_bands(nbands, writer, writers):
    return [b for b in range(nbands) if b % writers == writer]


def gen_op(rng, bands, bb):
    """One op: (kind, first block, nr blocks). kind: 1 block, run, band, dsync."""
    r = rng.random()
    band = bands[rng.randrange(len(bands))]
    base = band * bb
    if r < 0.80:
        return ("one", base + rng.randrange(bb), 1)
    if r < 0.93:
        n = rng.randint(2, min(16, bb))
        return ("run", base + rng.randrange(bb - n + 1), n)
    if r < 0.94:
        return ("band", base, bb)
    return ("dsync", base + rng.randrange(bb), 1)


def rng_for(run, boot, writer):
    return random.Random("%d:%d:%d" % (run, boot, writer))


class Log:
    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def put(self, line):
        os.write(self.fd, (line + "\n").encode())
        os.fsync(self.fd)


def cmd_write(a):
    nbands = a.blocks // a.band_blocks
    bands = own_bands(nbands, a.writer, a.writers)
    rng = rng_for(a.run, a.boot, a.writer)
    fd = os.open(a.dev, os.O_WRONLY | os.O_DIRECT)
    sfd = os.open(a.dev, os.O_WRONLY | os.O_DIRECT | os.O_DSYNC)
    buf = mmap.mmap(-1, PIECE * BLK)
    log = Log(os.path.join(a.state, "wlog.b%d.w%d" % (a.boot, a.writer)))
    j = 0
    while True:
        end = j + BATCH
        log.put("I %d" % end)
        while j < end:
            j += 1
            kind, first, n = gen_op(rng, bands, a.band_blocks)
            gen = a.boot << 32 | j
            done = 0
            while done < n:
                m = min(PIECE, n - done)
                for i in range(m):
                    buf[i * BLK:(i + 1) * BLK] = pattern(a.run, first + done + i, gen)
                mv = memoryview(buf)[:m * BLK]
                w = os.pwritev(sfd if kind == "dsync" else fd, [mv],
                               (first + done) * BLK)
                mv.release()
                if w != m * BLK:
                    raise SystemExit("short write %d at block %d" % (w, first + done))
                done += m
            if kind == "dsync":
                log.put("S %d" % j)
        os.fdatasync(fd)
        log.put("D %d" % j)


def read_log(path):
    imax = dmax = 0
    s = set()
    try:
        with open(path) as f:
            for line in f:
                p = line.split()
                if len(p) != 2 or not p[1].isdigit():
                    continue		# a line cut by the crash
                v = int(p[1])
                if p[0] == "I":
                    imax = max(imax, v)
                elif p[0] == "D":
                    dmax = max(dmax, v)
                elif p[0] == "S":
                    s.add(v)
    except FileNotFoundError:
        pass
    return imax, dmax, s


def describe(run, blk, data):
    if data == ZERO:
        return 0, None
    magic, r, b, gen = struct.unpack_from("<8sQQQ", data)
    if magic != MAGIC or r != run:
        return None, "not written by this test (magic %r run %d)" % (magic, r)
    if b != blk:
        return None, "holds block %d's data (gen %#x)" % (b, gen)
    if data != pattern(run, blk, gen):
        return None, "torn/mixed: first sector says gen %#x but the block differs" % gen
    return gen, None


def gname(g):
    return "zeros" if g == 0 else "b%d:%d" % (g >> 32, g & 0xFFFFFFFF)


def cmd_check(a):
    nbands = a.blocks // a.band_blocks
    basef = os.path.join(a.state, "base.bin")
    base = [0] * a.blocks
    if os.path.exists(basef):
        with open(basef, "rb") as f:
            base = list(struct.unpack("<%dQ" % a.blocks, f.read()))
    floor = {}			# block -> durable generation of this boot
    later = {}			# block -> generations issued after the floor
    kind_of = {}		# generation -> op kind (reporting)
    stats = {"durable_ops": 0, "dsync_ops": 0, "issued_ops": 0,
             "band_ops_durable": 0}
    for w in range(0 if a.baseline_only else a.writers):
        imax, dmax, s = read_log(os.path.join(a.state, "wlog.b%d.w%d" % (a.boot, w)))
        print("writer %d of boot %d: issued <= %d, fdatasync'd <= %d, %d O_DSYNC acked"
              % (w, a.boot, imax, dmax, len(s)))
        if dmax == 0:
            print("FAIL: writer %d logged no durable write: nothing to check" % w)
            return 1
        stats["issued_ops"] += imax
        stats["durable_ops"] += dmax
        stats["dsync_ops"] += len(s)
        rng = rng_for(a.run, a.boot, w)
        bands = own_bands(nbands, w, a.writers)
        for j in range(1, imax + 1):
            kind, first, n = gen_op(rng, bands, a.band_blocks)
            gen = a.boot << 32 | j
            kind_of[gen] = kind
            durable = j <= dmax or j in s
            if durable and kind == "band":
                stats["band_ops_durable"] += 1
            for blk in range(first, first + n):
                if durable:
                    floor[blk] = gen
                    later.pop(blk, None)
                else:
                    later.setdefault(blk, set()).add(gen)

    fd = os.open(a.dev, os.O_RDONLY | os.O_DIRECT)
    chunk = 256
    buf = mmap.mmap(-1, chunk * BLK)
    seen = [0] * a.blocks
    bad = []
    n_floor = n_newer = n_written = n_base = 0
    for c in range(0, a.blocks, chunk):
        m = min(chunk, a.blocks - c)
        mv = memoryview(buf)[:m * BLK]
        got = os.preadv(fd, [mv], c * BLK)
        mv.release()
        if got != m * BLK:
            print("FAIL: short read at block %d" % c)
            return 1
        for i in range(m):
            blk = c + i
            data = buf[i * BLK:(i + 1) * BLK]
            g, err = describe(a.run, blk, data)
            f = floor.get(blk)
            want = f if f is not None else base[blk]
            ok_set = later.get(blk, ())
            if err is None and g == want:
                if f is not None:
                    n_floor += 1
                else:
                    n_base += 1
            elif err is None and g in ok_set:
                n_newer += 1
            else:
                bad.append((blk, g, err, want, sorted(ok_set)))
            if err is None:
                seen[blk] = g
                if g:
                    n_written += 1
    os.fsync(fd)
    os.close(fd)
    print("ops: %d issued, %d fdatasync'd, %d O_DSYNC, %d whole-band writes durable"
          % (stats["issued_ops"], stats["durable_ops"], stats["dsync_ops"],
             stats["band_ops_durable"]))
    print("blocks: %d hold their durable write, %d a newer issued write, "
          "%d what they held before this boot, %d bad; %d of %d hold test data"
          % (n_floor, n_newer, n_base, len(bad), n_written, a.blocks))
    for blk, g, err, want, ok_set in bad[:20]:
        desc = err if err else "holds %s (%s)" % (gname(g), kind_of.get(g, "not of this boot"))
        print("BAD block %d (band %d, +%d): %s; expected %s%s" % (
            blk, blk // a.band_blocks, blk % a.band_blocks, desc, gname(want),
            (" or one of " + ", ".join(gname(x) for x in ok_set[:8])) if ok_set else ""))
    # The next boot's baseline: what every block holds now (this read,
    # after the recovery, is what is on disk; the fsync above flushed).
    tmp = basef + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<%dQ" % a.blocks, *seen))
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, basef)
    return 1 if bad else 0


def read_intent(backing):
    """(state, band, seq, gen) of the newest valid table block 0, or None."""
    fd = os.open(backing, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, 3 * BLK)
    try:
        os.preadv(fd, [buf], 0)
    finally:
        os.close(fd)
    sb_magic, = struct.unpack_from("<I", buf, 0)
    fmt, = struct.unpack_from("<Q", buf, 16)
    if sb_magic != SB_MAGIC:
        return None
    best = None
    for k in (1, 2):
        o = k * BLK
        magic, _crc, gen, fid, index, nr = struct.unpack_from("<IIQQII", buf, o)
        if magic != ZT_MAGIC or fid != fmt or index != 0 or nr != 1:
            continue
        state, band, seq = struct.unpack_from("<IIQ", buf, o + 32)
        if best is None or gen > best[3]:
            best = (state, band, seq, gen)
    return best


def cmd_intent(a):
    it = read_intent(a.backing)
    if it is None:
        print("none")
        return 1
    print("%d %d %d %d" % it)
    return 0


def cmd_crash(a):
    rnd = random.Random()
    with open(os.path.join(a.state, "crash.b%d" % a.boot), "w") as f:
        f.write("armed: crash at the durable intent number %d, after 0-%g ms "
                "(or after %g s)\n" % (a.skip + 1, a.delay_ms, a.timeout))
    trig = open("/proc/sysrq-trigger", "w")
    time.sleep(a.arm_after)
    t_end = time.time() + a.timeout
    seen = set()
    why = None
    first = True
    while time.time() < t_end:
        it = read_intent(a.backing)
        if first and a.ready:
            with open(a.ready, "w") as f:
                f.write("polling\n")
            first = False
        if it and it[0] == 1 and (it[1], it[2]) not in seen:
            seen.add((it[1], it[2]))
            if len(seen) > a.skip:
                d = rnd.uniform(0, a.delay_ms)
                why = ("at the durable intent for band %d (seq %d), intent %d seen, %.1f ms after"
                       % (it[1], it[2], len(seen), d))
                time.sleep(d / 1000)
                break
        time.sleep(0.002)
    if why is None:
        why = "timeout: %d intent(s) seen, no crash point; crashing now" % len(seen)
    # No file I/O between the decision and the crash (a 9p write takes
    # milliseconds: the cleaning would move on); the kernel log is lost.
    trig.write("b")
    trig.flush()
    time.sleep(30)
    return 1


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    c = sub.add_parser("check")
    for s in (w, c):
        s.add_argument("--dev", required=True)
        s.add_argument("--state", required=True)
        s.add_argument("--run", type=int, required=True)
        s.add_argument("--boot", type=int, required=True)
        s.add_argument("--writers", type=int, required=True)
        s.add_argument("--blocks", type=int, required=True)
        s.add_argument("--band-blocks", type=int, required=True)
    c.add_argument("--baseline-only", action="store_true")
    w.add_argument("--writer", type=int, required=True)
    i = sub.add_parser("intent")
    i.add_argument("--backing", required=True)
    k = sub.add_parser("crash")
    k.add_argument("--backing", required=True)
    k.add_argument("--state", required=True)
    k.add_argument("--boot", type=int, required=True)
    k.add_argument("--arm-after", type=float, default=0)
    k.add_argument("--skip", type=int, default=0)
    k.add_argument("--delay-ms", type=float, default=0)
    k.add_argument("--timeout", type=float, default=30)
    k.add_argument("--ready", help="file created once polling runs")
    a = p.parse_args()
    return {"write": cmd_write, "check": cmd_check, "intent": cmd_intent,
            "crash": cmd_crash}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
