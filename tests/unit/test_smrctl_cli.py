# SPDX-License-Identifier: GPL-2.0
"""smrctl and smrd on the host, without a kernel module: bad option values
refused before any device is touched (create --dry-run prints the table it
would load), --help and --version on every command, the exit status of
smrctl(8), the errors when device-mapper cannot be reached, the JSON
writers that need no kernel, the man pages and the bash completion."""

import errno
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
SMRCTL = os.path.join(ROOT, 'userspace', 'smrctl', 'smrctl')
SMRD = os.path.join(ROOT, 'userspace', 'smrd', 'smrd')
COMPLETION = os.path.join(ROOT, 'userspace', 'smrctl', 'smrctl.bash-completion')

# Every command and its usage line's arguments (smrctl --help lists them).
COMMANDS = ['create', 'remove', 'status', 'watch', 'wait-clean', 'clean', 'policy',
            'clear-stats', 'zones', 'dump', 'calibrate', 'profiles', 'event-stats']
NOBODY = 65534


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, **kw)


def control_errno(user=None):
    """errno of opening /dev/mapper/control as @user (0: it opens)."""
    probe = ('import os\n'
             'try:\n'
             '    os.close(os.open("/dev/mapper/control", os.O_RDWR))\n'
             '    print(0)\n'
             'except OSError as e:\n'
             '    print(e.errno)\n')
    kw = dict(user=user, group=user, extra_groups=[]) if user is not None else {}
    return int(run(['/usr/bin/python3', '-c', probe], **kw).stdout)


def dm_unreachable_message(e):
    """What smrctl must say when /dev/mapper/control fails with @e."""
    if e in (errno.EACCES, errno.EPERM):
        return 'needs root (cannot open /dev/mapper/control: %s)' % os.strerror(e)
    return ('device-mapper is not available (cannot open /dev/mapper/control: %s): load dm-mod'
            % os.strerror(e))


@unittest.skipUnless(os.access(SMRCTL, os.X_OK), 'userspace/smrctl/smrctl not built (make -C userspace)')
class SmrctlCase(unittest.TestCase):
    def run_smrctl(self, *args, **kw):
        return run([SMRCTL] + list(args), **kw)

    def setUp(self):
        fd, self.disk = tempfile.mkstemp()
        os.ftruncate(fd, 1 << 30)
        os.close(fd)
        self.addCleanup(os.unlink, self.disk)

    def create(self, *extra):
        return self.run_smrctl('create', 'x', '--dry-run', '--model', 'caveat', '--dev', self.disk,
                               '--did', '16', '--dnor', '6', *extra)


class SmrctlOptionsTest(SmrctlCase):
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

    def test_options_of_another_model_refused(self):
        # They used to be dropped silently: --band on a caveat device.
        models = {
            'drive-managed': (['--band', '4M'], ['--band', '4M', '--cache', '32M', '--idle-ms', '0',
                                                 '--policy', 'greedy', '--no-seq-bypass']),
            'host-managed': (['--zone', '16M'], ['--zone', '16M', '--zone-capacity', '8M', '--conv', '1',
                                                 '--max-open', '4', '--max-active', '4']),
            'caveat': (['--did', '16', '--dnor', '6'], ['--did', '16', '--dnor', '6', '--block-size', '4K',
                                                        '--unshingled', '8']),
        }
        for model, (needed, own) in models.items():
            r = self.run_smrctl('create', 'x', '--dry-run', '--dev', self.disk, '--model', model, *own)
            self.assertEqual(r.returncode, 0, '%s with its own options: %s' % (model, r.stderr))
            for other, (_, theirs) in models.items():
                if other == model:
                    continue
                for i in range(0, len(theirs)):
                    opt = theirs[i]
                    if not opt.startswith('--'):
                        continue
                    val = [] if opt == '--no-seq-bypass' else [theirs[i + 1]]
                    r = self.run_smrctl('create', 'x', '--dry-run', '--dev', self.disk,
                                        '--model', model, *needed, opt, *val)
                    self.assertEqual(r.returncode, 2, '%s %s: %s' % (model, opt, r.stdout))
                    self.assertIn('%s does not apply to a %s device (it is a %s option)'
                                  % (opt, model, other), r.stderr)
        # The model of a profile counts as chosen, and --model overrides it.
        r = self.run_smrctl('create', 'x', '--dry-run', '--dev', self.disk, '--profile', 'dm-small',
                            '--zone', '16M')
        self.assertEqual(r.returncode, 2)
        self.assertIn('--zone does not apply to a drive-managed device', r.stderr)
        r = self.run_smrctl('create', 'x', '--dry-run', '--dev', self.disk, '--profile', 'dm-small',
                            '--model', 'host-managed', '--zone', '16M')
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_start_mb_needs_a_timing_model(self):
        """--start-mb places the device on a modelled drive: without a
        model it is refused, not dropped from the table line."""
        dm = ['create', 'x', '--dry-run', '--dev', self.disk]
        for args in (['--model', 'drive-managed', '--band', '16M', '--size', '256M'],
                     ['--profile', 'st8000as0002', '--size', '256M', '--no-timing'],
                     ['--profile', 'st8000as0002', '--no-timing', '--size', '256M']):
            for order in (['--start-mb', '100'] + args, args + ['--start-mb', '100']):
                r = self.run_smrctl(*dm, *order)
                self.assertEqual(r.returncode, 1, '%s: %s' % (order, r.stdout))
                self.assertIn('start_mb places the device on a modelled drive', r.stderr)
        r = self.run_smrctl(*dm, '--profile', 'st8000as0002', '--size', '256M', '--start-mb', '100')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(' start_mb 100', r.stdout)
        # The profile's own model and start dropped together: no complaint.
        r = self.run_smrctl(*dm, '--profile', 'st8000as0002', '--size', '256M', '--no-timing')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn('timing', r.stdout)

    def test_too_many_conventional_zones(self):
        # Used to say "backing device too small for one zone".
        r = self.run_smrctl('create', 'x', '--dry-run', '--dev', self.disk, '--model', 'host-managed',
                            '--zone', '16M', '--conv', '100')
        self.assertEqual(r.returncode, 1)
        self.assertNotIn('too small', r.stderr)
        self.assertIn('100 conventional zones leave no sequential zone', r.stderr)
        self.assertIn('use --conv 62 or fewer', r.stderr)
        r = self.run_smrctl('create', 'x', '--dry-run', '--dev', self.disk, '--model', 'host-managed',
                            '--zone', '16M', '--conv', '62')
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn('conv_zones 62', r.stdout)


class SmrctlDeviceMapperTest(SmrctlCase):
    """libdevmapper gives no task when /dev/mapper/control cannot be
    opened; that used to be reported as "out of memory"."""

    CMDS = (['clean', 'x'], ['policy', 'x', 'fifo'], ['clear-stats', 'x'], ['dump', 'x'])

    def check(self, user):
        for cmd in self.CMDS:
            e = control_errno(user)
            if not e:
                self.skipTest('/dev/mapper/control opens: device-mapper works here')
            kw = dict(user=user, group=user, extra_groups=[]) if user is not None else {}
            r = self.run_smrctl(*cmd, **kw)
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertNotIn('out of memory', r.stderr)
            # Where the node is missing, libdevmapper run as root makes it
            # (mknod) and the open then fails with ENODEV: a fresh machine.
            made = e == errno.ENOENT and os.path.exists('/dev/mapper/control')
            self.assertIn(dm_unreachable_message(errno.ENODEV if made else e), r.stderr)
            if e in (errno.EACCES, errno.EPERM):
                self.assertIn("smrctl: %s needs root" % cmd[0], r.stderr)
                self.assertIn("run it as root ('sudo smrctl %s ...')" % cmd[0], r.stderr)

    def test_this_user(self):
        self.check(None)

    @unittest.skipUnless(os.geteuid() == 0, 'needs root to run as nobody')
    def test_unprivileged_user(self):
        self.check(NOBODY)

    def test_messages(self):
        self.assertEqual(dm_unreachable_message(errno.EACCES),
                         'needs root (cannot open /dev/mapper/control: Permission denied)')


class SmrctlHelpVersionTest(SmrctlCase):
    def test_command_list(self):
        r = self.run_smrctl('--help')
        self.assertEqual(r.returncode, 0)
        listed = re.findall(r'^  (\S+)', r.stdout, re.M)
        self.assertEqual(listed, COMMANDS)

    def test_help_on_every_command(self):
        for cmd in COMMANDS + ['events']:
            for h in ('--help', '-h'):
                r = self.run_smrctl(cmd, 'x', h)
                self.assertEqual(r.returncode, 0, cmd)
                self.assertEqual(r.stderr, '', cmd)
                self.assertTrue(r.stdout.startswith('usage: smrctl %s' % cmd), r.stdout)
                self.assertIn('Options:\n', r.stdout)
                self.assertIn('--help', r.stdout)
            self.assertEqual(self.run_smrctl('help', cmd).stdout, r.stdout)
        # Each option a command takes is in its help.
        r = self.run_smrctl('create', '--help')
        for opt in ('--model', '--dev', '--profile', '--size', '--band', '--cache', '--idle-ms',
                    '--policy', '--no-seq-bypass', '--zone', '--zone-capacity', '--conv',
                    '--max-open', '--max-active', '--did', '--dnor', '--block-size',
                    '--unshingled', '--format', '--dry-run'):
            self.assertIn(opt, r.stdout)
        for cmd in ('status', 'zones', 'dump', 'profiles', 'event-stats', 'watch'):
            self.assertIn('--json', self.run_smrctl(cmd, '--help').stdout, cmd)

    def test_unknown_option_is_usage(self):
        for cmd in COMMANDS + ['events']:
            for bad in ('--bogus', '-q'):
                r = self.run_smrctl(cmd, bad)
                self.assertEqual(r.returncode, 2, '%s %s: %s' % (cmd, bad, r.stderr))
                self.assertEqual(r.stdout, '')
                self.assertIn("smrctl %s: unknown option '%s'" % (cmd, bad), r.stderr)
                self.assertIn('usage: smrctl %s' % cmd, r.stderr)

    def test_version(self):
        with open(os.path.join(ROOT, 'dkms.conf')) as f:
            want = re.search(r'^PACKAGE_VERSION="([^"]+)"', f.read(), re.M).group(1)
        for opt in ('--version', '-V'):
            r = self.run_smrctl(opt)
            self.assertEqual((r.returncode, r.stdout), (0, 'smrctl (dm-smr) %s\n' % want), opt)
            if os.access(SMRD, os.X_OK):
                r = run([SMRD, opt])
                self.assertEqual((r.returncode, r.stdout), (0, 'smrd (dm-smr) %s\n' % want), opt)

    def test_help_and_version_arguments(self):
        r = self.run_smrctl('help', 'nosuch')
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("smrctl: unknown command 'nosuch'", r.stderr)
        self.assertEqual(r.stdout, '')
        for args, extra in ((['help', 'create', 'x'], 'x'), (['--version', 'y'], 'y'),
                            (['-V', 'z'], 'z')):
            r = self.run_smrctl(*args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn("smrctl: unexpected argument '%s'" % extra, r.stderr)
        r = self.run_smrctl('help', 'create')
        self.assertEqual(r.returncode, 0)
        self.assertIn('usage: smrctl create', r.stdout)

    def test_cache_share_range(self):
        cv = ['create', 'x', '--dry-run', '--model', 'drive-managed', '--dev', self.disk,
              '--band', '4M']
        r = self.run_smrctl(*cv, '--cache', '200%')
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("--cache '200%': a share of the size is more than 0% and at most 100%",
                      r.stderr)
        r = self.run_smrctl(*cv, '--cache', 'lots%')
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("a size (1G) or a share of the size (1%)", r.stderr)
        r = self.run_smrctl(*cv, '--cache', '5%')
        self.assertEqual(r.returncode, 0, r.stderr)

    @unittest.skipUnless(os.access(SMRD, os.X_OK), 'userspace/smrd/smrd not built')
    def test_smrd_usage(self):
        r = run([SMRD, '--help'])
        self.assertEqual(r.returncode, 0)
        self.assertIn('--version', r.stdout)
        r = run([SMRD, '--bogus'])
        self.assertEqual(r.returncode, 2)
        self.assertIn('usage: smrd', r.stderr)
        r = run([SMRD, 'extra'])
        self.assertEqual(r.returncode, 2)
        self.assertIn("smrd: unexpected argument 'extra'", r.stderr)
        # --interval paces --textfile only: alone it would do nothing
        r = run([SMRD, '--interval', '5'])
        self.assertEqual(r.returncode, 2)
        self.assertIn('--interval', r.stderr)
        self.assertIn('--textfile', r.stderr)


class SmrctlExitStatusTest(SmrctlCase):
    """smrctl(8) EXIT STATUS: 0 success, 1 error, 2 usage."""

    def test_man_page_and_code_agree(self):
        with open(os.path.join(ROOT, 'userspace', 'smrctl', 'smrctl.8')) as f:
            man = f.read()
        sect = man.split('.SH EXIT STATUS', 1)[1].split('\n.SH', 1)[0]
        for code in ('0', '1', '2'):
            self.assertRegex(sect, r'(?m)^\.IP %s\b|^\.TP\n\.B %s\b' % (code, code))
        with open(os.path.join(ROOT, 'userspace', 'smrctl', 'smrctl.c')) as f:
            self.assertIn('#define EXIT_USAGE 2', f.read())

    def test_codes(self):
        cv = ['--model', 'caveat', '--did', '16', '--dnor', '6', '--dev', self.disk]
        cases = [
            (0, ['help']), (0, ['--help']), (0, ['--version']), (0, ['profiles']),
            (0, ['create', 'x', '--dry-run'] + cv),
            # usage: the command line is wrong
            (2, None), (2, ['nosuch']), (2, ['status', 'a', 'b']), (2, ['remove']),
            (2, ['remove', 'a', 'b']), (2, ['clean']), (2, ['policy', 'x']),
            (2, ['policy', 'x', 'lru']), (2, ['dump']), (2, ['zones']), (2, ['wait-clean']),
            (2, ['wait-clean', 'x', '--timeout', 'nan']), (2, ['profiles', 'extra']),
            (2, ['watch', 'extra']), (2, ['event-stats', '--rate', 'x']),
            (2, ['create', 'x', '--dry-run', '--dev', self.disk]),
            (2, ['create', 'x', '--dry-run', '--model', 'caveat']),
            (2, ['create', 'x', '--dry-run', '--model', 'tape', '--dev', self.disk]),
            (2, ['create', 'x', '--dry-run', '--size', 'big'] + cv),
            (2, ['create', 'x', '--dry-run', '--band', '4M'] + cv),
            (2, ['create', 'a/b', '--dry-run'] + cv),
            (2, ['create', '--dry-run'] + cv),
            # error: a correct command line that cannot be done
            (1, ['create', 'x', '--dry-run', '--size', '2G'] + cv),
            (1, ['create', 'x', '--dry-run', '--profile', 'nosuch'] + cv),
            (1, ['create', 'x', '--dry-run', '--model', 'caveat', '--did', '16', '--dnor', '6',
                 '--dev', '/nonexistent/disk']),
            (1, ['zones', self.disk]),
        ]
        for want, args in cases:
            r = self.run_smrctl(*(args or []))
            self.assertEqual(r.returncode, want, '%s: %s' % (args, r.stderr))
            if want == 2:
                self.assertIn('usage: smrctl', r.stderr, args)
        r = self.run_smrctl('profiles', env=dict(os.environ, SMRCTL_PROFILES='/nonexistent'))
        self.assertEqual(r.returncode, 1, r.stderr)


class SmrctlJsonTest(SmrctlCase):
    """The JSON writers that need no kernel. status, watch, event-stats
    and dump need the modules: their strings go through the same escaping
    (json_string/json_fputs, unit-tested in test-units.c)."""

    def test_profiles_json(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        weird = 'we"ird\\na\tme'
        with open(os.path.join(d, weird + '.profile'), 'w') as f:
            f.write('description = a "quoted" \\ back\\slash, caf\u00e9\nmodel = caveat\ndid = 16\ndnor = 4\n')
        with open(os.path.join(d, 'broken.profile'), 'w') as f:
            f.write('model = tape\n')
        with open(os.path.join(d, 'not-a-profile.txt'), 'w') as f:
            f.write('x\n')
        r = self.run_smrctl('profiles', '--json', env=dict(os.environ, SMRCTL_PROFILES=d))
        self.assertEqual(r.returncode, 0, r.stderr)
        docs = [json.loads(line) for line in r.stdout.splitlines()]
        self.assertEqual([p['name'] for p in docs], ['broken', weird])
        for p in docs:
            self.assertEqual(sorted(p), ['description', 'error', 'model', 'name', 'path'])
        self.assertEqual(docs[1]['description'], 'a "quoted" \\ back\\slash, caf\u00e9')
        self.assertEqual((docs[1]['model'], docs[1]['error']), ('caveat', None))
        self.assertEqual(docs[1]['path'], os.path.join(d, weird + '.profile'))
        self.assertIsNone(docs[0]['model'])
        self.assertIn("bad value 'tape' for model", docs[0]['error'])

    def test_shipped_profiles_json(self):
        text = self.run_smrctl('profiles').stdout.split('\n')
        docs = [json.loads(line) for line in self.run_smrctl('profiles', '--json').stdout.splitlines()]
        self.assertEqual([p['name'] for p in docs], [line.split()[0] for line in text if line])
        for p in docs:
            self.assertIn(p['model'], ('drive-managed', 'host-managed', 'caveat'))


class SmrctlCalibrateTest(SmrctlCase):
    """smrctl calibrate runs the probe, smr-calibrate: beside smrctl (as
    installed), in its folder beside smrctl's (the source tree), or on
    PATH."""

    def test_source_tree_probe_found(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        disk = os.path.join(d, 'no-such-disk')
        r = self.run_smrctl('calibrate', disk, env=dict(os.environ, PATH='/usr/bin:/bin'))
        # The probe's own answer: smrctl found it.
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('smr-calibrate: %s: ' % disk, r.stderr)

    def test_no_probe_named(self):
        d = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, d)
        shutil.copy(SMRCTL, d)
        r = run([os.path.join(d, 'smrctl'), 'calibrate', os.path.join(d, 'no-such-disk')],
                env=dict(os.environ, PATH='/usr/bin:/bin'))
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn('smr-calibrate is neither beside smrctl nor in PATH', r.stderr)


class SmrctlEventsAliasTest(SmrctlCase):
    def test_events_is_a_deprecated_event_stats(self):
        r = self.run_smrctl('events', '--rate', 'x')
        self.assertIn("'events' is deprecated: use 'smrctl event-stats'", r.stderr)
        r = self.run_smrctl('event-stats', '--rate', 'x')
        self.assertNotIn('deprecated', r.stderr)
        self.assertNotIn('events', self.run_smrctl('--help').stdout.split())


@unittest.skipUnless(shutil.which('bash'), 'no bash')
class CompletionTest(SmrctlCase):
    def setUp(self):
        super().setUp()
        self.bin = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.bin)
        with open(os.path.join(self.bin, 'dmsetup'), 'w') as f:
            f.write('#!/bin/sh\n'
                    'case "$*" in\n'
                    '"ls --target smr") printf "dm0\\t(253:0)\\nhm0\\t(253:1)\\n" ;;\n'
                    '"ls --target caveat") printf "cv0\\t(253:2)\\n" ;;\n'
                    '*) echo "No devices found" ;;\n'
                    'esac\n')
        os.chmod(os.path.join(self.bin, 'dmsetup'), 0o755)

    def complete(self, *words, path=None):
        """COMPREPLY for the command line @words (the last is completed)."""
        script = ('source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); '
                  '_smrctl; printf "%s\\n" "${COMPREPLY[@]}"')
        env = dict(os.environ, PATH=path if path is not None else self.bin + ':' + os.environ['PATH'])
        r = run([shutil.which('bash'), '--norc', '-c', script, 'bash', COMPLETION, SMRCTL] + list(words),
                env=env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, '')
        return sorted(w for w in r.stdout.split('\n') if w)

    def test_commands(self):
        self.assertEqual(self.complete(''), sorted(COMMANDS + ['--help', '--version']))
        self.assertEqual(self.complete('c'), ['calibrate', 'clean', 'clear-stats', 'create'])
        self.assertEqual(self.complete('event'), ['event-stats'])

    def test_options(self):
        self.assertEqual(self.complete('status', '-'), ['--help', '--json'])
        self.assertEqual(self.complete('wait-clean', 'dm0', '--'), ['--help', '--timeout'])
        self.assertEqual(self.complete('event-stats', '--r'), ['--rate', '--reset'])
        self.assertEqual(self.complete('remove', '-'), ['--help'])
        every = self.complete('create', 'x', '--')
        for opt in ('--model', '--dev', '--band', '--zone', '--did', '--dry-run'):
            self.assertIn(opt, every)
        # Once the model is given, only its options.
        cv = self.complete('create', 'x', '--model', 'caveat', '--')
        self.assertIn('--did', cv)
        self.assertNotIn('--band', cv)
        self.assertNotIn('--zone', cv)
        self.assertEqual(self.complete('create', 'x', '--model', ''),
                         ['caveat', 'drive-managed', 'host-managed'])
        self.assertEqual(self.complete('create', 'x', '--policy', 'g'), ['greedy'])
        self.assertEqual(self.complete('policy', 'dm0', ''), ['cost-benefit', 'fifo', 'greedy'])

    def test_profiles(self):
        names = [line.split()[0] for line in self.run_smrctl('profiles').stdout.splitlines()]
        self.assertGreaterEqual(len(names), 3)
        self.assertEqual(self.complete('create', 'x', '--profile', ''), sorted(names))
        self.assertEqual(self.complete('create', 'x', '--profile', 'hm-'),
                         sorted(n for n in names if n.startswith('hm-')))

    def test_devices(self):
        for cmd in ('remove', 'status', 'wait-clean', 'clean', 'policy', 'clear-stats', 'zones', 'dump'):
            self.assertEqual(self.complete(cmd, ''), ['cv0', 'dm0', 'hm0'], cmd)
        self.assertEqual(self.complete('dump', 'c'), ['cv0'])
        self.assertEqual(self.complete('wait-clean', '--timeout', '5', 'd'), ['dm0'])
        # No second device, no device for create (a new name).
        self.assertEqual(self.complete('dump', 'cv0', ''), [])
        self.assertEqual(self.complete('create', ''), [])
        # Without dmsetup: nothing, and no error.
        empty = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, empty)
        os.symlink(shutil.which('awk'), os.path.join(empty, 'awk'))
        self.assertEqual(self.complete('remove', '', path=empty), [])


@unittest.skipUnless(shutil.which('groff'), 'no groff')
class ManPageTest(unittest.TestCase):
    def test_render_without_warnings(self):
        for page in ('smrctl/smrctl.8', 'smrd/smrd.8'):
            path = os.path.join(ROOT, 'userspace', page)
            r = run(['groff', '-man', '-ww', '-z', path])
            self.assertEqual((r.returncode, r.stderr), (0, ''), page)
            with open(path) as f:
                src = f.read()
            for sect in ('EXIT STATUS', 'FILES', 'EXAMPLES'):
                self.assertTrue('\n.SH ' + sect + '\n' in src, '%s: no %s' % (page, sect))
            self.assertTrue('\\-\\-version' in src, '%s: no --version' % page)

    def test_every_command_documented(self):
        with open(os.path.join(ROOT, 'userspace', 'smrctl', 'smrctl.8')) as f:
            src = f.read()
        for cmd in COMMANDS:
            self.assertTrue(re.search(r'(?m)^\.SS .*\b%s\b' % re.escape(cmd), src), 'no .SS for ' + cmd)


if __name__ == '__main__':
    unittest.main()
