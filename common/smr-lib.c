// SPDX-License-Identifier: GPL-2.0
/*
 * smr-common: what dm-smr and dm-caveat share, as a library module (as
 * dm-bufio and dm-bio-prison are for their targets). It holds no devices
 * of its own and needs no set-up: the only state across devices is the
 * claim registry (smr-claim.c), one for both targets, so an smr and a
 * caveat drive over one backing device refuse each other.
 *
 * Floors: smr-timing calls smr-args, smr-faults calls smr-genl; nothing
 * else here calls another file, and nothing calls into a target: the
 * targets hand in callbacks (smr_slots_ops, smr_power_ops, the fault
 * trace).
 */
#include <linux/module.h>
#include <linux/device-mapper.h>

MODULE_DESCRIPTION(DM_NAME " library shared by the smr and caveat targets");
MODULE_LICENSE("GPL");
