# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of tests/lib/crashpoints.py: the dm-log-writes reader,
replay, the crash states it enumerates and the expectations it derives
(the VM test test_crash_01_points runs it against the targets)."""

import os
import random
import shutil
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))
import crashpoints as cp  # noqa: E402
from cv_model import block_pattern  # noqa: E402

SS = 512


def make_log(path, entries):
    """entries: (sector, nr_sectors, flags, data bytes or mark text)."""
    with open(path, 'wb') as f:
        f.write(struct.pack('<QQQI', cp.LOG_MAGIC, 1, len(entries), SS).ljust(SS, b'\0'))
        for sector, nr, flags, payload in entries:
            mark = payload.encode() if flags & cp.LOG_MARK else b''
            f.write((struct.pack('<QQQQ', sector, nr, flags, len(mark)) + mark).ljust(SS, b'\0'))
            if not flags & (cp.LOG_DISCARD | cp.LOG_MARK):
                assert len(payload) == nr * SS
                f.write(payload)


def op(kind, prev, dur, first=0, n=0, tag=0, zone=-1):
    o = cp.Op(kind, prev, first, n, tag, zone)
    o.dur = dur
    return o


class LogTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.dir)
        self.log = os.path.join(self.dir, 'log')
        a, b = block_pattern(1, 0), block_pattern(2, 1)
        make_log(self.log, [
            (0, 0, cp.LOG_MARK, 'm0'),
            (0, 8, 0, a),                       # 1: block 0
            (0, 0, cp.LOG_FLUSH, b''),          # 2
            (8, 8, 0, b),                       # 3: block 1
            (16, 8, cp.LOG_DISCARD, b''),       # 4: block 2
            (8, 8, cp.LOG_FUA, b),              # 5
            (24, 8, 0, block_pattern(3, 3)),    # 6: block 3
            (0, 0, cp.LOG_FLUSH, b''),          # 7
            (0, 0, cp.LOG_MARK, 'dm-log-writes-end'),
        ])

    def test_read(self):
        e = cp.read_log(self.log)
        self.assertEqual(len(e), 9)
        self.assertEqual(e[0].mark, 'm0')
        self.assertEqual((e[3].pos, e[3].nr), (4096, 4096))
        self.assertTrue(e[4].flags & cp.LOG_DISCARD)
        self.assertEqual(e[8].mark, 'dm-log-writes-end')
        with open(self.log, 'rb') as f:
            f.seek(e[6].off)
            self.assertEqual(f.read(4096), block_pattern(3, 3))

    def test_bad_magic(self):
        with open(self.log, 'r+b') as f:
            f.write(b'\0' * 8)
        with self.assertRaises(RuntimeError):
            cp.read_log(self.log)

    def test_apply(self):
        e = cp.read_log(self.log)
        img = os.path.join(self.dir, 'img')
        with open(img, 'wb') as f:
            f.write(b'\xaa' * 4 * 4096)
        fd = os.open(img, os.O_RDWR)
        ap = cp.Applier(self.log)
        for x in e:
            ap.apply(fd, x)
        ap.close()
        os.close(fd)
        with open(img, 'rb') as f:
            data = f.read()
        self.assertEqual(data[:4096], block_pattern(1, 0))
        self.assertEqual(data[4096:8192], block_pattern(2, 1))
        self.assertEqual(data[8192:12288], bytes(4096))        # discard: zeros
        self.assertEqual(data[12288:], block_pattern(3, 3))

    def test_points(self):
        e = cp.read_log(self.log)
        pts, nbar = cp.points(e, 0, random.Random(1), 3)
        # prefix states at the two flushes and the FUA write
        self.assertEqual(nbar, 3)
        self.assertEqual([p for p in pts if not p[1]], [(2, ()), (5, ()), (7, ())])
        # subsets of the writes between the flushes (3..6), never all or none
        subs = [p for p in pts if p[1]]
        self.assertEqual(len(subs), 3)
        for f, sub in subs:
            self.assertEqual(f, 2)
            self.assertTrue(0 < len(sub) < 4 and set(sub) <= {3, 4, 5, 6})
        self.assertEqual(len(cp.sample(pts, 2, random.Random(1))), 2)

    def test_points_keep_fua_order(self):
        # The FUA write (entry 5) was durable when it completed: no state
        # holds write 6, logged after it, without it.
        e = cp.read_log(self.log)
        pts, _ = cp.points(e, 0, random.Random(7), 200)
        subs = [set(p[1]) for p in pts if p[1]]
        self.assertEqual(len(subs), 200)
        for s in subs:
            if 6 in s:
                self.assertIn(5, s, sorted(s))
        # ... and writes before it may still be missing while it is there
        self.assertTrue(any(5 in s and not {3, 4} <= s for s in subs))


class ExpectTest(unittest.TestCase):
    def test_blocks(self):
        # marks at entries 10, 20, 30; op 1 durable by mark 1, op 2 issued
        # after mark 1, durable by mark 2, op 3 issued after mark 2
        ops = [op('w', 0, 1, 0, 2, 1), op('w', 1, 2, 1, 1, 2), op('w', 2, None, 0, 1, 3)]
        marks = [10, 20, 30]
        ex = cp.Expect(ops, marks, 25, 25)      # a crash between mark 1 and 2
        self.assertEqual(ex.durable, [True, False, False])
        self.assertEqual(ex.possible, [True, True, False])
        last, later = cp.block_allowed(ops, ex, 3)
        self.assertEqual(last, [1, 1, 0])
        self.assertEqual(later, [None, {2}, None])
        bad = []
        data = block_pattern(1, 0) + block_pattern(2, 1) + bytes(4096)
        cp.check_blocks(data, 0, 0, 3, last, later, bad)
        self.assertEqual(bad, [])
        data = block_pattern(1, 0) + block_pattern(1, 0) + bytes(4096)  # wrong block
        cp.check_blocks(data, 0, 0, 3, last, later, bad)
        self.assertEqual(len(bad), 1)

    def test_decode(self):
        self.assertEqual(cp.decode(bytes(4096), 5), 0)
        self.assertEqual(cp.decode(block_pattern(7, 5), 5), 7)
        self.assertIsNone(cp.decode(block_pattern(7, 5), 6))
        mixed = block_pattern(7, 5)[:2048] + block_pattern(8, 5)[2048:]
        self.assertIsNone(cp.decode(mixed, 5))

    def test_zone(self):
        # zone of 8 blocks: append 3 (durable), reset (durable), append 2
        # (possible), finish (not issued yet)
        zops = [op('w', 0, 1, 0, 3, 1, 0), op('reset', 1, 2, zone=0),
                op('w', 2, None, 0, 2, 2, 0), op('finish', 3, 4, zone=0)]
        c = cp.zone_candidates(zops, [True, True, False, False], [True, True, True, False], 8)
        self.assertEqual([(w, full) for w, _, full in c], [(0, False), (1, False), (2, False)])
        self.assertEqual(c[2][1], {0: 2, 1: 2})
        # nothing durable yet: from empty through every op issued
        c = cp.zone_candidates(zops, [False] * 4, [True] * 4, 8)
        self.assertEqual([(w, full) for w, _, full in c],
                         [(0, False), (1, False), (2, False), (3, False), (0, False),
                          (1, False), (2, False), (2, True)])


class UdevQuietTest(unittest.TestCase):
    """The rule's text (the VM test checks what udev does with it)."""

    def test_matches_the_unsynchronised_cookie_only(self):
        r = cp.UdevQuiet.TEXT
        # libdevmapper.h: DM_UDEV_PRIMARY_SOURCE_FLAG 0x40, flags above bit 16.
        self.assertIn('ENV{DM_COOKIE}=="4194304", ENV{DM_COOKIE}=""', r)
        # Nothing systemd 252 ignores: it dropped OPTIONS="last_rule".
        self.assertNotIn('last_rule', r)
        rules = [ln for ln in r.splitlines() if ln and not ln.startswith('#')]
        self.assertEqual(len(rules), 1)


if __name__ == '__main__':
    unittest.main()
