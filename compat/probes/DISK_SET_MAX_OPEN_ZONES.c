/* Up to 6.8: open/active zone limits are set on the gendisk. */
#include <linux/blkdev.h>
void probe(struct gendisk *d) { disk_set_max_open_zones(d, 1); disk_set_max_active_zones(d, 1); }
