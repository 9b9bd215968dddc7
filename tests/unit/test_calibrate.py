# SPDX-License-Identifier: GPL-2.0
"""userspace/smr-calibrate against simulated drives: the timing model's own
arithmetic (tests/lib/tm_model.py) answers its reads, so what the probe
recovers can be held against what was set. The VM test (test_cal_01) does
the same against the kernel's model; these cover the fitting, the
rotation rule, the profile's bounds and the refusals without a VM."""
import importlib.machinery
import importlib.util
import os
import random
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
import tm_model  # noqa: E402

TOOL = os.path.join(ROOT, "userspace", "smr-calibrate")
_loader = importlib.machinery.SourceFileLoader("smr_calibrate", TOOL)
_spec = importlib.util.spec_from_loader("smr_calibrate", _loader)
cal = importlib.util.module_from_spec(_spec)
_loader.exec_module(cal)

GIB = 1 << 30


class SimDev:
    """A drive that answers as tm_model.Model charges, at depth 1.
    rotation=True: the rotational latency is uniform over a revolution,
    as on a real disk, instead of the model's constant half revolution.
    noise_us: uniform jitter on every read, as a host adds."""

    def __init__(self, keys, size, rotation=False, noise_us=0.0, sysfs=None, zones=None,
                 seed=7):
        self.size, self.lbs = size, 512
        self.m = tm_model.Model(keys, size // 512)
        self.rotation, self.noise = rotation, noise_us
        self.rng = random.Random(seed)
        self.head = 0
        self._sysfs = sysfs or {"queue/zoned": "none", "queue/write_cache": "write back"}
        self._zones = zones
        self.reads = 0

    def read(self, off, n):
        pos, nsect = off // 512, n // 512
        ns = self.m.service_ns(self.head, pos, nsect)
        if self.rotation and pos != self.head:
            ns += self.rng.uniform(-1, 1) * self.m.half_rev
        self.head = pos + nsect
        self.reads += 1
        return ns / 1000.0 + self.rng.uniform(0, self.noise)

    def sysfs(self, name):
        return self._sysfs.get(name)

    def zones(self):
        return self._zones

    def close(self):
        pass


class SimDM(SimDev):
    """A drive-managed drive as dm-smr charges it: writes off a band's
    sequential path go to the persistent cache (after cache_at, one slot
    each); a write that finds the cache full waits for one band rewrite
    (fifo: the band of the oldest cached write, tm_model.band_rewrite_ns),
    which frees that band's slots; after IDLE_S of no I/O the drive starts
    cleaning, and the next write waits for the step in progress (a 4 MiB
    chunk's read). Time is virtual: sleep() moves it."""

    def __init__(self, keys, size, band, cache, idle_s, **kw):
        super().__init__(keys, size, **kw)
        self.band_sect, self.cache_sect = band // 512, cache // 512
        self.cache_pos = tm_model.cache_pos(self.m, self.cache_sect, self.band_sect)
        self.slots = []          # bands of the cached blocks, oldest first
        self.idle_s, self.now, self.last = idle_s, 0.0, 0.0
        self.rrng = random.Random(5)

    def read(self, off, n):
        t = super().read(off, n)
        self.now += t / 1e6
        self.last = self.now
        return t

    def write(self, off, n):
        pos, t = off // 512, 0.0
        if self.now - self.last >= self.idle_s and self.slots:
            # background cleaning has a chunk read of its band in flight
            band_pos = self.slots[0] * self.band_sect
            t += self.m.service_ns(self.cache_pos, band_pos, tm_model.CHUNK) / 1000.0
        if len(self.slots) * 8 + 8 > self.cache_sect:
            b = self.slots[0]
            t += tm_model.band_rewrite_ns(self.m, b * self.band_sect, self.band_sect,
                                          self.cache_pos, self.cache_sect,
                                          self.slots.count(b), self.rrng) / 1000.0
            self.slots = [x for x in self.slots if x != b]
            self.head = self.cache_pos
        at = self.cache_pos + len(self.slots) * 8
        t += self.m.service_ns(self.head, at, 8) / 1000.0
        self.head = at + 8
        self.slots.append(pos // self.band_sect)
        self.now += t / 1e6
        self.last = self.now
        return t

    def sleep(self, s):
        self.now += s


HDD = {"rpm": 7200, "seek_t2t_us": 1000, "seek_avg_us": 8500, "seek_full_us": 17000,
       "od_mbps": 180, "id_mbps": 90, "overhead_us": 300}
SLOW = {"rpm": 5400, "seek_t2t_us": 2000, "seek_avg_us": 12000, "seek_full_us": 24000,
        "od_mbps": 120, "id_mbps": 60, "overhead_us": 500}


def probe(dev, rpm=None, budget=600):
    p = cal.Probe(dev, budget, quiet=True)
    p.run(rpm)
    return p


class Fits(unittest.TestCase):
    def test_seek_fit_recovers_a_curve(self):
        c, a, b = 1500.0, 9000.0, 4000.0
        ds = list(cal.DISTANCES)
        c2, a2, b2 = cal.fit_seek(ds, [c + a * d ** 0.5 + b * d for d in ds])
        self.assertAlmostEqual(c2, c, places=3)
        self.assertAlmostEqual(a2, a, places=3)
        self.assertAlmostEqual(b2, b, places=3)

    def test_seek_fit_keeps_the_curve_rising(self):
        ds = list(cal.DISTANCES)
        ts = [1000 + 5000 * d - 3000 * d ** 0.5 for d in ds]
        c, a, b = cal.fit_seek(ds, ts)
        self.assertEqual(a, 0.0)  # the sqrt term would fall: left out
        self.assertGreater(b, 0.0)
        # ... and the line that is left fits the points as well as a line can
        c2, b2 = cal.fit_line(ds, ts)
        self.assertAlmostEqual(c, c2, places=6)
        self.assertAlmostEqual(b, b2, places=6)

    def test_seek_fit_of_a_falling_curve_is_flat(self):
        ds = list(cal.DISTANCES)
        ts = [9000 - 2000 * d - 1000 * d ** 0.5 for d in ds]
        c, a, b = cal.fit_seek(ds, ts)
        self.assertEqual((a, b), (0.0, 0.0))
        self.assertAlmostEqual(c, sum(ts) / len(ts))

    def test_rounded_seeks_always_meet_the_kernels_bounds(self):
        rng = random.Random(11)
        keys = dict(HDD)
        for i in range(3000):
            c = rng.uniform(0, 20000)
            a = rng.choice([0.0, rng.uniform(0, 20000)])
            b = rng.choice([0.0, rng.uniform(0, 20000)])
            if i % 10 == 0:
                a = b = 0.0  # a flat fit
            t2t, avg, full = cal.kernel_seeks(*cal.seek_figures(c, a, b, rng.uniform(0, 8000)))
            keys.update(seek_t2t_us=t2t, seek_avg_us=avg, seek_full_us=full)
            self.assertTrue(0 <= t2t <= avg <= full, (t2t, avg, full))
            tm_model.Model(keys, 1 << 20)  # raises if the kernel would refuse

    def test_seek_figures_meet_the_kernels_bounds(self):
        for a, b in ((9000, 0), (0, 9000), (5000, 5000)):
            t2t, avg, full = cal.seek_figures(4000.0, a, b, 4166.7)
            f, v = full - t2t, avg - t2t
            self.assertLessEqual(f / 3 - 1e-6, v)
            self.assertLessEqual(v, 8 * f / 15 + 1e-6)

    def test_rotation_rule(self):
        rng = random.Random(3)
        rev = 60e6 / 7200
        self.assertAlmostEqual(cal.rotation_from_spread(
            [rng.uniform(0, rev) for _ in range(2000)]), rev, delta=0.05 * rev)
        self.assertIsNone(cal.rotation_from_spread([5000 + rng.uniform(0, 200)
                                                    for _ in range(200)]))
        self.assertIsNone(cal.rotation_from_spread([1.0] * 5))

    def test_parse_blkzone(self):
        out = ("  start: 0x000000000, len 0x080000, cap 0x080000, wptr 0x000000 reset:0 "
               "non-seq:0, zcond: 0(nw) [type: 1(CONVENTIONAL)]\n"
               "  start: 0x000080000, len 0x080000, cap 0x070000, wptr 0x000000 reset:0 "
               "non-seq:0, zcond: 1(em) [type: 2(SEQ_WRITE_REQUIRED)]\n"
               "  start: 0x000100000, len 0x080000, cap 0x070000, wptr 0x000000 reset:0 "
               "non-seq:0, zcond: 1(em) [type: 2(SEQ_WRITE_REQUIRED)]\n")
        self.assertEqual(cal.parse_blkzone(out), (256 << 20, 224 << 20, 3, 1))
        self.assertIsNone(cal.parse_blkzone(""))


class ClosedLoop(unittest.TestCase):
    """Probe a simulated drive, compare with what was set. Tolerances as
    docs/timing.md states them for the probe."""

    def check(self, keys, p, rpm_sure):
        self.assertAlmostEqual(p.od, keys["od_mbps"], delta=0.05 * keys["od_mbps"])
        self.assertAlmostEqual(p.id, keys["id_mbps"], delta=0.05 * keys["id_mbps"])
        self.assertAlmostEqual(p.overhead, keys["overhead_us"], delta=100)
        self.assertAlmostEqual(p.full, keys["seek_full_us"], delta=0.1 * keys["seek_full_us"])
        self.assertAlmostEqual(p.avg, keys["seek_avg_us"], delta=0.1 * keys["seek_avg_us"])
        self.assertAlmostEqual(p.t2t, keys["seek_t2t_us"], delta=0.25 * keys["seek_t2t_us"] + 300)
        sure = [f.sure for f in p.figures if f.key == "rpm"][0]
        self.assertEqual(sure, rpm_sure)

    def test_model_drive_with_the_rpm_given(self):
        for keys in (HDD, SLOW):
            p = probe(SimDev(keys, 64 * GIB, noise_us=50), rpm=keys["rpm"])
            self.assertEqual(p.rpm, keys["rpm"])
            self.check(keys, p, "given")

    def test_model_drive_without_rpm_is_assumed_and_says_so(self):
        p = probe(SimDev(SLOW, 64 * GIB))
        self.assertEqual(p.rpm, cal.ASSUMED_RPM)
        text = cal.profile_text(p, "/dev/sim", "now")
        self.assertIn("(assumed)", text)
        # t2t absorbs the difference of the two half revolutions
        self.assertAlmostEqual(p.t2t + 30e6 / p.rpm,
                               SLOW["seek_t2t_us"] + 30e6 / SLOW["rpm"], delta=300)

    def test_rotating_drive_shows_its_rpm(self):
        for keys in (HDD, SLOW):
            p = probe(SimDev(keys, 64 * GIB, rotation=True, noise_us=50))
            self.assertAlmostEqual(p.rpm, keys["rpm"], delta=0.1 * keys["rpm"])
            self.assertAlmostEqual(p.od, keys["od_mbps"], delta=0.05 * keys["od_mbps"])
            self.assertAlmostEqual(p.full, keys["seek_full_us"],
                                   delta=0.15 * keys["seek_full_us"])

    def test_given_rpm_wins_over_a_spread(self):
        p = probe(SimDev(HDD, 64 * GIB, rotation=True), rpm=5400)
        self.assertEqual(p.rpm, 5400)
        fig = [f for f in p.figures if f.key == "rpm"][0]
        self.assertEqual(fig.sure, "given")
        self.assertIn("spread says", fig.how)

    def test_profile_reads_back_and_holds_the_figures(self):
        p = probe(SimDev(HDD, 64 * GIB), rpm=7200)
        text = cal.profile_text(p, "/dev/sim", "now")
        kv = dict(l.split(" = ", 1) for l in text.splitlines() if " = " in l and
                  not l.startswith("#"))
        self.assertEqual(kv["model"], "caveat")
        self.assertEqual(kv["did"], "0")
        # rounded up: a device as large as the probed disk fits the drive
        self.assertEqual(kv["drive_mb"], str(-(-64 * GIB // 1000000)))
        tm_model.Model(dict(HDD, drive_mb=int(kv["drive_mb"])), 64 * GIB // 512)
        keys = {k: int(kv[k]) for k in ("rpm", "seek_t2t_us", "seek_avg_us", "seek_full_us",
                                        "od_mbps", "id_mbps", "overhead_us")}
        tm_model.Model(keys, 1 << 20)  # the kernel's bounds hold (raises otherwise)
        self.assertNotIn("wcache_mib", kv)

    def test_host_managed_layout(self):
        zones = (256 << 20, 256 << 20, 256, 4)
        dev = SimDev(HDD, 64 * GIB, sysfs={"queue/zoned": "host-managed",
                                           "queue/max_open_zones": "128",
                                           "queue/max_active_zones": "0"}, zones=zones)
        p = probe(dev, rpm=7200)
        text = cal.profile_text(p, "/dev/sim", "now")
        for line in ("model = host-managed", "zone = 256M", "conv = 4", "max_open = 128"):
            self.assertIn(line + "\n", text)
        self.assertNotIn("max_active", text.split("# The device")[1])

    def test_budget_cuts_probes_short_and_says_so(self):
        p = probe(SimDev(HDD, 64 * GIB), rpm=7200, budget=0.000001)
        self.assertTrue(any("time budget" in n for n in p.notes))

    def test_too_small_a_device_is_refused(self):
        with self.assertRaises(ValueError):
            probe(SimDev(HDD, 32 << 20), rpm=7200)


class DriveManaged(unittest.TestCase):
    def probe_dm(self, band, cache, idle_s, size=64 * GIB, cache_at=0):
        keys = dict(HDD, cache_at=cache_at)
        dev = SimDM(keys, size, band, cache, idle_s)
        p = cal.Probe(dev, 600, quiet=True)
        p.sleep = dev.sleep
        p.run(7200, write=True)
        return p

    def test_cache_band_and_idle_recovered(self):
        for band, cache, idle_s, size in ((16 << 20, 64 << 20, 1.0, 64 * GIB),
                                          (32 << 20, 96 << 20, 3.0, 64 * GIB),
                                          (8 << 20, 8 << 20, 1.0, 576 << 20),
                                          (2 << 20, 8 << 20, 0.5, 576 << 20)):
            p = self.probe_dm(band, cache, idle_s, size)
            self.assertTrue(p.wrote)
            self.assertAlmostEqual(p.cache_bytes, cache, delta=0.02 * cache)
            self.assertAlmostEqual(p.band_bytes, band, delta=0.3 * band)
            # the first pause at or above idle_s
            self.assertGreaterEqual(p.idle_ms, idle_s * 1000)
            self.assertLess(p.idle_ms, 2 * idle_s * 1000 + 1)
            text = cal.profile_text(p, "/dev/sim", "now")
            self.assertIn("model = drive-managed\n", text)
            self.assertIn("cache = %dM\n" % (cache >> 20), text)
            self.assertIn("overwrote random blocks", text)
            self.assertIn("cache_at = 0\n", text)

    def test_cache_place(self):
        for cache_at in (0, 300, 500, 1000):
            for size in (64 * GIB, 576 << 20):
                p = self.probe_dm(8 << 20, 8 << 20, 1.0, size, cache_at)
                self.assertAlmostEqual(p.cache_at, cache_at, delta=15,
                                       msg="size %d" % size)

    def test_no_collapse_within_the_budget_is_a_note(self):
        dev = SimDev(HDD, 64 * GIB)
        dev.write = lambda off, n: 100.0
        p = cal.Probe(dev, 600, quiet=True)
        p.run(7200)
        p.deadline = 0  # out of time before any collapse
        p.cache()
        self.assertIsNone(p.cache_bytes)
        self.assertTrue(any("no collapse" in n for n in p.notes))
        self.assertIn("model = caveat", cal.profile_text(p, "/dev/sim", "now"))


class Command(unittest.TestCase):
    def run_tool(self, *args):
        return subprocess.run([sys.executable, TOOL] + list(args), capture_output=True,
                              text=True, timeout=60)

    def test_refuses_what_is_not_a_block_device(self):
        with tempfile.NamedTemporaryFile() as f:
            r = self.run_tool(f.name)
        self.assertEqual(r.returncode, 1)
        self.assertIn("not a block device", r.stderr)

    def test_bad_options(self):
        self.assertEqual(self.run_tool("/dev/null", "--rpm", "5").returncode, 2)
        self.assertEqual(self.run_tool("/dev/null", "--budget", "0").returncode, 2)


if __name__ == "__main__":
    unittest.main()
