#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Build dm-caveat on-disk blocks for tests (layout: common/smr-ondisk.h).

  cv_ondisk.py super-v1 SB_IN SB_OUT
      the superblock in SB_IN (4 KiB, read from the backing device) made
      version 1 (no journal), resealed: what an older dm-caveat wrote
  cv_ondisk.py journal SB_IN OUT POS FIRST LEN STAMP [--bad-crc]
      a journal block for ring position POS with one record (blocks
      FIRST..FIRST+LEN-1 damaged, stamp STAMP), of the format in SB_IN;
      --bad-crc: torn, as a write cut by a crash leaves it
  cv_ondisk.py journal-sector SB_IN
      the sector the journal starts at

The test writes the blocks to the backing device with dd (O_DIRECT).
"""
import struct
import sys
import zlib

BLOCK = 4096
CV_SB_MAGIC = 0x74764163
CV_JR_MAGIC = 0x6a764163


def crc32_le(seed, data):
    """The kernel's crc32_le(): zlib's CRC without its inversions."""
    return zlib.crc32(data, seed ^ 0xffffffff) ^ 0xffffffff


def seal_super(sb):
    sb = bytearray(sb)
    struct.pack_into('<I', sb, 4, 0)
    struct.pack_into('<I', sb, 4, crc32_le(CV_SB_MAGIC, bytes(sb)))
    return bytes(sb)


def read(path):
    with open(path, 'rb') as f:
        data = f.read(BLOCK)
    if len(data) != BLOCK:
        sys.exit('%s: short read' % path)
    return data


def main(argv):
    if len(argv) >= 3 and argv[0] == 'super-v1':
        sb = bytearray(read(argv[1]))
        struct.pack_into('<I', sb, 8, 1)       # version
        struct.pack_into('<I', sb, 72, 0)      # journal_blocks
        with open(argv[2], 'wb') as f:
            f.write(seal_super(sb))
        return 0
    if len(argv) >= 2 and argv[0] == 'journal-sector':
        md_pages = struct.unpack_from('<I', read(argv[1]), 64)[0]
        print((1 + 2 * md_pages) * (BLOCK // 512))
        return 0
    if len(argv) >= 7 and argv[0] == 'journal':
        sb = read(argv[1])
        format_id = struct.unpack_from('<Q', sb, 16)[0]
        pos, first, length, stamp = (int(x) for x in argv[3:7])
        blk = bytearray(BLOCK)
        # struct smr_blk_header: magic crc gen format_id index nr
        struct.pack_into('<IIQQII', blk, 0, CV_JR_MAGIC, 0, stamp,
                         format_id, pos, 1)
        struct.pack_into('<QQQ', blk, 32, first, stamp, length)
        crc = crc32_le(stamp & 0xffffffff, bytes(blk))
        if '--bad-crc' in argv:
            crc ^= 1
        struct.pack_into('<I', blk, 4, crc)
        with open(argv[2], 'wb') as f:
            f.write(blk)
        return 0
    sys.exit(__doc__)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
