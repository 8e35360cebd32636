/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The probes of grpc-go's own HTTP/2 transport (google.golang.org/grpc/internal/transport), for
 * grpc.bpf.c: every grpc-go client and server. writeHeader and the client's operateHeaders make the
 * headers probe set (every HEADERS block written and read); the server's operateHeaders (a request's
 * headers) is in both sets (streams.bpf.h has the streams set's ends).
 */
#ifndef GOSPAN_TRANSPORT_BPF_H
#define GOSPAN_TRANSPORT_BPF_H

SEC("uprobe")
GOSPAN_PROBE(PROBE_LOOPY_WRITER_WRITE_HEADER,
	     "google.golang.org/grpc/internal/transport.(*loopyWriter).writeHeader")
GOSPAN_EVENT(LOOPY_WRITER_WRITE_HEADER)
GOSPAN_SET(headers)
GOSPAN_STARTS(client)
GOSPAN_SPANS(headers, client, server)
int uprobe_loopy_writer_write_header(struct pt_regs *ctx)
{
	const enum gospan_probe probe = PROBE_LOOPY_WRITER_WRITE_HEADER;
	const struct go_offsets *off;
	struct header_event *e;
	__u64 l = 0, stream_id = 0, end_stream = 0, hf = 0, hf_len = 0;
	__u8 side = SIDE_UNKNOWN;
	struct exe_key exe = {};
	struct binary *bin = NULL;

	if (entry_hit_skipped(ctx, probe))
		return 0;
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
		read_conn(probe, bin, 0, &iface, side != SIDE_SERVER, e);
	} else {
		/* grpc-go before loopyWriter.conn: l.framer.writer.conn */
		__u64 framer = 0, writer = 0;

		if (off->loopy_writer_framer >= 0 && off->framer_writer >= 0 && off->buf_writer_conn >= 0 &&
		    !read_u64(&framer, l + off->loopy_writer_framer) && framer &&
		    !read_u64(&writer, framer + off->framer_writer) && writer)
			read_conn(probe, bin, writer + off->buf_writer_conn, NULL, side != SIDE_SERVER, e);
		else
			e->flags |= EVENT_CONN_UNKNOWN;
	}
	struct frame_offs fo = grpc_frame_offs(off);

	read_fields(probe, &fo, hf, (__s64)hf_len, name_lengths(side, 1), bin, e);
	send(probe, e);
	return 0;
}


/* Shared by both operateHeaders probes. */
static __always_inline int operate_headers(struct pt_regs *ctx, enum gospan_probe probe, __u8 side)
{
	const struct go_offsets *off;
	struct exe_key exe = {};
	struct binary *bin = NULL;

	if (entry_hit_skipped(ctx, probe))
		return 0;
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
GOSPAN_SET(headers)
GOSPAN_SPANS(headers, client)
int uprobe_http2_client_operate_headers(struct pt_regs *ctx)
{
	return operate_headers(ctx, PROBE_HTTP2_CLIENT_OPERATE_HEADERS, SIDE_CLIENT);
}

SEC("uprobe")
GOSPAN_PROBE(PROBE_HTTP2_SERVER_OPERATE_HEADERS,
	     "google.golang.org/grpc/internal/transport.(*http2Server).operateHeaders")
GOSPAN_EVENT(HTTP2_SERVER_OPERATE_HEADERS)
GOSPAN_STARTS(server)
GOSPAN_SPANS(any, server)
int uprobe_http2_server_operate_headers(struct pt_regs *ctx)
{
	return operate_headers(ctx, PROBE_HTTP2_SERVER_OPERATE_HEADERS, SIDE_SERVER);
}

#endif /* GOSPAN_TRANSPORT_BPF_H */
