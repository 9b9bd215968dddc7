# SPDX-License-Identifier: GPL-2.0
"""tests/common.sh's kernel log filter for known bugs of the kernel under
test (SMR_KNOWN_KERNEL_BUGS, dmesg_drop_known, dmesg_find_errors).

The fixture is a real log: 6.1's btrfs warning in btrfs_remove_block_group
while dm-smr's btrfs test mounted its file system a third time (the same
warning comes on zoned null_blk). On 6.1 the report must be left out and
named; on a kernel with the fix it must still fail; any other warning
next to it must still fail.

The second fixture (SMR_KNOWN_KERNEL_DUMPS) is 7.3's f2fs at umount after
test_fs_03's power cut: two stacks dumped from f2fs_stop_checkpoint, each
followed by "Stopped filesystem due to reason: 3" (a write failed). They
must be left out on any kernel; a dump for another reason, from another
function, without its message or with a report inside must still fail."""
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "tests", "unit", "data", "dmesg-btrfs-6.1-zone-finish.log")
F2FS_FIXTURE = os.path.join(ROOT, "tests", "unit", "data",
                            "dmesg-f2fs-7.3-stop-checkpoint.log")

OTHER_WARNING = """\
[  170.000001] ------------[ cut here ]------------
[  170.000002] WARNING: CPU: 0 PID: 77 at drivers/md/dm-smr/smr-zoned.c:123 smr_zone_write+0x10/0x20 [dm_smr]
[  170.000003] Call Trace:
[  170.000004]  <TASK>
[  170.000005] ---[ end trace 0000000000000000 ]---
"""


def shell(script, stdin, *args):
    cmd = ["bash", "-c", '. "$0"; ' + script, os.path.join(ROOT, "tests", "common.sh")]
    return subprocess.run(cmd + list(args), input=stdin, capture_output=True,
                          text=True, check=True).stdout


class KnownKernelBugs(unittest.TestCase):
    def setUp(self):
        with open(FIXTURE) as f:
            self.log = f.read()
        self.assertIn("WARNING: CPU", self.log)
        self.assertIn("is removed before metadata write out", self.log)

    def drop(self, kver, log):
        with tempfile.NamedTemporaryFile("r") as seen:
            out = shell('dmesg_drop_known "$1" "$2"', log, seen.name, kver)
            return out, seen.read()

    def test_affected_kernel_leaves_the_report_out_and_names_it(self):
        out, seen = self.drop("6.1.0-56-amd64", self.log)
        self.assertNotIn("WARNING", out)
        self.assertNotIn("Call Trace", out)
        self.assertNotIn("removed before metadata write out", out)
        self.assertIn("first mount of filesystem", out, "ordinary lines are kept")
        self.assertIn("meta_write_pointer", seen)

    def test_debug_build_of_an_affected_kernel_too(self):
        out, seen = self.drop("6.1.192-smrdebug", self.log)
        self.assertNotIn("WARNING", out)
        self.assertIn("meta_write_pointer", seen)

    def test_fixed_kernel_keeps_the_report(self):
        for kver in ("6.12.117+deb12-amd64", "7.3.4+deb13-amd64"):
            out, seen = self.drop(kver, self.log)
            self.assertEqual(out, self.log, kver)
            self.assertEqual(seen, "", kver)

    def test_other_warnings_still_fail_beside_a_known_one(self):
        out, _ = self.drop("6.1.0-56-amd64", self.log + OTHER_WARNING)
        self.assertEqual(out.count("WARNING"), 1)
        self.assertIn("smr_zone_write", out)

    def test_an_unfinished_report_is_kept(self):
        cut = self.log[:self.log.index("---[ end trace")]
        out, _ = self.drop("6.1.0-56-amd64", cut)
        self.assertIn("WARNING", out)

    def report_lines(self):
        lines = self.log.splitlines(True)
        first = next(i for i, l in enumerate(lines) if "cut here" in l)
        end = next(i for i, l in enumerate(lines) if "end trace" in l)
        return lines, first, end

    def test_the_same_warning_without_its_message_is_kept(self):
        # Another WARN_ON in btrfs_remove_block_group (say, zone accounting
        # a target bug upset) comes without the bug's message.
        log = "".join(l for l in self.log.splitlines(True)
                      if "removed before metadata write out" not in l)
        out, seen = self.drop("6.1.0-56-amd64", log)
        self.assertIn("WARNING: CPU: 0 PID: 3069", out)
        self.assertEqual(seen, "")

    def test_a_report_inside_a_known_one_is_kept(self):
        lines, first, end = self.report_lines()
        lines.insert(end, "[  168.661000] BUG: kernel NULL pointer dereference, address: 0\n")
        out, _ = self.drop("6.1.0-56-amd64", "".join(lines))
        self.assertIn("BUG: kernel NULL pointer", out)
        self.assertIn("WARNING: CPU: 0 PID: 3069", out)

    def test_an_unended_known_report_does_not_swallow_the_next(self):
        lines, first, end = self.report_lines()
        del lines[end]
        out, _ = self.drop("6.1.0-56-amd64", "".join(lines) + OTHER_WARNING)
        self.assertIn("smr_zone_write", out)
        self.assertIn("WARNING: CPU: 0 PID: 3069", out)

    def test_the_message_alone_is_kept(self):
        line = [l for l in self.log.splitlines(True) if "removed before metadata" in l][0]
        out, seen = self.drop("6.1.0-56-amd64", line)
        self.assertEqual(out, line)
        self.assertEqual(seen, "")

    def test_find_errors_uses_the_filter(self):
        hits = shell('uname() { echo 6.1.0-56-amd64; }; dmesg_find_errors || true', self.log)
        self.assertEqual(hits, "")
        with tempfile.NamedTemporaryFile("r") as seen:
            hits = shell('uname() { echo 6.1.0-56-amd64; }; dmesg_find_errors "$1" || true',
                         self.log, seen.name)
            self.assertEqual(hits, "")
            self.assertIn("meta_write_pointer", seen.read(), "the harness's SEEN file")
        hits = shell('uname() { echo 6.12.117+deb12-amd64; }; dmesg_find_errors', self.log)
        self.assertIn("WARNING: CPU: 0 PID: 3069", hits)
        self.assertIn("Call Trace", hits)


class KnownKernelDumps(unittest.TestCase):
    KVER = "7.3.4+deb13-amd64"

    def setUp(self):
        with open(F2FS_FIXTURE) as f:
            self.log = f.read()
        self.assertEqual(self.log.count("Call Trace"), 2)
        self.assertEqual(self.log.count("Stopped filesystem due to reason: 3"), 2)

    def errors(self, log):
        with tempfile.NamedTemporaryFile("r") as seen:
            hits = shell('uname() { echo "$2"; }; dmesg_find_errors "$1" || true',
                         log, seen.name, self.KVER)
            return hits, seen.read()

    def test_write_failure_dumps_are_left_out_and_named(self):
        hits, seen = self.errors(self.log)
        self.assertEqual(hits, "")
        self.assertIn("f2fs stopped its checkpoints", seen)
        out = shell('dmesg_drop_known "" "$1"', self.log, self.KVER)
        self.assertNotIn("dump_stack_lvl", out)
        self.assertNotIn("</TASK>", out)
        # The lines around the dumps stay, the reason's included.
        self.assertEqual(out.count("Stopped filesystem due to reason: 3"), 2)
        self.assertEqual(out.count("fails to record stop_reason"), 2)
        self.assertIn("power cut: writes since the last flush", out)
        self.assertIn("Checking entire write pointers", out)

    def test_every_kernel(self):
        for kver in ("6.1.0-57-amd64", "6.12.118-smrlean"):
            hits = shell('uname() { echo "$1"; }; dmesg_find_errors || true',
                         self.log, kver)
            self.assertEqual(hits, "", kver)

    def test_another_reason_still_fails(self):
        # 4: a corrupted summary, f2fs's own finding.
        hits, seen = self.errors(self.log.replace("reason: 3", "reason: 4"))
        self.assertEqual(hits.count("Call Trace"), 2)
        self.assertEqual(seen, "")

    def test_a_dump_from_elsewhere_still_fails(self):
        log = self.log.replace("f2fs_stop_checkpoint+0x1a8", "smr_zone_write+0x1a8", 1)
        hits, seen = self.errors(log)
        self.assertEqual(hits.count("Call Trace"), 1)
        self.assertIn("f2fs stopped", seen, "the second dump is still known")

    def test_a_dump_without_its_message_still_fails(self):
        log = "".join(l for l in self.log.splitlines(True)
                      if "Stopped filesystem" not in l)
        hits, _ = self.errors(log)
        self.assertEqual(hits.count("Call Trace"), 2)

    def test_a_report_inside_a_dump_still_fails(self):
        lines = self.log.splitlines(True)
        at = next(i for i, l in enumerate(lines) if "f2fs_write_end_bio" in l)
        lines.insert(at, "[   32.619400] BUG: KASAN: use-after-free in f2fs_write_end_bio\n")
        hits, _ = self.errors("".join(lines))
        self.assertIn("BUG: KASAN", hits)
        self.assertEqual(hits.count("Call Trace"), 1)

    def test_a_warning_beside_it_still_fails(self):
        hits, _ = self.errors(self.log + OTHER_WARNING)
        self.assertIn("WARNING: CPU: 0 PID: 77", hits)
        self.assertEqual(hits.count("Call Trace"), 1)

    def test_an_unended_dump_is_kept(self):
        cut = self.log[:self.log.index("</TASK>")]
        hits, _ = self.errors(cut)
        self.assertEqual(hits.count("Call Trace"), 1)


if __name__ == "__main__":
    unittest.main()
