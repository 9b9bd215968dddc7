/* 6.13: hrtimer_setup() sets the callback; 6.15 removed hrtimer_init(). */
#include <linux/hrtimer.h>
static enum hrtimer_restart fn(struct hrtimer *t) { return HRTIMER_NORESTART; }
void probe(struct hrtimer *t) { hrtimer_setup(t, fn, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_SOFT); }
