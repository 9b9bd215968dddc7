# SPDX-License-Identifier: GPL-2.0
"""tests/common.sh's TAP output, run on the host (no VM: the helpers used
here touch no device): the plan, the totals, the exit code, and the line
naming a test's time and slowest steps, which must count checks made in
subshells and must not turn a '#' in a check's name into a directive."""
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = r"""
. "%(root)s/tests/common.sh"
_prep_test "timing of steps"
ok "fast"
sleep 0.4; ok "slow # hash"
( sleep 0.2; ok "in a subshell" )
sleep 0.1; not_ok "last" "a detail"
_show_result
"""


class ShowResultTest(unittest.TestCase):
    def run_test(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "test_zz_timing.sh")
            with open(path, "w") as f:
                f.write(SCRIPT % {"root": ROOT})
            env = dict(os.environ, SMR_WORK=os.path.join(d, "work"),
                       SMR_DMESG_MARK="host", SMR_MNT=os.path.join(d, "mnt"),
                       SMR_ALLOC_DIR=os.path.join(d, "alloc"))
            return subprocess.run(["bash", path], capture_output=True, text=True,
                                  env=env, cwd=d, timeout=60)

    def test_plan_totals_and_slowest_steps(self):
        p = self.run_test()
        lines = p.stdout.splitlines()
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)  # KSFT_FAIL
        self.assertIn("ok 2 slow \\# hash", lines)
        self.assertIn("not ok 4 last", lines)
        self.assertIn("1..4", lines)
        self.assertIn("# Totals: pass:3 fail:1 skip:0", lines)
        slow = [l for l in lines if l.startswith("# time: ")]
        self.assertEqual(len(slow), 1, p.stdout)
        # the slowest first, each named by its check's number and text
        steps = slow[0].split("slowest steps: ")[1].split("; ")
        # (the third, 0.1 s, may lose to a slow start on a loaded host)
        self.assertEqual(len(steps), 3, slow[0])
        self.assertEqual([s.split(" ")[0] for s in steps[:2]], ["2", "3"], slow[0])
        self.assertTrue(steps[0].startswith("2 slow \\# hash ("), steps[0])
        secs = [float(s.rsplit("(", 1)[1].split(" ")[0]) for s in steps]
        self.assertGreaterEqual(secs[0], 0.4)
        self.assertGreaterEqual(secs[1], 0.2)
        self.assertGreaterEqual(secs[2], 0.1)
        total = float(slow[0].split(" ")[2])
        self.assertGreaterEqual(total, 0.7)
        self.assertLess(total, 30)


if __name__ == "__main__":
    unittest.main()
