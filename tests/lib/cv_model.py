#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Userspace reference model of the Caveat Scriptor damage rule (dm-caveat).

The rule (docs/dm-caveat.rst): writing blocks i..j marks them valid and
marks blocks max(i + 1 + DNOR, j + 1) .. j + DID maybe damaged, clipped to
the device, never inside the unshingled region [0, U); a write that lies
wholly in the unshingled region damages nothing. Initially every block is
maybe damaged.

As a library: CaveatModel. As a program, the drivers used by the VM tests
(tests/test_cv_*.sh); each prints "CHECK PASS <desc>" / "CHECK FAIL <desc>
| <detail>" lines that the shell test turns into TAP results, and
"# <text>" diagnostics.

  cv_model.py random --dev DEV --dm NAME --blocks N --did D --dnor R
              --unshingled U --seed S --writes W [--zero] [--state FILE]
      seeded random writes (dd oflag=direct) applied to the device and the
      model; compares dump, status counters, reads and data.
  cv_model.py verify --dev DEV --dm NAME --state FILE [--zero]
      compare the device with a model saved by "random --state FILE".
"""
import argparse
import errno
import json
import mmap
import os
import random
import subprocess
import sys
import time


class CaveatModel:
    def __init__(self, nr_blocks, did, dnor, unshingled=0):
        assert 0 <= dnor <= did
        self.n = nr_blocks
        self.did = did
        self.dnor = dnor
        self.u = unshingled
        self.valid = bytearray(nr_blocks)     # 1 = valid (written, not damaged)
        self.content = [None] * nr_blocks     # tag of the last write per block
        self.stats = dict(writes=0, damaging_writes=0, damaged_blocks=0,
                          live_damage_writes=0, live_damaged_blocks=0)

    def damage_range(self, first, last):
        """Damage range (a, b) inclusive of a write of first..last, or None."""
        if last < self.u or self.did == 0:
            return None
        a = max(first + 1 + self.dnor, last + 1, self.u)
        b = min(last + self.did, self.n - 1)
        return (a, b) if a <= b else None

    def write(self, first, nblocks, tag=None):
        """Apply a write; returns the number of live blocks it damaged."""
        last = first + nblocks - 1
        assert 0 <= first <= last < self.n
        self.stats['writes'] += 1
        live = 0
        d = self.damage_range(first, last)
        if d:
            a, b = d
            self.stats['damaging_writes'] += 1
            self.stats['damaged_blocks'] += b - a + 1
            live = sum(self.valid[a:b + 1])
            if live:
                self.stats['live_damage_writes'] += 1
                self.stats['live_damaged_blocks'] += live
            for k in range(a, b + 1):
                self.valid[k] = 0
        for k in range(first, last + 1):
            self.valid[k] = 1
            self.content[k] = tag
        return live

    def is_valid(self, b):
        return bool(self.valid[b])

    def read_ok(self, first, nblocks):
        return all(self.valid[first:first + nblocks])

    def damaged_extents(self, start=0, count=None):
        """Maybe-damaged extents in [start, start+count) as (start, len)."""
        if count is None:
            count = self.n - start
        out = []
        k, end = start, start + count
        while k < end:
            if self.valid[k]:
                k += 1
                continue
            s = k
            while k < end and not self.valid[k]:
                k += 1
            out.append((s, k - s))
        return out

    def valid_blocks(self):
        return sum(self.valid)

    def to_json(self):
        return dict(n=self.n, did=self.did, dnor=self.dnor, u=self.u,
                    valid=self.valid.hex(), content=self.content,
                    stats=self.stats)

    @classmethod
    def from_json(cls, d):
        m = cls(d['n'], d['did'], d['dnor'], d['u'])
        m.valid = bytearray.fromhex(d['valid'])
        m.content = d['content']
        m.stats = d['stats']
        return m


# ------------------------------------------------------------ device side

BS = 4096


def check(ok, desc, detail=''):
    if ok:
        print('CHECK PASS %s' % desc)
    else:
        print('CHECK FAIL %s | %s' % (desc, str(detail)[:2000]))
    sys.stdout.flush()
    return ok


T0 = time.time()


def diag(msg):
    print('# [%5.1fs] %s' % (time.time() - T0, msg))
    sys.stdout.flush()


def block_pattern(tag, b, bs=BS):
    unit = ('%08x:%010d;' % (tag, b)).encode()
    return (unit * (bs // len(unit) + 1))[:bs]


class Writer:
    """O_DIRECT writes, one pwrite(2) (one bio) per model write.

    The device stays open: closing a written block device makes udev probe
    it (blkid), and probes of a caveat device read damaged blocks, fail and
    slow the VM down. Same I/O as dd oflag=direct with bs = the write size.
    """
    def __init__(self, dev, bs=BS):
        self.fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
        self.bs = bs
        self.buf = mmap.mmap(-1, 4 << 20)

    def write(self, first, nblocks, tag):
        ln = nblocks * self.bs
        for k in range(nblocks):
            self.buf[k * self.bs:(k + 1) * self.bs] = block_pattern(tag, first + k, self.bs)
        try:
            got = os.pwritev(self.fd, [memoryview(self.buf)[:ln]], first * self.bs)
        except OSError as e:
            return False, os.strerror(e.errno)
        return got == ln, 'short write %d of %d' % (got, ln)

    def close(self):
        os.close(self.fd)


def dm_message(name, *args):
    r = subprocess.run(['dmsetup', 'message', name, '0'] + [str(a) for a in args],
                       capture_output=True, text=True)
    return r.returncode, r.stdout.strip(), r.stderr.strip()


def kernel_dump(name, start=None, count=None, message=None):
    """Damaged extents from the kernel, following 'truncated next=' markers.
    @message(name, *args) -> (rc, response, error): dmsetup by default."""
    message = message or dm_message
    out = []
    if start is None:
        rc, txt, err = message(name, 'dump')
        args = None
    else:
        args = (start, count)
    end = None if start is None else start + count
    while True:
        if args is not None:
            rc, txt, err = message(name, 'dump', *args)
        if rc != 0:
            raise RuntimeError('dump failed: %s' % err)
        nxt = None
        for tok in txt.split():
            if tok.startswith('next='):
                nxt = int(tok[5:])
            elif '+' in tok:
                s, l = tok.split('+')
                out.append((int(s), int(l)))
        if nxt is None:
            break
        if end is None:
            end = int(kernel_status(name)['capacity'])
        args = (nxt, end - nxt)
    # A continuation may split one extent in two: merge adjacent ones.
    merged = []
    for s, l in out:
        if merged and merged[-1][0] + merged[-1][1] == s:
            merged[-1] = (merged[-1][0], merged[-1][1] + l)
        else:
            merged.append((s, l))
    return merged


STATUS_FIELDS = ['writes', 'damaging_writes', 'damaged_blocks',
                 'live_damage_writes', 'live_damaged_blocks', 'damaged_reads',
                 'valid_blocks', 'commits', 'mem_bytes', 'journal_writes',
                 'model_busy_ms', 'model_lag_ms', 'cached_writes',
                 'bad_read_errors', 'bad_write_errors', 'bad_remaps',
                 'transient_errors', 'delayed_ios']


def kernel_status(name):
    r = subprocess.run(['dmsetup', 'status', name], capture_output=True,
                       text=True, check=True)
    f = r.stdout.split()
    # <start> <len> caveat <fields...>
    st = dict(zip(STATUS_FIELDS, (int(x) for x in f[3:])))
    rc, txt, err = dm_message(name, 'modsense')
    t = txt.split()
    st['capacity'] = int(t[t.index('capacity') + 1])
    return st


class Reader:
    def __init__(self, dev, bs=BS):
        self.fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
        self.bs = bs
        self.buf = mmap.mmap(-1, 1 << 20)

    def read(self, first, nblocks):
        """(errno or 0, bytes)"""
        ln = nblocks * self.bs
        mv = memoryview(self.buf)[:ln]
        try:
            got = os.preadv(self.fd, [mv], first * self.bs)
        except OSError as e:
            return e.errno, b''
        if got != ln:
            return -1, b''
        return 0, bytes(mv)

    def close(self):
        os.close(self.fd)


def compare_dump(model, name, desc):
    want = model.damaged_extents()
    try:
        got = kernel_dump(name)
    except RuntimeError as e:
        return check(False, desc, e)
    if got == want:
        return check(True, desc + ' (%d extents)' % len(want))
    # First difference, for the log.
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            break
    else:
        i = min(len(got), len(want))
    return check(False, desc, 'first difference at extent %d: kernel %s model %s'
                 % (i, got[i:i + 3], want[i:i + 3]))


def check_reads(model, rd, name, blocks, zero, desc):
    """Each block in blocks read alone: success/failure and data as the model says."""
    bad = []
    for b in blocks:
        e, data = rd.read(b, 1)
        if model.is_valid(b):
            if e:
                bad.append('block %d valid but read failed (errno %d)' % (b, e))
            elif model.content[b] is not None and \
                    data != block_pattern(model.content[b], b):
                bad.append('block %d valid but holds other data' % b)
        elif zero:
            if e:
                bad.append('block %d damaged, zero mode, read failed (errno %d)' % (b, e))
            elif data.strip(b'\0'):
                bad.append('block %d damaged, zero mode, not zeros' % b)
        elif e != errno.ENODATA and e != errno.EIO:
            bad.append('block %d damaged but read gave errno %d' % (b, e))
        elif e == errno.EIO:
            bad.append('block %d damaged: EIO, expected ENODATA (medium error)' % b)
    return check(not bad, '%s: %d single-block reads as the model predicts'
                 % (desc, len(blocks)), '; '.join(bad[:5]))


def check_range_reads(model, rd, ranges, zero, desc):
    bad = []
    for first, nb in ranges:
        e, data = rd.read(first, nb)
        ok = model.read_ok(first, nb)
        if zero:
            if e:
                bad.append('%d+%d failed (errno %d) in zero mode' % (first, nb, e))
                continue
            for k in range(nb):
                blk = data[k * BS:(k + 1) * BS]
                b = first + k
                if model.is_valid(b):
                    if model.content[b] is not None and blk != block_pattern(model.content[b], b):
                        bad.append('%d+%d: valid block %d wrong data' % (first, nb, b))
                        break
                elif blk.strip(b'\0'):
                    bad.append('%d+%d: damaged block %d not zeros' % (first, nb, b))
                    break
        elif ok and e:
            bad.append('%d+%d all valid but failed (errno %d)' % (first, nb, e))
        elif not ok and not e:
            bad.append('%d+%d touches damaged blocks but succeeded' % (first, nb))
    return check(not bad, '%s: %d multi-block reads as the model predicts'
                 % (desc, len(ranges)), '; '.join(bad[:5]))


def gen_writes(rng, n, did, dnor, u, count):
    """Seeded writes around DNOR/DID sizes, the unshingled boundary, the end."""
    sizes = [1, 2, max(1, dnor), dnor + 1, dnor + 2, max(1, did - 1), max(1, did),
             did + 1, did + 2, 2 * did + 1, 3 * did]
    windows = [(max(0, u - 4 * did), min(n, u + 8 * did)),
               (n // 2 - 8 * did, n // 2 + 8 * did),
               (n - 8 * did, n)]
    out = []
    prev_end = u
    for _ in range(count):
        nb = rng.choice(sizes) if rng.random() < 0.8 else rng.randint(1, 3 * did + 2)
        nb = max(1, min(nb, n))
        r = rng.random()
        if r < 0.15:
            first = n - nb                              # at the device end
        elif r < 0.3 and u:
            first = max(0, u - nb + rng.randint(-2, 2))  # across the boundary
        elif r < 0.55:
            first = prev_end + rng.randint(-did, did + 2)  # near the last write
        else:
            lo, hi = rng.choice(windows)
            first = rng.randint(lo, max(lo, hi - 1))
        first = max(0, min(first, n - nb))
        out.append((first, nb))
        prev_end = first + nb
    return out


def sample_blocks(rng, model, k):
    """Blocks to read: every block near the writes' windows, plus random ones."""
    n = model.n
    cand = set()
    for b in range(n):
        if model.content[b] is not None:
            for d in (-1, 0, 1, model.dnor, model.did, model.did + 1):
                if 0 <= b + d < n:
                    cand.add(b + d)
    cand = sorted(cand)
    pick = rng.sample(cand, min(k, len(cand)))
    pick += [rng.randrange(n) for _ in range(k // 8)]
    return sorted(set(pick))


def compare_status(model, name, desc):
    st = kernel_status(name)
    bad = []
    for key in ('writes', 'damaging_writes', 'damaged_blocks',
                'live_damage_writes', 'live_damaged_blocks'):
        if st[key] != model.stats[key]:
            bad.append('%s kernel %d model %d' % (key, st[key], model.stats[key]))
    if st['valid_blocks'] != model.valid_blocks():
        bad.append('valid_blocks kernel %d model %d' % (st['valid_blocks'],
                                                       model.valid_blocks()))
    check(not bad, desc, '; '.join(bad))
    return st


def cmd_random(a):
    rng = random.Random(a.seed)
    model = CaveatModel(a.blocks, a.did, a.dnor, a.unshingled)
    writes = gen_writes(rng, a.blocks, a.did, a.dnor, a.unshingled, a.writes)
    diag('seed %d: %d writes, %d blocks, did %d dnor %d unshingled %d'
         % (a.seed, len(writes), a.blocks, a.did, a.dnor, a.unshingled))
    rd = Reader(a.dev)
    wr = Writer(a.dev)
    failed_writes = []
    live_total = 0
    for i, (first, nb) in enumerate(writes):
        tag = a.tag_base + i + 1
        ok, err = wr.write(first, nb, tag)
        if not ok:
            failed_writes.append('%d+%d: %s' % (first, nb, err.strip()))
            continue
        live_total += model.write(first, nb, tag)
        if a.checkpoint and (i + 1) % a.checkpoint == 0 and i + 1 < len(writes):
            compare_dump(model, a.dm, 'dump after %d writes matches the model' % (i + 1))
    wr.close()
    diag('writes done')
    check(not failed_writes, 'all %d writes succeeded' % len(writes),
          '; '.join(failed_writes[:3]))
    diag('model: %d live blocks damaged, %d valid blocks, %d extents'
         % (live_total, model.valid_blocks(), len(model.damaged_extents())))
    compare_dump(model, a.dm, 'final dump matches the model')
    # Range dumps: windows, including one at the device end.
    bad = []
    for s, c in [(0, min(a.blocks, a.unshingled + 3 * a.did)),
                 (a.blocks // 2 - 5, 50), (a.blocks - 40, 40), (a.blocks - 1, 1)]:
        s = max(0, s)
        c = min(c, a.blocks - s)
        if c <= 0:
            continue
        want = model.damaged_extents(s, c)
        got = kernel_dump(a.dm, s, c)
        if got != want:
            bad.append('dump %d %d: kernel %s model %s' % (s, c, got[:4], want[:4]))
    check(not bad, 'range dumps match the model', '; '.join(bad))
    st = compare_status(model, a.dm, 'status counters match the model')
    diag('kernel status: %s' % st)
    blocks = sample_blocks(rng, model, a.reads)
    check_reads(model, rd, a.dm, blocks, a.zero, 'final')
    ranges = []
    for _ in range(40):
        nb = rng.randint(2, 2 * a.did + 2)
        first = rng.choice(blocks)
        first = min(first, a.blocks - nb)
        ranges.append((first, nb))
    check_range_reads(model, rd, ranges, a.zero, 'final')
    # query agrees with the model on the sampled blocks.
    bad = []
    for b in blocks[::max(1, len(blocks) // 12)]:
        if os.environ.get('CV_DEBUG'):
            diag('query %d' % b)
        rc, txt, err = dm_message(a.dm, 'query', b)
        want = 'valid' if model.is_valid(b) else 'damaged'
        if txt != want:
            bad.append('query %d: %r, model %s' % (b, txt, want))
    check(not bad, 'query agrees with the model', '; '.join(bad[:5]))
    rd.close()
    if a.state:
        with open(a.state, 'w') as f:
            json.dump(dict(model=model.to_json(), blocks=blocks), f)


def cmd_verify(a):
    with open(a.state) as f:
        d = json.load(f)
    model = CaveatModel.from_json(d['model'])
    compare_dump(model, a.dm, '%s: dump matches the saved model' % a.desc)
    st = kernel_status(a.dm)
    check(st['valid_blocks'] == model.valid_blocks(),
          '%s: valid_blocks matches the saved model' % a.desc,
          'kernel %d model %d' % (st['valid_blocks'], model.valid_blocks()))
    rd = Reader(a.dev)
    check_reads(model, rd, a.dm, d['blocks'], a.zero, a.desc)
    rd.close()


def cmd_writers(a):
    """A caveat-aware writer (each extent followed by DID free blocks) and
    a naive one (in-place overwrites of packed data)."""
    rng = random.Random(a.seed)
    model = CaveatModel(a.blocks, a.did, a.dnor, a.unshingled)
    wr = Writer(a.dev)
    rd = Reader(a.dev)
    tag = a.tag_base
    st0 = kernel_status(a.dm)
    extents = []
    if a.mode == 'aware':
        pos = a.start
        while True:
            nb = rng.randint(1, 3 * a.did)
            if pos + nb + a.did > a.start + a.count:
                break
            extents.append((pos, nb))
            pos += nb + a.did
        # Write every extent, then rewrite them in a random order, twice.
        order = list(extents) + rng.sample(extents, len(extents)) + \
            rng.sample(extents, len(extents))
    else:
        # Packed data: sequential extents with no gap, then in-place
        # overwrites of random extents (a file system rewriting a file).
        pos = a.start
        while pos < a.start + a.count:
            nb = min(rng.randint(1, 3 * a.did), a.start + a.count - pos)
            extents.append((pos, nb))
            pos += nb
        order = list(extents) + [rng.choice(extents) for _ in range(len(extents) // 3)]
    bad = []
    for first, nb in order:
        tag += 1
        ok, err = wr.write(first, nb, tag)
        if not ok:
            bad.append('%d+%d: %s' % (first, nb, err))
            continue
        model.write(first, nb, tag)
    wr.close()
    check(not bad, '%s writer: %d writes succeeded' % (a.mode, len(order)),
          '; '.join(bad[:3]))
    st = kernel_status(a.dm)
    live = st['live_damaged_blocks'] - st0['live_damaged_blocks']
    diag('%s writer: %d extents, %d writes, kernel live damage %d blocks, model %d'
         % (a.mode, len(extents), len(order), live,
            model.stats['live_damaged_blocks']))
    print('LIVE %d' % live)
    check(live == model.stats['live_damaged_blocks'],
          '%s writer: live-damage counter is what the rule says (%d blocks)'
          % (a.mode, model.stats['live_damaged_blocks']),
          'kernel %d model %d' % (live, model.stats['live_damaged_blocks']))
    if a.mode == 'aware':
        check(live == 0, 'aware writer: no live data damaged', 'kernel %d' % live)
    else:
        check(live > 0, 'naive writer: overwrites damaged live data', 'kernel %d' % live)
    # Every block of the region: reads as the model says, data intact.
    blocks = list(range(a.start, a.start + a.count))
    lost = [b for b in blocks if model.content[b] is not None and not model.is_valid(b)]
    diag('%s writer: %d blocks written and now lost' % (a.mode, len(lost)))
    check_reads(model, rd, a.dm, blocks, False, '%s writer' % a.mode)
    rd.close()


def parse_filefrag(path):
    """Physical 4 KiB blocks of a file, as (start, len) ranges."""
    r = subprocess.run(['filefrag', '-v', '-b4096', path], capture_output=True,
                       text=True, check=True)
    out = []
    for line in r.stdout.splitlines():
        f = line.replace('..', ' ').replace(':', ' ').split()
        if len(f) >= 5 and f[0].isdigit() and f[3].isdigit():
            out.append((int(f[3]), int(f[4]) - int(f[3]) + 1))
    return out


def cmd_ext4check(a):
    """Files whose blocks the kernel says are damaged read back wrong
    (zeros there); every other file reads back intact. The manifest has
    a line "MD5 PATH" per file (test_cv_05 writes it with md5sum)."""
    import hashlib
    with open(a.manifest) as f:
        files = [l.split() for l in f if l.strip()]
    dmg = kernel_dump(a.dm)
    def damaged(rng_list):
        n = 0
        for s, l in rng_list:
            for ds, dl in dmg:
                lo, hi = max(s, ds), min(s + l, ds + dl)
                if lo < hi:
                    n += hi - lo
        return n
    pred = {}
    for digest, path in files:
        pred[path] = damaged(parse_filefrag(path))
    with open('/proc/sys/vm/drop_caches', 'w') as f:
        f.write('3\n')
    r0 = kernel_status(a.dm)['damaged_reads']
    wrong_intact, right_damaged, nd = [], [], 0
    for digest, path in files:
        try:
            with open(path, 'rb') as f:
                got = hashlib.md5(f.read()).hexdigest()
        except OSError as e:
            got = 'error %d' % e.errno
        if pred[path]:
            nd += 1
            if got == digest:
                right_damaged.append(path)
        elif got != digest:
            wrong_intact.append('%s (%s)' % (path, got[:12]))
    r1 = kernel_status(a.dm)['damaged_reads']
    diag('ext4: %d files, %d with maybe-damaged blocks (%d blocks), %d damaged reads while reading them'
         % (len(files), nd, sum(pred.values()), r1 - r0))
    print('DAMAGED_FILES %d' % nd)
    check(not wrong_intact, 'files on valid blocks read back intact',
          '; '.join(wrong_intact[:5]))
    check(not right_damaged, 'files on damaged blocks do not read back intact',
          '; '.join(right_damaged[:5]))
    check((r1 - r0 > 0) == (nd > 0),
          'damaged reads counted iff damaged files were read (%d reads, %d files)'
          % (r1 - r0, nd), '')


def cmd_crash1(a):
    """Boot 1 of the crash test: writes, a flush, more writes (not flushed).
    Saves the model at the flush and at the end for crash2."""
    rng = random.Random(a.seed)
    model = CaveatModel(a.blocks, a.did, a.dnor, a.unshingled)
    wr = Writer(a.dev)
    writes = gen_writes(rng, a.blocks, a.did, a.dnor, a.unshingled, 2 * a.writes)
    bad = []
    for i, (first, nb) in enumerate(writes[:a.writes]):
        ok, err = wr.write(first, nb, i + 1)
        if ok:
            model.write(first, nb, i + 1)
        else:
            bad.append(err)
    os.fsync(wr.fd)
    m1 = model.to_json()
    touched = set()
    for i, (first, nb) in enumerate(writes[a.writes:]):
        tag = a.writes + i + 1
        ok, err = wr.write(first, nb, tag)
        if not ok:
            bad.append(err)
            continue
        model.write(first, nb, tag)
        touched.update(range(first, first + nb))
        d = model.damage_range(first, first + nb - 1)
        if d:
            touched.update(range(d[0], d[1] + 1))
    check(not bad, 'boot 1: %d writes succeeded' % len(writes), '; '.join(bad[:3]))
    st = kernel_status(a.dm)
    diag('boot 1: %s' % st)
    with open(a.state, 'w') as f:
        json.dump(dict(m1=m1, m2=model.to_json(), touched=sorted(touched)), f)
        f.flush()
        os.fsync(f.fileno())
    # The writes after the fsync stay unflushed: crash now (the shell does).


def cmd_crash2(a):
    """Boot 2: the map is never falsely clean, flushed writes are kept."""
    with open(a.state) as f:
        d = json.load(f)
    m1 = CaveatModel.from_json(d['m1'])
    m2 = CaveatModel.from_json(d['m2'])
    touched = set(d['touched'])
    dmg = kernel_dump(a.dm)
    kvalid = bytearray(b'\1') * m2.n
    for s, l in dmg:
        kvalid[s:s + l] = bytes(l)
    false_clean = [b for b in range(m2.n) if kvalid[b] and not m2.valid[b]]
    check(not false_clean, 'after the crash: every valid block is valid in the model (never falsely clean)',
          'blocks %s' % false_clean[:10])
    lost = [b for b in range(m1.n) if m1.valid[b] and b not in touched and not kvalid[b]]
    check(not lost, 'after the crash: flushed writes not touched since are all valid',
          'blocks %s' % lost[:10])
    rd = Reader(a.dev)
    bad = []
    nval = 0
    for b in range(m2.n):
        if not kvalid[b]:
            continue
        nval += 1
        e, data = rd.read(b, 1)
        if e:
            bad.append('block %d valid but read failed (%d)' % (b, e))
        elif data != block_pattern(m2.content[b], b):
            bad.append('block %d valid but holds other data' % b)
    rd.close()
    unflushed_kept = sum(1 for b in touched if kvalid[b])
    diag('after the crash: %d valid blocks (model at flush %d, at crash %d), %d blocks touched after the flush are valid'
         % (nval, m1.valid_blocks(), m2.valid_blocks(), unflushed_kept))
    check(not bad, 'after the crash: every valid block holds its last write (%d blocks)' % nval,
          '; '.join(bad[:5]))


def cmd_selftest(a):
    """Hand-checked cases of the rule (runs on the host too)."""
    m = CaveatModel(100, 10, 3, 10)
    assert m.damaged_extents() == [(0, 100)]
    m.write(20, 5)              # 20..24; damage max(24, 25)..34 = 25..34
    assert m.damaged_extents() == [(0, 20), (25, 75)], m.damaged_extents()
    m.write(25, 10)             # 25..34 valid; damage 35..44
    assert m.write(20, 1) == 7  # damage max(24, 21)..30 = 24..30, all valid
    assert m.damaged_extents() == [(0, 20), (24, 7), (35, 65)], m.damaged_extents()
    assert m.write(0, 10) == 0  # wholly unshingled: no damage
    assert m.write(5, 6) == 1   # 5..10 reaches block 10: damage 11..20 (20 live)
    assert m.damaged_extents() == [(11, 10), (24, 7), (35, 65)], m.damaged_extents()
    m2 = CaveatModel(50, 4, 4)
    m2.write(10, 1)             # DNOR = DID: one block damages nothing
    assert m2.damaged_extents() == [(0, 10), (11, 39)]
    m2.write(11, 3)             # 11..13: damage max(16, 14)..17 = 16..17
    assert m2.stats['damaged_blocks'] == 2
    m2.write(46, 4)             # at the end: damage clipped away
    assert m2.stats['damaging_writes'] == 1
    print('selftest ok')


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('random')
    r.add_argument('--dev', required=True)
    r.add_argument('--dm', required=True)
    r.add_argument('--blocks', type=int, required=True)
    r.add_argument('--did', type=int, required=True)
    r.add_argument('--dnor', type=int, required=True)
    r.add_argument('--unshingled', type=int, default=0)
    r.add_argument('--seed', type=int, default=1)
    r.add_argument('--writes', type=int, default=150)
    r.add_argument('--reads', type=int, default=300)
    r.add_argument('--checkpoint', type=int, default=25)
    r.add_argument('--tag-base', type=int, default=0)
    r.add_argument('--zero', action='store_true')
    r.add_argument('--state')
    v = sub.add_parser('verify')
    v.add_argument('--dev', required=True)
    v.add_argument('--dm', required=True)
    v.add_argument('--state', required=True)
    v.add_argument('--desc', default='verify')
    v.add_argument('--zero', action='store_true')
    w = sub.add_parser('writers')
    w.add_argument('--dev', required=True)
    w.add_argument('--dm', required=True)
    w.add_argument('--mode', choices=['aware', 'naive'], required=True)
    w.add_argument('--blocks', type=int, required=True)
    w.add_argument('--did', type=int, required=True)
    w.add_argument('--dnor', type=int, required=True)
    w.add_argument('--unshingled', type=int, default=0)
    w.add_argument('--start', type=int, default=0)
    w.add_argument('--count', type=int, required=True)
    w.add_argument('--seed', type=int, default=1)
    w.add_argument('--tag-base', type=int, default=0)
    e = sub.add_parser('ext4check')
    e.add_argument('--dm', required=True)
    e.add_argument('--manifest', required=True)
    for name in ('crash1', 'crash2'):
        c = sub.add_parser(name)
        c.add_argument('--dev', required=True)
        c.add_argument('--dm', required=True)
        c.add_argument('--state', required=True)
        c.add_argument('--blocks', type=int, default=0)
        c.add_argument('--did', type=int, default=0)
        c.add_argument('--dnor', type=int, default=0)
        c.add_argument('--unshingled', type=int, default=0)
        c.add_argument('--seed', type=int, default=1)
        c.add_argument('--writes', type=int, default=100)
    sub.add_parser('selftest')
    a = p.parse_args()
    {'random': cmd_random, 'verify': cmd_verify, 'writers': cmd_writers,
     'ext4check': cmd_ext4check, 'crash1': cmd_crash1, 'crash2': cmd_crash2,
     'selftest': cmd_selftest}[a.cmd](a)


if __name__ == '__main__':
    main()
