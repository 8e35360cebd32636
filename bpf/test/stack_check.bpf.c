// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Test fixture: a uprobe for a Go function's stack-check `jbe` that counts the hits whose jump is taken
 * (the stack grows, the function runs again from its entry) apart from the others (StackCheckJumpIT). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "go_abi.h"

char LICENSE[] SEC("license") = "GPL";

/* [0]: hits whose jump falls through (the function's body runs); [1]: hits whose jump is taken */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

SEC("uprobe")
int uprobe_stack_check(struct pt_regs *ctx)
{
	__u32 key = go_stack_check_jumps(ctx) ? 1 : 0;
	__u64 *n = bpf_map_lookup_elem(&counts, &key);

	if (n)
		__sync_fetch_and_add(n, 1);
	return 0;
}
