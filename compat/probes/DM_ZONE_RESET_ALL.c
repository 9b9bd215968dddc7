/*
 * 6.11 marker: dm sends REQ_OP_ZONE_RESET_ALL to targets, and from the
 * same series on it counts the zones of every lower device (a target can
 * no longer expose zones over a non-zoned disk).
 */
#include <linux/device-mapper.h>
bool probe(struct dm_target *ti) { return ti->zone_reset_all_supported; }
