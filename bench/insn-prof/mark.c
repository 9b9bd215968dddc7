// SPDX-License-Identifier: GPL-2.0
/*
 * insn-mark - run by a guest script between the phases bench/run-insns
 * compares: insn-prof.so writes a snapshot when the guest runs
 * insn_mark(), which the build links at a fixed address (static, not
 * position-independent, text at 0x13370000), with no other code there.
 */
__attribute__((noinline)) void insn_mark(void)
{
	__asm__ volatile("nop");
}

int main(void)
{
	insn_mark();
	return 0;
}
