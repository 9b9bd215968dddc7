// SPDX-License-Identifier: GPL-2.0
/*
 * scsi-emul: SBC-4 and ZBC-2 commands of an emulated drive (scsi-emul.h).
 *
 * What it answers, and with what (docs/scsi.md lists the same):
 *   TEST UNIT READY, START STOP UNIT      GOOD
 *   INQUIRY                               standard data; VPD 0x00, 0x80,
 *                                         0x83, 0xb0, 0xb1, and 0xb6 on a
 *                                         host-managed drive
 *   REQUEST SENSE                         NO SENSE (errors are reported
 *                                         with the command, autosense)
 *   READ CAPACITY(10), (16)
 *   MODE SENSE(6), (10)                   caching (0x08) and control (0x0a)
 *                                         pages; nothing changeable
 *   READ(10), (16); WRITE(10), (16)       the backend; FUA honoured
 *   SYNCHRONIZE CACHE(10), (16)           the backend's flush
 *   REPORT ZONES (ZBC IN)                 host-managed only
 *   OPEN, CLOSE, FINISH ZONE, RESET WRITE POINTER (ZBC OUT), ALL or
 *                                         ZONE COUNT zones from ZONE ID
 * Anything else: ILLEGAL REQUEST, INVALID COMMAND OPERATION CODE.
 *
 * Host-managed writes are checked here against the zone they fall in,
 * before the backend sees them, so that each rule broken gets its own
 * sense code as ZBC-2 (and the kernel's scsi_debug) give it: a write
 * across a zone boundary, into a full zone, off the write pointer, or
 * opening a zone beyond the open limit.
 */
#include <errno.h>
#include <string.h>

#include "scsi-emul.h"

/* Additional sense codes (ASC << 8 | ASCQ). */
#define ASC_NONE			0x0000
#define ASC_UNRECOVERED_READ		0x1100
#define ASC_WRITE_ERROR			0x0c00
#define ASC_INVALID_OPCODE		0x2000
#define ASC_LBA_OUT_OF_RANGE		0x2100
#define ASC_UNALIGNED_WRITE		0x2104
#define ASC_WRITE_BOUNDARY		0x2105
#define ASC_INVALID_FIELD_CDB		0x2400
#define ASC_SAVING_NOT_SUPPORTED	0x3900
#define ASC_INSUFFICIENT_ZONE_RES	0x550e
#define ASC_INTERNAL_TARGET_FAILURE	0x4400
#define ASC_ZONE_READ_ONLY		0x2708
#define ASC_ZONE_OFFLINE		0x2c0e
#define ASC_READ_INVALID_DATA		0x2106
#define ASC_WRITE_PROTECTED		0x2700

#define ZONE_BATCH 256

static uint16_t get16(const uint8_t *p) { return p[0] << 8 | p[1]; }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }
static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static void put64(uint8_t *p, uint64_t v) { put32(p, v >> 32); put32(p + 4, v); }

size_t se_iov_len(const struct iovec *iov, int iovcnt)
{
	size_t n = 0;

	for (int i = 0; i < iovcnt; i++)
		n += iov[i].iov_len;
	return n;
}

/* CHECK CONDITION with fixed-format sense data (the control page says
 * D_SENSE 0); info, if has_info, is the LBA the error is about, in the
 * INFORMATION field when it fits its 32 bits (VALID set), else left out
 * (SPC-5: VALID clear). */
static int sense_info(struct se_cmd *c, uint8_t key, uint16_t asc, bool has_info, uint64_t info)
{
	uint8_t *s = c->sense;

	memset(s, 0, sizeof(c->sense));
	if (has_info && info > 0xffffffffull)
		has_info = false;
	s[0] = 0x70 | (has_info ? 0x80 : 0);
	s[2] = key;
	if (has_info)
		put32(s + 3, info);
	s[7] = 10;
	s[12] = asc >> 8;
	s[13] = asc;
	c->sense_len = 18;
	c->status = SE_CHECK_CONDITION;
	return c->status;
}

static int sense(struct se_cmd *c, uint8_t key, uint16_t asc)
{
	return sense_info(c, key, asc, false, 0);
}

static int illegal(struct se_cmd *c, uint16_t asc)
{
	return sense(c, SE_KEY_ILLEGAL_REQUEST, asc);
}

void se_sense_decode(const uint8_t *s, uint8_t *key, uint8_t *asc, uint8_t *ascq, uint64_t *info)
{
	*info = 0;
	if ((s[0] & 0x7f) == 0x72 || (s[0] & 0x7f) == 0x73) {
		*key = s[1] & 0xf;
		*asc = s[2];
		*ascq = s[3];
		if (s[7] >= 12 && s[8] == 0x00)
			*info = get64(s + 12);
	} else {
		*key = s[2] & 0xf;
		*asc = s[12];
		*ascq = s[13];
		if (s[0] & 0x80)
			*info = get32(s + 3);
	}
}

/* Copy a data-in response into the command's buffer, at most alloc bytes. */
static int data_in(struct se_cmd *c, const void *buf, size_t len, size_t alloc)
{
	const uint8_t *p = buf;
	size_t n = len < alloc ? len : alloc, done = 0;

	for (int i = 0; i < c->iovcnt && done < n; i++) {
		size_t k = c->iov[i].iov_len;

		if (k > n - done)
			k = n - done;
		memcpy(c->iov[i].iov_base, p + done, k);
		done += k;
	}
	c->data_in = done;
	c->status = SE_GOOD;
	return SE_GOOD;
}

static void pad_ascii(uint8_t *dst, const char *s, size_t n)
{
	size_t l = strlen(s);

	memset(dst, ' ', n);
	memcpy(dst, s, l < n ? l : n);
}

/* ---------------------------------------------------------- INQUIRY --- */

static size_t vpd_page(const struct se_dev *d, uint8_t page, uint8_t *b)
{
	size_t n;

	memset(b, 0, 64);
	b[0] = d->model == SE_ZBC_HM ? 0x14 : 0x00;
	b[1] = page;
	switch (page) {
	case 0x00: {		/* supported VPD pages */
		static const uint8_t pages[] = { 0x00, 0x80, 0x83, 0xb0, 0xb1, 0xb6 };

		n = sizeof(pages) - (d->model == SE_ZBC_HM ? 0 : 1);
		memcpy(b + 4, pages, n);
		break;
	}
	case 0x80:		/* unit serial number */
		n = strlen(d->serial);
		memcpy(b + 4, d->serial, n);
		break;
	case 0x83:		/* device identification: one NAA designator */
		b[4] = 0x01;	/* binary */
		b[5] = 0x03;	/* logical unit, NAA */
		b[7] = 8;
		put64(b + 8, d->naa);
		n = 12;
		break;
	case 0xb0:		/* block limits */
		put16(b + 6, 1u << d->pbs_exp);	/* optimal granularity */
		put32(b + 8, d->max_xfer);
		put32(b + 12, d->max_xfer);
		n = 0x3c;
		break;
	case 0xb1:		/* block device characteristics */
		put16(b + 4, d->rpm);
		b[7] = 0x02;	/* 3.5 inch */
		if (d->model == SE_DISK_DM)
			b[8] = 0x2 << 4;	/* ZONED: device managed */
		n = 0x3c;
		break;
	case 0xb6:		/* zoned block device characteristics */
		if (d->model != SE_ZBC_HM)
			return 0;
		b[4] = 0x01;	/* URSWRZ: reads past the write pointer allowed */
		put32(b + 8, 0xffffffff);
		put32(b + 12, 0xffffffff);
		put32(b + 16, d->max_open ? d->max_open : 0xffffffff);
		n = 0x3c;
		break;
	default:
		return 0;
	}
	put16(b + 2, n);
	return n + 4;
}

static int inquiry(struct se_dev *d, struct se_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	uint16_t alloc = get16(cdb + 3);
	uint8_t b[96];
	size_t n;

	if (cdb[1] & 0x02)		/* CMDDT: obsolete */
		return illegal(c, ASC_INVALID_FIELD_CDB);
	if (cdb[1] & 0x01) {
		n = vpd_page(d, cdb[2], b);
		if (!n)
			return illegal(c, ASC_INVALID_FIELD_CDB);
		return data_in(c, b, n, alloc);
	}
	if (cdb[2])
		return illegal(c, ASC_INVALID_FIELD_CDB);
	memset(b, 0, sizeof(b));
	b[0] = d->model == SE_ZBC_HM ? 0x14 : 0x00;
	b[2] = 0x07;			/* SPC-5 */
	b[3] = 0x12;			/* HISUP, response data format 2 */
	b[4] = 96 - 5;
	b[7] = 0x02;			/* CMDQUE */
	pad_ascii(b + 8, "DM-SMR", 8);
	pad_ascii(b + 16, d->product, 16);
	pad_ascii(b + 32, "0001", 4);
	/*
	 * Version descriptors, none claiming a revision: SAM-5 (00A0h),
	 * SPC-5 (05C0h), SBC-4 (0600h) and, zoned, ZBC-2 (0660h): its ZONE
	 * COUNT and reporting options 08h and 3Eh are kept; the optional
	 * zone domains, realms and activation are not there (their service
	 * actions are refused, INVALID FIELD IN CDB).
	 */
	put16(b + 58, 0x00a0);
	put16(b + 60, 0x05c0);
	put16(b + 62, 0x0600);
	if (d->model == SE_ZBC_HM)
		put16(b + 64, 0x0660);
	return data_in(c, b, sizeof(b), alloc);
}

/* ---------------------------------------------------- READ CAPACITY --- */

static int read_capacity10(struct se_dev *d, struct se_cmd *c)
{
	uint8_t b[8];
	uint64_t last = d->nr_lbas - 1;

	put32(b, last > 0xffffffffull ? 0xffffffff : (uint32_t)last);
	put32(b + 4, d->lbs);
	return data_in(c, b, sizeof(b), 8);
}

static int read_capacity16(struct se_dev *d, struct se_cmd *c)
{
	uint8_t b[32];

	memset(b, 0, sizeof(b));
	put64(b, d->nr_lbas - 1);
	put32(b + 8, d->lbs);
	if (d->model == SE_ZBC_HM)
		b[12] = 0x1 << 4;	/* RC BASIS: the last LBA of the device */
	b[13] = d->pbs_exp & 0xf;
	return data_in(c, b, sizeof(b), get32(c->cdb + 10));
}

/* ------------------------------------------------------- MODE SENSE --- */

/* The pages asked for (0x3f: all) at page control pc; returns bytes. */
static size_t mode_pages(const struct se_dev *d, uint8_t page, uint8_t pc, uint8_t *b)
{
	size_t n = 0;

	if (page == 0x08 || page == 0x3f) {	/* caching */
		memset(b + n, 0, 20);
		b[n] = 0x08;
		b[n + 1] = 0x12;
		if (pc != 1 && d->wce)	/* changeable (pc 1): nothing */
			b[n + 2] = 0x04;	/* WCE */
		n += 20;
	}
	if (page == 0x0a || page == 0x3f) {	/* control */
		memset(b + n, 0, 12);
		b[n] = 0x0a;
		b[n + 1] = 0x0a;
		if (pc != 1)
			put16(b + n + 8, 0xffff);	/* busy timeout: unlimited */
		n += 12;
	}
	return n;
}

static int mode_sense(struct se_dev *d, struct se_cmd *c, bool ten)
{
	const uint8_t *cdb = c->cdb;
	uint8_t page = cdb[2] & 0x3f, pc = cdb[2] >> 6, b[128];
	bool dbd = cdb[1] & 0x08;
	size_t hdr = ten ? 8 : 4, n, alloc = ten ? get16(cdb + 7) : cdb[4];

	if (pc == 3)
		return illegal(c, ASC_SAVING_NOT_SUPPORTED);
	if (cdb[3])			/* subpages: none */
		return illegal(c, ASC_INVALID_FIELD_CDB);
	memset(b, 0, sizeof(b));
	n = hdr;
	if (!dbd) {			/* one short block descriptor */
		uint64_t blocks = d->nr_lbas;

		put32(b + n, blocks > 0xffffffffull ? 0xffffffff : (uint32_t)blocks);
		put32(b + n + 4, d->lbs & 0xffffff);
		n += 8;
	}
	{
		size_t p = mode_pages(d, page, pc, b + n);

		if (!p)
			return illegal(c, ASC_INVALID_FIELD_CDB);
		n += p;
	}
	if (ten) {
		put16(b, n - 2);
		b[3] = 0x10;		/* DPOFUA */
		put16(b + 6, dbd ? 0 : 8);
	} else {
		b[0] = n - 1;
		b[2] = 0x10;		/* DPOFUA */
		b[3] = dbd ? 0 : 8;
	}
	return data_in(c, b, n, alloc);
}

/* ------------------------------------------------------------ zones --- */

static bool zoned(const struct se_dev *d)
{
	return d->model == SE_ZBC_HM;
}

static bool is_open(uint8_t cond)
{
	return cond == SE_ZC_IOPEN || cond == SE_ZC_EOPEN;
}

/* The zone holding lba. */
static int zone_at(struct se_dev *d, uint64_t lba, struct se_zone *z)
{
	int r = d->be->report(d->ctx, lba - lba % d->zone_lbas, z, 1);

	return r < 0 ? r : r == 1 ? 0 : -EIO;
}

/* Zones explicitly and implicitly open, and closed, over the whole
 * device; the first implicitly open one's start in *iopen_lba. */
struct open_count {
	unsigned int eopen, iopen, closed;
	uint64_t iopen_lba;
};

static int count_open(struct se_dev *d, struct open_count *n)
{
	struct se_zone z[ZONE_BATCH];
	uint64_t lba = 0;

	memset(n, 0, sizeof(*n));
	while (lba < d->nr_lbas) {
		int r = d->be->report(d->ctx, lba, z, ZONE_BATCH);

		if (r <= 0)
			return r < 0 ? r : -EIO;
		for (int i = 0; i < r; i++) {
			n->eopen += z[i].cond == SE_ZC_EOPEN;
			n->closed += z[i].cond == SE_ZC_CLOSED;
			if (z[i].cond == SE_ZC_IOPEN && !n->iopen++)
				n->iopen_lba = z[i].start;
		}
		lba = z[r - 1].start + z[r - 1].len;
	}
	return 0;
}

/*
 * Room to open @more zones (an open, a write or a finish of an empty or
 * closed zone), within the open limit the disk reports. As a drive does
 * (ZBC-2 4.4.3.5.2), implicitly open zones are closed to make room, and
 * the limit refuses only when the open ones are explicitly open: DATA
 * PROTECT, INSUFFICIENT ZONE RESOURCES. The export closes them itself
 * rather than leave it to the device, whose own limit may be higher
 * (--max-open below it).
 */
static int make_room(struct se_dev *d, struct se_cmd *c, unsigned int more)
{
	struct open_count n;

	if (!d->max_open)
		return 0;
	for (;;) {
		if (count_open(d, &n))
			return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		if (n.eopen + more > d->max_open)
			return sense(c, SE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RES);
		if (n.eopen + n.iopen + more <= d->max_open)
			return 0;
		if (d->be->zone_op(d->ctx, SE_ZOP_CLOSE, n.iopen_lba, d->zone_lbas))
			return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	}
}

/* A backend error as the sense a drive gives for it. */
static int backend_error(struct se_cmd *c, int err, uint8_t key, uint16_t asc, uint64_t lba)
{
	/* the device's own open limit (BLK_STS_ZONE_OPEN_RESOURCE) */
	if (err == -ETOOMANYREFS)
		return sense(c, SE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RES);
	return sense_info(c, key, asc, true, lba);
}

static bool report_match(uint8_t opt, const struct se_zone *z)
{
	switch (opt) {
	case 0x00: return true;
	case 0x01: return z->cond == SE_ZC_EMPTY;
	case 0x02: return z->cond == SE_ZC_IOPEN;
	case 0x03: return z->cond == SE_ZC_EOPEN;
	case 0x04: return z->cond == SE_ZC_CLOSED;
	case 0x05: return z->cond == SE_ZC_FULL;
	case 0x06: return z->cond == SE_ZC_RDONLY;
	case 0x07: return z->cond == SE_ZC_OFFLINE;
	case 0x08: return false;	/* inactive: no zone domains */
	case 0x10: return false;	/* reset recommended: never */
	case 0x11: return false;	/* non-sequential write resources: none */
	case 0x3e: return false;	/* gap zones: none */
	case 0x3f: return z->cond == SE_ZC_NOT_WP;
	default: return false;
	}
}

static bool report_option_valid(uint8_t opt)
{
	return opt <= 0x08 || opt == 0x10 || opt == 0x11 || opt == 0x3e || opt == 0x3f;
}

/* REPORT ZONES: the descriptors go straight into the data buffer, a
 * batch of zones at a time; the header counts every zone that matches
 * from the start LBA on (PARTIAL clear) or only those returned (set). */
static int report_zones(struct se_dev *d, struct se_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	uint64_t lba = get64(cdb + 2), total = 0;
	uint32_t alloc = get32(cdb + 10);
	uint8_t opt = cdb[14] & 0x3f, hdr[64], desc[64];
	bool partial = cdb[14] & 0x80;
	size_t cap = se_iov_len(c->iov, c->iovcnt), off = 64, iv = 0, ivoff = 0;
	struct se_zone z[ZONE_BATCH];
	bool same_len = true, same_type = true, first = true;
	uint64_t len0 = 0;
	uint8_t type0 = 0;

	if (alloc < cap)
		cap = alloc;
	if (!report_option_valid(opt))
		return illegal(c, ASC_INVALID_FIELD_CDB);
	if (lba >= d->nr_lbas)
		return sense_info(c, SE_KEY_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE, true, lba);
	lba -= lba % d->zone_lbas;
	/* header written last; skip its place in the buffer */
	for (size_t skip = 64; iv < (size_t)c->iovcnt && skip; ) {
		size_t k = c->iov[iv].iov_len - ivoff;

		if (k > skip)
			k = skip;
		ivoff += k;
		skip -= k;
		if (ivoff == c->iov[iv].iov_len) {
			iv++;
			ivoff = 0;
		}
	}
	while (lba < d->nr_lbas) {
		int r = d->be->report(d->ctx, lba, z, ZONE_BATCH);

		if (r <= 0)
			return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		for (int i = 0; i < r; i++) {
			if (first) {
				len0 = z[i].len;
				type0 = z[i].type;
				first = false;
			}
			same_len &= z[i].len == len0;
			same_type &= z[i].type == type0;
			if (!report_match(opt, &z[i]))
				continue;
			if (partial && off + 64 > cap)
				break;
			total++;
			if (off >= cap) {
				off += 64;
				continue;
			}
			memset(desc, 0, sizeof(desc));
			desc[0] = z[i].type;
			desc[1] = z[i].cond << 4;
			put64(desc + 8, z[i].len);
			put64(desc + 16, z[i].start);
			put64(desc + 24, z[i].type == SE_ZT_CONV ? ~0ull : z[i].wp);
			/* the last one may fit only in part */
			for (size_t done = 0, want = cap - off < 64 ? cap - off : 64;
			     done < want && iv < (size_t)c->iovcnt; ) {
				size_t k = c->iov[iv].iov_len - ivoff;

				if (k > want - done)
					k = want - done;
				memcpy((uint8_t *)c->iov[iv].iov_base + ivoff, desc + done, k);
				done += k;
				ivoff += k;
				if (ivoff == c->iov[iv].iov_len) {
					iv++;
					ivoff = 0;
				}
			}
			off += 64;
		}
		if (partial && off + 64 > cap)
			break;
		lba = z[r - 1].start + z[r - 1].len;
	}
	memset(hdr, 0, sizeof(hdr));
	put32(hdr, total * 64);
	/* SAME: 1 all alike, 2 alike but a smaller last zone, 3 same
	 * length and different types, 0 otherwise (of those looked at) */
	if (same_len)
		hdr[4] = same_type ? 1 : 3;
	else
		hdr[4] = 0;
	put64(hdr + 8, d->nr_lbas - 1);
	{
		size_t k = off < cap ? off : cap;
		size_t got = c->data_in;

		data_in(c, hdr, 64, cap);
		c->data_in = k > got ? k : got;
	}
	return SE_GOOD;
}

/* Does ZBC OUT action @sa change a zone in condition @cond? */
static bool zone_op_acts(uint8_t sa, uint8_t cond)
{
	switch (sa) {
	case SE_ZOP_CLOSE: return is_open(cond);
	case SE_ZOP_FINISH: return is_open(cond) || cond == SE_ZC_CLOSED || cond == SE_ZC_EMPTY;
	case SE_ZOP_OPEN: return cond != SE_ZC_EOPEN && cond != SE_ZC_FULL;
	default: return cond != SE_ZC_EMPTY;	/* RESET */
	}
}

/*
 * One zone of a ZBC OUT without ALL. An open, or a finish of an empty or
 * closed zone (which opens it on the way), needs an open resource.
 */
static int zone_op_one(struct se_dev *d, struct se_cmd *c, uint8_t sa, const struct se_zone *z)
{
	int r;

	if (!zone_op_acts(sa, z->cond))
		return 0;		/* what changes nothing succeeds */
	if ((sa == SE_ZOP_OPEN || sa == SE_ZOP_FINISH) &&
	    (z->cond == SE_ZC_EMPTY || z->cond == SE_ZC_CLOSED) && make_room(d, c, 1))
		return c->status;
	r = d->be->zone_op(d->ctx, sa, z->start, z->len);
	if (r)
		return backend_error(c, r, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE,
				     z->start);
	return 0;
}

/*
 * ZBC OUT: ZONE COUNT zones from ZONE ID (0 counts as 1, ZBC-2), or
 * (ALL) every zone the action applies to. The whole range is checked
 * before any zone changes: past the end, not a zone's start, a
 * conventional zone, a read-only or offline one, or (open) more zones
 * than the open limit leaves.
 */
static int zone_out(struct se_dev *d, struct se_cmd *c)
{
	const uint8_t *cdb = c->cdb;
	uint8_t sa = cdb[1] & 0x1f;
	uint64_t id = get64(cdb + 2), count = get16(cdb + 12), lba, end;
	bool all = cdb[14] & 0x01;
	struct se_zone z[ZONE_BATCH];
	struct open_count n;
	unsigned int opens = 0;
	int r, err;

	if (sa < SE_ZOP_CLOSE || sa > SE_ZOP_RESET)
		return illegal(c, ASC_INVALID_FIELD_CDB);
	if (all)
		goto all;
	if (id >= d->nr_lbas)
		return sense_info(c, SE_KEY_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE, true, id);
	if (id % d->zone_lbas)
		return illegal(c, ASC_INVALID_FIELD_CDB);
	if (!count)
		count = 1;
	if (count > (d->nr_lbas - id + d->zone_lbas - 1) / d->zone_lbas)
		return sense_info(c, SE_KEY_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE, true, id);
	end = id + count * d->zone_lbas;
	for (lba = id; lba < end && lba < d->nr_lbas; ) {
		r = d->be->report(d->ctx, lba, z, ZONE_BATCH);
		if (r <= 0)
			return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		for (int i = 0; i < r && z[i].start < end; i++) {
			if (z[i].type == SE_ZT_CONV)
				return illegal(c, ASC_INVALID_FIELD_CDB);
			if (z[i].cond == SE_ZC_RDONLY)
				return sense_info(c, SE_KEY_DATA_PROTECT, ASC_ZONE_READ_ONLY, true,
						  z[i].start);
			if (z[i].cond == SE_ZC_OFFLINE)
				return sense_info(c, SE_KEY_DATA_PROTECT, ASC_ZONE_OFFLINE, true,
						  z[i].start);
			opens += sa == SE_ZOP_OPEN && zone_op_acts(sa, z[i].cond);
		}
		lba = z[r - 1].start + z[r - 1].len;
	}
	/* Each open makes an explicitly open zone: all of them must fit. */
	if (opens && d->max_open) {
		if (count_open(d, &n))
			return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		if (n.eopen + opens > d->max_open)
			return sense(c, SE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RES);
	}
	for (lba = id; lba < end; lba += d->zone_lbas) {
		if (zone_at(d, lba, z))
			return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		if (zone_op_one(d, c, sa, z))
			return c->status;
	}
	c->status = SE_GOOD;
	return SE_GOOD;

all:
	if (sa == SE_ZOP_OPEN) {	/* every closed zone, if they all fit */
		if (count_open(d, &n))
			return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		if (d->max_open && n.eopen + n.closed > d->max_open)
			return sense(c, SE_KEY_DATA_PROTECT, ASC_INSUFFICIENT_ZONE_RES);
		if (make_room(d, c, n.closed))
			return c->status;
	}
	for (lba = 0; lba < d->nr_lbas; ) {
		r = d->be->report(d->ctx, lba, z, ZONE_BATCH);
		if (r <= 0)
			return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
		for (int i = 0; i < r; i++) {
			uint8_t cond = z[i].cond;
			bool act;

			if (z[i].type == SE_ZT_CONV)
				continue;
			/* ALL: what the action is for, skipping what it cannot touch */
			switch (sa) {
			case SE_ZOP_CLOSE: act = is_open(cond); break;
			case SE_ZOP_FINISH: act = is_open(cond) || cond == SE_ZC_CLOSED; break;
			case SE_ZOP_OPEN: act = cond == SE_ZC_CLOSED; break;
			default: act = cond != SE_ZC_EMPTY && cond != SE_ZC_OFFLINE &&
					cond != SE_ZC_RDONLY; break;
			}
			if (!act)
				continue;
			err = d->be->zone_op(d->ctx, sa, z[i].start, z[i].len);
			if (err)
				return backend_error(c, err, SE_KEY_HARDWARE_ERROR,
						     ASC_INTERNAL_TARGET_FAILURE, z[i].start);
		}
		lba = z[r - 1].start + z[r - 1].len;
	}
	c->status = SE_GOOD;
	return SE_GOOD;
}

/* ----------------------------------------------------------- media --- */

/* The rules a write into a host-managed drive's zone must keep. */
static int zbc_write_check(struct se_dev *d, struct se_cmd *c, uint64_t lba, uint32_t nr)
{
	struct se_zone z;
	uint64_t last = lba + nr - 1;

	if (zone_at(d, lba, &z))
		return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	if (z.type == SE_ZT_CONV) {
		/* into the next zone: fine only if it is conventional too */
		if (last >= z.start + z.len) {
			struct se_zone z2;

			if (zone_at(d, last, &z2))
				return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
			if (z2.type != SE_ZT_CONV)
				return sense_info(c, SE_KEY_ILLEGAL_REQUEST, ASC_WRITE_BOUNDARY, true, lba);
		}
		return 0;
	}
	if (z.cond == SE_ZC_RDONLY)
		return sense_info(c, SE_KEY_DATA_PROTECT, ASC_ZONE_READ_ONLY, true, lba);
	if (z.cond == SE_ZC_OFFLINE)
		return sense_info(c, SE_KEY_DATA_PROTECT, ASC_ZONE_OFFLINE, true, lba);
	if (last >= z.start + z.len)
		return sense_info(c, SE_KEY_ILLEGAL_REQUEST, ASC_WRITE_BOUNDARY, true, lba);
	if (z.cond == SE_ZC_FULL)
		return illegal(c, ASC_INVALID_FIELD_CDB);
	if (lba != z.wp)
		return sense_info(c, SE_KEY_ILLEGAL_REQUEST, ASC_UNALIGNED_WRITE, true, lba);
	if (z.cond == SE_ZC_EMPTY || z.cond == SE_ZC_CLOSED)
		return make_room(d, c, 1);
	return 0;
}

/*
 * What a host-managed drive refuses to read: an offline zone (DATA
 * PROTECT), and a read from a conventional zone into a sequential one or
 * back, as the kernel's scsi_debug refuses it (ILLEGAL REQUEST, ATTEMPT
 * TO READ INVALID DATA). Within sequential zones, past the write pointer
 * too, reads are unrestricted (URSWRZ in VPD page B6h).
 */
static int zbc_read_check(struct se_dev *d, struct se_cmd *c, uint64_t lba, uint32_t nr)
{
	struct se_zone z, z2;
	uint64_t last = lba + nr - 1;

	if (zone_at(d, lba, &z))
		return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	if (z.cond == SE_ZC_OFFLINE)
		return sense_info(c, SE_KEY_DATA_PROTECT, ASC_ZONE_OFFLINE, true, lba);
	if (last < z.start + z.len)
		return 0;
	if (zone_at(d, last, &z2))
		return sense(c, SE_KEY_HARDWARE_ERROR, ASC_INTERNAL_TARGET_FAILURE);
	if ((z.type == SE_ZT_CONV) != (z2.type == SE_ZT_CONV))
		return sense_info(c, SE_KEY_ILLEGAL_REQUEST, ASC_READ_INVALID_DATA, true, lba);
	if (z2.cond == SE_ZC_OFFLINE)
		return sense_info(c, SE_KEY_DATA_PROTECT, ASC_ZONE_OFFLINE, true, z2.start);
	return 0;
}

/* The first block of [lba, lba + nr) a read fails on: the shortest
 * failing prefix, by halving (log2(nr) reads). */
static uint64_t first_bad(struct se_dev *d, struct se_cmd *c, uint64_t lba, uint32_t nr)
{
	uint32_t lo = 0, hi = nr - 1;	/* the bad block is in [lo, hi] */

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct iovec one[c->iovcnt];
		int n = 0;
		size_t want = (size_t)(mid - lo + 1) * d->lbs, skip = (size_t)lo * d->lbs;

		/* the blocks [lo, mid] of the command's own buffer */
		for (int i = 0; i < c->iovcnt && want; i++) {
			size_t l = c->iov[i].iov_len;

			if (skip >= l) {
				skip -= l;
				continue;
			}
			one[n].iov_base = (uint8_t *)c->iov[i].iov_base + skip;
			one[n].iov_len = l - skip < want ? l - skip : want;
			want -= one[n].iov_len;
			skip = 0;
			n++;
		}
		if (want || d->be->read(d->ctx, one, n, lba + lo, mid - lo + 1))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lba + lo;
}

/*
 * READ and WRITE (10) and (16). SBC-4: RDPROTECT/WRPROTECT (CDB byte 1,
 * bits 7-5) must be 0 on a disk without protection information, and a
 * transfer may not exceed the MAXIMUM TRANSFER LENGTH of VPD page B0h.
 */
static int rw(struct se_dev *d, struct se_cmd *c, bool write, uint64_t lba, uint32_t nr, bool fua)
{
	int r;

	if (c->cdb[1] & 0xe0)
		return illegal(c, ASC_INVALID_FIELD_CDB);
	if (lba > d->nr_lbas || nr > d->nr_lbas - lba)
		return sense_info(c, SE_KEY_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE, true, lba);
	if (d->max_xfer && nr > d->max_xfer)
		return illegal(c, ASC_INVALID_FIELD_CDB);
	if (!nr) {
		c->status = SE_GOOD;
		return SE_GOOD;
	}
	if ((uint64_t)nr * d->lbs > se_iov_len(c->iov, c->iovcnt))
		return illegal(c, ASC_INVALID_FIELD_CDB);
	if (write) {
		if (zoned(d) && zbc_write_check(d, c, lba, nr))
			return c->status;
		r = d->be->write(d->ctx, c->iov, c->iovcnt, lba, nr, fua);
		if (r)
			return backend_error(c, r, SE_KEY_MEDIUM_ERROR, ASC_WRITE_ERROR, lba);
	} else {
		if (zoned(d) && zbc_read_check(d, c, lba, nr))
			return c->status;
		r = d->be->read(d->ctx, c->iov, c->iovcnt, lba, nr);
		if (r)
			return sense_info(c, SE_KEY_MEDIUM_ERROR, ASC_UNRECOVERED_READ, true,
					  first_bad(d, c, lba, nr));
		c->data_in = (size_t)nr * d->lbs;
	}
	c->status = SE_GOOD;
	return SE_GOOD;
}

/* The whole cache, whatever the range; but the range must be on the
 * disk (SBC-4: 0 blocks means to the end). */
static int sync_cache(struct se_dev *d, struct se_cmd *c, uint64_t lba, uint32_t nr)
{
	if (lba > d->nr_lbas || nr > d->nr_lbas - lba)
		return sense_info(c, SE_KEY_ILLEGAL_REQUEST, ASC_LBA_OUT_OF_RANGE, true, lba);
	if (d->be->flush(d->ctx))
		return sense(c, SE_KEY_MEDIUM_ERROR, ASC_WRITE_ERROR);
	return SE_GOOD;
}

/* --------------------------------------------------------- dispatch --- */

int se_exec(struct se_dev *d, struct se_cmd *c)
{
	const uint8_t *cdb = c->cdb;

	c->status = SE_GOOD;
	c->sense_len = 0;
	c->data_in = 0;
	switch (cdb[0]) {
	case 0x00:			/* TEST UNIT READY */
	case 0x1b:			/* START STOP UNIT */
		return SE_GOOD;
	case 0x03: {			/* REQUEST SENSE */
		uint8_t b[18] = { 0x70, 0, SE_KEY_NO_SENSE, 0, 0, 0, 0, 10 };

		return data_in(c, b, sizeof(b), cdb[4]);
	}
	case 0x12:
		return inquiry(d, c);
	case 0x25:
		return read_capacity10(d, c);
	case 0x9e:			/* SERVICE ACTION IN(16) */
		if ((cdb[1] & 0x1f) == 0x10)
			return read_capacity16(d, c);
		/* a command this disk has, with a service action it has not */
		return illegal(c, ASC_INVALID_FIELD_CDB);
	case 0x1a:
		return mode_sense(d, c, false);
	case 0x5a:
		return mode_sense(d, c, true);
	case 0x28:			/* READ(10) */
		return rw(d, c, false, get32(cdb + 2), get16(cdb + 7), false);
	case 0x88:			/* READ(16) */
		return rw(d, c, false, get64(cdb + 2), get32(cdb + 10), false);
	case 0x2a:			/* WRITE(10) */
		return rw(d, c, true, get32(cdb + 2), get16(cdb + 7), cdb[1] & 0x08);
	case 0x8a:			/* WRITE(16) */
		return rw(d, c, true, get64(cdb + 2), get32(cdb + 10), cdb[1] & 0x08);
	case 0x35:			/* SYNCHRONIZE CACHE(10) */
		return sync_cache(d, c, get32(cdb + 2), get16(cdb + 7));
	case 0x91:			/* SYNCHRONIZE CACHE(16) */
		return sync_cache(d, c, get64(cdb + 2), get32(cdb + 10));
	case 0x95:			/* ZBC IN */
		if (!zoned(d))
			break;
		if ((cdb[1] & 0x1f) == 0x00)
			return report_zones(d, c);
		/* REPORT REALMS, REPORT ZONE DOMAINS, ...: not this disk's */
		return illegal(c, ASC_INVALID_FIELD_CDB);
	case 0x94:			/* ZBC OUT */
		if (zoned(d))
			return zone_out(d, c);
		break;
	}
	return illegal(c, ASC_INVALID_OPCODE);
}
