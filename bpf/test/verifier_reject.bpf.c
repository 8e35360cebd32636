// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Test fixture: a program the verifier must reject (it dereferences a value read
 * from user memory as if it were a kernel pointer), so the Java binding's error
 * path — libbpf's log and the verifier log in the exception — can be tested. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

SEC("uprobe")
int uprobe_rejected(struct pt_regs *ctx)
{
	__u64 *p = (__u64 *)ctx->di; /* a scalar, not a pointer the verifier knows */

	return *p == 42;
}
