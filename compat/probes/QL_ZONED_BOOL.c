/* 6.8 to 6.10: queue_limits.zoned is a bool. */
#include <linux/blkdev.h>
void probe(struct queue_limits *l) { bool *z = &l->zoned; *z = true; }
