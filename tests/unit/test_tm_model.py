# SPDX-License-Identifier: GPL-2.0
"""The timing model's arithmetic (tests/lib/tm_model.py, the kernel's
common/smr-timing.c in Python): the seek curve honours the three seek
times it is built from, and a random access costs the average seek, half
a turn and the transfer."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import tm_model  # noqa: E402

CMR = {"rpm": 7200, "seek_t2t_us": 1000, "seek_avg_us": 8500,
       "seek_full_us": 17000, "od_mbps": 65, "id_mbps": 31}
SPAN = 1 << 30


class SeekCurveTest(unittest.TestCase):
    def setUp(self):
        self.m = tm_model.Model(CMR, SPAN)

    def seek_us(self, dist):
        # service - half turn - transfer of one sector at the head's end
        m = self.m
        return (m.service_ns(0, dist, 1) - m.service_ns(dist, dist, 1)
                - m.half_rev) / 1000.0

    def test_ends(self):
        self.assertAlmostEqual(self.seek_us(1), 1000, delta=5)
        self.assertAlmostEqual(self.seek_us(SPAN), 17000, delta=5)

    def test_average_over_random_pairs(self):
        # random_us = E[seek] + half turn + E[transfer]: take the rest out
        m = self.m
        xfer = sum(m.service_ns(x, x, 8) for x in range(0, SPAN, SPAN // 400)) / 400 / 1000
        seek = m.random_us(8) - m.half_rev / 1000 - xfer
        self.assertAlmostEqual(seek, 8500, delta=8500 * 0.01)

    def test_monotonic(self):
        prev = 0
        for k in range(1, 64):
            s = self.seek_us(SPAN * k // 64)
            self.assertGreater(s, prev)
            prev = s

    def test_bounds_refused(self):
        bad = dict(CMR, seek_avg_us=16000)      # above t2t + 8/15 (full - t2t)
        self.assertRaises(ValueError, tm_model.Model, bad, SPAN)
        bad = dict(CMR, seek_avg_us=3000)       # below t2t + (full - t2t)/3
        self.assertRaises(ValueError, tm_model.Model, bad, SPAN)


class RateTest(unittest.TestCase):
    def test_media_rate_falls_from_od_to_id(self):
        m = tm_model.Model(CMR, SPAN)
        self.assertAlmostEqual(m.seq_mbps(0, 2048), 65.0, places=1)
        self.assertAlmostEqual(m.seq_mbps(SPAN - 1, 2048), 31.0, delta=0.1)
        self.assertAlmostEqual(m.seq_mbps(SPAN // 2, 2048), 48.0, delta=0.1)

    def test_range_is_the_harmonic_mean(self):
        # 65 -> 31 MB/s linearly: 1 / mean(1/rate) = 34 / ln(65/31)
        import math
        m = tm_model.Model(CMR, SPAN)
        self.assertAlmostEqual(m.range_mbps(0, SPAN, 2048), 34 / math.log(65 / 31), delta=0.1)

    def test_random_4k_iops(self):
        # 8.5 ms seek + 4.17 ms half turn + ~0.09 ms transfer: ~78 IOPS
        us = tm_model.Model(CMR, SPAN).random_us(8)
        self.assertAlmostEqual(1e6 / us, 78.4, delta=0.5)

    def test_overhead_adds_per_command(self):
        a = tm_model.Model(CMR, SPAN).service_ns(0, 0, 8)
        b = tm_model.Model(dict(CMR, overhead_us=100), SPAN).service_ns(0, 0, 8)
        self.assertEqual(b - a, 100000)



class PlacementTest(unittest.TestCase):
    """drive_mb / start_mb: the device is a slice of a whole drive."""
    HC620 = {"rpm": 7200, "seek_t2t_us": 300, "seek_avg_us": 7500,
             "seek_full_us": 15000, "od_mbps": 233, "id_mbps": 110}

    def test_without_drive_nothing_changes(self):
        a = tm_model.Model(CMR, SPAN)
        self.assertEqual((a.span, a.base), (SPAN, 0))

    def test_small_device_seeks_short(self):
        # 512 MiB of a 500 GB drive: seeks of a thousandth of the stroke
        L = 512 * 2048
        whole = tm_model.Model(CMR, L).random_us(8)
        slice_ = tm_model.Model(dict(CMR, drive_mb=500107), L).random_us(8)
        self.assertAlmostEqual(whole, 12755, delta=20)
        # t2t + a little + half a turn + transfer
        self.assertLess(slice_, 1000 + 300 + 4167 + 100)
        self.assertGreater(slice_, 1000 + 4167)

    def test_rate_from_the_drive_position(self):
        m = tm_model.Model(dict(CMR, drive_mb=500107, start_mb=250053), 2048 * 1024)
        self.assertAlmostEqual(m.seq_mbps(0, 2048), 48.0, delta=0.1)

    def test_does_not_fit(self):
        self.assertRaises(ValueError, tm_model.Model,
                          dict(CMR, drive_mb=1000, start_mb=999), 1 << 20)
        self.assertRaises(ValueError, tm_model.Model, dict(CMR, start_mb=1), 1 << 20)

    def test_two_streams_hc620(self):
        # zones 1 and 3 of 256 MiB, 1 MiB writes in turn: the real drive
        # gives 0.46 of one stream (112 / 246 MB/s); stretched over the
        # stroke the model gave 0.27, on the drive it gives about 0.5
        L, Z = 5 * 524288, 524288
        for keys, lo, hi in ((self.HC620, 0.2, 0.35),
                             (dict(self.HC620, drive_mb=14000519), 0.4, 0.6)):
            m = tm_model.Model(keys, L)
            r = m.alt_mbps(Z, 3 * Z, 2048) / m.seq_mbps(Z, 2048)
            self.assertTrue(lo < r < hi, (keys, r))

    def test_cache_on_the_whole_drive(self):
        m = tm_model.Model(dict(CMR, cache_at=500, drive_mb=500107), 1 << 20)
        self.assertEqual(tm_model.cache_pos(m, 8192, 8192), (m.span - 16384) // 2)



class QueueTest(unittest.TestCase):
    """queue_depth: shortest service first among the oldest QD, unless
    the oldest was overtaken QD times (smr_tm_dispatch())."""

    def test_depth_1_is_arrival_order(self):
        m = tm_model.Model(CMR, SPAN)
        self.assertAlmostEqual(m.queue_us(8, 1), m.random_us(8), delta=m.random_us(8) * 0.03)

    def test_depth_32_serves_faster(self):
        m = tm_model.Model(CMR, SPAN)
        self.assertLess(m.queue_us(8, 32), 0.7 * m.queue_us(8, 1))
        self.assertLess(m.queue_us(8, 32), m.queue_us(8, 4))


if __name__ == "__main__":
    unittest.main()
