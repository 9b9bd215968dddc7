# SPDX-License-Identifier: GPL-2.0
"""Running fio: the job file as run (variables expanded, bandwidth and
latency histogram logs turned on), fio itself (locally or on 'fio --server' clients) in a process group
of its own, its timeout (the whole group killed, the device checked
free) and the progress line while it runs.
"""

import os
import shlex
import signal
import subprocess
import time

from .devices import wait_free
from .fiolog import LOG_AVG_MSEC, LOG_HIST_COARSENESS, LOG_HIST_MSEC
from .matrix import expand_vars


def write_job_file(src, dst, env, bw_prefix="bw", size=None, lat_prefix="lat"):
    """The job file as run: ${VAR} expanded here (so that a fio server
    elsewhere needs no environment) and a [global] section in front that
    turns on the bandwidth logs (LOG_AVG_MSEC windows) and the
    completion-latency histogram logs (LOG_HIST_MSEC) with Unix-epoch
    time stamps
    (and, for a file device, sets its size: a fio server creates the file
    if it is missing; the job's own size= wins)."""
    with open(src) as f:
        text = f.read()
    lines = []
    for line in text.splitlines(True):
        if line.lstrip().startswith((";", "#")):
            lines.append(line)	# comments may mention ${VAR}
        else:
            lines.append(expand_vars(line, env, strict=True, what=os.path.basename(src)))
    body = "".join(lines)
    head = ("; written by fio-jobs/campaign from %s\n[global]\nwrite_bw_log=%s\n"
            "log_avg_msec=%d\nlog_unix_epoch=1\nwrite_hist_log=%s\nlog_hist_msec=%d\n"
            "log_hist_coarseness=%d\n" % (src, bw_prefix, LOG_AVG_MSEC, lat_prefix,
                                            LOG_HIST_MSEC, LOG_HIST_COARSENESS))
    if size:
        head += "size=%d\n" % size
    head += "\n"
    with open(dst, "w") as f:
        f.write(head + body)


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def kill_group(p, grace):
    """Stop fio and its workers: SIGTERM to its process group (fio runs
    in a session of its own), SIGKILL to what is left of the group after
    grace seconds; returns once fio is reaped and the group is gone (or
    after another grace period)."""
    pgid = p.pid
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, max(grace, 1.0))):
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        end = time.time() + wait
        while True:
            p.poll()
            if p.returncode is not None and not _group_alive(pgid):
                return
            if time.time() >= end:
                break
            time.sleep(0.05)
    p.wait()


def parse_client(c):
    """--client HOST[:PORT] -> (host, port or None): a host name, an IPv4
    address, an IPv6 address bare (::1, no port then) or in brackets
    ([::1]:8765)."""
    c = c.strip()
    if c.startswith("["):
        host, sep, rest = c[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError("bad --client %r: use [IPV6]:PORT" % c)
        port = rest[1:] if rest else None
    elif c.count(":") > 1:
        host, port = c, None                   # a bare IPv6 address
    else:
        host, _, port = c.partition(":")
        port = port or None
    if not host or (port is not None and not port.isdigit()):
        raise ValueError("bad --client %r: use HOST, HOST:PORT or [IPV6]:PORT" % c)
    return host, port


def client_arg(c):
    """fio's --client= for HOST[:PORT] (ip6: for an IPv6 address)."""
    host, port = parse_client(c)
    return "--client=%s:%s%s" % ("ip6" if ":" in host else "ip", host,
                                 "," + port if port else "")


class FioRunner:
    """The fio half of the runner (runner.Campaign): uses its fio,
    clients, m (the matrix), progress_s and say()."""

    # seconds between SIGTERM and SIGKILL to fio's process group on a
    # timeout, and the time the device gets to become free (before a
    # run, after a kill)
    kill_grace_s = 5.0

    def check_free(self, dev, mnt, what):
        """Fail the run (RuntimeError) if something still holds the
        device (or a file on its mount) open after kill_grace_s."""
        if not dev:
            return
        left = wait_free(dev, mnt, self.kill_grace_s)
        if left:
            raise RuntimeError("%s: %s still held open by %s" % (
                what, mnt or dev, ", ".join("pid %d (%s)" % x for x in left)))

    def run_fio(self, run, rundir, jobf, t0, sampler, dev=None, mnt=None):
        """Run fio on the job file; dev (and mnt), when fio runs here:
        the device it uses, which must be free before and after."""
        args = [self.fio, "--eta=never", "--output-format=json+", "--output=fio.json"]
        if self.clients:
            for c in self.clients:
                args += [client_arg(c), jobf]
        else:
            args.append(jobf)
        timeout = float(run["jobopts"].get("timeout", self.m.campaign.get("timeout", 3600)))
        with open(os.path.join(rundir, "fio.cmd"), "w") as f:
            f.write(" ".join(shlex.quote(a) for a in args) + "\n")
        self.check_free(dev, mnt, "before fio")
        err = open(os.path.join(rundir, "fio.err"), "w")
        p = subprocess.Popen(args, cwd=rundir, stdout=err, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            rc = self.wait_fio(p, t0, timeout, sampler)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM from a harness's timeout, an
            # error): fio is in a session of its own, so nothing else
            # would stop it; it must not go on writing to the device.
            kill_group(p, 1.0)
            raise
        finally:
            err.close()
        if rc is None:
            kill_group(p, self.kill_grace_s)
            self.check_free(dev, mnt, "fio ran longer than %d s (timeout), killed with "
                            "its workers, but" % timeout)
            raise RuntimeError("fio ran longer than %d s (timeout): killed with its workers"
                               % timeout)
        out = {"fio_rc": rc}
        if rc != 0:
            with open(os.path.join(rundir, "fio.err"), errors="replace") as f:
                tail = f.read().strip()[-300:]
            out["status"] = "fio failed"
            out["error"] = "fio exit %d: %s" % (rc, tail.replace("\n", " | "))
        return out

    def wait_fio(self, p, t0, timeout, sampler):
        """fio's exit status, or None once it has run past timeout; prints
        progress every progress_s seconds."""
        last = time.time()
        prev = None
        while True:
            try:
                return p.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
            now = time.time()
            if now - t0 > timeout:
                return None
            if self.progress_s and now - last >= self.progress_s:
                s = sampler.last if sampler else None
                self.say("  fio %3.0f s%s" % (now - t0, progress_text(s, prev)))
                prev = s
                last = now


def progress_text(s, prev):
    if not s:
        return ""
    if "cache_used" in s:
        pct = 100.0 * s["cache_used"] / s["cache_total"] if s.get("cache_total") else 0
        txt = ", cache %.0f%%, state %s, rmw fg %s bg %s" % (pct, s["state"], s["rmw_fg"], s["rmw_bg"])
        key = "host_write_sectors"
    elif "write_sectors" in s:
        txt = ", zones full %s, wp_errors %s" % (s["full"], s["wp_errors"])
        key = "write_sectors"
    else:
        txt = ", valid blocks %s, live damaged %s" % (s["valid_blocks"], s["live_damaged_blocks"])
        key = None
    if prev and key and s["t"] > prev["t"]:
        txt = ", %.1f MiB/s written" % ((s[key] - prev[key]) / 2048.0 / (s["t"] - prev["t"])) + txt
    return txt
