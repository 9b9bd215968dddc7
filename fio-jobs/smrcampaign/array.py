# SPDX-License-Identifier: GPL-2.0
"""Arrays of emulated drives (docs/campaigns.md, "Arrays"): an md array
(mdadm) built from several drives, each its own dm device with its own
profile, carved from one backing device or each on its own; one member
failed and a replacement added; the rebuild sampled (md's progress and
the replacement's status) until the array is whole, with an optional
foreground fio job meanwhile; then the data checked (fio verification of
what was written before the failure, md's parity check).

Each drive is a dm target of its own, with its own timing model (its own
actuator, cache and cleaner). Drives carved from one backing device share
nothing but that device: the time each takes is its own model's as long
as the backing is faster than the drives together (docs/timing.md,
"Limits": model_lag_ms in a drive's status says when it is not).
"""

import os
import shutil
import threading
import time

from .devices import Sampler, refuse_in_use, run_cmd, status_once
from .fiorun import write_job_file
from .matrix import JOB_KEYS, parse_size, sectors

MD_SYS = "/sys/block/%s/md/%s"


def md_attr(md, attr):
    try:
        with open(MD_SYS % (md, attr)) as f:
            return f.read().strip()
    except OSError:
        return None


def md_set(md, attr, value):
    with open(MD_SYS % (md, attr), "w") as f:
        f.write(value)


def sync_progress(md):
    """(done, total) sectors of md's resync, recovery or check; None when
    no such work runs ("none" in sync_completed)."""
    v = md_attr(md, "sync_completed") or "none"
    if "/" not in v:
        return None
    a, _, b = v.partition("/")
    try:
        return int(a), int(b)
    except ValueError:
        return None


def slice_sectors(o):
    """The slice of the array's backing a drive of size o["size"] gets:
    its size, and room for what the target keeps beside the data. A
    drive-managed drive: a sixteenth more and 64 MiB (its metadata, a
    persistent cache of up to 5 %, a spare band of up to 32 MiB); the
    others a sixty-fourth more and 4 MiB (metadata: caveat's damage map
    is a bit per block). smrctl refuses a slice too small, with the size
    it needs."""
    n = sectors(o["size"])
    if o.get("model") == "drive-managed":
        return n + n // 16 + (64 << 11)
    return n + n // 64 + (4 << 11)


class MdSampler(Sampler):
    """md's sync progress into rebuild.csv every period, a tenth of a
    second at most: t (seconds since t0), action, done and total sectors,
    md's own speed (KiB/s), the degraded count. md rebuilds a small
    member in a second or two, which the campaign's period (one second)
    can miss whole; these are a few sysfs reads, not a dmsetup call."""

    MAX_PERIOD = 0.1

    def __init__(self, name, path, t0, period):
        super().__init__(name, path, t0, min(period, self.MAX_PERIOD))

    def sample(self):
        p = sync_progress(self.name)
        return {"action": md_attr(self.name, "sync_action") or "",
                "done": p[0] if p else "", "total": p[1] if p else "",
                "speed_kibs": (md_attr(self.name, "sync_speed") or "").replace("none", ""),
                "degraded": md_attr(self.name, "degraded") or ""}


class ArraySetup:
    """The array half of the runner (runner.Campaign): uses DeviceSetup's
    create/remove, FioRunner's run_fio, and say()."""

    def array_names(self, run):
        base = run["array"].get("name") or "cmp_%s" % run["device"]
        return base, ["%s_d%d" % (base, i + 1) for i in range(len(run["member_devs"]))]

    def carve(self, run, base, rundir, made):
        """Slices of the array's backing for drives without their own:
        dm-linear devices base_sN, in member order, the replacement last.
        Returns the backing path per member and the replacement's."""
        back = run["array"].get("backing")
        devs = run["member_devs"] + [run["dev"]]
        if any(not o.get("backing") for o in devs):
            refuse_in_use(back, "array %s: the backing" % base,
                          self.force_backing)
        paths, off = [], 0
        for i, o in enumerate(devs):
            if o.get("backing"):
                paths.append(o["backing"])
                continue
            n = slice_sectors(o)
            name = "%s_s%d" % (base, i + 1)
            run_cmd(["dmsetup", "create", name, "--table", "0 %d linear %s %d" % (n, back, off)],
                    "dmsetup create (slice)")
            made.append(name)
            paths.append("/dev/mapper/" + name)
            off += n
        with open(os.path.join(rundir, "slices.txt"), "w") as f:
            f.write("".join("%s\n" % p for p in paths))
        return paths[:-1], paths[-1]

    def make_drive(self, o, name, backing, rundir, made, loops=None, pending=None):
        """Create one drive (its name appended to made, for the removal
        at the end, before anything else can fail), and make sure md has
        no claim on it (unclaim), or with pending (a list) append the
        paths to release to it, for one unclaim of several drives. With
        loops (a list): behind a request queue (queue_in_front), the loop
        device appended to it. Returns the path md is to use."""
        d = os.path.join(rundir, "drives", name)
        os.makedirs(d, exist_ok=True)
        pseudo = {"dev": dict(o, backing=backing, name=name), "device": name}
        n, path, how = self.create(pseudo, d)
        made.append(n)
        paths = [path]
        if loops is not None:
            path = self.queue_in_front(path, loops)
            paths.append(path)
        if pending is None:
            self.unclaim(paths)
        else:
            pending.extend(paths)
        return path

    def queue_in_front(self, path, loops):
        """A request queue in front of a drive, as a real disk has one:
        a loop device with direct I/O and 4 KiB sectors, scheduler
        mq-deadline. md's RAID 5 sends its members a 4 KiB bio per stripe;
        a disk's queue merges and sorts them into large commands before
        the drive sees them, and the drive (its timing model, its
        sequential-write detection) should see what a disk would. The
        loop device passes each request on as one bio."""
        run_cmd(["modprobe", "loop"], "modprobe loop", check=False)
        lo = run_cmd(["losetup", "--find", "--show", "--direct-io=on", "--sector-size", "4096",
                      path], "losetup").stdout.strip()
        loops.append(lo)
        q = "/sys/block/%s/queue/scheduler" % os.path.basename(lo)
        try:
            with open(q, "w") as f:
                f.write("mq-deadline")
        except OSError as e:
            self.say("  %s: no mq-deadline (%s): the queue merges, does not sort" % (lo, e))
        dio = "/sys/block/%s/loop/dio" % os.path.basename(lo)
        try:
            with open(dio) as f:
                if f.read().strip() != "1":
                    raise RuntimeError("%s over %s does not do direct I/O: its page cache "
                                       "would stand between md and the drive" % (lo, path))
        except OSError:
            pass
        return lo

    def unclaim(self, paths):
        """A drive formatted over a backing an earlier array used may
        still show that array's md superblock: a drive-managed one, whose
        zeroing at the end of that run went to its persistent cache, which
        a format drops. udev's incremental assembly (mdadm's rules) then
        takes the drive into an inactive array. Stop any array holding
        the drive, and zero the superblock it shows; an error if that
        does not hold (release()). paths: one path or a list (a drive and
        the loop device in front of it, or several drives). With several
        drives made before one unclaim, udev may have started an old
        array of more than one of them, not only held one inactive: the
        same stop, retried while md says it is busy."""
        if isinstance(paths, str):
            paths = [paths]
        left = self.release(paths, say=True)
        if left:
            raise RuntimeError("%s: md still holds it (%s) after %d tries to release it"
                               % (" ".join(paths), left, self.RELEASE_TRIES))

    RELEASE_TRIES = 5

    def say_if_slow(self, what, t):
        """Name a step that took 5 s or more since t: the time between a
        run's last figure and its "ok" line is otherwise unexplained."""
        if time.time() - t >= 5:
            self.say("  %s took %.1f s" % (what, time.time() - t))

    def release(self, paths, say=False):
        """Stop the md arrays holding paths (one path or a list) and zero
        their md superblocks, until neither comes back: stopping an array
        that udev assembled from a stale superblock sends a change event
        on its members, and udev's incremental assembly can take the
        member again before the superblock is zeroed (seen on 6.12, where
        this left the drive held at the end of the run). All the paths in
        one round: one mdadm --zero-superblock, a udevadm settle before
        and after (each settle waits for udev's work on every device, a
        few seconds under TCG). At most RELEASE_TRIES rounds; returns a
        description of what still holds them ('' when nothing does)."""
        if isinstance(paths, str):
            paths = [paths]
        if not paths:
            return ""
        left = ""
        for _ in range(self.RELEASE_TRIES):
            run_cmd(["udevadm", "settle"], "udevadm settle", check=False)
            stopped = set()
            for path in paths:
                for h in self.md_holders(path):
                    if h in stopped:        # an array of several of them
                        continue
                    stopped.add(h)
                    if say:
                        self.say("  %s was taken into /dev/%s (an old superblock): stopping it"
                                 % (path, h))
                    run_cmd(["mdadm", "--stop", "/dev/" + h], "mdadm --stop", check=False)
            z = run_cmd(["mdadm", "--zero-superblock"] + list(paths), "mdadm --zero-superblock",
                        check=False)
            run_cmd(["udevadm", "settle"], "udevadm settle", check=False)
            held = ["%s (%s)" % (p, ", ".join(h)) if len(paths) > 1 else ", ".join(h)
                    for p, h in ((p, self.md_holders(p)) for p in paths) if h]
            if not held and z.returncode == 0:
                return ""
            left = "; ".join(held) or "mdadm --zero-superblock: " + \
                (z.stderr.strip() or "exit %d" % z.returncode)
        return left

    @staticmethod
    def md_holders(path):
        """The md devices that hold the block device path (sysfs)."""
        dm = os.path.basename(os.path.realpath(path))
        hold = "/sys/class/block/%s/holders" % dm
        return [h for h in sorted(os.listdir(hold)) if h.startswith("md")] \
            if os.path.isdir(hold) else []

    MD_NAME_WAIT_S = 60

    def md_of(self, drive):
        """The kernel's name (mdN) of the array mdadm --create has just
        made of drive: the md device holding it, which the kernel shows
        before --create returns. Not the link /dev/md/NAME: udev makes
        that when it gets to it, and under a debug kernel it came after
        the run had looked the array up through it; the missing link
        named no array, whose initial sync then seemed never to end
        (test_md_01 under 6.12.118-smrlean, 2026-12-02). Commands then
        name the array by its node, /dev/mdN, which is there as soon as
        the array is."""
        t = time.time()
        while True:
            held = self.md_holders(drive)
            if held:
                return held[0]
            if time.time() - t > self.MD_NAME_WAIT_S:
                raise RuntimeError("mdadm --create returned, but no md array holds %s after %d s"
                                   % (drive, self.MD_NAME_WAIT_S))
            time.sleep(0.1)

    def wait_sync(self, md, what, timeout, t0=None, stop=None):
        """Wait until md's sync action is idle; progress every progress_s.
        Returns the seconds waited, or None after timeout or once the
        event stop is set."""
        t0 = t0 or time.time()
        said = time.time()
        idle = None
        # md starts the work a moment after it is due (after the create,
        # after the add): done is idle and whole, and still so a poll
        # later; the time is the first such poll's
        while True:
            now = time.time()
            act = md_attr(md, "sync_action")
            p = sync_progress(md)
            if act == "idle" and p is None and md_attr(md, "degraded") in ("0", None):
                if idle is not None:
                    return idle - t0
                idle = now
            else:
                idle = None
            if time.time() - t0 > timeout or (stop and stop.is_set()):
                return None
            if self.progress_s and time.time() - said >= self.progress_s:
                said = time.time()
                self.say("  %s %3.0f s: %s %s" % (what, time.time() - t0, act,
                         "%.0f%%" % (100.0 * p[0] / p[1]) if p and p[1] else ""))
            time.sleep(0.05)

    def run_array(self, run, row, rundir):
        """The array run: build, fill, fail, replace, rebuild, check.
        Fills row; raises RuntimeError on failure (the runner records it)."""
        a = run["array"]
        base, names = self.array_names(run)
        level = a["level"]
        timeout = float(run["jobopts"].get("timeout", self.m.campaign.get("timeout", 3600)))
        made = []               # dm devices to remove, in creation order
        # loop devices in front of the drives (queue = loop), or None
        loops = [] if a.get("queue", "loop") == "loop" else None
        md = mdpath = None
        sampler = mds = waiter = None
        stop = threading.Event()
        if not shutil.which("mdadm"):
            raise RuntimeError("mdadm is not installed (apt-get install mdadm)")
        try:
            paths, rpath = self.carve(run, base, rundir, made)
            drives, pending = [], []
            for o, name, p in zip(run["member_devs"], names, paths):
                drives.append(self.make_drive(o, name, p, rundir, made, loops, pending))
            self.unclaim(pending)
            self.say("  %d drives: %s" % (len(drives), ", ".join(
                "%s (%s)" % (n, o.get("profile") or o["model"]) for n, o in zip(names, run["member_devs"]))))
            # Not this run's array: teardown must not stop it.
            if os.path.exists("/dev/md/" + base):
                raise RuntimeError("an md array /dev/md/%s exists already, not made by this run: "
                                   "stop it, or give the array another name (name = ...)" % base)
            mdpath = "/dev/md/" + base      # from here on, this run's to stop
            args = ["mdadm", "--create", mdpath, "--run", "--level=%s" % level,
                    "--raid-devices=%d" % len(drives), "--metadata=1.2", "--bitmap=none"]
            if level != "1":
                args.append("--chunk=%dK" % (parse_size(a.get("chunk", "512K")) // 1024))
            if a.get("sync", "resync") == "assume-clean":
                args.append("--assume-clean")
            run_cmd(args + drives, "mdadm --create", input="y\n")
            md = self.md_of(drives[0])
            mdpath = "/dev/" + md
            for k, f in (("speed_min", "sync_speed_min"), ("speed_max", "sync_speed_max")):
                if a.get(k):
                    md_set(md, f, str(parse_size(a[k]) // 1024))
            row["array"] = "RAID %s of %d: %s" % (level, len(drives), ", ".join(
                o.get("profile") or o["model"] for o in run["member_devs"]))
            row["replacement"] = a["replacement"]
            row["queue"] = "loop" if loops is not None else "none"
            w = self.wait_sync(md, "initial sync", timeout)
            if w is None:
                raise RuntimeError("the array's initial sync took longer than %d s" % timeout)
            row["initial_sync_s"] = round(w, 1)
            self.say("  /dev/md/%s (%s): RAID %s%s, initial sync %.1f s" % (
                base, md, level, "" if level == "1" else ", %d KiB chunks" % (
                    int(md_attr(md, "chunk_size") or 0) // 1024), w))

            # what the check after the rebuild reads back
            fill = int(a.get("fill", "50%" if run.get("file") else "100%").rstrip("%"))
            size = int(run_cmd(["blockdev", "--getsize64", mdpath], "blockdev").stdout)
            fill_b = size * fill // 100 // (1 << 20) << 20
            vjob = ["--name=fill", "--filename=" + mdpath, "--rw=write", "--bs=1M",
                    "--direct=1", "--ioengine=libaio", "--iodepth=4", "--size=%d" % fill_b,
                    "--verify=crc32c", "--verify_state_save=0",
                    # one process: a timeout's kill leaves no job writing on
                    "--thread"]
            if fill_b:
                t = time.time()
                run_cmd(["fio"] + vjob + ["--do_verify=0"], "fio (fill)", timeout=timeout)
                self.say("  wrote %d MiB of checked data in %.1f s" % (fill_b >> 20, time.time() - t))
            row["fill_mib"] = fill_b >> 20

            # fail a member, take it out, put the replacement in
            k = int(a.get("fail") or len(drives)) - 1
            t0 = time.time()
            with open(os.path.join(rundir, "t0"), "w") as f:
                f.write("%.0f\n" % (t0 * 1000))
            run_cmd(["mdadm", mdpath, "--fail", drives[k]], "mdadm --fail")
            run_cmd(["mdadm", mdpath, "--remove", drives[k]], "mdadm --remove")
            rname = base + "_new"
            t = time.time()
            rdev = self.make_drive(run["dev"], rname, rpath, rundir, made, loops)
            self.say_if_slow("creating the replacement", t)
            with open(os.path.join(rundir, "table.txt"), "w") as f:
                f.write(run_cmd(["dmsetup", "table", rname], "dmsetup table").stdout)
            sampler = Sampler(rname, os.path.join(rundir, "status.csv"), t0, self.sample_s)
            sampler.start()
            mds = MdSampler(md, os.path.join(rundir, "rebuild.csv"), t0, self.sample_s)
            mds.start()
            run_cmd(["mdadm", mdpath, "--add", rdev], "mdadm --add")
            t_add = time.time()
            row["add_s"] = round(t_add - t0, 3)
            self.say("  failed %s, added %s (%s)" % (names[k], rname,
                                                     run["dev"].get("profile") or run["dev"]["model"]))
            if run.get("file"):
                # the foreground job: on the part of the array after the
                # checked data ($DEV, $FG_OFFSET, $FG_SIZE)
                env = {k: v for k, v in run["jobopts"].items() if k not in JOB_KEYS}
                env.update(DEV=mdpath, FG_OFFSET=str(fill_b), FG_SIZE=str(size - fill_b),
                           NAME=base)
                if size - fill_b < (1 << 20):
                    raise RuntimeError("fill = %d%% leaves no room for the foreground job" % fill)
                write_job_file(run["file"], os.path.join(rundir, "job.fio"), dict(os.environ, **env))
            done = {}
            waiter = threading.Thread(target=lambda: done.update(
                s=self.wait_sync(md, "rebuild", timeout, t_add, stop)), daemon=True)
            waiter.start()
            if run.get("file"):
                row.update(self.run_fio(run, rundir, os.path.join(rundir, "job.fio"), t0,
                                        sampler, dev=None))
                row["fio_end_s"] = round(time.time() - t0, 3)
            waiter.join(timeout + 60)
            if done.get("s") is None:
                raise RuntimeError("the rebuild took longer than %d s" % timeout)
            rebuilt = int(md_attr(md, "component_size") or 0) * 1024
            row["rebuild_s"] = round(done["s"], 2)
            row["rebuild_mibs"] = round(rebuilt / 1048576.0 / done["s"], 2) if done["s"] else ""
            self.say("  rebuilt %d MiB in %.1f s (%.1f MiB/s)" % (
                rebuilt >> 20, done["s"], row["rebuild_mibs"] or 0))
            st = status_once(rname)
            if st and "cache_used" in st:
                row["repl_cache_used_pct"] = round(100.0 * st["cache_used"] / st["cache_total"], 1)
                row["repl_state"] = st.get("state", "")
            mds.stop()
            mds = None
            sampler.stop()
            sampler = None

            # the data: fio's verification, then md's parity check
            if fill_b:
                p = run_cmd(["fio"] + vjob + ["--verify_only", "--verify_fatal=1"],
                            "fio (verify)", timeout=timeout, check=False)
                row["verify"] = "ok" if p.returncode == 0 else "FAILED"
                if p.returncode:
                    raise RuntimeError("the data written before the failure did not verify "
                                       "after the rebuild: %s" % (p.stdout + p.stderr)[-300:])
            if a.get("check", "on") == "on":
                t = time.time()
                md_set(md, "sync_action", "check")
                if self.wait_sync(md, "check", timeout) is None:
                    raise RuntimeError("md's check took longer than %d s" % timeout)
                row["mismatch_cnt"] = int(md_attr(md, "mismatch_cnt") or 0)
                self.say("  md check: mismatch_cnt %d (%.1f s)" % (row["mismatch_cnt"], time.time() - t))
                if row["mismatch_cnt"]:
                    raise RuntimeError("md's check found %d mismatched sectors after the rebuild"
                                       % row["mismatch_cnt"])
            row["end_s"] = round(time.time() - t0, 3)
            return rname
        finally:
            stop.set()
            if waiter:
                waiter.join(5)
            for s in (sampler, mds):
                if s:
                    s.stop()
            self.teardown(base, mdpath, made, rundir, loops or [])

    def teardown(self, base, mdpath, made, rundir, loops):
        """Stop the array, zero the drives' md superblocks, keep the
        replacement's last status, remove the drives and slices. Every
        step is tried whatever the one before did."""
        def attempt(args, what):
            t = time.time()
            try:
                return run_cmd(args, what, check=False)
            except RuntimeError as e:      # not started, or timed out
                self.say("  %s: %s" % (what, e))
                return None
            finally:
                self.say_if_slow("teardown: " + what, t)
        if mdpath and os.path.exists(mdpath):
            attempt(["mdadm", "--stop", mdpath], "mdadm --stop")
        attempt(["udevadm", "settle"], "udevadm settle")
        def release(paths):
            t = time.time()
            try:
                left = self.release(paths)
            except RuntimeError as e:      # a command timed out
                left = str(e)
                # every drive tried whatever another did: one at a time
                if len(paths) > 1:
                    for p in paths:
                        try:
                            self.release(p)
                        except RuntimeError:
                            pass
            if left:
                self.say("  %s: %s" % (" ".join(paths), left))
            self.say_if_slow("teardown: releasing " + " ".join(paths), t)
        release(loops)
        for lo in loops:
            attempt(["losetup", "-d", lo], "losetup -d")
        # No md superblock may outlive the run: udev's incremental
        # assembly (mdadm's rules) would take the drives of a later run
        # over the same backing before its mdadm --create.
        # (an array udev assembled from a drive, in a run that failed
        # before unclaim(), holds it: stop that too)
        release(["/dev/mapper/" + n for n in made if not n.startswith(base + "_s")])
        for n in reversed(made):
            p = attempt(["dmsetup", "status", n], "dmsetup status")
            st = p.stdout.strip() if p else ""
            if st and n == base + "_new":
                with open(os.path.join(rundir, "status.final"), "w") as f:
                    f.write(st + "\n")
            t = time.time()
            try:
                self.remove(n)
            except RuntimeError as e:
                self.say("  removing %s: %s" % (n, e))
            self.say_if_slow("teardown: removing " + n, t)
