/* 6.9: open/active zone limits live in queue_limits. */
#include <linux/blkdev.h>
void probe(struct queue_limits *l) { l->max_open_zones = 1; l->max_active_zones = 1; }
