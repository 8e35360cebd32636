/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The streams set's ends, for grpc.bpf.c (included after propagation.bpf.h): where grpc-go closes a
 * stream, with its final status (docs/propagation.md §2, §3; docs/architecture.md "Probe sets").
 *
 * - (*http2Client).closeStream, past its opening guard `if s.swapState(streamDone) == streamDone {
 *   return }`: the end of a client stream, whatever ends it (trailers, trailers-only, an HTTP
 *   response that is no gRPC one, RST_STREAM, GOAWAY, the connection's close, the caller's
 *   cancellation or deadline), at the moment it ends, with the status grpc-go gives the call
 *   (`st`). grpc-go calls it twice per stream (the reader at the trailers, then the caller's
 *   close): the probe sits after the guard, so only the first call hits it.
 * - (*http2Server).writeStatus (WriteStatus before grpc-go v1.69), entry: the handler goroutine's
 *   final status, once per handled stream (also when the stream was reset: it then returns at its
 *   own guard, after the probe). It also forgets the stream in the propagation maps: its handler
 *   makes no more calls.
 *
 * Both send a header_event with END_STREAM whose fields are `grpc-status` (the code in decimal, as
 * on the wire) and `grpc-message` (the status message as grpc-go holds it: not percent-encoded).
 */
#ifndef GOSPAN_STREAMS_BPF_H
#define GOSPAN_STREAMS_BPF_H

/*
 * Appends grpc-status and grpc-message from a *status.Status (grpc internal/status.Status{s
 * *spb.Status}): nil, or a nil s, is OK with no message (status.(*Status).Code).
 */
static __always_inline void status_fields(enum gospan_probe probe, const struct go_offsets *off, __u64 st,
					  struct header_event *e)
{
	__u64 spb = 0;
	__s32 code = 0;
	struct go_string msg = {};

	if (st && (off->status_s < 0 || read_u64(&spb, st + off->status_s))) {
		e->flags |= EVENT_READ_FAILED;
		count(probe, COUNTER_READ_FAILED);
		return;
	}
	/* Code and Message are neighbours (spb.Status: protobuf message fields in order) */
	if (spb && read_members(spb, off->spb_status_code, &code, sizeof(code), off->spb_status_message, &msg,
				sizeof(msg))) {
		e->flags |= EVENT_READ_FAILED;
		count(probe, COUNTER_READ_FAILED);
		return;
	}
	decimal_field(e, grpc_status_id, code);
	if (msg.len > 0)
		string_field(probe, e, grpc_message_id, msg.ptr, msg.len);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_HTTP2_CLIENT_CLOSE_STREAM, "google.golang.org/grpc/internal/transport.(*http2Client).closeStream")
GOSPAN_EVENT(HTTP2_CLIENT_CLOSE_STREAM)
GOSPAN_SPANS(streams, client)
GOSPAN_RAW_MESSAGE
GOSPAN_PAST_GUARD
GOSPAN_REGISTER_ABI
GOSPAN_SET(streams)
int uprobe_http2_client_close_stream(struct pt_regs *ctx)
{
	const enum gospan_probe probe = PROBE_HTTP2_CLIENT_CLOSE_STREAM;
	const struct go_offsets *off;
	struct binary *bin = NULL;
	struct exe_key exe = {};
	struct header_event *e;
	__u64 t = 0, cs = 0, st = 0, s;
	__u32 id = 0;

	count(probe, COUNTER_HITS);
	off = current_offsets(ctx, &exe, &bin);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	/* past the guard the arguments are still where they were at entry (checked when the guard was
	 * found: no instruction before it writes their registers) */
	if (go_read_arg(ctx, &off->close_stream_t, &t) || go_read_arg(ctx, &off->close_stream_s, &cs) ||
	    go_read_arg(ctx, &off->close_stream_st, &st) || !cs) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	s = inner_stream(cs, off->client_stream_stream, off->client_stream_stream_ptr);
	if (!s || off->stream_id < 0 || bpf_probe_read_user(&id, sizeof(id), (void *)(s + off->stream_id))) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	e = new_event(probe, SIDE_CLIENT, &exe);
	if (!e)
		return 0;
	e->stream_id = id;
	e->flags |= EVENT_END_STREAM;
	if (t && off->http2_client_conn >= 0)
		read_conn(probe, bin, t + off->http2_client_conn, NULL, 0, e);
	else
		e->flags |= EVENT_CONN_UNKNOWN;
	status_fields(probe, off, st, e);
	send(probe, e);
	return 0;
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_HTTP2_SERVER_WRITE_STATUS,
	     "google.golang.org/grpc/internal/transport.(*http2Server).writeStatus|"
	     "google.golang.org/grpc/internal/transport.(*http2Server).WriteStatus")
GOSPAN_EVENT(HTTP2_SERVER_WRITE_STATUS)
GOSPAN_SPANS(streams, server)
GOSPAN_RAW_MESSAGE
GOSPAN_REGISTER_ABI
GOSPAN_SET(streams)
int uprobe_http2_server_write_status(struct pt_regs *ctx)
{
	const enum gospan_probe probe = PROBE_HTTP2_SERVER_WRITE_STATUS;
	const struct go_offsets *off;
	struct binary *bin = NULL;
	struct exe_key exe = {};
	struct header_event *e;
	__u64 t = 0, ss = 0, st = 0, s, goid;
	__u32 id = 0;

	if (entry_hit_skipped(ctx, probe))
		return 0;
	off = current_offsets(ctx, &exe, &bin);
	if (!off) {
		count(probe, COUNTER_NO_OFFSETS);
		return 0;
	}
	if (go_read_arg(ctx, &off->write_status_t, &t) || go_read_arg(ctx, &off->write_status_s, &ss) ||
	    go_read_arg(ctx, &off->write_status_st, &st) || !ss) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	s = inner_stream(ss, off->server_stream_stream, off->server_stream_stream_ptr);
	if (!s || off->stream_id < 0 || bpf_probe_read_user(&id, sizeof(id), (void *)(s + off->stream_id))) {
		count(probe, COUNTER_READ_FAILED);
		return 0;
	}
	/* the handler is done: its stream and goroutine name no server call any more (handleStream
	 * stored them; the goroutine runs writeStatus: docs/propagation.md §3) */
	struct stream_key key = {.tgid = bpf_get_current_pid_tgid() >> 32, .id = ss};

	bpf_map_delete_elem(&ctx_streams, &key);
	goid = current_goid(ctx, off);
	if (goid) {
		key.id = goid;
		bpf_map_delete_elem(&g_streams, &key);
	}
	e = new_event(probe, SIDE_SERVER, &exe);
	if (!e)
		return 0;
	e->stream_id = id;
	e->flags |= EVENT_END_STREAM;
	if (t && off->http2_server_conn >= 0)
		read_conn(probe, bin, t + off->http2_server_conn, NULL, 0, e);
	else
		e->flags |= EVENT_CONN_UNKNOWN;
	status_fields(probe, off, st, e);
	send(probe, e);
	return 0;
}

#endif /* GOSPAN_STREAMS_BPF_H */
