/* 6.7, backported to Debian's 6.1: multicast groups can require a capability. */
#include <net/genetlink.h>
static const struct genl_multicast_group g = { .name = "x", .flags = GENL_MCAST_CAP_SYS_ADMIN };
const void *probe(void) { return &g; }
