/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The traced process, for grpc.bpf.c (included once, after its maps): the binary a probe hit
 * belongs to (attach cookie, else the task's executable) and its PIE load bias, the connection
 * followed through the binary's connection types to its socket (a TCP 4-tuple, or a unix domain
 * socket's inodes and path), and the exec notices discovery uses.
 */
#ifndef GOSPAN_PROCESS_BPF_H
#define GOSPAN_PROCESS_BPF_H

/* gospan's PID namespace: its inode number (the number in `readlink /proc/self/ns/pid`), set by
 * user space before load; 0 when gospan runs in the initial PID namespace, whose process ids are
 * the ones bpf_get_current_pid_tgid() gives. */
const volatile __u32 pidns_inum = 0;

/* How many PID namespaces below gospan's a traced process may be (a pod's own is 0 below it). */
#define PIDNS_MAX_DEPTH 4

/*
 * The current process's id as gospan's /proc shows it: the tgid of bpf_get_current_pid_tgid()
 * when gospan runs in the initial PID namespace, else the number the process has in gospan's
 * namespace (its struct pid's numbers[] entry whose namespace is gospan's; a sidecar sharing a
 * pod's PID namespace sees the pod's numbers, not the node's). 0 when the process is in neither
 * gospan's namespace nor one below it: it is invisible to gospan (another pod's process running
 * a binary of the same inode, as an image layer shared on a node is), and nothing of it is sent.
 */
static __always_inline __u32 visible_tgid(__u32 tgid)
{
	if (!pidns_inum)
		return tgid;
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct pid *pid = BPF_CORE_READ(task, group_leader, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	struct upid up;

	for (int i = 0; i < PIDNS_MAX_DEPTH; i++) {
		if (i > level)
			break;
		if (bpf_core_read(&up, sizeof(up), &pid->numbers[level - i]))
			return 0;
		if (BPF_CORE_READ(up.ns, ns.inum) == pidns_inum)
			return up.nr;
	}
	return 0;
}

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

		index = (__u32)(cookie & COOKIE_SLOT_MASK) - 1; /* cookie 0 (none): index 0xffffffff, no such slot */
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

/*
 * Whether this hit is on a function's stack-check `jbe` (COOKIE_AT_STACK_CHECK) that will jump
 * (go_stack_check_jumps): the function runs again from its entry once the stack has grown, hitting the
 * probe again; that second hit is the call's. Without attach cookies user space never places a probe
 * there (Libbpf.attachCookies).
 */
static __always_inline int stack_check_taken(struct pt_regs *ctx)
{
	if (!HAVE_ATTACH_COOKIE)
		return 0;
	return (bpf_get_attach_cookie(ctx) & COOKIE_AT_STACK_CHECK) && go_stack_check_jumps(ctx);
}

/* An entry probe's first step: counts the hit; true when it is to be skipped, a hit on a stack-check `jbe`
 * about to grow the stack (counted `skipped`: the call's own hit comes after the stack grows). */
static __always_inline int entry_hit_skipped(struct pt_regs *ctx, enum gospan_probe probe)
{
	count(probe, COUNTER_HITS);
	if (!stack_check_taken(ctx))
		return 0;
	count(probe, COUNTER_SKIPPED);
	return 1;
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

#define AF_UNIX 1
#define UNIX_PATH_MAX 108
/* load_bias(): the bias could not be read */
#define NO_LOAD_BIAS (~0ULL)

/*
 * The load bias of the current process's executable, `bin`: 0 for a position-dependent binary; for a
 * PIE, mm->start_code (where the kernel's ELF loader put the executable PT_LOAD: its p_vaddr plus the
 * bias) minus its link-time p_vaddr; NO_LOAD_BIAS when it cannot be read. A global function: its
 * callers see one unknown result (a constant 0 on one path and a read value on another made the
 * verifier walk the header loop once for each, four times the work).
 */
__noinline __u64 load_bias(const struct binary *bin)
{
	__u64 start_code = 0;

	if (!bin)
		return NO_LOAD_BIAS;
	if (!bin->pie)
		return 0;
	if (HAVE_BTF_TASK) {
		struct mm_struct *mm = bpf_get_current_task_btf()->mm;

		if (mm)
			start_code = mm->start_code;
	} else {
		start_code = BPF_CORE_READ((struct task_struct *)bpf_get_current_task(), mm, start_code);
	}
	return start_code ? start_code - bin->text_start : NO_LOAD_BIAS;
}

/*
 * The index in bin->conn_types of the entry for itab `tab` (a link-time address), or -1. A global
 * function: the verifier checks it once, on its own, and its callers see one unknown result, not
 * one state per entry it may return (inlined, the walk in read_conn tripled the object's
 * verification time).
 */
__noinline int conn_type_index(const struct binary *bin, __u64 tab)
{
	__u32 n;

	if (!bin || !tab)
		return -1;
	n = bin->conn_type_count;
	for (int i = 0; i < GOSPAN_CONN_TYPES; i++) {
		if (i >= n)
			break;
		if (bin->conn_types[i].itab == tab)
			return i;
	}
	return -1;
}

/*
 * The fd of the connection whose interface words are {tab (link-time), data}: the walk through
 * bin->conn_types, each interface's itab compared less `bias`. The fd (>= 0), or minus an enum
 * conn_status. A global function, verified once on its own: inlined, its paths multiplied the
 * verifier's work on everything after it.
 */
__noinline __s64 conn_fd(const struct binary *bin, __u64 tab, __u64 data, __u64 bias)
{
	struct go_iface conn = {};
	__s64 sysfd = -1;
	int idx;

	if (!bin)
		return -CONN_NO_TYPE_INFORMATION;
	idx = conn_type_index(bin, tab);
	for (int i = 0; i < GOSPAN_MAX_CONN_WRAPS; i++) {
		const struct conn_type *ct;
		__u64 at;

		if (idx < 0)
			return -CONN_UNKNOWN_TYPE;
		ct = &bin->conn_types[idx & (GOSPAN_CONN_TYPES - 1)];
		at = data + ct->offset;
		if (ct->kind == CONN_SOCKET) {
			__u64 netfd = 0;

			if (bin->offsets.net_fd_sysfd < 0 || read_u64(&netfd, at) || !netfd ||
			    bpf_probe_read_user(&sysfd, sizeof(sysfd), (void *)(netfd + bin->offsets.net_fd_sysfd)))
				return -CONN_READ_FAILED;
			return sysfd < 0 || sysfd > 0x7fffffff ? -CONN_NOT_A_SOCKET : sysfd;
		}
		if (ct->kind == CONN_INTERFACE) {
			if (bpf_probe_read_user(&conn, sizeof(conn), (void *)at) || !conn.data)
				return -CONN_READ_FAILED;
			data = conn.data;
			idx = conn_type_index(bin, conn.tab - bias);
			continue;
		}
		if (ct->kind == CONN_POINTER) {
			if (read_u64(&data, at) || !data)
				return -CONN_READ_FAILED;
			idx = ct->next;
			continue;
		}
		return -CONN_UNKNOWN_TYPE;
	}
	return -CONN_TOO_MANY_WRAPPERS;
}

/*
 * A unix domain socket: the inode numbers of this end (`file`'s) and of its peer in local_addr and
 * remote_addr, and the path of this end, or of the peer when this one is unnamed (a client's), as a
 * struct socket_path in the event's last slot (send() moves it behind the fields). Reads through
 * BPF_CORE_READ: struct unix_sock is af_unix's (net/unix/af_unix.c, include/net/af_unix.h), read only
 * on a unix stream's start. 0 on success.
 */
static __always_inline int read_unix(struct header_event *e, struct file *file, struct sock *sk)
{
	struct unix_sock *u = (struct unix_sock *)sk;
	struct unix_address *addr;
	struct sock *peer;
	struct socket_path *p = (struct socket_path *)&e->fields[GOSPAN_MAX_FIELDS];
	__u64 local = 0, remote = 0;
	int len = 0;

	if (!bpf_core_type_exists(struct unix_sock))
		return -1;
	local = BPF_CORE_READ(file, f_inode, i_ino);
	peer = BPF_CORE_READ(u, peer);
	if (peer)
		remote = BPF_CORE_READ(peer, sk_socket, file, f_inode, i_ino);
	if (!local)
		return -1;
	__builtin_memcpy(e->local_addr, &local, sizeof(local));
	__builtin_memcpy(e->remote_addr, &remote, sizeof(remote));
	p->peer = 0;
	addr = BPF_CORE_READ(u, addr);
	if (!addr && peer) {
		p->peer = 1;
		addr = BPF_CORE_READ((struct unix_sock *)peer, addr);
	}
	if (addr) {
		/* len counts sun_family (2 bytes) and the path */
		len = BPF_CORE_READ(addr, len) - 2;
		if (len > UNIX_PATH_MAX)
			len = UNIX_PATH_MAX;
		if (len > 0) {
			__u32 n = len;

			VERIFIER_CLAMP(n, 108); /* UNIX_PATH_MAX */
			if (n == 0 || bpf_probe_read_kernel(p->path, n, addr->name[0].sun_path))
				n = 0;
			p->len = n;
			if (n)
				e->flags |= EVENT_SOCKET_PATH;
		}
	}
	return 0;
}

/* The socket 4-tuple of e->fd, through BTF pointers (kernel >= 6.2). */
static __always_inline void read_socket_btf(struct header_event *e)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct file **fds = task->files->fdt->fd;
	struct file *file = NULL;
	struct socket *sock;
	struct sock *sk;
	__u16 family;

	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[e->fd]) || !file) {
		e->conn_status = CONN_NOT_A_SOCKET;
		return;
	}
	file = bpf_rdonly_cast(file, bpf_core_type_id_kernel(struct file));
	sock = bpf_rdonly_cast(file->private_data, bpf_core_type_id_kernel(struct socket));
	if (!sock || !(sk = sock->sk)) {
		e->conn_status = CONN_NOT_A_SOCKET;
		return;
	}
	family = sk->__sk_common.skc_family;
	if (family == AF_INET) {
		__u32 local = sk->__sk_common.skc_rcv_saddr, remote = sk->__sk_common.skc_daddr;

		__builtin_memcpy(e->local_addr, &local, sizeof(local));
		__builtin_memcpy(e->remote_addr, &remote, sizeof(remote));
	} else if (family == AF_INET6) {
		struct in6_addr local = sk->__sk_common.skc_v6_rcv_saddr, remote = sk->__sk_common.skc_v6_daddr;

		__builtin_memcpy(e->local_addr, &local, sizeof(local));
		__builtin_memcpy(e->remote_addr, &remote, sizeof(remote));
	} else if (family == AF_UNIX) {
		if (read_unix(e, file, sk)) {
			e->conn_status = CONN_READ_FAILED;
			return;
		}
	} else {
		e->conn_status = CONN_OTHER_ADDRESS_FAMILY;
		return;
	}
	e->family = family;
	if (family != AF_UNIX) {
		e->local_port = sk->__sk_common.skc_num;
		e->remote_port = bpf_ntohs(sk->__sk_common.skc_dport);
	}
	e->flags &= ~EVENT_CONN_UNKNOWN;
}

/*
 * Fills conn_id, fd and the socket addresses of `e` from a net.Conn interface stored at
 * `iface_addr`, or already read (`known`, else NULL), in a process running `bin`. conn_id is the
 * outermost data pointer (the same object on the write and read paths of one connection); the fd is
 * found by following the binary's connection types (struct binary.conn_types: grpc's syscallConn,
 * crypto/tls.Conn, cmux's MuxConn, h2c's bufConn, any wrapper) down to the type holding the
 * *net.netFD (*net.TCPConn, *net.UnixConn), each interface's itab compared at its link-time address
 * (minus the load bias of a PIE).
 *
 * Only a stream's start needs the socket (`with_socket`): user space keys a stream by (pid,
 * conn_id, stream id) and keeps the start's 4-tuple, so the other events of the stream carry
 * conn_id alone (family 0). The socket is a few user reads and the kernel's file, socket and
 * sock, all hot (the goroutine has just used the socket); it is read on every start rather than
 * cached per connection, so the 4-tuple is always the socket's current one (what a cache would
 * save: docs/benchmarks.md). A start whose socket is not found says why in e->conn_status (and
 * counts COUNTER_UNKNOWN_ITAB).
 */
static __always_inline void read_conn(enum gospan_probe probe, const struct binary *bin, __u64 iface_addr,
				      const struct go_iface *known, int with_socket, struct header_event *e)
{
	struct go_iface conn = {};
	__s64 sysfd = -1;
	__u64 bias;

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
	e->conn_status = CONN_READ_FAILED;
	if (known)
		conn = *known;
	else if (bpf_probe_read_user(&conn, sizeof(conn), (void *)iface_addr))
		goto unknown;
	if (!conn.data)
		goto unknown;
	e->conn_id = conn.data;
	if (!bin->conn_type_count) {
		e->conn_status = CONN_NO_TYPE_INFORMATION;
		goto unknown;
	}
	bias = load_bias(bin);
	if (bias == NO_LOAD_BIAS) {
		e->conn_status = CONN_NO_LOAD_BIAS;
		goto unknown;
	}
	sysfd = conn_fd(bin, conn.tab - bias, conn.data, bias);
	e->conn_status = sysfd < 0 ? (__u8)-sysfd : CONN_OK;
	if (e->conn_status != CONN_OK)
		goto unknown;
	e->fd = (__s32)sysfd;

	/* fd -> struct file -> struct socket -> struct sock, in the kernel: the 4-tuple as it
	 * is now, with no race against a process that exits or reuses the fd number. */
	if (HAVE_BTF_TASK && HAVE_RDONLY_CAST) {
		read_socket_btf(e);
		if (e->conn_status != CONN_OK)
			goto unknown;
		return;
	}
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct file **fds = BPF_CORE_READ(task, files, fdt, fd);
	struct file *file = NULL;
	struct socket *sock;
	struct sock *sk;
	__u16 family;

	e->conn_status = CONN_NOT_A_SOCKET;
	if (bpf_probe_read_kernel(&file, sizeof(file), &fds[e->fd]) || !file)
		goto unknown;
	sock = BPF_CORE_READ(file, private_data);
	if (!sock)
		goto unknown;
	sk = BPF_CORE_READ(sock, sk);
	if (!sk)
		goto unknown;
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
	} else if (family == AF_UNIX) {
		if (read_unix(e, file, sk)) {
			e->conn_status = CONN_READ_FAILED;
			goto unknown;
		}
	} else {
		e->conn_status = CONN_OTHER_ADDRESS_FAMILY;
		goto unknown;
	}
	e->family = family;
	if (family != AF_UNIX) {
		e->local_port = BPF_CORE_READ(sk, __sk_common.skc_num);
		e->remote_port = bpf_ntohs(BPF_CORE_READ(sk, __sk_common.skc_dport));
	}
	e->conn_status = CONN_OK;
	e->flags &= ~EVENT_CONN_UNKNOWN;
	return;
unknown:
	count(probe, COUNTER_UNKNOWN_ITAB);
}


/* Exec notices for discovery (struct exec_notice): a process seen by a /proc scan between its fork
 * and its exec still shows its parent's executable, and exec keeps the start time, so only this
 * notice tells user space to look again; and a process that exits before user space looks (a
 * command-line client living 10 ms) leaves only this notice of what it ran. Raw tracepoint: needs
 * no tracefs (often not mounted in a sidecar container). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 18); /* bytes: ~2,900 notices of ~88 bytes (an 8-byte header, 40, a 40-byte path) */
} execs SEC(".maps");

/* Exec notices dropped because `execs` was full (user space had not drained it within its poll
 * period: ~2,900 execs in 20-200 ms). User space reads it at each discovery scan and, when it
 * rose, lists /proc at once instead of trusting that every new program announced itself. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} execs_lost SEC(".maps");

/* When a visible process last exec'd each traced binary (bpf_ktime_get_ns), by the binary's slot in
 * `binaries`: user space does not detach a lingering binary that was run after it began to linger
 * (its linger starts again from that run), whether or not it has read that run's notice yet. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, GOSPAN_BINARY_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} binary_execs SEC(".maps");

/* The longest path component read (NAME_MAX + its NUL). */
#define EXEC_NAME_MAX 256
/* Dentries and mount crossings walked from the executable up to its mount namespace's root. */
#define EXEC_PATH_DEPTH 48

/* Where a notice is built: its path is read component by component at growing offsets, each read
 * given up to EXEC_NAME_MAX bytes, so the buffer has that much room behind path[]. */
struct exec_notice_scratch {
	struct exec_notice n;
	char slack[EXEC_NAME_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct exec_notice_scratch);
} exec_scratch SEC(".maps");

/*
 * n->path: the path of `file` from the root of its mount namespace, as d_path() walks it (the
 * dentry's parents up to its mount's root, then on from the mountpoint in the parent mount, up to a
 * mount that is its own parent), components from the file up, each NUL-terminated. Sets path_len,
 * or flags EXEC_PATH_TRUNCATED / EXEC_NO_PATH (path_len is then not the path's). Reads through BPF_CORE_READ: struct mount is the
 * kernel's own (fs/mount.h), in its BTF.
 */
static __always_inline void exec_path(struct exec_notice_scratch *sc, struct file *file)
{
	struct exec_notice *n = &sc->n;
	struct dentry *d = BPF_CORE_READ(file, f_path.dentry);
	struct vfsmount *vfs = BPF_CORE_READ(file, f_path.mnt);
	struct mount *m;
	int i;

	if (!d || !vfs || !bpf_core_type_exists(struct mount)) {
		n->flags |= EXEC_NO_PATH;
		return;
	}
	m = container_of(vfs, struct mount, mnt);
	n->path_len = 0;
	for (i = 0; i < EXEC_PATH_DEPTH; i++) {
		struct dentry *root = BPF_CORE_READ(m, mnt.mnt_root);
		struct dentry *parent = BPF_CORE_READ(d, d_parent);

		if (d == root || d == parent) {
			struct mount *up = BPF_CORE_READ(m, mnt_parent);

			if (up == m || !up)
				return; /* the namespace's root: path_len is the path's */
			d = BPF_CORE_READ(m, mnt_mountpoint);
			m = up;
			continue;
		}
		/* The offset is kept in the notice (map memory), not in a register: the verifier then sees
		 * an unknown offset, checked below, on every iteration alike, instead of one state per length
		 * the path may have reached (which took it past its instruction limit). */
		__u32 off = n->path_len;

		if (off >= GOSPAN_EXEC_PATH_LEN)
			break;
		__u32 room = GOSPAN_EXEC_PATH_LEN - off;

		VERIFIER_CLAMP(room, 256); /* EXEC_NAME_MAX: the slack behind path[] */
		const unsigned char *name = BPF_CORE_READ(d, d_name.name);
		long len = bpf_probe_read_kernel_str(&n->path[off], room, name);

		if (len <= 0) {
			n->flags |= EXEC_NO_PATH;
			return;
		}
		n->path_len = off + len;
		d = parent;
	}
	n->flags |= EXEC_PATH_TRUNCATED; /* longer than path[], or deeper than the walk goes */
}

SEC("raw_tp/sched_process_exec")
int raw_tp_sched_process_exec(void *ctx)
{
	__u32 tgid = visible_tgid(bpf_get_current_pid_tgid() >> 32);
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct exec_notice_scratch *sc;
	struct file *exe;
	__u32 key = 0, size;

	if (!tgid)
		return 0;
	sc = bpf_map_lookup_elem(&exec_scratch, &key);
	if (!sc)
		return 0;
	/* the new image: exec has set mm->exe_file from bprm->file (a script's interpreter, as probes see it) */
	exe = BPF_CORE_READ(task, mm, exe_file);
	sc->n.ts_ns = bpf_ktime_get_ns();
	sc->n.pid = tgid;
	sc->n.flags = 0;
	sc->n.path_len = 0;
	sc->n.exe.ino = BPF_CORE_READ(exe, f_inode, i_ino);
	sc->n.exe.dev = BPF_CORE_READ(exe, f_inode, i_sb, s_dev);
	sc->n.mnt_ns = BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);
	__u32 *slot = bpf_map_lookup_elem(&slot_by_exe, &sc->n.exe);

	if (slot) {
		__u64 *at = bpf_map_lookup_elem(&binary_execs, slot);

		if (at)
			*at = sc->n.ts_ns; /* a traced binary is in use */
	}
	if (exe)
		exec_path(sc, exe);
	else
		sc->n.flags |= EXEC_NO_PATH;
	size = sc->n.flags ? 0 : sc->n.path_len;
	if (size > GOSPAN_EXEC_PATH_LEN)
		size = GOSPAN_EXEC_PATH_LEN;
	sc->n.path_len = size;
	/* No wakeup: user space drains this buffer on its own timer (20-200 ms), and a wakeup is a
	 * self-IPI. A full buffer drops the notice: counted, so the next scan lists /proc. */
	if (bpf_ringbuf_output(&execs, &sc->n, offsetof(struct exec_notice, path) + size, BPF_RB_NO_WAKEUP) < 0) {
		__u64 *lost = bpf_map_lookup_elem(&execs_lost, &key);

		if (lost)
			__sync_fetch_and_add(lost, 1);
	}
	return 0;
}

#endif /* GOSPAN_PROCESS_BPF_H */
