# SPDX-License-Identifier: GPL-2.0
"""smrd's Prometheus exposition without a kernel module: the renderer fed
recorded records (smrd --render-metrics, data/smrd-records.jsonl) against
a checker of the rules promtool's lint applies (and promtool itself when
it is there: PROMTOOL=path or on PATH); the HTTP endpoint served while an
idle client holds a connection, with signals still handled; the
--textfile output replaced atomically; the systemd unit's exposure score
(systemd-analyze security --offline)."""

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
SMRD = os.path.join(ROOT, 'userspace', 'smrd', 'smrd')
NL_C = os.path.join(ROOT, 'userspace', 'lib', 'smr-nl.c')
UNIT_IN = os.path.join(ROOT, 'userspace', 'smrd', 'smrd.service.in')
RECORDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'data',
                       'smrd-records.jsonl')

METRIC_RE = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*$')
LABEL_RE = re.compile(r'[a-zA-Z_][a-zA-Z0-9_]*$')
SAMPLE_RE = re.compile(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: (-?\d+))?$')
# Name parts that are not base units, or are abbreviations of them.
BAD_UNITS = {'ms', 'msec', 'millisecond', 'milliseconds', 'us', 'usec',
             'microsecond', 'microseconds', 'ns', 'nanoseconds', 'sec', 'secs',
             'minutes', 'hours', 'sector', 'sectors', 'percent', 'kb', 'mb',
             'gb', 'kib', 'mib', 'gib', 'milli'}


def read(path):
    with open(path) as f:
        return f.read()


def parse_labels(text):
    """[(name, value)] of a label set, or raise ValueError."""
    out, i = [], 0
    while i < len(text):
        m = re.match(r'([^=]*)="', text[i:])
        if not m:
            raise ValueError('label set %r: no name="' % text)
        name, i, value = m.group(1), i + m.end(), ''
        while True:
            if i >= len(text):
                raise ValueError('label %s: value not closed' % name)
            c = text[i]
            if c == '\\':
                if i + 1 >= len(text) or text[i + 1] not in '\\"n':
                    raise ValueError('label %s: bad escape' % name)
                value += {'n': '\n'}.get(text[i + 1], text[i + 1])
                i += 2
            elif c == '"':
                i += 1
                break
            else:
                value += c
                i += 1
        out.append((name, value))
        if i < len(text):
            if text[i] != ',':
                raise ValueError('label set %r: "," expected after %s' % (text, name))
            i += 1
    return out


def check_exposition(text):
    """The problems of a text exposition, as promtool check metrics and the
    naming conventions see them ([] when there is none)."""
    problems, helps, types, done, series = [], set(), {}, set(), set()
    current = None
    if text and not text.endswith('\n'):
        problems.append('no newline at the end')
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        if line.startswith('#'):
            parts = line.split(None, 3)
            if len(parts) >= 3 and parts[1] in ('HELP', 'TYPE'):
                name = parts[2]
                if name in done or (parts[1] == 'HELP' and name in helps) or \
                        (parts[1] == 'TYPE' and name in types):
                    problems.append('%d: second %s for %s' % (n, parts[1], name))
                if parts[1] == 'HELP':
                    helps.add(name)
                    if len(parts) < 4 or not parts[3].strip():
                        problems.append('%d: empty HELP for %s' % (n, name))
                else:
                    types[name] = parts[3] if len(parts) > 3 else ''
                if current and current != name:
                    done.add(current)
                current = name
            continue
        m = SAMPLE_RE.match(line)
        if not m:
            problems.append('%d: not a sample: %r' % (n, line))
            continue
        name, labels, value = m.group(1), m.group(2) or '', m.group(3)
        if name != current:
            if current:
                done.add(current)
            if name in done:
                problems.append('%d: %s not together with its family' % (n, name))
            current = name
        if name not in helps:
            problems.append('%d: %s has no HELP before it' % (n, name))
        if name not in types:
            problems.append('%d: %s has no TYPE before it' % (n, name))
        if not METRIC_RE.match(name):
            problems.append('%d: bad metric name %s' % (n, name))
        kind = types.get(name)
        if kind == 'counter' and not name.endswith('_total'):
            problems.append('%d: counter %s does not end in _total' % (n, name))
        if kind != 'counter' and name.endswith('_total'):
            problems.append('%d: %s %s ends in _total' % (n, kind, name))
        bad = BAD_UNITS.intersection(name.split('_'))
        if bad:
            problems.append('%d: %s: not a base unit: %s' % (n, name, ', '.join(sorted(bad))))
        try:
            pairs = parse_labels(labels)
        except ValueError as e:
            problems.append('%d: %s' % (n, e))
            continue
        names = [k for k, _ in pairs]
        for k in names:
            if not LABEL_RE.match(k) or k.startswith('__'):
                problems.append('%d: bad label name %r' % (n, k))
        if len(set(names)) != len(names):
            problems.append('%d: a label twice' % n)
        key = (name, tuple(sorted(pairs)))
        if key in series:
            problems.append('%d: duplicate series %s{%s}' % (n, name, labels))
        series.add(key)
        try:
            float(value)
        except ValueError:
            problems.append('%d: bad value %r' % (n, value))
    return problems


def samples(text):
    """{(name, frozenset(labels)): value} of an exposition."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith('#'):
            m = SAMPLE_RE.match(line)
            out[(m.group(1), frozenset(parse_labels(m.group(2) or '')))] = float(m.group(3))
    return out


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def http_get(port, path='/metrics', timeout=5, method='GET', host='127.0.0.1'):
    with socket.create_connection((host, port), timeout=timeout) as s:
        s.sendall(('%s %s HTTP/1.0\r\nHost: x\r\n\r\n' % (method, path)).encode())
        data = b''
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.decode().partition('\r\n\r\n')
    return head, body


def http_ok6(port):
    try:
        return http_get(port, host='::1', timeout=1)[0].startswith('HTTP/1.0 200')
    except OSError:
        return False


class CheckerCase(unittest.TestCase):
    def test_checker_finds_the_old_problems(self):
        old = ('smrd_events_total 3\n'
               '# HELP smrd_last_clean_ms x\n# TYPE smrd_last_clean_ms gauge\n'
               'smrd_last_clean_ms{device="a"} 1\n'
               '# HELP smr_reads x\n# TYPE smr_reads counter\nsmr_reads{device="a"} 1\n'
               '# HELP g_total x\n# TYPE g_total gauge\ng_total 1\n'
               '# HELP d x\n# TYPE d gauge\nd{device="a"b"} 1\nd{x="1"} 1\nd{x="1"} 2\n'
               'smr_reads{device="b"} 2\n')
        text = '\n'.join(check_exposition(old))
        for what in ('smrd_events_total has no HELP', 'not a base unit: ms',
                     'counter smr_reads does not end in _total', 'gauge g_total ends in _total',
                     'duplicate series', '"," expected', 'smr_reads not together'):
            self.assertIn(what, text)


@unittest.skipUnless(os.access(SMRD, os.X_OK), 'userspace/smrd/smrd not built (make -C userspace)')
class RenderCase(unittest.TestCase):
    def render(self):
        p = subprocess.run([SMRD, '--render-metrics', RECORDS], capture_output=True,
                           text=True, timeout=30)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p

    def test_conventions(self):
        p = self.render()
        self.assertEqual(check_exposition(p.stdout), [])

    def test_every_dump_field_has_a_metric(self):
        # The records hold every field smr-nl.c names; smrd warns of any
        # it has no metric for.
        src = read(NL_C)
        fields = set()
        for table in ('smr_hm_names', 'smr_dm_names', 'cv_stat_names'):
            body = src[src.index(table):]
            fields |= set(re.findall(r'= "(\w+)"', body[:body.index('};')]))
        records = read(RECORDS)
        for f in fields:
            self.assertIn('"%s":' % f, records)
        self.assertEqual(self.render().stderr, '')

    def test_values_units_and_labels(self):
        s = samples(self.render().stdout)
        dm0 = [('family', 'dm-smr'), ('device', 'dm0')]
        cv = [('family', 'dm-caveat'), ('device', 'cv "odd\\name\nx')]

        def get(name, *labels):
            return s[(name, frozenset(labels))]
        self.assertEqual(get('smr_clean_seconds_total', *dm0, ('reason', 'foreground')), 1.234)
        self.assertEqual(get('smr_clean_seconds_total', *dm0, ('reason', 'background')), 40.612)
        self.assertEqual(get('smr_band_size_bytes', *dm0), 8192 * 512)
        self.assertEqual(get('smr_cache_size_bytes', *dm0), 8192 * 4096)
        self.assertEqual(get('smr_host_io_bytes_total', *dm0, ('op', 'write')), 1000 * 512)
        self.assertEqual(get('smr_write_amplification_ratio', *dm0), 16.906)
        self.assertEqual(get('smr_cleaning_state', *dm0, ('state', 'clean-fg')), 1)
        self.assertEqual(get('smr_cleaning_state', *dm0, ('state', 'idle')), 0)
        self.assertEqual(get('smr_power_state', *dm0, ('state', 'armed')), 1)
        self.assertEqual(get('smr_power_state', *dm0, ('state', 'on')), 0)
        self.assertEqual(get('smr_power_cut_countdown', *dm0), 47)
        hm0 = [('family', 'dm-smr'), ('device', 'hm0')]
        self.assertEqual(get('smr_power_state', *hm0, ('state', 'cut')), 1)
        self.assertEqual(get('smr_kernel_events_total', ('family', 'dm-smr'),
                             ('result', 'dropped')), 3)
        self.assertEqual(get('smrd_clean_seconds_total', *dm0), 0.412)
        self.assertEqual(get('smrd_cache_level_ratio', *dm0), 0.75)
        self.assertEqual(get('smrd_device_state', *dm0, ('state', 'cleaning')), 1)
        self.assertEqual(get('smrd_last_event_timestamp_seconds', *dm0), 1795340213.0)
        # The escaped device name comes back as it was.
        self.assertEqual(get('smrd_damage_live_blocks_total', *cv), 4)
        self.assertEqual(get('smr_caveat_blocks', *cv), 100)
        # The media fault counters: one family by kind, and two of their own.
        # A cleaning time-out is the drive's own, not a media fault.
        self.assertEqual(get('smr_clean_timeouts_total', *dm0), 46)
        self.assertNotIn(('smr_media_fault_errors_total',
                          frozenset(dm0 + [('kind', 'clean_timeout')])), s)
        self.assertEqual(get('smr_media_fault_errors_total', *cv, ('kind', 'bad_read')), 116)
        self.assertEqual(get('smr_media_fault_remaps_total', *dm0), 43)
        self.assertEqual(get('smr_media_fault_delayed_ios_total', *cv), 120)
        # The second dump record of dm0 (a table loaded beside the live
        # one) is left out rather than repeated.
        self.assertEqual(get('smr_bands', *dm0), 1)

    def test_commit_errors(self):
        # A failed metadata commit (commit_error, errno 5) is counted per
        # device, with its errno, and in the SIGUSR1 summary's fields.
        s = samples(self.render().stdout)
        dm0 = frozenset([('family', 'dm-smr'), ('device', 'dm0')])
        self.assertEqual(s[('smrd_commit_errors_total', dm0)], 1)
        self.assertEqual(s[('smrd_last_commit_errno', dm0)], 5)
        src = read(os.path.join(ROOT, 'userspace', 'smrd', 'smrd.c'))
        self.assertIn('rec_add_u64(&r, "commit_errors"', src)

    def test_metrics_only_for_their_model(self):
        # smrd's event metrics exist for the model whose events they
        # count: cleaning for drive-managed, zone errors for host-managed,
        # damage for caveat devices; never a series that can only be 0.
        s = samples(self.render().stdout)
        by_dev = {}
        for name, labels in s:
            d = dict(labels).get('device')
            if d is not None and name.startswith('smrd_'):
                by_dev.setdefault(d, set()).add(name)
        cv = 'cv "odd\\name\nx'
        dm_only = {'smrd_device_state', 'smrd_cache_level_ratio', 'smrd_clean_io_bytes_total',
                   'smrd_cleanings_started_total', 'smrd_cleanings_total',
                   'smrd_clean_seconds_total', 'smrd_cache_level_events_total',
                   'smrd_idle_cleans_total', 'smrd_last_idle_clean_seconds',
                   'smrd_commit_errors_total', 'smrd_last_commit_errno'}
        self.assertLessEqual(dm_only, by_dev['dm0'])
        self.assertEqual(dm_only & by_dev['hm0'], set())
        self.assertEqual(dm_only & by_dev[cv], set())
        self.assertIn('smrd_zone_errors_total', by_dev['hm0'])
        self.assertNotIn('smrd_zone_errors_total', by_dev['dm0'] | by_dev[cv])
        self.assertIn('smrd_damage_events_total', by_dev[cv])
        self.assertNotIn('smrd_damage_events_total', by_dev['dm0'] | by_dev['hm0'])

    def test_help_names_the_twin(self):
        # Cleaning time and bytes appear twice, from the kernel's counters
        # and from the events: each HELP says which the other one is.
        helps = dict(re.findall(r'^# HELP (\S+) (.*)$', self.render().stdout, re.M))
        for a, b in (('smr_clean_seconds_total', 'smrd_clean_seconds_total'),
                     ('smr_clean_io_bytes_total', 'smrd_clean_io_bytes_total')):
            self.assertIn(b, helps[a])
            self.assertIn(a, helps[b])

    @unittest.skipUnless(os.environ.get('PROMTOOL') or shutil.which('promtool'),
                         'promtool not installed (set PROMTOOL=path to use one)')
    def test_promtool(self):
        promtool = os.environ.get('PROMTOOL') or shutil.which('promtool')
        p = subprocess.run([promtool, 'check', 'metrics'], input=self.render().stdout,
                           capture_output=True, text=True, timeout=60)
        self.assertEqual((p.returncode, p.stdout + p.stderr), (0, ''))


@unittest.skipUnless(os.access(SMRD, os.X_OK), 'userspace/smrd/smrd not built (make -C userspace)')
class DaemonCase(unittest.TestCase):
    """smrd itself, which runs without the modules (it waits for them)."""

    def start(self, *args):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp, True)
        self.err = open(os.path.join(self.tmp, 'stderr'), 'w+')
        self.addCleanup(self.err.close)
        p = subprocess.Popen([SMRD, '--json', os.path.join(self.tmp, 'events.json')] +
                             list(args), stdout=subprocess.DEVNULL, stderr=self.err)
        self.addCleanup(self.stop, p)
        return p

    def stop(self, p):
        if p.poll() is None:
            p.terminate()
            p.wait(10)

    def stderr(self):
        with open(self.err.name) as f:
            return f.read()

    def wait_for(self, cond, timeout=5):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return True
            time.sleep(0.02)
        return False

    def connects(self, port):
        try:
            socket.create_connection(('127.0.0.1', port), timeout=1).close()
            return True
        except OSError:
            return False

    def test_idle_clients_block_nothing(self):
        port = free_port()
        p = self.start('--metrics', '127.0.0.1:%d' % port)
        self.assertTrue(self.wait_for(lambda: self.connects(port)), self.stderr())
        # More idle clients than smrd has slots: each connects and says nothing.
        idle = [socket.create_connection(('127.0.0.1', port), timeout=5) for _ in range(20)]
        self.addCleanup(lambda: [s.close() for s in idle])
        t = time.monotonic()
        head, body = http_get(port)
        self.assertLess(time.monotonic() - t, 0.5)
        self.assertTrue(head.startswith('HTTP/1.0 200'), head)
        self.assertIn('Content-Type: text/plain; version=0.0.4', head)
        self.assertEqual(check_exposition(body), [])
        self.assertIn('smrd_family_loaded{family="dm-smr"}', body)
        # Signals (the event loop) are handled at once meanwhile.
        t = time.monotonic()
        p.send_signal(signal.SIGUSR1)
        self.assertTrue(self.wait_for(lambda: 'smrd: 0 events' in self.stderr(), 0.5),
                        self.stderr())
        self.assertLess(time.monotonic() - t, 0.5)
        self.assertEqual(http_get(port, '/nothing')[0].split('\r\n')[0],
                         'HTTP/1.0 404 Not Found')
        # A query string (as Prometheus may add) is still the metrics page.
        head, body = http_get(port, '/metrics?name=x')
        self.assertTrue(head.startswith('HTTP/1.0 200'), head)
        self.assertIn('charset=utf-8', head)
        p.terminate()
        self.assertEqual(p.wait(5), 0)

    def test_head(self):
        port = free_port()
        self.start('--metrics', '127.0.0.1:%d' % port)
        self.assertTrue(self.wait_for(lambda: self.connects(port)), self.stderr())
        head, body = http_get(port, method='HEAD')
        self.assertTrue(head.startswith('HTTP/1.0 200'), head)
        self.assertEqual(body, '')
        length = int(re.search(r'Content-Length: (\d+)', head).group(1))
        self.assertGreater(length, 0)
        head, body = http_get(port)
        self.assertEqual(len(body.encode()), int(re.search(r'Content-Length: (\d+)', head).group(1)))
        self.assertTrue(http_get(port, method='POST')[0].startswith('HTTP/1.0 405'))

    def test_localhost(self):
        port = free_port()
        self.start('--metrics', 'localhost:%d' % port)
        self.assertTrue(self.wait_for(lambda: self.connects(port)), self.stderr())
        self.assertTrue(http_get(port)[0].startswith('HTTP/1.0 200'))

    @unittest.skipUnless(socket.has_ipv6, 'no IPv6')
    def test_ipv6_loopback(self):
        try:
            with socket.socket(socket.AF_INET6) as s:
                s.bind(('::1', 0))
                port = s.getsockname()[1]
        except OSError:
            self.skipTest('no ::1 here')
        self.start('--metrics', '[::1]:%d' % port)
        ok = self.wait_for(lambda: http_ok6(port))
        self.assertTrue(ok, self.stderr())
        head, body = http_get(port, host='::1')
        self.assertTrue(head.startswith('HTTP/1.0 200'), head)
        self.assertIn('smrd_events_total', body)

    def test_metrics_address_refused(self):
        for bad, says in (('[2001:db8::1]:9433', 'not the loopback'),
                          ('10.0.0.1:9433', 'not a loopback'),
                          ('::1:9433', 'in brackets'), ('[::1]:0', 'ADDRESS:PORT'),
                          ('example.org:9433', 'not an IPv4 address')):
            r = subprocess.run([SMRD, '--json', '/dev/null', '--metrics', bad],
                               capture_output=True, text=True, timeout=10)
            self.assertEqual(r.returncode, 1, bad)
            self.assertIn(says, r.stderr, bad)

    def test_textfile_replaced_atomically(self):
        path = os.path.join(tempfile.mkdtemp(), 'smrd.prom')
        self.addCleanup(shutil.rmtree, os.path.dirname(path), True)
        p = self.start('--textfile', path, '--interval', '1')
        self.assertTrue(self.wait_for(lambda: os.path.exists(path)), self.stderr())
        inodes, reads = set(), 0
        end = time.monotonic() + 2.5
        while time.monotonic() < end:
            # Opened at any moment, the file is a whole exposition.
            with open(path) as f:
                text = f.read()
                inodes.add(os.fstat(f.fileno()).st_ino)
            self.assertEqual(check_exposition(text), [])
            self.assertIn('smrd_events_total 0\n', text)
            reads += 1
        self.assertGreater(len(inodes), 1, 'not rewritten by rename in 2.5 s')
        self.assertEqual(os.stat(path).st_mode & 0o777, 0o644)
        p.terminate()
        self.assertEqual(p.wait(5), 0)
        self.assertFalse(os.path.exists(path + '.tmp'))

    def test_textfile_error_said_once(self):
        p = self.start('--textfile', '/nonexistent/dir/smrd.prom', '--interval', '1')
        self.assertTrue(self.wait_for(lambda: 'No such file' in self.stderr()))
        time.sleep(1.3)
        self.assertEqual(self.stderr().count('--textfile'), 1, self.stderr())
        self.assertIsNone(p.poll())

    def test_interval_refused(self):
        for bad in ('0', 'x', '86401'):
            p = subprocess.run([SMRD, '--textfile', '/dev/null', '--interval', bad],
                               capture_output=True, text=True, timeout=10)
            self.assertEqual(p.returncode, 2, bad)
            self.assertIn('--interval', p.stderr)


def offline_analyze():
    """systemd-analyze if it has security --offline, else None."""
    exe = shutil.which('systemd-analyze')
    if not exe:
        return None
    p = subprocess.run([exe, 'security', '--help'], capture_output=True, text=True)
    return exe if '--offline' in p.stdout else None


class UnitCase(unittest.TestCase):
    @unittest.skipUnless(offline_analyze(), 'systemd-analyze without security --offline')
    def test_exposure_below_4(self):
        with tempfile.TemporaryDirectory() as d:
            unit = os.path.join(d, 'smrd.service')
            with open(UNIT_IN) as f, open(unit, 'w') as out:
                out.write(f.read().replace('@SBINDIR@', '/usr/sbin'))
            p = subprocess.run([offline_analyze(), 'security', '--offline=true', unit],
                               capture_output=True, text=True, timeout=60)
        m = re.search(r'Overall exposure level for smrd.service: (\d+\.\d+)', p.stdout)
        self.assertTrue(m, p.stdout + p.stderr)
        self.assertLess(float(m.group(1)), 4.0, p.stdout)

    def test_unit_keeps_what_smrd_needs(self):
        text = read(UNIT_IN)
        for line in ('LogsDirectory=smrd', 'RuntimeDirectory=smrd',
                     'RestrictAddressFamilies=AF_NETLINK AF_UNIX AF_INET AF_INET6',
                     'CapabilityBoundingSet=\n'):
            self.assertIn(line, text)


if __name__ == '__main__':
    unittest.main()
