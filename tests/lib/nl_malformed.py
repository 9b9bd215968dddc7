#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send malformed generic netlink requests to the dm-smr and dm-caveat
families and check that each is refused with an error (and that good
requests still work). Output: "CHECK PASS desc" / "CHECK FAIL desc | why"
lines, as tests/lib/cv.sh's cv_py reads them.

usage: nl_malformed.py FAMILY [FAMILY...]   (dm-smr, dm-caveat)
"""
import errno
import os
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLM_F_DUMP = 0x300
NLMSG_ERROR = 2
NLMSG_DONE = 3

# Both families number their commands and attributes alike (uapi headers).
CMD_GET_DEV, CMD_GET_STATS, CMD_SET, CMD_FIRST_EVENT = 1, 2, 3, 4
A_DEV_NAME = 2
SMR_A_EVENT_RATE, SMR_A_RESET = 20, 21
CV_A_EVENT_RATE, CV_A_RESET = 13, 14
A_EVENTS_SENT = {"dm-smr": 22, "dm-caveat": 16}
RATE = {"dm-smr": SMR_A_EVENT_RATE, "dm-caveat": CV_A_EVENT_RATE}


def attr(t, payload):
    a = struct.pack("=HH", 4 + len(payload), t) + payload
    return a + b"\0" * ((4 - len(a) % 4) % 4)


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.s.bind((0, 0))
        self.s.settimeout(3)
        self.seq = 1

    def send_raw(self, data):
        self.s.send(data)

    def msg(self, ftype, cmd, attrs=b"", flags=NLM_F_REQUEST | NLM_F_ACK,
            version=1, reserved=0, length=None):
        self.seq += 1
        body = struct.pack("=BBH", cmd, version, reserved) + attrs
        n = 16 + len(body) if length is None else length
        return struct.pack("=IHHII", n, ftype, flags, self.seq, 0) + body

    def request(self, data):
        """Send one request; return (error, [payloads]) where error is the
        errno of the NLMSG_ERROR reply (0 = ack) or None for a dump end."""
        self.send_raw(data)
        replies = []
        while True:
            buf = self.s.recv(65536)
            off = 0
            while off + 16 <= len(buf):
                ln, ty, fl, seq, pid = struct.unpack_from("=IHHII", buf, off)
                if ln < 16:
                    return (-1, replies)
                payload = buf[off + 16:off + ln]
                off += (ln + 3) & ~3
                if ty == NLMSG_ERROR:
                    return (-struct.unpack_from("=i", payload)[0], replies)
                if ty == NLMSG_DONE:
                    return (None, replies)
                replies.append(payload)

    def family(self, name):
        err, rep = self.request(self.msg(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                                         attr(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0")))
        for p in rep:
            off = 4
            while off + 4 <= len(p):
                ln, t = struct.unpack_from("=HH", p, off)
                if t == CTRL_ATTR_FAMILY_ID:
                    return struct.unpack_from("=H", p, off + 4)[0]
                off += (ln + 3) & ~3
        return None


def attrs_of(payload):
    out, off = {}, 4
    while off + 4 <= len(payload):
        ln, t = struct.unpack_from("=HH", payload, off)
        out[t & 0x3fff] = payload[off + 4:off + ln]
        off += (ln + 3) & ~3
    return out


def check(cond, desc, why=""):
    print(("CHECK PASS %s" % desc) if cond else ("CHECK FAIL %s | %s" % (desc, why)))
    sys.stdout.flush()


def rate_of(g, fid, fam):
    err, rep = g.request(g.msg(fid, CMD_GET_STATS))
    if rep:
        a = attrs_of(rep[0])
        if RATE[fam] in a:
            return struct.unpack("=I", a[RATE[fam]][:4])[0]
    return None


def run(fam):
    g = Genl()
    fid = g.family(fam)
    if fid is None:
        check(False, "%s: family resolves" % fam, "not registered")
        return
    rate0 = rate_of(g, fid, fam)
    check(rate0 is not None, "%s: GET_STATS answers (rate %s)" % (fam, rate0))

    def refused(desc, data, want=None, silent_ok=False):
        try:
            err, _ = g.request(data)
        except socket.timeout:
            # The netlink core drops a message whose length is past the
            # data without a reply: refused too.
            check(silent_ok, "%s: %s is refused (dropped)" % (fam, desc), "no reply")
            return
        ok = err not in (0, None) and (want is None or err in want)
        check(ok, "%s: %s is refused (%s)" % (fam, desc,
                                              errno.errorcode.get(err, err) if err else "accepted"),
              "error %r" % err)

    name_nonul = attr(A_DEV_NAME, b"abcd")           # 4 bytes, no NUL
    refused("a device name without its NUL", g.msg(fid, CMD_GET_DEV, name_nonul),
            (errno.EINVAL, errno.ERANGE))
    refused("a 200-byte device name", g.msg(fid, CMD_GET_DEV, attr(A_DEV_NAME, b"x" * 200 + b"\0")),
            (errno.EINVAL, errno.ERANGE))
    refused("an unknown attribute type (strict)", g.msg(fid, CMD_GET_STATS, attr(99, b"\0" * 4)),
            (errno.EINVAL,))
    refused("an attribute longer than the message",
            g.msg(fid, CMD_GET_STATS, struct.pack("=HH", 64, A_DEV_NAME) + b"ab\0\0"),
            (errno.EINVAL,))
    refused("a message length past the data",
            g.msg(fid, CMD_GET_STATS, attr(A_DEV_NAME, b"a\0"), length=200), silent_ok=True)
    refused("a non-zero reserved field", g.msg(fid, CMD_GET_STATS, reserved=7), (errno.EINVAL,))
    refused("an unknown command", g.msg(fid, 77), (errno.EOPNOTSUPP,))
    refused("an event command sent to the kernel", g.msg(fid, CMD_FIRST_EVENT), (errno.EOPNOTSUPP,))
    refused("a dump of SET", g.msg(fid, CMD_SET, flags=NLM_F_REQUEST | NLM_F_ACK | NLM_F_DUMP),
            (errno.EOPNOTSUPP,))
    refused("SET with a 1-byte rate", g.msg(fid, CMD_SET, attr(RATE[fam], b"\x05")),
            (errno.EINVAL, errno.ERANGE))
    refused("SET with a rate over the maximum",
            g.msg(fid, CMD_SET, attr(RATE[fam], struct.pack("=I", 5000000))),
            (errno.EINVAL, errno.ERANGE))
    refused("SET with a flag carrying data",
            g.msg(fid, CMD_SET, attr(RATE[fam] + 1, b"\x01\0\0\0")), (errno.EINVAL, errno.ERANGE))
    refused("SET with nothing to set", g.msg(fid, CMD_SET), (errno.EINVAL,))
    # 20 bytes of noise after a valid header, then garbage headers.
    refused("garbage attributes", g.msg(fid, CMD_GET_DEV, os.urandom(3) + b"\xff" * 17))
    refused("a request shorter than the genetlink header",
            struct.pack("=IHHII", 18, fid, NLM_F_REQUEST | NLM_F_ACK, 99, 0) + b"\x01\x01")
    check(rate_of(g, fid, fam) == rate0, "%s: the event rate is unchanged" % fam)
    err, rep = g.request(g.msg(fid, CMD_GET_DEV, flags=NLM_F_REQUEST | NLM_F_DUMP))
    check(err is None, "%s: a good dump still works after all that (%d devices)" % (fam, len(rep)),
          "error %r" % err)


def main():
    for fam in sys.argv[1:]:
        run(fam)


if __name__ == "__main__":
    main()
