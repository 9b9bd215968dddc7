/* 6.19 (approx.): report_zones takes struct blk_report_zones_args. */
#include <linux/blkdev.h>
int probe(struct gendisk *d, struct blk_zone *z, struct blk_report_zones_args *a)
{ return disk_report_zone(d, z, 0, a); }
