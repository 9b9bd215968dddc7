# SPDX-License-Identifier: GPL-2.0
"""fio's output as a run directory keeps it: the JSON document (local
or client/server) summed over jobs and hosts, and the bandwidth logs
(bw_bw.N.log[.HOST]) added up into per-second MiB/s.
"""

import json
import os
import re


# ------------------------------------------------------- fio output ---

def load_fio_json(path):
    """fio's JSON output; text fio printed before the JSON (warnings) is
    skipped."""
    with open(path, errors="replace") as f:
        text = f.read()
    i = text.find("{")
    if i < 0:
        raise ValueError("%s: no JSON in fio's output" % path)
    return json.JSONDecoder().raw_decode(text[i:])[0]


def fio_jobs(j):
    """Per-job entries of a fio JSON document: "jobs" locally,
    "client_stats" in client/server mode (without the "All clients"
    aggregate). Each gets "host" (None locally)."""
    out = []
    if "client_stats" in j:
        for e in j["client_stats"]:
            if e.get("jobname") == "All clients":
                continue
            e = dict(e)
            e["host"] = e.get("hostname")
            out.append(e)
    else:
        for e in j.get("jobs", []):
            e = dict(e)
            e["host"] = None
            out.append(e)
    return out


def fio_summary(j):
    """Totals over every job (and host) of a fio JSON document."""
    jobs = fio_jobs(j)
    s = {"fio_jobs": len(jobs), "fio_hosts": len({e["host"] for e in jobs if e["host"]}),
         "read_mib": 0.0, "write_mib": 0.0, "read_mibs": 0.0, "write_mibs": 0.0,
         "read_iops": 0.0, "write_iops": 0.0, "fio_errors": 0, "fio_fatal": 0,
         "fio_runtime_s": 0.0,
         "write_lat_ms_mean": None, "write_clat_ms_p99": None, "phases": []}
    lat_w, lat_n = 0.0, 0
    p99 = []
    for e in jobs:
        rd, wr = e.get("read", {}), e.get("write", {})
        s["read_mib"] += rd.get("io_kbytes", 0) / 1024.0
        s["write_mib"] += wr.get("io_kbytes", 0) / 1024.0
        s["read_mibs"] += rd.get("bw", 0) / 1024.0
        s["write_mibs"] += wr.get("bw", 0) / 1024.0
        s["read_iops"] += rd.get("iops", 0)
        s["write_iops"] += wr.get("iops", 0)
        s["fio_errors"] += int(e.get("total_err", 0) or 0)
        # a continue_on_error job reports its first error in "error"
        # too: it stopped on one only if it counted none
        s["fio_fatal"] += 1 if e.get("error") and not e.get("total_err") else 0
        s["fio_runtime_s"] = max(s["fio_runtime_s"], e.get("job_runtime", 0) / 1000.0)
        n = wr.get("total_ios", 0)
        if n:
            lat_w += wr.get("lat_ns", {}).get("mean", 0) * n
            lat_n += n
            pc = wr.get("clat_ns", {}).get("percentile", {})
            if "99.000000" in pc:
                p99.append(pc["99.000000"])
        s["phases"].append({"job": e.get("jobname"), "host": e["host"],
                            "read_mibs": rd.get("bw", 0) / 1024.0,
                            "write_mibs": wr.get("bw", 0) / 1024.0,
                            "read_iops": rd.get("iops", 0), "write_iops": wr.get("iops", 0),
                            "error": int(e.get("error", 0) or 0),
                            "counted_errors": int(e.get("total_err", 0) or 0),
                            "runtime_s": e.get("job_runtime", 0) / 1000.0})
    if lat_n:
        s["write_lat_ms_mean"] = lat_w / lat_n / 1e6
    if p99:
        s["write_clat_ms_p99"] = max(p99) / 1e6
    return s


# fio averages its bandwidth log over windows of this many ms. A window
# shorter than the one-second buckets the runner reports keeps a phase
# that ends within a second (a fast caveat fill) in the log: fio drops a
# window it has not finished.
LOG_AVG_MSEC = 100

# An entry this many windows or less after the one before it stands for
# all the time between them: fio's helper thread ran late (a busy guest)
# and measured the rate over the longer window. A longer gap was time
# without I/O, for which fio logs nothing: the entry after it stands for
# one window.
LATE_WINDOWS = 3


def log_avg_msec(job_file, default=1000):
    """The log_avg_msec a run's job file (as run) asked fio for."""
    try:
        with open(job_file) as f:
            for line in f:
                m = re.match(r"\s*log_avg_msec\s*=\s*(\d+)\s*$", line)
                if m:
                    return int(m.group(1))
    except OSError:
        pass
    return default


def read_bw_logs(files, t0_ms, avg_msec=1000):
    """fio bandwidth logs (log_unix_epoch=1, log_avg_msec=avg_msec) -> a
    list of (second since t0, MiB/s read, MiB/s written), summed over
    every job and host, one entry per whole second.

    An entry is the mean rate over the window that ends at its time
    stamp: avg_msec long, or up to the entry before it when fio came
    late (see LATE_WINDOWS). Its KiB (rate x window) are shared out
    among the seconds the window overlaps."""
    buckets = {}
    for f in files:
        last = {}                       # direction -> time of its last entry
        with open(f) as fh:
            for line in fh:
                p = [x.strip() for x in line.split(",")]
                if len(p) < 3 or not p[0].isdigit():
                    continue
                t, kib, ddir = int(p[0]), int(p[1]), int(p[2])
                if ddir not in (0, 1):
                    continue
                win = avg_msec
                if ddir in last and avg_msec < t - last[ddir] <= LATE_WINDOWS * avg_msec:
                    win = t - last[ddir]
                last[ddir] = t
                _share_out(buckets, ddir, t - win - t0_ms, t - t0_ms, kib / 1024.0)
    if not buckets:
        return []
    # from fio's first entry (not t0: fio takes seconds to start under
    # QEMU), gaps inside filled with zeros
    return [(s, buckets.get(s, [0.0, 0.0])[0], buckets.get(s, [0.0, 0.0])[1])
            for s in range(min(buckets), max(buckets) + 1)]


def _share_out(buckets, ddir, start_ms, end_ms, mibs):
    """Add the MiB moved at mibs MiB/s from start_ms to end_ms (since t0)
    to the one-second buckets they fall in (none before t0)."""
    start_ms = max(0, start_ms)
    while start_ms < end_ms:
        sec = int(start_ms // 1000)
        part = min(end_ms, (sec + 1) * 1000) - start_ms
        buckets.setdefault(sec, [0.0, 0.0])[ddir] += mibs * part / 1000.0
        start_ms += part


def bw_log_files(rundir, prefix="bw"):
    out = []
    for f in sorted(os.listdir(rundir)):
        if re.fullmatch(re.escape(prefix) + r"_bw\.\d+\.log(\..+)?", f):
            out.append(os.path.join(rundir, f))
    return out


def first_log_time(path):
    with open(path) as f:
        for line in f:
            p = line.split(",")
            if p and p[0].strip().isdigit():
                return int(p[0])
    return 0
