# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of the campaign runner's arrays (fio-jobs/smrcampaign,
array.py; docs/campaigns.md, "Arrays"): the [array] section's parsing and
refusals, its expansion into runs, the slices carved for its drives, the
rebuild timeline and its plots. The arrays themselves are built in the VM
(tests/test_md_01_array.sh).

    /usr/bin/python3 -m unittest discover -s tests/unit -v
"""

import os
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "fio-jobs"))
from smrcampaign import array, devices, matrix, summary  # noqa: E402

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False

RAID5 = os.path.join(ROOT, "fio-jobs", "matrices", "raid5-rebuild.ini")

BASE = """[device c]
model = caveat
size = 64M
[device d]
model = drive-managed
size = 64M
band = 4M
[array a]
level = 5
members = c, c, c
replacement = c, d
backing = /dev/zz
"""


class ArrayMatrixTest(unittest.TestCase):
    def matrix(self, text, env=None):
        fd, path = tempfile.mkstemp(suffix=".ini")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        return matrix.Matrix(path, env=env or {})

    def test_raid5_matrix(self):
        m = matrix.Matrix(RAID5, env={"BACKING": "/dev/ram0"})
        runs = m.runs()
        # two jobs (idle, busy) x two replacements (cmr, smr)
        self.assertEqual([(r["job"], r["array"]["replacement"]) for r in runs],
                         [("idle", "cmr"), ("idle", "smr"), ("busy", "cmr"), ("busy", "smr")])
        r = runs[1]
        self.assertEqual(r["array"]["members"], ["cmr"] * 4)
        self.assertEqual(r["array"]["level"], "5")
        self.assertEqual(r["dev"]["profile"], "st8000as0002")
        self.assertEqual(r["dev"]["model"], "drive-managed")
        self.assertEqual([d["profile"] for d in r["member_devs"]], ["cmr-7k500"] * 4)
        self.assertIsNone(r["file"])
        self.assertTrue(runs[2]["file"].endswith("md-foreground.fio"))
        self.assertEqual(runs[2]["jobopts"]["RUNTIME"], "30")
        self.assertEqual(r["varied"], {"replacement": "smr"})
        self.assertEqual(r["id"], "02-idle-r5-replacement=smr")

    def test_backing_must_be_named(self):
        # the array's backing is formatted: never from a default
        self.assertRaises(matrix.MatrixError, matrix.Matrix, RAID5, env={})

    def test_carved_drives_need_no_backing(self):
        m = self.matrix(BASE + "[job j]\ndevices = a\n")
        self.assertEqual(len(m.runs()), 2)
        # ... but a drive of no array's still does
        self.assertRaises(matrix.MatrixError, self.matrix,
                          BASE + "[device e]\nmodel = caveat\nsize = 1M\n[job j]\ndevices = a\n")
        # and a job on a lone drive without backing is refused
        m = self.matrix(BASE + "[job j]\nfile = md-foreground.fio\ndevices = c\n")
        self.assertRaises(matrix.MatrixError, m.runs)

    def test_refusals(self):
        E = matrix.MatrixError
        job = "[job j]\ndevices = a\n"
        bad = {
            "level 7": BASE.replace("level = 5", "level = 7"),
            "RAID 6 of 3": BASE.replace("level = 5", "level = 6"),
            "unknown member": BASE.replace("members = c, c, c", "members = c, c, x"),
            "unknown key": BASE + "stripes = 2\n",
            "fail out of range": BASE + "fail = 4\n",
            "fail not a number": BASE + "fail = c\n",
            "sync": BASE + "sync = fast\n",
            "check": BASE + "check = yes\n",
            "fill": BASE + "fill = 120%\n",
            "chunk": BASE + "chunk = big\n",
            "several values on a member": BASE.replace("size = 64M\n[device d]",
                                                       "size = 64M, 128M\n[device d]"),
            "member not emulated": BASE.replace("model = caveat", "model = file\npath = /x"),
            "no size to carve": BASE.replace("model = caveat\nsize = 64M", "model = caveat"),
            "no members": BASE.replace("members = c, c, c\n", ""),
            "one backing, two drives": BASE.replace("model = caveat\nsize", "model = caveat\nbacking = /b\nsize"),
            "a drive on the array's backing": BASE.replace(
                "model = caveat\nsize", "model = caveat\nbacking = /dev/zz\nsize").replace(
                "members = c, c, c", "members = c, d, d"),
            "replacement on a member's backing": BASE.replace(
                "model = caveat\nsize", "model = caveat\nbacking = /b\nsize").replace(
                "members = c, c, c", "members = c, d, d").replace("replacement = c, d", "replacement = d, c"),
            "chunk not a power of two": BASE + "chunk = 3K\n",
            "chunk under 4K": BASE + "chunk = 1000\n",
            "empty fill": BASE + "fill =\n",
            "empty check": BASE + "check =\n",
            "speed under 1K": BASE + "speed_min = 100\n",
            "speed_min above speed_max": BASE + "speed_min = 10M\nspeed_max = 1M\n",
            "fill 100% with a job file": BASE + "fill = 100%\n[job j]\ndevices = a\nfile = md-foreground.fio\n",
            "same name as a device": BASE.replace("[array a]", "[array c]") + "[job j]\ndevices = c\n",
        }
        for what, text in bad.items():
            with self.subTest(what):
                self.assertRaises(E, self.matrix, text + ("" if "[job" in text else job))
        # a job on an array may go without a job file; on a drive, not
        with self.assertRaises(E) as cm:
            self.matrix(BASE + "[device e]\nmodel = caveat\nbacking = /x\n[job j]\ndevices = e\n")
        self.assertIn("needs 'file'", str(cm.exception))

    def test_axes(self):
        m = self.matrix(BASE.replace("level = 5", "level = 5, 1") + "[job j]\ndevices = a\n")
        runs = m.runs()
        self.assertEqual(len(runs), 4)
        self.assertEqual({(r["array"]["level"], r["array"]["replacement"]) for r in runs},
                         {("5", "c"), ("5", "d"), ("1", "c"), ("1", "d")})


class BackingInUseTest(unittest.TestCase):
    """A backing another dm or md device is stacked on is refused: dm
    itself lets one dm device map what another uses."""

    def sysfs(self):
        root = tempfile.mkdtemp()
        self.addCleanup(__import__("shutil").rmtree, root)
        for d in ("dev/block", "devices/sdb/holders", "devices/sdb/sdb1/holders",
                  "devices/sdb/sdb2/holders", "block/dm-3/dm"):
            os.makedirs(os.path.join(root, d))
        for part in ("sdb1", "sdb2"):
            open(os.path.join(root, "devices/sdb", part, "partition"), "w").close()
        for devt, target in (("8:16", "sdb"), ("8:17", "sdb/sdb1"), ("8:18", "sdb/sdb2")):
            os.symlink("../../devices/" + target, os.path.join(root, "dev/block", devt))
        with open(os.path.join(root, "block/dm-3/dm/name"), "w") as f:
            f.write("vg-home\n")
        return root

    def test_holders(self):
        root = self.sysfs()
        self.assertEqual(devices.stacked_on_devt(8, 16, root), [])
        self.assertEqual(devices.stacked_on_devt(9, 9, root), [])
        open(os.path.join(root, "devices/sdb/sdb1/holders/dm-3"), "w").close()
        self.assertEqual(devices.stacked_on_devt(8, 17, root), ["dm-3 (vg-home) on sdb1"])
        self.assertEqual(devices.stacked_on_devt(8, 16, root), ["dm-3 (vg-home) on sdb1"])
        self.assertEqual(devices.stacked_on_devt(8, 18, root), [])
        open(os.path.join(root, "devices/sdb/holders/md0"), "w").close()
        self.assertEqual(devices.stacked_on_devt(8, 18, root), ["md0 on sdb"])

    def test_refused_unless_forced(self):
        orig = devices.stacked_on
        devices.stacked_on = lambda dev, sysfs="/sys": ["dm-3 (vg-home) on sdb1"]
        self.addCleanup(setattr, devices, "stacked_on", orig)
        with self.assertRaises(RuntimeError) as cm:
            devices.refuse_in_use("/dev/sdb", "device x: the backing")
        self.assertIn("in use: dm-3 (vg-home) on sdb1", str(cm.exception))
        self.assertIn("--force-backing", str(cm.exception))
        devices.refuse_in_use("/dev/sdb", "device x: the backing", force=True)

    def test_one_device_under_two_names(self):
        d = tempfile.mkdtemp()
        self.addCleanup(__import__("shutil").rmtree, d)
        img = os.path.join(d, "img")
        open(img, "w").close()
        os.symlink(img, os.path.join(d, "link"))
        text = BASE.replace("model = caveat\nsize", "model = caveat\nbacking = %s\nsize" % img) \
            .replace("model = drive-managed\nsize",
                     "model = drive-managed\nbacking = %s/link\nsize" % d) \
            .replace("[array a]", "[device e]\nmodel = caveat\nsize = 64M\n[array a]") \
            .replace("members = c, c, c", "members = c, d, e").replace(
                "replacement = c, d", "replacement = e") + "[job j]\ndevices = a\n"
        fd, path = tempfile.mkstemp(suffix=".ini")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        self.addCleanup(os.unlink, path)
        with self.assertRaises(matrix.MatrixError) as cm:
            matrix.Matrix(path, env={})
        self.assertIn("would hold two drives", str(cm.exception))


class OnDamagedReadTest(unittest.TestCase):
    """A caveat drive that reads what it was never sent (zeros), as md
    does when it builds an array: the device key reaches the table line
    and smrctl."""

    def test_table_and_smrctl(self):
        o = {"size": "64M", "did": "0", "dnor": "0", "on_damaged_read": "zero",
             "backing": "/dev/vdc"}
        self.assertEqual(devices.dm_table("caveat", "/dev/vdc", o),
                         "0 131072 caveat /dev/vdc 0 0 3 on_damaged_read zero format")
        a = devices.smrctl_create_args("x", "caveat", o)
        self.assertEqual(a[a.index("--on-damaged-read") + 1], "zero")
        self.assertIn("on_damaged_read", matrix.DEVICE_KEYS)

    def test_cmr_profile_reads_zeros(self):
        with open(os.path.join(ROOT, "userspace", "smrctl", "profiles", "cmr-7k500.profile")) as f:
            keys = dict((k.strip(), v.split("#")[0].strip()) for k, v in
                        (line.split("=", 1) for line in f
                         if "=" in line and not line.lstrip().startswith("#")))
        self.assertEqual(keys.get("on_damaged_read"), "zero")


class ArrayPartsTest(unittest.TestCase):
    def test_slice_sectors(self):
        # drive-managed: the drive, a sixteenth more, and 64 MiB
        dm = {"model": "drive-managed"}
        self.assertEqual(array.slice_sectors(dict(dm, size="1G")), 2097152 + 131072 + 131072)
        self.assertEqual(array.slice_sectors(dict(dm, size="64M")), 131072 + 8192 + 131072)
        # the others: a sixty-fourth more and 4 MiB
        self.assertEqual(array.slice_sectors({"model": "caveat", "size": "64M"}),
                         131072 + 2048 + 8192)

    def rebuild_csv(self, rows):
        d = tempfile.mkdtemp()
        p = os.path.join(d, "rebuild.csv")
        with open(p, "w") as f:
            f.write("t,action,done,total,speed_kibs,degraded\n")
            for r in rows:
                f.write(",".join(str(x) for x in r) + "\n")
        return d, p

    def test_rebuild_progress(self):
        if not HAVE_MPL:
            self.skipTest("matplotlib missing")
        from smrcampaign import plots
        d, p = self.rebuild_csv([(0.0, "idle", "", "", "", 1), (1.0, "recover", 0, 4096, "", 1),
                                 (2.0, "recover", 2048, 4096, 1024, 1),
                                 (4.0, "recover", 4096, 4096, 1024, 1),
                                 (5.0, "idle", "", "", "", 0)])
        # the samples with progress, sectors done; the idle ones left out
        self.assertEqual(plots._read_progress(p), [(1.0, 0), (2.0, 2048), (4.0, 4096)])

    def test_short_rebuild_is_sampled(self):
        # md rebuilds a 64 MiB member in one or two seconds: with the
        # campaign's one-second period a sampler can miss it whole (CI:
        # "the rebuild's progress was sampled" failed on a 1.7 s rebuild).
        # A fake md whose recovery runs for 0.6 s, sampled with a period
        # of 1 s, must have a row with progress.
        d = tempfile.mkdtemp()
        self.addCleanup(__import__("shutil").rmtree, d)
        os.makedirs(os.path.join(d, "md0", "md"))
        attrs = os.path.join(d, "md0", "md", "%s")

        def put(name, value):
            with open(attrs % name, "w") as f:
                f.write(value + "\n")
        put("sync_action", "idle")
        put("sync_completed", "none")
        old = array.MD_SYS
        array.MD_SYS = os.path.join(d, "%s", "md", "%s")
        self.addCleanup(setattr, array, "MD_SYS", old)
        csv_path = os.path.join(d, "rebuild.csv")
        t0 = __import__("time").time()
        s = array.MdSampler("md0", csv_path, t0, 1.0)
        s.start()
        sleep = __import__("time").sleep
        sleep(0.15)
        put("sync_action", "recover")
        for done in (1024, 2048, 3072):
            put("sync_completed", "%d / 4096" % done)
            sleep(0.2)
        put("sync_action", "idle")
        put("sync_completed", "none")
        sleep(0.9)
        s.stop()
        with open(csv_path) as f:
            rows = list(__import__("csv").DictReader(f))
        self.assertTrue([r for r in rows if r["done"] and int(r["done"]) > 0],
                        "no sample of the rebuild's progress in %r" % rows)

    def test_plots(self):
        if not HAVE_MPL:
            self.skipTest("matplotlib missing")
        from smrcampaign import plots
        out = tempfile.mkdtemp()
        rows = []
        for i, (repl, t) in enumerate((("cmr", 4.0), ("smr", 6.0)), 1):
            rid = "%02d-idle-r5-replacement=%s" % (i, repl)
            rd = os.path.join(out, "runs", rid)
            os.makedirs(rd)
            with open(os.path.join(rd, "rebuild.csv"), "w") as f:
                f.write("t,action,done,total,speed_kibs,degraded\n")
                for k in range(int(t) + 1):
                    f.write("%d,recover,%d,8192,1024,1\n" % (k, k * 8192 // int(t)))
            rows.append({"run": rid, "job": "idle", "device": "r5", "model": "caveat",
                         "array": "RAID 5 of 4: cmr-7k500", "replacement": repl,
                         "rebuild_s": t, "rebuild_mibs": 4.0 / t})
        figs = plots.draw_all(out, rows)
        files = sorted(f["file"] for f in figs)
        self.assertEqual(files, ["plots/01-idle-r5-replacement=cmr-rebuild.png",
                                 "plots/02-idle-r5-replacement=smr-rebuild.png",
                                 "plots/rebuilds.png"])
        for f in files:
            with open(os.path.join(out, f), "rb") as fh:
                self.assertEqual(fh.read(4)[1:], b"PNG")
        self.assertEqual(rows[0]["plots"], "plots/01-idle-r5-replacement=cmr-rebuild.png")

    def test_summary_text(self):
        # an array run does not wait for its replacement's cleaning: its
        # summary lines say nothing of a wait
        out = tempfile.mkdtemp()
        row = {"run": "01-idle-r5", "job": "idle", "device": "r5", "model": "drive-managed",
               "status": "ok", "array": "RAID 5 of 4: cmr-7k500", "replacement": "smr",
               "rebuild_s": 12.2, "rebuild_mibs": 19.5, "rmw_fg": 6, "rmw_bg": 0,
               "clean_ms_fg": 6615, "clean_ms_bg": 0}
        summary.write_summary(out, "t", [row], [], 1.0, plotted=False)
        with open(os.path.join(out, "summary.txt")) as f:
            text = f.read()
        self.assertIn("rmw fg 6 bg 0; cleaning fg 6615 ms bg 0 ms\n", text)
        self.assertNotIn("wait-clean", text)

    def test_brief(self):
        row = {"array": "RAID 5 of 4: cmr-7k500", "replacement": "smr", "rebuild_s": 12.34,
               "rebuild_mibs": 83.0, "verify": "ok", "mismatch_cnt": 0,
               "repl_cache_used_pct": 12.0}
        b = summary.brief(row)
        self.assertIn("replacement smr: rebuilt in 12.3 s (83.0 MiB/s)", b)
        self.assertIn("data ok", b)
        self.assertIn("mismatch_cnt 0", b)
        self.assertIn("cache 12% used", b)



class FakeUdev:
    """md and udev as release() sees them: a stale superblock on a drive,
    and udev's incremental assembly taking the drive into md126 again
    after each mdadm --stop until the superblock is zeroed (the race that
    left a drive held at the end of a run on 6.12). retake: how many stops
    udev answers with an assembly; busy_zero: zeroing fails while held."""

    def __init__(self, retake):
        self.retake = retake
        self.held = True
        self.superblock = True
        self.calls = []

    def run_cmd(self, args, what, check=True, **kw):
        self.calls.append(args[:2])
        rc = 0
        if args[:2] == ["mdadm", "--stop"]:
            self.held = False
            if self.superblock and self.retake > 0:
                self.retake -= 1
                self.held = True        # udev, before the zeroing below
        elif args[:2] == ["mdadm", "--zero-superblock"]:
            if self.held:
                rc = 1
            else:
                self.superblock = False

        class P:
            returncode = rc
            stdout = ""
            stderr = "Couldn't open /dev/x for write - not zeroing" if rc else ""
        return P()

    def holders(self, path):
        return ["md126"] if self.held else []


class MdOfTest(unittest.TestCase):
    """The array mdadm --create made, found by what holds its first
    drive, not through udev's /dev/md/NAME link (late under a debug
    kernel: the run then read no array's sysfs and waited out its
    timeout for an initial sync long done)."""

    def setUp(self):
        self.a = array.ArraySetup.__new__(array.ArraySetup)
        saved = time.sleep
        time.sleep = lambda s: None
        self.addCleanup(setattr, time, "sleep", saved)

    def test_found_once_held(self):
        answers = [[], [], ["md127"]]
        self.a.md_holders = lambda path: answers.pop(0) if len(answers) > 1 else answers[0]
        self.assertEqual(self.a.md_of("/dev/loop0"), "md127")

    def test_gives_up_with_an_error(self):
        self.a.md_holders = lambda path: []
        self.a.MD_NAME_WAIT_S = 0
        with self.assertRaisesRegex(RuntimeError, "no md array holds /dev/loop0"):
            self.a.md_of("/dev/loop0")


class ReleaseTest(unittest.TestCase):
    def setup_fake(self, retake):
        fake = FakeUdev(retake)
        saved = array.run_cmd
        array.run_cmd = fake.run_cmd
        self.addCleanup(setattr, array, "run_cmd", saved)
        a = array.ArraySetup.__new__(array.ArraySetup)
        a.md_holders = fake.holders
        a.say = lambda msg: None
        return a, fake

    def test_udev_takes_it_again(self):
        a, fake = self.setup_fake(retake=2)
        a.unclaim("/dev/mapper/cmp_x_new")
        self.assertFalse(fake.held)
        self.assertFalse(fake.superblock)
        self.assertEqual(fake.calls.count(["mdadm", "--stop"]), 3)

    def test_gives_up_with_an_error(self):
        a, fake = self.setup_fake(retake=100)
        with self.assertRaisesRegex(RuntimeError, "md still holds it \\(md126\\)"):
            a.unclaim("/dev/mapper/cmp_x_new")
        self.assertEqual(fake.calls.count(["mdadm", "--stop"]), array.ArraySetup.RELEASE_TRIES)

    def test_several_in_one_round(self):
        # a run's teardown releases its drives together: one zeroing that
        # names them all, one settle before and one after (udevadm settle
        # took seconds each under TCG, and a drive at a time made it 10 s
        # a drive)
        a, fake = self.setup_fake(retake=0)
        fake.held = False
        drives = ["/dev/mapper/cmp_r_d%d" % i for i in (1, 2, 3)] + ["/dev/mapper/cmp_r_new"]
        calls = []
        saved = array.run_cmd

        def spy(args, what, **kw):
            calls.append(args)
            return saved(args, what, **kw)
        array.run_cmd = spy
        self.assertEqual(a.release(drives), "")
        self.assertEqual([c for c in calls if c[:2] == ["mdadm", "--zero-superblock"]],
                         [["mdadm", "--zero-superblock"] + drives])
        self.assertEqual(calls.count(["udevadm", "settle"]), 2)

    def test_held_one_named(self):
        a, fake = self.setup_fake(retake=100)
        left = a.release(["/dev/loop1", "/dev/loop2"])
        self.assertIn("md126", left)
        self.assertIn("/dev/loop1", left)

    def test_nothing_to_release(self):
        a, fake = self.setup_fake(retake=0)
        fake.held = False
        self.assertEqual(a.release("/dev/loop3"), "")
        self.assertNotIn(["mdadm", "--stop"], fake.calls)


if __name__ == "__main__":
    unittest.main()
