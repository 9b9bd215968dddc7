// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests for scsi-emul.c: the commands of a host-managed drive kept in
 * memory (2 conventional zones, 6 sequential, 8 blocks of 512 bytes each,
 * at most 2 open), and of an ordinary disk with a bad block. TAP on
 * stdout; exit 1 on any failure.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scsi-emul.h"
#include "tap.h"

/* ------------------------------------------------ a drive in memory --- */

#define LBS 512
#define ZLEN 8
#define NZ 8
#define NCONV 2

static uint8_t media[NZ * ZLEN * LBS];
static struct se_zone zones[NZ];
static uint64_t bad_lba = ~0ull;	/* a read of it fails */
static int flushes;
static int zone_op_err;			/* the next zone operation fails so */

static void mem_reset(void)
{
	memset(media, 0, sizeof(media));
	for (int i = 0; i < NZ; i++) {
		zones[i].start = (uint64_t)i * ZLEN;
		zones[i].len = ZLEN;
		zones[i].wp = zones[i].start;
		zones[i].type = i < NCONV ? SE_ZT_CONV : SE_ZT_SWR;
		zones[i].cond = i < NCONV ? SE_ZC_NOT_WP : SE_ZC_EMPTY;
	}
	bad_lba = ~0ull;
	flushes = 0;
	zone_op_err = 0;
}

static void copy(const struct iovec *iov, int cnt, uint8_t *m, size_t len, int to_media)
{
	size_t done = 0;

	for (int i = 0; i < cnt && done < len; i++) {
		size_t k = iov[i].iov_len < len - done ? iov[i].iov_len : len - done;

		if (to_media)
			memcpy(m + done, iov[i].iov_base, k);
		else
			memcpy(iov[i].iov_base, m + done, k);
		done += k;
	}
}

static int mem_read(void *ctx, const struct iovec *iov, int cnt, uint64_t lba, uint32_t nr)
{
	if (bad_lba >= lba && bad_lba < lba + nr)
		return -EIO;
	copy(iov, cnt, media + lba * LBS, (size_t)nr * LBS, 0);
	return 0;
}

static int mem_write(void *ctx, const struct iovec *iov, int cnt, uint64_t lba, uint32_t nr, bool fua)
{
	struct se_zone *z = &zones[lba / ZLEN];

	copy(iov, cnt, media + lba * LBS, (size_t)nr * LBS, 1);
	if (z->type == SE_ZT_SWR) {
		z->wp = lba + nr;
		z->cond = z->wp == z->start + z->len ? SE_ZC_FULL :
			  z->cond == SE_ZC_EOPEN ? SE_ZC_EOPEN : SE_ZC_IOPEN;
	}
	return 0;
}

static int mem_flush(void *ctx)
{
	flushes++;
	return 0;
}

static int mem_report(void *ctx, uint64_t lba, struct se_zone *z, unsigned int nr)
{
	unsigned int i = lba / ZLEN, n = 0;

	for (; i < NZ && n < nr; i++)
		z[n++] = zones[i];
	return n;
}

static int mem_zone_op(void *ctx, enum se_zone_op op, uint64_t lba, uint64_t nr)
{
	struct se_zone *z = &zones[lba / ZLEN];

	if (zone_op_err) {
		int e = zone_op_err;

		zone_op_err = 0;
		return e;
	}
	switch (op) {
	case SE_ZOP_OPEN: z->cond = SE_ZC_EOPEN; break;
	case SE_ZOP_CLOSE: z->cond = z->wp == z->start ? SE_ZC_EMPTY : SE_ZC_CLOSED; break;
	case SE_ZOP_FINISH: z->wp = z->start + z->len; z->cond = SE_ZC_FULL; break;
	case SE_ZOP_RESET: z->wp = z->start; z->cond = SE_ZC_EMPTY; break;
	}
	return 0;
}

static const struct se_backend mem_be = {
	.read = mem_read, .write = mem_write, .flush = mem_flush,
	.report = mem_report, .zone_op = mem_zone_op,
};

static struct se_dev hm = {
	.be = &mem_be, .nr_lbas = NZ * ZLEN, .lbs = LBS, .model = SE_ZBC_HM,
	.zone_lbas = ZLEN, .max_open = 2, .wce = true, .rpm = 7200,
	.max_xfer = 16, .product = "HM-SMR", .serial = "0123456789abcdef",
	.naa = 0x3000000000000001ull,
};

/* ------------------------------------------------------------ helpers --- */

static uint8_t buf[64 * 1024];

static struct se_cmd run(struct se_dev *d, const uint8_t *cdb, size_t len)
{
	static struct iovec iov[2];
	struct se_cmd c = { .cdb = cdb, .iov = iov, .iovcnt = 2 };

	/* two pieces, split off the block boundary, as a ring may give them */
	iov[0].iov_base = buf;
	iov[0].iov_len = len < 100 ? len : 100;
	iov[1].iov_base = buf + iov[0].iov_len;
	iov[1].iov_len = len - iov[0].iov_len;
	se_exec(d, &c);
	return c;
}

static void cdb16(uint8_t *c, uint8_t op, uint8_t b1, uint64_t lba, uint32_t n)
{
	memset(c, 0, 16);
	c[0] = op;
	c[1] = b1;
	for (int i = 0; i < 8; i++)
		c[2 + i] = lba >> (56 - 8 * i);
	for (int i = 0; i < 4; i++)
		c[10 + i] = n >> (24 - 8 * i);
}

static struct se_cmd wr(uint64_t lba, uint32_t nr, uint8_t fill)
{
	uint8_t c[16];

	cdb16(c, 0x8a, 0, lba, nr);
	memset(buf, fill, (size_t)nr * LBS);
	return run(&hm, c, (size_t)nr * LBS);
}

static struct se_cmd zout_n(uint8_t sa, uint64_t lba, uint16_t count, int all)
{
	uint8_t c[16];

	cdb16(c, 0x94, sa, lba, 0);
	c[12] = count >> 8;
	c[13] = count;
	c[14] = all;
	return run(&hm, c, 0);
}

static struct se_cmd zout(uint8_t sa, uint64_t lba, int all)
{
	return zout_n(sa, lba, 0, all);
}

/* Zones open, implicitly or explicitly. */
static int nr_open(void)
{
	int n = 0;

	for (int i = 0; i < NZ; i++)
		n += zones[i].cond == SE_ZC_IOPEN || zones[i].cond == SE_ZC_EOPEN;
	return n;
}

static void expect_sense(struct se_cmd c, uint8_t key, uint8_t asc, uint8_t ascq, const char *what)
{
	uint8_t k = 0, a = 0, q = 0;
	uint64_t info;

	if (c.status == SE_CHECK_CONDITION)
		se_sense_decode(c.sense, &k, &a, &q, &info);
	ok(c.status == SE_CHECK_CONDITION && k == key && a == asc && q == ascq,
	   "%s: sense %x/%02x/%02x (got status %u, %x/%02x/%02x)", what, key, asc, ascq,
	   c.status, k, a, q);
}

static uint64_t be64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

/* -------------------------------------------------------------- tests --- */

static void test_identify(void)
{
	uint8_t c[16] = { 0x12, 0, 0, 0, 96 };
	struct se_cmd r;

	mem_reset();
	r = run(&hm, c, 96);
	ok(r.status == SE_GOOD && buf[0] == 0x14 && !memcmp(buf + 8, "DM-SMR  ", 8),
	   "INQUIRY: peripheral type 0x14 (host-managed), vendor DM-SMR");
	ok((buf[64] << 8 | buf[65]) == 0x0660, "INQUIRY: version descriptor ZBC-2 (0660h)");
	c[1] = 1;
	c[2] = 0x00;
	r = run(&hm, c, 96);
	ok(r.status == SE_GOOD && buf[3] == 6 && buf[9] == 0xb6, "VPD 0x00 lists 6 pages, 0xb6 last");
	c[2] = 0xb6;
	r = run(&hm, c, 96);
	ok(r.status == SE_GOOD && (buf[4] & 1) && be32(buf + 16) == 2,
	   "VPD 0xb6: URSWRZ, max open 2");
	c[2] = 0xb1;
	r = run(&hm, c, 96);
	ok(r.status == SE_GOOD && (buf[4] << 8 | buf[5]) == 7200, "VPD 0xb1: 7200 rpm");
	c[2] = 0x42;
	expect_sense(run(&hm, c, 96), SE_KEY_ILLEGAL_REQUEST, 0x24, 0, "VPD page 0x42");

	cdb16(c, 0x9e, 0x10, 0, 32);
	r = run(&hm, c, 32);
	ok(r.status == SE_GOOD && be64(buf) == NZ * ZLEN - 1 && be32(buf + 8) == LBS,
	   "READ CAPACITY(16): last LBA %d, %d-byte blocks", NZ * ZLEN - 1, LBS);

	memset(c, 0, 16);
	c[0] = 0x1a;
	c[2] = 0x08;
	c[4] = 255;
	r = run(&hm, c, 255);
	ok(r.status == SE_GOOD && buf[3] == 8 && buf[12] == 0x08 && (buf[14] & 0x04) && (buf[2] & 0x10),
	   "MODE SENSE(6) caching page: WCE, DPOFUA, a block descriptor");
	c[2] = 0x48;		/* changeable values of the caching page */
	r = run(&hm, c, 255);
	ok(r.status == SE_GOOD && !(buf[14] & 0x04), "MODE SENSE(6): WCE not changeable");
	c[2] = 0xc8;
	expect_sense(run(&hm, c, 255), SE_KEY_ILLEGAL_REQUEST, 0x39, 0, "MODE SENSE saved values");

	memset(c, 0, 16);
	c[0] = 0xc0;
	expect_sense(run(&hm, c, 0), SE_KEY_ILLEGAL_REQUEST, 0x20, 0, "unknown opcode 0xc0");
}

static void test_report(void)
{
	uint8_t c[16];
	struct se_cmd r;

	mem_reset();
	wr(2 * ZLEN, 3, 0xaa);
	cdb16(c, 0x95, 0x00, 0, 64 + NZ * 64);
	r = run(&hm, c, 64 + NZ * 64);
	ok(r.status == SE_GOOD && be32(buf) == NZ * 64 && be64(buf + 8) == NZ * ZLEN - 1 &&
	   r.data_in == 64 + NZ * 64, "REPORT ZONES: %d zones, max LBA", NZ);
	ok(buf[64] == SE_ZT_CONV && buf[64 + 64 * 2] == SE_ZT_SWR &&
	   buf[64 + 64 * 2 + 1] >> 4 == SE_ZC_IOPEN && be64(buf + 64 + 64 * 2 + 24) == 2 * ZLEN + 3,
	   "REPORT ZONES: conventional, then implicitly open zone 2 with its write pointer");
	cdb16(c, 0x95, 0x00, 0, 64 + 2 * 64);
	r = run(&hm, c, 64 + 2 * 64);
	ok(r.status == SE_GOOD && be32(buf) == NZ * 64 && r.data_in == 64 + 2 * 64,
	   "REPORT ZONES, room for 2: the list length still counts all %d", NZ);
	cdb16(c, 0x95, 0x00, 0, 100);
	memset(buf, 0xee, sizeof(buf));
	r = run(&hm, c, 100);
	ok(r.status == SE_GOOD && r.data_in == 100 && buf[64] == SE_ZT_CONV && buf[64 + 8 + 7] == ZLEN &&
	   buf[99] != 0xee, "REPORT ZONES, 100 bytes: the second descriptor in part, no stale bytes");
	cdb16(c, 0x95, 0x00, 0, 64 + 2 * 64);
	c[14] = 0x80;		/* PARTIAL */
	r = run(&hm, c, 64 + 2 * 64);
	ok(r.status == SE_GOOD && be32(buf) == 2 * 64, "REPORT ZONES PARTIAL: counts 2");
	cdb16(c, 0x95, 0x00, ZLEN + 1, 64 + NZ * 64);
	c[14] = 0x01;		/* empty zones only */
	r = run(&hm, c, 64 + NZ * 64);
	ok(r.status == SE_GOOD && be32(buf) == 5 * 64 && be64(buf + 64 + 16) == 3 * ZLEN,
	   "REPORT ZONES from inside zone 1, empty only: 5, the first at zone 3");
	c[14] = 0x09;
	expect_sense(run(&hm, c, 64), SE_KEY_ILLEGAL_REQUEST, 0x24, 0, "reporting option 0x09");
	cdb16(c, 0x95, 0x00, NZ * ZLEN, 64);
	expect_sense(run(&hm, c, 64), SE_KEY_ILLEGAL_REQUEST, 0x21, 0, "REPORT ZONES past the end");
}

static void test_writes(void)
{
	uint8_t c[16];
	struct se_cmd r;

	mem_reset();
	r = wr(2 * ZLEN, 2, 0x11);
	ok(r.status == SE_GOOD && zones[2].wp == 2 * ZLEN + 2, "write at the write pointer");
	expect_sense(wr(2 * ZLEN + 5, 1, 0), SE_KEY_ILLEGAL_REQUEST, 0x21, 0x04, "write off the write pointer");
	expect_sense(wr(2 * ZLEN + 2, ZLEN, 0), SE_KEY_ILLEGAL_REQUEST, 0x21, 0x05, "write across the zone end");
	expect_sense(wr(ZLEN + 4, 8, 0), SE_KEY_ILLEGAL_REQUEST, 0x21, 0x05,
		     "write from a conventional into a sequential zone");
	r = wr(0, 2 * ZLEN, 0x22);
	ok(r.status == SE_GOOD, "write across two conventional zones");
	r = wr(2 * ZLEN + 2, ZLEN - 2, 0x33);
	ok(r.status == SE_GOOD && zones[2].cond == SE_ZC_FULL, "fill zone 2");
	expect_sense(wr(2 * ZLEN, 1, 0), SE_KEY_ILLEGAL_REQUEST, 0x24, 0, "write into a full zone");
	/* the data: read back what the writes left */
	cdb16(c, 0x88, 0, 2 * ZLEN, 3);
	r = run(&hm, c, 3 * LBS);
	ok(r.status == SE_GOOD && buf[0] == 0x11 && buf[LBS * 2] == 0x33 && r.data_in == 3 * LBS,
	   "READ(16) returns what was written, across the iov pieces");
	ok(wr(3 * ZLEN, 1, 0).status == SE_GOOD && wr(4 * ZLEN, 1, 0).status == SE_GOOD,
	   "two zones implicitly open");
	ok(wr(5 * ZLEN, 1, 0).status == SE_GOOD && nr_open() == 2 && zones[3].cond == SE_ZC_CLOSED,
	   "a third, limit 2: an implicitly open one is closed to make room (got %d open)", nr_open());
	mem_reset();
	ok(zout(SE_ZOP_OPEN, 3 * ZLEN, 0).status == SE_GOOD && zout(SE_ZOP_OPEN, 4 * ZLEN, 0).status == SE_GOOD,
	   "two zones explicitly open");
	expect_sense(wr(5 * ZLEN, 1, 0), SE_KEY_DATA_PROTECT, 0x55, 0x0e,
		     "a write opening a third, limit 2, both explicitly open");
	zones[6].cond = SE_ZC_RDONLY;
	expect_sense(wr(6 * ZLEN, 1, 0), SE_KEY_DATA_PROTECT, 0x27, 0x08, "a write into a read-only zone");
	zones[6].cond = SE_ZC_OFFLINE;
	expect_sense(wr(6 * ZLEN, 1, 0), SE_KEY_DATA_PROTECT, 0x2c, 0x0e, "a write into an offline zone");
	expect_sense(zout(SE_ZOP_RESET, 6 * ZLEN, 0), SE_KEY_DATA_PROTECT, 0x2c, 0x0e, "RESET of an offline zone");
	cdb16(c, 0x88, 0, 6 * ZLEN, 1);
	expect_sense(run(&hm, c, LBS), SE_KEY_DATA_PROTECT, 0x2c, 0x0e, "a read of an offline zone");
	mem_reset();
	cdb16(c, 0x88, 0, 2 * ZLEN - 1, 2);
	expect_sense(run(&hm, c, 2 * LBS), SE_KEY_ILLEGAL_REQUEST, 0x21, 0x06,
		     "a read from a conventional into a sequential zone");
	cdb16(c, 0x88, 0, ZLEN - 1, 2);
	ok(run(&hm, c, 2 * LBS).status == SE_GOOD, "a read across two conventional zones");
	cdb16(c, 0x88, 0, 3 * ZLEN - 1, 2);
	ok(run(&hm, c, 2 * LBS).status == SE_GOOD, "a read across two sequential zones, past the write pointers");
	cdb16(c, 0x88, 0x20, 0, 1);	/* RDPROTECT 1 */
	expect_sense(run(&hm, c, LBS), SE_KEY_ILLEGAL_REQUEST, 0x24, 0, "READ with RDPROTECT, no protection information");
	cdb16(c, 0x8a, 0x40, 0, 1);	/* WRPROTECT 2 */
	expect_sense(run(&hm, c, LBS), SE_KEY_ILLEGAL_REQUEST, 0x24, 0, "WRITE with WRPROTECT");
	cdb16(c, 0x88, 0, 0, 17);
	expect_sense(run(&hm, c, 17 * LBS), SE_KEY_ILLEGAL_REQUEST, 0x24, 0,
		     "a read over the maximum transfer length (16)");
	/* the device's own open limit, below the one reported */
	zone_op_err = -ETOOMANYREFS;
	expect_sense(zout(SE_ZOP_OPEN, 3 * ZLEN, 0), SE_KEY_DATA_PROTECT, 0x55, 0x0e,
		     "the device refusing an open for its own limit: INSUFFICIENT ZONE RESOURCES");
	mem_reset();
	cdb16(c, 0x8a, 0, NZ * ZLEN - 1, 2);
	expect_sense(run(&hm, c, 2 * LBS), SE_KEY_ILLEGAL_REQUEST, 0x21, 0, "write past the end");


	memset(c, 0, 16);
	c[0] = 0x35;
	r = run(&hm, c, 0);
	ok(r.status == SE_GOOD && flushes == 1, "SYNCHRONIZE CACHE(10) flushes");
	cdb16(c, 0x91, 0, NZ * ZLEN - 1, 2);
	expect_sense(run(&hm, c, 0), SE_KEY_ILLEGAL_REQUEST, 0x21, 0, "SYNCHRONIZE CACHE(16) past the end");
	ok(flushes == 1, "  and no flush");
}

static void test_zone_ops(void)
{
	mem_reset();
	ok(zout(SE_ZOP_OPEN, 3 * ZLEN, 0).status == SE_GOOD && zones[3].cond == SE_ZC_EOPEN,
	   "OPEN ZONE: explicitly open");
	ok(zout(SE_ZOP_OPEN, 4 * ZLEN, 0).status == SE_GOOD, "OPEN a second");
	expect_sense(zout(SE_ZOP_OPEN, 5 * ZLEN, 0), SE_KEY_DATA_PROTECT, 0x55, 0x0e, "OPEN a third, limit 2");
	ok(zout(SE_ZOP_CLOSE, 0, 1).status == SE_GOOD && zones[3].cond == SE_ZC_EMPTY &&
	   zones[4].cond == SE_ZC_EMPTY, "CLOSE ALL: empty zones go back to empty");
	wr(5 * ZLEN, 2, 0x44);
	ok(zout(SE_ZOP_FINISH, 5 * ZLEN, 0).status == SE_GOOD && zones[5].cond == SE_ZC_FULL,
	   "FINISH ZONE");
	ok(zout(SE_ZOP_OPEN, 5 * ZLEN, 0).status == SE_GOOD && zones[5].cond == SE_ZC_FULL,
	   "OPEN a full zone: GOOD, no change");
	expect_sense(zout(SE_ZOP_RESET, 0, 0), SE_KEY_ILLEGAL_REQUEST, 0x24, 0, "RESET a conventional zone");
	expect_sense(zout(SE_ZOP_RESET, 5 * ZLEN + 1, 0), SE_KEY_ILLEGAL_REQUEST, 0x24, 0,
		     "RESET at a zone's middle");
	expect_sense(zout(SE_ZOP_RESET, NZ * ZLEN, 0), SE_KEY_ILLEGAL_REQUEST, 0x21, 0, "RESET past the end");
	expect_sense(zout(7, 5 * ZLEN, 0), SE_KEY_ILLEGAL_REQUEST, 0x24, 0, "ZBC OUT action 7");
	ok(zout(SE_ZOP_RESET, 0, 1).status == SE_GOOD && zones[5].cond == SE_ZC_EMPTY &&
	   zones[5].wp == 5 * ZLEN, "RESET ALL");

	/* ZONE COUNT (ZBC-2): the zones from ZONE ID on, 0 counting as 1 */
	mem_reset();
	ok(zout_n(SE_ZOP_OPEN, 3 * ZLEN, 2, 0).status == SE_GOOD && zones[3].cond == SE_ZC_EOPEN &&
	   zones[4].cond == SE_ZC_EOPEN && zones[5].cond == SE_ZC_EMPTY, "OPEN zone 3, count 2: zones 3 and 4");
	ok(zout_n(SE_ZOP_RESET, 3 * ZLEN, 2, 0).status == SE_GOOD && zones[3].cond == SE_ZC_EMPTY &&
	   zones[4].cond == SE_ZC_EMPTY, "RESET zone 3, count 2: both");
	expect_sense(zout_n(SE_ZOP_OPEN, 3 * ZLEN, 3, 0), SE_KEY_DATA_PROTECT, 0x55, 0x0e,
		     "OPEN 3 zones, limit 2");
	ok(nr_open() == 0, "  none opened");
	expect_sense(zout_n(SE_ZOP_RESET, 6 * ZLEN, 3, 0), SE_KEY_ILLEGAL_REQUEST, 0x21, 0,
		     "RESET 3 zones from the second last");
	expect_sense(zout_n(SE_ZOP_RESET, ZLEN, 2, 0), SE_KEY_ILLEGAL_REQUEST, 0x24, 0,
		     "RESET from a conventional zone on");
	wr(3 * ZLEN, 1, 0);
	wr(4 * ZLEN, 1, 0);
	ok(zout_n(SE_ZOP_FINISH, 3 * ZLEN, 2, 0).status == SE_GOOD && zones[3].cond == SE_ZC_FULL &&
	   zones[4].cond == SE_ZC_FULL, "FINISH zone 3, count 2");

	/* FINISH of an empty or closed zone opens it on the way (libzbc 01.140/141) */
	mem_reset();
	zout(SE_ZOP_OPEN, 3 * ZLEN, 0);
	zout(SE_ZOP_OPEN, 4 * ZLEN, 0);
	expect_sense(zout(SE_ZOP_FINISH, 5 * ZLEN, 0), SE_KEY_DATA_PROTECT, 0x55, 0x0e,
		     "FINISH an empty zone, the limit's zones explicitly open");
	ok(zones[5].cond == SE_ZC_EMPTY, "  it stays empty");
	mem_reset();
	wr(3 * ZLEN, 1, 0);
	wr(4 * ZLEN, 1, 0);
	ok(zout(SE_ZOP_FINISH, 5 * ZLEN, 0).status == SE_GOOD && zones[5].cond == SE_ZC_FULL,
	   "FINISH an empty zone, the limit's zones implicitly open: one is closed");

	/* service actions this disk does not have: INVALID FIELD IN CDB */
	{
		uint8_t c[16];

		cdb16(c, 0x95, 0x06, 0, 64);	/* REPORT REALMS */
		expect_sense(run(&hm, c, 64), SE_KEY_ILLEGAL_REQUEST, 0x24, 0, "ZBC IN, REPORT REALMS");
		cdb16(c, 0x9e, 0x12, 0, 32);	/* GET LBA STATUS */
		expect_sense(run(&hm, c, 32), SE_KEY_ILLEGAL_REQUEST, 0x24, 0,
			     "SERVICE ACTION IN(16), GET LBA STATUS");
		cdb16(c, 0x95, 0x00, 0, 64 + NZ * 64);
		c[14] = 0x3e;		/* gap zones */
		ok(run(&hm, c, 64 + NZ * 64).status == SE_GOOD && be32(buf) == 0,
		   "REPORT ZONES, gap zones (3Eh): none");
		c[14] = 0x08;		/* inactive zones */
		ok(run(&hm, c, 64 + NZ * 64).status == SE_GOOD && be32(buf) == 0,
		   "REPORT ZONES, inactive zones (08h): none");
	}
}

static void test_disk(void)
{
	struct se_dev disk = hm;
	uint8_t c[16];
	struct se_cmd r;
	uint64_t info = 0;
	uint8_t k, a, q;

	mem_reset();
	disk.model = SE_DISK_DM;
	memset(c, 0, 16);
	c[0] = 0x12;
	c[1] = 1;
	c[2] = 0xb1;
	c[4] = 96;
	r = run(&disk, c, 96);
	ok(r.status == SE_GOOD && buf[0] == 0 && (buf[8] >> 4 & 3) == 2,
	   "drive-managed: type 0, ZONED = device managed");
	c[2] = 0xb6;
	expect_sense(run(&disk, c, 96), SE_KEY_ILLEGAL_REQUEST, 0x24, 0, "no VPD 0xb6 on a disk");
	cdb16(c, 0x95, 0, 0, 64);
	expect_sense(run(&disk, c, 64), SE_KEY_ILLEGAL_REQUEST, 0x20, 0, "no REPORT ZONES on a disk");
	cdb16(c, 0x8a, 0, 5, 3);
	ok(run(&disk, c, 3 * LBS).status == SE_GOOD, "a disk writes anywhere");
	bad_lba = 23;
	cdb16(c, 0x88, 0, 16, 16);
	r = run(&disk, c, 16 * LBS);
	if (r.status == SE_CHECK_CONDITION)
		se_sense_decode(r.sense, &k, &a, &q, &info);
	ok(r.status == SE_CHECK_CONDITION && k == SE_KEY_MEDIUM_ERROR && a == 0x11 && info == 23,
	   "a failing read: MEDIUM ERROR, UNRECOVERED READ ERROR at LBA 23 (got %" PRIu64 ")",
	   (uint64_t)info);
}

int main(void)
{
	printf("TAP version 13\n");
	test_identify();
	test_report();
	test_writes();
	test_zone_ops();
	test_disk();
	return tap_done();
}
