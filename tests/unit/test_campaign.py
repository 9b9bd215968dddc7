# SPDX-License-Identifier: GPL-2.0
"""Host-side tests of fio-jobs/campaign (no VM, no kernel module):
matrix parsing and expansion, fallback dm tables, status lines, fio's
JSON (local and client/server) and bandwidth logs (canned, from real fio
runs: tests/unit/data/), the analysis, the summary and the plots; then
the runner end to end on a plain file, locally and through a fio server
on loopback.

    /usr/bin/python3 -m unittest discover -s tests/unit -v
"""

import ast
import contextlib
import csv
import gc
import io
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "fio-jobs"))
from smrcampaign import (cli, devices, fiolog, fiorun, matrix, model,  # noqa: E402
                         runner, summary)

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
CAMPAIGN = os.path.join(ROOT, "fio-jobs", "campaign")

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False


def setUpModule():
    # Under "python3 -X dev" pyparsing turns on its grammar diagnostics,
    # which flag Debian 12's matplotlib 3.6 mathtext grammar (the log
    # axis's 10^n labels) with two UserWarnings: theirs, not ours; keep
    # them out of the test output. Here, not at import: the test runner
    # resets the warning filters before it runs the tests.
    warnings.filterwarnings("ignore", r"warn_\w+: setting results name", UserWarning,
                            r"matplotlib\._mathtext")

DM_LINE = ("0 2097152 smr drive-managed 64 32768 4096/4096 3000 212 9000 40 31 "
           "2 0 1 4718592 2228224 9811 40912 0 0 65536 65536 0 102.200 "
           "clean-fg greedy 99 0 123456")
HM_LINE = ("0 1048576 smr host-managed 32 4 1 0 2 3 0 0 100 204800 5 40 "
           "2 0 0 0 0 0 0 7 4096")
CV_LINE = "0 131072 caveat 9000 800 12000 300 2400 55 7000 12 65536"


def read(path):
    with open(path) as f:
        return f.read()


def is_png(path):
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n" and os.path.getsize(path) > 1000


class StatusTest(unittest.TestCase):
    def test_drive_managed(self):
        s = model.parse_status(DM_LINE)
        self.assertEqual(s["mode"], "drive-managed")
        self.assertEqual((s["cache_used"], s["cache_total"]), (4096, 4096))
        self.assertEqual(s["nr_bands"], 64)
        self.assertEqual(s["rmw_fg"], 2)
        self.assertEqual(s["rmw_bg"], 31)
        self.assertEqual(s["clean_ms_fg"], 40912)
        self.assertEqual(s["host_write_sectors"], 65536)
        self.assertAlmostEqual(s["wa"], 102.2)
        self.assertEqual((s["state"], s["policy"]), ("clean-fg", "greedy"))
        self.assertEqual(s["mem_bytes"], 123456)
        self.assertNotIn("model_busy_ms", s)      # a module without timing
        s = model.parse_status(DM_LINE + " 20544 15419 29")
        self.assertEqual((s["mem_bytes"], s["model_busy_ms"], s["model_clean_ms"],
                          s["model_lag_ms"]), (123456, 20544, 15419, 29))

    def test_host_managed_and_caveat(self):
        h = model.parse_status(HM_LINE)
        self.assertEqual((h["mode"], h["nr_zones"], h["writes"], h["write_sectors"]),
                         ("host-managed", 32, 100, 204800))
        self.assertEqual(h["mem_bytes"], 4096)
        c = model.parse_status(CV_LINE)
        self.assertEqual((c["mode"], c["writes"], c["live_damaged_blocks"], c["valid_blocks"]),
                         ("caveat", 9000, 2400, 7000))
        self.assertNotIn("journal_writes", c)      # a module without the journal
        c = model.parse_status(CV_LINE + " 77")
        self.assertEqual((c["mem_bytes"], c["journal_writes"]), (65536, 77))
        c = model.parse_status(CV_LINE + " 77 3750 1")
        self.assertEqual((c["journal_writes"], c["model_busy_ms"], c["model_lag_ms"]),
                         (77, 3750, 1))
        self.assertNotIn("cached_writes", c)       # a module before the write cache
        c = model.parse_status(CV_LINE + " 77 3750 1 12")
        self.assertEqual(c["cached_writes"], 12)
        self.assertIsNone(model.parse_status("0 131072 caveat 1 2 3"))

    def test_unknown(self):
        self.assertIsNone(model.parse_status("0 100 linear 8:0 0"))
        self.assertIsNone(model.parse_status("0 100 smr drive-managed 1 2"))
        self.assertIsNone(model.parse_status(""))


class SizeTableTest(unittest.TestCase):
    def test_sizes(self):
        self.assertEqual(matrix.parse_size("16M"), 16 << 20)
        self.assertEqual(matrix.parse_size("1GiB"), 1 << 30)
        self.assertEqual(matrix.parse_size("2048s"), 1 << 20)
        self.assertEqual(matrix.parse_size("4096"), 4096)
        self.assertEqual(matrix.sectors("4K"), 8)
        for bad in ("12Q", "", "M", "-1M"):
            self.assertRaises(ValueError, matrix.parse_size, bad)
        self.assertRaises(ValueError, matrix.sectors, "100")

    def test_tables(self):
        self.assertEqual(
            devices.dm_table("drive-managed", "/dev/vda", {"size": "1G", "band": "16M",
                                                           "cache": "16M", "idle_ms": "500",
                                                           "policy": "greedy"}),
            "0 2097152 smr /dev/vda drive-managed 32768 7 cache_sectors 32768 idle_ms 500 "
            "policy greedy format")
        self.assertEqual(
            devices.dm_table("drive-managed", "/dev/vda", {"size": "256M", "band": "4M",
                                                           "seq_bypass": "off"}),
            "0 524288 smr /dev/vda drive-managed 8192 3 seq_bypass off format")
        self.assertEqual(
            devices.dm_table("host-managed", "/dev/vdb", {"size": "2G", "zone": "32M", "conv": "4",
                                                          "max_open": "8"}),
            "0 4194304 smr /dev/vdb host-managed 65536 5 conv_zones 4 max_open 8 format")
        self.assertEqual(
            devices.dm_table("caveat", "/dev/vdc", {"size": "64M", "did": "16", "dnor": "4"}),
            "0 131072 caveat /dev/vdc 16 4 1 format")
        self.assertRaises(matrix.MatrixError, devices.dm_table, "drive-managed", "/dev/x",
                          {"band": "4M"})
        self.assertRaises(matrix.MatrixError, devices.dm_table, "host-managed", "/dev/x",
                          {"size": "1G"})

    def test_smrctl_args(self):
        a = devices.smrctl_create_args("cmp_dm", "drive-managed",
                                       {"backing": "/dev/vda", "size": "1G", "band": "16M",
                                        "idle_ms": "500", "seq_bypass": "off", "policy": "fifo"})
        self.assertEqual(a[:7], ["create", "cmp_dm", "--model", "drive-managed", "--dev",
                                 "/dev/vda", "--format"])
        self.assertIn("--no-seq-bypass", a)
        self.assertEqual(a[a.index("--idle-ms") + 1], "500")
        self.assertEqual(a[a.index("--band") + 1], "16M")
        # A slice of the profile's drive (docs/timing.md: drive_mb, start_mb).
        a = devices.smrctl_create_args("cmp_hm", "host-managed",
                                       {"backing": "/dev/vda", "profile": "hc620",
                                        "start_mb": "1000"})
        self.assertEqual(a[a.index("--start-mb") + 1], "1000")


class MatrixTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="campaign-test.")

    def tearDown(self):
        shutil.rmtree(self.d)

    def matrix(self, text, overrides=(), env=None):
        p = os.path.join(self.d, "m.ini")
        with open(p, "w") as f:
            f.write(text)
        return matrix.Matrix(p, overrides, env=env if env is not None else {})

    M = """
[campaign]
name = t
[device dm]
model = drive-managed
backing = ${BACKING}
size = 1G
band = 16M
policy = fifo, greedy ; two values: an axis
[device cv]
model = caveat
backing = /dev/vdb
size = 64M
did = 16, 64
[job burst]
file = dm-randwrite-burst.fio
devices = dm
RUNTIME = 10, 20
[job damage]
file = cv-damage.fio
devices = cv
SIZE = 32M
IOSIZE = ${IOSIZE}
"""

    def test_expand(self):
        m = self.matrix(self.M, env={"IOSIZE": "2M", "BACKING": "/dev/vda"})
        runs = m.runs()
        self.assertEqual([r["id"] for r in runs], [
            "01-burst-dm-policy=fifo-RUNTIME=10", "02-burst-dm-policy=fifo-RUNTIME=20",
            "03-burst-dm-policy=greedy-RUNTIME=10", "04-burst-dm-policy=greedy-RUNTIME=20",
            "05-damage-cv-did=16", "06-damage-cv-did=64"])
        self.assertEqual(runs[0]["dev"]["backing"], "/dev/vda")
        self.assertEqual(runs[3]["dev"]["policy"], "greedy")
        self.assertEqual(runs[3]["jobopts"]["RUNTIME"], "20")
        self.assertEqual(runs[5]["jobopts"]["IOSIZE"], "2M")
        self.assertTrue(runs[0]["file"].endswith("fio-jobs/dm-randwrite-burst.fio"))
        self.assertEqual(m.name, "t")

    def test_env_and_set(self):
        m = self.matrix(self.M, ["device dm.policy=cost-benefit", "job burst.RUNTIME=5"],
                        env={"BACKING": "/dev/sdz", "IOSIZE": "1M"})
        runs = m.runs()
        self.assertEqual(len(runs), 3)
        self.assertEqual(runs[0]["dev"]["backing"], "/dev/sdz")
        self.assertEqual(runs[0]["dev"]["policy"], "cost-benefit")
        self.assertEqual(runs[0]["id"], "01-burst-dm")

    def test_errors(self):
        E = matrix.MatrixError
        self.assertRaises(E, self.matrix, self.M, env={"BACKING": "/x"})    # ${IOSIZE} unset
        self.assertRaises(E, self.matrix, self.M, env={"IOSIZE": "1"})      # ${BACKING} unset
        env = {"IOSIZE": "1", "BACKING": "/x"}
        self.assertRaises(E, self.matrix, self.M, ["nodot=1"], env)
        self.assertRaises(E, self.matrix, self.M, ["device zz.size=1"], env)
        bad = [
            "[device a]\nmodel = drive-managed\n[job j]\nfile = dm-seq-bypass.fio\n",
            "[device a]\nmodel = file\npath = /tmp/x\n[job j]\nfile = dm-seq-bypass.fio\n",
            "[device a]\nmodel = smr\nbacking = /x\n[job j]\nfile = dm-seq-bypass.fio\n",
            "[device a]\nmodel = caveat\nbacking = /x\ncahce = 1\n[job j]\nfile = x.fio\n",
            "[device a]\nmodel = caveat\nbacking = /x\n[job j]\nnofile = 1\n",
            "[device a]\nmodel = caveat\nbacking = /x\n",
            "[devices a]\nmodel = caveat\n",
        ]
        for text in bad:
            self.assertRaises(E, self.matrix, text)
        m = self.matrix("[device a]\nmodel = caveat\nbacking = /x\n[job j]\nfile = nosuch.fio\n")
        self.assertRaises(E, m.runs)
        m = self.matrix("[device a]\nmodel = caveat\nbacking = /x\n[job j]\nfile = cv-damage.fio\n"
                        "devices = b\n")
        self.assertRaises(E, m.runs)

    def test_shipped_matrices(self):
        for f in sorted(os.listdir(os.path.join(ROOT, "fio-jobs", "matrices"))):
            path = os.path.join(ROOT, "fio-jobs", "matrices", f)
            m = matrix.Matrix(path, env={"BACKING": "/dev/sdz"})
            self.assertTrue(m.runs(), f)
            for r in m.runs():
                if r.get("array"):
                    # an array's drives are carved from its backing
                    self.assertEqual(r["array"]["backing"], "/dev/sdz", f)
                elif r["dev"]["model"] in model.DM_MODELS:
                    self.assertEqual(r["dev"]["backing"], "/dev/sdz", f)
            # the disk to format is never a default: without BACKING
            # every shipped matrix is refused, saying what to set
            with self.assertRaises(matrix.MatrixError, msg=f) as cm:
                matrix.Matrix(path, env={})
            self.assertIn("BACKING=/dev/sdX", str(cm.exception))

    def test_backing_not_from_default(self):
        text = ("[device a]\nmodel = drive-managed\nbacking = ${DISK:-/dev/vda}\n"
                "[job j]\nfile = dm-seq-bypass.fio\n")
        with self.assertRaises(matrix.MatrixError) as cm:
            self.matrix(text, env={})
        self.assertIn("/dev/vda", str(cm.exception))
        self.assertIn("DISK=/dev/sdX", str(cm.exception))
        m = self.matrix(text, env={"DISK": "/dev/sdq"})
        self.assertEqual(m.runs()[0]["dev"]["backing"], "/dev/sdq")
        # named in the matrix, or with --set: explicit
        m = self.matrix(text, ["device a.backing=/dev/sdr"], {})
        self.assertEqual(m.runs()[0]["dev"]["backing"], "/dev/sdr")

    def test_job_file(self):
        dst = os.path.join(self.d, "job.fio")
        fiorun.write_job_file(os.path.join(ROOT, "fio-jobs", "dm-randwrite-burst.fio"), dst,
                              {"DEV": "/dev/mapper/x", "RUNTIME": "7"})
        text = read(dst)
        self.assertIn("filename=/dev/mapper/x\n", text)
        self.assertIn("runtime=7\n", text)
        self.assertIn("${VAR}", text)        # comments are left alone
        self.assertTrue(text.split("\n[global]\n")[1].startswith(
            "write_bw_log=bw\nlog_avg_msec=%d\nlog_unix_epoch=1\n" % fiolog.LOG_AVG_MSEC))
        self.assertEqual(fiolog.log_avg_msec(dst), fiolog.LOG_AVG_MSEC)
        self.assertEqual(fiolog.log_avg_msec(os.path.join(self.d, "nosuch.fio")), 1000)
        self.assertRaises(matrix.MatrixError, fiorun.write_job_file,
                          os.path.join(ROOT, "fio-jobs", "dm-randwrite-burst.fio"), dst,
                          {"DEV": "/dev/x"})


@unittest.skipUnless(shutil.which("fio"), "fio is not installed")
class JobFileTest(unittest.TestCase):
    """Every shipped job file, as the runner writes it, parses in fio."""

    ENV = {"DEV": "/tmp/campaign-parse-test", "DIR": "/tmp", "RUNTIME": "1", "SIZE": "1M",
           "IOSIZE": "1M", "BURST": "1M", "IDLE": "1", "MAXOPEN": "0", "NRFILES": "1",
           "FG_OFFSET": "0", "FG_SIZE": "1048576"}

    def test_parse(self):
        d = tempfile.mkdtemp()
        try:
            jobs = sorted(f for f in os.listdir(os.path.join(ROOT, "fio-jobs")) if f.endswith(".fio"))
            self.assertGreaterEqual(len(jobs), 7)
            for f in jobs:
                dst = os.path.join(d, f)
                fiorun.write_job_file(os.path.join(ROOT, "fio-jobs", f), dst, self.ENV)
                p = subprocess.run(["fio", "--parse-only", dst], capture_output=True, text=True,
                                   timeout=60)
                self.assertEqual((p.returncode, p.stderr.strip()), (0, ""), f)
        finally:
            shutil.rmtree(d)


class FioOutputTest(unittest.TestCase):
    def test_local(self):
        j = fiolog.load_fio_json(os.path.join(DATA, "local", "fio.json"))
        s = fiolog.fio_summary(j)
        self.assertEqual(s["fio_jobs"], 3)      # two writers, one reader
        self.assertEqual(s["fio_hosts"], 0)
        w = sum(e["write"]["io_kbytes"] for e in j["jobs"]) / 1024.0
        self.assertAlmostEqual(s["write_mib"], w)
        self.assertAlmostEqual(s["write_mibs"], sum(e["write"]["bw"] for e in j["jobs"]) / 1024.0)
        self.assertGreater(s["read_mib"], 0)
        self.assertEqual(s["fio_errors"], 0)
        self.assertEqual([p["job"] for p in s["phases"]], ["writers", "writers", "reader"])
        self.assertGreater(s["write_lat_ms_mean"], 0)

    def test_p99_merged(self):
        """p99 over every job's writes, from their histograms (json+),
        not the largest job's p99 (data/jsonplus: a 4k and a 1M writer,
        fio 3.33 --output-format=json+)."""
        j = fiolog.load_fio_json(os.path.join(DATA, "jsonplus", "fio.json"))
        jobs = [e["write"]["clat_ns"] for e in j["jobs"]]
        for c in jobs:   # one job: fio's own figure
            b = {int(k): v for k, v in c["bins"].items()}
            self.assertEqual(fiolog.bins_percentile(b, 99.0), c["percentile"]["99.000000"])
            self.assertEqual(fiolog.bins_percentile(b, 50.0), c["percentile"]["50.000000"])
        lat = sorted(int(k) for c in jobs for k, n in c["bins"].items() for _ in range(n))
        want = lat[-(-len(lat) * 99 // 100) - 1]    # the ceil(0.99 n)-th latency
        s = fiolog.fio_summary(j)
        self.assertEqual(s["write_clat_p99_from"], "merged histograms")
        self.assertAlmostEqual(s["write_clat_ms_p99"], want / 1e6)
        top = max(c["percentile"]["99.000000"] for c in jobs)
        self.assertLess(s["write_clat_ms_p99"], top / 1e6)
        # without histograms (plain json): said to be an upper bound
        s = fiolog.fio_summary(fiolog.load_fio_json(os.path.join(DATA, "local", "fio.json")))
        self.assertEqual(s["write_clat_p99_from"], "max of jobs (upper bound)")

    def test_client(self):
        j = fiolog.load_fio_json(os.path.join(DATA, "client", "fio.json"))
        s = fiolog.fio_summary(j)
        self.assertEqual((s["fio_jobs"], s["fio_hosts"]), (3, 1))
        self.assertEqual({p["host"] for p in s["phases"]}, {"127.0.0.1"})

    def test_bw_logs(self):
        d = os.path.join(DATA, "local")
        logs = fiolog.bw_log_files(d)
        self.assertEqual([os.path.basename(x) for x in logs],
                         ["bw_bw.1.log", "bw_bw.2.log", "bw_bw.3.log"])
        t0 = min(fiolog.first_log_time(x) for x in logs) - 1000
        bw = fiolog.read_bw_logs(logs, t0)         # made with log_avg_msec=1000
        # two writers at 4 MiB/s each for two whole seconds, then the
        # reader's second
        self.assertEqual([t for t, r, w in bw][:2], [0, 1])
        for t, r, w in bw[:2]:
            self.assertAlmostEqual(w, 8.0, delta=0.1)
            self.assertEqual(r, 0)
        # the reader's one window straddles two seconds: its 4 MiB are
        # shared out between them
        self.assertAlmostEqual(sum(r for t, r, w in bw), 4.0, delta=0.1)
        self.assertEqual(sum(1 for t, r, w in bw if r > 0), 2)
        self.assertEqual(len(fiolog.bw_log_files(os.path.join(DATA, "client"))), 3)

    def test_bw_short_windows(self):
        """100 ms windows: a phase shorter than a second still shows, and
        the windows of one second add up to that second's MiB/s."""
        d = tempfile.mkdtemp()
        try:
            t0 = 1700000000000
            with open(os.path.join(d, "bw_bw.1.log"), "w") as f:
                # 0.3 s of writing at 10 MiB/s, then a second at 2 MiB/s
                for i in range(1, 4):
                    f.write("%d, 10240, 1, 0, 0\n" % (t0 + 100 * i))
                for i in range(11, 21):
                    f.write("%d, 2048, 1, 0, 0\n" % (t0 + 100 * i))
            with open(os.path.join(d, "bw_bw.2.log"), "w") as f:
                f.write("%d, 4096, 0, 0, 0\n" % (t0 + 1500))    # 0.1 s of reading
            bw = fiolog.read_bw_logs(fiolog.bw_log_files(d), t0, 100)
            self.assertEqual([t for t, r, w in bw], [0, 1])
            self.assertAlmostEqual(bw[0][2], 3.0)
            self.assertAlmostEqual(bw[1][2], 2.0)
            self.assertAlmostEqual(bw[1][1], 0.4)
        finally:
            shutil.rmtree(d)

    def test_bw_late_windows(self):
        """fio came late: an entry 200 ms after the one before it stands
        for 200 ms of I/O; after a gap without I/O (no entries) an entry
        stands for one window; an entry's window is shared out among the
        seconds it overlaps."""
        d = tempfile.mkdtemp()
        try:
            t0 = 1700000000000
            with open(os.path.join(d, "bw_bw.1.log"), "w") as f:
                # 8 MiB/s for 1 s: a first window, four late ones of
                # 200 ms and a last one
                for ms in (100, 300, 500, 700, 900, 1000):
                    f.write("%d, 8192, 1, 0, 0\n" % (t0 + ms))
                # nothing for 2 s; then at 5 MiB/s a window, one 200 ms
                # late, one 300 ms (the most that counts as late)
                for ms in (3100, 3300, 3600):
                    f.write("%d, 5120, 1, 0, 0\n" % (t0 + ms))
                # 450 ms after that: a gap, so one window, 3.95-4.05 s
                f.write("%d, 10240, 1, 0, 0\n" % (t0 + 4050))
            bw = fiolog.read_bw_logs(fiolog.bw_log_files(d), t0, 100)
            w = {t: w for t, r, w in bw}
            self.assertEqual(sorted(w), [0, 1, 2, 3, 4])
            self.assertAlmostEqual(w[0], 8.0)
            self.assertEqual((w[1], w[2]), (0.0, 0.0))
            self.assertAlmostEqual(w[3], 0.5 + 1.0 + 1.5 + 0.5)
            self.assertAlmostEqual(w[4], 0.5)
        finally:
            shutil.rmtree(d)

    def test_counted_errors(self):
        """fio exits 1 after errors a continue_on_error job counted: the
        run is ok; a job that stopped on an error is not."""
        d = tempfile.mkdtemp()
        try:
            j = json.loads(read(os.path.join(DATA, "local", "fio.json")))
            j["jobs"][2]["total_err"] = 5
            j["jobs"][2]["first_error"] = 61
            with open(os.path.join(d, "fio.json"), "w") as f:
                json.dump(j, f)
            row = {"status": "fio failed", "fio_rc": 1, "error": "fio exit 1"}
            out = summary.analyse_run(d, row)
            self.assertEqual((out["status"], out["fio_errors"], out["fio_fatal"]), ("ok", 5, 0))
            # as fio 3.33 wrote it in the VM: the first error in "error"
            j["jobs"][2]["error"] = 61
            with open(os.path.join(d, "fio.json"), "w") as f:
                json.dump(j, f)
            self.assertEqual(summary.analyse_run(d, row)["status"], "ok")
            # stopped by its first error: nothing counted
            j["jobs"][2]["total_err"] = 0
            with open(os.path.join(d, "fio.json"), "w") as f:
                json.dump(j, f)
            out = summary.analyse_run(d, row)
            self.assertNotIn("status", out)
            self.assertEqual(out["fio_fatal"], 1)
        finally:
            shutil.rmtree(d)

    def test_json_after_warnings(self):
        d = tempfile.mkdtemp()
        try:
            p = os.path.join(d, "f.json")
            with open(p, "w") as f:
                f.write("fio: some warning\n" + read(os.path.join(DATA, "local", "fio.json")))
            self.assertEqual(fiolog.fio_summary(fiolog.load_fio_json(p))["fio_jobs"], 3)
            with open(p, "w") as f:
                f.write("fio: no json at all\n")
            self.assertRaises(ValueError, fiolog.load_fio_json, p)
        finally:
            shutil.rmtree(d)


FAKE_FIO = """#!/bin/sh
# a fio that hangs: a worker (child) holding the device open, and the
# parent; both ignore nothing but never end
exec 3<"$DEVICE"
if [ -n "$ESCAPE" ]; then   # a holder in a session of its own
    setsid sh -c 'echo $$ > "$PIDS/escaped"; exec sleep 300' &
fi
sleep 300 &
echo $! > "$PIDS/child"
echo $$ > "$PIDS/parent"
wait
"""


def alive(pid):
    """A process exists and is not a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class FakeRunner(fiorun.FioRunner):
    kill_grace_s = 0.5

    def __init__(self, fio, timeout):
        self.fio, self.clients, self.progress_s = fio, [], 0
        self.m = type("M", (), {"campaign": {"timeout": str(timeout)}})()
        self.said = []

    def say(self, msg):
        self.said.append(msg)


class TimeoutTest(unittest.TestCase):
    """A fio timeout kills fio's whole process group and checks that
    the device is free before the campaign goes on."""

    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="campaign-timeout.")
        self.fio = os.path.join(self.d, "fio")
        with open(self.fio, "w") as f:
            f.write(FAKE_FIO)
        os.chmod(self.fio, 0o755)
        self.dev = os.path.join(self.d, "dev.img")
        with open(self.dev, "wb") as f:
            f.write(b"\0" * 4096)
        os.environ["DEVICE"], os.environ["PIDS"] = self.dev, self.d
        self.run_ = {"jobopts": {}}

    def tearDown(self):
        for k in ("DEVICE", "PIDS", "ESCAPE"):
            os.environ.pop(k, None)
        for n in ("child", "parent", "escaped"):
            try:
                os.kill(int(read(os.path.join(self.d, n))), 9)
            except (OSError, ValueError):
                pass
        shutil.rmtree(self.d)

    def test_kills_workers(self):
        r = FakeRunner(self.fio, 1)
        t = time.time()
        with self.assertRaises(RuntimeError) as e:
            r.run_fio(self.run_, self.d, "job.fio", t, None, dev=self.dev)
        self.assertIn("timeout", str(e.exception))
        self.assertIn("killed with its workers", str(e.exception))
        for n in ("parent", "child"):
            self.assertFalse(alive(int(read(os.path.join(self.d, n)))), n)
        self.assertEqual(devices.holders(self.dev), [])

    def test_fio_failed(self):
        """fio exits non-zero: the row names the exit and the tail of
        fio.err, and fio.err is read through a file that gets closed."""
        with open(self.fio, "w") as f:
            f.write("#!/bin/sh\necho 'fio: job.fio: no such file' >&2\nexit 1\n")
        r = FakeRunner(self.fio, 30)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            row = r.run_fio(self.run_, self.d, "job.fio", time.time(), None)
            gc.collect()
        self.assertEqual((row["status"], row["fio_rc"]), ("fio failed", 1))
        self.assertEqual(row["error"], "fio exit 1: fio: job.fio: no such file")
        self.assertEqual([str(w.message) for w in caught
                          if issubclass(w.category, ResourceWarning)], [])

    def test_device_still_busy(self):
        r = FakeRunner(self.fio, 1)
        with open(self.dev) as held:                 # a holder outside fio's group
            self.assertIn(os.getpid(), [p for p, c in devices.holders(self.dev)])
            with self.assertRaises(RuntimeError) as e:
                r.run_fio(self.run_, self.d, "job.fio", time.time(), None, dev=self.dev)
            held.close()
        self.assertIn("before fio: %s still held open by pid %d" % (self.dev, os.getpid()),
                      str(e.exception))
        self.assertFalse(os.path.exists(os.path.join(self.d, "parent")))   # not started
        # a holder fio's group kill cannot reach: the run fails, saying so
        os.environ["ESCAPE"] = "1"
        with self.assertRaises(RuntimeError) as e:
            r.run_fio(self.run_, self.d, "job.fio", time.time(), None, dev=self.dev)
        esc = int(read(os.path.join(self.d, "escaped")))
        self.assertIn("timeout), killed with its workers, but: %s still held open by pid %d"
                      % (self.dev, esc), str(e.exception))
        self.assertFalse(alive(int(read(os.path.join(self.d, "child")))))

    def test_interrupt_kills_workers(self):
        """Ctrl-C or a harness's SIGTERM while fio runs: fio (in a session
        of its own) and its workers are stopped before the error goes on."""
        r = FakeRunner(self.fio, 60)
        calls = []

        def interrupted(p, t0, timeout, sampler):
            for _ in range(100):                    # until the child is up
                if os.path.exists(os.path.join(self.d, "child")):
                    break
                time.sleep(0.05)
            calls.append(p.pid)
            raise KeyboardInterrupt
        r.wait_fio = interrupted
        with self.assertRaises(KeyboardInterrupt):
            r.run_fio(self.run_, self.d, "job.fio", time.time(), None, dev=self.dev)
        self.assertEqual(len(calls), 1)
        for n in ("parent", "child"):
            self.assertFalse(alive(int(read(os.path.join(self.d, n)))), n)

    def test_char_device_is_not_the_block_device(self):
        """A character device with the block device's major:minor (rtc0
        or a gpiochip often shares dm's 254) does not hold the device."""
        import stat as st_mod
        null = os.stat("/dev/null")
        blk = os.stat_result((st_mod.S_IFBLK | 0o600, 0, 0, 1, 0, 0, 0, 0, 0, 0),
                             {"st_rdev": null.st_rdev})
        self.assertFalse(devices._same_file("/dev/null", "/dev/null", blk, None))
        with open(self.dev) as f:                   # a regular file: by inode
            fd = "/proc/self/fd/%d" % f.fileno()
            self.assertTrue(devices._same_file(fd, self.dev, os.stat(self.dev), None))


def synth_status(t_full, n, fg_from, bg_after):
    """A drive-managed timeline: the cache fills linearly until t_full,
    foreground cleaning from fg_from until n, background after that
    until bg_after, then idle and empty."""
    rows = []
    for i in range(bg_after + 3):
        used = min(4096, int(4096 * i / t_full)) if i < n else max(0, 4096 - 400 * (i - n))
        st = ("idle" if i < fg_from else "clean-fg" if i < n else
              "clean-bg" if i < bg_after else "idle")
        if i >= bg_after:
            used = 0
        rows.append({"t": float(i), "cache_used": used, "cache_total": 4096, "state": st,
                     "rmw_fg": max(0, i - fg_from), "host_write_sectors": 2048 * i})
    return rows


def write_synth_status(d, *args):
    """synth_status(*args) with the write counters a cleaning adds, as
    the runner's status.csv in run directory d."""
    st = synth_status(*args)
    for r in st:
        r.update(cache_write_sectors=r["host_write_sectors"], bypass_write_sectors=0,
                 clean_write_sectors=1024 * r["t"])
    with open(os.path.join(d, "status.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(st[0]))
        w.writeheader()
        w.writerows(st)


class AnalysisTest(unittest.TestCase):
    def test_spans_and_phases(self):
        s = synth_status(3, 8, 4, 12)
        self.assertEqual(model.cleaning_spans(s), [(4.0, 8.0, "clean-fg"), (8.0, 12.0, "clean-bg")])
        bw = [(0, 0, 10.0), (1, 0, 12.0), (2, 0, 3.0), (3, 0, 5.0), (4, 0, 0.5), (5, 0, 0.4),
              (6, 0, 0.6), (7, 0, 0.5)]
        hi, lo, t_full = summary.phase_figures(bw, s, 8.0)
        self.assertEqual(t_full, 3.0)
        # seconds 0-1: second 2 ended after the last sample with room
        # (t 2.0), so the cache may have filled within it
        self.assertEqual(hi, 11.0)
        self.assertEqual(lo, 0.5)       # seconds 5-7
        hi, lo, t_full = summary.phase_figures(bw, [dict(x, cache_used=0) for x in s], 8.0)
        self.assertEqual((lo, t_full), (None, None))
        # an idle phase (no writes) is not part of the cache phase
        idle = [(0, 0, 10.0), (1, 0, 0.0), (2, 0, 0.0), (3, 0, 0.0), (4, 0, 12.0)]
        self.assertEqual(summary.phase_figures(idle, [dict(x, cache_used=0) for x in s], 5.0)[0],
                         11.0)

    def test_cleaning_counted_once(self):
        """clean_ms_bg in the final status includes the cleaning after
        the job, which cleaning_s (the wait for cleaning) measures too:
        the chart's background bar is the cleaning while fio ran."""
        d = tempfile.mkdtemp()
        try:
            rows = synth_status(1, 4, 2, 8)
            for r in rows:      # 1 s of bg cleaning per second, fg while fio ran
                r["clean_ms_fg"] = 500 * min(r["t"], 4)
                r["clean_ms_bg"] = 1000 * max(0, r["t"] - 4)
            with open(os.path.join(d, "status.csv"), "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=list(rows[0]))
                w.writeheader()
                w.writerows(rows)
            with open(os.path.join(d, "status.final"), "w") as f:
                f.write(DM_LINE.replace("clean-fg", "idle") + "\n")   # fg 40912 ms, bg 9811 ms
            row = {"run": "r", "job": "j", "device": "dm", "model": "drive-managed",
                   "fio_end_s": 5.0, "cleaning_s": 5.5}
            row.update(summary.analyse_run(d, row))
            self.assertEqual((row["clean_fg_run_s"], row["clean_bg_run_s"]), (2.0, 1.0))
            # without a timeline: the final counter less the cleaning after
            os.remove(os.path.join(d, "status.csv"))
            row = {"run": "r", "job": "j", "device": "dm", "model": "drive-managed",
                   "fio_end_s": 5.0, "cleaning_s": 5.5}
            row.update(summary.analyse_run(d, row))
            self.assertAlmostEqual(row["clean_bg_run_s"], 9.811 - 5.5)
            self.assertAlmostEqual(row["clean_fg_run_s"], 40.912)
            if HAVE_MPL:
                from smrcampaign import plots
                row["status_samples"] = 1
                dm, labels, fg, bg, after, wa = plots.cleaning_bars([row])
                self.assertAlmostEqual(bg[0] + after[0], 9.811)   # not 9.811 + 5.5
        finally:
            shutil.rmtree(d)

    def test_event_spans(self):
        ev = [{"ts": 100.0, "family": "smrd", "event": "subscribed"},
              {"ts": 101.0, "family": "dm-smr", "event": "clean_start", "device": "d", "band": 1,
               "reason": "foreground"},
              {"ts": 101.5, "family": "dm-smr", "event": "clean_done", "device": "d", "band": 1,
               "reason": "foreground"},
              {"ts": 103.0, "family": "dm-smr", "event": "clean_start", "device": "d", "band": 2,
               "reason": "idle"},
              {"ts": 104.0, "family": "dm-smr", "event": "clean_done", "device": "d", "band": 2,
               "reason": "idle"}]
        self.assertEqual(model.event_spans(ev, 100.0),
                         [(1.0, 1.5, "clean-fg"), (3.0, 4.0, "clean-bg")])

    def test_merge_spans(self):
        # per state: overlapping or closer than the gap become one
        spans = [(0.0, 0.1, "clean-fg"), (0.25, 0.3, "clean-fg"), (0.2, 0.6, "clean-bg"),
                 (1.0, 1.2, "clean-fg"), (0.7, 0.9, "clean-bg")]
        self.assertEqual(model.merge_spans(spans, 0.2),
                         [(0.0, 0.3, "clean-fg"), (0.2, 0.9, "clean-bg"), (1.0, 1.2, "clean-fg")])
        self.assertEqual(model.merge_spans([], 0.2), [])

    @unittest.skipUnless(HAVE_MPL, "python3-matplotlib is not installed")
    def test_shade_draws_close_spans_once(self):
        # A burst's band cleanings, 14 ms apart: 1400 axvspans took
        # minutes under TCG (campaign_01's plots: 165 s on 6.12, more
        # than 21 min under a debug kernel); drawn as one span.
        from smrcampaign import plots
        spans = [(i * 0.014, i * 0.014 + 0.01, "clean-fg") for i in range(1400)]
        spans.append((30.0, 31.0, "clean-bg"))
        fig, ax = plots.plt.subplots()
        try:
            plots._shade(ax, spans, set())
            self.assertEqual(len(ax.patches), 2)
        finally:
            plots.plt.close(fig)


@unittest.skipUnless(HAVE_MPL, "python3-matplotlib is not installed")
class SummaryPlotTest(unittest.TestCase):
    """A results directory assembled from the canned fio output and
    synthetic status timelines: analysis, summary files, plots."""

    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="campaign-results.")

    def tearDown(self):
        shutil.rmtree(self.out)

    def rundir(self, rid, src="local"):
        d = os.path.join(self.out, "runs", rid)
        os.makedirs(d)
        for f in os.listdir(os.path.join(DATA, src)):
            shutil.copy(os.path.join(DATA, src, f), d)
        logs = fiolog.bw_log_files(d)
        t0 = min(fiolog.first_log_time(x) for x in logs) - 1000
        with open(os.path.join(d, "t0"), "w") as f:
            f.write("%d\n" % t0)
        return d, t0

    def write_status(self, d, rows):
        with open(os.path.join(d, "status.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)

    def test_results_dir(self):
        rows = []
        d, t0 = self.rundir("01-burst-dm-policy=fifo")
        self.write_status(d, synth_status(1, 4, 2, 8))
        with open(os.path.join(d, "status.final"), "w") as f:
            f.write(DM_LINE.replace("clean-fg", "idle") + "\n")
        with open(os.path.join(d, "events.json"), "w") as f:
            for e in ({"ts": t0 / 1000 + 2.2, "family": "dm-smr", "event": "clean_start",
                       "device": "cmp_dm", "band": 3, "reason": "foreground"},
                      {"ts": t0 / 1000 + 2.9, "family": "dm-smr", "event": "clean_done",
                       "device": "cmp_dm", "band": 3, "reason": "foreground"}):
                f.write(json.dumps(e) + "\n")
        row = {"run": "01-burst-dm-policy=fifo", "job": "burst", "device": "dm",
               "model": "drive-managed", "policy": "fifo", "status": "ok", "error": "",
               "varied": "policy=fifo", "fio_end_s": 5.0, "wait_clean_s": 3.0, "cleaning_s": 2.5}
        row.update(summary.analyse_run(d, row))
        rows.append(row)
        self.assertEqual(row["fio_jobs"], 3)
        self.assertEqual(row["rmw_fg"], 2)
        self.assertEqual(row["status_samples"], 11)
        self.assertEqual(row["cache_full_at_s"], 1.0)
        self.assertEqual(row["events"], 2)
        self.assertEqual(row["clean_done_events"], 1)
        self.assertEqual(row["host_write_mib"], 32.0)
        self.assertAlmostEqual(row["cache_phase_mibs"], 8.0, delta=0.1)

        d, _ = self.rundir("02-damage-cv")
        self.write_status(d, [{"t": float(i), "writes": 10 * i, "damaging_writes": i,
                               "damaged_blocks": 40 * i, "live_damage_writes": i,
                               "live_damaged_blocks": 30 * i, "damaged_reads": 0,
                               "valid_blocks": 5000 - 30 * i, "commits": 1, "mem_bytes": 1}
                              for i in range(6)])
        with open(os.path.join(d, "status.final"), "w") as f:
            f.write(CV_LINE + "\n")
        row = {"run": "02-damage-cv", "job": "damage", "device": "cv", "model": "caveat",
               "status": "ok", "error": "", "varied": ""}
        row.update(summary.analyse_run(d, row))
        self.assertEqual(row["live_damaged_blocks"], 2400)
        rows.append(row)

        d, _ = self.rundir("03-seq-remote", "client")
        row = {"run": "03-seq-remote", "job": "seq", "device": "remote", "model": "file",
               "status": "ok", "error": "", "varied": ""}
        row.update(summary.analyse_run(d, row))
        self.assertEqual(row["fio_hosts"], 1)
        rows.append(row)

        figs = runner.draw_plots(self.out, rows)
        doc = summary.write_summary(self.out, "t", rows, figs, 12.0)
        names = sorted(f["file"] for f in figs)
        self.assertEqual(names, ["plots/01-burst-dm-policy=fifo-throughput.png",
                                 "plots/02-damage-cv-damage.png",
                                 "plots/02-damage-cv-throughput.png",
                                 "plots/03-seq-remote-throughput.png",
                                 "plots/cleaning-by-policy.png"])
        txt = read(os.path.join(self.out, "summary.txt"))
        for n in names:
            self.assertTrue(is_png(os.path.join(self.out, n)), n)
            self.assertIn(n, txt)
        with open(os.path.join(self.out, "summary.csv")) as f:
            r = list(csv.DictReader(f))
        self.assertEqual([x["run"] for x in r], ["01-burst-dm-policy=fifo", "02-damage-cv",
                                                 "03-seq-remote"])
        self.assertEqual(r[0]["cleaning_s"], "2.5")
        self.assertIn("plots/01-burst-dm-policy=fifo-throughput.png", r[0]["plots"])
        j = json.loads(read(os.path.join(self.out, "summary.json")))
        self.assertEqual(j, json.loads(json.dumps(doc)))
        self.assertEqual(len(j["figures"]), 5)
        self.assertIn("campaign t: 3 runs", txt)


class LatencyTest(unittest.TestCase):
    """Per-second latency percentiles from fio's histogram logs
    (data/hist, synthetic), the write amplification timeline, the
    latency and per-policy plots."""

    HIST = os.path.join(DATA, "hist")
    T0 = 1795000000000

    def test_bucket_values(self):
        self.assertEqual(fiolog.plat_idx_to_val(100), 100)
        self.assertEqual(fiolog.plat_idx_to_val(128), 129)          # [128, 130)
        self.assertEqual(fiolog.plat_idx_to_val(160, 0.0), 192)
        self.assertEqual(fiolog.coarse_bin_val(10, 4), 208)         # [192, 224)
        self.assertEqual(fiolog.coarse_bin_val(5, 4, 1.0), 95)      # exact below 128

    def test_read_hist_logs(self):
        files = fiolog.hist_log_files(self.HIST)
        self.assertEqual([os.path.basename(f) for f in files],
                         ["lat_clat_hist.1.log", "lat_clat_hist.2.log"])
        bad = []
        lat = fiolog.read_hist_logs(files, self.T0, skipped=bad)
        v = fiolog.coarse_bin_val
        # second 0: 97 I/Os in bucket 10, 2 in 40, 1 in 60 (job 1), 100
        # in 20 (job 2): p50 in 20, p99 (the 198th) in 40, max the top
        # of 60; the read line does not count
        self.assertEqual(lat, [(0, v(20, 4), v(40, 4), v(60, 4, 1.0), 200),
                               (1, v(5, 4), v(5, 4), 95.0, 10)])
        self.assertEqual([(os.path.basename(f), n) for f, n, t in bad], [("lat_clat_hist.1.log", 4)])
        self.assertEqual(fiolog.read_hist_logs(files, self.T0, ddir=0)[0][1], v(100, 4))

    def test_wa_timeline(self):
        rows = [{"t": float(i), "host_write_sectors": 100 * min(i, 2),
                 "cache_write_sectors": 100 * min(i, 2), "bypass_write_sectors": 0,
                 "clean_write_sectors": 50 * i} for i in range(4)]
        self.assertEqual(model.wa_timeline(rows), [(0.0, None, None), (1.0, 1.5, 1.5),
                                                   (2.0, 1.5, 1.5), (3.0, 1.75, None)])
        self.assertEqual(model.wa_timeline([{"t": 0.0, "writes": 1}]), [])

    @unittest.skipUnless(HAVE_MPL, "needs python3-matplotlib")
    def test_plots(self):
        out = tempfile.mkdtemp(prefix="campaign-lat.")
        try:
            rows = []
            for pol in ("fifo", "greedy"):
                rid = "0%d-burst-dm-policy=%s" % (len(rows) + 1, pol)
                d = os.path.join(out, "runs", rid)
                shutil.copytree(self.HIST, d)
                with open(os.path.join(d, "t0"), "w") as f:
                    f.write("%d\n" % self.T0)
                with open(os.path.join(d, "bw.csv"), "w") as f:
                    f.write("t,read_mibs,write_mibs\n0,0,8.0\n1,0,%s\n" % (4 if pol == "fifo" else 6))
                write_synth_status(d, 1, 4, 2, 8)
                row = {"run": rid, "job": "burst", "device": "dm", "model": "drive-managed",
                       "policy": pol, "varied": "policy=" + pol, "status": "ok", "fio_end_s": 2.0}
                row.update(summary.analyse_run(d, row))
                self.assertEqual((row["lat_seconds"], row["lat_bad_lines"]), (2, 1))
                self.assertEqual(read(os.path.join(d, "lat.csv")).splitlines()[1],
                                 "0,%.4f,%.4f,%.4f,200" % (fiolog.coarse_bin_val(20, 4) / 1e6,
                                                           fiolog.coarse_bin_val(40, 4) / 1e6,
                                                           fiolog.coarse_bin_val(60, 4, 1.0) / 1e6))
                rows.append(row)
            figs = {f["file"]: f for f in runner.draw_plots(out, rows)}
            for n in ("plots/01-burst-dm-policy=fifo-latency.png", "plots/burst-dm-policies.png"):
                self.assertIn(n, figs)
                self.assertTrue(is_png(os.path.join(out, n)), n)
            self.assertIn("write amplification",
                          figs["plots/01-burst-dm-policy=fifo-latency.png"]["what"])
        finally:
            shutil.rmtree(out)


    @unittest.skipUnless(HAVE_MPL, "needs python3-matplotlib")
    def test_writes_within_one_window(self):
        """fio logs a histogram line only once a whole window has passed
        and never flushes the last one: a job whose writes all end
        within the first window has an empty (or no) histogram log. No
        latency figure then, and the summary says why instead of
        leaving the figure silently out."""
        out = tempfile.mkdtemp(prefix="campaign-short.")
        try:
            rows = []
            for n, empty_log in ((1, True), (2, False)):
                rid = "0%d-damage-cv" % n
                d = os.path.join(out, "runs", rid)
                os.makedirs(d)
                shutil.copy(os.path.join(DATA, "jsonplus", "fio.json"), d)
                if empty_log:
                    open(os.path.join(d, "lat_clat_hist.1.log"), "w").close()
                row = {"run": rid, "job": "damage", "device": "cv", "model": "caveat",
                       "status": "ok"}
                row.update(summary.analyse_run(d, row))
                self.assertGreater(row["write_mib"], 0)
                self.assertIn("within one %d ms histogram window" % fiolog.LOG_HIST_MSEC,
                              row["lat_note"])
                rows.append(row)
            figs = [f["file"] for f in runner.draw_plots(out, rows)]
            self.assertFalse([f for f in figs if f.endswith("-latency.png")], figs)
            summary.write_summary(out, "t", rows, [], 1.0)
            txt = read(os.path.join(out, "summary.txt"))
            self.assertEqual(txt.count("note: no write latency over time"), 2, txt)
        finally:
            shutil.rmtree(out)


@unittest.skipUnless(HAVE_MPL, "needs python3-matplotlib")
class PlotStyleTest(unittest.TestCase):
    """The figures themselves (kept open to look at, not only their
    PNGs): per-second values drawn as steps over the second they count,
    the drive profile in the title, legends readable and off the data,
    the end of fio in the legend."""

    PROFILE = "st8000as0002"

    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="campaign-style.")
        self.addCleanup(shutil.rmtree, self.out)
        from smrcampaign import plots
        self.plots = plots
        os.makedirs(os.path.join(self.out, "plots"))

    def run_dir(self, rid, write_mibs, lat=True, status=True):
        d = os.path.join(self.out, "runs", rid)
        os.makedirs(d)
        with open(os.path.join(d, "bw.csv"), "w") as f:
            f.write("t,read_mibs,write_mibs\n")
            for t, v in enumerate(write_mibs):
                f.write("%d,0,%s\n" % (t, v))
        if lat:
            with open(os.path.join(d, "lat.csv"), "w") as f:
                f.write("t,p50_ms,p99_ms,max_ms,ios\n")
                for t in range(len(write_mibs)):
                    f.write("%d,%s,%s,%s,100\n" % (t, 1 + t, 10 + t, 50 + t))
        if status:
            write_synth_status(d, 2, 5, 3, 8)
        return d

    def row(self, rid="01-burst-dm", **kw):
        r = {"run": rid, "job": "burst", "device": "dm", "model": "drive-managed",
             "profile": self.PROFILE, "policy": "fifo", "varied": "", "status": "ok",
             "fio_end_s": 5.0}
        r.update(kw)
        return r

    @contextlib.contextmanager
    def kept(self):
        """The figures the plots close meanwhile, kept whole to look at
        (closed at the end of the test); pyplot's own close("all")
        passes."""
        figs = []
        close = self.plots.plt.close

        def keep(fig=None):
            if hasattr(fig, "savefig"):
                figs.append(fig)
                self.addCleanup(close, fig)
            else:
                close(fig)
        self.plots.plt.close = keep
        try:
            yield figs
        finally:
            self.plots.plt.close = close

    def figures(self, fn, *args):
        """Call a plots function that draws one figure: the figure."""
        with self.kept() as figs:
            self.assertTrue(fn(*args))
        self.assertEqual(len(figs), 1)
        return figs[0]

    def lines(self, fig):
        return {ln.get_label(): ln for ax in fig.axes for ln in ax.get_lines()}

    def legends(self, fig):
        return list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]

    def legend_labels(self, fig):
        return [t.get_text() for leg in self.legends(fig) for t in leg.get_texts()]

    def assert_steps(self, line, seconds, values):
        """Drawn from the start of each second, held to its end."""
        self.assertEqual(line.get_drawstyle(), "steps-post", line.get_label())
        self.assertEqual(list(line.get_xdata()), list(range(seconds + 1)), line.get_label())
        self.assertEqual(list(line.get_ydata()), values + values[-1:], line.get_label())

    def assert_readable_legends(self, fig):
        """Every legend: 9 pt or more, inside the figure, over no plot
        area (where the data is)."""
        fig.canvas.draw()
        r = fig.canvas.get_renderer()
        fb = fig.bbox
        self.assertTrue(self.legends(fig))
        for leg in self.legends(fig):
            for t in leg.get_texts():
                self.assertGreaterEqual(t.get_fontsize(), 9, t.get_text())
            lb = leg.get_window_extent(r)
            self.assertTrue(fb.x0 <= lb.x0 and lb.x1 <= fb.x1 and fb.y0 <= lb.y0 and lb.y1 <= fb.y1,
                            "legend %s outside the figure %s" % (lb, fb))
            for ax in fig.axes:
                self.assertFalse(lb.overlaps(ax.get_window_extent(r)),
                                 "legend %s over the plot area %s" % (
                                     [t.get_text() for t in leg.get_texts()], ax.get_title()))

    def test_throughput(self):
        bw = [8.0, 8.0, 2.0, 0.5, 0.5]
        self.run_dir("01-burst-dm", bw, lat=False)
        fig = self.figures(self.plots.throughput, self.out, self.row())
        self.assert_steps(self.lines(fig)["written (MiB/s)"], 5, bw)
        self.assertIn("(drive-managed, profile %s)" % self.PROFILE, fig.axes[0].get_title())
        labels = self.legend_labels(fig)
        for want in ("written (MiB/s)", "fio ended", "foreground cleaning", "cache used (%)"):
            self.assertIn(want, labels)
        self.assert_readable_legends(fig)

    def test_latency(self):
        bw = [8.0, 8.0, 2.0, 0.5, 0.5]
        self.run_dir("01-burst-dm", bw)
        fig = self.figures(self.plots.latency, self.out, self.row())
        ln = self.lines(fig)
        self.assert_steps(ln["written (MiB/s)"], 5, bw)
        for name, base in (("p50", 1), ("p99", 10), ("max", 50)):
            self.assert_steps(ln[name], 5, [float(base + t) for t in range(5)])
        self.assertIn("profile %s" % self.PROFILE, fig.axes[0].get_title())
        self.assertEqual(self.legend_labels(fig).count("fio ended"), 1)
        self.assert_readable_legends(fig)

    def test_policies(self):
        rows = []
        for i, (pol, bw) in enumerate((("fifo", [8.0, 4.0, 1.0]), ("greedy", [8.0, 6.0, 2.0]))):
            rid = "0%d-burst-dm-policy=%s" % (i + 1, pol)
            self.run_dir(rid, bw, lat=False, status=False)
            rows.append(self.row(rid, policy=pol, varied="policy=" + pol))
        with self.kept() as figs:
            self.assertEqual(len(self.plots.policies(self.out, rows)), 1)
        self.assertEqual(len(figs), 1)
        fig = figs[0]
        ln = self.lines(fig)
        self.assert_steps(ln["fifo"], 3, [8.0, 4.0, 1.0])
        self.assert_steps(ln["greedy"], 3, [8.0, 6.0, 2.0])
        self.assertIn("profile %s" % self.PROFILE, fig.axes[0].get_title())
        self.assert_readable_legends(fig)

    def test_damage(self):
        d = os.path.join(self.out, "runs", "01-damage-cv")
        os.makedirs(d)
        with open(os.path.join(d, "status.csv"), "w") as f:
            f.write("t,damaged_blocks,live_damaged_blocks,valid_blocks\n")
            for i in range(6):
                f.write("%d,%d,%d,%d\n" % (i, 40 * i, 30 * i, 5000 - 30 * i))
        row = self.row("01-damage-cv", job="damage", device="cv", model="caveat",
                       profile="caveat-example")
        fig = self.figures(self.plots.damage, self.out, row)
        self.assertIn("(caveat, profile caveat-example)", fig.axes[0].get_title())
        self.assertIn("fio ended", self.legend_labels(fig))
        self.assert_readable_legends(fig)

    def test_title_without_profile(self):
        self.assertEqual(self.plots._title(self.row(profile="", varied="policy=fifo")),
                         "burst on dm (drive-managed) policy=fifo")
        self.assertEqual(self.plots._title(self.row(varied="cache=64M")),
                         "burst on dm (drive-managed, profile %s) cache=64M" % self.PROFILE)

    def test_cleaning_chart_legend(self):
        rows = [self.row(status_samples=10, clean_fg_run_s=3.0, clean_bg_run_s=1.0,
                         cleaning_s=2.0, wa=5.0)]
        fig = self.figures(self.plots.by_policy, self.out, rows)
        self.assertEqual(self.legend_labels(fig), ["foreground, while fio ran",
                                                   "background, while fio ran",
                                                   "after the job (wait-clean)"])
        self.assert_readable_legends(fig)


class RemoteTest(unittest.TestCase):
    """Client/server runs: IPv6 client addresses; the logs of a fio
    server whose clock is off put on the runner's clock."""

    def test_clients(self):
        for c, want, arg in (("box1", ("box1", None), "--client=ip:box1"),
                             ("box2:8766", ("box2", "8766"), "--client=ip:box2,8766"),
                             ("10.0.0.1:9", ("10.0.0.1", "9"), "--client=ip:10.0.0.1,9"),
                             ("::1", ("::1", None), "--client=ip6:::1"),
                             ("fe80::1:2", ("fe80::1:2", None), "--client=ip6:fe80::1:2"),
                             ("[::1]:8765", ("::1", "8765"), "--client=ip6:::1,8765"),
                             ("[2001:db8::7]", ("2001:db8::7", None), "--client=ip6:2001:db8::7")):
            self.assertEqual(fiorun.parse_client(c), want, c)
            self.assertEqual(fiorun.client_arg(c), arg, c)
        for bad in ("[::1", "[::1]x", "box:port", ":80", "[::1]:"):
            self.assertRaises(ValueError, fiorun.parse_client, bad)
        p = subprocess.run([sys.executable, CAMPAIGN, "--client", "[::1", "x.ini"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("bad --client '[::1'", p.stderr)

    def test_remote_clock(self):
        d = tempfile.mkdtemp()
        try:
            for f in os.listdir(os.path.join(DATA, "client")):
                shutil.copy(os.path.join(DATA, "client", f), d)
            logs = fiolog.bw_log_files(d)
            t0 = min(fiolog.first_log_time(x) for x in logs) - 1000
            want = fiolog.read_bw_logs(logs, t0)
            # the server's clock is an hour ahead of the runner's
            for f in logs:
                lines = read(f).splitlines(True)
                with open(f, "w") as fh:
                    for line in lines:
                        t, rest = line.split(",", 1)
                        fh.write("%d,%s" % (int(t) + 3600000, rest))
            with open(os.path.join(d, "t0"), "w") as f:
                f.write("%d\n" % t0)
            row = {"run": "r", "model": "file", "status": "ok"}
            row.update(summary.analyse_run(d, row))
            self.assertEqual(row["clock_offsets_ms"], "127.0.0.1=-3600000")
            got = [tuple(float(x) for x in line.split(","))
                   for line in read(os.path.join(d, "bw.csv")).splitlines()[1:]]
            self.assertEqual(len(got), len(want))
            for g, w in zip(got, want):
                self.assertEqual(g[0], w[0])
                self.assertAlmostEqual(g[2], w[2], delta=0.01)
            # the job's start from fio's JSON when it has it
            j = {"client_stats": [
                {"jobname": "a", "hostname": "::1", "job_start": 5000, "job_runtime": 10},
                {"jobname": "b", "hostname": "::1", "timestamp_ms": 9000, "job_runtime": 3000},
                {"jobname": "All clients", "hostname": "::1", "job_start": 1}]}
            off = fiolog.host_offsets(j, ["/x/bw_bw.1.log.::1", "/x/bw_bw.1.log"], 60000)
            self.assertEqual(off, {"/x/bw_bw.1.log.::1": 60000 - 5000})
            # a clock within CLOCK_SKEW_MS of the runner's is left alone:
            # fio's start-up is not a clock difference
            self.assertEqual(fiolog.host_offsets(j, ["/x/bw_bw.1.log.::1"], 8000), {})
            self.assertEqual(fiolog.log_host("/x/lat_clat_hist.2.log.::1"), "::1")
        finally:
            shutil.rmtree(d)


class RunOrderTest(unittest.TestCase):
    def test_numeric(self):
        """--plot lists run 100 after run 11, not before it."""
        self.assertEqual(sorted(["11-a", "100-b", "02-c", "x"], key=summary.run_order),
                         ["02-c", "11-a", "100-b", "x"])


class InterruptTest(unittest.TestCase):
    """The summary is written as runs finish; --plot rebuilds it from
    runs/ alone; a damaged bandwidth log does not stop the analysis;
    the wait for cleaning says how far it is."""

    def setUp(self):
        self.out = tempfile.mkdtemp(prefix="campaign-interrupt.")

    def tearDown(self):
        shutil.rmtree(self.out)

    def rundir(self, rid):
        d = os.path.join(self.out, "runs", rid)
        shutil.copytree(os.path.join(DATA, "local"), d)
        t0 = min(fiolog.first_log_time(x) for x in fiolog.bw_log_files(d)) - 1000
        with open(os.path.join(d, "t0"), "w") as f:
            f.write("%d\n" % t0)
        return d

    def test_summary_after_each_run(self):
        mpath = os.path.join(self.out, "m.ini")
        with open(mpath, "w") as f:
            f.write("[campaign]\nname = t\n")
        m = type("M", (), {"path": mpath, "name": "t", "campaign": {}})()
        out = os.path.join(self.out, "res")
        test = self

        class Interrupted(runner.Campaign):
            def run_one(self, run, total):
                if run["index"] == 2:
                    raise KeyboardInterrupt
                d = os.path.join(self.out, "runs", run["id"])
                shutil.copytree(os.path.join(DATA, "local"), d)
                row = {"run": run["id"], "job": "j", "device": "f", "model": "file",
                       "status": "ok", "error": "", "varied": ""}
                row.update(summary.analyse_run(d, row))
                summary.save_row(d, row)
                self.rows.append(row)
                return row
        c = Interrupted(m, out, use_smrctl=False, use_smrd=False, plots=False)
        runs = [{"id": "0%d-j-f" % i, "index": i} for i in (1, 2, 3)]
        log = io.StringIO()
        with self.assertRaises(KeyboardInterrupt), contextlib.redirect_stdout(log):
            c.run(runs)
        self.assertIn("campaign t: 3 runs, results in %s\n" % out, log.getvalue())
        j = json.loads(read(os.path.join(out, "summary.json")))
        test.assertEqual([r["run"] for r in j["runs"]], ["01-j-f"])
        test.assertEqual(j["planned"], 3)
        txt = read(os.path.join(out, "summary.txt"))
        self.assertIn("campaign t: 1 of 3 runs so far", txt)
        # nothing failed: no "failed" line or count at all
        self.assertNotIn("failed", txt)
        self.assertIn("so far (running or interrupted), in", txt)
        # a failed run is named in the head line
        summary.write_summary(out, "t", [dict(j["runs"][0]), {"run": "02-j-f", "status": "failed",
                                                              "error": "x"}], [], 1.0)
        self.assertIn("campaign t: 2 runs in 1 s, 1 failed: 02-j-f\n",
                      read(os.path.join(out, "summary.txt")))
        summary.write_summary(out, "t", j["runs"], [], 1.0, planned=3, plotted=False)
        self.assertIn("--plot %s" % out, txt)
        # --plot from runs/ alone: no summary.json, a run without row.json
        os.remove(os.path.join(out, "summary.json"))
        os.remove(os.path.join(out, "summary.csv"))
        d = os.path.join(out, "runs", "02-j-f")
        os.makedirs(d)
        with open(os.path.join(d, "run.json"), "w") as f:
            json.dump({"run": "02-j-f", "job": "j", "device": "f",
                       "device_options": {"model": "file", "size": "32M"},
                       "jobfile": "/x/y.fio"}, f)
        with redirect_stdout():
            self.assertEqual(cli.main(["--plot", out]), 0)
        j = json.loads(read(os.path.join(out, "summary.json")))
        self.assertEqual([(r["run"], r["status"]) for r in j["runs"]],
                         [("01-j-f", "ok"), ("02-j-f", "incomplete")])
        self.assertEqual(j["runs"][1]["size"], "32M")
        self.assertAlmostEqual(j["runs"][0]["write_mib"], summary.analyse_run(
            os.path.join(out, "runs", "01-j-f"), {})["write_mib"])
        if HAVE_MPL:
            self.assertTrue(is_png(os.path.join(out, "plots", "01-j-f-throughput.png")))
        with open(os.path.join(out, "summary.csv")) as f:
            self.assertEqual(len(list(csv.DictReader(f))), 2)

    def test_malformed_bw_lines(self):
        d = self.rundir("01-x")
        with open(os.path.join(d, "bw_bw.1.log"), "ab") as f:
            f.write(b"1795345748716, 40")              # cut short
            f.write(b"\n1795345748716, 4x96, 1, 0, 0\n")
            f.write(b"\0" * 700)                       # the crash's NUL-filled tail
            f.write(b"\xff\xfe garbage\n")
        bad = []
        logs = fiolog.bw_log_files(d)
        bw = fiolog.read_bw_logs(logs, 0, 1000, bad)
        self.assertTrue(bw)
        self.assertEqual([(os.path.basename(f), n) for f, n, t in bad],
                         [("bw_bw.1.log", 3), ("bw_bw.1.log", 4), ("bw_bw.1.log", 5)])
        row = {"run": "01-x", "status": "ok"}
        row.update(summary.analyse_run(d, row))
        self.assertEqual(row["bw_bad_lines"], 3)
        self.assertIn("3 malformed bandwidth-log lines skipped (first: bw_bw.1.log line 3",
                      row["warning"])
        self.assertEqual(row["status"], "ok")
        summary.write_summary(self.out, "t", [row], [], 1)
        self.assertIn("    warning: 3 malformed", read(os.path.join(self.out, "summary.txt")))

    def test_wait_clean_progress(self):
        states = [{"cache_used": 3000 - 1000 * i, "cache_total": 4000,
                   "state": "clean-bg" if i < 3 else "idle", "clean_ms_since_busy": 2500}
                  for i in range(4)]
        said = []

        class D(devices.DeviceSetup):
            smrctl, sample_s, progress_s = None, 0.01, 0.001

            def say(self, msg):
                said.append(msg)
        saved = devices.status_once
        devices.status_once = lambda name: states.pop(0) if len(states) > 1 else states[0]
        try:
            w, c, how = D().wait_clean("cmp_dm", 30, False)
        finally:
            devices.status_once = saved
        self.assertEqual((c, how), (2.5, "dmsetup status polling"))
        # a line per poll (progress_s is tiny here), the first may come
        # too soon after the start
        self.assertGreaterEqual(len(said), 2)
        self.assertEqual(said[-2:], ["  wait-clean   0 s: cache 50% (2000/4000 sectors), state clean-bg",
                                     "  wait-clean   0 s: cache 25% (1000/4000 sectors), state clean-bg"])


class redirect_stdout:
    def __enter__(self):
        self.saved = sys.stdout
        sys.stdout = open(os.devnull, "w")

    def __exit__(self, *a):
        sys.stdout.close()
        sys.stdout = self.saved


class PackageTest(unittest.TestCase):
    """fio-jobs/smrcampaign/: no import cycles, the plots never import
    the runner, every module says what it owns; the command line."""

    PKG = os.path.join(ROOT, "fio-jobs", "smrcampaign")

    def imports(self):
        graph = {}
        for f in sorted(os.listdir(self.PKG)):
            if not f.endswith(".py"):
                continue
            with open(os.path.join(self.PKG, f)) as fh:
                tree = ast.parse(fh.read())
            self.assertTrue(ast.get_docstring(tree), f)
            deps = set()
            for n in ast.walk(tree):
                if isinstance(n, ast.ImportFrom) and n.level:
                    deps.update([n.module] if n.module else [a.name for a in n.names])
            graph[f[:-3]] = deps
        return graph

    def test_imports(self):
        graph = self.imports()
        self.assertLessEqual(graph["plots"], {"model", "summary", "fiolog"})
        done = set()

        def visit(m, path):
            self.assertNotIn(m, path, "import cycle: %s" % " -> ".join(path + [m]))
            if m not in done:
                for d in graph[m]:
                    visit(d, path + [m])
                done.add(m)
        for m in graph:
            visit(m, [])

    def test_help(self):
        p = subprocess.run([sys.executable, CAMPAIGN, "--help"], capture_output=True, text=True,
                           timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        for o in ("-o", "--out", "--set", "--only", "--client", "--smrctl", "--no-smrctl", "--smrd",
                  "--no-smrd", "--sample", "--progress", "--no-plots", "--list", "--plot"):
            self.assertIn(o + " ", p.stdout)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


@unittest.skipUnless(HAVE_MPL and shutil.which("fio"), "needs fio and python3-matplotlib")
class EndToEndTest(unittest.TestCase):
    """The runner itself, on a plain file (no dm device): fio runs, logs,
    summary, plots; and through fio's client/server mode on loopback."""

    MATRIX = """
[campaign]
name = e2e
[device f]
model = file
path = %(dir)s/data.img
size = 32M
[job burst]
file = dm-randwrite-burst.fio
RUNTIME = 3
[job seq]
file = dm-seq-bypass.fio
SIZE = 8M
[job idle]
file = dm-burst-idle.fio
BURST = 1M
IDLE = 1
"""

    def setUp(self):
        self.d = tempfile.mkdtemp(prefix="campaign-e2e.")
        self.m = os.path.join(self.d, "m.ini")
        with open(self.m, "w") as f:
            f.write(self.MATRIX % {"dir": self.d})

    def tearDown(self):
        shutil.rmtree(self.d)

    def campaign(self, *args):
        return subprocess.run([sys.executable, CAMPAIGN] + list(args), capture_output=True,
                              text=True, timeout=300)

    def check_results(self, out, hosts):
        j = json.loads(read(os.path.join(out, "summary.json")))
        self.assertEqual([r["run"] for r in j["runs"]], ["01-burst-f", "02-seq-f", "03-idle-f"])
        self.assertEqual([r["status"] for r in j["runs"]], ["ok", "ok", "ok"])
        # the idle phase of dm-burst-idle.fio really ran (fio once
        # skipped it), between two bursts that wrote 1 MiB each
        with open(os.path.join(out, "runs", "03-idle-f", "phases.json")) as f:
            ph = {p["job"]: p for p in json.load(f)}
        self.assertGreaterEqual(ph["idle"]["runtime_s"], 1.0)
        self.assertEqual(ph["idle"]["error"], 0)
        self.assertAlmostEqual(j["runs"][2]["write_mib"], 2.0)
        b = j["runs"][0]
        self.assertGreater(b["write_mib"], 1)
        self.assertGreaterEqual(b["bw_seconds"], 2)
        self.assertEqual(b["fio_hosts"], hosts)
        self.assertAlmostEqual(j["runs"][1]["write_mib"], 8.0)
        self.assertIn("plots/01-burst-f-throughput.png", [f["file"] for f in j["figures"]])
        for f in j["figures"]:
            self.assertTrue(is_png(os.path.join(out, f["file"])))
        self.assertTrue(os.path.exists(os.path.join(out, "runs", "01-burst-f", "job.fio")))
        self.assertTrue(os.path.exists(os.path.join(out, "matrix.ini")))
        return j

    def test_list_and_errors(self):
        p = self.campaign("--list", self.m)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("01-burst-f", p.stdout)
        self.assertIn("02-seq-f", p.stdout)
        self.assertEqual(self.campaign("--bogus", self.m).returncode, 2)
        self.assertEqual(self.campaign().returncode, 2)
        with open(self.m, "a") as f:
            f.write("[job x]\nfile = nosuch.fio\n")
        p = self.campaign("--list", self.m)
        self.assertEqual(p.returncode, 1)
        self.assertIn("nosuch.fio", p.stderr)

    def test_local(self):
        out = os.path.join(self.d, "out")
        p = self.campaign("-o", out, "--progress", "1", self.m)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("run 1/3 01-burst-f", p.stdout)
        self.assertIn("figures:", p.stdout)
        self.check_results(out, 0)
        # --plot redraws from the files
        os.remove(os.path.join(out, "plots", "01-burst-f-throughput.png"))
        p = self.campaign("--plot", out)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.check_results(out, 0)

    def test_client_server_loopback(self):
        port = free_port()
        pidf = os.path.join(self.d, "server.pid")
        sdir = os.path.join(self.d, "server")
        os.makedirs(sdir)
        subprocess.run(["fio", "--server=ip:127.0.0.1,%d" % port, "--daemonize=" + pidf],
                       cwd=sdir, check=True, capture_output=True, timeout=30)
        try:
            for _ in range(50):
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    time.sleep(0.1)
            out = os.path.join(self.d, "out")
            p = self.campaign("-o", out, "--client", "127.0.0.1:%d" % port, self.m)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            j = self.check_results(out, 1)
            rd = os.path.join(out, "runs", "01-burst-f")
            self.assertTrue(any(f.endswith(".127.0.0.1") for f in os.listdir(rd)),
                            "bandwidth logs come back from the server")
            self.assertIn("--client=ip:127.0.0.1,%d" % port,
                          read(os.path.join(rd, "fio.cmd")))
            self.assertEqual(j["runs"][0]["fio_hosts"], 1)
            # the runner refuses to create dm devices on remote boxes
            with open(self.m, "a") as f:
                f.write("[device dm]\nmodel = drive-managed\nbacking = /dev/x\nsize = 1G\n"
                        "band = 4M\n")
            p = self.campaign("-o", os.path.join(self.d, "out2"), "--client",
                              "127.0.0.1:%d" % port, "--only", "2", "--no-plots", self.m)
            self.assertEqual(p.returncode, 1)
            self.assertIn("use model = file or existing", p.stdout)
        finally:
            try:
                with open(pidf) as f:
                    os.kill(int(f.read().strip()), 15)
            except (OSError, ValueError):
                pass


class NoMatplotlibTest(unittest.TestCase):
    """Without matplotlib a campaign still ends with its summary."""

    def test_draw_plots_without_matplotlib(self):
        from smrcampaign import runner
        saved = {k: v for k, v in sys.modules.items()
                 if k == "matplotlib" or k.startswith("matplotlib.")
                 or k == "smrcampaign.plots"}
        for k in saved:
            del sys.modules[k]
        sys.modules["matplotlib"] = None     # import matplotlib fails
        try:
            with tempfile.TemporaryDirectory() as out:
                self.assertEqual(runner.draw_plots(out, []), [])
                # --plot, whose whole job is the plots, fails saying why;
                # the summary is still rewritten from the runs
                d = os.path.join(out, "runs", "01-j-f")
                shutil.copytree(os.path.join(DATA, "local"), d)
                row = {"run": "01-j-f", "job": "j", "device": "f", "model": "file",
                       "status": "ok", "error": "", "varied": ""}
                row.update(summary.analyse_run(d, row))
                summary.save_row(d, row)
                err = io.StringIO()
                with redirect_stdout(), contextlib.redirect_stderr(err):
                    self.assertEqual(cli.main(["--plot", out]), 1)
                self.assertIn("python3-matplotlib", err.getvalue())
                txt = read(os.path.join(out, "summary.txt"))
                self.assertIn("figures: not drawn yet (no matplotlib)", txt)
        finally:
            del sys.modules["matplotlib"]
            sys.modules.update(saved)


if __name__ == "__main__":
    unittest.main()
