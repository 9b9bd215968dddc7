# SPDX-License-Identifier: GPL-2.0
"""tests/profile-report against records written as the kernel writes
them (struct acct_v3, include/uapi/linux/acct.h): CPU times in comp_t,
parents told apart, the guest's CPU split from /proc/stat, the test's
time from its log, and a results directory without a profile refused."""
import os
import struct
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tests", "profile-report")
ACCT_V3 = struct.Struct("<BBHIIIIIIf8H16s")


def comp_t(ticks):
    """Encode as the kernel's encode_comp_t(): 13-bit mantissa, base-8 exponent."""
    exp = 0
    while ticks > 0x1fff:
        ticks >>= 3
        exp += 1
    return (exp << 13) | ticks


def record(comm, pid, ppid, utime, stime, version=3):
    return ACCT_V3.pack(0, version, 0, 0, 0, 0, pid, ppid, 0, 1.0,
                        comp_t(utime), comp_t(stime), 0, 0, 0, 0, 0, 0,
                        comm.encode())


class ProfileReport(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.res = self.tmp.name
        os.makedirs(os.path.join(self.res, "profile"))
        os.makedirs(os.path.join(self.res, "logs"))

    def tearDown(self):
        self.tmp.cleanup()

    def write_test(self, name, recs, stat=None, secs=None):
        with open(os.path.join(self.res, "profile", name + ".acct"), "wb") as f:
            f.write(b"".join(recs))
        if stat:
            with open(os.path.join(self.res, "profile", name + ".stat"), "w") as f:
                f.write(stat)
        if secs is not None:
            with open(os.path.join(self.res, "logs", name + ".log"), "w") as f:
                f.write("ok 1 x\n# time: %.1f s; slowest steps: 1 x (1.0 s)\n" % secs)

    def run_tool(self, *args):
        return subprocess.run([TOOL, *args], capture_output=True, text=True)

    def test_table(self):
        # udev's worker (pid 10) runs one dmsetup, the test's bash two;
        # 65536 ticks needs comp_t's exponent (655.36 s).
        self.write_test("test_a", [
            record("dmsetup", 11, 10, 20, 10),
            record("(udev-worker)", 10, 1, 5, 5),
            record("dmsetup", 21, 20, 40, 0),
            record("dmsetup", 22, 20, 40, 0),
            record("bash", 20, 2, 10, 0),
        ], stat="cpu  100 0 300 500 100 0 0 0 0 0\n"
                "cpu  200 0 600 600 100 0 0 0 0 0\n", secs=12.5)
        self.write_test("test_b", [record("sha256sum", 31, 30, 65536, 0)], secs=30.0)
        r = self.run_tool(self.res)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.splitlines()
        # Slowest first.
        self.assertTrue(lines[1].startswith("test_b "), lines)
        self.assertIn("sha256sum 655.4 s/1", lines[1])
        a = lines[2].split()
        self.assertEqual(a[:4], ["test_a", "12.5", "5", "1.3"])
        # The split: user 100, system 300, idle 100 of 500 ticks.
        self.assertEqual(a[4:8], ["20", "60", "20", "0"])
        self.assertIn("dmsetup 1.1 s/3 (udev 1)", lines[2])
        self.assertTrue(lines[3].startswith("all "), lines)
        self.assertIn("sha256sum 655.4 s/1, dmsetup 1.1 s/3 (udev 1)", lines[4])

    def test_refusals(self):
        empty = os.path.join(self.res, "none")
        os.makedirs(empty)
        r = self.run_tool(empty)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("SMR_PROFILE=1", r.stderr)
        self.write_test("test_v2", [record("x", 1, 0, 1, 1, version=2)])
        r = self.run_tool(self.res)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("not acct version 3", r.stderr)


if __name__ == "__main__":
    unittest.main()
