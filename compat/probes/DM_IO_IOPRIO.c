/* Upstream 6.9, backported to 6.1.83: dm_io() takes an I/O priority. */
#include <linux/dm-io.h>
#include <linux/ioprio.h>
int probe(struct dm_io_request *r, struct dm_io_region *g, unsigned long *e)
{ return dm_io(r, 1, g, e, IOPRIO_DEFAULT); }
