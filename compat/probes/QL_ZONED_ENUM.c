/* Up to 6.7: queue_limits.zoned is enum blk_zoned_model (6.8: bool). */
#include <linux/blkdev.h>
void probe(struct queue_limits *l) { l->zoned = BLK_ZONED_HM; }
