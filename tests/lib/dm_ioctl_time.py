#!/usr/bin/python3 -S
# SPDX-License-Identifier: GPL-2.0
"""Time one device-mapper ioctl, and nothing else.

    dm_ioctl_time.py suspend|remove NAME

Suspends or removes dm device NAME with one ioctl on /dev/mapper/control
and prints how long that ioctl took, in whole milliseconds. A remove that
finds the device open (EBUSY: a probe closing it late) is tried again, up
to 50 times 0.1 s apart, as `dmsetup remove --retry` does; only the
ioctl that succeeded is timed.

Why not time `dmsetup`: under instruction counting with sleep=off
(tests/vm-run, "# ICOUNT: 0") the guest's clock leaps to its next timer
whenever the guest waits for the host, and starting dmsetup reads its
program and libraries over the 9p root, then waits for udev, which starts
programs of its own. On a loaded host those reads took seconds, so one
`dmsetup remove` measured 10 s of guest time while its ioctl took a
fraction of one (CI of 2026-12-02, reproduced with the host's page cache
dropped in a loop). What a test asserts on here is the kernel's part.

No cookie goes with the ioctl: udev still handles the device's event (it
drops the /dev/mapper link of a removed device); nothing waits for it.
"""
import errno
import fcntl
import os
import struct
import sys
import time

# struct dm_ioctl (include/uapi/linux/dm-ioctl.h): 312 bytes.
DM_IOCTL_FMT = "=3IIIIiIIIQ128s129s7s"
DM_IOCTL_SIZE = struct.calcsize(DM_IOCTL_FMT)
DM_SUSPEND_FLAG = 1 << 1
COMMANDS = {"remove": (4, 0), "suspend": (6, DM_SUSPEND_FLAG)}


def ioc_rw(nr):
    """_IOWR(DM_IOCTL, nr, struct dm_ioctl)."""
    return (3 << 30) | (DM_IOCTL_SIZE << 16) | (0xFD << 8) | nr


def main(argv):
    if len(argv) != 3 or argv[1] not in COMMANDS:
        sys.stderr.write("usage: dm_ioctl_time.py suspend|remove NAME\n")
        return 2
    name = argv[2].encode()
    if not name or len(name) >= 128:
        sys.stderr.write("dm_ioctl_time.py: bad device name\n")
        return 2
    nr, flags = COMMANDS[argv[1]]
    buf = bytearray(struct.pack(DM_IOCTL_FMT, 4, 0, 0, DM_IOCTL_SIZE,
                                DM_IOCTL_SIZE, 0, 0, flags, 0, 0, 0,
                                name, b"", b""))
    fd = os.open("/dev/mapper/control", os.O_RDWR)
    try:
        for tries in range(50):
            t0 = time.monotonic()
            try:
                fcntl.ioctl(fd, ioc_rw(nr), buf)
            except OSError as e:
                if e.errno != errno.EBUSY or argv[1] != "remove" \
                        or tries == 49:
                    sys.stderr.write("dm_ioctl_time.py: %s %s: %s\n" %
                                     (argv[1], argv[2], os.strerror(e.errno)))
                    return 1
                time.sleep(0.1)
                continue
            print(int((time.monotonic() - t0) * 1000))
            return 0
    finally:
        os.close(fd)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
