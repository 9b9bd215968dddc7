# SPDX-License-Identifier: GPL-2.0
"""smrctl refuses bad option values before it touches a device (no
kernel needed: create --dry-run prints the table it would load)."""

import os
import subprocess
import tempfile
import unittest

SMRCTL = os.path.join(os.path.dirname(__file__), '..', '..', 'userspace', 'smrctl')


@unittest.skipUnless(os.access(SMRCTL, os.X_OK), 'userspace/smrctl not built (make -C userspace)')
class SmrctlOptionsTest(unittest.TestCase):
    def run_smrctl(self, *args):
        return subprocess.run([SMRCTL] + list(args), capture_output=True, text=True)

    def setUp(self):
        fd, self.disk = tempfile.mkstemp()
        os.ftruncate(fd, 1 << 30)
        os.close(fd)
        self.addCleanup(os.unlink, self.disk)

    def create(self, *extra):
        return self.run_smrctl('create', 'x', '--dry-run', '--model', 'caveat', '--dev', self.disk,
                               '--did', '16', '--dnor', '6', *extra)

    def test_block_size_not_truncated(self):
        # 4G used to be cut to 32 bits (0), i.e. the 4096 default, silently.
        r = self.create('--block-size', '4G')
        self.assertNotEqual(r.returncode, 0, r.stdout)
        self.assertIn("--block-size '4G'", r.stderr)
        r = self.create('--block-size', '64K')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('block_size 65536', r.stdout)

    def test_timeout_must_be_finite(self):
        for bad in ('nan', 'inf', '', '-1', '10s'):
            r = self.run_smrctl('wait-clean', 'x', '--timeout', bad)
            self.assertNotEqual(r.returncode, 0)
            self.assertIn("--timeout '%s'" % bad, r.stderr)

    def test_device_paths(self):
        # A /dev/mapper path used to be looked up as /dev/mapper//dev/mapper/...
        r = self.run_smrctl('zones', '/dev/mapper/smrctl-test-nosuch')
        if 'built without libzbd' in r.stderr:
            self.skipTest('smrctl built without libzbd')
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('/dev/mapper/smrctl-test-nosuch does not exist', r.stderr)
        self.assertNotIn('//', r.stderr)
        r = self.run_smrctl('zones', self.disk)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('is not a device-mapper device', r.stderr)


if __name__ == '__main__':
    unittest.main()
