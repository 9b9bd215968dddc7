/*
 * 6.16 (approx.): badblocks_set() and badblocks_clear() return bool, true
 * on success; before, int, 0 on success. Their length became sector_t in
 * the same series.
 */
#include <linux/badblocks.h>
bool (*probe)(struct badblocks *, sector_t, sector_t, int) = badblocks_set;
