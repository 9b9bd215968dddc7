/* 6.1: bio-based drivers split to their limits with bio_split_to_limits(). */
#include <linux/blkdev.h>
struct bio *probe(struct bio *b) { return bio_split_to_limits(b); }
