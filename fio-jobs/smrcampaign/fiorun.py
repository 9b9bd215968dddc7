# SPDX-License-Identifier: GPL-2.0
"""Running fio: the job file as run (variables expanded, bandwidth logs
turned on), fio itself (locally or on 'fio --server' clients) with its
timeout and the progress line while it runs.
"""

import os
import shlex
import subprocess
import time

from .fiolog import LOG_AVG_MSEC
from .matrix import expand_vars


def write_job_file(src, dst, env, bw_prefix="bw", size=None):
    """The job file as run: ${VAR} expanded here (so that a fio server
    elsewhere needs no environment) and a [global] section in front that
    turns on the bandwidth logs (LOG_AVG_MSEC windows) with Unix-epoch time
    stamps
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
            "log_avg_msec=%d\nlog_unix_epoch=1\n" % (src, bw_prefix, LOG_AVG_MSEC))
    if size:
        head += "size=%d\n" % size
    head += "\n"
    with open(dst, "w") as f:
        f.write(head + body)


class FioRunner:
    """The fio half of the runner (runner.Campaign): uses its fio,
    clients, m (the matrix), progress_s and say()."""

    def run_fio(self, run, rundir, jobf, t0, sampler):
        args = [self.fio, "--eta=never", "--output-format=json", "--output=fio.json"]
        if self.clients:
            for c in self.clients:
                host, _, port = c.partition(":")
                args += ["--client=ip:%s%s" % (host, "," + port if port else ""), jobf]
        else:
            args.append(jobf)
        timeout = float(run["jobopts"].get("timeout", self.m.campaign.get("timeout", 3600)))
        with open(os.path.join(rundir, "fio.cmd"), "w") as f:
            f.write(" ".join(shlex.quote(a) for a in args) + "\n")
        err = open(os.path.join(rundir, "fio.err"), "w")
        p = subprocess.Popen(args, cwd=rundir, stdout=err, stderr=subprocess.STDOUT)
        last = time.time()
        prev = None
        while True:
            try:
                rc = p.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                pass
            now = time.time()
            if now - t0 > timeout:
                p.kill()
                p.wait()
                raise RuntimeError("fio ran longer than %d s (timeout)" % timeout)
            if self.progress_s and now - last >= self.progress_s:
                s = sampler.last if sampler else None
                self.say("  fio %3.0f s%s" % (now - t0, progress_text(s, prev)))
                prev = s
                last = now
        err.close()
        out = {"fio_rc": rc}
        if rc != 0:
            tail = open(os.path.join(rundir, "fio.err"), errors="replace").read().strip()[-300:]
            out["status"] = "fio failed"
            out["error"] = "fio exit %d: %s" % (rc, tail.replace("\n", " | "))
        return out


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
