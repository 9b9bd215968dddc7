#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""insn-diff.py - per-function instruction counts of two snapshots of
insn-prof.so (bench/run-insns), and where the second spent more.

usage: insn-diff.py KALLSYMS SNAP_A SNAP_B [--top N]

KALLSYMS is the guest's /proc/kallsyms from the same boot (read as
root); each block is charged to the kernel function it starts in, user
space to "[user]".
"""
import argparse
import bisect
import collections
import sys

USER_TOP = 0xffff800000000000


def load_symbols(path):
    syms = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) < 3 or w[1] not in "tTwW":
                continue
            addr = int(w[0], 16)
            if addr:
                syms.append((addr, w[2] + (" " + w[3] if len(w) > 3 else "")))
    syms.sort()
    return [a for a, _ in syms], [n for _, n in syms]


def load_counts(path, addrs, names):
    counts = collections.Counter()
    with open(path) as f:
        for line in f:
            va, n = line.split()
            va, n = int(va, 16), int(n)
            if va < USER_TOP:
                counts["[user]"] += n
                continue
            i = bisect.bisect_right(addrs, va) - 1
            counts[names[i] if i >= 0 else "[unknown]"] += n
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kallsyms")
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    addrs, names = load_symbols(args.kallsyms)
    if not addrs:
        sys.exit("insn-diff: no text symbols in %s (read as root?)" % args.kallsyms)
    a = load_counts(args.a, addrs, names)
    b = load_counts(args.b, addrs, names)
    ta, tb = sum(a.values()), sum(b.values())
    if not ta:
        sys.exit("insn-diff: %s counts nothing" % args.a)
    print("instructions: A %d, B %d, B/A %.4f" % (ta, tb, tb / ta))
    diff = {k: b[k] - a[k] for k in set(a) | set(b)}
    print("%14s %14s %14s  %s" % ("B - A", "A", "B", "function"))
    for k, d in sorted(diff.items(), key=lambda kv: -kv[1])[:args.top]:
        print("%14d %14d %14d  %s" % (d, a[k], b[k], k))
    print("... and where A spent more:")
    for k, d in sorted(diff.items(), key=lambda kv: kv[1])[:max(args.top // 3, 5)]:
        print("%14d %14d %14d  %s" % (d, a[k], b[k], k))


if __name__ == "__main__":
    main()
