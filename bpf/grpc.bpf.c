// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gospan's uprobes on grpc-go's HTTP/2 transport. Entry probes only: Go moves
 * goroutine stacks, so a uretprobe's trampoline return address corrupts them.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>

#include "grpc_events.h"

char LICENSE[] SEC("license") = "GPL";

/* Offsets per traced binary; keyed by the executable so a new process of a known
 * binary is traced from its first call. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct exe_key);
	__type(value, struct go_offsets);
} go_offsets_by_exe SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 22); /* bytes; user space may resize before load */
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROBE_COUNT * COUNTER_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} probe_counters SEC(".maps");

/* Record types reach BTF only if a symbol uses them: these keep them in the object's
 * BTF so the Java layouts can be checked against it. */
const volatile struct header_event *unused_header_event __attribute__((unused));

static __always_inline void count(enum gospan_probe probe, enum gospan_counter counter)
{
	__u32 key = probe * COUNTER_COUNT + counter;
	__u64 *value = bpf_map_lookup_elem(&probe_counters, &key);

	if (value)
		*value += 1; /* per-CPU slot: no atomic needed */
}

/* The offsets of the current task's executable, or NULL. */
static __always_inline const struct go_offsets *current_offsets(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct exe_key key = {};
	struct inode *inode = BPF_CORE_READ(task, mm, exe_file, f_inode);

	if (!inode)
		return NULL;
	key.ino = BPF_CORE_READ(inode, i_ino);
	key.dev = BPF_CORE_READ(inode, i_sb, s_dev);
	return bpf_map_lookup_elem(&go_offsets_by_exe, &key);
}

SEC("uprobe")
int uprobe_loopy_writer_write_header(struct pt_regs *ctx)
{
	const enum gospan_probe probe = PROBE_LOOPY_WRITER_WRITE_HEADER;
	const struct go_offsets *off;
	struct header_event *e;
	__u64 l = 0, stream_id = 0, end_stream = 0;
	__u8 side = SIDE_UNKNOWN;
	__u64 pid_tgid;

	count(probe, COUNTER_HITS);
	off = current_offsets();
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	if (go_read_arg(ctx, &off->write_header_l, &l) ||
	    go_read_arg(ctx, &off->write_header_stream_id, &stream_id) ||
	    go_read_arg(ctx, &off->write_header_end_stream, &end_stream)) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	if (off->loopy_writer_side >= 0 &&
	    bpf_probe_read_user(&side, sizeof(side), (void *)(l + off->loopy_writer_side))) {
		count(probe, COUNTER_READ_FAILED);
		side = SIDE_UNKNOWN;
	}

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		count(probe, COUNTER_RINGBUF_FULL);
		return 0;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->conn_id = 0;
	/* A uint32 and a bool in a register: the upper bits are not defined by the ABI. */
	e->stream_id = (__u32)stream_id;
	e->probe = probe;
	e->side = side;
	e->flags = EVENT_CONN_UNKNOWN | ((__u8)end_stream ? EVENT_END_STREAM : 0);
	e->field_count = 0;
	e->fd = -1;
	e->_pad0 = 0;
	bpf_ringbuf_submit(e, 0);
	count(probe, COUNTER_EVENTS_SENT);
	return 0;
}
