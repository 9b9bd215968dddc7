# SPDX-License-Identifier: GPL-2.0
"""The README's first lines: a title, one sentence of what the project
is, then the two commands that do all set-up on a fresh Debian 12
machine (./run demo, ./run check)."""

import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class ReadmeHeadTest(unittest.TestCase):
    def test_title_sentence_then_the_two_commands(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            lines = f.read().splitlines()
        self.assertRegex(lines[0], r"^# dm-smr\b")
        self.assertEqual(lines[1], "")
        self.assertRegex(lines[2], r"^[A-Z].*\.$")          # one sentence, one line
        self.assertEqual(lines[3], "")
        commands = [l.split("#")[0].strip() for l in lines[4:10] if l.startswith("    ./run")]
        self.assertEqual(commands, ["./run demo", "./run check"])
        self.assertLess(max(i for i, l in enumerate(lines) if l.startswith("    ./run check")), 10)

    def test_says_what_set_up_installs(self):
        with open(os.path.join(ROOT, "README.md")) as f:
            text = f.read()
        for what in ("/var/lib/dm-smr/fio-src", "/var/lib/dm-smr/trixie", ".venv",
                     "GRUB", "libdevmapper-dev", "mokutil", "sign-file"):
            self.assertIn(what, text)
        self.assertEqual(len(re.findall(r"^# ", text, re.M)), 1, "one title")


class DocsMatchCodeTest(unittest.TestCase):
    def test_every_shipped_profile_in_the_table(self):
        with open(os.path.join(ROOT, "docs", "smrd.rst")) as f:
            doc = f.read()
        for p in os.listdir(os.path.join(ROOT, "userspace", "smrctl", "profiles")):
            if p.endswith(".profile"):
                self.assertRegex(doc, r"(?m)^``%s``\s" % re.escape(p[:-len(".profile")]), p)


if __name__ == "__main__":
    unittest.main()
