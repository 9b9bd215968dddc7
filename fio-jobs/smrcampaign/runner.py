# SPDX-License-Identifier: GPL-2.0
"""The runner: a Campaign runs each run of a matrix (device set-up from
devices, fio from fiorun), records its row (runs/ID/row.json) and
rewrites the summary after each run; at the end it draws the plots
(plots, when matplotlib is there) and writes the summary.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

from .array import ArraySetup
from .devices import DeviceSetup, Sampler, find_tool, run_cmd
from .fiorun import FioRunner, write_job_file
from .matrix import JOB_KEYS, MatrixError, parse_size
from .summary import ROW_DEVICE_KEYS, analyse_run, brief, save_row, write_summary


def log(msg):
    sys.stdout.write(msg + "\n")
    sys.stdout.flush()


class Campaign(DeviceSetup, ArraySetup, FioRunner):
    """Runs a matrix's runs one after another into out: the devices
    through DeviceSetup (devices.py), arrays of them through ArraySetup
    (array.py), fio through FioRunner (fiorun.py);
    a row per run, then the plots and the summary (finish)."""

    def __init__(self, matrix, out, clients=(), smrctl=None, use_smrctl=True,
                 smrd=None, use_smrd=True, sample_s=1.0, progress_s=10.0,
                 plots=True, fio="fio", mnt_root="/tmp/campaign-mnt", force_backing=False):
        self.m = matrix
        self.force_backing = force_backing
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

    # -- one run --------------------------------------------------------
    def run_one(self, run, total):
        rid = run["id"]
        rundir = os.path.join(self.out, "runs", rid)
        os.makedirs(rundir, exist_ok=True)
        o, model = run["dev"], run["dev"]["model"]
        row = {"run": rid, "job": run["job"], "device": run["device"], "model": model,
               "jobfile": os.path.basename(run["file"] or ""), "status": "ok", "error": ""}
        for k in ROW_DEVICE_KEYS:
            row[k] = o.get(k, "")
        row["varied"] = " ".join("%s=%s" % kv for kv in run["varied"].items())
        desc = ", ".join("%s=%s" % kv for kv in run["varied"].items())
        self.say("run %d/%d %s: job %s on %s (%s)%s" % (
            run["index"], total, rid, run["job"], run["device"], model, " [%s]" % desc if desc else ""))
        name = mnt = sampler = smrd = None
        try:
            if run.get("array"):
                if self.clients:
                    raise RuntimeError("with --client the runner cannot build arrays on the "
                                       "remote boxes")
                row["jobfile"] = os.path.basename(run["file"] or "") or "(rebuild only)"
                row["created"] = "mdadm"
                self.run_array(run, row, rundir)
                return self.end_row(row, rundir)
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
            row.update(self.run_fio(run, rundir, jobf, t0, sampler,
                                    dev=None if self.clients else path, mnt=mnt))
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
        return self.end_row(row, rundir)

    def end_row(self, row, rundir):
        """The run's figures from its files into its row; row.json."""
        row.update(analyse_run(rundir, row))
        if row.get("warning"):
            self.say("  warning: %s" % row["warning"])
        save_row(rundir, row)
        self.rows.append(row)
        self.say("  %s: %s" % (row["status"], brief(row)))
        return row

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
        todo = [r for r in runs if not only or r["id"] in only or str(r["index"]) in only]
        for r in todo:
            self.run_one(r, len(runs))
            if len(self.rows) < len(todo):
                # an interrupted campaign leaves the summary of the
                # runs it finished
                write_summary(self.out, self.m.name, self.rows, [], time.time() - self.t_start,
                              plotted=False, planned=len(todo))
        return self.finish()

    def finish(self):
        figures = []
        missing = matplotlib_missing() if self.plots else None
        if missing:
            log("no plots: %s" % missing)
        elif self.plots:
            figures = draw_plots(self.out, self.rows)
        return write_summary(self.out, self.m.name, self.rows, figures,
                             time.time() - self.t_start, plotted=self.plots and not missing,
                             why="no matplotlib" if missing else None)


def matplotlib_missing():
    """Why the plots cannot be drawn (matplotlib not importable), or None."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as e:
        return "%s (apt-get install python3-matplotlib)" % e
    return None


def draw_plots(out, rows):
    # matplotlib wants a writable config/cache dir (the VM's root is
    # read-only); building its font cache takes a minute under QEMU.
    if not os.access(os.path.expanduser("~/.config"), os.W_OK) or os.environ.get("SMR_RESULTS"):
        os.environ.setdefault("MPLCONFIGDIR", os.path.join(
            os.environ.get("SMR_RESULTS") or "/tmp", ".matplotlib"))
    try:
        from . import plots
        return plots.draw_all(out, rows)
    except ImportError as e:
        log("no plots: %s (install python3-matplotlib)" % e)
        return []
