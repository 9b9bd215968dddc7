# SPDX-License-Identifier: GPL-2.0
"""scripts/failure-digest.sh names every failed test of a check run with
its kernel, lane, failed steps and the end of its log: CI's log is read
from its tail, and a run that failed without saying what (CI, stop 58:
"127 passed, 1 failed" and no name) cannot be mended."""
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "failure-digest.sh")

PASSING = """TAP version 13
1..1
# selftests: smr: test_a.sh
# TAP version 13
# ok 1 create
# 1..1
ok 1 selftests: smr: test_a.sh
"""

FAILING = """TAP version 13
1..2
# selftests: smr: test_a.sh
# TAP version 13
# ok 1 create
# 1..1
ok 1 selftests: smr: test_a.sh
# selftests: smr: test_b.sh
# TAP version 13
# ok 1 create
# not ok 2 data intact after the reload
# ok 3 remove
# not ok 4 no kernel warnings
# 1..4
not ok 2 selftests: smr: test_b.sh # exit=1
"""


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class FailureDigestTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory(prefix="digest-test.")
        self.addCleanup(self.tmp.cleanup)
        self.res = self.tmp.name
        self.plan = os.path.join(self.res, "lanes.plan")

    def digest(self, lanes="2"):
        out = subprocess.run([SCRIPT, self.res, self.plan, lanes],
                             capture_output=True, text=True, check=True)
        return out.stdout

    def test_all_passed_prints_nothing(self):
        write(self.plan, "1 9.1 test_a.sh 10\n2 9.2 test_a.sh 10\n")
        write(os.path.join(self.res, "9.1/lane1/suite.tap"), PASSING)
        write(os.path.join(self.res, "9.2/lane2/suite.tap"), PASSING)
        self.assertEqual(self.digest(), "")

    def test_failed_test_named_with_steps_and_log(self):
        write(self.plan, "1 9.1 test_a.sh 10\n2 9.1 test_b.sh 10\n")
        write(os.path.join(self.res, "9.1/lane1/suite.tap"), PASSING)
        write(os.path.join(self.res, "9.1/lane2/suite.tap"), FAILING)
        log = "".join("ok %d step\n" % i for i in range(1, 30))
        log += "# cmp: differ at byte 4097\nnot ok 2 data intact after the reload\n"
        write(os.path.join(self.res, "9.1/lane2/logs/test_b.log"), log)
        write(os.path.join(self.res, "9.1/lane2/logs/test_b_other.log"), "# unrelated\n")
        out = self.digest()
        lines = out.splitlines()
        self.assertEqual(lines[0], "== 9.1 lane 2: test_b.sh failed")
        self.assertIn("   not ok 2 data intact after the reload", lines)
        self.assertIn("   not ok 4 no kernel warnings", lines)
        self.assertIn("   | # cmp: differ at byte 4097", lines)
        # Passing steps are left out, and only the failed test's log is read.
        self.assertNotIn("ok 5 step", out)
        self.assertNotIn("unrelated", out)
        self.assertNotIn("test_a", out)

    def test_missing_tap_is_named(self):
        write(self.plan, "1 9.1 test_a.sh 10\n2 9.2 test_a.sh 10\n")
        write(os.path.join(self.res, "9.1/lane1/suite.tap"), PASSING)
        out = self.digest()
        self.assertEqual(out, "== 9.2 lane 2: no suite.tap (its build, the VM or vm-run failed)\n")

    def test_name_before_a_reason_and_a_boot(self):
        # vm-run's result lines end in a reason, and a test of several
        # boots says which: the name is the word after "selftests: smr: ".
        tap = FAILING.replace("not ok 2 selftests: smr: test_b.sh # exit=1",
                              "not ok 2 selftests: smr: test_b.sh (boot 2 of 3) # timeout")
        write(self.plan, "1 9.1 test_b.sh 10\n")
        write(os.path.join(self.res, "9.1/lane1/suite.tap"), tap)
        write(os.path.join(self.res, "9.1/lane1/logs/test_b.boot2.log"), "# the end of boot 2\n")
        out = self.digest()
        self.assertIn("== 9.1 lane 1: test_b.sh failed", out)
        self.assertIn("   | # the end of boot 2", out)

    def test_one_lane_layout(self):
        write(self.plan, "1 9.1 test_b.sh 10\n")
        write(os.path.join(self.res, "9.1/suite.tap"), FAILING)
        out = self.digest(lanes="1")
        self.assertIn("== 9.1 lane 1: test_b.sh failed", out)


if __name__ == "__main__":
    unittest.main()
