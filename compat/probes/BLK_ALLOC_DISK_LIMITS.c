/* 6.9: blk_alloc_disk() takes the queue limits (atomic limits API). */
#include <linux/blkdev.h>
struct gendisk *probe(struct queue_limits *l) { return blk_alloc_disk(l, NUMA_NO_NODE); }
