# SPDX-License-Identifier: GPL-2.0
"""The figures of each run, read from its directory (fio's JSON,
bandwidth and latency histogram logs into bw.csv and lat.csv, the
status timeline and final status, smrd's events), the rows of a results directory rebuilt from its runs/ (row.json), and
the campaign's summary: summary.csv, summary.json and summary.txt.
"""

import csv
import json
import os

from .fiolog import (bw_log_files, fio_summary, first_log_time, hist_log_files,
                     LOG_HIST_MSEC, host_offsets, load_fio_json, log_avg_msec, log_host, read_bw_logs,
                     read_hist_logs)
from .model import cleaning_spans, parse_status, read_events, read_status_csv


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
               "live_damaged_blocks", "damaged_reads", "valid_blocks", "commits",
               "journal_writes"],
}


def analyse_run(rundir, row):
    """Figures of one run from its files: fio.json, bw logs, status.csv,
    status.final, events.json."""
    out = {}
    fj = os.path.join(rundir, "fio.json")
    doc = None
    if os.path.exists(fj) and os.path.getsize(fj):
        try:
            doc = load_fio_json(fj)
            s = fio_summary(doc)
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
    # time origin: the first sample's clock if there is a timeline
    # (the sampler and the logs share wall-clock time), else the
    # earliest log entry
    t0_ms = None
    try:
        with open(os.path.join(rundir, "t0")) as f:
            t0_ms = float(f.read())
    except (OSError, ValueError):
        pass
    hists = hist_log_files(rundir)
    offsets = {}
    if t0_ms is not None:
        # logs from fio servers: onto the runner's clock
        offsets = host_offsets(doc, logs + hists, t0_ms,
                               log_avg_msec(os.path.join(rundir, "job.fio")))
        if offsets:
            out["clock_offsets_ms"] = " ".join(sorted({"%s=%+d" % (log_host(f), v)
                                                       for f, v in offsets.items()}))
    if logs:
        if t0_ms is None:
            t0_ms = min(first_log_time(f) for f in logs) - 1000
        bad = []
        bw = read_bw_logs(logs, t0_ms, log_avg_msec(os.path.join(rundir, "job.fio")), bad,
                          offsets)
        out["bw_bad_lines"] = len(bad)
        if bad:
            f, n, text = bad[0]
            out["warning"] = "%d malformed bandwidth-log line%s skipped (first: %s line %d: %r)" % (
                len(bad), "s" if len(bad) > 1 else "", os.path.basename(f), n, text)
        with open(os.path.join(rundir, "bw.csv"), "w") as f:
            f.write("t,read_mibs,write_mibs\n")
            for t, r, w in bw:
                f.write("%d,%.3f,%.3f\n" % (t, r, w))
    out["bw_seconds"] = len(bw)
    if hists:
        if t0_ms is None:
            t0_ms = min(first_log_time(f) for f in hists) - 1000
        bad_h = []
        lat = read_hist_logs(hists, t0_ms, skipped=bad_h, offsets=offsets)
        with open(os.path.join(rundir, "lat.csv"), "w") as f:
            f.write("t,p50_ms,p99_ms,max_ms,ios\n")
            for t, p50, p99, mx, n in lat:
                f.write("%d,%.4f,%.4f,%.4f,%d\n" % (t, p50 / 1e6, p99 / 1e6, mx / 1e6, n))
        out["lat_seconds"] = len(lat)
        if bad_h:
            out["lat_bad_lines"] = len(bad_h)
    if not out.get("lat_seconds") and out.get("write_mib"):
        # fio writes a histogram log line only when a window of
        # log_hist_msec has passed since the job's first completion and
        # never flushes the last, partial window: a job whose writes all
        # complete within one window logs nothing.
        out["lat_note"] = ("no write latency over time: the writes ended within one %d ms "
                       "histogram window (p99 from fio's JSON only)" % LOG_HIST_MSEC)
    if model == "drive-managed" and samples:
        fio_end = row.get("fio_end_s") or (bw[-1][0] + 1 if bw else 0)
        hi, lo, t_full = phase_figures(bw, samples, fio_end)
        out["cache_phase_mibs"] = round(hi, 3) if hi is not None else ""
        out["collapsed_mibs"] = round(lo, 3) if lo is not None else ""
        out["cache_full_at_s"] = round(t_full, 1) if t_full is not None else ""
        out["fg_clean_s_sampled"] = round(sum(b - a for a, b, st in cleaning_spans(samples)
                                              if st == "clean-fg"), 1)
    if model == "drive-managed" and final and "clean_ms_bg" in final:
        fg, bg = cleaning_during_run(samples, final, row.get("fio_end_s"), row.get("cleaning_s"))
        out["clean_fg_run_s"] = round(fg, 3)
        out["clean_bg_run_s"] = round(bg, 3)
    ev = read_events(os.path.join(rundir, "events.json"))
    if ev:
        mine = [e for e in ev if e.get("family") in ("dm-smr", "dm-caveat")]
        out["events"] = len(mine)
        out["clean_done_events"] = sum(1 for e in mine if e.get("event") == "clean_done")
        out["damage_events"] = sum(1 for e in mine if e.get("event") == "damage")
    return out


def cleaning_during_run(samples, final, fio_end, after_s):
    """Foreground and background cleaning seconds while fio ran. The
    final counters (clean_ms_fg/bg, status.final) also count the
    cleaning after the job, which the wait for cleaning measures on its
    own (cleaning_s): the counters as sampled when fio ended, else the
    final ones less the cleaning after the job."""
    if fio_end not in (None, ""):
        before = [s for s in samples if s["t"] <= float(fio_end) and "clean_ms_bg" in s]
        if before:
            return before[-1]["clean_ms_fg"] / 1000.0, before[-1]["clean_ms_bg"] / 1000.0
    try:
        after = float(after_s)
    except (TypeError, ValueError):
        after = 0.0
    return final["clean_ms_fg"] / 1000.0, max(0.0, final["clean_ms_bg"] / 1000.0 - after)


def median(xs):
    xs = sorted(xs)
    if not xs:
        return None
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2.0


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


# --------------------------------------------------------- summary ---

def save_row(rundir, row):
    """The run's row as the runner recorded it: runs/ID/row.json."""
    with open(os.path.join(rundir, "row.json"), "w") as f:
        json.dump(row, f, indent=1)


# Device options copied into a row (runner.Campaign.run_one).
ROW_DEVICE_KEYS = ("size", "band", "cache", "idle_ms", "policy", "seq_bypass", "zone",
                   "conv", "max_open", "did", "dnor", "fs", "profile")


def run_order(rid):
    """Run ids start with their number (01-..., 100-...): sort by it."""
    n = rid.split("-", 1)[0]
    return (int(n), rid) if n.isdigit() else (float("inf"), rid)


def load_rows(out, known=()):
    """The rows of a results directory rebuilt from its runs/ alone, in
    run order: each run's row.json, else its row in known (the rows of
    an older summary.json), else what its run.json says (a run the
    campaign did not finish: status "incomplete"); then analysed again
    from the run's files."""
    known = {r.get("run"): r for r in known}
    rows = []
    runs = os.path.join(out, "runs")
    for rid in sorted(os.listdir(runs), key=run_order) if os.path.isdir(runs) else []:
        d = os.path.join(runs, rid)
        row = None
        for f in ("row.json", "run.json"):
            try:
                with open(os.path.join(d, f)) as fh:
                    row = json.load(fh)
                break
            except (OSError, ValueError):
                continue
        if row is None and rid not in known:
            continue
        if row is None or "device_options" in row:
            if rid in known:
                row = known[rid]
            else:
                o = row.get("device_options", {})
                row = dict({"run": rid, "job": row.get("job", ""), "device": row.get("device", ""),
                            "model": o.get("model", ""),
                            "jobfile": os.path.basename(row.get("jobfile", "")),
                            "status": "incomplete",
                            "error": "the run did not finish (campaign interrupted?)"},
                           **{k: o.get(k, "") for k in ROW_DEVICE_KEYS})
                row["varied"] = ""
        row.update(analyse_run(d, row))
        rows.append(row)
    return rows


def write_summary(out, name, rows, figures, elapsed, plotted=True, planned=None, why=None):
    """summary.csv (one row per run), summary.json (runs, figures) and
    summary.txt (readable, naming every figure). planned: the number of
    runs the campaign will make, while it is still running; why: why the
    figures were not drawn (plotted False)."""
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
    failed = [r["run"] for r in rows if r.get("status") != "ok"]
    # the runs that failed, by id; nothing when none did
    outcome = ("%d failed: %s" % (len(failed), ", ".join(failed)) if failed
               else "all ok" if rows else "none done")
    if planned and len(rows) < planned:
        doc["planned"] = planned
        head = "campaign %s: %d of %d runs so far (running or interrupted), in %.0f s, %s" % (
            name, len(rows), planned, elapsed, outcome)
    else:
        head = "campaign %s: %d runs in %.0f s, %s" % (name, len(rows), elapsed, outcome)
    lines = [head, ""]
    for r in rows:
        lines.append("%s  [%s]" % (r["run"], r.get("status")))
        b = brief(r)
        if b:
            lines.append("    " + b)
        if r.get("model") == "drive-managed":
            line = "    rmw fg %s bg %s; cleaning fg %s ms bg %s ms" % (
                r.get("rmw_fg", "-"), r.get("rmw_bg", "-"), r.get("clean_ms_fg", "-"),
                r.get("clean_ms_bg", "-"))
            if not r.get("array"):
                # (an array run does not wait for its replacement's cleaning)
                line += "; wait-clean %s s, cleaning time %s s" % (
                    r.get("wait_clean_s", "-"), r.get("cleaning_s", "-"))
            lines.append(line)
        if r.get("error"):
            lines.append("    error: " + r["error"])
        if r.get("warning"):
            lines.append("    warning: " + r["warning"])
        if r.get("lat_note"):
            lines.append("    note: " + r["lat_note"])
    lines.append("")
    if not plotted:
        lines.append("figures: not drawn yet (%s): fio-jobs/campaign --plot %s" % (
            why or ("campaign not finished" if planned and len(rows) < planned
                    else "--no-plots"), out))
    else:
        lines.append("figures:" if figures else "figures: none drawn")
    for fg in figures:
        lines.append("    %s  %s" % (fg["file"], fg["what"]))
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(doc, f, indent=1)
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    return doc


def brief(row):
    parts = []
    if row.get("rebuild_s") not in (None, ""):
        parts.append("%s, replacement %s: rebuilt in %.1f s (%.1f MiB/s)" % (
            row.get("array", "array"), row.get("replacement", "?"), row["rebuild_s"],
            row.get("rebuild_mibs") or 0))
        for k, fmt in (("repl_cache_used_pct", "replacement's cache %.0f%% used"),
                       ("verify", "data %s"), ("mismatch_cnt", "mismatch_cnt %d")):
            if row.get(k) not in (None, ""):
                parts.append(fmt % row[k])
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
