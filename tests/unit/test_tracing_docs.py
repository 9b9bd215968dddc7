# SPDX-License-Identifier: GPL-2.0
"""The tracepoints in the two trace headers, the table in docs/tracing.md
and tests/test_trace_01.sh name the same events: a tracepoint added
without its documentation and VM check, or documented but gone, fails."""

import os
import re
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADERS = {"dm_smr": "dm-smr/dm-smr-trace.h", "dm_caveat": "dm-caveat/dm-caveat-trace.h"}


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


class TracingDocsTest(unittest.TestCase):
    def defined(self):
        out = set()
        for system, rel in HEADERS.items():
            src = read(rel)
            self.assertIn("#define TRACE_SYSTEM %s" % system, src)
            for name in re.findall(r"^(?:TRACE_EVENT\(|SMR_TRACE_MD_COMMIT\(|SMR_TRACE_FAULT\()(\w+)", src, re.M):
                out.add("%s:%s" % (system, name))
        return out

    def test_documented(self):
        ev = self.defined()
        self.assertGreaterEqual(len(ev), 10)
        doc = read("docs/tracing.md")
        table = set(re.findall(r"^\| `(dm_\w+:\w+)` \|", doc, re.M))
        self.assertEqual(table, ev)

    def test_checked_in_the_vm(self):
        test = read("tests/test_trace_01.sh")
        for e in sorted(self.defined()):
            self.assertRegex(test, r'"%s: \+' % re.escape(e.split(":")[1]), e)

    def test_defined_once_per_module(self):
        for mod in ("dm-smr", "dm-caveat"):
            n = 0
            for f in os.listdir(os.path.join(ROOT, mod)):
                if f.endswith(".c"):
                    n += read(os.path.join(mod, f)).count("#define CREATE_TRACE_POINTS")
            self.assertEqual(n, 1, mod)


if __name__ == "__main__":
    unittest.main()
