# SPDX-License-Identifier: GPL-2.0
"""The campaign matrix (docs/campaigns.md): the INI file's format, its
sections and keys, ${VAR} expansion, --set overrides, and its expansion
into the list of runs; the size values it takes (16M, 2048s).
"""

import configparser
import itertools
import os
import re
import stat

from .model import DM_MODELS, MODELS

# fio-jobs/ (the job files) and the top of the tree
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(HERE)

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

def device_key(path):
    """What names one device whatever path names it: a block device's
    number (its links in /dev/disk/by-*, /dev/mapper and /dev/dm-N are one
    device), else the path with its links resolved."""
    try:
        st = os.stat(path)
        if stat.S_ISBLK(st.st_mode):
            return ("blk", st.st_rdev)
    except OSError:
        pass
    return ("path", os.path.realpath(path))


class MatrixError(Exception):
    pass


_VAR = r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}"


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
    return re.sub(_VAR, sub, text)


def check_backing(sec, raw, env):
    """A dm device's backing is formatted, its data lost: it must be named
    on purpose, in the matrix or in the environment, never taken from a
    ${NAME:-default} (a default such as /dev/vda is a scratch disk in the
    project's VM but the system disk of many a KVM guest)."""
    for m in re.finditer(_VAR, raw):
        name, dflt = m.group(1), m.group(3)
        if name in env:
            continue
        if dflt is not None:
            raise MatrixError(
                "[%s] backing: ${%s} is not set and its default (%s) is not used: the backing "
                "device is formatted (its data is lost), so name it: %s=/dev/sdX (or write "
                "the device in the matrix)" % (sec, name, dflt or "empty", name))
        raise MatrixError(
            "[%s] backing: ${%s} is not set: give the disk the campaign may format (its data "
            "is lost), e.g. %s=/dev/sdX fio-jobs/campaign ..." % (sec, name, name))


def split_values(v):
    """'fifo, greedy' -> ['fifo', 'greedy']: a comma makes a matrix axis."""
    return [x.strip() for x in v.split(",") if x.strip()]


# Device keys the runner knows; the rest is an error (typos must not be
# silently ignored).
DEVICE_KEYS = {"model", "backing", "path", "size", "band", "cache", "idle_ms",
               "policy", "seq_bypass", "zone", "zone_capacity", "conv",
               "max_open", "max_active", "did", "dnor", "block_size",
               "unshingled", "on_damaged_read", "profile", "start_mb", "fs", "via", "name"}
JOB_KEYS = {"file", "devices", "description", "timeout", "wait_clean"}
# Array keys (docs/campaigns.md, "Arrays"). members is a list, not an
# axis; the others' comma-separated values are axes, as a device's are.
ARRAY_KEYS = {"level", "members", "replacement", "fail", "chunk", "backing", "sync",
              "fill", "check", "speed_min", "speed_max", "queue", "name"}
ARRAY_LEVELS = {"1": 2, "5": 3, "6": 4, "10": 2}   # level -> fewest members


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
        self.arrays = {}
        for sec in cp.sections():
            if cp.has_option(sec, "backing"):
                check_backing(sec, cp.get(sec, "backing"), env)
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
                # (a dm device's backing may come from the array it is in:
                # checked in runs())
                if model in ("file", "existing") and "path" not in items:
                    raise MatrixError("[%s]: a %s device needs 'path'" % (sec, model))
                if model == "file" and "size" not in items:
                    raise MatrixError("[%s]: a file device needs 'size'" % sec)
                self.devices[name] = items
            elif kind == "job" and name:
                self.jobs[name] = items
            elif kind == "array" and name:
                bad = set(items) - ARRAY_KEYS
                if bad:
                    raise MatrixError("[%s]: unknown key(s) %s (known: %s)" %
                                      (sec, ", ".join(sorted(bad)), ", ".join(sorted(ARRAY_KEYS))))
                for k in ("level", "members", "replacement"):
                    if not items.get(k):
                        raise MatrixError("[%s]: needs '%s'" % (sec, k))
                self.arrays[name] = items
            else:
                raise MatrixError("%s: unknown section [%s] (use [campaign], [device NAME], "
                                  "[array NAME], [job NAME])" % (path, sec))
        if not self.jobs:
            raise MatrixError("%s: no [job NAME] section" % path)
        if not self.devices:
            raise MatrixError("%s: no [device NAME] section" % path)
        for aname, a in self.arrays.items():
            self.check_array(aname, a)
        carved = set()
        for a in self.arrays.values():
            if a.get("backing"):
                carved.update(split_values(a["members"]) + split_values(a["replacement"]))
        for dname, dev in self.devices.items():
            if dev.get("model") in DM_MODELS and "backing" not in dev and dname not in carved:
                raise MatrixError("[device %s]: a %s device needs 'backing' (the disk under it), "
                                  "or an [array] with 'backing' to carve it from" % (dname, dev["model"]))
        for jname, job in self.jobs.items():
            devs = split_values(job.get("devices", ",".join(self.devices)))
            if "file" not in job and not all(d in self.arrays for d in devs):
                raise MatrixError("[job %s]: needs 'file' (a fio job file; only a job on arrays "
                                  "may go without: the rebuild alone)" % jname)
            for d in devs:
                if "file" in job and d in self.arrays and \
                        "100%" in split_values(self.arrays[d].get("fill", "")):
                    raise MatrixError("[job %s]: array %s has fill = 100%%: no room is left "
                                      "for the job's foreground writes" % (jname, d))
        self.name = self.campaign.get("name", os.path.splitext(os.path.basename(path))[0])

    def check_array(self, aname, a):
        sec = "array %s" % aname
        if aname in self.devices:
            raise MatrixError("[%s]: a [device %s] has the same name" % (sec, aname))
        members = split_values(a["members"])
        for lvl in split_values(a["level"]):
            if lvl not in ARRAY_LEVELS:
                raise MatrixError("[%s]: level %s: use one of %s (md RAID levels)" %
                                  (sec, lvl, ", ".join(ARRAY_LEVELS)))
            if len(members) < ARRAY_LEVELS[lvl]:
                raise MatrixError("[%s]: RAID %s needs %d members at least, %d given" %
                                  (sec, lvl, ARRAY_LEVELS[lvl], len(members)))
        named = members + split_values(a["replacement"])
        for d in named:
            if d not in self.devices:
                raise MatrixError("[%s]: no [device %s]" % (sec, d))
            dev = self.devices[d]
            if dev.get("model") not in DM_MODELS:
                raise MatrixError("[%s]: member %s must be an emulated drive (%s), not %s" %
                                  (sec, d, ", ".join(DM_MODELS), dev.get("model")))
            multi = [k for k, v in dev.items() if len(split_values(v)) > 1]
            if multi:
                raise MatrixError("[%s]: device %s has several values for %s: an array's "
                                  "drives take one each (vary the array's keys instead)" %
                                  (sec, d, ", ".join(multi)))
            if "backing" not in dev and not a.get("backing"):
                raise MatrixError("[%s]: device %s has no 'backing' and the array none to "
                                  "carve it from" % (sec, d))
            if "backing" in dev and members.count(d) > 1:
                raise MatrixError("[%s]: device %s has a backing of its own and is named %d "
                                  "times: the drives would share it; leave 'backing' out to "
                                  "carve each from the array's" % (sec, d, members.count(d)))
            if "backing" not in dev and "size" not in dev:
                raise MatrixError("[%s]: device %s needs 'size' to be carved from the array's "
                                  "backing" % (sec, d))
        for k in ARRAY_KEYS - {"members", "replacement", "level"}:
            if k in a and not split_values(a[k]):
                raise MatrixError("[%s]: %s has no value" % (sec, k))
        # Two drives on one backing device would format each other: the
        # same device under two names (/dev/sdb, /dev/disk/by-id/...) too.
        for r in split_values(a["replacement"]):
            own = [self.devices[d]["backing"] for d in members + [r]
                   if "backing" in self.devices[d]]
            if a.get("backing"):
                own.append(a["backing"])
            keys = [device_key(b) for b in own]
            dup = sorted({b for b, k in zip(own, keys) if keys.count(k) > 1})
            if dup:
                raise MatrixError("[%s]: %s would hold two drives (replacement %s): give each "
                                  "drive its own backing, or leave 'backing' out of the drives "
                                  "to carve them from the array's" % (sec, dup[0], r))
        for f in split_values(a.get("fail", "")):
            if not (f.isdigit() and 1 <= int(f) <= len(members)):
                raise MatrixError("[%s]: fail = %s: the member to fail, 1 to %d" %
                                  (sec, f, len(members)))
        for k, ok in (("sync", ("resync", "assume-clean")), ("check", ("on", "off")),
                      ("queue", ("loop", "none"))):
            for v in split_values(a.get(k, "")):
                if v not in ok:
                    raise MatrixError("[%s]: %s = %s: use %s" % (sec, k, v, " or ".join(ok)))
        for k in ("chunk", "speed_min", "speed_max"):
            for v in split_values(a.get(k, "")):
                try:
                    n = parse_size(v)
                except ValueError as e:
                    raise MatrixError("[%s]: %s: %s" % (sec, k, e))
                if k == "chunk" and (n < 4096 or n & (n - 1)):
                    raise MatrixError("[%s]: chunk = %s: md takes a power of two from 4K" % (sec, v))
                if k != "chunk" and n < 1024:
                    raise MatrixError("[%s]: %s = %s: md counts KiB per second, give 1K "
                                      "at least" % (sec, k, v))
        lo, hi = split_values(a.get("speed_min", "")), split_values(a.get("speed_max", ""))
        if lo and hi and max(parse_size(v) for v in lo) > min(parse_size(v) for v in hi):
            raise MatrixError("[%s]: speed_min is above speed_max" % sec)
        for v in split_values(a.get("fill", "")):
            if not re.fullmatch(r"(100|[1-9]?[0-9])%", v):
                raise MatrixError("[%s]: fill = %s: a share of the array, 0%% to 100%%" % (sec, v))

    @staticmethod
    def combinations(sec, job, skip=()):
        """Every combination of the comma-separated values of the keys of
        sec (a device's or an array's, but those in skip) and of job's:
        (sec's values, job's, the keys that vary with their values)."""
        axes = [(True, k, split_values(v) or [""]) for k, v in sec.items() if k not in skip]
        axes += [(False, k, split_values(v) or [""]) for k, v in job.items()
                 if k not in ("devices", "description")]
        for combo in itertools.product(*[a[2] for a in axes]):
            s, j, varied = {}, {}, {}
            for (in_sec, k, vals), v in zip(axes, combo):
                (s if in_sec else j)[k] = v
                if len(vals) > 1:
                    varied[k] = v
            yield s, j, varied

    def array_runs(self, jname, job, aname):
        a = self.arrays[aname]
        out = []
        for arr, j, varied in self.combinations(a, job, skip=("members",)):
            arr["members"] = split_values(a["members"])
            out.append({"job": jname, "device": aname, "array": arr,
                        "dev": dict(self.devices[arr["replacement"]]),
                        "member_devs": [dict(self.devices[d]) for d in arr["members"]],
                        "jobopts": j, "varied": varied,
                        "file": self.job_file(job) if "file" in job else None})
        return out

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
                if dname in self.arrays:
                    out += self.array_runs(jname, job, dname)
                    continue
                if dname not in self.devices:
                    raise MatrixError("[job %s]: no [device %s] nor [array %s]" % (jname, dname, dname))
                dev = self.devices[dname]
                if dev.get("model") in DM_MODELS and "backing" not in dev:
                    raise MatrixError("[device %s]: a %s device on its own needs 'backing' (the "
                                      "disk under it)" % (dname, dev["model"]))
                for d, j, varied in self.combinations(dev, job):
                    out.append({"job": jname, "device": dname, "dev": d,
                                "jobopts": j, "varied": varied,
                                "file": self.job_file(job)})
        for i, r in enumerate(out, 1):
            slug = "-".join("%s=%s" % kv for kv in r["varied"].items())
            r["index"] = i
            r["id"] = re.sub(r"[^A-Za-z0-9_.=-]+", "_",
                             "%02d-%s-%s%s" % (i, r["job"], r["device"], "-" + slug if slug else ""))
        return out
