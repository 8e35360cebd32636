/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The probes of the ServeHTTP path, for grpc.bpf.c: grpc-go's (*Server).ServeHTTP behind an
 * HTTP/2 server of x/net (h2c) or of net/http (its bundled copy).
 */
#ifndef GOSPAN_SERVE_HTTP_BPF_H
#define GOSPAN_SERVE_HTTP_BPF_H

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

	if (entry_hit_skipped(ctx, probe))
		return 0;
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
	struct binary *bin = NULL;
	__u64 w = 0, sc = 0;
	__u32 stream_id = 0, zero = 0;
	__u8 end_stream = 0;

	if (entry_hit_skipped(ctx, probe))
		return 0;
	off = current_offsets(ctx, &exe, &bin);
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
	read_conn(probe, bin, sc + h->server_conn_conn, NULL, 0, e);
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

	if (entry_hit_skipped(ctx, probe))
		return 0;
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

	if (entry_hit_skipped(ctx, probe))
		return 0;
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
GOSPAN_STARTS(server)
int uprobe_xnet_process_headers(struct pt_regs *ctx)
{
	return process_headers(ctx, 0);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_NETHTTP_PROCESS_HEADERS,
	     "net/http.(*http2serverConn).processHeaders")
GOSPAN_SERVER(nethttp)
GOSPAN_EVENT(HTTP2_SERVER_PROCESS_HEADERS)
GOSPAN_STARTS(server)
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

#endif /* GOSPAN_SERVE_HTTP_BPF_H */
