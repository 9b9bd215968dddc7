# SPDX-License-Identifier: GPL-2.0
"""scripts/dkms-install.sh must re-register over whatever an earlier run
left behind, or CI on a reused machine stops before it builds anything;
and two runs must not overlap, or the second removes the sources the
first is building (CI's DKMS build beside these very tests did)."""
import fcntl
import os
import shutil
import subprocess
import tempfile
import time
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


@unittest.skipUnless(shutil.which("dkms") and os.geteuid() == 0,
                     "needs dkms and root")
class DkmsInstallTest(unittest.TestCase):
    """Every run here registers in DKMS trees of its own, never the
    machine's (/var/lib/dkms, /usr/src)."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="dkms-install-test.")
        self.addCleanup(shutil.rmtree, self.tmp)
        self.dkms_tree = os.path.join(self.tmp, "dkms")
        self.source_tree = os.path.join(self.tmp, "src")
        self.env = dict(os.environ, SMR_DKMS_TREE=self.dkms_tree,
                        SMR_DKMS_SOURCE=self.source_tree)
        self.src = os.path.join(self.source_tree, "%s-%s" % (NAME, VERSION))
        self.tree = os.path.join(self.dkms_tree, NAME, VERSION)

    def registered(self):
        r = subprocess.run(["dkms", "--dkmstree", self.dkms_tree,
                            "--sourcetree", self.source_tree,
                            "status", "-m", NAME, "-v", VERSION],
                           capture_output=True, text=True)
        return r.stdout

    def start(self):
        return subprocess.Popen(["bash", SCRIPT, "--register-only"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env=self.env)

    def register(self):
        p = self.start()
        out, _ = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, out)
        return out

    def test_register_twice(self):
        self.register()
        self.register()
        self.assertIn("%s/%s" % (NAME, VERSION), self.registered())
        self.assertTrue(os.path.isfile(os.path.join(self.src, "dkms.conf")))

    def test_register_over_tree_without_source(self):
        # What a machine restored without /usr/src looks like: DKMS still
        # has the tree, "dkms status" no longer shows it, "dkms add" refuses.
        self.register()
        shutil.rmtree(self.src)
        self.assertTrue(os.path.isdir(self.tree))
        self.register()
        self.assertIn("%s/%s" % (NAME, VERSION), self.registered())
        self.assertTrue(os.path.isfile(os.path.join(self.src, "dkms.conf")))

    def test_waits_for_a_run_in_progress(self):
        # A run holding the lock (as one building for minutes does): a
        # second run must leave its sources alone until the lock is free.
        self.register()
        marker = os.path.join(self.src, "being-built")
        open(marker, "w").close()
        lock = open(os.path.join(self.dkms_tree, "." + NAME + ".lock"), "w")
        self.addCleanup(lock.close)
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = self.start()
        # If an assertion fails below, the run is stopped before the lock
        # goes and the trees are removed (cleanups run last added first).
        self.addCleanup(p.wait)
        self.addCleanup(p.kill)
        time.sleep(3)
        self.assertIsNone(p.poll(), "a second run did not wait for the first")
        self.assertTrue(os.path.exists(marker),
                        "a second run removed the sources of a run in progress")
        fcntl.flock(lock, fcntl.LOCK_UN)
        out, _ = p.communicate(timeout=300)
        self.assertEqual(p.returncode, 0, out)
        self.assertIn("waiting", out)
        self.assertFalse(os.path.exists(marker))
        self.assertIn("%s/%s" % (NAME, VERSION), self.registered())


if __name__ == "__main__":
    unittest.main()
