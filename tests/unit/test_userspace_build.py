# SPDX-License-Identifier: GPL-2.0
"""userspace/Makefile without its libraries: a missing build dependency
is named with its Debian package before the compiler runs, and the unit
tests (make check) build and pass without libdevmapper or libnl. Runs on
a copy of userspace/ with a pkg-config that hides some libraries."""

import os
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')

# The build's outputs, left out of the copies (the programs' folders have
# the same names as their programs: only files are outputs).
BUILT = {'smrd', 'smrctl', 'smr-scsi', 'test-units', 'test-scsi'}


def not_built(d, names):
    """copytree's ignore: objects, .*.cmd files and built programs."""
    return [n for n in names if n.endswith('.o') or (n.startswith('.') and n.endswith('.cmd'))
            or (n in BUILT and os.path.isfile(os.path.join(d, n)))]


FAKE_PC = '''#!/bin/sh
# pkg-config that does not know the modules in $HIDE
for a; do
	for h in $HIDE; do [ "$a" = "$h" ] && exit 1; done
done
exec pkg-config "$@"
'''


@unittest.skipUnless(shutil.which('make') and shutil.which('cc') and shutil.which('pkg-config'),
                     'needs make, cc and pkg-config')
class MissingLibraryTest(unittest.TestCase):
    def setUp(self):
        self.d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.d, True)
        shutil.copytree(os.path.join(ROOT, 'userspace'), os.path.join(self.d, 'userspace'),
                        ignore=not_built)
        for m in ('dm-smr', 'dm-caveat'):
            shutil.copytree(os.path.join(ROOT, m, 'uapi'), os.path.join(self.d, m, 'uapi'))
        self.pc = os.path.join(self.d, 'fake-pkg-config')
        with open(self.pc, 'w') as f:
            f.write(FAKE_PC)
        os.chmod(self.pc, 0o755)

    def make(self, hide, *targets):
        return subprocess.run(['make', '-C', os.path.join(self.d, 'userspace'),
                               'PKG_CONFIG=' + self.pc] + list(targets),
                              env=dict(os.environ, HIDE=hide), capture_output=True,
                              text=True, timeout=300)

    def built(self, name):
        return os.path.isfile(os.path.join(self.d, 'userspace', name))

    def test_missing_libdevmapper_named(self):
        r = self.make('devmapper', 'smrctl')
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('smrctl needs libdevmapper: apt-get install libdevmapper-dev', r.stderr)
        self.assertNotIn('fatal error', r.stderr)     # not the compiler's word
        self.assertFalse(self.built('smrctl/smrctl'))

    def test_missing_libnl_named(self):
        r = self.make('libnl-genl-3.0', 'smrd')
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('need libnl-genl-3: apt-get install libnl-genl-3-dev', r.stderr)
        self.assertNotIn('fatal error', r.stderr)

    def test_check_without_the_libraries(self):
        r = self.make('devmapper libnl-genl-3.0', 'check')
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertRegex(r.stdout, r'# \d+ tests, 0 failed')
        self.assertIn('smrctl not built (needs libnl-genl-3 libdevmapper', r.stdout)
        self.assertTrue(self.built('lib/test-units'))
        self.assertFalse(self.built('smrctl/smrctl'))
        # with only libdevmapper missing, smrd is still built and checked
        r = self.make('devmapper', 'check')
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertTrue(self.built('smrd/smrd'))
        self.assertFalse(self.built('smrctl/smrctl'))


# The two ways docs/smrd.rst gives to build with Debian's hardening flags.
BUILDFLAGS_SH = 'eval "$(dpkg-buildflags --export=sh)"; make -C userspace'
BUILDFLAGS_VARS = ('make -C userspace CFLAGS="$(dpkg-buildflags --get CFLAGS)" '
                   'CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)" '
                   'LDFLAGS="$(dpkg-buildflags --get LDFLAGS)"')


@unittest.skipUnless(shutil.which('dpkg-buildflags') and shutil.which('make'),
                     'needs dpkg-buildflags (dpkg-dev) and make')
class BuildFlagsTest(unittest.TestCase):
    def test_documented_commands_work(self):
        with open(os.path.join(ROOT, 'docs', 'smrd.rst')) as f:
            doc = f.read()
        # "make $(dpkg-buildflags --export=cmdline)" splits the quoted
        # values into words: make takes -D_FORTIFY_SOURCE=2 for options
        self.assertFalse('$(dpkg-buildflags --export=cmdline)' in doc, 'the form that fails')
        for cmd in (BUILDFLAGS_SH, BUILDFLAGS_VARS):
            self.assertTrue(cmd in doc, cmd)
            d = tempfile.mkdtemp()
            self.addCleanup(shutil.rmtree, d, True)
            shutil.copytree(os.path.join(ROOT, 'userspace'), os.path.join(d, 'userspace'),
                            ignore=not_built)
            for m in ('dm-smr', 'dm-caveat'):
                shutil.copytree(os.path.join(ROOT, m, 'uapi'), os.path.join(d, m, 'uapi'))
            r = subprocess.run(['sh', '-c', cmd + ' test-units'], cwd=d, capture_output=True,
                               text=True, timeout=300)
            self.assertEqual(r.returncode, 0, cmd + '\n' + r.stdout + r.stderr)
            # Debian's flags reach the compiler, after the project's own
            self.assertIn(' -D_FORTIFY_SOURCE=2 ', r.stdout, cmd)
            self.assertRegex(r.stdout, r'-std=gnu11 .*-fstack-protector-strong', cmd)
            self.assertIn('-Wl,-z,relro', r.stdout, cmd)


if __name__ == '__main__':
    unittest.main()
