#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tests/lib/fs_power.py - a file system workload that logs what fsync made
durable, and its check after a power cut (tests/test_fs_03_power_cut.sh).

  write --dir D --log L --seed S [--ops N]
      Ops drawn from random.Random(S), one at a time: create a file of
      1-64 KiB (60 %), overwrite a file with new data (25 %), delete one
      (15 %). Each op is followed by fsync of the file (if it exists) and
      of D. The log L (outside the file system, each line flushed):
        I path          about to change path
        D path sha256   path holds this, durably (fsync'd file and dir)
        X path          path is durably gone
      Ends on the first OSError (the power cut), or after N ops. Prints
      how many ops were durable and how it ended.

  check --dir D --log L
      For every path the log names: if its last record is D or X, the
      file must hold exactly that data, or be absent. A path whose last
      record is I was in flight: its last durable state or anything else
      is allowed (the op may have landed whole or in part), but it must
      be readable. Exit 1 on any mismatch.
"""

import argparse
import hashlib
import os
import random
import sys


def sha(data):
    return hashlib.sha256(data).hexdigest()


def fsync_dir(d):
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def cmd_write(a):
    rng = random.Random(a.seed)
    log = open(a.log, "a", buffering=1)
    names = []
    n = durable = 0
    try:
        while a.ops == 0 or n < a.ops:
            n += 1
            r = rng.random()
            if r < 0.60 or len(names) < 4:
                name = "f%06d" % n
                names.append(name)
            elif r < 0.85:
                name = rng.choice(names)
            else:
                name = names.pop(rng.randrange(len(names)))
                log.write("I %s\n" % name)
                os.unlink(os.path.join(a.dir, name))
                fsync_dir(a.dir)
                log.write("X %s\n" % name)
                durable += 1
                continue
            data = rng.randbytes(rng.randint(1, 64) * 1024)
            path = os.path.join(a.dir, name)
            log.write("I %s\n" % name)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                os.write(fd, data)
                os.fsync(fd)
            finally:
                os.close(fd)
            fsync_dir(a.dir)
            log.write("D %s %s\n" % (name, sha(data)))
            durable += 1
    except OSError as e:
        print("ended on %s after %d ops, %d durable" % (e.strerror, n, durable))
        return 0
    print("ended after %d ops, %d durable" % (n, durable))
    return 0


def cmd_check(a):
    last = {}
    state = {}
    with open(a.log) as f:
        for line in f:
            p = line.split()
            if not p:
                continue
            if p[0] == "I" and len(p) == 2:
                last[p[1]] = ("I", None)
            elif p[0] == "D" and len(p) == 3:
                last[p[1]] = ("D", p[2])
                state[p[1]] = p[2]
            elif p[0] == "X" and len(p) == 2:
                last[p[1]] = ("X", None)
                state[p[1]] = None
    bad = []
    n_d = n_x = n_i = 0
    for name, (tag, want) in sorted(last.items()):
        path = os.path.join(a.dir, name)
        try:
            with open(path, "rb") as f:
                got = sha(f.read())
        except FileNotFoundError:
            got = None
        except OSError as e:
            bad.append("%s: cannot read it: %s" % (name, e.strerror))
            continue
        if tag == "D":
            n_d += 1
            if got != want:
                bad.append("%s: fsync'd data %s, holds %s" % (name, want[:12], got and got[:12]))
        elif tag == "X":
            n_x += 1
            if got is not None:
                bad.append("%s: durably deleted, but it is there" % name)
        else:
            n_i += 1
    print("%d files durable, %d durably deleted, %d in flight at the cut; %d bad"
          % (n_d, n_x, n_i, len(bad)))
    for b in bad[:20]:
        print("BAD " + b)
    return 1 if bad or n_d == 0 else 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    c = sub.add_parser("check")
    for s in (w, c):
        s.add_argument("--dir", required=True)
        s.add_argument("--log", required=True)
    w.add_argument("--seed", type=int, required=True)
    w.add_argument("--ops", type=int, default=0)
    a = p.parse_args()
    return {"write": cmd_write, "check": cmd_check}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
