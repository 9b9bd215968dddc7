#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/lib/crashpoints.py - check a target at every crash point of a
workload, recorded with dm-log-writes and replayed.

  crashpoints.py run --model dm|hm|cv --backing DEV --log DEV --replay DEV
                 --cow DEV --table 'LINE with {dev}' --blocks N --name P
                 [model options] [--rounds R --ops K --seed S]
                 [--subsets N] [--max-points P] [--label NAME]

Record. A log-writes device over BACKING (log on LOG) and the target over
it (TABLE, "{dev}" replaced). After the target's format is made durable
(fsync), mark "m0". The workload then runs in rounds of K operations,
O_DIRECT, 4 KiB blocks; every block a write puts down names the write
(tests/lib/cv_model.py block_pattern: tag and block number in each 20
bytes). After each round: fsync the target, mark. Operations durable on
their own (an O_DSYNC write, a zone reset or finish) get a mark right
after they return. dm-log-writes logs a write when it completes and a
flush after every write that completed before it, so the log is one
order in which the backing device could have received the writes.

Replay. The crash states checked are:
  - prefix: the log up to and including each flush or FUA entry (what a
    drive holds if it lost power just after that entry);
  - subset: the log up to a flush, plus a random subset of the writes
    logged before the next flush (a drive may have written any of them,
    in any order), except that a FUA write is in the subset whenever a
    write logged after it is: it was on the medium when it completed, and
    the log is in completion order, so a write that completed after it
    cannot be on the medium without it (a target issuing a write only
    once a FUA write completed relies on this, as a journal commit
    does). --subsets N per interval between two flushes.
Each state is built on a dm-snapshot (transient) of REPLAY, which holds
the log applied up to the state's flush (with --copy, for kernels without
dm-snapshot: on a copy of REPLAY written to COW); the target is created
over it with the same table (no format), checked, and removed.

What holds at every point (docs/dm-smr.rst "Durability", docs/dm-caveat.rst
"Crash safety"): the target activates; for each operation, "durable" when
the mark that made it durable lies in the state's prefix, "possible" when
the mark before it was issued lies before the state's last entry.
  dm  every block holds its last durable write or a later possible one
      (zeros if none), never another block's data, a mix or garbage; a
      new write to the device reads back.
  hm  each sequential zone is in a state some prefix of its operations
      leads to, from its last durable one to its last possible one (an
      append may be partial): its write pointer, the data below it
      exactly that prefix's, zeros above; conventional zones as dm; an
      append at a write pointer reads back.
  cv  the damage map is never falsely clean and loses nothing flushed: a
      block valid in the map holds its last durable write or a later
      possible one (with scramble on, a block damaged on the backing
      but reported clean holds 0xdb, not a write; with write_cache_kib,
      which rules scramble out, the last check below finds it); a block
      valid after the durable writes and neither written nor damaged by
      a possible one is valid and holds that write; a block maybe
      damaged after the durable writes and not rewritten by a possible
      one is maybe damaged.

Output: "CHECK PASS/FAIL desc | detail" and "# " lines (tests/common.sh
run_checks turns them into TAP), and a summary with the counts.
"""

import argparse
import bisect
import fcntl
import json
import mmap
import os
import random
import re
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cv_model import (CaveatModel, block_pattern, check, diag,  # noqa: E402
                      gen_writes, kernel_dump)
import dmlib  # noqa: E402

BS = 4096
SECT = 512
ZERO = bytes(BS)

# dm-log-writes on-disk format (drivers/md/dm-log-writes.c, the same in
# 6.1, 6.12 and 7.x): a super block at 0, then per entry one block with
# the header (and a mark's text) followed by the written data, in units
# of the data device's logical block size; discards carry no data.
LOG_MAGIC = 0x6a736677736872
LOG_FLUSH, LOG_FUA, LOG_DISCARD, LOG_MARK = 1, 2, 4, 8

# <linux/blkzoned.h>: _IOW(0x12, nr, struct blk_zone_range) and
# _IOWR(0x12, 130, struct blk_zone_report); struct blk_zone is 64 bytes.
BLKRESETZONE = 0x40101283
BLKFINISHZONE = 0x40101288
BLKREPORTZONE = 0xc0101282
BLK_ZONE_COND_FULL = 14


UDEV_RULE = '/run/udev/rules.d/00-smr-crashpoints.rules'


class UdevQuiet:
    """While it is entered, udev runs no program for the dm devices made
    without udev synchronisation: this checker's (dmlib).

    Every create and remove sends uevents. libdevmapper without udev
    synchronisation still puts its flags in the event's DM_COOKIE, over
    a cookie base of 0 that no semaphore stands behind, and Debian's
    55-dm.rules and 95-dm-notify.rules run `dmsetup udevflags` and
    `dmsetup udevcomplete` for any event with a DM_COOKIE: four
    processes for each device made and removed, under TCG the larger
    part of this checker's time (test_crash_01_points, 2026-11-30: 417 of
    its 543 dmsetup processes were udev's). The rule, first of all rules,
    takes DM_COOKIE out of those events (nobody waits on them) and keeps
    the disk rules (blkid, the watch) off.

    They are told by the cookie's value, not by the device's name: udev
    handles an event when it gets to it, and by then the checker has
    often removed the device (and made another under its number), so its
    name can no longer be read. An unsynchronised resume or remove sends
    the primary-source flag alone: (0x40 << 16) | 0. The suite's dmsetup
    calls synchronise (a nonzero base) and are handled as usual.
    (systemd 252 ignores OPTIONS="last_rule", which an earlier version
    of this rule relied on: it did nothing.)"""
    # libdevmapper.h: DM_UDEV_PRIMARY_SOURCE_FLAG, DM_UDEV_FLAGS_SHIFT.
    COOKIE = 0x40 << 16
    TEXT = (
        '# tests/lib/crashpoints.py (removed when it ends): no udev programs\n'
        '# for dm devices made without udev synchronisation, which it makes\n'
        '# and removes by the hundred.\n'
        'SUBSYSTEM=="block", KERNEL=="dm-[0-9]*", ENV{DM_COOKIE}=="%d", '
        'ENV{DM_COOKIE}="", ENV{DM_UDEV_DISABLE_DISK_RULES_FLAG}="1", '
        'OPTIONS+="nowatch"\n') % COOKIE

    @staticmethod
    def _reload():
        subprocess.run(['udevadm', 'control', '--reload'], capture_output=True)

    def __enter__(self):
        os.makedirs(os.path.dirname(UDEV_RULE), exist_ok=True)
        with open(UDEV_RULE, 'w') as f:
            f.write(self.TEXT)
        self._reload()
        return self

    def __exit__(self, *exc):
        try:
            os.unlink(UDEV_RULE)
        except FileNotFoundError:
            pass
        self._reload()


def udev_props(spec):
    """udev's database entry for block device @spec ("major:minor"):
    {property: value}."""
    r = subprocess.run(['udevadm', 'info', '--query=property', '--path',
                        '/sys/dev/block/' + spec],
                       capture_output=True, text=True)
    return dict(line.split('=', 1) for line in r.stdout.splitlines() if '=' in line)


def cmd_udev_check(a):
    """The quiet rule at work: udev runs no `dmsetup udevflags` (whose
    flags it would keep) for a device made through dmlib, and handles one
    made by a synchronised dmsetup as usual."""
    back = dmlib.Dev.existing(a.backing)
    table = '0 %d linear %s 0' % (min(dev_sectors(a.backing), 2048), back.spec)
    env = {k: v for k, v in os.environ.items() if k != 'DM_DISABLE_UDEV'}
    with UdevQuiet():
        quiet = dmlib.create(a.name, table)
        made = subprocess.run(['dmsetup', 'create', a.other, '--table', table],
                              env=env, capture_output=True, text=True)
        try:
            subprocess.run(['udevadm', 'settle'], capture_output=True)
            pq = udev_props(quiet.spec)
            pl = {}
            if made.returncode == 0:
                pl = udev_props(dmlib.Dev.existing('/dev/mapper/' + a.other).spec)
        finally:
            dmlib.remove(quiet.name)
            if made.returncode == 0:
                subprocess.run(['dmsetup', 'remove', a.other], env=env,
                               capture_output=True)
    ok = check(pq.get('DM_NAME') == a.name and 'DM_UDEV_PRIMARY_SOURCE_FLAG' not in pq,
               'udev ran no program for a device made without synchronisation',
               'its udev properties: %s' % pq)
    ok &= check(pl.get('DM_UDEV_PRIMARY_SOURCE_FLAG') == '1',
                'udev handled a device of a synchronised dmsetup as usual',
                'dmsetup create: %s; its udev properties: %s' % (
                    made.stderr.strip() or 'ok', pl))
    return 0 if ok else 1


def dev_sectors(dev):
    fd = os.open(dev, os.O_RDONLY)
    try:
        return os.lseek(fd, 0, os.SEEK_END) // SECT
    finally:
        os.close(fd)


class Buf:
    """An aligned buffer for O_DIRECT I/O, grown on demand."""
    def __init__(self, size=1 << 20):
        self.m = mmap.mmap(-1, size)

    def view(self, n):
        if n > len(self.m):
            self.m = mmap.mmap(-1, (n + (1 << 20) - 1) & ~((1 << 20) - 1))
        return memoryview(self.m)[:n]


def decode(data, b):
    """Tag of the write a 4 KiB block of block @b holds: 0 for zeros,
    None for anything else (another block's data, a mix, garbage)."""
    if data == ZERO:
        return 0
    m = re.match(rb'([0-9a-f]{8}):(\d{10});', data[:20])
    if not m or int(m.group(2)) != b:
        return None
    tag = int(m.group(1), 16)
    return tag if data == block_pattern(tag, b) else None


# ---------------------------------------------------------------- record --

class Op:
    """One operation of the workload. kind: 'w' (write blocks [first,
    first+n) with @tag), 'reset' or 'finish' (zone @zone). prev: index of
    the last mark before it was issued; dur: index of the mark that made
    it durable."""
    __slots__ = ('kind', 'first', 'n', 'tag', 'zone', 'prev', 'dur')

    def __init__(self, kind, prev, first=0, n=0, tag=0, zone=-1):
        self.kind, self.prev = kind, prev
        self.first, self.n, self.tag, self.zone = first, n, tag, zone
        self.dur = None


class Recorder:
    def __init__(self, dev, logname):
        self.logname = logname
        self.fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
        self.sfd = os.open(dev, os.O_RDWR | os.O_DIRECT | os.O_DSYNC)
        self.buf = Buf()
        self.ops = []
        self.marks = 0
        self.tag = 0
        self.undurable = []     # ops waiting for the next fsync

    def mark(self):
        dmlib.message(self.logname, 'mark m%d' % self.marks)
        self.marks += 1
        return self.marks - 1

    def write(self, first, n, dsync=False, zone=-1):
        self.tag += 1
        mv = self.buf.view(n * BS)
        for k in range(n):
            mv[k * BS:(k + 1) * BS] = block_pattern(self.tag, first + k)
        got = os.pwritev(self.sfd if dsync else self.fd, [mv], first * BS)
        if got != n * BS:
            raise RuntimeError('short write at block %d: %d of %d' % (first, got, n * BS))
        op = Op('w', self.marks - 1, first, n, self.tag, zone)
        self.ops.append(op)
        if dsync:
            op.dur = self.mark()
        else:
            self.undurable.append(op)
        return op

    def zone_op(self, kind, zone, zone_blocks):
        rng = struct.pack('QQ', zone * zone_blocks * (BS // SECT), zone_blocks * (BS // SECT))
        fcntl.ioctl(self.fd, BLKRESETZONE if kind == 'reset' else BLKFINISHZONE, rng)
        op = Op(kind, self.marks - 1, zone=zone)
        self.ops.append(op)
        op.dur = self.mark()

    def sync(self):
        os.fsync(self.fd)
        m = self.mark()
        for op in self.undurable:
            op.dur = m
        self.undurable = []

    def close(self):
        os.close(self.sfd)
        os.close(self.fd)


def workload_dm(r, a, rng):
    bb = a.band_blocks
    for _ in range(a.ops):
        x = rng.random()
        if x < 0.55:
            r.write(rng.randrange(a.blocks), 1)
        elif x < 0.8:
            n = rng.randint(2, 16)
            band = rng.randrange(a.blocks // bb)
            r.write(band * bb + rng.randrange(bb - n + 1), n)
        elif x < 0.9:
            band = rng.randrange(a.blocks // bb)
            for p in range(0, bb, 64):      # whole band, 256 KiB pieces
                r.write(band * bb + p, min(64, bb - p))
        else:
            r.write(rng.randrange(a.blocks), 1, dsync=True)


def workload_hm(r, a, rng, wp):
    zb, conv = a.zone_blocks, a.conv_zones
    nz = a.blocks // zb
    for _ in range(a.ops):
        x = rng.random()
        z = rng.randrange(conv, nz)
        if x < 0.1 and conv:
            n = rng.randint(1, 4)
            r.write(rng.randrange(conv * zb - n + 1), n)
        elif x < 0.17:
            r.zone_op('reset', z, zb)
            wp[z] = 0
        elif x < 0.21:
            r.zone_op('finish', z, zb)
            wp[z] = zb
        else:
            n = min(rng.randint(1, 8), zb - wp[z])
            if n == 0:
                continue
            r.write(z * zb + wp[z], n, dsync=rng.random() < 0.1, zone=z)
            wp[z] += n


def workload_cv(r, a, rng):
    for first, n in gen_writes(rng, a.blocks, a.did, a.dnor, a.unshingled, a.ops):
        r.write(first, n)


def record(a):
    """Run the workload over log-writes; returns (ops, nr of marks)."""
    logname, devname = a.name + 'log', a.name + 'dev'
    sectors = dev_sectors(a.backing)
    logdev = dmlib.create(logname, '0 %d log-writes %s %s' % (sectors, a.backing, a.log))
    dev = dmlib.create(devname, a.table.format(dev=logdev.spec)).path
    rng = random.Random(a.seed)
    r = Recorder(dev, logname)
    try:
        r.sync()                                    # m0: the format is durable
        wp = [0] * (a.blocks // a.zone_blocks) if a.model == 'hm' else None
        for rnd in range(a.rounds):
            if a.pause_ms and rnd % 3 == 2:
                time.sleep(a.pause_ms / 1000)       # idle: background work
            if a.model == 'dm':
                workload_dm(r, a, rng)
            elif a.model == 'hm':
                workload_hm(r, a, rng, wp)
            else:
                workload_cv(r, a, rng)
            r.sync()
    finally:
        r.close()
        status = dmlib.status(devname)
        dmlib.remove(devname)
        dmlib.remove(logname)   # waits for the log to be complete
    diag('recorded %d operations, %d marks; target status at the end: %s'
         % (len(r.ops), r.marks, status))
    return r.ops, r.marks


# ------------------------------------------------------------------ log --

class Entry:
    __slots__ = ('idx', 'pos', 'nr', 'flags', 'off', 'mark')   # pos, nr, off: bytes


def read_log(path):
    entries = []
    with open(path, 'rb', buffering=0) as f:
        magic, version, nr, ss = struct.unpack('<QQQI', f.read(28))
        if magic != LOG_MAGIC or version != 1:
            raise RuntimeError('%s holds no dm-log-writes log (magic %#x)' % (path, magic))
        pos = ss
        for i in range(nr):
            f.seek(pos)
            hdr = f.read(ss)
            sector, nsec, flags, dlen = struct.unpack('<QQQQ', hdr[:32])
            e = Entry()
            e.idx, e.pos, e.nr, e.flags = i, sector * ss, nsec * ss, flags
            e.off = pos + ss
            e.mark = hdr[32:32 + dlen].decode(errors='replace') if flags & LOG_MARK else None
            entries.append(e)
            pos += ss
            if not flags & LOG_DISCARD:
                pos += nsec * ss
    return entries


class Applier:
    """Writes log entries to a device (O_DIRECT)."""
    def __init__(self, logpath):
        self.log = open(logpath, 'rb', buffering=0)
        self.buf = Buf()

    def apply(self, dev_fd, e):
        if e.flags & LOG_MARK or e.nr == 0:
            return
        mv = self.buf.view(e.nr)
        if e.flags & LOG_DISCARD:
            mv[:] = bytes(e.nr)         # a discard may leave zeros
        else:
            self.log.seek(e.off)
            mv[:] = self.log.read(e.nr)
        if os.pwritev(dev_fd, [mv], e.pos) != e.nr:
            raise RuntimeError('short replay write at byte %d' % e.pos)

    def close(self):
        self.log.close()


# ---------------------------------------------------------------- check --

class Expect:
    """What the ops allow for a crash state: durable ops are those whose
    durable mark is at or before entry @F (the prefix), possible ones
    those issued after a mark before entry @H (the last entry in)."""
    def __init__(self, ops, mark_idx, F, H):
        self.durable = [o.dur is not None and mark_idx[o.dur] <= F for o in ops]
        self.possible = [mark_idx[o.prev] < H for o in ops]


def block_allowed(ops, ex, nblocks, zone=None):
    """Per block: (tag of the last durable write or 0, set of possible
    later tags). Only ops with .zone == zone when @zone is given."""
    last = [0] * nblocks
    later = [None] * nblocks
    for i, o in enumerate(ops):
        if o.kind != 'w' or (zone is not None and o.zone != zone):
            continue
        if ex.durable[i]:
            for b in range(o.first, o.first + o.n):
                last[b] = o.tag
                later[b] = None
        elif ex.possible[i]:
            for b in range(o.first, o.first + o.n):
                if later[b] is None:
                    later[b] = set()
                later[b].add(o.tag)
    return last, later


def read_all(dev, first, n, buf):
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    try:
        mv = buf.view(n * BS)
        got = os.preadv(fd, [mv], first * BS)
        if got != n * BS:
            raise RuntimeError('short read of %s' % dev)
        return bytes(mv)
    finally:
        os.close(fd)


def check_blocks(data, base, lo, hi, last, later, bad):
    for b in range(lo, hi):
        off = (b - base) * BS
        t = decode(data[off:off + BS], b)
        if t == last[b] or (later[b] and t in later[b]):
            continue
        bad.append('block %d holds %s, expected %d%s' % (
            b, 'other data' if t is None else 'write %d' % t, last[b],
            ' or one of %s' % sorted(later[b]) if later[b] else ''))


def liveness(dev, block, buf, bad):
    """A new write at @block reads back (the device still works)."""
    fd = os.open(dev, os.O_RDWR | os.O_DIRECT)
    try:
        mv = buf.view(BS)
        mv[:] = block_pattern(0xfffffff, block)
        os.pwritev(fd, [mv], block * BS)
        mv[:] = ZERO
        os.preadv(fd, [mv], block * BS)
        if bytes(mv) != block_pattern(0xfffffff, block):
            bad.append('a new write to block %d does not read back' % block)
    except OSError as e:
        bad.append('a new write to block %d failed: %s' % (block, os.strerror(e.errno)))
    finally:
        os.close(fd)


def check_dm(a, dev, ops, ex, buf):
    bad = []
    data = read_all(dev, 0, a.blocks, buf)
    last, later = block_allowed(ops, ex, a.blocks)
    check_blocks(data, 0, 0, a.blocks, last, later, bad)
    if not bad:
        liveness(dev, random.Random(len(ops)).randrange(a.blocks), buf, bad)
    return bad


def report_zones(dev, nr):
    """(write pointer in blocks from the zone start, condition) of the
    first @nr zones (BLKREPORTZONE, as blkzone report does)."""
    out = []
    fd = os.open(dev, os.O_RDONLY)
    try:
        sector = 0
        while len(out) < nr:
            want = min(nr - len(out), 256)
            buf = bytearray(struct.pack('QII', sector, want, 0) + bytes(64 * want))
            fcntl.ioctl(fd, BLKREPORTZONE, buf)
            got = struct.unpack_from('QII', buf)[1]
            if got == 0:
                break
            for i in range(got):
                start, length, wp, _type, cond = struct.unpack_from('QQQBB', buf, 16 + 64 * i)
                out.append(((wp - start) // (BS // SECT), cond))
                sector = start + length
    finally:
        os.close(fd)
    return out


def zone_candidates(zops, ex_d, ex_p, zb):
    """States (wp, {block: tag}, full) a zone may be in: the prefix of
    its ops up to the last durable one, then each further possible op,
    an append also partly."""
    d = max([i for i, o in enumerate(zops) if ex_d[i]], default=-1)
    wp, content, full = 0, {}, False

    def step(o):
        nonlocal wp, content, full
        if o.kind == 'reset':
            wp, content, full = 0, {}, False
        elif o.kind == 'finish':
            full = True
        else:
            for k in range(o.n):
                content[wp + k] = o.tag
            wp += o.n
    for o in zops[:d + 1]:
        step(o)
    cands = [(wp, dict(content), full or wp == zb)]
    for i in range(d + 1, len(zops)):
        o = zops[i]
        if not ex_p[i]:
            break
        if o.kind == 'w':
            for n in range(1, o.n):
                c = dict(content)
                for k in range(n):
                    c[wp + k] = o.tag
                cands.append((wp + n, c, False))
        step(o)
        cands.append((wp, dict(content), full or wp == zb))
    return cands


def check_hm(a, dev, ops, ex, buf):
    bad = []
    zb, conv = a.zone_blocks, a.conv_zones
    data = read_all(dev, 0, a.blocks, buf)
    zones = report_zones(dev, a.blocks // zb)
    if len(zones) != a.blocks // zb:
        return ['blkzone report lists %d zones, not %d' % (len(zones), a.blocks // zb)]
    if conv:
        last, later = block_allowed(ops, ex, a.blocks, zone=-1)
        check_blocks(data, 0, 0, conv * zb, last, later, bad)
    target = None
    for z in range(conv, a.blocks // zb):
        idx = [i for i, o in enumerate(ops) if o.zone == z]
        zops = [ops[i] for i in idx]
        cands = zone_candidates(zops, [ex.durable[i] for i in idx],
                                [ex.possible[i] for i in idx], zb)
        wp, cond = zones[z]
        full = cond == BLK_ZONE_COND_FULL
        base = z * zb * BS

        def holds(c):
            cw, content, cfull = c
            if full != cfull or (not full and cw != wp):
                return False
            for k in range(zb):
                blk = data[base + k * BS:base + (k + 1) * BS]
                t = content.get(k, 0) if k < cw else 0
                if blk != (ZERO if t == 0 else block_pattern(t, z * zb + k)):
                    return False
            return True
        if not any(holds(c) for c in cands):
            bad.append('zone %d (wp +%d, cond %d) matches none of %d states it may be in '
                       '(write pointers %s)' % (z, wp, cond, len(cands),
                                               sorted({c[0] for c in cands})))
        elif target is None and not full:
            target = z * zb + wp
    if not bad and target is not None:
        liveness(dev, target, buf, bad)
    return bad


def check_cv(a, dev, ops, ex, buf, name):
    bad = []
    n = a.blocks
    m = CaveatModel(n, a.did, a.dnor, a.unshingled)
    for i, o in enumerate(ops):
        if ex.durable[i]:
            m.write(o.first, o.n, o.tag)
    damaged, later = set(), {}      # later: block -> tags possible writes put there
    for i, o in enumerate(ops):
        if ex.durable[i] or not ex.possible[i]:
            continue
        for b in range(o.first, o.first + o.n):
            later.setdefault(b, set()).add(o.tag)
        d = m.damage_range(o.first, o.first + o.n - 1)
        if d:
            damaged.update(range(d[0], d[1] + 1))
    kvalid = bytearray(b'\1') * n
    for s, ln in kernel_dump(name, message=lambda n, *args: (
            0, dmlib.message(n, ' '.join(str(x) for x in args)), '')):
        kvalid[s:s + ln] = bytes(ln)
    for b in range(n):
        if m.valid[b] and b not in later and b not in damaged and not kvalid[b]:
            bad.append('block %d: flushed write %s lost (maybe damaged)' % (b, m.content[b]))
        if not m.valid[b] and b not in later and kvalid[b]:
            bad.append('block %d: valid, but maybe damaged by flushed writes' % b)
    # Read every valid block, in runs.
    b = 0
    while b < n and len(bad) < 20:
        if not kvalid[b]:
            b += 1
            continue
        e = b
        while e < n and kvalid[e] and e - b < 256:
            e += 1
        try:
            data = read_all(dev, b, e - b, buf)
        except OSError as err:
            bad.append('blocks %d..%d valid, read fails: %s' % (b, e - 1, os.strerror(err.errno)))
            b = e
            continue
        for k in range(b, e):
            t = decode(data[(k - b) * BS:(k - b + 1) * BS], k)
            ok = set(later.get(k, ()))
            if m.valid[k]:
                ok.add(m.content[k])
            if t not in ok:
                bad.append('block %d valid but holds %s (allowed %s)' % (
                    k, 'other data' if t is None else 'write %d' % t, sorted(ok)))
        b = e
    return bad


# ---------------------------------------------------------------- replay --

def copy_dev(src, dst, nbytes, buf):
    """Copy the first @nbytes of @src to @dst (O_DIRECT, 1 MiB at a time)."""
    fi = os.open(src, os.O_RDONLY | os.O_DIRECT)
    fo = os.open(dst, os.O_WRONLY | os.O_DIRECT)
    try:
        for off in range(0, nbytes, 1 << 20):
            mv = buf.view(min(1 << 20, nbytes - off))
            os.preadv(fi, [mv], off)
            os.pwritev(fo, [mv], off)
        os.fsync(fo)
    finally:
        os.close(fi)
        os.close(fo)


def points(entries, start, rng, subsets):
    """Crash states: (prefix entry index, tuple of entry indexes after it)."""
    bar = [e.idx for e in entries if e.idx >= start and e.flags & (LOG_FLUSH | LOG_FUA)]
    pts = [(i, ()) for i in bar]
    flushes = [e.idx for e in entries if e.idx >= start and e.flags & LOG_FLUSH]
    for f, g in zip(flushes, flushes[1:] + [len(entries)]):
        w = [i for i in range(f + 1, g)
             if not entries[i].flags & LOG_MARK and entries[i].nr]
        if len(w) < 2:
            continue
        fua = [i for i in w if entries[i].flags & LOG_FUA]
        for _ in range(subsets):
            k = rng.randint(1, len(w) - 1)
            s = set(rng.sample(w, k))
            s.update(j for j in fua if j < max(s))
            pts.append((f, tuple(sorted(s))))
    pts.sort()
    return pts, len(bar)


def sample(pts, maxp, rng):
    if not maxp or len(pts) <= maxp:
        return pts
    keep = sorted(rng.sample(range(len(pts)), maxp))
    return [pts[i] for i in keep]


def cmd_run(a):
    t0 = time.time()
    if a.model == 'hm' and a.blocks % a.zone_blocks:
        raise SystemExit('--blocks must be a multiple of --zone-blocks')
    for n in ('chk', 'snap', 'dev', 'log'):
        if dmlib.exists(a.name + n):
            dmlib.remove(a.name + n)
    ops, nmarks = record(a)
    t_rec = time.time() - t0
    entries = read_log(a.log)
    if not entries or entries[-1].mark != 'dm-log-writes-end':
        check(False, '%s: the log is complete' % a.label,
              'it does not end with dm-log-writes\'s end mark: the log device '
              'was too small (the kernel log says "Ran out of space")')
        return 1
    mark_idx = {}
    for e in entries:
        if e.mark and re.fullmatch(r'm\d+', e.mark):
            mark_idx[int(e.mark[1:])] = e.idx
    if not check(len(mark_idx) == nmarks, 'the log holds all %d marks' % nmarks,
                 'found %d' % len(mark_idx)):
        return 1
    mark_list = [mark_idx[k] for k in range(nmarks)]
    rng = random.Random(a.seed + 1)
    pts, nbar = points(entries, mark_list[0], rng, a.subsets)
    todo = sample(pts, a.max_points, rng)
    nw = sum(1 for e in entries if not e.flags & LOG_MARK and e.nr)
    diag('log: %d entries (%d writes, %d flushes, %d FUA, %d discards); '
         'crash points: %d prefix, %d subset; checking %d'
         % (len(entries), nw, sum(1 for e in entries if e.flags & LOG_FLUSH),
            sum(1 for e in entries if e.flags & LOG_FUA),
            sum(1 for e in entries if e.flags & LOG_DISCARD),
            nbar, len(pts) - nbar, len(todo)))

    sectors = dev_sectors(a.backing)
    ap = Applier(a.log)
    buf = Buf()
    rfd = os.open(a.replay, os.O_WRONLY | os.O_DIRECT)
    applied = 0
    failed = []
    spent = dict(replay=0.0, snapshot=0.0, create=0.0, check=0.0, remove=0.0)
    t1 = time.time()

    def lap(what, since):
        now = time.time()
        spent[what] += now - since
        return now
    snapname, chkname = a.name + 'snap', a.name + 'chk'
    try:
        for n, (F, sub) in enumerate(todo):
            t = time.time()
            while applied <= F:
                ap.apply(rfd, entries[applied])
                applied += 1
            os.fsync(rfd)
            H = max((F,) + sub)
            ex = Expect(ops, mark_list, F, H)
            t = lap('replay', t)
            if a.copy:
                # No dm-snapshot (the debug kernels): the state is a copy.
                copy_dev(a.replay, a.cow, sectors * SECT, buf)
                snap = dmlib.Dev.existing(a.cow)
            else:
                snap = dmlib.create(snapname, '0 %d snapshot %s %s N 8'
                                    % (sectors, a.replay, a.cow))
            what = 'entry %d%s' % (F, ' + %d of the next writes' % len(sub) if sub else '')
            try:
                sfd = os.open(snap.path, os.O_WRONLY | os.O_DIRECT)
                try:
                    for i in sub:
                        ap.apply(sfd, entries[i])
                    os.fsync(sfd)
                finally:
                    os.close(sfd)
                t = lap('snapshot', t)
                try:
                    dev = dmlib.create(chkname, a.table.format(dev=snap.spec)).path
                except dmlib.DmError as err:
                    bad = ['the target does not activate: %s' % err]
                else:
                    t = lap('create', t)
                    try:
                        if a.model == 'dm':
                            bad = check_dm(a, dev, ops, ex, buf)
                        elif a.model == 'hm':
                            bad = check_hm(a, dev, ops, ex, buf)
                        else:
                            bad = check_cv(a, dev, ops, ex, buf, chkname)
                    finally:
                        t = lap('check', t)
                        dmlib.remove(chkname)
            finally:
                if not a.copy:
                    dmlib.remove(snapname)
                lap('remove', t)
            if bad:
                failed.append(what)
                diag('crash point %s: %d problems: %s' % (what, len(bad), '; '.join(bad[:4])))
            if a.progress and (n + 1) % a.progress == 0:
                diag('%d of %d crash points checked, %d failed (%.1f s)'
                     % (n + 1, len(todo), len(failed), time.time() - t1))
    finally:
        os.close(rfd)
        ap.close()
    dt = time.time() - t1
    diag('%s: recorded in %.1f s; %d crash points checked in %.1f s (%.2f s each: %s)'
         % (a.label, t_rec, len(todo), dt, dt / max(1, len(todo)),
            ', '.join('%s %.2f' % (k, v / max(1, len(todo))) for k, v in spent.items())))
    print('SUMMARY %s' % json.dumps(dict(model=a.label, ops=len(ops), entries=len(entries),
                                         prefix_points=nbar, subset_points=len(pts) - nbar,
                                         checked=len(todo), failed=len(failed),
                                         record_s=round(t_rec, 1), check_s=round(dt, 1))))
    check(not failed, '%s: the target activates and keeps every durable write at all %d '
          'crash points checked (%d prefix, %d subset states in the log)'
          % (a.label, len(todo), nbar, len(pts) - nbar),
          '%d failed: %s' % (len(failed), ', '.join(failed[:8])))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    sub = p.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('run')
    r.add_argument('--model', choices=('dm', 'hm', 'cv'), required=True)
    r.add_argument('--label', help='the name its output lines give the run (default: --model)')
    for x in ('backing', 'log', 'replay', 'cow', 'table', 'name'):
        r.add_argument('--' + x, required=True)
    r.add_argument('--blocks', type=int, required=True, help='4 KiB blocks of the target')
    r.add_argument('--band-blocks', type=int, default=256)
    r.add_argument('--zone-blocks', type=int, default=64)
    r.add_argument('--conv-zones', type=int, default=0)
    r.add_argument('--did', type=int, default=16)
    r.add_argument('--dnor', type=int, default=6)
    r.add_argument('--unshingled', type=int, default=0)
    r.add_argument('--rounds', type=int, default=8)
    r.add_argument('--ops', type=int, default=30, help='operations per round')
    r.add_argument('--copy', action='store_true',
                   help='build each state as a copy on --cow, not a dm-snapshot of --replay')
    r.add_argument('--seed', type=int, default=1)
    r.add_argument('--pause-ms', type=int, default=0,
                   help='before every third round, pause this long (idle_ms)')
    r.add_argument('--subsets', type=int, default=1, help='subset states per flush interval')
    r.add_argument('--max-points', type=int, default=0, help='check a sample of this many (0: all)')
    r.add_argument('--progress', type=int, default=25, help='a progress line every N points')
    u = sub.add_parser('udev-check', help='check that the quiet udev rule works')
    for x in ('backing', 'name', 'other'):
        u.add_argument('--' + x, required=True)
    a = p.parse_args()
    if a.cmd == 'udev-check':
        return cmd_udev_check(a)
    if a.blocks <= 0 or a.rounds <= 0 or a.ops <= 0:
        p.error('--blocks, --rounds and --ops must be positive')
    a.label = a.label or a.model
    with UdevQuiet():
        return cmd_run(a)


if __name__ == '__main__':
    sys.exit(main())
