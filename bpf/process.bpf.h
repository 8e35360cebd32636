/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The traced process, for grpc.bpf.c (included once, after its maps): the binary a probe hit
 * belongs to (attach cookie, else the task's executable), the connection's socket 4-tuple, and
 * the exec notices discovery uses.
 */
#ifndef GOSPAN_PROCESS_BPF_H
#define GOSPAN_PROCESS_BPF_H

/* The current task's executable: 0 on success. */
static __always_inline int current_exe(struct exe_key *key)
{
	if (HAVE_BTF_TASK) {
		/* Kernel >= 5.11: the task as a BTF pointer, read with direct loads (each load a
		 * plain instruction guarded by the exception table) instead of one
		 * bpf_probe_read_kernel call per pointer hop. */
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
 * sock, all hot (the goroutine has just used the socket); it is read on every start rather than
 * cached per connection, so the 4-tuple is always the socket's current one (what a cache would
 * save: docs/benchmarks.md).
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

#endif /* GOSPAN_PROCESS_BPF_H */
