/* 7.x: dm_io() also reports the regions whose device lacks the op. */
#include <linux/dm-io.h>
#include <linux/ioprio.h>
int probe(struct dm_io_request *r, struct dm_io_region *g, unsigned long *e, unsigned long *u)
{ return dm_io(r, 1, g, e, u, IOPRIO_DEFAULT); }
