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
- plots/cleaning-by-policy.png when there are drive-managed runs:
  cleaning time (foreground and background during the run, and the wait
  for cleaning after it) and write amplification per run, labelled by
  job and policy;
- plots/ID-damage.png for every caveat run with a status timeline:
  blocks damaged, live blocks damaged and valid blocks over time.

Returns a list of {"file": path relative to out, "what": description,
"run": run id or None}.
"""

import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from .model import cleaning_spans, event_spans, read_events, read_status_csv  # noqa: E402

SHADE = {"clean-fg": ("#d62728", "foreground cleaning"),
         "clean-bg": ("#2ca02c", "background cleaning"),
         "clean-manual": ("#1f77b4", "manual cleaning")}


def _read_bw(path):
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        next(f, None)
        for line in f:
            t, r, w = line.strip().split(",")
            rows.append((int(t), float(r), float(w)))
    return rows


def throughput(out, row):
    rd = os.path.join(out, "runs", row["run"])
    bw = _read_bw(os.path.join(rd, "bw.csv"))
    if not bw:
        return None
    samples = read_status_csv(os.path.join(rd, "status.csv"))
    spans = []
    try:
        with open(os.path.join(rd, "t0")) as f:
            t0 = float(f.read()) / 1000.0
        spans = event_spans(read_events(os.path.join(rd, "events.json")), t0)
    except (OSError, ValueError):
        pass
    src = "smrd events"
    if not spans:
        spans = cleaning_spans(samples)
        src = "sampled status" if samples else "no device status"
    fig, ax = plt.subplots(figsize=(10, 4.5))
    t = [x[0] + 0.5 for x in bw]
    if any(x[2] for x in bw):
        ax.plot(t, [x[2] for x in bw], color="black", lw=1.2, label="written (MiB/s)")
    if any(x[1] for x in bw):
        ax.plot(t, [x[1] for x in bw], color="tab:purple", lw=1.0, label="read (MiB/s)")
    seen = set()
    for a, b, st in spans:
        color, label = SHADE.get(st, ("#7f7f7f", st))
        ax.axvspan(a, max(b, a + 0.2), color=color, alpha=0.18 if st != "clean-fg" else 0.25,
                   lw=0, label=None if st in seen else label)
        seen.add(st)
    end = row.get("fio_end_s")
    if end not in (None, ""):
        ax.axvline(float(end), color="gray", ls="--", lw=1, label="fio ended")
    xmax = max([t[-1] + 0.5] + [b for a, b, st in spans] + [s["t"] for s in samples] +
               ([float(end)] if end not in (None, "") else []))
    ax.set_xlim(0, xmax)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("seconds since fio was started")
    ax.set_ylabel("MiB/s")
    if samples and samples[0].get("cache_total"):
        ax2 = ax.twinx()
        ax2.plot([s["t"] for s in samples],
                 [100.0 * s["cache_used"] / s["cache_total"] for s in samples],
                 color="tab:orange", lw=1, ls=":", label="cache used (%)")
        ax2.set_ylim(0, 105)
        ax2.set_ylabel("persistent cache used (%)")
        h2, l2 = ax2.get_legend_handles_labels()
    else:
        h2, l2 = [], []
    h, l_ = ax.get_legend_handles_labels()
    fig.legend(h + h2, l_ + l2, loc="lower center", ncol=5, fontsize=8, frameon=False)
    title = "%s on %s (%s)" % (row["job"], row["device"], row.get("model"))
    if row.get("varied"):
        title += " " + row["varied"]
    sub = "throughput per second" + ("; cleaning shaded (from %s)" % src if samples else "")
    ax.set_title(title + "\n" + sub, fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    rel = os.path.join("plots", "%s-throughput.png" % row["run"])
    fig.savefig(os.path.join(out, rel), dpi=90)
    plt.close(fig)
    what = "throughput over time" + (", cleaning periods shaded" if samples and "state" in samples[0] else "")
    return {"file": rel, "run": row["run"], "what": "%s (%s)" % (what, row["run"])}


def _f(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return 0.0


def by_policy(out, rows):
    dm = [r for r in rows if r.get("model") == "drive-managed" and r.get("status_samples")]
    if not dm:
        return None
    labels = ["%s\n%s" % (r["job"], r.get("policy") or "fifo") for r in dm]
    fg = [_f(r.get("clean_ms_fg")) / 1000 for r in dm]
    bg = [_f(r.get("clean_ms_bg")) / 1000 for r in dm]
    after = [_f(r.get("cleaning_s")) for r in dm]
    wa = [_f(r.get("wa")) for r in dm]
    x = list(range(len(dm)))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(max(8, 2.2 * len(dm) + 3), 4.5))
    w = 0.27
    a1.bar([i - w for i in x], fg, w, color=SHADE["clean-fg"][0], label="foreground (clean_ms_fg)")
    a1.bar(x, bg, w, color=SHADE["clean-bg"][0], label="background (clean_ms_bg)")
    a1.bar([i + w for i in x], after, w, color="tab:gray", label="after the job (wait-clean)")
    a1.set_xticks(x)
    a1.set_xticklabels(labels, fontsize=8)
    a1.set_ylabel("seconds")
    a1.set_title("cleaning time per run", fontsize=10)
    a1.legend(fontsize=8)
    a2.bar(x, wa, 0.5, color="tab:blue")
    for i, v in enumerate(wa):
        a2.text(i, v, "%.2f" % v, ha="center", va="bottom", fontsize=8)
    a2.set_xticks(x)
    a2.set_xticklabels(labels, fontsize=8)
    a2.set_ylabel("write amplification")
    a2.set_title("write amplification (device writes / host writes)", fontsize=10)
    fig.tight_layout()
    rel = os.path.join("plots", "cleaning-by-policy.png")
    fig.savefig(os.path.join(out, rel), dpi=90)
    plt.close(fig)
    return {"file": rel, "run": None,
            "what": "cleaning time and write amplification per run and policy"}


def damage(out, row):
    samples = read_status_csv(os.path.join(out, "runs", row["run"], "status.csv"))
    if not samples or "damaged_blocks" not in samples[0]:
        return None
    t = [s["t"] for s in samples]
    fig, ax = plt.subplots(figsize=(10, 4.5))
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
    h, l_ = ax.get_legend_handles_labels()
    h2, l2 = ax2.get_legend_handles_labels()
    ax.legend(h + h2, l_ + l2, loc="upper left", fontsize=8)
    end = row.get("fio_end_s")
    if end not in (None, ""):
        ax.axvline(float(end), color="gray", ls="--", lw=1)
    ax.set_title("%s on %s (caveat%s): damage over time" % (
        row["job"], row["device"], " " + row["varied"] if row.get("varied") else ""), fontsize=10)
    fig.tight_layout()
    rel = os.path.join("plots", "%s-damage.png" % row["run"])
    fig.savefig(os.path.join(out, rel), dpi=90)
    plt.close(fig)
    return {"file": rel, "run": row["run"], "what": "damaged blocks over time (%s)" % row["run"]}


def draw_all(out, rows):
    os.makedirs(os.path.join(out, "plots"), exist_ok=True)
    figs = []
    for r in rows:
        figs.append(throughput(out, r))
        if r.get("model") == "caveat":
            figs.append(damage(out, r))
    figs.append(by_policy(out, rows))
    figs = [f for f in figs if f]
    by_run = {}
    for f in figs:
        if f["run"]:
            by_run.setdefault(f["run"], []).append(f["file"])
    for r in rows:
        r["plots"] = " ".join(by_run.get(r["run"], []))
    return figs
