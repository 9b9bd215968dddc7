/* 6.16 (approx.): badblocks_check() counts in sector_t, not int. */
#include <linux/badblocks.h>
int (*probe)(struct badblocks *, sector_t, sector_t, sector_t *, sector_t *) =
	badblocks_check;
