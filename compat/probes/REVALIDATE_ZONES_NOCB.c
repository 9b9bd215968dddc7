/*
 * 6.10: blk_revalidate_disk_zones(disk), usable by bio-based drivers
 * (zone write plugging series). Before, it took a callback and WARNed
 * on a bio-based queue.
 */
#include <linux/blkdev.h>
int probe(struct gendisk *d) { return blk_revalidate_disk_zones(d); }
