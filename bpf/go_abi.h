/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Reading Go function arguments at a function's entry, for both Go ABIs.
 *
 * Go >= 1.17 passes integer arguments in RAX, RBX, RCX, RDI, RSI, R8, R9, R10, R11
 * (ABIInternal, Go src/cmd/compile/abi-internal.md); Go <= 1.16 passes them on the
 * stack above the return address. Which one a binary uses, and where each argument
 * lives, comes from user space (the offsets catalog or the binary's DWARF location
 * lists at the entry pc), one `struct go_loc` per argument word: the BPF code never
 * assumes a register.
 *
 * This header is the single definition of the location descriptor; the Java side
 * describes the same layout once and a test checks it against this object's BTF.
 */
#ifndef GOSPAN_GO_ABI_H
#define GOSPAN_GO_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum go_loc_kind {
	GO_LOC_NONE = 0,     /* not resolved: the probe that needs it is not attached */
	GO_LOC_REGISTER = 1, /* in register `dwarf_reg` */
	GO_LOC_STACK = 2,    /* at SP + `sp_offset` at the function's entry (SP points at the return address) */
};

/*
 * Where one argument word lives at function entry.
 * dwarf_reg uses the DWARF x86-64 numbering (System V psABI, table 3.36):
 * 0 RAX, 1 RDX, 2 RCX, 3 RBX, 4 RSI, 5 RDI, 6 RBP, 7 RSP, 8..15 R8..R15,
 * which is what DWARF location expressions (DW_OP_reg0..15) say.
 */
struct go_loc {
	__u8 kind;      /* enum go_loc_kind */
	__u8 dwarf_reg; /* GO_LOC_REGISTER */
	__u8 _pad[2];   /* pads sp_offset to 4 */
	__s32 sp_offset; /* GO_LOC_STACK, bytes */
};
_Static_assert(sizeof(struct go_loc) == 8, "struct go_loc is 8 bytes");

#ifdef __VMLINUX_H__
/*
 * Reads one argument word described by `loc` into *out. Returns 0 on success,
 * -1 when the location is not resolved or the stack read faults.
 * A switch, not a computed offset: the verifier does not allow a variable offset
 * into the context (struct pt_regs).
 */
/* One pt_regs member, loaded by an asm statement with a constant offset: clang would otherwise
 * merge the switch's loads into one load at a computed offset (a table of offsets), which the
 * verifier refuses ("dereference of modified ctx ptr"). */
#define GO_CTX_REG(ctx, reg)                                                                   \
	({                                                                                     \
		__u64 __v;                                                                     \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                                          \
			     : "=r"(__v)                                                       \
			     : "r"(ctx), "i"(__builtin_offsetof(struct pt_regs, reg)));        \
		__v;                                                                           \
	})

/* x86 EFLAGS bits (arch/x86/include/uapi/asm/processor-flags.h) */
#define GO_EFLAGS_CF 0x0001
#define GO_EFLAGS_ZF 0x0040

/*
 * At a Go function's stack-check `jbe` (`cmp rsp|r12, qword ptr [r14 + 0x10]; jbe morestack`: Go
 * src/cmd/internal/obj/x86/obj6.go, stacksplit), whether the jump will be taken: the goroutine's stack
 * is too small, runtime.morestack grows it and the function runs again from its entry. `jbe` jumps
 * when CF or ZF is set, which the `cmp` left in the flags the kernel saved at the trap.
 */
static __always_inline int go_stack_check_jumps(struct pt_regs *ctx)
{
	return (GO_CTX_REG(ctx, flags) & (GO_EFLAGS_CF | GO_EFLAGS_ZF)) != 0;
}

static __always_inline int go_read_arg(struct pt_regs *ctx, const struct go_loc *loc, __u64 *out)
{
	switch (loc->kind) {
	case GO_LOC_REGISTER:
		switch (loc->dwarf_reg) {
		case 0: *out = GO_CTX_REG(ctx, ax); return 0;
		case 1: *out = GO_CTX_REG(ctx, dx); return 0;
		case 2: *out = GO_CTX_REG(ctx, cx); return 0;
		case 3: *out = GO_CTX_REG(ctx, bx); return 0;
		case 4: *out = GO_CTX_REG(ctx, si); return 0;
		case 5: *out = GO_CTX_REG(ctx, di); return 0;
		case 6: *out = GO_CTX_REG(ctx, bp); return 0;
		case 7: *out = GO_CTX_REG(ctx, sp); return 0;
		case 8: *out = GO_CTX_REG(ctx, r8); return 0;
		case 9: *out = GO_CTX_REG(ctx, r9); return 0;
		case 10: *out = GO_CTX_REG(ctx, r10); return 0;
		case 11: *out = GO_CTX_REG(ctx, r11); return 0;
		case 12: *out = GO_CTX_REG(ctx, r12); return 0;
		case 13: *out = GO_CTX_REG(ctx, r13); return 0;
		case 14: *out = GO_CTX_REG(ctx, r14); return 0;
		case 15: *out = GO_CTX_REG(ctx, r15); return 0;
		default: return -1;
		}
	case GO_LOC_STACK:
		*out = 0;
		return bpf_probe_read_user(out, sizeof(*out), (void *)(ctx->sp + loc->sp_offset)) ? -1 : 0;
	default:
		return -1;
	}
}
#endif

#endif /* GOSPAN_GO_ABI_H */
