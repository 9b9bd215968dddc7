# SPDX-License-Identifier: GPL-2.0
"""The data a campaign's runs are made of, shared by the runner, the
summary and the plots: the device models, the ``dmsetup status`` line of
each target (its fields, parsed into a dict), and a run's timelines as
its directory keeps them: the sampled status (status.csv) and smrd's
events (events.json), with the cleaning periods read from either, and
the write amplification over time.
"""

import csv
import json
import os

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
             "policy", "commits", "errors", "mem_bytes",
             # the timing model's (docs/timing.md), since smr 0.3.0
             "model_busy_ms", "model_clean_ms", "model_lag_ms"]
DM_FIELDS_MIN = 27
HM_FIELDS = ["mode", "nr_zones", "conv_zones", "imp_open", "exp_open",
             "closed", "full", "readonly", "offline", "writes",
             "write_sectors", "reads", "read_sectors", "resets", "finishes",
             "opens", "closes", "imp_closes", "wp_errors", "errors", "commits",
             "mem_bytes",
             # the timing model's (docs/timing.md), since smr 0.3.0
             "model_busy_ms", "model_lag_ms"]
HM_FIELDS_MIN = 22
# journal_writes came with dm-caveat's on-disk format 2 (the damage
# journal); lines of older modules end before it.
CV_FIELDS = ["writes", "damaging_writes", "damaged_blocks",
             "live_damage_writes", "live_damaged_blocks", "damaged_reads",
             "valid_blocks", "commits", "mem_bytes", "journal_writes",
             # the timing model's (docs/timing.md), since caveat 0.2.0
             "model_busy_ms", "model_lag_ms",
             # the write cache's (write_cache_kib), since caveat 0.3.0
             "cached_writes"]
CV_FIELDS_MIN = 9
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
    if target == "smr" and rest[0] == "drive-managed" and len(rest) >= DM_FIELDS_MIN:
        names = DM_FIELDS
    elif target == "smr" and rest[0] == "host-managed" and len(rest) >= HM_FIELDS_MIN:
        names = HM_FIELDS
    elif target == "caveat" and len(rest) >= CV_FIELDS_MIN:
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


def wa_timeline(samples):
    """Write amplification over time from the status samples' counters:
    [(t, cumulative wa, wa over the interval since the sample before)],
    wa = (cache + bypass + cleaning write sectors) / host write sectors
    (docs/dm-smr.rst); None where no host write was counted (the
    interval's wa during cleaning with no host writes). [] when the
    samples do not carry the counters."""
    keys = ("host_write_sectors", "cache_write_sectors", "bypass_write_sectors",
            "clean_write_sectors")
    out = []
    prev = None
    for s in samples:
        if not all(isinstance(s.get(k), (int, float)) for k in keys):
            return []
        host, dev = s[keys[0]], s[keys[1]] + s[keys[2]] + s[keys[3]]
        step = None
        if prev and host > prev[0]:
            step = (dev - prev[1]) / float(host - prev[0])
        out.append((s["t"], dev / float(host) if host else None, step))
        prev = (host, dev)
    return out


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


def merge_spans(spans, gap):
    """Spans (t_start, t_end, state) of one state that overlap or lie
    less than gap seconds apart, as one: a drive-managed burst cleans a
    band every few milliseconds, and a plot shading each of them (1400
    in a 20-second run) spends minutes in matplotlib under TCG for a
    picture it draws the same. Sorted by start."""
    out = []
    last = {}
    for a, b, st in sorted(spans):
        i = last.get(st)
        if i is not None and a <= out[i][1] + gap:
            out[i][1] = max(out[i][1], b)
        else:
            last[st] = len(out)
            out.append([a, b, st])
    return [tuple(x) for x in out]


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
