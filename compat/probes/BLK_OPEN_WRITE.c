/* 6.5: blk_mode_t and BLK_OPEN_WRITE replace fmode_t in the dm table. */
#include <linux/device-mapper.h>
bool probe(struct dm_target *ti) { return dm_table_get_mode(ti->table) & BLK_OPEN_WRITE; }
