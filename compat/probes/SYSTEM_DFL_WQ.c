/*
 * 6.17: system_dfl_wq, the unbound system workqueue under its new name
 * (Debian's 6.12.117 has it too, backported);
 * newer kernels warn once when work is queued on system_unbound_wq
 * ("enqueued on deprecated workqueue", seen on 7.3).
 */
#include <linux/workqueue.h>
void probe(struct work_struct *w) { queue_work(system_dfl_wq, w); }
