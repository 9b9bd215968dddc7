# SPDX-License-Identifier: GPL-2.0
"""Plots of a campaign results directory (PNG, matplotlib, Agg backend),
from the files of its runs (read through model, never the runner).

draw_all(out, rows) draws, from the files of each run (runs/ID/bw.csv,
status.csv, events.json) and the summary rows:

- plots/ID-throughput.png for every run with a bandwidth log: MiB/s
  written (and read) per second, the periods the device was cleaning
  shaded (foreground red, background green, manual blue: from smrd's
  clean_start/clean_done events when recorded, else from the sampled
  status state), the cache occupancy on a second axis (drive-managed),
  the end of fio marked;
- plots/ID-latency.png for every run with a latency histogram log:
  the throughput over the write completion latency p50/p99/max per
  second (and the write amplification over time when the status samples
  carry its counters), cleaning shaded as above;
- plots/JOB-DEVICE-policies.png for drive-managed runs that differ only
  in their policy: written MiB/s over time, one line per policy;
- plots/cleaning-by-policy.png when there are drive-managed runs:
  cleaning time (foreground and background while fio ran, and the
  cleaning after it, each counted once: see cleaning_bars) and write
  amplification per run, labelled by job and policy;
- plots/ID-damage.png for every caveat run with a status timeline:
  blocks damaged, live blocks damaged and valid blocks over time;
- plots/ID-rebuild.png for every array run: md's rebuild progress over
  time (runs/ID/rebuild.csv) with the replacement drive's cache
  occupancy (drive-managed) and its cleaning shaded;
- plots/rebuilds.png when there are array runs: rebuild time per run,
  labelled by array and replacement.

Returns a list of {"file": path relative to out, "what": description,
"run": run id or None}.
"""

import os
import re

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .model import (cleaning_spans, event_spans, merge_spans, read_events,  # noqa: E402
                    read_status_csv, wa_timeline)

# Legends: this size (the tick labels' is 10), and off the data: beside
# the plot area or below it (figures with a second y axis on the right).
LEGEND_PT = 9
DPI = 100

SHADE = {"clean-fg": ("#d62728", "foreground cleaning"),
         "clean-bg": ("#2ca02c", "background cleaning"),
         "clean-manual": ("#1f77b4", "manual cleaning")}


def _read_csv(path, ncols):
    """A per-second CSV of the summary (bw.csv, lat.csv) -> [(t, the
    next ncols - 1 columns as floats)]; [] if it is missing."""
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        next(f, None)
        for line in f:
            p = line.strip().split(",")
            rows.append((int(p[0]),) + tuple(float(x) for x in p[1:ncols]))
    return rows


def _read_bw(path):
    """bw.csv -> [(t, read MiB/s, written MiB/s)]."""
    return _read_csv(path, 3)


def _read_lat(path):
    """lat.csv -> [(t, p50, p99, max in ms)]."""
    return _read_csv(path, 4)


def _spans(rd, samples):
    """The run's cleaning periods and where they come from: smrd's
    events when recorded, else the sampled status state."""
    spans = []
    try:
        with open(os.path.join(rd, "t0")) as f:
            t0 = float(f.read()) / 1000.0
        spans = event_spans(read_events(os.path.join(rd, "events.json")), t0)
    except (OSError, ValueError):
        pass
    if spans:
        return spans, "smrd events"
    return cleaning_spans(samples), "sampled status" if samples else "no device status"


def _shade(ax, spans, seen):
    """Shade the cleaning periods on ax (labelled once per state in
    seen). Each span is drawn at least 0.2 s wide, so spans closer than
    that are drawn as one."""
    for a, b, st in merge_spans(spans, 0.2):
        color, label = SHADE.get(st, ("#7f7f7f", st))
        ax.axvspan(a, max(b, a + 0.2), color=color, alpha=0.18 if st != "clean-fg" else 0.25,
                   lw=0, label=None if st in seen else label)
        seen.add(st)


def _steps(ax, per_second, col, **kw):
    """Per-second values (rows (t, ...) of bw.csv or lat.csv: column col
    over the second [t, t + 1)) as steps: each value held from the start
    of its second to its end, the last one too."""
    if not per_second:
        return []
    t = [x[0] for x in per_second]
    v = [x[col] for x in per_second]
    return ax.plot(t + [t[-1] + 1], v + v[-1:], drawstyle="steps-post", **kw)


def _plot_bw(ax, bw):
    if any(x[2] for x in bw):
        _steps(ax, bw, 2, color="black", lw=1.2, label="written (MiB/s)")
    if any(x[1] for x in bw):
        _steps(ax, bw, 1, color="tab:purple", lw=1.0, label="read (MiB/s)")


def _title(row):
    """JOB on DEVICE (MODEL, profile PROFILE) VARIED: the profile when
    the device was made with one."""
    what = "%s" % row.get("model")
    if row.get("profile"):
        what += ", profile %s" % row["profile"]
    title = "%s on %s (%s)" % (row["job"], row["device"], what)
    if row.get("varied"):
        title += " " + row["varied"]
    return title


def _legend_right(ax, **kw):
    """The axes' legend beside its plot area, on the right."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                     fontsize=LEGEND_PT, **kw)


def _legend_below(fig, handles, labels, ncol=5):
    """One legend for the figure, below the plots, which are laid out
    above it: rows of at most ncol entries, as even as they come."""
    rows = max(1, -(-len(labels) // ncol))
    leg = fig.legend(handles, labels, loc="lower center", ncol=max(1, -(-len(labels) // rows)),
                     fontsize=LEGEND_PT, frameon=False)
    h = leg.get_window_extent().height / fig.bbox.height
    fig.tight_layout(rect=(0, h + 0.01, 1, 1))
    return leg


def _cache_axis(ax, samples, label):
    """The persistent cache's use (%) on a second y axis, when the status
    samples have it (drive-managed); its legend handles and labels."""
    if not (samples and samples[0].get("cache_total")):
        return [], []
    ax2 = ax.twinx()
    ax2.plot([s["t"] for s in samples],
             [100.0 * s["cache_used"] / s["cache_total"] for s in samples],
             color="tab:orange", lw=1, ls=":", label=label)
    ax2.set_ylim(0, 105)
    ax2.set_ylabel("persistent cache used (%)")
    return ax2.get_legend_handles_labels()


def throughput(out, row):
    rd = os.path.join(out, "runs", row["run"])
    bw = _read_bw(os.path.join(rd, "bw.csv"))
    if not bw:
        return None
    samples = read_status_csv(os.path.join(rd, "status.csv"))
    spans, src = _spans(rd, samples)
    fig, ax = plt.subplots(figsize=(10, 4.8))
    _plot_bw(ax, bw)
    seen = set()
    _shade(ax, spans, seen)
    end = row.get("fio_end_s")
    if end not in (None, ""):
        ax.axvline(float(end), color="gray", ls="--", lw=1, label="fio ended")
    xmax = max([bw[-1][0] + 1] + [b for a, b, st in spans] + [s["t"] for s in samples] +
               ([float(end)] if end not in (None, "") else []))
    ax.set_xlim(0, xmax)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("seconds since fio was started")
    ax.set_ylabel("MiB/s")
    h2, l2 = _cache_axis(ax, samples, "cache used (%)")
    h, l_ = ax.get_legend_handles_labels()
    title = _title(row)
    sub = "throughput per second" + ("; cleaning shaded (from %s)" % src if samples else "")
    ax.set_title(title + "\n" + sub, fontsize=10)
    _legend_below(fig, h + h2, l_ + l2)
    rel = os.path.join("plots", "%s-throughput.png" % row["run"])
    fig.savefig(os.path.join(out, rel), dpi=DPI)
    plt.close(fig)
    what = "throughput over time" + (", cleaning periods shaded" if samples and "state" in samples[0] else "")
    return {"file": rel, "run": row["run"], "what": "%s (%s)" % (what, row["run"])}


def latency(out, row):
    """plots/ID-latency.png: throughput per second over completion
    latency p50/p99/max per second (the histogram logs, lat.csv), and
    the write amplification over time when the status samples carry its
    counters; cleaning shaded on each."""
    rd = os.path.join(out, "runs", row["run"])
    lat = _read_lat(os.path.join(rd, "lat.csv"))
    if not lat:
        return None
    bw = _read_bw(os.path.join(rd, "bw.csv"))
    samples = read_status_csv(os.path.join(rd, "status.csv"))
    spans, src = _spans(rd, samples)
    wa = wa_timeline(samples)
    n = 3 if wa else 2
    fig, axes = plt.subplots(n, 1, figsize=(11, 2.6 * n + 1), sharex=True)
    seen = set()
    _plot_bw(axes[0], bw)
    axes[0].set_ylabel("MiB/s")
    axes[0].set_ylim(bottom=0)
    ax = axes[1]
    _steps(ax, lat, 3, color="tab:gray", lw=0.8, label="max")
    _steps(ax, lat, 2, color="tab:red", lw=1.2, label="p99")
    _steps(ax, lat, 1, color="tab:blue", lw=1.2, label="p50")
    ax.set_yscale("log")
    ax.set_ylabel("write completion latency (ms)")
    if wa:
        ax = axes[2]
        ax.plot([x[0] for x in wa if x[1] is not None], [x[1] for x in wa if x[1] is not None],
                color="tab:blue", lw=1.2, label="write amplification (cumulative)")
        ax.plot([x[0] for x in wa if x[2] is not None], [x[2] for x in wa if x[2] is not None],
                color="tab:cyan", lw=0.8, ls=":", label="write amplification per sample")
        ax.set_ylabel("device writes / host writes")
        ax.set_ylim(bottom=0)
    end = row.get("fio_end_s")
    for i, ax in enumerate(axes):
        _shade(ax, spans, seen)
        if end not in (None, ""):
            ax.axvline(float(end), color="gray", ls="--", lw=1,
                       label="fio ended" if i == 0 else None)
        _legend_right(ax)
    axes[0].set_xlim(left=0)
    axes[-1].set_xlabel("seconds since fio was started")
    axes[0].set_title(_title(row) + "\nthroughput, write latency per second%s%s" % (
        ", write amplification" if wa else "",
        "; cleaning shaded (from %s)" % src if spans else ""), fontsize=10)
    fig.tight_layout()
    rel = os.path.join("plots", "%s-latency.png" % row["run"])
    fig.savefig(os.path.join(out, rel), dpi=DPI)
    plt.close(fig)
    return {"file": rel, "run": row["run"],
            "what": "write latency p50/p99/max per second%s over time (%s)" % (
                ", throughput and write amplification" if wa else " and throughput", row["run"])}


def policy_groups(rows):
    """Runs that differ only in their policy (same job, device and other
    varied values), for the overlay chart: {key: [rows]} with two or
    more policies each."""
    groups = {}
    for r in rows:
        if r.get("model") != "drive-managed":
            continue
        rest = " ".join(v for v in (r.get("varied") or "").split() if not v.startswith("policy="))
        groups.setdefault((r["job"], r["device"], rest), []).append(r)
    return {k: v for k, v in groups.items()
            if len({r.get("policy") or "fifo" for r in v}) > 1}


def policies(out, rows):
    """plots/JOB-DEVICE[-REST]-policies.png: throughput over time, one
    line per policy, for each group of policy_groups."""
    figs = []
    for (job, dev, rest), group in sorted(policy_groups(rows).items()):
        fig, ax = plt.subplots(figsize=(10, 4.5))
        drawn = 0
        for r in group:
            bw = _read_bw(os.path.join(out, "runs", r["run"], "bw.csv"))
            if bw:
                _steps(ax, bw, 2, lw=1.1, label=r.get("policy") or "fifo")
                drawn += 1
        if not drawn:
            plt.close(fig)
            continue
        ax.set_xlim(left=0)
        ax.set_ylim(bottom=0)
        ax.set_xlabel("seconds since fio was started")
        ax.set_ylabel("written (MiB/s)")
        _legend_right(ax, title="policy", title_fontsize=LEGEND_PT)
        profiles = {r.get("profile") or "" for r in group}
        what = (["profile %s" % profiles.pop()] if len(profiles) == 1 and "" not in profiles
                else []) + ([rest] if rest else [])
        ax.set_title("%s on %s%s: throughput per second by cleaning policy" % (
            job, dev, " (%s)" % ", ".join(what) if what else ""), fontsize=10)
        fig.tight_layout()
        # Varied values may hold "/" or spaces: the same characters as run ids.
        name = re.sub(r"[^A-Za-z0-9_.=-]+", "_",
                      "-".join([job, dev] + ([rest.replace(" ", "-")] if rest else [])))
        rel = os.path.join("plots", "%s-policies.png" % name)
        fig.savefig(os.path.join(out, rel), dpi=DPI)
        plt.close(fig)
        figs.append({"file": rel, "run": None,
                     "what": "throughput over time per policy (%s on %s%s)" % (
                         job, dev, ", " + rest if rest else "")})
    return figs


def _f(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def cleaning_bars(rows):
    """The bars of the cleaning chart: (runs, labels, foreground and
    background seconds while fio ran, seconds of cleaning after it, wa).
    The device's clean_ms_fg/bg count the cleaning after the job too:
    the figures while fio ran (clean_*_run_s, summary) keep it from
    being counted twice."""
    dm = [r for r in rows if r.get("model") == "drive-managed" and r.get("status_samples")
          and not r.get("array")]
    labels = ["%s\n%s" % (r["job"], r.get("policy") or "fifo") for r in dm]
    fg = [_f(r["clean_fg_run_s"]) if "clean_fg_run_s" in r else _f(r.get("clean_ms_fg")) / 1000
          for r in dm]
    bg = [_f(r["clean_bg_run_s"]) if "clean_bg_run_s" in r else
          max(0.0, _f(r.get("clean_ms_bg")) / 1000 - _f(r.get("cleaning_s"))) for r in dm]
    after = [_f(r.get("cleaning_s")) for r in dm]
    wa = [_f(r.get("wa")) for r in dm]
    return dm, labels, fg, bg, after, wa


def by_policy(out, rows):
    dm, labels, fg, bg, after, wa = cleaning_bars(rows)
    if not dm:
        return None
    x = list(range(len(dm)))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(max(8, 2.2 * len(dm) + 3), 4.8))
    w = 0.27
    a1.bar([i - w for i in x], fg, w, color=SHADE["clean-fg"][0], label="foreground, while fio ran")
    a1.bar(x, bg, w, color=SHADE["clean-bg"][0], label="background, while fio ran")
    a1.bar([i + w for i in x], after, w, color="tab:gray", label="after the job (wait-clean)")
    a1.set_xticks(x)
    a1.set_xticklabels(labels, fontsize=LEGEND_PT)
    a1.set_ylabel("seconds")
    a1.set_title("cleaning time per run", fontsize=10)
    a2.bar(x, wa, 0.5, color="tab:blue")
    for i, v in enumerate(wa):
        a2.text(i, v, "%.2f" % v, ha="center", va="bottom", fontsize=LEGEND_PT)
    a2.set_xticks(x)
    a2.set_xticklabels(labels, fontsize=LEGEND_PT)
    a2.set_ylabel("write amplification")
    a2.set_title("write amplification (device writes / host writes)", fontsize=10)
    _legend_below(fig, *a1.get_legend_handles_labels())
    rel = os.path.join("plots", "cleaning-by-policy.png")
    fig.savefig(os.path.join(out, rel), dpi=DPI)
    plt.close(fig)
    return {"file": rel, "run": None,
            "what": "cleaning time and write amplification per run and policy"}


def damage(out, row):
    samples = read_status_csv(os.path.join(out, "runs", row["run"], "status.csv"))
    if not samples or "damaged_blocks" not in samples[0]:
        return None
    t = [s["t"] for s in samples]
    fig, ax = plt.subplots(figsize=(10, 4.8))
    ax.plot(t, [s["damaged_blocks"] for s in samples], label="blocks damaged by writes (damaged_blocks)")
    ax.plot(t, [s["live_damaged_blocks"] for s in samples], color="tab:red",
            label="live blocks damaged: data lost (live_damaged_blocks)")
    ax.set_xlabel("seconds since fio was started")
    ax.set_ylabel("blocks")
    ax.set_ylim(bottom=0)
    ax2 = ax.twinx()
    ax2.plot(t, [s["valid_blocks"] for s in samples], color="tab:green", ls=":",
             label="valid blocks")
    ax2.set_ylabel("valid blocks")
    ax2.set_ylim(bottom=0)
    end = row.get("fio_end_s")
    if end not in (None, ""):
        ax.axvline(float(end), color="gray", ls="--", lw=1, label="fio ended")
    ax.set_title(_title(dict(row, model="caveat")) + ": damage over time", fontsize=10)
    h, l_ = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    _legend_below(fig, h + h2, l_ + l2, ncol=2)
    rel = os.path.join("plots", "%s-damage.png" % row["run"])
    fig.savefig(os.path.join(out, rel), dpi=DPI)
    plt.close(fig)
    return {"file": rel, "run": row["run"], "what": "damaged blocks over time (%s)" % row["run"]}


def _read_progress(path):
    """rebuild.csv -> [(t, sectors done)] while md reports progress (md
    moves sync_completed on in steps, so a rate per sample is spiky: the
    plot shows the progress itself)."""
    import csv
    pts = []
    if not os.path.exists(path):
        return pts
    with open(path) as f:
        for r in csv.DictReader(f):
            try:
                pts.append((float(r["t"]), int(r["done"])))
            except (KeyError, ValueError):
                continue
    return pts


def rebuild(out, row):
    """plots/ID-rebuild.png: the rebuild rate of an array run."""
    rd = os.path.join(out, "runs", row["run"])
    pts = _read_progress(os.path.join(rd, "rebuild.csv"))
    if not pts:
        return None
    samples = read_status_csv(os.path.join(rd, "status.csv"))
    fig, ax = plt.subplots(figsize=(10, 4.8))
    ax.step([p[0] for p in pts], [p[1] / 2048.0 for p in pts], where="post", color="tab:blue",
            label="rebuilt (MiB, md's sync_completed)")
    spans, src = _spans(rd, samples)
    _shade(ax, spans, set())
    ax.set_xlim(left=0)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("seconds since the member failed")
    ax.set_ylabel("MiB rebuilt")
    h2, l2 = _cache_axis(ax, samples, "replacement's cache used (%)")
    h, l_ = ax.get_legend_handles_labels()
    ax.set_title("%s\n%s; replacement %s, rebuilt in %s s" % (
        _title(row), row.get("array", ""), row.get("replacement", "?"), row.get("rebuild_s", "?")),
        fontsize=10)
    _legend_below(fig, h + h2, l_ + l2)
    rel = os.path.join("plots", "%s-rebuild.png" % row["run"])
    fig.savefig(os.path.join(out, rel), dpi=DPI)
    plt.close(fig)
    return {"file": rel, "run": row["run"], "what": "rebuild progress over time (%s)" % row["run"]}


def rebuilds(out, rows):
    """plots/rebuilds.png: rebuild time per array run."""
    ar = [r for r in rows if r.get("rebuild_s") not in (None, "")]
    if not ar:
        return None
    labels = ["%s\n%s -> %s" % (r["job"], r["device"], r.get("replacement", "?")) for r in ar]
    x = list(range(len(ar)))
    fig, ax = plt.subplots(figsize=(max(6, 2.2 * len(ar) + 2), 4.8))
    ax.bar(x, [_f(r["rebuild_s"]) for r in ar], 0.5, color="tab:blue")
    for i, r in enumerate(ar):
        ax.text(i, _f(r["rebuild_s"]), "%.1f s\n%.1f MiB/s" % (_f(r["rebuild_s"]),
                _f(r.get("rebuild_mibs"))), ha="center", va="bottom", fontsize=LEGEND_PT)
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=LEGEND_PT)
    ax.set_ylabel("seconds")
    ax.set_title("rebuild time per run (member failed -> array whole)", fontsize=10)
    fig.tight_layout()
    rel = os.path.join("plots", "rebuilds.png")
    fig.savefig(os.path.join(out, rel), dpi=DPI)
    plt.close(fig)
    return {"file": rel, "run": None, "what": "rebuild time per array run"}


def draw_all(out, rows):
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    figs = []
    for r in rows:
        figs.append(throughput(out, r))
        figs.append(latency(out, r))
        if r.get("model") == "caveat" and not r.get("array"):
            figs.append(damage(out, r))
        if r.get("array"):
            figs.append(rebuild(out, r))
    figs.append(by_policy(out, rows))
    figs.append(rebuilds(out, rows))
    figs += policies(out, rows)
    figs = [f for f in figs if f]
    by_run = {}
    for f in figs:
        if f["run"]:
            by_run.setdefault(f["run"], []).append(f["file"])
    for r in rows:
        r["plots"] = " ".join(by_run.get(r["run"], []))
    return figs
