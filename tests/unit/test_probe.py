# SPDX-License-Identifier: GPL-2.0
"""compat/probe.sh: the step that decides kernel API differences must fail
loudly, never write a header that silently defines nothing."""
import glob
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.path.join(ROOT, "compat", "probe.sh")


def kdirs():
    """Kernel build trees installed on this host (Debian -amd64 headers)."""
    return sorted(glob.glob("/lib/modules/*-amd64/build"))


class ProbeTest(unittest.TestCase):
    def run_probe(self, probe, kdir, out):
        return subprocess.run(["bash", probe, kdir, out], capture_output=True,
                              text=True, timeout=600)

    def test_missing_kdir_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "config.h")
            r = self.run_probe(PROBE, "/nonexistent/kdir", out)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("no kernel build tree", r.stderr)
            self.assertFalse(os.path.exists(out))

    @unittest.skipUnless(kdirs(), "no kernel headers installed")
    def test_broken_canary_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            compat = os.path.join(tmp, "compat")
            shutil.copytree(os.path.join(ROOT, "compat"), compat,
                            ignore=shutil.ignore_patterns("generated"))
            with open(os.path.join(compat, "probes", "CANARY.c"), "a") as f:
                f.write("\nthis is not C;\n")
            out = os.path.join(tmp, "config.h")
            r = self.run_probe(os.path.join(compat, "probe.sh"), kdirs()[-1], out)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("required probe CANARY did not compile", r.stderr)
            self.assertFalse(os.path.exists(out))

    @unittest.skipUnless(kdirs(), "no kernel headers installed")
    def test_header_lists_every_probe(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "config.h")
            r = self.run_probe(PROBE, kdirs()[-1], out)
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(out) as f:
                text = f.read()
            self.assertIn("#define HAVE_CANARY 1", text)
            for p in glob.glob(os.path.join(ROOT, "compat", "probes", "*.c")):
                name = os.path.basename(p)[:-2]
                self.assertIn("HAVE_" + name, text)


if __name__ == "__main__":
    unittest.main()
