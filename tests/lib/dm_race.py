# SPDX-License-Identifier: GPL-2.0
"""Two writers racing on the same 4 KiB blocks of a device (test_dm_07).

  dm_race.py write DEV BLOCK...   two threads write each BLOCK, pattern A
                                  and pattern B, released together block
                                  by block (O_DIRECT); prints nothing
  dm_race.py read DEV BLOCK...    prints "BLOCK A|B|other" per block
  dm_race.py hot DEV FIRST N ROUNDS
                                  one writer, ROUNDS passes over blocks
                                  FIRST..FIRST+N-1, each pass in its own
                                  shuffled order and with its own pattern
                                  (O_DIRECT): a band of superseded copies
  dm_race.py hotcheck DEV FIRST N ROUNDS
                                  prints how many of those blocks do not
                                  hold the last pass's pattern

A pattern names its block, so a block read from the wrong place is
"other", never A or B.
"""
import mmap
import os
import random
import sys
import threading

BS = 4096


def pattern(tag, block):
    unit = tag + block.to_bytes(8, "little") + b"\0" * 7
    return unit * (BS // len(unit))


def aligned(data):
    buf = mmap.mmap(-1, BS)
    buf.write(data)
    return buf


def writer(dev, tag, blocks, barrier, errors):
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
    try:
        for b in blocks:
            buf = aligned(pattern(tag, b))
            barrier.wait()
            if os.pwritev(fd, [buf], b * BS) != BS:
                errors.append("short write at block %d" % b)
    except OSError as e:
        errors.append(str(e))
        barrier.abort()
    finally:
        os.close(fd)


def hot_tag(rnd):
    return bytes([ord("a") + rnd % 26])


def hot(dev, first, n, rounds):
    fd = os.open(dev, os.O_WRONLY | os.O_DIRECT)
    rng = random.Random(first * 1000 + n)
    try:
        for rnd in range(rounds):
            order = list(range(first, first + n))
            rng.shuffle(order)
            for b in order:
                if os.pwritev(fd, [aligned(pattern(hot_tag(rnd), b))], b * BS) != BS:
                    sys.exit("dm_race.py: short write at block %d" % b)
    finally:
        os.close(fd)


def hotcheck(dev, first, n, rounds):
    fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, BS)
    bad = 0
    for b in range(first, first + n):
        os.preadv(fd, [buf], b * BS)
        bad += bytes(buf) != pattern(hot_tag(rounds - 1), b)
    os.close(fd)
    print(bad)


def main():
    cmd, dev, blocks = sys.argv[1], sys.argv[2], [int(b) for b in sys.argv[3:]]
    if cmd in ("hot", "hotcheck"):
        (hot if cmd == "hot" else hotcheck)(dev, *blocks)
    elif cmd == "write":
        barrier, errors = threading.Barrier(2), []
        threads = [threading.Thread(target=writer,
                                    args=(dev, tag, blocks, barrier, errors))
                   for tag in (b"A", b"B")]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            sys.exit("dm_race.py: " + "; ".join(errors))
    elif cmd == "read":
        fd = os.open(dev, os.O_RDONLY | os.O_DIRECT)
        buf = mmap.mmap(-1, BS)
        for b in blocks:
            os.preadv(fd, [buf], b * BS)
            data = bytes(buf)
            kind = ("A" if data == pattern(b"A", b) else
                    "B" if data == pattern(b"B", b) else "other")
            print(b, kind)
        os.close(fd)
    else:
        sys.exit("usage: dm_race.py write|read DEV BLOCK... | hot|hotcheck DEV FIRST N ROUNDS")


if __name__ == "__main__":
    main()
