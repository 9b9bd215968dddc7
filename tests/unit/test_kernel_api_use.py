# SPDX-License-Identifier: GPL-2.0
"""Kernel API uses that one supported kernel warns about at run time,
checked in the sources so a change is caught without booting that kernel.

- alloc_workqueue(): since WQ_PERCPU appeared (7.x) the kernel WARNs
  when a caller names neither WQ_PERCPU nor WQ_UNBOUND (a stop's CI failed
  on exactly that). alloc_ordered_workqueue() is unbound by definition."""
import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DIRS = ["dm-smr", "dm-caveat", "common", "tests/kmod"]
CALL = re.compile(r"\balloc_workqueue\s*\((.*?)\)\s*;", re.S)


def kernel_sources():
    for d in DIRS:
        top = os.path.join(ROOT, d)
        if not os.path.isdir(top):
            continue
        for name in sorted(os.listdir(top)):
            if name.endswith((".c", ".h")) and not name.endswith(".mod.c"):
                yield os.path.join(top, name)


class WorkqueueFlags(unittest.TestCase):
    def test_every_alloc_workqueue_says_percpu_or_unbound(self):
        bad, seen = [], 0
        for path in kernel_sources():
            with open(path) as f:
                text = f.read()
            for m in CALL.finditer(text):
                seen += 1
                if not re.search(r"\bWQ_(UNBOUND|PERCPU)\b", m.group(1)):
                    line = text.count("\n", 0, m.start()) + 1
                    bad.append("%s:%d" % (os.path.relpath(path, ROOT), line))
        self.assertGreater(seen, 0, "no alloc_workqueue() call found: pattern stale?")
        self.assertEqual(bad, [], "alloc_workqueue() without WQ_UNBOUND/WQ_PERCPU")


if __name__ == "__main__":
    unittest.main()
