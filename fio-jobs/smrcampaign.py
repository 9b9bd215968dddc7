# SPDX-License-Identifier: GPL-2.0
"""fio workload campaigns on emulated SMR devices (fio-jobs/campaign).

A campaign is a matrix (an INI file, docs/campaigns.md): jobs x devices x
parameters. For every cell the runner creates the device (smrctl, or
dmsetup when smrctl is missing), optionally makes and mounts a file
system, runs one fio job file with JSON output and per-second bandwidth
logs while it samples ``dmsetup status`` and records smrd's events, waits
for cleaning (``smrctl wait-clean``, or by polling the status), removes
the device, and at the end writes one results directory: a summary
(CSV, JSON, text) and the plots (smrplot.py).

Only the standard library is used here; matplotlib only in smrplot.
"""

import configparser
import csv
import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# ----------------------------------------------------------- status ---

# Status fields after "<start> <len> <target>" (docs/dm-smr.rst,
# docs/dm-caveat.rst, /tmp/dm-spec.md). "cache" is "used/total" in the
# line; it is split into cache_used and cache_total.
DM_FIELDS = ["mode", "nr_bands", "band_sectors", "cache", "cache_live",
             "index_extents", "index_bytes", "dirty_bands", "rmw_bg", "rmw_fg",
             "rmw_manual", "bg_aborts", "clean_read_sectors",
             "clean_write_sectors", "clean_ms_bg", "clean_ms_fg",
             "clean_ms_since_busy", "host_read_sectors", "host_write_sectors",
             "cache_write_sectors", "bypass_write_sectors", "wa", "state",
             "policy", "commits", "errors", "mem_bytes"]
HM_FIELDS = ["mode", "nr_zones", "conv_zones", "imp_open", "exp_open",
             "closed", "full", "readonly", "offline", "writes",
             "write_sectors", "reads", "read_sectors", "resets", "finishes",
             "opens", "closes", "imp_closes", "wp_errors", "errors", "commits",
             "mem_bytes"]
CV_FIELDS = ["writes", "damaging_writes", "damaged_blocks",
             "live_damage_writes", "live_damaged_blocks", "damaged_reads",
             "valid_blocks", "commits", "mem_bytes"]
STRING_FIELDS = ("mode", "state", "policy")

DM_MODELS = ("drive-managed", "host-managed", "caveat")
MODELS = DM_MODELS + ("file", "existing")


def _num(v):
    try:
        return int(v)
    except ValueError:
        try:
            return float(v)
        except ValueError:
            return v


def parse_status(line):
    """One ``dmsetup status`` line -> dict of named fields (numbers as
    int/float, wa as float, cache split into cache_used/cache_total, plus
    "target"). Returns None for a line it does not know."""
    w = line.split()
    if len(w) < 4:
        return None
    target, rest = w[2], w[3:]
    if target == "smr" and rest[0] == "drive-managed" and len(rest) >= len(DM_FIELDS):
        names = DM_FIELDS
    elif target == "smr" and rest[0] == "host-managed" and len(rest) >= len(HM_FIELDS):
        names = HM_FIELDS
    elif target == "caveat" and len(rest) >= len(CV_FIELDS):
        names = CV_FIELDS
    else:
        return None
    d = {"target": target}
    for n, v in zip(names, rest):
        if n == "cache":
            u, _, t = v.partition("/")
            d["cache_used"], d["cache_total"] = int(u), int(t)
        elif n in STRING_FIELDS:
            d[n] = v
        else:
            d[n] = _num(v)
    if target == "caveat":
        d["mode"] = "caveat"
    return d


# ------------------------------------------------------------ sizes ---

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
          "s": 512}


def parse_size(s):
    """'16M' -> bytes (K/M/G/T binary, optional iB/B; 's' = 512-byte
    sectors; a bare number is bytes)."""
    m = re.fullmatch(r"\s*(\d+)\s*([kmgtsb]?)(?:i?b)?\s*", str(s), re.I)
    if not m:
        raise ValueError("bad size %r (use e.g. 512M, 4G, 2048s)" % (s,))
    return int(m.group(1)) * _UNITS[m.group(2).lower()]


def sectors(s):
    b = parse_size(s)
    if b % 512:
        raise ValueError("size %r is not a whole number of sectors" % (s,))
    return b // 512


# ----------------------------------------------------------- matrix ---

class MatrixError(Exception):
    pass


def expand_vars(text, env, strict=True, what=""):
    """${NAME} and ${NAME:-default} from env. Unknown names are an error
    (strict) or left alone."""
    def sub(m):
        name, dflt = m.group(1), m.group(3)
        if name in env:
            return str(env[name])
        if dflt is not None:
            return dflt
        if strict:
            raise MatrixError("%s: ${%s} is not set" % (what or "value", name))
        return m.group(0)
    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}", sub, text)


def split_values(v):
    """'fifo, greedy' -> ['fifo', 'greedy']: a comma makes a matrix axis."""
    return [x.strip() for x in v.split(",") if x.strip()]


# Device keys the runner knows; the rest is an error (typos must not be
# silently ignored).
DEVICE_KEYS = {"model", "backing", "path", "size", "band", "cache", "idle_ms",
               "policy", "seq_bypass", "zone", "zone_capacity", "conv",
               "max_open", "max_active", "did", "dnor", "block_size",
               "unshingled", "profile", "fs", "via", "name"}
JOB_KEYS = {"file", "devices", "description", "timeout", "wait_clean"}


class Matrix:
    """The parsed campaign file. ``runs()`` expands it into the list of
    runs (dicts), in file order: for each job, each device it names,
    each combination of the comma-separated values of the device's and
    the job's keys."""

    def __init__(self, path, overrides=(), env=None):
        self.path = path
        env = dict(os.environ if env is None else env)
        cp = configparser.ConfigParser(interpolation=None, delimiters=("=",),
                                       comment_prefixes=(";", "#"),
                                       inline_comment_prefixes=(";",))
        cp.optionxform = str
        try:
            with open(path) as f:
                cp.read_file(f)
        except (OSError, configparser.Error) as e:
            raise MatrixError("%s: %s" % (path, e))
        for o in overrides:
            key, eq, val = o.partition("=")
            sec, dot, k = key.rpartition(".")
            if not eq or not dot or not sec:
                raise MatrixError("--set %r: use SECTION.KEY=VALUE, e.g. 'device dm.cache=32M'" % o)
            if not cp.has_section(sec):
                raise MatrixError("--set %r: no section [%s]" % (o, sec))
            cp.set(sec, k, val)
        self.campaign = {}
        self.devices = {}
        self.jobs = {}
        for sec in cp.sections():
            items = {k: expand_vars(v, env, what="[%s] %s" % (sec, k))
                     for k, v in cp.items(sec)}
            kind, _, name = sec.partition(" ")
            name = name.strip()
            if kind == "campaign" and not name:
                self.campaign = items
            elif kind == "device" and name:
                bad = set(items) - DEVICE_KEYS
                if bad:
                    raise MatrixError("[%s]: unknown key(s) %s (known: %s)" %
                                      (sec, ", ".join(sorted(bad)), ", ".join(sorted(DEVICE_KEYS))))
                model = items.get("model", "")
                if model not in MODELS:
                    raise MatrixError("[%s]: model must be one of %s" % (sec, ", ".join(MODELS)))
                if model in DM_MODELS and "backing" not in items:
                    raise MatrixError("[%s]: a %s device needs 'backing' (the disk under it)" % (sec, model))
                if model in ("file", "existing") and "path" not in items:
                    raise MatrixError("[%s]: a %s device needs 'path'" % (sec, model))
                if model == "file" and "size" not in items:
                    raise MatrixError("[%s]: a file device needs 'size'" % sec)
                self.devices[name] = items
            elif kind == "job" and name:
                if "file" not in items:
                    raise MatrixError("[%s]: needs 'file' (a fio job file)" % sec)
                self.jobs[name] = items
            else:
                raise MatrixError("%s: unknown section [%s] (use [campaign], [device NAME], [job NAME])" % (path, sec))
        if not self.jobs:
            raise MatrixError("%s: no [job NAME] section" % path)
        if not self.devices:
            raise MatrixError("%s: no [device NAME] section" % path)
        self.name = self.campaign.get("name", os.path.splitext(os.path.basename(path))[0])

    def job_file(self, job):
        f = job["file"]
        for base in (os.path.dirname(os.path.abspath(self.path)), HERE, os.getcwd()):
            p = os.path.join(base, f)
            if os.path.isfile(p):
                return p
        raise MatrixError("job file %s not found next to %s nor in %s" % (f, self.path, HERE))

    def runs(self):
        out = []
        for jname, job in self.jobs.items():
            devs = split_values(job.get("devices", ",".join(self.devices)))
            for dname in devs:
                if dname not in self.devices:
                    raise MatrixError("[job %s]: no [device %s]" % (jname, dname))
                dev = self.devices[dname]
                axes = []
                for k, v in dev.items():
                    axes.append(("device", k, split_values(v) or [""]))
                for k, v in job.items():
                    if k in ("devices", "description"):
                        continue
                    axes.append(("job", k, split_values(v) or [""]))
                for combo in itertools.product(*[a[2] for a in axes]):
                    d, j, varied = {}, {}, {}
                    for (where, k, vals), v in zip(axes, combo):
                        (d if where == "device" else j)[k] = v
                        if len(vals) > 1:
                            varied[k] = v
                    out.append({"job": jname, "device": dname, "dev": d,
                                "jobopts": j, "varied": varied,
                                "file": self.job_file(job)})
        for i, r in enumerate(out, 1):
            slug = "-".join("%s=%s" % kv for kv in r["varied"].items())
            r["index"] = i
            r["id"] = re.sub(r"[^A-Za-z0-9_.=-]+", "_",
                             "%02d-%s-%s%s" % (i, r["job"], r["device"], "-" + slug if slug else ""))
        return out


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


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2.0


# ---------------------------------------------------------- timeline ---

def read_status_csv(path):
    """status.csv written by the sampler -> list of dicts (t float)."""
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows.append({k: (_num(v) if k not in STRING_FIELDS else v) for k, v in r.items()})
    return rows


def cleaning_spans(samples):
    """From status samples (t, state): [(t_start, t_end, state)] for the
    periods the device was cleaning (state clean-*), each sample counted
    until the next one."""
    spans = []
    cur = None
    for i, s in enumerate(samples):
        st = s.get("state", "idle")
        t = s["t"]
        t_next = samples[i + 1]["t"] if i + 1 < len(samples) else t + 1.0
        if st and st.startswith("clean"):
            if cur and cur[2] == st and abs(cur[1] - t) < 1e-6:
                cur[1] = t_next
            else:
                if cur:
                    spans.append(tuple(cur))
                cur = [t, t_next, st]
        elif cur:
            spans.append(tuple(cur))
            cur = None
    if cur:
        spans.append(tuple(cur))
    return spans


def event_spans(events, t0):
    """smrd clean_start/clean_done pairs -> [(t_start, t_end, reason)]
    relative to t0 (a start without a done was abandoned: it ends at the
    next start or is dropped)."""
    open_ = {}
    spans = []
    for e in events:
        if e.get("family") != "dm-smr":
            continue
        if e.get("event") == "clean_start":
            open_[e.get("device")] = (e["ts"] - t0, e.get("reason", ""))
        elif e.get("event") == "clean_done":
            st = open_.pop(e.get("device"), None)
            if st:
                spans.append((st[0], e["ts"] - t0, "clean-" + {"idle": "bg", "foreground": "fg"}.get(st[1], st[1])))
    return spans


def read_events(path):
    out = []
    if not os.path.exists(path):
        return out
    with open(path, errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
    return out


def phase_figures(bw, samples, fio_end):
    """The two phases of a drive-managed run: seconds with writes before
    the cache first became full (cache phase) and every second while fio
    ran after that (collapsed), each as the median of the per-second
    write bandwidth.
    Returns (cache_mibs, collapsed_mibs, t_full) or Nones."""
    t_full = t_room = None
    for s in samples:
        if s.get("cache_total") and s.get("cache_used", 0) >= s["cache_total"]:
            t_full = s["t"]
            break
        t_room = s["t"]
    if not bw:
        return None, None, t_full
    # seconds without writes before the cache is full are the job not
    # writing (an idle phase), not the cache
    if t_full is None:
        return median([w for t, r, w in bw if t < fio_end and w > 0]), None, None
    # The cache filled between the last sample with room and t_full: the
    # seconds up to that sample are all cache phase; the one after it
    # may be partly collapse. It counts only when no whole second came
    # before it.
    hi = [w for t, r, w in bw if t_room is not None and t + 1 <= t_room and w > 0]
    if not hi:
        hi = [w for t, r, w in bw if t + 1 <= t_full and w > 0]
    lo = [w for t, r, w in bw if t >= t_full + 2 and t + 1 <= fio_end]
    return median(hi), median(lo), t_full


# ------------------------------------------------------- the runner ---

def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


def find_tool(name, given=None):
    if given:
        return given if os.access(given, os.X_OK) else None
    p = shutil.which(name)
    if p:
        return p
    p = os.path.join(ROOT, "userspace", name)
    return p if os.access(p, os.X_OK) else None


def dm_table(model, dev_path, o):
    """The table line dmsetup gets when smrctl is not used (the sizes
    smrctl would otherwise compute must be given: size, band/zone, ...).
    Always with "format": every run starts from a fresh device."""
    if "size" not in o:
        raise MatrixError("creating a %s device with dmsetup needs 'size'" % model)
    length = sectors(o["size"])
    opt = []
    if model == "drive-managed":
        if "band" not in o:
            raise MatrixError("a drive-managed device needs 'band'")
        head = "smr %s drive-managed %d" % (dev_path, sectors(o["band"]))
        if o.get("cache"):
            opt += ["cache_sectors", str(sectors(o["cache"]))]
        if o.get("idle_ms"):
            opt += ["idle_ms", str(int(o["idle_ms"]))]
        if o.get("policy"):
            opt += ["policy", o["policy"]]
        if o.get("seq_bypass"):
            opt += ["seq_bypass", o["seq_bypass"]]
    elif model == "host-managed":
        if "zone" not in o:
            raise MatrixError("a host-managed device needs 'zone'")
        head = "smr %s host-managed %d" % (dev_path, sectors(o["zone"]))
        for k, name in (("conv", "conv_zones"), ("max_open", "max_open"),
                        ("max_active", "max_active")):
            if o.get(k):
                opt += [name, str(int(o[k]))]
        if o.get("zone_capacity"):
            opt += ["zone_capacity", str(sectors(o["zone_capacity"]))]
    elif model == "caveat":
        head = "caveat %s %d %d" % (dev_path, int(o.get("did", 16)), int(o.get("dnor", 4)))
        for k in ("block_size", "unshingled"):
            if o.get(k):
                opt += [k, str(int(o[k]))]
    else:
        raise MatrixError("no table for model %s" % model)
    opt.append("format")
    return "0 %d %s %d %s" % (length, head, len(opt), " ".join(opt))


def smrctl_create_args(name, model, o):
    a = ["create", name, "--model", model, "--dev", o["backing"], "--format"]
    flags = {"profile": "--profile", "size": "--size", "band": "--band",
             "cache": "--cache", "idle_ms": "--idle-ms", "policy": "--policy",
             "zone": "--zone", "zone_capacity": "--zone-capacity", "conv": "--conv",
             "max_open": "--max-open", "max_active": "--max-active", "did": "--did",
             "dnor": "--dnor", "block_size": "--block-size", "unshingled": "--unshingled"}
    for k, f in flags.items():
        if o.get(k):
            a += [f, o[k]]
    if o.get("seq_bypass") == "off":
        a.append("--no-seq-bypass")
    return a


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


class Sampler(threading.Thread):
    """Reads ``dmsetup status NAME`` every period into status.csv (t =
    seconds since t0) and keeps the last sample for the progress line."""

    def __init__(self, name, path, t0, period):
        super().__init__(daemon=True)
        self.name, self.path, self.t0, self.period = name, path, t0, period
        self.stop_ev = threading.Event()
        self.last = None
        self.rows = 0

    def sample(self):
        return status_once(self.name)

    def run(self):
        writer = None
        with open(self.path, "w", newline="") as f:
            while not self.stop_ev.is_set():
                t = time.time() - self.t0
                s = self.sample()
                if s:
                    s = dict(s, t=round(t, 3))
                    if writer is None:
                        cols = ["t"] + [k for k in s if k != "t"]
                        writer = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
                        writer.writeheader()
                    writer.writerow(s)
                    f.flush()
                    self.last = s
                    self.rows += 1
                self.stop_ev.wait(max(0.05, self.period - (time.time() - self.t0 - t)))

    def stop(self):
        self.stop_ev.set()
        self.join(timeout=60)


def status_once(name):
    """The device's status now, parsed (None if unreadable)."""
    try:
        out = subprocess.run(["dmsetup", "status", name], capture_output=True,
                             text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return parse_status(out.splitlines()[0]) if out else None


def run_cmd(args, what, timeout=600, check=True, **kw):
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired:
        raise RuntimeError("%s: timed out after %d s: %s" % (what, timeout, " ".join(args)))
    except OSError as e:
        raise RuntimeError("%s: %s: %s" % (what, args[0], e))
    if check and p.returncode != 0:
        raise RuntimeError("%s failed (exit %d): %s\n%s%s" % (
            what, p.returncode, " ".join(shlex.quote(a) for a in args), p.stdout, p.stderr))
    return p


class Campaign:
    def __init__(self, matrix, out, clients=(), smrctl=None, use_smrctl=True,
                 smrd=None, use_smrd=True, sample_s=1.0, progress_s=10.0,
                 plots=True, fio="fio", mnt_root="/tmp/campaign-mnt"):
        self.m = matrix
        self.out = out
        self.clients = list(clients)
        self.smrctl = find_tool("smrctl", smrctl) if use_smrctl else None
        self.smrd = find_tool("smrd", smrd) if use_smrd else None
        self.sample_s = sample_s
        self.progress_s = progress_s
        self.plots = plots
        self.fio = fio
        self.mnt_root = mnt_root
        self.t_start = time.time()
        self.rows = []
        self.loopdev = None

    def say(self, msg):
        log("[%5ds] %s" % (time.time() - self.t_start, msg))

    # -- devices --------------------------------------------------------
    def dm_name(self, run):
        return run["dev"].get("name") or ("cmp_%s" % run["device"])

    def create(self, run, rundir):
        """Create the run's device; returns (name or None, path, how)."""
        o = run["dev"]
        model = o["model"]
        if model == "existing":
            return None, o["path"], "existing"
        if model == "file":
            with open(o["path"], "ab") as f:
                f.truncate(parse_size(o["size"]))
            return None, o["path"], "file"
        self.ensure_target(model)
        name = self.dm_name(run)
        if run_cmd(["dmsetup", "info", name], "dmsetup info", check=False).returncode == 0:
            raise RuntimeError("a dm device %s exists already: remove it (dmsetup remove %s)" % (name, name))
        via = o.get("via", "smrctl" if self.smrctl else "dmsetup")
        if via == "smrctl" and not self.smrctl:
            raise RuntimeError("device %s asks for smrctl (via = smrctl), which is not built: make -C userspace" % run["device"])
        if via == "smrctl":
            args = [self.smrctl] + smrctl_create_args(name, model, o)
            p = run_cmd(args, "smrctl create")
            how = "smrctl: " + " ".join(args[1:])
            with open(os.path.join(rundir, "create.txt"), "w") as f:
                f.write(how + "\n" + p.stdout + p.stderr)
        else:
            table = dm_table(model, o["backing"], o)
            run_cmd(["dmsetup", "create", name, "--table", table], "dmsetup create")
            how = "dmsetup: " + table
            with open(os.path.join(rundir, "create.txt"), "w") as f:
                f.write(how + "\n")
        run_cmd(["udevadm", "settle"], "udevadm settle", check=False)
        table = run_cmd(["dmsetup", "table", name], "dmsetup table").stdout.strip()
        with open(os.path.join(rundir, "table.txt"), "w") as f:
            f.write(table + "\n")
        return name, "/dev/mapper/" + name, how

    def ensure_target(self, model):
        """Load the module of the model's target if dmsetup does not list
        it: modprobe, else insmod the module built in this tree (as
        tests/lib/guest-suite.sh does, dependencies first)."""
        target, mod = ("caveat", "dm-caveat") if model == "caveat" else ("smr", "dm-smr")

        def have():
            out = run_cmd(["dmsetup", "targets"], "dmsetup targets", check=False).stdout
            return any(line.split()[:1] == [target] for line in out.splitlines())
        if have():
            return
        run_cmd(["modprobe", "dm-mod"], "modprobe", check=False)
        if run_cmd(["modprobe", mod], "modprobe", check=False).returncode != 0:
            ko = os.path.join(ROOT, mod, mod + ".ko")
            if os.path.exists(ko):
                deps = run_cmd(["modinfo", "-F", "depends", ko], "modinfo", check=False).stdout
                for d in deps.strip().split(","):
                    if d:
                        run_cmd(["modprobe", d], "modprobe", check=False)
                p = run_cmd(["insmod", ko], "insmod", check=False)
                if p.returncode != 0:
                    raise RuntimeError("insmod %s: %s" % (ko, p.stderr.strip()))
                self.say("loaded %s" % ko)
        if not have():
            raise RuntimeError("the %s target is not available: build and load %s "
                               "(make; modprobe %s or insmod %s/%s.ko)" % (target, mod, mod, mod, mod))

    def remove(self, name):
        if not name:
            return
        if self.smrctl:
            p = run_cmd([self.smrctl, "remove", name], "smrctl remove", check=False)
            if p.returncode == 0:
                return
        run_cmd(["dmsetup", "remove", "--retry", name], "dmsetup remove", check=False)

    def wait_clean(self, name, timeout, use_smrctl):
        """Wait until the drive-managed device is idle with an empty
        cache, with smrctl wait-clean if the device was made by smrctl,
        else by polling its status. Returns (seconds waited, cleaning
        seconds, how)."""
        t0 = time.time()
        if use_smrctl and self.smrctl:
            p = run_cmd([self.smrctl, "wait-clean", name, "--timeout", str(int(timeout))],
                        "smrctl wait-clean", timeout=timeout + 60, check=False)
            m = re.search(r"clean after ([\d.]+) s; cleaning time ([\d.]+) s", p.stdout)
            if p.returncode == 0 and m:
                return float(m.group(1)), float(m.group(2)), "smrctl wait-clean"
            self.say("  smrctl wait-clean: exit %d: %s %s" % (p.returncode, p.stdout.strip(), p.stderr.strip()))
            if p.returncode != 0:
                return time.time() - t0, None, "smrctl wait-clean (failed or timed out)"
        # dmsetup fallback: poll the status.
        while True:
            s = status_once(name)
            if s and s.get("cache_used") == 0 and s.get("state") == "idle":
                return time.time() - t0, s.get("clean_ms_since_busy", 0) / 1000.0, "dmsetup status polling"
            if time.time() - t0 > timeout:
                return time.time() - t0, None, "dmsetup status polling (timed out)"
            time.sleep(min(1.0, self.sample_s))

    def start_smrd(self, rundir):
        """smrd recording this run's events; waits until it subscribed."""
        ev = os.path.join(rundir, "events.json")
        with open(os.path.join(rundir, "smrd.err"), "w") as err:
            p = subprocess.Popen([self.smrd, "--json", ev], stdout=subprocess.DEVNULL, stderr=err)
        for _ in range(100):
            try:
                with open(ev, errors="replace") as f:
                    if '"subscribed"' in f.read():
                        return p
            except OSError:
                pass
            if p.poll() is not None:
                self.say("  smrd exited (%d): events not recorded" % p.returncode)
                return None
            time.sleep(0.1)
        self.say("  smrd did not subscribe within 10 s: events may be missing")
        return p

    def mkfs_mount(self, run, path):
        fs = run["dev"].get("fs", "none") or "none"
        if fs == "none":
            return None
        if fs != "ext4":
            raise RuntimeError("fs = %s: only ext4 (or none) is supported" % fs)
        # No lazy init: the inode tables and journal are written now, not
        # in the background while the job runs.
        if os.path.isfile(path):
            # a file: through a loop device of our own (mount's automatic
            # loop set-up is refused in some environments, e.g. the VM)
            run_cmd(["modprobe", "loop"], "modprobe loop", check=False)
            path = run_cmd(["losetup", "--find", "--show", path],
                           "losetup").stdout.strip()
            self.loopdev = path
        run_cmd(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", path],
                "mkfs.ext4", timeout=1800)
        mnt = os.path.join(self.mnt_root, run["device"])
        os.makedirs(mnt, exist_ok=True)
        run_cmd(["mount", path, mnt], "mount")
        return mnt

    # -- one run --------------------------------------------------------
    def run_one(self, run, total):
        rid = run["id"]
        rundir = os.path.join(self.out, "runs", rid)
        os.makedirs(rundir, exist_ok=True)
        o, model = run["dev"], run["dev"]["model"]
        row = {"run": rid, "job": run["job"], "device": run["device"], "model": model,
               "jobfile": os.path.basename(run["file"]), "status": "ok", "error": ""}
        for k in ("size", "band", "cache", "idle_ms", "policy", "seq_bypass", "zone",
                  "conv", "max_open", "did", "dnor", "fs", "profile"):
            row[k] = o.get(k, "")
        row["varied"] = " ".join("%s=%s" % kv for kv in run["varied"].items())
        desc = ", ".join("%s=%s" % kv for kv in run["varied"].items())
        self.say("run %d/%d %s: job %s on %s (%s)%s" % (
            run["index"], total, rid, run["job"], run["device"], model, " [%s]" % desc if desc else ""))
        name = mnt = sampler = smrd = None
        try:
            if self.clients and model not in ("file", "existing"):
                raise RuntimeError("with --client the runner cannot create %s devices on the "
                                   "remote boxes: use model = file or existing there" % model)
            if self.clients:
                path, how = o["path"], "remote " + model
            else:
                name, path, how = self.create(run, rundir)
            row["created"] = how
            mnt = None if self.clients else self.mkfs_mount(run, path)
            wait_to = float(run["jobopts"].get("wait_clean", self.m.campaign.get("wait_clean", 900)))
            if name and model == "drive-managed" and mnt:
                # start the job with an empty cache: mkfs's writes cleaned
                w, c, _ = self.wait_clean(name, wait_to, how.startswith("smrctl"))
                self.say("  mkfs cleaned in %.1f s" % w)
            if name:
                run_cmd(["dmsetup", "message", name, "0", "clear_stats"], "clear_stats", check=False)
            env = {k: v for k, v in run["jobopts"].items() if k not in JOB_KEYS}
            env["DEV"] = path
            if mnt:
                env["DIR"] = mnt
            env.setdefault("NAME", name or run["device"])
            jobf = os.path.join(rundir, "job.fio")
            write_job_file(run["file"], jobf, dict(os.environ, **env),
                           size=parse_size(o["size"]) if model == "file" else None)
            with open(os.path.join(rundir, "run.json"), "w") as f:
                json.dump({"run": rid, "job": run["job"], "device": run["device"],
                           "device_options": o, "job_options": run["jobopts"],
                           "jobfile": run["file"], "env": env, "created": how,
                           "clients": self.clients}, f, indent=1)
            if self.smrd and name:
                smrd = self.start_smrd(rundir)
            t0 = time.time()
            with open(os.path.join(rundir, "t0"), "w") as f:
                f.write("%.0f\n" % (t0 * 1000))
            if name:
                sampler = Sampler(name, os.path.join(rundir, "status.csv"), t0, self.sample_s)
                sampler.start()
            row.update(self.run_fio(run, rundir, jobf, t0, sampler))
            fio_end = time.time() - t0
            row["fio_end_s"] = round(fio_end, 3)
            if mnt:
                run_cmd(["umount", mnt], "umount", check=False)
                mnt = None
            if name and model == "drive-managed" and wait_to > 0:
                by_smrctl = how.startswith("smrctl")
                self.say("  waiting for cleaning (%s)" % (
                    "smrctl wait-clean" if by_smrctl else "polling dmsetup status"))
                w, c, how = self.wait_clean(name, wait_to, by_smrctl)
                row["wait_clean_s"] = round(w, 1)
                row["cleaning_s"] = round(c, 1) if c is not None else ""
                row["wait_clean_how"] = how
                if c is None:
                    row["status"] = "not clean"
                    row["error"] = "not clean after %d s" % wait_to
                self.say("  clean after %.1f s; cleaning time %s s" % (w, row["cleaning_s"]))
            row["end_s"] = round(time.time() - t0, 3)
        except (RuntimeError, MatrixError, ValueError, OSError) as e:
            row["status"] = "failed"
            row["error"] = str(e).strip().splitlines()[0][:300]
            self.say("  FAILED: %s" % e)
        finally:
            if sampler:
                sampler.stop()
            if smrd:
                smrd.send_signal(signal.SIGTERM)
                try:
                    smrd.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    smrd.kill()
            if mnt:
                run_cmd(["umount", mnt], "umount", check=False)
            if self.loopdev:
                run_cmd(["losetup", "-d", self.loopdev], "losetup -d", check=False)
                self.loopdev = None
            if name:
                st = run_cmd(["dmsetup", "status", name], "dmsetup status", check=False).stdout.strip()
                if st:
                    with open(os.path.join(rundir, "status.final"), "w") as f:
                        f.write(st + "\n")
                self.remove(name)
        row.update(analyse_run(rundir, row))
        self.rows.append(row)
        self.say("  %s: %s" % (row["status"], brief(row)))
        return row

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

    # -- the whole campaign --------------------------------------------
    def run(self, runs, only=None):
        os.makedirs(self.out, exist_ok=True)
        shutil.copy(self.m.path, os.path.join(self.out, "matrix.ini"))
        self.say("campaign %s: %d runs, results in %s%s" % (
            self.m.name, len(runs), self.out,
            "" if not self.clients else "; fio clients " + ", ".join(self.clients)))
        self.say("devices via %s; events %s" % (
            "smrctl (%s)" % self.smrctl if self.smrctl else "dmsetup (smrctl not found)",
            "from smrd (%s)" % self.smrd if self.smrd else "not recorded (smrd not found)"))
        for r in runs:
            if only and r["id"] not in only and str(r["index"]) not in only:
                continue
            self.run_one(r, len(runs))
        return self.finish()

    def finish(self):
        figures = []
        if self.plots:
            figures = draw_plots(self.out, self.rows)
        return write_summary(self.out, self.m.name, self.rows, figures,
                             time.time() - self.t_start, plotted=self.plots)


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


def brief(row):
    parts = []
    if row.get("write_mibs") is not None and row.get("write_mib"):
        parts.append("wrote %.1f MiB at %.2f MiB/s" % (row["write_mib"], row["write_mibs"]))
    if row.get("read_mib"):
        parts.append("read %.1f MiB" % row["read_mib"])
    for k, fmt in (("cache_phase_mibs", "cache phase %.2f MiB/s"),
                   ("collapsed_mibs", "collapsed %.2f MiB/s"), ("wa", "wa %.3f"),
                   ("live_damaged_blocks", "live damaged blocks %d"),
                   ("wp_errors", "wp_errors %d"), ("fio_errors", "fio errors %d")):
        if row.get(k) not in (None, ""):
            parts.append(fmt % row[k])
    return ", ".join(parts)


# -------------------------------------------------------- analysis ---

# Status fields copied into the summary (final values) per model.
SUMMARY_STATUS = {
    "drive-managed": ["host_write_sectors", "cache_write_sectors", "bypass_write_sectors",
                      "rmw_fg", "rmw_bg", "rmw_manual", "bg_aborts", "clean_ms_fg",
                      "clean_ms_bg", "clean_read_sectors", "clean_write_sectors", "wa",
                      "cache_total", "nr_bands", "band_sectors", "errors"],
    "host-managed": ["nr_zones", "write_sectors", "resets", "finishes", "imp_closes",
                     "wp_errors", "errors"],
    "caveat": ["writes", "damaging_writes", "damaged_blocks", "live_damage_writes",
               "live_damaged_blocks", "damaged_reads", "valid_blocks"],
}


def analyse_run(rundir, row):
    """Figures of one run from its files: fio.json, bw logs, status.csv,
    status.final, events.json."""
    out = {}
    fj = os.path.join(rundir, "fio.json")
    if os.path.exists(fj) and os.path.getsize(fj):
        try:
            s = fio_summary(load_fio_json(fj))
            phases = s.pop("phases")
            out.update({k: (round(v, 3) if isinstance(v, float) else v) for k, v in s.items()})
            if row.get("status") == "fio failed" and not s["fio_fatal"] and s["fio_errors"]:
                # fio exits 1 after I/O errors that a job counted with
                # continue_on_error (cv-damage.fio's reads): expected
                out["status"] = "ok"
                out["error"] = ""
                out["fio_note"] = "fio exit %s: %d I/O errors counted (continue_on_error)" % (
                    row.get("fio_rc"), s["fio_errors"])
            with open(os.path.join(rundir, "phases.json"), "w") as f:
                json.dump(phases, f, indent=1)
        except (ValueError, KeyError) as e:
            if row.get("status", "ok") == "ok":
                out["status"] = "bad fio output"
                out["error"] = str(e)[:300]
    final = None
    try:
        with open(os.path.join(rundir, "status.final")) as f:
            final = parse_status(f.readline())
    except OSError:
        pass
    model = row.get("model")
    if final:
        for k in SUMMARY_STATUS.get(final.get("mode"), []):
            if k in final:
                out[k] = final[k]
        if "host_write_sectors" in final:
            out["host_write_mib"] = round(final["host_write_sectors"] / 2048.0, 2)
    samples = read_status_csv(os.path.join(rundir, "status.csv"))
    out["status_samples"] = len(samples)
    bw = []
    logs = bw_log_files(rundir)
    if logs:
        # time origin: the first sample's clock if there is a timeline
        # (the sampler and the logs share wall-clock time), else the
        # earliest log entry
        t0_ms = None
        try:
            with open(os.path.join(rundir, "t0")) as f:
                t0_ms = float(f.read())
        except (OSError, ValueError):
            pass
        if t0_ms is None:
            t0_ms = min(first_log_time(f) for f in logs) - 1000
        bw = read_bw_logs(logs, t0_ms, log_avg_msec(os.path.join(rundir, "job.fio")))
        with open(os.path.join(rundir, "bw.csv"), "w") as f:
            f.write("t,read_mibs,write_mibs\n")
            for t, r, w in bw:
                f.write("%d,%.3f,%.3f\n" % (t, r, w))
    out["bw_seconds"] = len(bw)
    if model == "drive-managed" and samples:
        fio_end = row.get("fio_end_s") or (bw[-1][0] + 1 if bw else 0)
        hi, lo, t_full = phase_figures(bw, samples, fio_end)
        out["cache_phase_mibs"] = round(hi, 3) if hi is not None else ""
        out["collapsed_mibs"] = round(lo, 3) if lo is not None else ""
        out["cache_full_at_s"] = round(t_full, 1) if t_full is not None else ""
        out["fg_clean_s_sampled"] = round(sum(b - a for a, b, st in cleaning_spans(samples)
                                              if st == "clean-fg"), 1)
    ev = read_events(os.path.join(rundir, "events.json"))
    if ev:
        mine = [e for e in ev if e.get("family") in ("dm-smr", "dm-caveat")]
        out["events"] = len(mine)
        out["clean_done_events"] = sum(1 for e in mine if e.get("event") == "clean_done")
        out["damage_events"] = sum(1 for e in mine if e.get("event") == "damage")
    return out


def first_log_time(path):
    with open(path) as f:
        for line in f:
            p = line.split(",")
            if p and p[0].strip().isdigit():
                return int(p[0])
    return 0


# --------------------------------------------------------- summary ---

def write_summary(out, name, rows, figures, elapsed, plotted=True):
    """summary.csv (one row per run), summary.json (runs, figures) and
    summary.txt (readable, naming every figure)."""
    cols = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    with open(os.path.join(out, "summary.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, restval="")
        w.writeheader()
        for r in rows:
            w.writerow(r)
    doc = {"campaign": name, "elapsed_s": round(elapsed, 1), "runs": rows,
           "figures": figures}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(doc, f, indent=1)
    lines = ["campaign %s: %d runs in %.0f s, %d failed" % (
        name, len(rows), elapsed, sum(1 for r in rows if r.get("status") != "ok")), ""]
    for r in rows:
        lines.append("%s  [%s]" % (r["run"], r.get("status")))
        b = brief(r)
        if b:
            lines.append("    " + b)
        if r.get("model") == "drive-managed":
            lines.append("    rmw fg %s bg %s; cleaning fg %s ms bg %s ms; wait-clean %s s, cleaning time %s s" % (
                r.get("rmw_fg", "-"), r.get("rmw_bg", "-"), r.get("clean_ms_fg", "-"),
                r.get("clean_ms_bg", "-"), r.get("wait_clean_s", "-"), r.get("cleaning_s", "-")))
        if r.get("error"):
            lines.append("    error: " + r["error"])
    lines.append("")
    if not plotted:
        lines.append("figures: not drawn yet (--no-plots): fio-jobs/campaign --plot %s" % out)
    else:
        lines.append("figures:" if figures else "figures: none drawn")
    for fg in figures:
        lines.append("    %s  %s" % (fg["file"], fg["what"]))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    return doc


def draw_plots(out, rows):
    # matplotlib wants a writable config/cache dir (the VM's root is
    # read-only); building its font cache takes a minute under QEMU.
    if not os.access(os.path.expanduser("~/.config"), os.W_OK) or os.environ.get("SMR_RESULTS"):
        os.environ.setdefault("MPLCONFIGDIR", os.path.join(
            os.environ.get("SMR_RESULTS") or "/tmp", ".matplotlib"))
    try:
        import smrplot
    except ImportError:
        sys.path.insert(0, HERE)
        import smrplot
    try:
        return smrplot.draw_all(out, rows)
    except ImportError as e:
        log("no plots: %s (install python3-matplotlib)" % e)
        return []


# ------------------------------------------------------------- main ---

USAGE = """\
usage: campaign [options] MATRIX.ini     run a campaign
       campaign --list MATRIX.ini        print the runs it would make
       campaign --plot RESULTS_DIR       redraw plots and summary of a results dir

  -o, --out DIR        results directory (default results/campaign-NAME-DATE)
  --set SEC.KEY=VAL    override a matrix value, e.g. --set "device dm.cache=32M"
  --only RUN[,RUN]     run only these runs (index or id from --list)
  --client HOST[:PORT] run fio on a remote 'fio --server' (repeatable):
                       devices must be model file or existing there
  --smrctl PATH | --no-smrctl   create/remove/wait-clean with smrctl (default:
                       PATH, then userspace/smrctl) or with dmsetup
  --smrd PATH | --no-smrd       record smrd's events per run (if found)
  --sample S           status sampling period in seconds (1)
  --progress S         progress line every S seconds while fio runs (10; 0 = none)
  --no-plots           write the summary only
"""


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    opts = {"out": None, "set": [], "only": None, "client": [], "smrctl": None,
            "use_smrctl": True, "smrd": None, "use_smrd": True, "sample": 1.0,
            "progress": 10.0, "plots": True, "list": False, "plot": False}
    pos = []
    it = iter(argv)
    try:
        for a in it:
            if a in ("-h", "--help"):
                sys.stdout.write(USAGE)
                return 0
            elif a in ("-o", "--out"):
                opts["out"] = next(it)
            elif a == "--set":
                opts["set"].append(next(it))
            elif a == "--only":
                opts["only"] = set(split_values(next(it)))
            elif a == "--client":
                opts["client"].append(next(it))
            elif a == "--smrctl":
                opts["smrctl"] = next(it)
            elif a == "--no-smrctl":
                opts["use_smrctl"] = False
            elif a == "--smrd":
                opts["smrd"] = next(it)
            elif a == "--no-smrd":
                opts["use_smrd"] = False
            elif a == "--sample":
                opts["sample"] = float(next(it))
            elif a == "--progress":
                opts["progress"] = float(next(it))
            elif a == "--no-plots":
                opts["plots"] = False
            elif a == "--list":
                opts["list"] = True
            elif a == "--plot":
                opts["plot"] = True
            elif a.startswith("-"):
                sys.stderr.write("campaign: unknown option %s\n%s" % (a, USAGE))
                return 2
            else:
                pos.append(a)
    except (StopIteration, ValueError):
        sys.stderr.write("campaign: %s needs a value\n%s" % (a, USAGE))
        return 2
    if len(pos) != 1:
        sys.stderr.write(USAGE)
        return 2
    if opts["plot"]:
        return replot(pos[0])
    try:
        m = Matrix(pos[0], opts["set"])
        runs = m.runs()
    except MatrixError as e:
        sys.stderr.write("campaign: %s\n" % e)
        return 1
    if opts["list"]:
        for r in runs:
            log("%2d %s  (%s, %s)" % (r["index"], r["id"], os.path.basename(r["file"]),
                                      ", ".join("%s=%s" % kv for kv in sorted(r["dev"].items()))))
        return 0
    out = os.path.abspath(opts["out"]) if opts["out"] else os.path.join(ROOT, "results", "campaign-%s-%s" % (
        m.name, time.strftime("%Y%m%d-%H%M%S")))
    if not opts["client"] and any(r["dev"]["model"] in DM_MODELS for r in runs):
        if shutil.which("dmsetup") is None:
            sys.stderr.write("campaign: dmsetup is not installed (apt install dmsetup)\n")
            return 1
        if os.geteuid() != 0:
            sys.stderr.write("campaign: creating dm devices needs root (run with sudo)\n")
            return 1
    if shutil.which("fio") is None:
        sys.stderr.write("campaign: fio is not installed (apt install fio)\n")
        return 1
    c = Campaign(m, out, clients=opts["client"], smrctl=opts["smrctl"],
                 use_smrctl=opts["use_smrctl"], smrd=opts["smrd"], use_smrd=opts["use_smrd"],
                 sample_s=opts["sample"], progress_s=opts["progress"], plots=opts["plots"])
    doc = c.run(runs, opts["only"])
    log("")
    with open(os.path.join(out, "summary.txt")) as f:
        sys.stdout.write(f.read())
    log("results: %s (summary.txt, summary.csv, summary.json)" % out)
    return 0 if all(r.get("status") == "ok" for r in doc["runs"]) and doc["runs"] else 1


def replot(out):
    """Redraw the plots and the summary of a results directory from its
    runs/*/ files (e.g. on the host after a campaign in the VM)."""
    try:
        with open(os.path.join(out, "summary.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write("campaign: %s: %s\n" % (out, e))
        return 1
    rows = []
    for r in doc["runs"]:
        r.update(analyse_run(os.path.join(out, "runs", r["run"]), r))
        rows.append(r)
    figures = draw_plots(out, rows)
    write_summary(out, doc["campaign"], rows, figures, doc.get("elapsed_s", 0))
    with open(os.path.join(out, "summary.txt")) as f:
        sys.stdout.write(f.read())
    return 0
