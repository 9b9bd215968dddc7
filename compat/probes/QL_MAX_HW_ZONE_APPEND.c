/* 6.13: drivers set max_hw_zone_append_sectors, the block layer derives the rest. */
#include <linux/blkdev.h>
void probe(struct queue_limits *l) { l->max_hw_zone_append_sectors = 8; }
