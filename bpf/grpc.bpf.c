// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gospan's uprobes on grpc-go's HTTP/2 transport. Entry probes only: Go moves
 * goroutine stacks, so a uretprobe's trampoline return address corrupts them.
 *
 * Each probe hit costs the traced program the uprobe trap (~1-2 us on the development VM)
 * plus this code, whose helper calls cost ~0.1-0.4 us each (docs/benchmarks.md), so the
 * programs read only what spans need: the stream id, END_STREAM, the connection (its socket
 * on a stream's start), and the header fields named in `header_names`.
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

/* The traced binaries, one slot each: offsets, read-only data range, name cache. A probe finds
 * its binary through its uprobe's attach cookie, (generation << 32) | (slot + 1): an array
 * lookup instead of walking task->mm->exe_file->f_inode and hashing the key (~0.2 us less per
 * hit, measured). The generation tells a slot reused for another binary from the one a link
 * was attached for (0: the slot is free). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GOSPAN_BINARY_SLOTS);
	__type(key, __u32);
	__type(value, struct binary);
} binaries SEC(".maps");

/* The slot of each traced binary, by its executable: how a probe finds its binary when it has
 * no cookie (kernel < 5.15) or its cookie's slot was reused. Keyed by the executable, as the
 * uprobes are, so a new process of a known binary is traced from its first call. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct exe_key);
	__type(value, __u32);
} slot_by_exe SEC(".maps");

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

/* Where a record is built (the BPF stack has 512 bytes): only its used part is then copied to
 * `events` (bpf_ringbuf_output), so a record with 2 fields takes 352 bytes of the ring buffer,
 * not 1376, and the ring buffer's cache lines shared with the reader are written once. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct header_event);
} event_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROBE_COUNT * COUNTER_COUNT);
	__type(key, __u32);
	__type(value, __u64);
} probe_counters SEC(".maps");

/* Records sent on this CPU: the ring buffer's fill level is checked once per
 * WAKEUP_CHECK_EVERY of them (a bpf_ringbuf_query is ~60 ns cold here). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} records_sent SEC(".maps");

/* Bit n set: some name in `header_names` that a request (or a response: headers, trailers)
 * carries is n bytes long. Set by user space before load; a field of another length is skipped
 * without reading its name (a read and a lookup each cost ~0.1 us here): on a request,
 * :method and :scheme (7 bytes, like :status) and content-type (12, like grpc-message) are
 * never read by default. */
const volatile __u32 request_name_lengths = 0;
const volatile __u32 response_name_lengths = 0;

/* The lengths to read names of, for headers a side receives (or sends, `sending`). */
static __always_inline __u32 name_lengths(__u8 side, int sending)
{
	if (side == SIDE_UNKNOWN)
		return request_name_lengths | response_name_lengths;
	/* a client sends requests and receives responses; a server the other way round */
	return (side == SIDE_CLIENT) == !!sending ? request_name_lengths : response_name_lengths;
}

/* Bytes waiting in `events` above which a record wakes the reader. Below it, records are
 * submitted without a wakeup and the reader drains the buffer on its own short timer: a
 * wakeup per record costs the traced program several microseconds (measured here: ~11 us per
 * hit with a wakeup per record, ~4 us without; an IPI is a VM exit in a guest). Set by user
 * space before load; 0 wakes on every record. */
const volatile __u64 wakeup_bytes = 0;

/* Whether response headers that do not end the stream (the HEADERS before the trailers) are
 * sent. Spans need only the request headers and the trailers; the response headers carry
 * :status and custom metadata, wanted only when user space captures extra header names.
 * Without them those 2 of a unary call's 6 hits return after a few reads. Set before load. */
const volatile __u8 capture_response_headers = 0;

/* The id of `content-type` in `header_names` (set before load): an HTTP/2 server's request
 * is recorded only when it is gRPC. */
const volatile __u8 content_type_id = 255;

/* Keeps the contract's types in the object's BTF, where the Java side is generated from. */
const volatile struct gospan_contract *unused_contract __attribute__((unused));

/* Clamps a 64-bit size to [0, max] in a way the verifier sees: clang would otherwise
 * drop a check it has already proven, and the verifier would lose the bound. */
_Static_assert(GOSPAN_VALUE_LEN == 124 && GOSPAN_NAME_LEN == 32 && sizeof(struct header_event) == 1376,
	       "VERIFIER_CLAMP literals below");
#define VERIFIER_CLAMP(var, max) \
	asm volatile("if %[v] <= " #max " goto +1; %[v] = " #max : [v] "+r"(var))

/* A kfunc of kernels >= 6.2: a kernel address as a read-only BTF pointer, so the kernel
 * structs behind it are read with direct loads instead of one bpf_probe_read_kernel each
 * (~0.1 us per call here). Weak: NULL where the kernel lacks it (then the CO-RE path runs). */
extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

#ifndef bpf_ksym_exists /* libbpf >= 1.2 defines it */
#define bpf_ksym_exists(sym) (!!(sym))
#endif

/* Decided at load time (CO-RE): the fast paths of newer kernels. GOSPAN_COMPAT_ONLY builds the
 * object older kernels run (bpf/Makefile: a test object, so the fallback stays verified). */
#ifdef GOSPAN_COMPAT_ONLY
#define HAVE_BTF_TASK 0
#define HAVE_RDONLY_CAST 0
#define HAVE_ATTACH_COOKIE 0
#else
#define HAVE_ATTACH_COOKIE bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_attach_cookie)
#define HAVE_BTF_TASK bpf_core_enum_value_exists(enum bpf_func_id, BPF_FUNC_get_current_task_btf)
#define HAVE_RDONLY_CAST bpf_ksym_exists(bpf_rdonly_cast)
#endif

static __always_inline void count(enum gospan_probe probe, enum gospan_counter counter)
{
	__u32 key = probe * COUNTER_COUNT + counter;
	__u64 *value = bpf_map_lookup_elem(&probe_counters, &key);

	if (value)
		*value += 1; /* per-CPU slot: no atomic needed */
}

/* The current task's executable: 0 on success. */
static __always_inline int current_exe(struct exe_key *key)
{
	if (HAVE_BTF_TASK) {
		/* Kernel >= 5.11: the task as a BTF pointer, read with direct loads (each load a
		 * plain instruction guarded by the exception table) instead of one
		 * bpf_probe_read_kernel call per pointer hop: ~0.6 us less per hit, measured. */
		struct task_struct *task = bpf_get_current_task_btf();
		struct mm_struct *mm = task->mm;
		struct file *exe;
		struct inode *inode;

		if (!mm)
			return -1;
		exe = mm->exe_file;
		if (!exe)
			return -1;
		inode = exe->f_inode;
		if (!inode)
			return -1;
		key->ino = inode->i_ino;
		key->dev = inode->i_sb->s_dev;
	} else {
		struct task_struct *task = (struct task_struct *)bpf_get_current_task();
		struct inode *inode = BPF_CORE_READ(task, mm, exe_file, f_inode);

		if (!inode)
			return -1;
		key->ino = BPF_CORE_READ(inode, i_ino);
		key->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	}
	return 0;
}

/*
 * The slot of the binary the probe was attached to (the current task's executable), or NULL.
 * Both ways end in the same `binaries` lookup, so the verifier sees one kind of pointer after
 * it (two kinds doubled its work on everything downstream).
 */
static __always_inline struct binary *current_binary(struct pt_regs *ctx)
{
	struct exe_key key = {};
	struct binary *b;
	__u32 *slot, index;

	if (HAVE_ATTACH_COOKIE) {
		__u64 cookie = bpf_get_attach_cookie(ctx);

		index = (__u32)cookie - 1; /* cookie 0 (none): index 0xffffffff, no such slot */
		b = bpf_map_lookup_elem(&binaries, &index);
		if (b && b->generation && b->generation == cookie >> 32)
			return b;
	}
	if (current_exe(&key))
		return NULL;
	slot = bpf_map_lookup_elem(&slot_by_exe, &key);
	if (!slot)
		return NULL;
	index = *slot;
	b = bpf_map_lookup_elem(&binaries, &index);
	if (!b || !b->generation || b->exe.ino != key.ino || b->exe.dev != key.dev)
		return NULL;
	return b;
}

/* The offsets of the current binary, or NULL; fills *key and *bin (if given). */
static __always_inline const struct go_offsets *current_offsets(struct pt_regs *ctx, struct exe_key *key,
								struct binary **bin)
{
	struct binary *b = current_binary(ctx);

	if (!b)
		return NULL;
	*key = b->exe;
	if (bin)
		*bin = b;
	return &b->offsets;
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

/* The socket 4-tuple of e->fd, through BTF pointers (kernel >= 6.2). */
static __always_inline void read_socket_btf(struct header_event *e)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file **fds = task->files->fdt->fd;
	struct file *file = NULL;
	struct socket *sock;
	struct sock *sk;
	__u16 family;

	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[e->fd]) || !file)
		return;
	file = bpf_rdonly_cast(file, bpf_core_type_id_kernel(struct file));
	sock = bpf_rdonly_cast(file->private_data, bpf_core_type_id_kernel(struct socket));
	if (!sock)
		return;
	sk = sock->sk;
	if (!sk)
		return;
	family = sk->__sk_common.skc_family;
	if (family == AF_INET) {
		__u32 local = sk->__sk_common.skc_rcv_saddr, remote = sk->__sk_common.skc_daddr;

		__builtin_memcpy(e->local_addr, &local, sizeof(local));
		__builtin_memcpy(e->remote_addr, &remote, sizeof(remote));
	} else if (family == AF_INET6) {
		struct in6_addr local = sk->__sk_common.skc_v6_rcv_saddr, remote = sk->__sk_common.skc_v6_daddr;

		__builtin_memcpy(e->local_addr, &local, sizeof(local));
		__builtin_memcpy(e->remote_addr, &remote, sizeof(remote));
	} else {
		return;
	}
	e->family = family;
	e->local_port = sk->__sk_common.skc_num;
	e->remote_port = bpf_ntohs(sk->__sk_common.skc_dport);
	e->flags &= ~EVENT_CONN_UNKNOWN;
}

/*
 * Fills conn_id, fd and the socket addresses of `e` from a net.Conn interface stored at
 * `iface_addr`, or already read (`known`, else NULL). conn_id is the outermost data pointer
 * (the same object on the write and read paths of one connection); the fd is found by
 * unwrapping grpc's syscallConn and crypto/tls.Conn down to *net.TCPConn.
 *
 * Only a stream's start needs the socket (`with_socket`): user space keys a stream by (pid,
 * conn_id, stream id) and keeps the start's 4-tuple, so the other events of the stream carry
 * conn_id alone (family 0). The socket is three user reads and the kernel's file, socket and
 * sock, all hot (the goroutine has just used the socket): ~0.15-0.3 us a start in the running
 * server, measured. Caching it per connection in a map saved 2-3 % of the BPF time
 * (scripts/bench-probes.sh with BASELINE_REV): not kept, and the 4-tuple stays as it is now.
 */
static __always_inline void read_conn(enum gospan_probe probe, const struct go_offsets *off,
				      __u64 iface_addr, const struct go_iface *known, int with_socket,
				      struct header_event *e)
{
	struct go_iface conn = {};
	__s64 sysfd = -1;

	if (!with_socket) {
		if (known)
			conn.data = known->data;
		else if (read_u64(&conn.data, iface_addr + offsetof(struct go_iface, data)))
			conn.data = 0;
		if (conn.data)
			e->conn_id = conn.data;
		else
			e->flags |= EVENT_CONN_UNKNOWN;
		return;
	}
	e->flags |= EVENT_CONN_UNKNOWN;
	if (known)
		conn = *known;
	else if (bpf_probe_read_user(&conn, sizeof(conn), (void *)iface_addr))
		return;
	if (!conn.data)
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
		if (conn.tab == off->itab_h2c_buf_conn && off->itab_h2c_buf_conn && off->h2c_buf_conn_conn >= 0) {
			if (bpf_probe_read_user(&conn, sizeof(conn), (void *)(conn.data + off->h2c_buf_conn_conn)))
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
	if (HAVE_BTF_TASK && HAVE_RDONLY_CAST) {
		read_socket_btf(e);
		return;
	}
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

/* The frame and header field layout of one copy of x/net http2 (grpc-go's, or a server's). */
struct frame_offs {
	__s32 mhf_headers_frame, mhf_fields, flags, stream_id, hf_size, hf_name, hf_value;
};

static __always_inline struct frame_offs grpc_frame_offs(const struct go_offsets *off)
{
	struct frame_offs fo = {
		.mhf_headers_frame = off->meta_headers_frame_headers_frame,
		.mhf_fields = off->meta_headers_frame_fields,
		.flags = off->headers_frame_flags,
		.stream_id = off->headers_frame_stream_id,
		.hf_size = off->header_field_size,
		.hf_name = off->header_field_name,
		.hf_value = off->header_field_value,
	};
	return fo;
}

static __always_inline struct frame_offs server_frame_offs(const struct http_server_offsets *h)
{
	struct frame_offs fo = {
		.mhf_headers_frame = h->meta_headers_frame_headers_frame,
		.mhf_fields = h->meta_headers_frame_fields,
		.flags = h->headers_frame_flags,
		.stream_id = h->headers_frame_stream_id,
		.hf_size = h->header_field_size,
		.hf_name = h->header_field_name,
		.hf_value = h->header_field_value,
	};
	return fo;
}

/*
 * Header names in a binary's read-only data are known by their address. grpc-go's own header
 * names are string literals, and so are the names hpack decodes through its static table
 * (:path, :authority, user-agent...): their bytes sit in the binary's read-only PT_LOAD segment,
 * which never changes and is at the same address in every process of a position-dependent
 * binary. So a name there is read and looked up once per binary, then found in its slot's
 * `name_cache` by address: no bpf_probe_read_user, no hash lookup. Names elsewhere (the heap:
 * hpack's dynamic table, metadata keys) are read each time.
 *
 * An entry is one u64, (address << 13) | (length << 8) | id, written and read whole, so CPUs
 * racing on a slot see an entry or its replacement, never a mix. Direct-mapped by address.
 */
#define NAME_NOT_WANTED 255 /* ids are 0..254 (HeaderNames: at most 255 names) */

static __always_inline __u64 name_cache_value(__u64 ptr, __u64 len, __u64 id)
{
	return (ptr << 13) | (len << 8) | id;
}

/* The cache entry for a name at [ptr, ptr + len), or NULL when it is not in read-only data. */
static __always_inline __u64 *name_cache_entry(struct binary *bin, __u64 ptr, __u64 len)
{
	/* < 2^50: the entry keeps the address whole */
	if (!bin || ptr < bin->rodata_start || ptr + len > bin->rodata_end || ptr >= 1ULL << 50)
		return NULL;
	return &bin->name_cache[(ptr ^ (ptr >> 6)) & (GOSPAN_NAME_CACHE_SLOTS - 1)];
}

/*
 * The id of the header name at [ptr, ptr + len) (0 < len < GOSPAN_NAME_LEN) in `header_names`,
 * or NAME_NOT_WANTED: from the binary's name cache, or read and looked up (then cached when in
 * read-only data). A function of its own (a BPF-to-BPF call): the verifier then sees one result
 * in the caller's loop instead of one state per path through the cache, which multiplied its
 * work by four.
 */
static __noinline __u8 name_id_of(struct binary *bin, __u64 ptr, __u64 len)
{
	char name[GOSPAN_NAME_LEN] = {};
	__u8 name_id = NAME_NOT_WANTED;
	__u64 *cached = name_cache_entry(bin, ptr, len);

	if (cached) {
		__u64 entry = *(volatile __u64 *)cached; /* one load: another CPU may replace it */

		if (entry == name_cache_value(ptr, len, entry & 0xff))
			return entry & 0xff;
	}
	VERIFIER_CLAMP(len, 31); /* GOSPAN_NAME_LEN - 1 */
	if (bpf_probe_read_user(name, len, (void *)ptr))
		return NAME_NOT_WANTED;
	__u8 *id = bpf_map_lookup_elem(&header_names, name);

	if (id)
		name_id = *id;
	if (cached)
		*cached = name_cache_value(ptr, len, name_id);
	return name_id;
}

/* The []hpack.HeaderField array, copied from user memory in one read (a bpf_probe_read_user
 * costs ~0.1 us here; one per field header cost more than the rest of the loop). */
#define FIELDS_BUF_LEN 2048
struct fields_buf {
	__u8 bytes[FIELDS_BUF_LEN + sizeof(struct go_string)]; /* a masked offset + one string header */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct fields_buf);
} fields_scratch SEC(".maps");

/*
 * Copies the wanted fields of a []hpack.HeaderField into e->fields. Names are looked up
 * in `header_names`; values of other fields are never read.
 *
 * The loop bound and the slot index are kept in the record (map memory) and read
 * back each iteration rather than held in registers: the verifier then sees the same
 * bounded unknown value on every path instead of one state per (iteration, captured,
 * bound) combination, which grows cubically and exceeded its 1M-instruction budget.
 */
static __always_inline void read_fields(enum gospan_probe probe, const struct frame_offs *off,
					__u64 fields, __s64 n, __u32 lengths, struct binary *bin, struct header_event *e)
{
	struct go_string s;
	__u32 zero = 0;
	struct fields_buf *buf = bpf_map_lookup_elem(&fields_scratch, &zero);
	__u64 hf_size = off->hf_size;
	__u64 bytes;

	e->fields_total = n < 0 ? 0 : n > 255 ? 255 : n;
	e->field_count = 0;
	/* the scanned fields fit the buffer: Go's HeaderField is 40 bytes (hpack.go, x/net) */
	if (!buf || hf_size < sizeof(struct go_string) || hf_size > FIELDS_BUF_LEN / GOSPAN_MAX_SCAN_FIELDS ||
	    off->hf_name < 0 || off->hf_value < 0 || off->hf_name > hf_size - sizeof(struct go_string) ||
	    off->hf_value > hf_size - sizeof(struct go_string)) {
		e->flags |= EVENT_READ_FAILED;
		count(probe, COUNTER_READ_FAILED);
		return;
	}
	if (n > GOSPAN_MAX_SCAN_FIELDS) {
		e->flags |= EVENT_FIELDS_TRUNCATED;
		count(probe, COUNTER_FIELD_TRUNCATED);
	}
	bytes = (__u64)(e->fields_total > GOSPAN_MAX_SCAN_FIELDS ? GOSPAN_MAX_SCAN_FIELDS : e->fields_total) * hf_size;
	VERIFIER_CLAMP(bytes, 2048); /* FIELDS_BUF_LEN */
	if (bytes == 0)
		return;
	if (bpf_probe_read_user(buf->bytes, bytes, (void *)fields)) {
		e->flags |= EVENT_READ_FAILED;
		count(probe, COUNTER_READ_FAILED);
		return;
	}
	for (int i = 0; i < GOSPAN_MAX_SCAN_FIELDS; i++) {
		if (i >= e->fields_total)
			break;
		/* below FIELDS_BUF_LEN anyway (checked above); the mask shows it to the verifier
		 * without a branch, which would multiply its states per iteration */
		__u64 at = ((__u64)i * hf_size + off->hf_name) & (FIELDS_BUF_LEN - 1);

		__builtin_memcpy(&s, &buf->bytes[at], sizeof(s));
		if (s.len <= 0 || s.len >= GOSPAN_NAME_LEN || !(lengths & (1u << s.len)))
			continue;
		__u8 name_id = name_id_of(bin, s.ptr, s.len);

		if (name_id == NAME_NOT_WANTED)
			continue;
		__u8 slot = e->field_count;

		if (slot >= GOSPAN_MAX_FIELDS) {
			e->flags |= EVENT_FIELDS_TRUNCATED;
			count(probe, COUNTER_FIELD_TRUNCATED);
			break;
		}
		at = ((__u64)i * hf_size + off->hf_value) & (FIELDS_BUF_LEN - 1);
		__builtin_memcpy(&s, &buf->bytes[at], sizeof(s));

		struct header_field *f = &e->fields[slot];
		__u64 len = s.len < 0 ? 0 : s.len;

		f->name_id = name_id;
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

/*
 * Two members of one Go struct at `base`, in one bpf_probe_read_user when they lie within
 * READ_WINDOW bytes of each other (a read costs ~0.1-0.4 us here, little more for a few
 * hundred bytes than for 8), else in two. Sizes are constants <= 16. Uses `fields_scratch`. 0 on success.
 */
#define READ_WINDOW 128
static __always_inline int read_members(__u64 base, __s32 off_a, void *a, __u32 size_a, __s32 off_b, void *b,
					__u32 size_b)
{
	__u32 zero = 0;
	struct fields_buf *buf = bpf_map_lookup_elem(&fields_scratch, &zero);
	__s64 lo = off_a < off_b ? off_a : off_b;
	__s64 end_a = (__s64)off_a + size_a, end_b = (__s64)off_b + size_b;
	__s64 hi = end_a > end_b ? end_a : end_b;

	if (off_a < 0 || off_b < 0)
		return -1;
	if (!buf || hi - lo > READ_WINDOW)
		return bpf_probe_read_user(a, size_a, (void *)(base + off_a)) ||
		       bpf_probe_read_user(b, size_b, (void *)(base + off_b));
	__u64 n = hi - lo;

	VERIFIER_CLAMP(n, 128); /* READ_WINDOW */
	if (n == 0 || bpf_probe_read_user(buf->bytes, n, (void *)(base + lo)))
		return -1;
	/* below READ_WINDOW; the mask shows it to the verifier */
	__builtin_memcpy(a, &buf->bytes[(off_a - lo) & (READ_WINDOW - 1)], size_a);
	__builtin_memcpy(b, &buf->bytes[(off_b - lo) & (READ_WINDOW - 1)], size_b);
	return 0;
}

static __always_inline void init_event(struct header_event *e, enum gospan_probe probe, __u8 side,
					       const struct exe_key *exe)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

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
}

static __always_inline struct header_event *new_event(enum gospan_probe probe, __u8 side,
						      const struct exe_key *exe)
{
	__u32 zero = 0;
	struct header_event *e = bpf_map_lookup_elem(&event_scratch, &zero);

	if (!e)
		return NULL;
	init_event(e, probe, side, exe);
	return e;
}

#define WAKEUP_CHECK_EVERY 16 /* records per CPU; a power of 2 */

/* Wakes the reader once wakeup_bytes wait in `events`, checked every WAKEUP_CHECK_EVERY
 * records of a CPU: the reader also drains on its own timer, so a check that comes up to 15
 * records (< 21 KiB) late costs nothing. */
static __always_inline __u64 wakeup_flags(void)
{
	__u32 zero = 0;
	__u32 *sent = bpf_map_lookup_elem(&records_sent, &zero);

	if (!wakeup_bytes)
		return BPF_RB_FORCE_WAKEUP;
	if (sent && (++*sent & (WAKEUP_CHECK_EVERY - 1)))
		return BPF_RB_NO_WAKEUP;
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >= wakeup_bytes ? BPF_RB_FORCE_WAKEUP
									     : BPF_RB_NO_WAKEUP;
}

/* Bytes of a record in use: the fixed part and field_count fields. */
static __always_inline __u64 event_size(const struct header_event *e)
{
	__u64 n = e->field_count > GOSPAN_MAX_FIELDS ? GOSPAN_MAX_FIELDS : e->field_count;
	__u64 size = offsetof(struct header_event, fields) + n * sizeof(struct header_field);

	/* clang computes it as (n << 7) | 96, whose bound the verifier overestimates */
	VERIFIER_CLAMP(size, 1376); /* sizeof(struct header_event) */
	return size;
}

/* Copies the used part of a record to `events`. */
static __always_inline void send(enum gospan_probe probe, const struct header_event *e)
{
	if (bpf_ringbuf_output(&events, (void *)e, event_size(e), wakeup_flags()))
		count(probe, COUNTER_RINGBUF_FULL);
	else
		count(probe, COUNTER_EVENTS_SENT);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_LOOPY_WRITER_WRITE_HEADER,
	     "google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader")
GOSPAN_EVENT(LOOPY_WRITER_WRITE_HEADER)
int uprobe_loopy_writer_write_header(struct pt_regs *ctx)
{
	const enum gospan_probe probe = PROBE_LOOPY_WRITER_WRITE_HEADER;
	const struct go_offsets *off;
	struct header_event *e;
	__u64 l = 0, stream_id = 0, end_stream = 0, hf = 0, hf_len = 0;
	__u8 side = SIDE_UNKNOWN;
	struct exe_key exe = {};
	struct binary *bin = NULL;

	count(probe, COUNTER_HITS);
	off = current_offsets(ctx, &exe, &bin);
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
	/* loopyWriter.side and, since grpc-go 1.54, .conn: one read (both within 128 bytes) */
	struct go_iface iface = {};
	int have_iface = off->loopy_writer_conn >= 0;

	if (off->loopy_writer_side < 0 ||
	    (have_iface ? read_members(l, off->loopy_writer_side, &side, sizeof(side), off->loopy_writer_conn, &iface,
				       sizeof(iface))
			: bpf_probe_read_user(&side, sizeof(side), (void *)(l + off->loopy_writer_side)))) {
		count(probe, COUNTER_READ_FAILED);
		side = SIDE_UNKNOWN;
		have_iface = have_iface && !bpf_probe_read_user(&iface, sizeof(iface), (void *)(l + off->loopy_writer_conn));
	}
	if (side == SIDE_SERVER && !(__u8)end_stream && !capture_response_headers) {
		count(probe, COUNTER_SKIPPED);
		return 0;
	}

	e = new_event(probe, side, &exe);
	if (!e)
		return 0;
	/* A uint32 and a bool in a register: the upper bits are not defined by the ABI. */
	e->stream_id = (__u32)stream_id;
	if ((__u8)end_stream)
		e->flags |= EVENT_END_STREAM;

	if (have_iface) {
		read_conn(probe, off, 0, &iface, side != SIDE_SERVER, e);
	} else {
		/* grpc-go before loopyWriter.conn: l.framer.writer.conn */
		__u64 framer = 0, writer = 0;

		if (off->loopy_writer_framer >= 0 && off->framer_writer >= 0 && off->buf_writer_conn >= 0 &&
		    !read_u64(&framer, l + off->loopy_writer_framer) && framer &&
		    !read_u64(&writer, framer + off->framer_writer) && writer)
			read_conn(probe, off, writer + off->buf_writer_conn, NULL, side != SIDE_SERVER, e);
		else
			e->flags |= EVENT_CONN_UNKNOWN;
	}
	struct frame_offs fo = grpc_frame_offs(off);

	read_fields(probe, &fo, hf, (__s64)hf_len, name_lengths(side, 1), bin, e);
	send(probe, e);
	return 0;
}

/*
 * A received HEADERS frame (MetaHeadersFrame): grpc-go's operateHeaders on both sides, and an
 * HTTP/2 server's processHeaders on the ServeHTTP path. `conn` is the address of the
 * connection's net.Conn interface inside the receiver (t.conn, sc.conn).
 */
/* Streams an HTTP/2 server (the ServeHTTP path) received as gRPC requests, until their
 * trailers: the trailers of other requests (a REST endpoint on the same server) are not
 * recorded. */
struct server_stream_key {
	__u32 tgid;
	__u32 stream_id;
	__u64 sc; /* the *serverConn */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384); /* gRPC streams open at once; an evicted one ends by timeout */
	__type(key, struct server_stream_key);
	__type(value, __u8);
} grpc_server_streams SEC(".maps");

#define CONTENT_TYPE_LEN 12 /* strlen("content-type") */

/* Whether the record's captured content-type is gRPC's: application/grpc, optionally
 * followed by "+codec" or ";parameters". */
static __always_inline int grpc_content_type(const struct header_event *e)
{
	const char *want = "application/grpc"; /* 16 bytes */

	for (int i = 0; i < GOSPAN_MAX_FIELDS; i++) {
		if (i >= e->field_count)
			break;
		const struct header_field *f = &e->fields[i];

		if (f->name_id != content_type_id || f->value_len < 16)
			continue;
#pragma unroll
		for (int j = 0; j < 16; j++) {
			if (f->value[j] != want[j])
				return 0;
		}
		return f->value_len == 16 || f->value[16] == '+' || f->value[16] == ';';
	}
	return 0;
}

static __always_inline int headers_frame_event(struct pt_regs *ctx, enum gospan_probe probe, __u8 side,
					       const struct go_offsets *off, const struct exe_key *exe, struct binary *bin,
					       const struct go_loc *t_loc, const struct go_loc *frame_loc,
					       __s32 conn_off, const struct frame_offs *fo, int grpc_only)
{
	struct header_event *e;
	__u64 t = 0, frame = 0, headers_frame = 0;
	struct {
		__u64 ptr;
		__s64 len;
	} fields = {};
	__u8 flags = 0;
	__u32 stream_id = 0;

	/* MetaHeadersFrame{*HeadersFrame, Fields}, then FrameHeader{.., Flags, .., StreamID}: a read each */
	if (go_read_arg(ctx, t_loc, &t) || go_read_arg(ctx, frame_loc, &frame) ||
	    read_members(frame, fo->mhf_headers_frame, &headers_frame, sizeof(headers_frame), fo->mhf_fields, &fields,
			 sizeof(fields)) ||
	    !headers_frame ||
	    read_members(headers_frame, fo->stream_id, &stream_id, sizeof(stream_id), fo->flags, &flags, sizeof(flags))) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	if (side == SIDE_CLIENT && !(flags & HTTP2_FLAG_END_STREAM) && !capture_response_headers) {
		count(probe, COUNTER_SKIPPED);
		return 0;
	}

	e = new_event(probe, side, exe);
	if (!e)
		return 0;
	e->stream_id = stream_id;
	if (flags & HTTP2_FLAG_END_STREAM)
		e->flags |= EVENT_END_STREAM;
	/* content-type tells gRPC requests from others on an HTTP/2 server: read it there */
	read_fields(probe, fo, fields.ptr, fields.len, name_lengths(side, 0) | (grpc_only ? 1u << CONTENT_TYPE_LEN : 0), bin,
		    e);
	if (grpc_only) {
		struct server_stream_key k = {.tgid = e->pid, .stream_id = stream_id, .sc = t};
		__u8 one = 1;

		if (!grpc_content_type(e)) {
			count(probe, COUNTER_SKIPPED);
			return 0;
		}
		bpf_map_update_elem(&grpc_server_streams, &k, &one, BPF_ANY);
	}
	read_conn(probe, off, t + conn_off, NULL, side == SIDE_SERVER, e);
	send(probe, e);
	return 0;
}

/* Shared by both operateHeaders probes. */
static __always_inline int operate_headers(struct pt_regs *ctx, enum gospan_probe probe, __u8 side)
{
	const struct go_offsets *off;
	struct exe_key exe = {};
	struct binary *bin = NULL;

	count(probe, COUNTER_HITS);
	off = current_offsets(ctx, &exe, &bin);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	struct frame_offs fo = grpc_frame_offs(off);

	if (side == SIDE_CLIENT)
		return headers_frame_event(ctx, probe, side, off, &exe, bin, &off->client_operate_headers_t,
					   &off->client_operate_headers_frame, off->http2_client_conn, &fo, 0);
	return headers_frame_event(ctx, probe, side, off, &exe, bin, &off->server_operate_headers_t,
				   &off->server_operate_headers_frame, off->http2_server_conn, &fo, 0);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_HTTP2_CLIENT_OPERATE_HEADERS,
	     "google.golang.org/grpc/internal/transport.(*http2Client).operateHeaders")
GOSPAN_EVENT(HTTP2_CLIENT_OPERATE_HEADERS)
int uprobe_http2_client_operate_headers(struct pt_regs *ctx)
{
	return operate_headers(ctx, PROBE_HTTP2_CLIENT_OPERATE_HEADERS, SIDE_CLIENT);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_HTTP2_SERVER_OPERATE_HEADERS,
	     "google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders")
GOSPAN_EVENT(HTTP2_SERVER_OPERATE_HEADERS)
int uprobe_http2_server_operate_headers(struct pt_regs *ctx)
{
	return operate_headers(ctx, PROBE_HTTP2_SERVER_OPERATE_HEADERS, SIDE_SERVER);
}

/*
 * The ServeHTTP path: grpc-go's (*Server).ServeHTTP behind an HTTP/2 server of x/net
 * (h2c) or of net/http (its bundled copy). Request headers come from the server's
 * processHeaders (the same MetaHeadersFrame as operateHeaders). The response's trailers
 * are in a Go map (http.Header) until writeResHeaders.writeFrame hpack-encodes them, field
 * by field, with the connection's hpack Encoder; so:
 *   writeFrame(w, sc)        a trailers block (endStream) starts: a pending record, keyed by
 *                            the connection's encoder, holds its stream id and socket;
 *   Encoder.WriteField(e, f) a wanted field encoded by a pending encoder: appended to it;
 *   writeHeaderBlock(w, sc)  the block is encoded: the record is sent.
 * One goroutine at a time writes a connection's frames (x/net http2 server.go, writingFrame),
 * so a pending record is never written by two CPUs at once. WriteField is also every grpc-go
 * transport's header encoder: user space attaches it only to binaries whose processHeaders
 * saw a gRPC request (see Tracer), and encoders with no pending record return at once.
 */
struct pending_key {
	__u32 tgid;
	__u32 _pad;
	__u64 encoder; /* the *hpack.Encoder */
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024); /* blocks being encoded at once; an evicted one is lost */
	__type(key, struct pending_key);
	__type(value, struct header_event);
} pending_trailers SEC(".maps");

static __always_inline const struct http_server_offsets *server_copy(const struct go_offsets *off, int nethttp)
{
	return nethttp ? &off->nethttp : &off->xnet;
}

static __always_inline int process_headers(struct pt_regs *ctx, int nethttp)
{
	const enum gospan_probe probe = PROBE_XNET_PROCESS_HEADERS + (nethttp ? PROBE_NETHTTP_SHIFT : 0);
	const struct go_offsets *off;
	const struct http_server_offsets *h;
	struct exe_key exe = {};
	struct binary *bin = NULL;

	count(probe, COUNTER_HITS);
	off = current_offsets(ctx, &exe, &bin);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	h = server_copy(off, nethttp);
	struct frame_offs fo = server_frame_offs(h);

	return headers_frame_event(ctx, probe, SIDE_SERVER, off, &exe, bin, &h->process_headers_sc,
				   &h->process_headers_f, h->server_conn_conn, &fo, 1);
}

/* The connection's hpack encoder, from a writeContext interface's data word (*serverConn). */
static __always_inline int pending_key_of(__u64 sc, const struct http_server_offsets *h, struct pending_key *key)
{
	key->tgid = bpf_get_current_pid_tgid() >> 32;
	key->_pad = 0;
	key->encoder = 0;
	return read_u64(&key->encoder, sc + h->server_conn_hpack_encoder) || !key->encoder ? -1 : 0;
}

static __always_inline int write_res_headers(struct pt_regs *ctx, int nethttp)
{
	const enum gospan_probe probe = PROBE_XNET_WRITE_RES_HEADERS + (nethttp ? PROBE_NETHTTP_SHIFT : 0);
	const struct go_offsets *off;
	const struct http_server_offsets *h;
	struct exe_key exe = {};
	struct pending_key key;
	struct header_event *e;
	__u64 w = 0, sc = 0;
	__u32 stream_id = 0, zero = 0;
	__u8 end_stream = 0;

	count(probe, COUNTER_HITS);
	off = current_offsets(ctx, &exe, NULL);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	h = server_copy(off, nethttp);
	if (go_read_arg(ctx, &h->write_frame_w, &w) || go_read_arg(ctx, &h->write_frame_ctx, &sc) ||
	    bpf_probe_read_user(&end_stream, sizeof(end_stream), (void *)(w + h->write_res_headers_end_stream))) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	if (!end_stream)
		return 0; /* response headers: spans need only the trailers */
	if (bpf_probe_read_user(&stream_id, sizeof(stream_id), (void *)(w + h->write_res_headers_stream_id)) ||
	    pending_key_of(sc, h, &key)) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	struct server_stream_key sk = {.tgid = key.tgid, .stream_id = stream_id, .sc = sc};

	if (!bpf_map_lookup_elem(&grpc_server_streams, &sk)) {
		count(probe, COUNTER_SKIPPED); /* not a gRPC request's stream */
		return 0;
	}
	bpf_map_delete_elem(&grpc_server_streams, &sk);
	e = bpf_map_lookup_elem(&event_scratch, &zero);
	if (!e)
		return 0;
	init_event(e, probe, SIDE_SERVER, &exe);
	e->stream_id = stream_id;
	e->flags |= EVENT_END_STREAM;
	read_conn(probe, off, sc + h->server_conn_conn, NULL, 0, e);
	bpf_map_update_elem(&pending_trailers, &key, e, BPF_ANY);
	return 0;
}

static __always_inline int write_field(struct pt_regs *ctx, int nethttp)
{
	const enum gospan_probe probe = PROBE_XNET_HPACK_WRITE_FIELD + (nethttp ? PROBE_NETHTTP_SHIFT : 0);
	const struct go_offsets *off;
	const struct http_server_offsets *h;
	struct exe_key exe = {};
	struct pending_key key = {};
	struct header_event *e;
	struct go_string name = {}, value = {};
	char name_buf[GOSPAN_NAME_LEN];

	count(probe, COUNTER_HITS);
	off = current_offsets(ctx, &exe, NULL);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	h = server_copy(off, nethttp);
	key.tgid = bpf_get_current_pid_tgid() >> 32;
	if (go_read_arg(ctx, &h->write_field_e, &key.encoder))
		return 0;
	e = bpf_map_lookup_elem(&pending_trailers, &key);
	if (!e)
		return 0; /* not a trailers block of a server on the ServeHTTP path */
	if (go_read_arg(ctx, &h->write_field_name_ptr, &name.ptr) ||
	    go_read_arg(ctx, &h->write_field_name_len, (__u64 *)&name.len)) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	if (e->fields_total < 255)
		e->fields_total++;
	if (name.len <= 0 || name.len >= GOSPAN_NAME_LEN || !(response_name_lengths & (1u << name.len)))
		return 0;
	__builtin_memset(name_buf, 0, sizeof(name_buf));
	__u64 name_len = name.len;

	VERIFIER_CLAMP(name_len, 31); /* GOSPAN_NAME_LEN - 1 */
	if (bpf_probe_read_user(name_buf, name_len, (void *)name.ptr))
		return 0;
	__u8 *id = bpf_map_lookup_elem(&header_names, name_buf);

	if (!id)
		return 0;
	__u32 slot = e->field_count;

	if (slot >= GOSPAN_MAX_FIELDS) {
		e->flags |= EVENT_FIELDS_TRUNCATED;
		count(probe, COUNTER_FIELD_TRUNCATED);
		return 0;
	}
	if (go_read_arg(ctx, &h->write_field_value_ptr, &value.ptr) ||
	    go_read_arg(ctx, &h->write_field_value_len, (__u64 *)&value.len)) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	struct header_field *f = &e->fields[slot];
	__u64 len = value.len < 0 ? 0 : value.len;

	f->name_id = *id;
	f->flags = 0;
	if (len > GOSPAN_VALUE_LEN) {
		f->flags = FIELD_VALUE_TRUNCATED;
		count(probe, COUNTER_FIELD_TRUNCATED);
	}
	VERIFIER_CLAMP(len, 124); /* GOSPAN_VALUE_LEN */
	if (bpf_probe_read_user(f->value, len, (void *)value.ptr))
		len = 0;
	f->value_len = len;
	e->field_count = slot + 1;
	return 0;
}

static __always_inline int write_header_block(struct pt_regs *ctx, int nethttp)
{
	const enum gospan_probe probe = PROBE_XNET_WRITE_HEADER_BLOCK + (nethttp ? PROBE_NETHTTP_SHIFT : 0);
	const struct go_offsets *off;
	const struct http_server_offsets *h;
	struct exe_key exe = {};
	struct pending_key key;
	struct header_event *e;
	__u64 sc = 0;

	count(probe, COUNTER_HITS);
	off = current_offsets(ctx, &exe, NULL);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	h = server_copy(off, nethttp);
	if (go_read_arg(ctx, &h->write_header_block_ctx, &sc) || pending_key_of(sc, h, &key)) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	e = bpf_map_lookup_elem(&pending_trailers, &key);
	if (!e)
		return 0; /* response headers, or a later fragment of a block already sent */
	send(probe, e);
	bpf_map_delete_elem(&pending_trailers, &key);
	return 0;
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_XNET_PROCESS_HEADERS,
	     "golang.org/x/net/http2.(*serverConn).processHeaders")
GOSPAN_SERVER(xnet)
GOSPAN_EVENT(HTTP2_SERVER_PROCESS_HEADERS)
int uprobe_xnet_process_headers(struct pt_regs *ctx)
{
	return process_headers(ctx, 0);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_NETHTTP_PROCESS_HEADERS,
	     "net/http.(*http2serverConn).processHeaders")
GOSPAN_SERVER(nethttp)
GOSPAN_EVENT(HTTP2_SERVER_PROCESS_HEADERS)
int uprobe_nethttp_process_headers(struct pt_regs *ctx)
{
	return process_headers(ctx, 1);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_XNET_WRITE_RES_HEADERS,
	     "golang.org/x/net/http2.(*writeResHeaders).writeFrame")
GOSPAN_SERVER(xnet)
GOSPAN_EVENT(HTTP2_SERVER_WRITE_RES_HEADERS)
int uprobe_xnet_write_res_headers(struct pt_regs *ctx)
{
	return write_res_headers(ctx, 0);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_NETHTTP_WRITE_RES_HEADERS,
	     "net/http.(*http2writeResHeaders).writeFrame")
GOSPAN_SERVER(nethttp)
GOSPAN_EVENT(HTTP2_SERVER_WRITE_RES_HEADERS)
int uprobe_nethttp_write_res_headers(struct pt_regs *ctx)
{
	return write_res_headers(ctx, 1);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_XNET_WRITE_HEADER_BLOCK,
	     "golang.org/x/net/http2.(*writeResHeaders).writeHeaderBlock")
GOSPAN_SERVER(xnet)
int uprobe_xnet_write_header_block(struct pt_regs *ctx)
{
	return write_header_block(ctx, 0);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_NETHTTP_WRITE_HEADER_BLOCK,
	     "net/http.(*http2writeResHeaders).writeHeaderBlock")
GOSPAN_SERVER(nethttp)
int uprobe_nethttp_write_header_block(struct pt_regs *ctx)
{
	return write_header_block(ctx, 1);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_XNET_HPACK_WRITE_FIELD,
	     "golang.org/x/net/http2/hpack.(*Encoder).WriteField")
GOSPAN_SERVER(xnet)
GOSPAN_LAZY
int uprobe_xnet_hpack_write_field(struct pt_regs *ctx)
{
	return write_field(ctx, 0);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_NETHTTP_HPACK_WRITE_FIELD,
	     "vendor/golang.org/x/net/http2/hpack.(*Encoder).WriteField")
GOSPAN_SERVER(nethttp)
GOSPAN_LAZY
int uprobe_nethttp_hpack_write_field(struct pt_regs *ctx)
{
	return write_field(ctx, 1);
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

	/* A full buffer drops the notice; the periodic /proc scan still finds the process. No
	 * wakeup: user space drains this buffer on its 20 ms timer, and a wakeup is a self-IPI. */
	bpf_ringbuf_output(&execs, &tgid, sizeof(tgid), BPF_RB_NO_WAKEUP);
	return 0;
}
