/* SPDX-License-Identifier: GPL-2.0 */
/*
 * smr-util: the parts of smrctl and smrd that need no kernel: human sizes,
 * drive profiles, dm table computation and JSON output. Unit tested by
 * test-units.c.
 */
#ifndef SMR_UTIL_H
#define SMR_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The version smrctl and smrd print (--version): the project's, the same
 * number as PACKAGE_VERSION in dkms.conf. Change both together
 * (tests/unit/test_smrctl_cli.py checks that they agree), or have the
 * build pass -DSMR_VERSION=\"X.Y.Z\".
 */
#ifndef SMR_VERSION
#define SMR_VERSION "0.1.0"
#endif

/* ---------------------------------------------------------- sizes --- */

/* "4096", "32K", "1.5G", "2TiB": bytes (binary units). 0 or -errno. */
int parse_size(const char *s, uint64_t *bytes);
/* "0.25%" -> 2500 parts per million. 0 or -errno. */
int parse_ppm(const char *s, uint32_t *ppm);
/* A non-negative integer with nothing after it. 0 or -errno. */
int parse_u64(const char *s, uint64_t *v);
/* "32 MiB", "1.5 GiB", "4096 B". */
const char *format_size(uint64_t bytes, char *buf, size_t len);

/* ------------------------------------------------- table geometry --- */

enum smr_model {
	MODEL_NONE = 0,
	MODEL_DRIVE_MANAGED,
	MODEL_HOST_MANAGED,
	MODEL_CAVEAT,
};

struct smr_geom {
	enum smr_model model;
	uint64_t size;		/* bytes of the emulated disk; 0 = what fits */
	/* drive-managed */
	uint64_t band;		/* bytes */
	uint64_t cache;		/* bytes; 0 = cache_ppm or the kernel default */
	uint32_t cache_ppm;	/* cache as a share of the size */
	int64_t idle_ms;	/* -1 = default */
	char policy[16];	/* "" = default */
	int seq_bypass;		/* -1 = default, 0 off, 1 on */
	/* host-managed */
	uint64_t zone;		/* bytes */
	uint64_t zone_cap;	/* bytes; 0 = the zone size */
	int64_t conv;		/* conventional zones; -1 = conv_ppm or 0 */
	uint32_t conv_ppm;	/* conventional zones as a share of zones */
	int64_t max_open;	/* -1 = no limit given */
	int64_t max_active;
	/* caveat */
	int64_t did;		/* blocks; -1 = not given */
	int64_t dnor;
	uint32_t block_size;	/* bytes; 0 = 4096 */
	int64_t unshingled;	/* blocks; -1 = none */
	int on_damaged_read;	/* -1 = not given (error), 0 error, 1 zero */
	/* all */
	int format;
	int64_t write_cache_mib;	/* --write-cache; -1 = none */
	char description[256];	/* from a profile */
	/*
	 * The timing model (docs/timing.md): " key value" pairs for the table
	 * line's timing group, from a profile; timing_words counts the words.
	 */
	char timing[256];
	int timing_words;
	/*
	 * The drive the device is a slice of: drive_mb (a timing key, also
	 * kept in timing[]; 0 = none) and start_mb, where the device starts
	 * on it (-1 = not given: the drive's first sector). Decimal MB.
	 */
	uint64_t drive_mb;
	int64_t start_mb;
};

void geom_init(struct smr_geom *g);
const char *model_name(enum smr_model m);
enum smr_model model_parse(const char *s);
/* A drive-managed cleaning policy: fifo, greedy or cost-benefit? */
int policy_valid(const char *s);

/*
 * The dm table line ("0 <len> <target> <args>") for @g over @dev, a
 * backing device of @backing_bytes. On error returns -EINVAL with a
 * sentence telling the user what to change in @err.
 */
int smr_compute_table(const struct smr_geom *g, const char *dev,
		      uint64_t backing_bytes, char *table, size_t tlen,
		      char *err, size_t elen);

/* Backing sectors metadata takes (mirrors the kernel's on-disk layout). */
uint64_t smr_dm_md_sectors(uint64_t len_sectors, uint64_t band_sectors,
			   uint64_t cache_sectors);
uint64_t smr_hm_md_sectors(uint64_t nr_zones);
uint64_t cv_md_sectors(uint64_t nr_blocks);

/* -------------------------------------------------------- profiles --- */

/*
 * Apply a profile file ("key = value" lines, '#' comments) to @g. Keys:
 * description, model, size, band, cache (size or "N%"), idle_ms, policy,
 * seq_bypass (on/off), zone, zone_capacity, conv (count or "N%"),
 * max_open, max_active, did, dnor, block_size, unshingled, on_damaged_read
 * (error or zero).
 * 0 or -errno with "FILE:LINE: what is wrong" in @err.
 */
int profile_apply_text(const char *text, const char *fname,
		       struct smr_geom *g, char *err, size_t elen);
int profile_load(const char *path, struct smr_geom *g, char *err, size_t elen);
int parse_on_damaged_read(const char *v, int *out);

/* ------------------------------------------------------------ records --- */

/*
 * A device (from a dump) or an event, as smrd and smrctl print them:
 * family, event name, device name and dev_t, then named fields.
 */
#define REC_MAX_FIELDS 48

struct rec_field {
	char key[32];
	int is_str;
	uint64_t u;
	char s[48];
};

struct rec {
	char family[16];	/* "dm-smr" or "dm-caveat" */
	char event[24];		/* "device" for a dump */
	char device[128];
	unsigned int major, minor;
	int nf;
	struct rec_field f[REC_MAX_FIELDS];
};

void rec_init(struct rec *r, const char *family, const char *event);
void rec_add_u64(struct rec *r, const char *key, uint64_t v);
void rec_add_str(struct rec *r, const char *key, const char *v);
const struct rec_field *rec_get(const struct rec *r, const char *key);
/* The field's number, or @dflt if missing or a string. */
uint64_t rec_u64(const struct rec *r, const char *key, uint64_t dflt);

/*
 * One JSON object, no newline: {"ts":..,"family":..,"event":..,
 * "device":..,"devt":"MAJ:MIN",<fields>}; ts < 0 leaves "ts" out.
 * Returns the length, or -1 if @len is too small.
 */
int rec_to_json(const struct rec *r, double ts, char *buf, size_t len);
/* A JSON string literal of @s (quotes included) into @out. */
int json_string(const char *s, char *out, size_t len);
/* The same on @f, whatever the length of @s. */
void json_fputs(const char *s, FILE *f);

/* --------------------------------------------------- backing in use --- */

/*
 * What is stacked on block device MAJ:MIN, as sysfs shows it under
 * @sysfs ("/sys", or a test's tree): the holders of the device, of each
 * of its partitions and, for a partition, of its whole disk. dm devices
 * (LVM, LUKS, multipath, another emulated drive) and md arrays show
 * there. A mounted file system does not: the kernel refuses that backing
 * itself (EBUSY). But every dm device claims what it maps with one
 * shared holder, and the block layer lets a holder claim again, so dm
 * takes a backing another dm device uses without a word. Writes the
 * holders, "dm-3 (vg-home) on sdb1", comma-separated, into @out.
 * Returns how many there are, or -errno if MAJ:MIN is not in sysfs.
 */
int bdev_holders(const char *sysfs, unsigned int maj, unsigned int min,
		 char *out, size_t len);

#endif /* SMR_UTIL_H */
