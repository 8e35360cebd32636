/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * In-process propagation, for grpc.bpf.c (included after headers.bpf.h): which server stream a
 * new client stream of the same process was made for (docs/propagation.md).
 *
 * - grpc (*Server).handleStream, entry: runs in the goroutine that runs the stream's handler
 *   (every grpc-go v1.30-v1.85, stream workers included). It records the server stream
 *   (conn_id, stream id) under that goroutine's id (g_streams) and under the stream's own address
 *   (ctx_streams): grpc-go wraps every handler's ctx in a context.valueCtx whose val is that
 *   stream (NewContextWithServerTransportStream, server.go), so every ctx the handler is given, or
 *   derives, has that node among its ancestors. No record is sent and nothing is deleted later (no
 *   probe at the handler's end): both maps are LRU, and user space rejects a parent whose server
 *   span ended before the client stream started.
 * - (*http2Client).NewStream, where it returns (plain uprobes; a uretprobe would corrupt Go's moving
 *   stacks): on the relative jump before each RET that returns a stream, which the kernel emulates,
 *   reading the stream from its stack slot (struct binary.new_stream_result; found by
 *   io.gospan.offsets.code.ResultPlaces), else at every RET instruction, reading RAX (a RET is
 *   single-stepped: a second trap, ~10x the cost of a hit on this VM: docs/benchmarks.md). A nil
 *   stream is an error return.
 *   The parent is the first of (1) the calling goroutine's entry in g_streams, (2) the first node
 *   of the client stream's ctx chain whose val is a server stream in ctx_streams, walked up at most
 *   GOSPAN_MAX_CTX_DEPTH levels, (3) Go >= 1.21: the entry of the goroutine that started the
 *   calling one (g.parentGoid). Found: a struct stream_parent_event is sent; else COUNTER_NO_PARENT.
 *
 * Why the stream's address and not the address of its ctx node: a node's address is reused for
 * another node once the stream is gone, and a client call's own nodes (allocated as the server
 * stream's were, two 48-byte valueCtx in a row) were seen to land at a finished stream's node and
 * parent addresses, so that a fingerprint of the node's parent matched too and the call was linked
 * to a server call that had ended seconds before (RelayPropagationIT, grpc-go v1.40 / Go 1.17,
 * stripped: 1 to 5 of 400 client streams). A match on the stream's address is checked: the node
 * holding it must have the stream's current ctx as its parent, as grpc-go's does (the handler's ctx
 * is NewContextWithServerTransportStream(stream.Context(), stream) in every release; v1.60+ set the
 * stream's ctx to the derived one first). A dead stream's address met in other memory, or reused by
 * another object, fails that check. The walk stops at a parent whose itab is not in the binary's
 * read-only data (a root: context.Background() has no parent; known for position-dependent
 * binaries only).
 *
 * Both read Go's ABIInternal registers (R14 holds the current g in Go code, RAX the first
 * result at a RET: Go src/cmd/compile/abi-internal.md), so they are attached to register-ABI
 * binaries only (GOSPAN_REGISTER_ABI).
 */
#ifndef GOSPAN_PROPAGATION_BPF_H
#define GOSPAN_PROPAGATION_BPF_H

/* Server streams remembered per map: more than handlers running at once in the traced processes
 * (the oldest entries go first; a parent evicted too early leaves a client span a root). */
#define GOSPAN_PROPAGATION_ENTRIES 16384

/* Words of a context node read per level of the ctx walk: its parent Context and a valueCtx's key
 * and val (context.valueCtx is 48 bytes in every Go release: docs/propagation.md §1). */
#define CTX_WORDS 8

/* (tgid, address of the server stream handleStream got) -> the server stream */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, GOSPAN_PROPAGATION_ENTRIES);
	__type(key, struct stream_key);
	__type(value, struct server_stream_ref);
} ctx_streams SEC(".maps");

/* (tgid, goid of the goroutine that ran handleStream) -> the server stream it serves (a stream
 * worker's entry is overwritten by its next stream's) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, GOSPAN_PROPAGATION_ENTRIES);
	__type(key, struct stream_key);
	__type(value, struct server_stream_ref);
} g_streams SEC(".maps");

/* Processes (tgid) that have run a handler: NewStream in any other process (a plain client, a
 * command-line tool) returns at once, without reading the stream or walking its ctx. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u8);
} serving SEC(".maps");

/* The transport.Stream inside a *Stream (grpc-go <= v1.68: itself), *ServerStream or *ClientStream
 * (v1.69+: the embedded Stream, through a pointer up to v1.76, by value since v1.77); 0 when it
 * cannot be read. */
static __always_inline __u64 inner_stream(__u64 stream, __s32 embed, __s32 embed_ptr)
{
	__u64 s = 0;

	if (embed < 0)
		return stream;
	if (embed_ptr == 0)
		return stream + embed;
	if (embed_ptr != 1 || read_u64(&s, stream + embed))
		return 0;
	return s;
}

/* Stream.id and the data word of Stream.ctx, in one read when they are close: 0 on success. */
static __always_inline int stream_id_ctx(const struct go_offsets *off, __u64 s, __u32 *id, __u64 *ctx_data)
{
	if (off->stream_id < 0 || off->stream_ctx < 0)
		return -1;
	return read_members(s, off->stream_id, id, sizeof(*id), off->stream_ctx + offsetof(struct go_iface, data),
			    ctx_data, sizeof(*ctx_data));
}

/* The current goroutine's id: g is in R14 (ABIInternal). 0 when unknown. */
static __always_inline __u64 current_goid(struct pt_regs *ctx, const struct go_offsets *off)
{
	__u64 goid = 0;

	if (off->g_goid < 0 || read_u64(&goid, GO_CTX_REG(ctx, r14) + off->g_goid))
		return 0;
	return goid;
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_SERVER_HANDLE_STREAM, "google.golang.org/grpc.(*Server).handleStream")
GOSPAN_REGISTER_ABI
GOSPAN_IN_PROCESS
int uprobe_server_handle_stream(struct pt_regs *ctx)
{
	const enum gospan_probe probe = PROBE_SERVER_HANDLE_STREAM;
	const struct go_offsets *off;
	struct exe_key exe = {};
	__u64 t = 0, stream = 0, s, conn = 0, goid;
	__u32 id = 0;

	if (entry_hit_skipped(ctx, probe))
		return 0;
	off = current_offsets(ctx, &exe, NULL);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	if (go_read_arg(ctx, &off->handle_stream_t, &t) || go_read_arg(ctx, &off->handle_stream_stream, &stream) ||
	    !stream) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	s = inner_stream(stream, off->server_stream_stream, off->server_stream_stream_ptr);
	if (!s || off->stream_id < 0 || bpf_probe_read_user(&id, sizeof(id), (void *)(s + off->stream_id))) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	if (id == 0) {
		/* the ServeHTTP path's serverHandlerTransport (handler_server.go: "id: 0, // irrelevant"):
		 * its streams are not identified by grpc-go's ids */
		count(probe, COUNTER_SKIPPED);
		return 0;
	}
	/* t's data word is the *http2Server (the only other ServerTransport has id-0 streams) */
	if (!t || off->http2_server_conn < 0 ||
	    read_u64(&conn, t + off->http2_server_conn + offsetof(struct go_iface, data)) || !conn) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	struct server_stream_ref ref = {.conn_id = conn, .stream_id = id, .stream = s};
	struct stream_key key = {.tgid = bpf_get_current_pid_tgid() >> 32};
	__u32 tgid = key.tgid;
	__u8 one = 1;

	if (!bpf_map_lookup_elem(&serving, &tgid))
		bpf_map_update_elem(&serving, &tgid, &one, BPF_ANY);

	/* the val of the valueCtx grpc-go wraps the handler's ctx in (the stream argument itself) */
	key.id = stream;
	bpf_map_update_elem(&ctx_streams, &key, &ref, BPF_ANY);
	goid = current_goid(ctx, off);
	if (goid) {
		ref.stream = 0;
		key.id = goid;
		bpf_map_update_elem(&g_streams, &key, &ref, BPF_ANY);
	}
	return 0;
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_HTTP2_CLIENT_NEW_STREAM, "google.golang.org/grpc/internal/transport.(*http2Client).NewStream")
GOSPAN_EVENT(HTTP2_CLIENT_NEW_STREAM)
GOSPAN_STARTS(client)
GOSPAN_SPANS(streams, client)
GOSPAN_AT_RETURNS
GOSPAN_REGISTER_ABI
GOSPAN_PARENTS
GOSPAN_IN_PROCESS
int uprobe_http2_client_new_stream(struct pt_regs *ctx)
{
	const enum gospan_probe probe = PROBE_HTTP2_CLIENT_NEW_STREAM;
	const struct go_offsets *off;
	struct exe_key exe = {};
	struct server_stream_ref *ref = NULL;
	struct binary *bin = NULL;
	__u64 cs, s, t = 0, conn = 0, node = 0, goid, parent = 0;
	__u32 id = 0;
	__u8 via = VIA_GOROUTINE, depth = 0;

	count(probe, COUNTER_HITS);
	__u32 caller = bpf_get_current_pid_tgid() >> 32;
	int serving_now = bpf_map_lookup_elem(&serving, &caller) != NULL;

	off = current_offsets(ctx, &exe, &bin);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	/* the first result: *Stream (<= v1.68) or *ClientStream; in its stack slot before the RETs */
	if (bin && bin->new_stream_result) {
		if (read_u64(&cs, GO_CTX_REG(ctx, sp) + bin->new_stream_result - 1)) {
			count(probe, COUNTER_READ_FAILED);
			return 0;
		}
	} else {
		cs = GO_CTX_REG(ctx, ax);
	}
	if (!cs) {
		count(probe, COUNTER_SKIPPED); /* an error return */
		return 0;
	}
	int starts = bin && (bin->flags & BINARY_STREAMS_SET);

	if (!starts && !serving_now) {
		count(probe, COUNTER_NO_PARENT); /* the process has never served a call */
		return 0;
	}
	s = inner_stream(cs, off->client_stream_stream, off->client_stream_stream_ptr);
	if (!s || stream_id_ctx(off, s, &id, &node)) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	/* the stream's *http2Client: ClientStream.ct (v1.69+), else Stream.ct, a pointer (<= v1.65)
	 * or the ClientTransport interface (its data word) */
	if (off->client_stream_ct >= 0) {
		if (read_u64(&t, cs + off->client_stream_ct))
			t = 0;
	} else if (off->stream_ct >= 0 && off->stream_ct_ptr >= 0) {
		if (read_u64(&t, s + off->stream_ct + (off->stream_ct_ptr ? 0 : offsetof(struct go_iface, data))))
			t = 0;
	}
	if (!t || off->http2_client_conn < 0) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	if (starts) {
		/* the streams set: the client stream starts here, in the caller's goroutine, with its
		 * connection's socket and its method (grpc-go's callHdr.Method, as :path) */
		struct header_event *e = new_event(probe, SIDE_CLIENT, &exe);
		struct go_string method = {};

		if (!e)
			return 0;
		e->stream_id = id;
		read_conn(probe, bin, t + off->http2_client_conn, NULL, 1, e);
		conn = e->conn_id;
		if (off->stream_method < 0 || bpf_probe_read_user(&method, sizeof(method), (void *)(s + off->stream_method))) {
			e->flags |= EVENT_READ_FAILED;
			count(probe, COUNTER_READ_FAILED);
		} else {
			string_field(probe, e, path_id, method.ptr, method.len);
		}
		send(probe, e);
		if (!serving_now) {
			count(probe, COUNTER_NO_PARENT); /* the process has never served a call */
			return 0;
		}
	} else if (read_u64(&conn, t + off->http2_client_conn + offsetof(struct go_iface, data))) {
		conn = 0;
	}
	if (!conn) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct stream_key key = {.tgid = pid_tgid >> 32};

	/* (1) the goroutine runs a handler */
	goid = current_goid(ctx, off);
	if (goid) {
		key.id = goid;
		ref = bpf_map_lookup_elem(&g_streams, &key);
	}
	/* (2) the ctx chain: every std context node keeps its parent Context (itab, data) at offset 0.
	 * Per level one read of the node's first words: the parent and, were the node a valueCtx, its
	 * val's data word, looked up in ctx_streams. A hit is taken only if the node's parent is the
	 * server stream's ctx now (one more read): a node of another type holds something else there
	 * (a cancelCtx's children map, a word of the next object after a small node), and a dead
	 * stream's address may be anywhere in memory. The walk goes on to the parent only if its itab
	 * lies in the binary's read-only data (where the linker puts every itab it knows): a root
	 * (context.Background(): zero-size, or a bare int before Go 1.21) has no parent, and the words
	 * after it are no itab. */
	if (!ref) {
		__u64 w[CTX_WORDS];
		__s64 val = off->value_ctx_val;
		__u32 vi = (val + offsetof(struct go_iface, data)) / 8;
		__u64 ro_start = bin ? bin->rodata_start : 0, ro_end = bin ? bin->rodata_end : 0;
		__u64 now = 0;

		via = VIA_CONTEXT;
		if (val < 0 || (val & 7) || vi >= CTX_WORDS || off->stream_ctx < 0)
			node = 0;
		for (int i = 0; i < GOSPAN_MAX_CTX_DEPTH; i++) {
			if (!node)
				break;
			if (bpf_probe_read_user(w, sizeof(w), (void *)node)) {
				/* a small node at the end of a mapping: only its parent can be read */
				if (bpf_probe_read_user(w, 2 * sizeof(__u64), (void *)node))
					break;
				w[vi & (CTX_WORDS - 1)] = 0;
			}
			key.id = w[vi & (CTX_WORDS - 1)];
			ref = key.id ? bpf_map_lookup_elem(&ctx_streams, &key) : NULL;
			if (ref && ref->stream && w[1] &&
			    !read_u64(&now, ref->stream + off->stream_ctx + offsetof(struct go_iface, data)) && now == w[1]) {
				depth = i;
				break;
			}
			ref = NULL;
			if (!w[0] || (ro_end && (w[0] < ro_start || w[0] >= ro_end)))
				break;
			node = w[1]; /* the parent's data word */
		}
	}
	/* (3) Go >= 1.21: the goroutine that started this one runs a handler (g_streams is filled only
	 * when goid is known) */
	if (!ref && off->g_goid >= 0 && off->g_parent_goid >= 0 && !read_u64(&parent, GO_CTX_REG(ctx, r14) + off->g_parent_goid) &&
	    parent) {
		via = VIA_PARENT_GOROUTINE;
		key.id = parent;
		ref = bpf_map_lookup_elem(&g_streams, &key);
	}
	if (!ref) {
		count(probe, COUNTER_NO_PARENT);
		return 0;
	}
	struct stream_parent_event e = {
		.ts_ns = bpf_ktime_get_ns(),
		.pid = pid_tgid >> 32,
		.tid = (__u32)pid_tgid,
		.conn_id = conn,
		.stream_id = id,
		.probe = probe,
		.side = SIDE_CLIENT,
		.via = via,
		.depth = depth,
		.parent_conn_id = ref->conn_id,
		.parent_stream_id = ref->stream_id,
		.exe = exe,
	};

	submit(probe, &e, sizeof(e), &e.pid);
	return 0;
}

#endif /* GOSPAN_PROPAGATION_BPF_H */
