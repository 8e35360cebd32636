// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Test and benchmark fixture: a uprobe that does nothing but count its hits. Its
 * cost is the floor every gospan probe pays (the uprobe trap itself). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

__u64 hits;

SEC("uprobe")
int uprobe_empty(struct pt_regs *ctx)
{
	__sync_fetch_and_add(&hits, 1);
	return 0;
}
