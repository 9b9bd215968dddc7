# SPDX-License-Identifier: GPL-2.0
"""scripts/dkms-install.sh must re-register over whatever an earlier run
left behind, or CI on a reused machine stops before it builds anything."""
import os
import shutil
import subprocess
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "dkms-install.sh")


def conf(key):
    with open(os.path.join(ROOT, "dkms.conf")) as f:
        for line in f:
            if line.startswith(key + "="):
                return line.split("=", 1)[1].strip().strip('"')
    raise KeyError(key)


NAME, VERSION = conf("PACKAGE_NAME"), conf("PACKAGE_VERSION")
SRC = "/usr/src/%s-%s" % (NAME, VERSION)
TREE = "/var/lib/dkms/%s/%s" % (NAME, VERSION)


def registered():
    r = subprocess.run(["dkms", "status", "-m", NAME, "-v", VERSION],
                       capture_output=True, text=True)
    return r.stdout


@unittest.skipUnless(shutil.which("dkms") and os.geteuid() == 0,
                     "needs dkms and root")
class DkmsInstallTest(unittest.TestCase):
    def register(self):
        r = subprocess.run(["bash", SCRIPT, "--register-only"],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_register_twice(self):
        self.register()
        self.register()
        self.assertIn("%s/%s" % (NAME, VERSION), registered())

    def test_register_over_tree_without_source(self):
        # What a machine restored without /usr/src looks like: DKMS still
        # has the tree, "dkms status" no longer shows it, "dkms add" refuses.
        self.register()
        shutil.rmtree(SRC)
        self.assertTrue(os.path.isdir(TREE))
        self.register()
        self.assertIn("%s/%s" % (NAME, VERSION), registered())
        self.assertTrue(os.path.isfile(os.path.join(SRC, "dkms.conf")))


if __name__ == "__main__":
    unittest.main()
