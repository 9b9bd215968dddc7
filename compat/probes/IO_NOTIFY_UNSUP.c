/* 7.x: io_notify_fn(error, unsupported, context). */
#include <linux/dm-io.h>
static void fn(unsigned long e, unsigned long u, void *c) { }
io_notify_fn probe(void) { return fn; }
