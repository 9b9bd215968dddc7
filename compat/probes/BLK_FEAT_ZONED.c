/* 6.11: the zoned flag moved to queue_limits.features. */
#include <linux/blkdev.h>
blk_features_t probe(void) { return BLK_FEAT_ZONED | BLK_FEAT_WRITE_CACHE | BLK_FEAT_FUA; }
