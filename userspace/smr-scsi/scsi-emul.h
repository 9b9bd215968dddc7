/* SPDX-License-Identifier: GPL-2.0 */
/*
 * scsi-emul: the SCSI (SBC, and ZBC for host-managed drives) command set
 * of an emulated drive, over a backend that reads, writes, flushes and
 * reports and manages zones. No I/O of its own and no kernel interface:
 * smr-scsi puts it behind TCMU, the unit tests behind a drive in memory.
 */
#ifndef SCSI_EMUL_H
#define SCSI_EMUL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* A zone as the backend reports it, in logical blocks. Types and
 * conditions use the ZBC codes, which are also <linux/blkzoned.h>'s. */
struct se_zone {
	uint64_t start, len, wp;
	uint8_t type;		/* SE_ZT_* */
	uint8_t cond;		/* SE_ZC_* */
};

enum { SE_ZT_CONV = 1, SE_ZT_SWR = 2, SE_ZT_SWP = 3 };
enum {
	SE_ZC_NOT_WP = 0x0, SE_ZC_EMPTY = 0x1, SE_ZC_IOPEN = 0x2,
	SE_ZC_EOPEN = 0x3, SE_ZC_CLOSED = 0x4, SE_ZC_RDONLY = 0xd,
	SE_ZC_FULL = 0xe, SE_ZC_OFFLINE = 0xf,
};

/* Zone operations (ZBC OUT service actions). */
enum se_zone_op { SE_ZOP_CLOSE = 1, SE_ZOP_FINISH = 2, SE_ZOP_OPEN = 3, SE_ZOP_RESET = 4 };

/*
 * The backend. Offsets and counts in logical blocks; each returns 0 or a
 * negative errno (report: the number of zones it filled). read and write
 * move whole blocks between the device and iov; write with fua set must
 * be on the media when it returns; zone_op acts on the zone at lba, nr
 * blocks long (as report gave it).
 */
struct se_backend {
	int (*read)(void *ctx, const struct iovec *iov, int iovcnt, uint64_t lba, uint32_t nr);
	int (*write)(void *ctx, const struct iovec *iov, int iovcnt, uint64_t lba, uint32_t nr, bool fua);
	int (*flush)(void *ctx);
	int (*report)(void *ctx, uint64_t lba, struct se_zone *zones, unsigned int nr);
	int (*zone_op)(void *ctx, enum se_zone_op op, uint64_t lba, uint64_t nr);
};

/* What the drive is. */
struct se_dev {
	const struct se_backend *be;
	void *ctx;
	uint64_t nr_lbas;
	uint32_t lbs;			/* logical block size, bytes */
	uint8_t pbs_exp;		/* physical = logical << pbs_exp */
	enum { SE_DISK, SE_DISK_DM, SE_ZBC_HM } model;	/* SE_DISK_DM: drive-managed SMR */
	uint64_t zone_lbas;		/* SE_ZBC_HM: zone size */
	uint32_t max_open;		/* 0: no limit */
	bool wce;			/* volatile write cache on */
	uint16_t rpm;			/* 1: not rotating; 0: not reported */
	uint32_t max_xfer;		/* blocks per command */
	char product[17];		/* INQUIRY product identification */
	char serial[21];		/* unit serial number (VPD 0x80) */
	uint64_t naa;			/* NAA 3 (locally assigned) identifier */
};

/* One command: in, the CDB and the data buffer; out, the status and the
 * sense data, and how many bytes of data it returned (data-in). */
struct se_cmd {
	const uint8_t *cdb;
	const struct iovec *iov;
	int iovcnt;
	uint8_t status;			/* SAM: 0x00 GOOD, 0x02 CHECK CONDITION */
	uint8_t sense[32];
	uint8_t sense_len;
	size_t data_in;			/* bytes returned in iov */
};

#define SE_GOOD 0x00
#define SE_CHECK_CONDITION 0x02

/* Sense keys used here. */
#define SE_KEY_NO_SENSE 0x0
#define SE_KEY_MEDIUM_ERROR 0x3
#define SE_KEY_HARDWARE_ERROR 0x4
#define SE_KEY_ILLEGAL_REQUEST 0x5
#define SE_KEY_DATA_PROTECT 0x7

/* Run one command. Returns cmd->status. */
int se_exec(struct se_dev *dev, struct se_cmd *cmd);

/* The length of the data buffer a CDB names (0 if none or unknown). */
size_t se_iov_len(const struct iovec *iov, int iovcnt);

/* Sense data decoded (fixed or descriptor format) for the unit tests and
 * the handler's log: key, ASC, ASCQ and the INFORMATION field (0 if not
 * valid). */
void se_sense_decode(const uint8_t *sense, uint8_t *key, uint8_t *asc, uint8_t *ascq, uint64_t *info);

#endif
