# SPDX-License-Identifier: GPL-2.0
"""What the set-up installs for make demo and for make check: the demo
boots one kernel and sets up that one alone (no 6.12, no chroot for the
newest, no fio source tree); make check (and .ci/run through it) sets up
everything. scripts/setup-deps.sh is run against stubs of dpkg-query and
apt (nothing is installed) to see that SMR_FIO_SOURCE=0 skips fio's
source tree."""

import glob
import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRUB = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "KVER", "KDIR", "SMR_KERNELS",
         "SMR_FIO_SOURCE", "SMOKE")


def env():
    return {k: v for k, v in os.environ.items() if k not in SCRUB}


@unittest.skipUnless(shutil.which("make"), "needs make")
class MakeTargetsTest(unittest.TestCase):
    def dry(self, target):
        # MAKE=echo: the recursive lines print instead of running
        r = subprocess.run(["make", "-n", "--no-print-directory", "-C", ROOT, target, "MAKE=echo"],
                           capture_output=True, text=True, env=env(), timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout.splitlines()

    def test_demo_sets_up_one_kernel(self):
        lines = self.dry("demo")
        self.assertEqual(lines[0], "SMR_KERNELS=6.1 SMR_FIO_SOURCE=0 scripts/setup-deps.sh")

    def test_check_sets_up_everything(self):
        lines = self.dry("check")
        self.assertEqual(lines[0], "scripts/setup-deps.sh")


STUB_DPKG_QUERY = """#!/bin/sh
# every package installed, fio at Debian 12's version
case "$*" in
*Version*) printf '3.33-3' ;;
*) printf 'ii ' ;;
esac
"""
STUB_APT = """#!/bin/sh
echo "$(basename "$0") $*" >> "$APT_LOG"
exit 1
"""


@unittest.skipUnless(os.geteuid() == 0 and glob.glob("/boot/vmlinuz-6.1.*-amd64") and
                     any(os.path.exists("/lib/modules/%s/build/Makefile" %
                                        os.path.basename(p)[len("vmlinuz-"):])
                         for p in glob.glob("/boot/vmlinuz-6.1.*-amd64")),
                     "needs root and an installed 6.1 kernel with headers")
class SetupDepsScopeTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.d, True)
        bindir = os.path.join(self.d, "bin")
        os.makedirs(bindir)
        for name, text in (("dpkg-query", STUB_DPKG_QUERY), ("apt-get", STUB_APT),
                           ("apt-cache", STUB_APT)):
            with open(os.path.join(bindir, name), "w") as f:
                f.write(text)
            os.chmod(os.path.join(bindir, name), 0o755)
        venv = os.path.join(self.d, "venv", "bin")
        os.makedirs(venv)
        with open(os.path.join(venv, "vng"), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        os.chmod(os.path.join(venv, "vng"), 0o755)
        # a directory setup-fio-source.sh did not make: it refuses it, so
        # a run that reaches it fails
        self.fio_src = os.path.join(self.d, "fio-src")
        os.makedirs(self.fio_src)
        self.env = dict(env(), PATH=bindir + ":" + os.environ["PATH"],
                        APT_LOG=os.path.join(self.d, "apt.log"),
                        SMR_VENV=os.path.join(self.d, "venv"), SMR_FIO_SRC=self.fio_src,
                        SMR_KERNELS="6.1")

    def setup_deps(self, **extra):
        return subprocess.run([os.path.join(ROOT, "scripts", "setup-deps.sh")],
                              capture_output=True, text=True, env=dict(self.env, **extra),
                              timeout=120)

    def test_fio_source_skipped_for_the_demo(self):
        r = self.setup_deps(SMR_FIO_SOURCE="0")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertFalse(os.path.exists(self.env["APT_LOG"]), "apt was not called")
        r = self.setup_deps()
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("was not made by this script", r.stderr)


if __name__ == "__main__":
    unittest.main()
