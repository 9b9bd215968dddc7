# SPDX-License-Identifier: GPL-2.0
"""The command line of fio-jobs/campaign (argparse): run a matrix, list
its runs (--list), or redraw the plots and summary of a results
directory (--plot).
"""

import argparse
import json
import os
import shutil
import signal
import sys
import time

from .fiorun import parse_client
from .matrix import ROOT, Matrix, MatrixError, split_values
from .model import DM_MODELS
from .runner import Campaign, draw_plots, log, matplotlib_missing
from .summary import load_rows, write_summary

USAGE = """\
campaign [options] MATRIX.ini     run a campaign
       campaign --list MATRIX.ini        print the runs it would make
       campaign --plot RESULTS_DIR       redraw plots and summary of a results dir"""


def parser():
    p = argparse.ArgumentParser(prog="campaign", usage=USAGE, allow_abbrev=False)
    p.add_argument("path", metavar="MATRIX.ini|RESULTS_DIR",
                   help="the matrix, or with --plot a results directory")
    p.add_argument("-o", "--out", metavar="DIR",
                   help="results directory (default results/campaign-NAME-DATE)")
    p.add_argument("--set", metavar="SEC.KEY=VAL", action="append", default=[],
                   help='override a matrix value, e.g. --set "device dm.cache=32M"')
    p.add_argument("--only", metavar="RUN[,RUN]",
                   help="run only these runs (index or id from --list)")
    p.add_argument("--client", metavar="HOST[:PORT]", action="append", default=[],
                   help="run fio on a remote 'fio --server' (repeatable; IPv6: ::1 or "
                   "[::1]:8765): "
                   "devices must be model file or existing there")
    p.add_argument("--smrctl", metavar="PATH",
                   help="create/remove/wait-clean with smrctl (default: PATH, then userspace/smrctl/smrctl)")
    p.add_argument("--force-backing", action="store_true",
                   help="use a backing device although a dm or md device is stacked on it "
                        "(an LVM volume, a LUKS container, another drive): refused otherwise")
    p.add_argument("--no-smrctl", dest="use_smrctl", action="store_false",
                   help="create/remove/wait-clean with dmsetup, not smrctl")
    p.add_argument("--smrd", metavar="PATH", help="record smrd's events per run (if found)")
    p.add_argument("--no-smrd", dest="use_smrd", action="store_false",
                   help="do not record smrd's events")
    p.add_argument("--sample", metavar="S", type=float, default=1.0,
                   help="status sampling period in seconds (1)")
    p.add_argument("--progress", metavar="S", type=float, default=10.0,
                   help="progress line every S seconds while fio runs (10; 0 = none)")
    p.add_argument("--no-plots", dest="plots", action="store_false",
                   help="write the summary only")
    p.add_argument("--list", action="store_true", help="print the runs it would make")
    p.add_argument("--plot", action="store_true",
                   help="redraw plots and summary of a results dir")
    return p


def _exit_on_signal(signum, frame):
    # A harness's timeout or a closed terminal: unwind, so the runner's
    # cleanup stops fio (in a session of its own) and removes the device.
    raise SystemExit(128 + signum)


def main(argv=None):
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _exit_on_signal)
    opts = vars(parser().parse_args(argv))
    if opts["only"] is not None:
        opts["only"] = set(split_values(opts["only"]))
    if opts["plot"]:
        return replot(opts["path"])
    try:
        for c in opts["client"]:
            parse_client(c)
    except ValueError as e:
        sys.stderr.write("campaign: %s\n" % e)
        return 2
    try:
        m = Matrix(opts["path"], opts["set"])
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
                 sample_s=opts["sample"], progress_s=opts["progress"], plots=opts["plots"],
                 force_backing=opts["force_backing"])
    doc = c.run(runs, opts["only"])
    log("")
    with open(os.path.join(out, "summary.txt")) as f:
        sys.stdout.write(f.read())
    log("results: %s (summary.txt, summary.csv, summary.json)" % out)
    return 0 if all(r.get("status") == "ok" for r in doc["runs"]) and doc["runs"] else 1


def replot(out):
    """Redraw the plots and rewrite the summary of a results directory
    from its runs/*/ files alone (e.g. on the host after a campaign in
    the VM, or after an interrupted campaign)."""
    doc = {}
    try:
        with open(os.path.join(out, "summary.json")) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        pass
    rows = load_rows(out, doc.get("runs", []))
    if not rows:
        sys.stderr.write("campaign: %s: no runs/*/ to plot\n" % out)
        return 1
    name = doc.get("campaign") or os.path.basename(os.path.abspath(out))
    missing = matplotlib_missing()
    if missing:
        # the summary is still rewritten from the runs; the plots, which
        # is what --plot was asked for, cannot be: say so and fail
        write_summary(out, name, rows, [], doc.get("elapsed_s", 0), plotted=False,
                      why="no matplotlib")
        sys.stderr.write("campaign: --plot: cannot draw the plots: %s\n" % missing)
        return 1
    figures = draw_plots(out, rows)
    write_summary(out, name, rows, figures, doc.get("elapsed_s", 0))
    with open(os.path.join(out, "summary.txt")) as f:
        sys.stdout.write(f.read())
    return 0
