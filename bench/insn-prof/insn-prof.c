// SPDX-License-Identifier: GPL-2.0
/*
 * insn-prof.so - a QEMU TCG plugin for bench/run-insns: counts the guest
 * instructions executed per translated block, by the block's start
 * address, and writes the counts since the last snapshot to OUT.N each
 * time the guest runs the marker (the one function of bench/insn-prof/
 * mark.c, linked at a fixed address), and at exit. One vCPU: the counters
 * are added inline, without atomics.
 *
 *   -plugin insn-prof.so,arg=marker=HEX,arg=out=PREFIX
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct block {
	uint64_t va;		/* 0: a free entry */
	uint64_t execs;
	uint32_t insns;
};

/* Open addressing; a kernel and a few programs translate far fewer. */
#define NR_BLOCKS (1u << 22)
static struct block *blocks;
static uint64_t marker;
static const char *prefix = "insn";
static int snapshot;

static struct block *block_of(uint64_t va, uint32_t insns)
{
	uint64_t h = (va * 0x9E3779B97F4A7C15ull) >> 40;
	uint32_t probes;

	for (probes = 0; probes < NR_BLOCKS; probes++, h++) {
		struct block *b = &blocks[h & (NR_BLOCKS - 1)];

		if (b->va == va && b->insns == insns)
			return b;
		if (!b->va) {
			b->va = va;
			b->insns = insns;
			return b;
		}
	}
	fprintf(stderr, "insn-prof: more than %u blocks\n", NR_BLOCKS);
	abort();
}

static void write_snapshot(void)
{
	char path[4096];
	uint32_t i;
	FILE *f;

	snprintf(path, sizeof(path), "%s.%d", prefix, snapshot++);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return;
	}
	for (i = 0; i < NR_BLOCKS; i++) {
		if (!blocks[i].execs)
			continue;
		fprintf(f, "%" PRIx64 " %" PRIu64 "\n", blocks[i].va,
			blocks[i].execs * blocks[i].insns);
		blocks[i].execs = 0;
	}
	fclose(f);
}

static void at_marker(unsigned int vcpu, void *data)
{
	write_snapshot();
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	uint64_t va = qemu_plugin_tb_vaddr(tb);
	struct block *b = block_of(va, qemu_plugin_tb_n_insns(tb));

	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64,
						 &b->execs, 1);
	if (marker && va == marker)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, at_marker,
						     QEMU_PLUGIN_CB_NO_REGS, NULL);
}

static void at_exit(qemu_plugin_id_t id, void *data)
{
	write_snapshot();
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	int i;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "marker=", 7))
			marker = strtoull(argv[i] + 7, NULL, 16);
		else if (!strncmp(argv[i], "out=", 4))
			prefix = strdup(argv[i] + 4);
	}
	blocks = calloc(NR_BLOCKS, sizeof(*blocks));
	if (!blocks)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
