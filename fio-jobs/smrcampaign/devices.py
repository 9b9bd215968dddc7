# SPDX-License-Identifier: GPL-2.0
"""The devices a campaign runs on: creating them (smrctl, or dmsetup
with a table computed here; a file; an existing device), loading the
target's module, mkfs and mount, sampling ``dmsetup status`` while a job
runs, recording smrd's events, waiting for cleaning, removing them,
finding the processes that still hold one open (holders, wait_free);
and run_cmd, the runner's way of running a command.
"""

import csv
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import threading
import time

from .matrix import ROOT, MatrixError, parse_size, sectors
from .model import parse_status


def find_tool(name, given=None):
    if given:
        return given if os.access(given, os.X_OK) else None
    p = shutil.which(name)
    if p:
        return p
    # Built in the source tree: in the program's folder (userspace/smrd/smrd)
    p = os.path.join(ROOT, "userspace", name, name)
    return p if os.path.isfile(p) and os.access(p, os.X_OK) else None


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
        if o.get("on_damaged_read"):
            opt += ["on_damaged_read", o["on_damaged_read"]]
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
             "dnor": "--dnor", "block_size": "--block-size", "unshingled": "--unshingled",
             "on_damaged_read": "--on-damaged-read", "start_mb": "--start-mb"}
    for k, f in flags.items():
        if o.get(k):
            a += [f, o[k]]
    if o.get("seq_bypass") == "off":
        a.append("--no-seq-bypass")
    return a


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


def _same_file(fd_path, target, st, mnt):
    """Whether an open file (/proc/PID/fd/N, its link target) is the device
    (st: its os.stat) or lies under the mount point mnt. The fd itself is
    stat'ed: deleted files and other mount namespaces resolve too."""
    if mnt and (target == mnt or target.startswith(mnt.rstrip("/") + "/")):
        return True
    if st is None:
        return False
    try:
        t = os.stat(fd_path)
    except OSError:
        return False
    if stat.S_ISBLK(st.st_mode):        # the same block device, not a
        return stat.S_ISBLK(t.st_mode) and t.st_rdev == st.st_rdev  # char one
    return (t.st_dev, t.st_ino) == (st.st_dev, st.st_ino)


def holders(dev, mnt=None, proc="/proc"):
    """The processes (pid, command) that hold the device dev (a block
    device or a file) or a file under mnt open, read from /proc/*/fd
    (processes of other users are invisible without root)."""
    try:
        st = os.stat(dev) if dev else None
    except OSError:
        st = None
    out = []
    for pid in os.listdir(proc):
        if not pid.isdigit():
            continue
        fd_dir = os.path.join(proc, pid, "fd")
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            fd_path = os.path.join(fd_dir, fd)
            try:
                target = os.readlink(fd_path)
            except OSError:
                continue
            if target.startswith("/") and _same_file(fd_path, target, st, mnt):
                try:
                    with open(os.path.join(proc, pid, "comm")) as f:
                        comm = f.read().strip()
                except OSError:
                    comm = "?"
                out.append((int(pid), comm))
                break
    return out


def stacked_on(dev, sysfs="/sys"):
    """The block devices stacked on dev (a path), as smrctl create looks
    for them (userspace/lib/smr-util.c, bdev_holders()): the holders of the
    device, of each of its partitions and, for a partition, of its whole
    disk: dm devices (LVM, LUKS, multipath, another drive) and md arrays.
    Each "dm-3 (vg-home) on sdb1". dm lets one dm device map what another
    uses without a word, so this is the only warning. [] for a file or a
    path that is not there."""
    try:
        st = os.stat(dev)
    except OSError:
        return []
    if not stat.S_ISBLK(st.st_mode):
        return []
    return stacked_on_devt(os.major(st.st_rdev), os.minor(st.st_rdev), sysfs)


def stacked_on_devt(major, minor, sysfs="/sys"):
    """stacked_on() for the block device major:minor, read from sysfs (a
    test's own tree, or /sys)."""
    d = os.path.realpath("%s/dev/block/%d:%d" % (sysfs, major, minor))
    if not os.path.isdir(d):
        return []

    def of(path):
        try:
            names = sorted(n for n in os.listdir(os.path.join(path, "holders"))
                           if not n.startswith("."))
        except OSError:
            return []
        out = []
        for n in names:
            try:
                with open("%s/block/%s/dm/name" % (sysfs, n)) as f:
                    n += " (%s)" % f.read().strip()
            except OSError:
                pass
            out.append("%s on %s" % (n, os.path.basename(path)))
        return out

    found = of(d)
    if os.path.exists(os.path.join(d, "partition")):
        return found + of(os.path.dirname(d))
    try:
        subs = sorted(os.listdir(d))
    except OSError:
        subs = []
    for sub in subs:
        p = os.path.join(d, sub)
        if os.path.exists(os.path.join(p, "partition")):
            found += of(p)
    return found


def refuse_in_use(dev, what, force=False):
    """Raise RuntimeError if a dm or md device is stacked on dev, unless
    force (the campaign's --force-backing), which only says so."""
    held = stacked_on(dev)
    if not held:
        return
    msg = "%s %s is in use: %s" % (what, dev, ", ".join(held))
    if not force:
        raise RuntimeError(msg + "; the run would write over it: free it first, or "
                           "run with --force-backing if that is what you mean")
    sys.stderr.write("campaign: warning: %s; going on (--force-backing)\n" % msg)


def wait_free(dev, mnt=None, timeout=10.0):
    """Wait until nothing holds dev (or a file under mnt) open; returns
    the holders left after timeout seconds ([] when free)."""
    end = time.time() + timeout
    while True:
        h = holders(dev, mnt)
        if not h or time.time() >= end:
            return h
        time.sleep(0.2)


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


class DeviceSetup:
    """The device half of the runner (runner.Campaign): uses its smrctl,
    smrd, sample_s, progress_s, mnt_root, loopdev and say()."""

    force_backing = False       # --force-backing: a backing in use is only warned of

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
        refuse_in_use(o.get("backing"), "device %s: the backing" % run["device"],
                      self.force_backing)
        self.ensure_target(model)
        name = self.dm_name(run)
        if run_cmd(["dmsetup", "info", name], "dmsetup info", check=False).returncode == 0:
            raise RuntimeError("a dm device %s exists already: remove it (dmsetup remove %s)" % (name, name))
        via = o.get("via", "smrctl" if self.smrctl else "dmsetup")
        if via == "smrctl" and not self.smrctl:
            raise RuntimeError("device %s asks for smrctl (via = smrctl), which is not built: make -C userspace" % run["device"])
        if via == "smrctl":
            args = [self.smrctl] + smrctl_create_args(name, model, o)
            if self.force_backing:
                args.append("--force")      # refuse_in_use() said so above
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
        it: modprobe, else the modules built in this tree
        (scripts/load-modules.sh: the library smr-common first)."""
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
                p = run_cmd([os.path.join(ROOT, "scripts", "load-modules.sh"), mod],
                            "load-modules.sh", check=False)
                if p.returncode != 0:
                    raise RuntimeError(p.stderr.strip())
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
        else by polling its status; a progress line (cache level, state)
        every progress_s seconds meanwhile. Returns (seconds waited,
        cleaning seconds, how)."""
        t0 = time.time()
        self._clean_said = t0
        if use_smrctl and self.smrctl:
            args = [self.smrctl, "wait-clean", name, "--timeout", str(int(timeout))]
            try:
                p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
            except OSError as e:
                raise RuntimeError("smrctl wait-clean: %s: %s" % (args[0], e))
            while True:
                try:
                    out, err = p.communicate(timeout=min(1.0, self.progress_s or 1.0))
                    break
                except subprocess.TimeoutExpired:
                    if time.time() - t0 > timeout + 60:
                        p.kill()
                        out, err = p.communicate()
                        break
                    self.clean_progress(name, t0)
            m = re.search(r"clean after ([\d.]+) s; cleaning time ([\d.]+) s", out)
            if p.returncode == 0 and m:
                return float(m.group(1)), float(m.group(2)), "smrctl wait-clean"
            self.say("  smrctl wait-clean: exit %d: %s %s" % (p.returncode, out.strip(), err.strip()))
            if p.returncode != 0:
                return time.time() - t0, None, "smrctl wait-clean (failed or timed out)"
        # dmsetup fallback: poll the status.
        while True:
            s = status_once(name)
            if s and s.get("cache_used") == 0 and s.get("state") == "idle":
                return time.time() - t0, s.get("clean_ms_since_busy", 0) / 1000.0, "dmsetup status polling"
            if time.time() - t0 > timeout:
                return time.time() - t0, None, "dmsetup status polling (timed out)"
            self.clean_progress(name, t0, s)
            time.sleep(min(1.0, self.sample_s))

    def clean_progress(self, name, t0, s=None):
        """The progress line of a wait for cleaning, every progress_s
        seconds: the cache level and state (s: the status if read)."""
        now = time.time()
        if not self.progress_s or now - self._clean_said < self.progress_s:
            return
        self._clean_said = now
        s = s or status_once(name)
        if s and s.get("cache_total"):
            self.say("  wait-clean %3.0f s: cache %.0f%% (%d/%d sectors), state %s" % (
                now - t0, 100.0 * s["cache_used"] / s["cache_total"], s["cache_used"],
                s["cache_total"], s.get("state")))
        else:
            self.say("  wait-clean %3.0f s: no status" % (now - t0))

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
