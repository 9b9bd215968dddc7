# SPDX-License-Identifier: GPL-2.0
"""fio's output as a run directory keeps it: the JSON document (local
or client/server, json+ with latency histograms) summed over jobs and
hosts, latency percentiles from the merged histograms, the bandwidth
logs (bw_bw.N.log[.HOST]) added up into per-second MiB/s, and the
completion-latency histogram logs (lat_clat_hist.N.log[.HOST]) merged
into per-second p50/p99/max; malformed log lines skipped and counted.
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
         "write_lat_ms_mean": None, "write_clat_ms_p99": None,
         "write_clat_p99_from": None, "phases": []}
    lat_w, lat_n = 0.0, 0
    p99 = []
    bins, binned = {}, 0
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
            if wr.get("clat_ns", {}).get("bins"):
                binned += 1
                for ns, c in wr["clat_ns"]["bins"].items():
                    bins[int(ns)] = bins.get(int(ns), 0) + c
        s["phases"].append({"job": e.get("jobname"), "host": e["host"],
                            "read_mibs": rd.get("bw", 0) / 1024.0,
                            "write_mibs": wr.get("bw", 0) / 1024.0,
                            "read_iops": rd.get("iops", 0), "write_iops": wr.get("iops", 0),
                            "error": int(e.get("error", 0) or 0),
                            "counted_errors": int(e.get("total_err", 0) or 0),
                            "runtime_s": e.get("job_runtime", 0) / 1000.0})
    if lat_n:
        s["write_lat_ms_mean"] = lat_w / lat_n / 1e6
    # p99 over every write of every job (and host): from the jobs'
    # latency histograms added up (json+ output), exact as fio's own
    # for one job; without them (an older run) only for a single job,
    # else the largest job's p99 as an upper bound, and said so
    if binned and binned == len(p99):
        s["write_clat_ms_p99"] = bins_percentile(bins, 99.0) / 1e6
        s["write_clat_p99_from"] = "merged histograms"
    elif len(p99) == 1:
        s["write_clat_ms_p99"] = p99[0] / 1e6
        s["write_clat_p99_from"] = "one job"
    elif p99:
        s["write_clat_ms_p99"] = max(p99) / 1e6
        s["write_clat_p99_from"] = "max of jobs (upper bound)"
    return s


def bins_percentile(bins, pct):
    """The pct percentile of a latency histogram {value: count} as fio
    computes it from its buckets: the first bucket at which the running
    count reaches pct % of the total."""
    total = sum(bins.values())
    if not total:
        return None
    run = 0
    for v in sorted(bins):
        run += bins[v]
        if run >= pct / 100.0 * total:
            return v
    return max(bins)


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


def parse_log_line(line):
    """One line of a fio log (time, value, direction, block size[,
    offset[, priority]]) -> (time, value, direction) as ints, None for a
    blank line; ValueError for anything else (a line cut short or
    overwritten when the box crashed: NULs, garbage)."""
    if not line.strip():
        return None
    p = [x.strip() for x in line.split(",")]
    if len(p) < 4 or not all(x.isdigit() for x in p[:4]):
        raise ValueError("not a fio log line")
    return int(p[0]), int(p[1]), int(p[2])


def read_bw_logs(files, t0_ms, avg_msec=1000, skipped=None, offsets=None):
    """fio bandwidth logs (log_unix_epoch=1, log_avg_msec=avg_msec) -> a
    list of (second since t0, MiB/s read, MiB/s written), summed over
    every job and host, one entry per whole second.

    An entry is the mean rate over the window that ends at its time
    stamp: avg_msec long, or up to the entry before it when fio came
    late (see LATE_WINDOWS). Its KiB (rate x window) are shared out
    among the seconds the window overlaps.

    Malformed lines (see parse_log_line) are skipped; with a list as
    skipped, each is appended to it as (file, line number, text).
    offsets: {file: ms to add to its times} (host_offsets)."""
    buckets = {}
    for f in files:
        off = (offsets or {}).get(f, 0)
        last = {}                       # direction -> time of its last entry
        with open(f, errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                try:
                    e = parse_log_line(line)
                except ValueError:
                    if skipped is not None:
                        skipped.append((f, n, line[:40]))
                    continue
                if e is None:
                    continue
                t, kib, ddir = e
                t += off
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


def log_host(path):
    """The host a log came back from in client/server mode (the suffix
    fio adds: bw_bw.1.log.HOST), None for a local log."""
    m = re.search(r"\.log\.(.+)$", os.path.basename(path))
    return m.group(1) if m else None


# Below this, a remote clock is taken to agree with the runner's (NTP):
# the estimate of its start (fio's own start-up, seconds under QEMU) is
# less exact than the clocks themselves.
CLOCK_SKEW_MS = 10000


def host_offsets(j, files, t0_ms, window_ms=1000):
    """Put the logs of remote hosts on the runner's clock: {file: ms to
    add}. A fio server stamps its logs with its own clock (and reports
    its jobs' start on it: "job_start", or "timestamp_ms" less the
    job's runtime, when its JSON has them; else its first log entry less
    one window): when the host's first job start is more than
    CLOCK_SKEW_MS away from t0, when the runner started fio, it is taken
    to be t0. Local logs, and hosts whose clock agrees, keep their times."""
    starts = {}
    for e in fio_jobs(j or {}):
        if not e.get("host"):
            continue
        st = e.get("job_start")
        if not st and e.get("timestamp_ms"):
            st = e["timestamp_ms"] - e.get("job_runtime", 0)
        if st:
            starts[e["host"]] = min(st, starts.get(e["host"], st))
    by_host = {}
    for f in files:
        h = log_host(f)
        if h is not None:
            by_host.setdefault(h, []).append(f)
    out = {}
    for h, fs in by_host.items():
        st = starts.get(h)
        if not st:
            firsts = [first_log_time(f) for f in fs]
            firsts = [x for x in firsts if x]
            if not firsts:
                continue
            st = min(firsts) - window_ms
        if abs(t0_ms - st) <= CLOCK_SKEW_MS:
            continue
        for f in fs:
            out[f] = t0_ms - st
    return out


def log_files(rundir, prefix, kind):
    """fio's logs PREFIX_KIND.N.log[.HOST] in rundir, sorted."""
    pat = re.escape(prefix) + "_" + kind + r"\.\d+\.log(\..+)?"
    return [os.path.join(rundir, f) for f in sorted(os.listdir(rundir)) if re.fullmatch(pat, f)]


def bw_log_files(rundir, prefix="bw"):
    return log_files(rundir, prefix, "bw")


def first_log_time(path):
    with open(path, errors="replace") as f:
        for line in f:
            try:
                e = parse_log_line(line)
            except ValueError:
                continue
            if e:
                return e[0]
    return 0


# ------------------------------------------------ latency histograms ---

# fio's latency histogram (stat.h): FIO_IO_U_PLAT_GROUP_NR groups of
# FIO_IO_U_PLAT_VAL buckets; a histogram log line has the buckets merged
# 2^log_hist_coarseness at a time.
PLAT_BITS = 6
PLAT_VAL = 1 << PLAT_BITS
PLAT_NR = 29 * PLAT_VAL

# The histogram log the job file as run asks for: a line per second per
# job, buckets merged by 4 (each about 6 % wide).
LOG_HIST_MSEC = 1000
LOG_HIST_COARSENESS = 2


def plat_idx_to_val(idx, edge=0.5):
    """The latency (ns) of fio's histogram bucket idx: its low end
    (edge 0), middle (0.5) or high end (1), as fio and its
    tools/hist/fiologparser_hist.py compute it."""
    if idx < (PLAT_VAL << 1):
        return float(idx)
    error_bits = (idx >> PLAT_BITS) - 1
    base = 1 << (error_bits + PLAT_BITS)
    k = idx % PLAT_VAL
    return base + (k + edge) * (1 << error_bits)


def coarse_bin_val(j, coarseness, edge=0.5):
    """The latency (ns) of bucket j of a histogram log line whose
    buckets are fio's merged 2^coarseness at a time."""
    stride = 1 << coarseness
    lo = plat_idx_to_val(j * stride, 0.0)
    hi = plat_idx_to_val(j * stride + stride - 1, 1.0)
    return lo + (hi - lo) * edge


def hist_log_files(rundir, prefix="lat"):
    return log_files(rundir, prefix, "clat_hist")


def read_hist_logs(files, t0_ms, ddir=1, skipped=None, offsets=None):
    """fio completion-latency histogram logs (write_hist_log,
    log_hist_msec, log_unix_epoch=1: "time, direction, block size,
    bucket counts..." with the I/Os completed in the interval that ends
    at time) -> a list of (second since t0, p50, p99, max in ns, I/Os)
    for direction ddir (1: writes), the histograms of every job and host
    added up per second (an interval counts in the second its middle
    falls in). max is the high end of the highest bucket used.
    Malformed lines are skipped (appended to skipped as with
    read_bw_logs); offsets: {file: ms to add to its times}."""
    per_sec = {}
    for f in files:
        off = (offsets or {}).get(f, 0)
        last = None
        with open(f, errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                p = [x.strip() for x in line.split(",")]
                if p and p[-1] == "":
                    p.pop()
                nb = len(p) - 3
                if (nb <= 0 or PLAT_NR % nb or (PLAT_NR // nb) & (PLAT_NR // nb - 1)
                        or not all(x.isdigit() for x in p)):
                    if skipped is not None:
                        skipped.append((f, n, line[:40]))
                    continue
                t, d = int(p[0]) + off, int(p[1])
                if d != ddir:
                    continue
                coarse = (PLAT_NR // nb).bit_length() - 1
                win = LOG_HIST_MSEC if last is None else min(LOG_HIST_MSEC, max(1, t - last))
                last = t
                sec = int((t - win / 2.0 - t0_ms) // 1000)
                h = per_sec.setdefault(sec, {})
                for j, c in enumerate(p[3:]):
                    if c != "0":
                        h[(coarse, j)] = h.get((coarse, j), 0) + int(c)
    out = []
    for sec in sorted(per_sec):
        h = per_sec[sec]
        total = sum(h.values())
        if not total or sec < 0:
            continue
        vals = sorted((coarse_bin_val(j, c), coarse_bin_val(j, c, 1.0), k)
                      for (c, j), k in h.items())
        p50 = p99 = None
        run = 0
        for mid, hi, k in vals:
            run += k
            if p50 is None and run >= 0.5 * total:
                p50 = mid
            if p99 is None and run >= 0.99 * total:
                p99 = mid
        out.append((sec, p50, p99, vals[-1][1], total))
    return out
