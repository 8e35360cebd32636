// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Benchmark fixture (scripts/bench-bpf-primitives.sh): what each BPF primitive gospan's probes
 * use costs on this machine. Each program repeats one primitive N times (N = 1 or 8, in its
 * name); its BPF run time per hit, less prim_empty's, over N is the primitive's cost. User
 * memory is read at the probed function's stack pointer (always mapped).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, char[32]);
	__type(value, __u8);
} names SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, char[744]);
} slots SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, char[512]);
} scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} ring SEC(".maps");

SEC("uprobe")
int prim_empty(struct pt_regs *ctx)
{
	return 0;
}

#define PRIMITIVE(name, n, setup, op)                 \
	SEC("uprobe")                                  \
	int prim_##name##_x##n(struct pt_regs *ctx)    \
	{                                              \
		__u64 sum = 0;                         \
		setup;                                 \
		_Pragma("unroll") for (int i = 0; i < n; i++) \
		{                                      \
			op;                            \
		}                                      \
		return sum & 1;                        \
	}

#define BOTH(name, setup, op) PRIMITIVE(name, 1, setup, op) PRIMITIVE(name, 8, setup, op)

/* bpf_probe_read_user of 8 bytes */
BOTH(user_read_8, __u64 v = 0, bpf_probe_read_user(&v, 8, (void *)(PT_REGS_SP(ctx) + 8 * i)); sum += v)
/* bpf_probe_read_user of 400 bytes (10 hpack.HeaderFields) */
BOTH(user_read_400, __u32 zero = 0; char *buf = bpf_map_lookup_elem(&scratch, &zero); if (!buf) return 0,
     bpf_probe_read_user(buf, 400, (void *)PT_REGS_SP(ctx)); sum += buf[i])
/* bpf_probe_read_kernel of 8 bytes (of the current task) */
BOTH(kernel_read_8, __u64 v = 0; char *task = (char *)bpf_get_current_task(),
     bpf_probe_read_kernel(&v, 8, task + 64 * i); sum += v)
/* a hash map lookup with a 32-byte key (header_names) */
BOTH(hash_lookup_32, char key[32] = {}, key[0] = i; sum += bpf_map_lookup_elem(&names, key) != 0)
/* an array map lookup (binaries) */
BOTH(array_lookup, __u32 k = 0, k = i; char *v = bpf_map_lookup_elem(&slots, &k); if (v) sum += v[0])
/* bpf_ktime_get_ns */
BOTH(ktime, , sum += bpf_ktime_get_ns())
/* bpf_get_attach_cookie */
BOTH(attach_cookie, , sum += bpf_get_attach_cookie(ctx))
/* bpf_get_current_pid_tgid */
BOTH(pid_tgid, , sum += bpf_get_current_pid_tgid())
/* the task's tgid through bpf_get_current_task_btf (a BTF pointer load) */
BOTH(task_btf_tgid, , sum += bpf_get_current_task_btf()->tgid)
/* a per-CPU array map lookup (the record scratch) */
BOTH(percpu_lookup, __u32 zero = 0, char *v = bpf_map_lookup_elem(&scratch, &zero); if (v) sum += v[i])
/* bpf_ringbuf_query of the available data */
BOTH(ringbuf_query, , sum += bpf_ringbuf_query(&ring, BPF_RB_AVAIL_DATA))
