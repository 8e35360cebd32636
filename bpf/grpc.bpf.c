// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gospan's uprobes on grpc-go's HTTP/2 transport. Entry probes only: Go moves
 * goroutine stacks, so a uretprobe's trampoline return address corrupts them.
 *
 * Each probe hit costs the traced program the uprobe trap (~3.5 us here) plus this
 * code, so the programs read only what spans need: the stream id, END_STREAM, the
 * connection's socket, and the header fields named in `header_names`.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_endian.h>

#include "grpc_events.h"

char LICENSE[] SEC("license") = "GPL";

#define AF_INET 2
#define AF_INET6 10
#define HTTP2_FLAG_END_STREAM 0x1 /* RFC 9113 6.2 */

/* Offsets per traced binary; keyed by the executable so a new process of a known
 * binary is traced from its first call. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct exe_key);
	__type(value, struct go_offsets);
} go_offsets_by_exe SEC(".maps");

/* The header names whose values are captured, NUL-padded, mapped to the id user space
 * decodes them by. Filled by user space: the defaults spans need plus the configured
 * allow-list; never credentials. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, char[GOSPAN_NAME_LEN]);
	__type(value, __u8);
} header_names SEC(".maps");

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

/* Bit n set: some name in `header_names` is n bytes long. Set by user space before load;
 * lets most fields skip the map lookup. */
const volatile __u32 header_name_lengths = 0;

/* Bytes waiting in `events` above which a record wakes the reader. Below it, records are
 * submitted without a wakeup and the reader drains the buffer on its own short timer: a
 * wakeup per record costs the traced program several microseconds (measured here: ~11 us per
 * hit with a wakeup per record, ~4 us without; an IPI is a VM exit in a guest). Set by user
 * space before load; 0 wakes on every record. */
const volatile __u64 wakeup_bytes = 0;

/* Record types reach BTF only if a symbol uses them: this keeps them in the object's
 * BTF so the Java layouts can be checked against it. */
const volatile struct header_event *unused_header_event __attribute__((unused));

/* Clamps a 64-bit size to [0, max] in a way the verifier sees: clang would otherwise
 * drop a check it has already proven, and the verifier would lose the bound. */
_Static_assert(GOSPAN_VALUE_LEN == 124 && GOSPAN_NAME_LEN == 32, "VERIFIER_CLAMP literals below");
#define VERIFIER_CLAMP(var, max) \
	asm volatile("if %[v] <= " #max " goto +1; %[v] = " #max : [v] "+r"(var))

static __always_inline void count(enum gospan_probe probe, enum gospan_counter counter)
{
	__u32 key = probe * COUNTER_COUNT + counter;
	__u64 *value = bpf_map_lookup_elem(&probe_counters, &key);

	if (value)
		*value += 1; /* per-CPU slot: no atomic needed */
}

/* The offsets of the current task's executable, or NULL; fills *key. */
static __always_inline const struct go_offsets *current_offsets(struct exe_key *key)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct inode *inode = BPF_CORE_READ(task, mm, exe_file, f_inode);

	if (!inode)
		return NULL;
	key->ino = BPF_CORE_READ(inode, i_ino);
	key->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	return bpf_map_lookup_elem(&go_offsets_by_exe, key);
}

static __always_inline int read_u64(__u64 *out, __u64 addr)
{
	return bpf_probe_read_user(out, sizeof(*out), (void *)addr);
}

/* A Go interface value: {itab or type, data}. */
struct go_iface {
	__u64 tab;
	__u64 data;
};

/*
 * Fills conn_id, fd and the socket addresses of `e` from a net.Conn interface stored at
 * `iface_addr`. conn_id is the outermost data pointer (the same object on the write and
 * read paths of one connection); the fd is found by unwrapping grpc's syscallConn and
 * crypto/tls.Conn down to *net.TCPConn.
 */
static __always_inline void read_conn(enum gospan_probe probe, const struct go_offsets *off,
				      __u64 iface_addr, struct header_event *e)
{
	struct go_iface conn = {};
	__s64 sysfd = -1;

	e->flags |= EVENT_CONN_UNKNOWN;
	if (bpf_probe_read_user(&conn, sizeof(conn), (void *)iface_addr) || !conn.data)
		return;
	e->conn_id = conn.data;

	for (int i = 0; i < GOSPAN_MAX_CONN_WRAPS; i++) {
		if (conn.tab == off->itab_tcp_conn && off->itab_tcp_conn) {
			__u64 netfd = 0;

			if (read_u64(&netfd, conn.data + off->tcp_conn_fd) || !netfd ||
			    bpf_probe_read_user(&sysfd, sizeof(sysfd), (void *)(netfd + off->net_fd_sysfd)))
				sysfd = -1;
			break;
		}
		if (conn.tab == off->itab_tls_conn && off->itab_tls_conn) {
			if (bpf_probe_read_user(&conn, sizeof(conn), (void *)(conn.data + off->tls_conn_conn)))
				break;
			continue;
		}
		if (conn.tab == off->itab_syscall_conn && off->itab_syscall_conn) {
			if (bpf_probe_read_user(&conn, sizeof(conn), (void *)(conn.data + off->syscall_conn_conn)))
				break;
			continue;
		}
		count(probe, COUNTER_UNKNOWN_ITAB);
		break;
	}
	if (sysfd < 0 || sysfd > 0x7fffffff)
		return;
	e->fd = (__s32)sysfd;

	/* fd -> struct file -> struct socket -> struct sock, in the kernel: the 4-tuple as it
	 * is now, with no race against a process that exits or reuses the fd number. */
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	struct file *file = NULL;
	struct socket *sock;
	struct sock *sk;
	__u16 family;

	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[e->fd]) || !file)
		return;
	sock = BPF_CORE_READ(file, private_data);
	if (!sock)
		return;
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		return;
	family = BPF_CORE_READ(sk, __sk_common.skc_family);
	/* Read into typed locals: BPF_CORE_READ_INTO copies sizeof(*dst), one byte for a
	 * __u8 array. */
	if (family == AF_INET) {
		__u32 local = 0, remote = 0;

		BPF_CORE_READ_INTO(&local, sk, __sk_common.skc_rcv_saddr);
		BPF_CORE_READ_INTO(&remote, sk, __sk_common.skc_daddr);
		__builtin_memcpy(e->local_addr, &local, sizeof(local));
		__builtin_memcpy(e->remote_addr, &remote, sizeof(remote));
	} else if (family == AF_INET6) {
		struct in6_addr local = {}, remote = {};

		BPF_CORE_READ_INTO(&local, sk, __sk_common.skc_v6_rcv_saddr);
		BPF_CORE_READ_INTO(&remote, sk, __sk_common.skc_v6_daddr);
		__builtin_memcpy(e->local_addr, &local, sizeof(local));
		__builtin_memcpy(e->remote_addr, &remote, sizeof(remote));
	} else {
		return;
	}
	e->family = family;
	e->local_port = BPF_CORE_READ(sk, __sk_common.skc_num);
	e->remote_port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	e->flags &= ~EVENT_CONN_UNKNOWN;
}

/* A Go string header. */
struct go_string {
	__u64 ptr;
	__s64 len;
};

/*
 * Copies the wanted fields of a []hpack.HeaderField into e->fields. Names are looked up
 * in `header_names`; values of other fields are never read.
 *
 * The loop bound and the slot index are kept in the record (ring buffer memory) and read
 * back each iteration rather than held in registers: the verifier then sees the same
 * bounded unknown value on every path instead of one state per (iteration, captured,
 * bound) combination, which grows cubically and exceeded its 1M-instruction budget.
 */
static __always_inline void read_fields(enum gospan_probe probe, const struct go_offsets *off,
					__u64 fields, __s64 n, struct header_event *e)
{
	char name[GOSPAN_NAME_LEN];
	struct go_string s;

	e->fields_total = n < 0 ? 0 : n > 255 ? 255 : n;
	e->field_count = 0;
	if (n > GOSPAN_MAX_SCAN_FIELDS) {
		e->flags |= EVENT_FIELDS_TRUNCATED;
		count(probe, COUNTER_FIELD_TRUNCATED);
	}
	for (int i = 0; i < GOSPAN_MAX_SCAN_FIELDS; i++) {
		if (i >= e->fields_total)
			break;
		__u64 field = fields + (__u64)i * off->header_field_size;

		if (bpf_probe_read_user(&s, sizeof(s), (void *)(field + off->header_field_name))) {
			e->flags |= EVENT_READ_FAILED;
			count(probe, COUNTER_READ_FAILED);
			continue;
		}
		if (s.len <= 0 || s.len >= GOSPAN_NAME_LEN || !(header_name_lengths & (1u << s.len)))
			continue;
		__builtin_memset(name, 0, sizeof(name));
		__u64 name_len = s.len;

		VERIFIER_CLAMP(name_len, 31); /* GOSPAN_NAME_LEN - 1 */
		if (bpf_probe_read_user(name, name_len, (void *)s.ptr))
			continue;
		__u8 *id = bpf_map_lookup_elem(&header_names, name);
		if (!id)
			continue;
		__u8 slot = e->field_count;

		if (slot >= GOSPAN_MAX_FIELDS) {
			e->flags |= EVENT_FIELDS_TRUNCATED;
			count(probe, COUNTER_FIELD_TRUNCATED);
			break;
		}
		if (bpf_probe_read_user(&s, sizeof(s), (void *)(field + off->header_field_value)))
			continue;

		struct header_field *f = &e->fields[slot];
		__u64 len = s.len < 0 ? 0 : s.len;

		f->name_id = *id;
		f->flags = 0;
		if (len > GOSPAN_VALUE_LEN) {
			f->flags = FIELD_VALUE_TRUNCATED;
			count(probe, COUNTER_FIELD_TRUNCATED);
		}
		VERIFIER_CLAMP(len, 124); /* GOSPAN_VALUE_LEN */
		if (bpf_probe_read_user(f->value, len, (void *)s.ptr))
			len = 0;
		f->value_len = len;
		e->field_count = slot + 1;
	}
}

static __always_inline struct header_event *new_event(enum gospan_probe probe, __u8 side,
						      const struct exe_key *exe)
{
	struct header_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 pid_tgid;

	if (!e) {
		count(probe, COUNTER_RINGBUF_FULL);
		return NULL;
	}
	pid_tgid = bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->pid = pid_tgid >> 32;
	e->tid = (__u32)pid_tgid;
	e->conn_id = 0;
	e->stream_id = 0;
	e->probe = probe;
	e->side = side;
	e->flags = 0;
	e->field_count = 0;
	e->fd = -1;
	e->family = 0;
	e->local_port = 0;
	e->remote_port = 0;
	e->fields_total = 0;
	__builtin_memset(e->_pad0, 0, sizeof(e->_pad0));
	__builtin_memset(e->local_addr, 0, sizeof(e->local_addr));
	__builtin_memset(e->remote_addr, 0, sizeof(e->remote_addr));
	e->exe = *exe;
	return e;
}

static __always_inline void send(enum gospan_probe probe, struct header_event *e)
{
	__u64 flags = bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
										       : BPF_RB_NO_WAKEUP;

	bpf_ringbuf_submit(e, flags);
	count(probe, COUNTER_EVENTS_SENT);
}

SEC("uprobe")
int uprobe_loopy_writer_write_header(struct pt_regs *ctx)
{
	const enum gospan_probe probe = PROBE_LOOPY_WRITER_WRITE_HEADER;
	const struct go_offsets *off;
	struct header_event *e;
	__u64 l = 0, stream_id = 0, end_stream = 0, hf = 0, hf_len = 0;
	__u8 side = SIDE_UNKNOWN;
	struct exe_key exe = {};

	count(probe, COUNTER_HITS);
	off = current_offsets(&exe);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	if (go_read_arg(ctx, &off->write_header_l, &l) ||
	    go_read_arg(ctx, &off->write_header_stream_id, &stream_id) ||
	    go_read_arg(ctx, &off->write_header_end_stream, &end_stream) ||
	    go_read_arg(ctx, &off->write_header_hf_ptr, &hf) ||
	    go_read_arg(ctx, &off->write_header_hf_len, &hf_len)) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	if (off->loopy_writer_side < 0 ||
	    bpf_probe_read_user(&side, sizeof(side), (void *)(l + off->loopy_writer_side))) {
		count(probe, COUNTER_READ_FAILED);
		side = SIDE_UNKNOWN;
	}

	e = new_event(probe, side, &exe);
	if (!e)
		return 0;
	/* A uint32 and a bool in a register: the upper bits are not defined by the ABI. */
	e->stream_id = (__u32)stream_id;
	if ((__u8)end_stream)
		e->flags |= EVENT_END_STREAM;

	if (off->loopy_writer_conn >= 0) {
		read_conn(probe, off, l + off->loopy_writer_conn, e);
	} else {
		/* grpc-go before loopyWriter.conn: l.framer.writer.conn */
		__u64 framer = 0, writer = 0;

		if (off->loopy_writer_framer >= 0 && off->framer_writer >= 0 && off->buf_writer_conn >= 0 &&
		    !read_u64(&framer, l + off->loopy_writer_framer) && framer &&
		    !read_u64(&writer, framer + off->framer_writer) && writer)
			read_conn(probe, off, writer + off->buf_writer_conn, e);
		else
			e->flags |= EVENT_CONN_UNKNOWN;
	}
	read_fields(probe, off, hf, (__s64)hf_len, e);
	send(probe, e);
	return 0;
}

/* Shared by both operateHeaders probes: t.conn, then the MetaHeadersFrame. */
static __always_inline int operate_headers(struct pt_regs *ctx, enum gospan_probe probe, __u8 side)
{
	const struct go_offsets *off;
	const struct go_loc *t_loc, *frame_loc;
	struct header_event *e;
	__u64 t = 0, frame = 0, headers_frame = 0;
	struct {
		__u64 ptr;
		__s64 len;
	} fields = {};
	__u8 flags = 0;
	__u32 stream_id = 0;
	__s32 conn_off;
	struct exe_key exe = {};

	count(probe, COUNTER_HITS);
	off = current_offsets(&exe);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	if (side == SIDE_CLIENT) {
		t_loc = &off->client_operate_headers_t;
		frame_loc = &off->client_operate_headers_frame;
		conn_off = off->http2_client_conn;
	} else {
		t_loc = &off->server_operate_headers_t;
		frame_loc = &off->server_operate_headers_frame;
		conn_off = off->http2_server_conn;
	}
	if (go_read_arg(ctx, t_loc, &t) || go_read_arg(ctx, frame_loc, &frame) ||
	    read_u64(&headers_frame, frame + off->meta_headers_frame_headers_frame) || !headers_frame ||
	    bpf_probe_read_user(&stream_id, sizeof(stream_id),
				(void *)(headers_frame + off->headers_frame_stream_id)) ||
	    bpf_probe_read_user(&flags, sizeof(flags), (void *)(headers_frame + off->headers_frame_flags)) ||
	    bpf_probe_read_user(&fields, sizeof(fields), (void *)(frame + off->meta_headers_frame_fields))) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}

	e = new_event(probe, side, &exe);
	if (!e)
		return 0;
	e->stream_id = stream_id;
	if (flags & HTTP2_FLAG_END_STREAM)
		e->flags |= EVENT_END_STREAM;
	read_conn(probe, off, t + conn_off, e);
	read_fields(probe, off, fields.ptr, fields.len, e);
	send(probe, e);
	return 0;
}

SEC("uprobe")
int uprobe_http2_client_operate_headers(struct pt_regs *ctx)
{
	return operate_headers(ctx, PROBE_HTTP2_CLIENT_OPERATE_HEADERS, SIDE_CLIENT);
}

SEC("uprobe")
int uprobe_http2_server_operate_headers(struct pt_regs *ctx)
{
	return operate_headers(ctx, PROBE_HTTP2_SERVER_OPERATE_HEADERS, SIDE_SERVER);
}

/* Process ids that just exec'd a new image, for discovery: a process seen by a /proc scan
 * between its fork and its exec still shows its parent's executable, and exec keeps the
 * start time, so only this notice tells user space to look again. Raw tracepoint: needs no
 * tracefs (often not mounted in a sidecar container). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 16); /* bytes: 4096 pids of 16 bytes (8 header + 4 + pad) */
} execs SEC(".maps");

SEC("raw_tp/sched_process_exec")
int raw_tp_sched_process_exec(void *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	/* A full buffer drops the notice; the periodic /proc scan still finds the process. */
	bpf_ringbuf_output(&execs, &tgid, sizeof(tgid), 0);
	return 0;
}
