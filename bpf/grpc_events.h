/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The contract between grpc.bpf.c and the Java receiver: the per-binary offsets the
 * programs read, the event records they write to the `events` ring buffer, and the
 * counters they keep. This header is the single definition of each layout, constant and
 * probe. Every struct has fixed-width fields, explicit padding and a size assertion.
 *
 * The Java side is generated from the BTF of the built object (bpf/gen, run by the Maven
 * build): the layouts of the structs below, the values of the enums below, from the GO_* tags
 * on the members of struct go_offsets the Go facts user space resolves per binary, and from the
 * GOSPAN_PROBE tags on the programs the probe list (program, id, Go function, HTTP/2 server
 * copy, event kind). Constants Java needs are therefore enum values, not #defines (a #define
 * leaves no trace in BTF).
 */
#ifndef GOSPAN_GRPC_EVENTS_H
#define GOSPAN_GRPC_EVENTS_H

#include "go_abi.h"

/* What a probe is attached to (grpc-go internal/transport unless said otherwise). */
enum gospan_probe {
	PROBE_LOOPY_WRITER_WRITE_HEADER = 0,    /* (*loopyWriter).writeHeader, both sides */
	PROBE_HTTP2_CLIENT_OPERATE_HEADERS = 1, /* (*http2Client).operateHeaders */
	PROBE_HTTP2_SERVER_OPERATE_HEADERS = 2, /* (*http2Server).operateHeaders */
	/* The ServeHTTP path (grpc-go served by an HTTP/2 server), x/net's copy of http2: */
	PROBE_XNET_HPACK_WRITE_FIELD = 3,       /* http2/hpack (*Encoder).WriteField */
	PROBE_XNET_PROCESS_HEADERS = 4,         /* http2 (*serverConn).processHeaders */
	PROBE_XNET_WRITE_RES_HEADERS = 5,       /* http2 (*writeResHeaders).writeFrame */
	PROBE_XNET_WRITE_HEADER_BLOCK = 6,      /* http2 (*writeResHeaders).writeHeaderBlock */
	/* ... and the copy bundled in net/http: the same four, PROBE_NETHTTP_SHIFT further */
	PROBE_NETHTTP_HPACK_WRITE_FIELD = 7,
	PROBE_NETHTTP_PROCESS_HEADERS = 8,
	PROBE_NETHTTP_WRITE_RES_HEADERS = 9,
	PROBE_NETHTTP_WRITE_HEADER_BLOCK = 10,
	/* In-process propagation (propagation.bpf.h, docs/propagation.md): */
	PROBE_SERVER_HANDLE_STREAM = 11,        /* grpc (*Server).handleStream: a server stream's handler goroutine
						 * and ctx; records nothing, sends nothing */
	PROBE_HTTP2_CLIENT_NEW_STREAM = 12,     /* (*http2Client).NewStream, at its RET instructions: a new
						 * client stream's parent server stream (struct stream_parent_event);
						 * in the streams set also the client stream's start */
	/* The streams set's ends (streams.bpf.h): */
	PROBE_HTTP2_CLIENT_CLOSE_STREAM = 13,   /* (*http2Client).closeStream past its guard: a client stream's end */
	PROBE_HTTP2_SERVER_WRITE_STATUS = 14,   /* (*http2Server).writeStatus / WriteStatus: a server stream's end */
	PROBE_COUNT = 15,
};

/* Per-probe counters, in the `probe_counters` per-CPU array at [probe * COUNTER_COUNT + counter]. */
enum gospan_counter {
	COUNTER_HITS = 0,            /* the program ran */
	COUNTER_EVENTS_SENT = 1,     /* a record was submitted to `events` */
	COUNTER_RING_BUFFER_FULL = 2, /* bpf_ringbuf_output failed (`events` is full): the record is lost */
	COUNTER_READ_FAILED = 3,     /* an argument or user memory read faulted */
	COUNTER_NO_OFFSETS = 4,      /* no slot in `binaries` for the probe's cookie or the task's executable */
	COUNTER_UNKNOWN_ITAB = 5,    /* a stream's start whose connection's socket was not identified (a type the
				      * binary's conn_types table lacks, a failed read, not a socket): the
				      * record's conn_status says why */
	COUNTER_FIELD_TRUNCATED = 6, /* a header name or value was cut to fit */
	COUNTER_SKIPPED = 7,         /* a hit that needs no record: response headers before the trailers (not
				      * wanted), an HTTP/2 server's request that is not gRPC, or its trailers;
				      * handleStream of a ServeHTTP stream (id 0); NewStream returning an error; a hit
				      * on a stack-check jump about to grow the stack (COOKIE_AT_STACK_CHECK) */
	COUNTER_NO_PARENT = 8,       /* a client stream whose parent server stream was not found (goroutine,
				      * ctx walk, parent goroutine): it stays a root */
	COUNTER_INVISIBLE_PROCESS = 9, /* a record of a process outside gospan's PID namespace (another pod's
				      * process running a binary of the same inode): not sent */
	COUNTER_COUNT = 10,
};

/* The traced binary: device and inode of the task's executable (mm->exe_file). */
struct exe_key {
	__u64 dev; /* kernel dev_t of the superblock (MAJOR << 20 | MINOR) */
	__u64 ino;
};
_Static_assert(sizeof(struct exe_key) == 16, "struct exe_key is 16 bytes");

/* The ServeHTTP probes of net/http's bundled copy are those of x/net's, this much further. */
#define PROBE_NETHTTP_SHIFT 4

/* Sizes shared with user space (enum values, so that they reach BTF). */
enum gospan_limits {
	GOSPAN_MAX_FIELDS = 10,   /* header fields captured per event */
	GOSPAN_VALUE_LEN = 124,   /* bytes kept of each header value */
	GOSPAN_NAME_LEN = 32,     /* longest capturable header name + NUL: key of `header_names` */
	GOSPAN_NAME_CACHE_SLOTS = 32, /* struct binary.name_cache entries */
	GOSPAN_BINARY_SLOTS = 1024,   /* max_entries of `binaries`: binaries traced at once */
	GOSPAN_CONN_TYPES = 32,       /* struct binary.conn_types entries: connection types per binary */
	GOSPAN_EXEC_PATH_LEN = 512,   /* struct exec_notice.path: bytes of an executable's path sent with its exec */
	GOSPAN_FIELD_ALIGN = 8,       /* a sent record's packed fields start at multiples of this (struct header_event) */
};
/* Header fields examined per event (bounded loop); more are flagged as truncated. */
#define GOSPAN_MAX_SCAN_FIELDS 48
/* Connection types visited from a net.Conn to its socket, at most (grpc's syscallConn -> tls.Conn ->
 * cmux.MuxConn -> a listener's wrapper -> *net.TCPConn is five; struct binary.conn_types). */
#define GOSPAN_MAX_CONN_WRAPS 6
/* Levels of a context.Context chain walked up from a new client stream's ctx to find the server
 * stream it descends from (propagation.bpf.h; docs/propagation.md: a plain handler is ~5 levels,
 * each interceptor or library adds some; OpenTelemetry Go found 10 too few). */
#define GOSPAN_MAX_CTX_DEPTH 24

#define GOSPAN_TAG(t) __attribute__((btf_decl_tag(t)))

/*
 * The Go fact each member of struct go_offsets holds (btf_decl_tag, like GOSPAN_PROBE below):
 * user space generates its list of facts to resolve from them (offsets.resolve.ProbeField).
 *   GO_ARG(probe, "param", word)  word `word` of parameter `param` (by name) of the probe's
 *                                 function, at entry: a struct go_loc
 *   GO_MEMBER("type member ...")  the byte offset of a member path: (type, member) steps, added
 *   GO_SIZE("type")               the byte size of a Go type
 *   GO_POINTER("type member")     1 when the member's Go type is a pointer, 0 when it is not (e.g. an
 *                                 embedded struct held by value); unknown (-1) when there is no such member
 *   GO_NEEDS(probe, ...)          the probes that cannot be attached without it; a member
 *                                 without it is optional (only degrades events when unknown)
 *   GO_UNCATALOGUED               found in DWARF only: the offsets catalog does not cover it
 *   GO_RTYPE                      (a GO_MEMBER) also found in the binary's runtime type information,
 *                                 which stripped binaries keep: a member of a type reachable from the
 *                                 binary's itabs, taken when neither DWARF nor the catalog answers
 *   GO_COPY(name, http2, hpack, embed)  on a struct http_server_offsets member: the server copy
 *                                 (its probes are PROBE_<name>_*, PROBE_COPY_* in the copy's tags)
 *                                 and the text of {http2}, {hpack}, {embed} in its Go paths
 */
#define GO_ARG(probe, param, word) GOSPAN_TAG("gospan:arg=" #probe " " param " " #word)
#define GO_MEMBER(path) GOSPAN_TAG("gospan:member=" path)
#define GO_SIZE(type) GOSPAN_TAG("gospan:size=" type)
#define GO_POINTER(path) GOSPAN_TAG("gospan:pointer=" path)
#define GO_NEEDS(...) GOSPAN_TAG("gospan:needs=" #__VA_ARGS__)
#define GO_UNCATALOGUED GOSPAN_TAG("gospan:uncatalogued")
#define GO_RTYPE GOSPAN_TAG("gospan:rtype")
#define GO_COPY(name, http2, hpack, embed) GOSPAN_TAG("gospan:copy=" #name ";" http2 ";" hpack ";" embed)

/*
 * One copy of the HTTP/2 server that runs grpc-go's ServeHTTP path (grpc-go
 * internal/transport/handler_server.go): golang.org/x/net/http2 (h2c, http2.ConfigureServer)
 * or the copy bundled in net/http (names prefixed http2; net/http's TLS server). Sources:
 * x/net http2/server.go, write.go, hpack/encode.go (the bundle: Go src/net/http/h2_bundle.go).
 */
struct http_server_offsets {
	/* (*serverConn).processHeaders(sc *serverConn, f *MetaHeadersFrame) */
	struct go_loc process_headers_sc GO_ARG(PROBE_COPY_PROCESS_HEADERS, "sc", 0);
	struct go_loc process_headers_f GO_ARG(PROBE_COPY_PROCESS_HEADERS, "f", 0);
	/* (*writeResHeaders).writeFrame(w *writeResHeaders, ctx writeContext) */
	struct go_loc write_frame_w GO_ARG(PROBE_COPY_WRITE_RES_HEADERS, "w", 0);
	/* the writeContext interface's data word: the *serverConn */
	struct go_loc write_frame_ctx GO_ARG(PROBE_COPY_WRITE_RES_HEADERS, "ctx", 1);
	/* (*writeResHeaders).writeHeaderBlock(w, ctx writeContext, frag []byte, firstFrag, lastFrag bool):
	 * ctx's data word, as above */
	struct go_loc write_header_block_ctx GO_ARG(PROBE_COPY_WRITE_HEADER_BLOCK, "ctx", 1);
	/* hpack (*Encoder).WriteField(e *Encoder, f HeaderField): f by value, Name's pointer and
	 * length, then Value's */
	struct go_loc write_field_e GO_ARG(PROBE_COPY_HPACK_WRITE_FIELD, "e", 0);
	struct go_loc write_field_name_ptr GO_ARG(PROBE_COPY_HPACK_WRITE_FIELD, "f", 0);
	struct go_loc write_field_name_len GO_ARG(PROBE_COPY_HPACK_WRITE_FIELD, "f", 1);
	struct go_loc write_field_value_ptr GO_ARG(PROBE_COPY_HPACK_WRITE_FIELD, "f", 2);
	struct go_loc write_field_value_len GO_ARG(PROBE_COPY_HPACK_WRITE_FIELD, "f", 3);
	/* serverConn.conn net.Conn, serverConn.hpackEncoder *hpack.Encoder */
	__s32 server_conn_conn GO_MEMBER("{http2}serverConn conn")
		GO_NEEDS(PROBE_COPY_PROCESS_HEADERS, PROBE_COPY_WRITE_RES_HEADERS);
	__s32 server_conn_hpack_encoder GO_MEMBER("{http2}serverConn hpackEncoder")
		GO_NEEDS(PROBE_COPY_WRITE_RES_HEADERS, PROBE_COPY_WRITE_HEADER_BLOCK);
	/* writeResHeaders.streamID uint32, .endStream bool */
	__s32 write_res_headers_stream_id GO_MEMBER("{http2}writeResHeaders streamID") GO_NEEDS(PROBE_COPY_WRITE_RES_HEADERS);
	__s32 write_res_headers_end_stream GO_MEMBER("{http2}writeResHeaders endStream") GO_NEEDS(PROBE_COPY_WRITE_RES_HEADERS);
	/* as the same-named members of struct go_offsets, for this copy's types */
	__s32 meta_headers_frame_headers_frame GO_MEMBER("{http2}MetaHeadersFrame {embed}HeadersFrame")
		GO_NEEDS(PROBE_COPY_PROCESS_HEADERS);
	__s32 meta_headers_frame_fields GO_MEMBER("{http2}MetaHeadersFrame Fields") GO_NEEDS(PROBE_COPY_PROCESS_HEADERS);
	__s32 headers_frame_flags GO_MEMBER("{http2}HeadersFrame {embed}FrameHeader {http2}FrameHeader Flags")
		GO_NEEDS(PROBE_COPY_PROCESS_HEADERS);
	__s32 headers_frame_stream_id GO_MEMBER("{http2}HeadersFrame {embed}FrameHeader {http2}FrameHeader StreamID")
		GO_NEEDS(PROBE_COPY_PROCESS_HEADERS);
	__s32 header_field_size GO_SIZE("{hpack}HeaderField") GO_NEEDS(PROBE_COPY_PROCESS_HEADERS);
	__s32 header_field_name GO_MEMBER("{hpack}HeaderField Name") GO_NEEDS(PROBE_COPY_PROCESS_HEADERS);
	__s32 header_field_value GO_MEMBER("{hpack}HeaderField Value") GO_NEEDS(PROBE_COPY_PROCESS_HEADERS);
	__s32 _pad;
};
_Static_assert(sizeof(struct http_server_offsets) == 128, "struct http_server_offsets is 128 bytes");

/*
 * Offsets and argument locations for one traced binary, filled by user space from
 * the offsets catalog or the binary's DWARF. An offset of -1 or a location of
 * GO_LOC_NONE is unknown; user space does not attach a probe whose needs are unknown.
 * Member offsets are in bytes from the start of the Go struct named.
 */
#define GRPC_TRANSPORT "google.golang.org/grpc/internal/transport."
#define XNET_HTTP2 "golang.org/x/net/http2."
#define XNET_HPACK "golang.org/x/net/http2/hpack."
/* what the transport probes all read: the header fields */
#define NEEDS_TRANSPORT GO_NEEDS(PROBE_LOOPY_WRITER_WRITE_HEADER, PROBE_HTTP2_CLIENT_OPERATE_HEADERS, \
				 PROBE_HTTP2_SERVER_OPERATE_HEADERS)
/* what both operateHeaders probes read: the received frame */
#define NEEDS_OPERATE_HEADERS GO_NEEDS(PROBE_HTTP2_CLIENT_OPERATE_HEADERS, PROBE_HTTP2_SERVER_OPERATE_HEADERS)

struct go_offsets {
	/* (*loopyWriter).writeHeader(l *loopyWriter, streamID uint32, endStream bool,
	 *                            hf []hpack.HeaderField, onWrite func())
	 * grpc-go internal/transport/controlbuf.go */
	struct go_loc write_header_l GO_ARG(PROBE_LOOPY_WRITER_WRITE_HEADER, "l", 0);
	struct go_loc write_header_stream_id GO_ARG(PROBE_LOOPY_WRITER_WRITE_HEADER, "streamID", 0);
	struct go_loc write_header_end_stream GO_ARG(PROBE_LOOPY_WRITER_WRITE_HEADER, "endStream", 0);
	struct go_loc write_header_hf_ptr GO_ARG(PROBE_LOOPY_WRITER_WRITE_HEADER, "hf", 0);
	struct go_loc write_header_hf_len GO_ARG(PROBE_LOOPY_WRITER_WRITE_HEADER, "hf", 1);
	/* (*http2Client).operateHeaders(t *http2Client, frame *http2.MetaHeadersFrame) */
	struct go_loc client_operate_headers_t GO_ARG(PROBE_HTTP2_CLIENT_OPERATE_HEADERS, "t", 0);
	struct go_loc client_operate_headers_frame GO_ARG(PROBE_HTTP2_CLIENT_OPERATE_HEADERS, "frame", 0);
	/* (*http2Server).operateHeaders(t *http2Server, [ctx context.Context since grpc-go
	 * 1.60,] frame *http2.MetaHeadersFrame, ...): located by name, not position */
	struct go_loc server_operate_headers_t GO_ARG(PROBE_HTTP2_SERVER_OPERATE_HEADERS, "t", 0);
	struct go_loc server_operate_headers_frame GO_ARG(PROBE_HTTP2_SERVER_OPERATE_HEADERS, "frame", 0);

	/* loopyWriter.side: 0 client, 1 server */
	__s32 loopy_writer_side GO_MEMBER(GRPC_TRANSPORT "loopyWriter side") GO_NEEDS(PROBE_LOOPY_WRITER_WRITE_HEADER);
	/* loopyWriter.conn net.Conn (newer grpc-go; -1 before it) */
	__s32 loopy_writer_conn GO_MEMBER(GRPC_TRANSPORT "loopyWriter conn");
	/* loopyWriter.framer *framer -> framer.writer *bufWriter -> bufWriter.conn net.Conn (io.Writer in
	 * newer grpc-go): used when loopyWriter.conn is absent */
	__s32 loopy_writer_framer GO_MEMBER(GRPC_TRANSPORT "loopyWriter framer");
	__s32 framer_writer GO_MEMBER(GRPC_TRANSPORT "framer writer");
	__s32 buf_writer_conn GO_MEMBER(GRPC_TRANSPORT "bufWriter conn");
	/* http2Client.conn, http2Server.conn net.Conn */
	__s32 http2_client_conn GO_MEMBER(GRPC_TRANSPORT "http2Client conn")
		GO_NEEDS(PROBE_HTTP2_CLIENT_OPERATE_HEADERS, PROBE_HTTP2_CLIENT_NEW_STREAM);
	__s32 http2_server_conn GO_MEMBER(GRPC_TRANSPORT "http2Server conn")
		GO_NEEDS(PROBE_HTTP2_SERVER_OPERATE_HEADERS, PROBE_SERVER_HANDLE_STREAM);
	/* MetaHeadersFrame.HeadersFrame *HeadersFrame, MetaHeadersFrame.Fields []hpack.HeaderField,
	 * HeadersFrame.FrameHeader.Flags (uint8; END_STREAM = 0x1), .StreamID uint32 (x/net http2 frame.go) */
	__s32 meta_headers_frame_headers_frame GO_MEMBER(XNET_HTTP2 "MetaHeadersFrame HeadersFrame") NEEDS_OPERATE_HEADERS;
	__s32 meta_headers_frame_fields GO_MEMBER(XNET_HTTP2 "MetaHeadersFrame Fields") NEEDS_OPERATE_HEADERS;
	__s32 headers_frame_flags GO_MEMBER(XNET_HTTP2 "HeadersFrame FrameHeader " XNET_HTTP2 "FrameHeader Flags")
		NEEDS_OPERATE_HEADERS;
	__s32 headers_frame_stream_id GO_MEMBER(XNET_HTTP2 "HeadersFrame FrameHeader " XNET_HTTP2 "FrameHeader StreamID")
		NEEDS_OPERATE_HEADERS;
	/* sizeof(hpack.HeaderField), HeaderField.Name string, .Value string (x/net http2/hpack hpack.go) */
	__s32 header_field_size GO_SIZE(XNET_HPACK "HeaderField") NEEDS_TRANSPORT;
	__s32 header_field_name GO_MEMBER(XNET_HPACK "HeaderField Name") NEEDS_TRANSPORT;
	__s32 header_field_value GO_MEMBER(XNET_HPACK "HeaderField Value") NEEDS_TRANSPORT;
	/* The socket behind a net.Conn: struct binary.conn_types (from the runtime type information) leads
	 * to the *net.netFD; its netFD.pfd.Sysfd int (net fd_posix.go, internal/poll fd_unix.go) is the fd.
	 * Optional: without it events carry no socket. */
	__s32 net_fd_sysfd GO_MEMBER("net.netFD pfd internal/poll.FD Sysfd");
	__u8 _pad_socket[4]; /* keeps struct go_offsets a multiple of 8 bytes */
	/* The ServeHTTP path, per HTTP/2 server copy. In the offsets catalog: x/net's copy keyed by the
	 * golang.org/x/net version, net/http's by the Go version, their argument locations too. */
	struct http_server_offsets xnet /* golang.org/x/net/http2 */
		GO_COPY(XNET, XNET_HTTP2, XNET_HPACK, "");
	struct http_server_offsets nethttp /* net/http's bundled http2 (Go src/net/http/h2_bundle.go) */
		GO_COPY(NETHTTP, "net/http.http2", "vendor/" XNET_HPACK, "http2");

	/* In-process propagation (propagation.bpf.h; docs/propagation.md §1, §2, §6 for the layouts by
	 * grpc-go and Go version). DWARF or the offsets catalog, like the members above. */
	/* grpc (*Server).handleStream(s *Server, t ServerTransport, stream *transport.Stream |
	 * *transport.ServerStream[, trInfo *traceInfo]) (grpc-go server.go): t's data word (the
	 * *http2Server, or a *serverHandlerTransport whose streams have id 0), the stream */
	struct go_loc handle_stream_t GO_ARG(PROBE_SERVER_HANDLE_STREAM, "t", 1);
	struct go_loc handle_stream_stream GO_ARG(PROBE_SERVER_HANDLE_STREAM, "stream", 0);
	/* transport.Stream.id uint32, .ctx context.Context (the client stream's, where the ctx walk
	 * starts): every grpc-go; since v1.69 inside
	 * ServerStream and ClientStream, as an embedded *Stream (v1.69-v1.76) or Stream (v1.77+) */
	__s32 stream_id GO_MEMBER(GRPC_TRANSPORT "Stream id")
		GO_NEEDS(PROBE_SERVER_HANDLE_STREAM, PROBE_HTTP2_CLIENT_NEW_STREAM);
	__s32 stream_ctx GO_MEMBER(GRPC_TRANSPORT "Stream ctx") GO_NEEDS(PROBE_HTTP2_CLIENT_NEW_STREAM);
	__s32 server_stream_stream GO_MEMBER(GRPC_TRANSPORT "ServerStream Stream");
	__s32 server_stream_stream_ptr GO_POINTER(GRPC_TRANSPORT "ServerStream Stream");
	__s32 client_stream_stream GO_MEMBER(GRPC_TRANSPORT "ClientStream Stream");
	__s32 client_stream_stream_ptr GO_POINTER(GRPC_TRANSPORT "ClientStream Stream");
	/* A client stream's transport: Stream.ct, *http2Client up to v1.65, the ClientTransport
	 * interface (data word: the *http2Client) v1.66-v1.68; ClientStream.ct *http2Client v1.69+ */
	__s32 stream_ct GO_MEMBER(GRPC_TRANSPORT "Stream ct");
	__s32 stream_ct_ptr GO_POINTER(GRPC_TRANSPORT "Stream ct");
	__s32 client_stream_ct GO_MEMBER(GRPC_TRANSPORT "ClientStream ct");
	/* runtime.g.goid (runtime/runtime2.go; moved in Go 1.23 and 1.25), .parentGoid (Go >= 1.21:
	 * the goroutine that started this one). Both optional: without goid the parent is found by
	 * the ctx walk only (g_streams stays empty). DWARF only: goid moved in Go 1.23 and back in
	 * 1.25, parentGoid in 1.26, and the catalog does not observe every Go minor yet, so a
	 * catalogued value between two observations could be wrong (a wrong goid would give wrong
	 * parents, a missing one only fewer). */
	__s32 g_goid GO_MEMBER("runtime.g goid") GO_UNCATALOGUED;
	__s32 g_parent_goid GO_MEMBER("runtime.g parentGoid") GO_UNCATALOGUED;
	/* context.valueCtx.val any (Go src/context/context.go: {Context, key, val any}): the ctx walk
	 * looks for the node whose val is a server stream, the one grpc-go's
	 * NewContextWithServerTransportStream wraps every handler's ctx in (server.go). DWARF, or the
	 * runtime type information of a stripped binary (*context.valueCtx implements Context: its itab
	 * leads there) */
	__s32 value_ctx_val GO_MEMBER("context.valueCtx val") GO_NEEDS(PROBE_HTTP2_CLIENT_NEW_STREAM)
		GO_UNCATALOGUED GO_RTYPE;

	/* The streams set (streams.bpf.h; docs/propagation.md §2, §3): a client stream starts at
	 * NewStream's return and ends at closeStream, a server stream ends at writeStatus.
	 * transport.Stream.method string (every grpc-go: the client's callHdr.Method, "/pkg.Svc/M") */
	__s32 stream_method GO_MEMBER(GRPC_TRANSPORT "Stream method"); /* the streams set needs it (BinaryInspection) */
	/* (t *http2Client) closeStream(s *Stream | *ClientStream, err error, rst bool, rstCode
	 * http2.ErrCode, st *status.Status, mdata map[string][]string, eosReceived bool), every grpc-go */
	struct go_loc close_stream_t GO_ARG(PROBE_HTTP2_CLIENT_CLOSE_STREAM, "t", 0);
	struct go_loc close_stream_s GO_ARG(PROBE_HTTP2_CLIENT_CLOSE_STREAM, "s", 0);
	struct go_loc close_stream_st GO_ARG(PROBE_HTTP2_CLIENT_CLOSE_STREAM, "st", 0);
	/* (t *http2Server) WriteStatus(s *Stream, st *status.Status) error (<= v1.68), writeStatus(s
	 * *ServerStream, st *status.Status) error (v1.69+) */
	struct go_loc write_status_t GO_ARG(PROBE_HTTP2_SERVER_WRITE_STATUS, "t", 0);
	struct go_loc write_status_s GO_ARG(PROBE_HTTP2_SERVER_WRITE_STATUS, "s", 0);
	struct go_loc write_status_st GO_ARG(PROBE_HTTP2_SERVER_WRITE_STATUS, "st", 0);
	/* grpc internal/status.Status{s *spb.Status} (internal/status/status.go) */
	__s32 status_s GO_MEMBER("google.golang.org/grpc/internal/status.Status s")
		GO_NEEDS(PROBE_HTTP2_CLIENT_CLOSE_STREAM, PROBE_HTTP2_SERVER_WRITE_STATUS);
	/* google.golang.org/genproto/googleapis/rpc/status.Status.Code int32, .Message string: where they
	 * lie depends on the genproto release linked (protobuf API v1: Code@0; v2: after state,
	 * sizeCache, unknownFields), not on grpc-go's, so not from the catalog: DWARF, or the runtime
	 * type information (spb.Status is reachable from status.Error's itab) */
	__s32 spb_status_code GO_MEMBER("google.golang.org/genproto/googleapis/rpc/status.Status Code")
		GO_NEEDS(PROBE_HTTP2_CLIENT_CLOSE_STREAM, PROBE_HTTP2_SERVER_WRITE_STATUS) GO_UNCATALOGUED GO_RTYPE;
	__s32 spb_status_message GO_MEMBER("google.golang.org/genproto/googleapis/rpc/status.Status Message")
		GO_NEEDS(PROBE_HTTP2_CLIENT_CLOSE_STREAM, PROBE_HTTP2_SERVER_WRITE_STATUS) GO_UNCATALOGUED GO_RTYPE;
};
_Static_assert(sizeof(struct go_offsets) == 136 + 2 * 128 + 64 + 64, "struct go_offsets is 520 bytes");

/* struct binary.flags */
enum binary_flags {
	BINARY_STREAMS_SET = 1 << 0, /* the binary has the streams probe set: NewStream's returns start client
				      * streams (else the header-block set: only their parents) */
};

/* The probe sets of grpc-go's transport (GOSPAN_SET, GOSPAN_SPANS: `streams`, `headers`): which
 * functions start and end a stream's span. A binary gets one of them (BINARY_STREAMS_SET). */
enum gospan_probe_set {
	PROBE_SET_STREAMS = 0, /* a stream's start and end where grpc-go creates and closes it (register-ABI binaries) */
	PROBE_SET_HEADERS = 1, /* every HEADERS block written and read (Go <= 1.16; response metadata capture) */
};

/* A uprobe's attach cookie: (struct binary.generation << 32) | the flags below | (slot + 1). */
enum gospan_cookie {
	COOKIE_SLOT_MASK = 0xffff,       /* slot + 1 in `binaries`; 0: no slot */
	COOKIE_AT_STACK_CHECK = 1 << 16, /* the probe sits on its function's stack-check `jbe` (Go 1.17-1.20, whose
					  * instruction after it the kernel would single-step: FunctionCode.entryPlace);
					  * a hit where the jump will be taken is not the call's (stack_check_taken) */
};

/* How a connection type leads to its socket (struct conn_type.kind; 0 in a free entry). */
enum conn_kind {
	CONN_SOCKET = 1,    /* the struct holds the *net.netFD at `offset` (*net.TCPConn, *net.UnixConn: net.conn.fd) */
	CONN_INTERFACE = 2, /* the struct holds a net.Conn (or wider) interface value at `offset`: a wrapper
			     * (crypto/tls.Conn.conn, grpc's syscallConn, cmux's MuxConn, h2c's bufConn ...) */
	CONN_POINTER = 3,   /* the struct holds a pointer at `offset` to a struct described by entry `next` */
};

/*
 * One connection type of a binary: what a net.Conn whose itab is `itab` holds, and where. Computed by
 * user space from the binary's runtime type information (io.gospan.offsets.resolve.ConnTypes: the
 * concrete types of its itabs for net.Conn and wider interfaces, each struct's fields), so any wrapper
 * is unwrapped, stripped binary or not.
 */
struct conn_type {
	__u64 itab;    /* link-time address of the itab; 0: an entry reached only through a CONN_POINTER */
	__s32 offset;  /* bytes from the start of the struct the interface's data word points to */
	__u8 kind;     /* enum conn_kind */
	__u8 next;     /* CONN_POINTER: the index of the pointee's entry */
	__u8 _pad[2];
};
_Static_assert(sizeof(struct conn_type) == 16, "struct conn_type is 16 bytes");

/* A slot of the `binaries` map: a traced binary's offsets, found by the uprobe's attach cookie. */
struct binary {
	struct exe_key exe;
	__u64 generation; /* the cookie's upper 32 bits; 0: the slot is free */
	__u64 flags;      /* enum binary_flags */
	/* The read-only PT_LOAD segment [start, end) of the binary, where its string literals are, at
	 * link-time addresses; 0, 0 when unknown. */
	__u64 rodata_start;
	__u64 rodata_end;
	/* A position-independent executable (`pie` 1) is mapped at its link-time addresses plus a load
	 * bias chosen per process: the bias is mm->start_code (the executable PT_LOAD's address, as
	 * the kernel's ELF loader sets it) minus `text_start` (that segment's link-time p_vaddr). Every
	 * itab and read-only data address is compared after subtracting it. 0 for a position-dependent
	 * binary. */
	__u64 text_start;
	__u8 pie;
	__u8 conn_type_count; /* conn_types[] in use */
	/* Where the NewStream probe reads the new stream: 0, RAX (the probes sit on the function's RETs);
	 * else 1 + the byte offset from RSP of the stack slot holding it, the probes sitting on emulated
	 * jumps before the RETs (user space: io.gospan.offsets.code.ResultPlaces) */
	__u16 new_stream_result;
	__u8 _pad[4];
	/* Header names found in the read-only data, by link-time address: written by the probes
	 * (headers.bpf.h, name_cache_entry); user space writes zeros. */
	__u64 name_cache[GOSPAN_NAME_CACHE_SLOTS];
	struct conn_type conn_types[GOSPAN_CONN_TYPES];
	struct go_offsets offsets;
};
_Static_assert(sizeof(struct binary) == 64 + 8 * GOSPAN_NAME_CACHE_SLOTS + 16 * GOSPAN_CONN_TYPES + 520,
	       "struct binary is 1352 bytes");

enum header_event_flags {
	EVENT_END_STREAM = 1 << 0,       /* writeHeader endStream / END_STREAM frame flag */
	EVENT_CONN_UNKNOWN = 1 << 1,     /* the connection (conn_id; on a stream's start, its socket) could not be identified */
	EVENT_FIELDS_TRUNCATED = 1 << 2, /* more wanted fields than slots, or more fields than scanned */
	EVENT_READ_FAILED = 1 << 3,      /* some user memory could not be read */
	EVENT_SOCKET_PATH = 1 << 4,      /* a unix domain socket's path follows the fields (struct socket_path) */
};

/* Why a stream's start carries no socket (struct header_event.conn_status). User space reports a value
 * as the span attribute gospan.connection.unidentified, spelled as its name without CONN_ in lower case
 * (CONN_UNKNOWN_TYPE: "unknown_type"; receiver.probe.ConnStatus, generated). */
enum conn_status {
	CONN_OK = 0,                   /* identified, or not asked (not a stream's start) */
	CONN_NO_TYPE_INFORMATION = 1,  /* the binary's conn_types table is empty (no runtime type information) */
	CONN_UNKNOWN_TYPE = 2,         /* the net.Conn's dynamic type is not in the binary's conn_types table */
	CONN_TOO_MANY_WRAPPERS = 3,    /* more than GOSPAN_MAX_CONN_WRAPS wrappers */
	CONN_READ_FAILED = 4,          /* a user or kernel read failed, or a nil connection */
	CONN_NOT_A_SOCKET = 5,         /* the fd is closed, or not a socket */
	CONN_OTHER_ADDRESS_FAMILY = 6, /* a socket neither AF_INET, AF_INET6 nor AF_UNIX */
	CONN_NO_LOAD_BIAS = 7,         /* a PIE whose load bias could not be read */
};

enum header_field_flags {
	FIELD_VALUE_TRUNCATED = 1 << 0, /* the value was longer than GOSPAN_VALUE_LEN */
};

/* Which end of the RPC the traced process is (struct header_event.side; receiver.event.Side). */
enum gospan_side {
	SIDE_CLIENT = 0,
	SIDE_SERVER = 1,
};
/* A record whose side could not be read (loopyWriter.side): no side, user space drops it as malformed. */
#define SIDE_UNKNOWN 255

/* One captured header field, as the probes fill it in a record's slot. A sent record carries it packed:
 * its first 4 + value_len bytes, zero-padded to a multiple of GOSPAN_FIELD_ALIGN (struct header_event).
 * Only fields whose names are in `header_names` are captured: anything else (authorization, cookies,
 * tokens) never leaves the kernel. */
struct header_field {
	__u8 name_id;   /* value of the name in `header_names` (user space keeps the names) */
	__u8 flags;     /* enum header_field_flags */
	__u16 value_len; /* bytes of value[] used */
	char value[GOSPAN_VALUE_LEN];
};
_Static_assert(sizeof(struct header_field) == 128, "struct header_field is 128 bytes");

/* One ring buffer record per probe hit that concerns a stream's headers. The probes fill the fixed
 * part (96 bytes) and a 128-byte slot per field; send() packs the record before it is sent
 * (pack_event): each of the field_count fields in use as its first 4 + value_len bytes (name_id,
 * flags, value_len, the value), zero-padded to a multiple of GOSPAN_FIELD_ALIGN (8), one right behind
 * the other from `fields`, then, with EVENT_SOCKET_PATH, the struct socket_path packed the same way
 * (4 + len bytes, padded). A record is 96 + the packed entries' bytes: a stream's end with :path
 * (~30 bytes) and grpc-status (1) is 96 + 40 + 8 = 144 bytes, not 96 + 2 * 128. */
struct header_event {
	__u64 ts_ns;     /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
	__u32 pid;       /* thread group id */
	__u32 tid;
	__u64 conn_id;   /* the net.Conn's data pointer: identifies the connection within pid; 0 unknown */
	__u32 stream_id; /* HTTP/2 stream id */
	__u8 probe;      /* enum gospan_probe */
	__u8 side;       /* enum gospan_side */
	__u8 flags;      /* enum header_event_flags */
	__u8 field_count; /* fields[] used */
	__s32 fd;        /* socket fd of the connection in pid; -1 unknown */
	__u16 family;    /* AF_INET, AF_INET6, AF_UNIX; 0 unknown, or not read: only a stream's start has the socket */
	__u16 local_port;  /* host byte order; 0 for AF_UNIX */
	__u16 remote_port; /* host byte order; 0 for AF_UNIX */
	__u8 fields_total; /* header fields in the block (capped at 255), captured or not */
	__u8 conn_status;  /* enum conn_status: why a stream's start has no socket */
	__u8 _pad0[4];     /* pads local_addr to 8 */
	/* AF_INET: IPv4 in the first 4 bytes; AF_INET6: IPv6; network byte order. AF_UNIX: the socket's
	 * inode number (a __u64, host byte order) in the first 8 bytes, local: this end's, remote: the
	 * peer's (`ls -l /proc/<pid>/fd` shows socket:[inode]); the two ends of a connection mirror
	 * each other as a TCP 4-tuple does. */
	__u8 local_addr[16];
	__u8 remote_addr[16];
	/* The task's executable: user space finds the binary of a process that exited before it
	 * could read /proc/<pid> (a short-lived process of a known binary). */
	struct exe_key exe;
	/* The slots the probes fill; field_count fields are sent, packed, then, with EVENT_SOCKET_PATH,
	 * one struct socket_path, packed: the last slot is where the probe writes it before send()
	 * packs it behind the fields. */
	struct header_field fields[GOSPAN_MAX_FIELDS + 1];
};
_Static_assert(sizeof(struct header_event) == 96 + (GOSPAN_MAX_FIELDS + 1) * 128, "struct header_event is 1504 bytes");

/* A unix domain socket's path (sockaddr_un.sun_path), laid out as a struct header_field (and packed
 * as one: 4 + len bytes, padded to GOSPAN_FIELD_ALIGN): the bound name of this end (`peer` 0) or, when
 * this end is unnamed (a client), of the peer (`peer` 1). An abstract name starts with a NUL byte. */
struct socket_path {
	__u8 peer;
	__u8 _pad;
	__u16 len;       /* bytes of path[] used */
	char path[124];  /* UNIX_PATH_MAX (108) fits */
};
_Static_assert(sizeof(struct socket_path) == sizeof(struct header_field), "struct socket_path is a header_field slot");
_Static_assert(__builtin_offsetof(struct socket_path, len) == __builtin_offsetof(struct header_field, value_len) &&
		       __builtin_offsetof(struct socket_path, path) == __builtin_offsetof(struct header_field, value) &&
		       __builtin_offsetof(struct header_field, value) == 4,
	       "a socket_path packs as a header_field: its length where value_len is, 4 bytes before its bytes");

/* How the parent of a client stream was found (struct stream_parent_event.via). */
enum stream_parent_via {
	VIA_GOROUTINE = 0,        /* the calling goroutine runs the server stream's handler */
	VIA_CONTEXT = 1,          /* the client stream's ctx descends from the server stream's */
	VIA_PARENT_GOROUTINE = 2, /* the calling goroutine was started by the handler's (Go >= 1.21 g.parentGoid) */
};

/* One ring buffer record per client stream whose parent server stream (same process) was found,
 * sent by PROBE_HTTP2_CLIENT_NEW_STREAM. Its first 32 bytes are laid out as struct header_event's
 * (ts_ns, pid, tid, conn_id, stream_id, probe, side), so user space dispatches on `probe`. */
struct stream_parent_event {
	__u64 ts_ns;     /* bpf_ktime_get_ns() when NewStream returned the stream */
	__u32 pid;       /* thread group id */
	__u32 tid;
	__u64 conn_id;   /* the client stream's connection: http2Client.conn's data pointer, as the
			  * client's header events carry it */
	__u32 stream_id; /* the client stream's HTTP/2 stream id */
	__u8 probe;      /* enum gospan_probe */
	__u8 side;       /* SIDE_CLIENT */
	__u8 via;        /* enum stream_parent_via */
	__u8 depth;      /* VIA_CONTEXT: ctx levels walked up from the client stream's ctx (0: itself) */
	__u64 parent_conn_id;   /* the server stream's connection: http2Server.conn's data pointer */
	__u32 parent_stream_id; /* the server stream's HTTP/2 stream id */
	__u8 _pad[4];
	struct exe_key exe; /* the task's executable */
};
_Static_assert(sizeof(struct stream_parent_event) == 64, "struct stream_parent_event is 64 bytes");

/* An exec, for discovery (process.bpf.h, raw_tp/sched_process_exec; ring buffer `execs`): which process
 * now runs which executable, and where that file is, so user space can learn the binary even when the
 * process is gone before it looks (a command-line client that lives 10 ms). Sent with only its used part
 * of path[]. */
struct exec_notice {
	__u64 ts_ns;        /* bpf_ktime_get_ns() at the exec */
	/* The new image's executable, as probes see it (task->mm->exe_file->f_inode, set from bprm->file
	 * at this point): for a file in an overlay file system the overlay's inode, whose device and inode
	 * number stat(2) through the overlay shows (not the lower or upper file system's). */
	struct exe_key exe;
	__u64 mnt_ns;       /* the process's mount namespace: the inode number `readlink /proc/<pid>/ns/mnt` shows */
	__u32 pid;          /* as gospan's /proc shows it (visible_tgid) */
	__u16 path_len;     /* bytes of path[] used */
	__u8 flags;         /* enum exec_notice_flags */
	__u8 _pad;
	/* The executable's path from the root of its mount namespace (what `readlink /proc/<pid>/exe`
	 * shows from that namespace's root): its components from the file up to the root, each
	 * NUL-terminated ("etcdctl\0bin\0usr\0" for /usr/bin/etcdctl); user space puts them in order. */
	char path[GOSPAN_EXEC_PATH_LEN];
};
_Static_assert(sizeof(struct exec_notice) == 40 + GOSPAN_EXEC_PATH_LEN, "struct exec_notice is 40 bytes and its path");

/* struct exec_notice.flags */
enum exec_notice_flags {
	EXEC_PATH_TRUNCATED = 1 << 0, /* the path was longer than path[] or deeper than the walk goes: not usable */
	EXEC_NO_PATH = 1 << 1,        /* the path could not be read */
};

/* Keys of the propagation maps (ctx_streams, g_streams): a server stream's address or a goroutine
 * id, within one process. */
struct stream_key {
	__u32 tgid;
	__u32 _pad;
	__u64 id; /* ctx_streams: the *transport.Stream / *ServerStream handleStream got; g_streams: the goid */
};
_Static_assert(sizeof(struct stream_key) == 16, "struct stream_key is 16 bytes");

/* A server stream, as the server's header events identify it. */
struct server_stream_ref {
	__u64 conn_id;   /* http2Server.conn's data pointer */
	__u32 stream_id;
	__u32 _pad;
	/* ctx_streams: the transport.Stream (inside a ServerStream since v1.69) whose ctx a match is
	 * checked against: the valueCtx that holds the stream has that ctx as its parent. g_streams: 0 */
	__u64 stream;
};
_Static_assert(sizeof(struct server_stream_ref) == 24, "struct server_stream_ref is 24 bytes");

/*
 * A probe's identity, on the program that implements it (clang >= 14 btf_decl_tag: a
 * BTF_KIND_DECL_TAG on the program's BTF function; libbpf drops the tags before loading on a
 * kernel without them). The Java probe list is generated from these tags:
 *   GOSPAN_PROBE(id, function)  the enum gospan_probe value (counters, records' `probe`) and the
 *                               Go symbol the uprobe is attached to
 *   GOSPAN_SERVER(copy)         a ServeHTTP-path probe of HTTP/2 server copy xnet or nethttp
 *   GOSPAN_EVENT(kind)          the kind of the records the probe sends, as user space names it
 *                               (io.gospan.receiver.event.ProbeKind); none: it sends no records
 *                               of its own
 *   GOSPAN_LAZY                 attached only once the binary is seen serving gRPC through the
 *                               ServeHTTP path (a hit per header field of every encoder)
 *   GOSPAN_AT_RETURNS           attached at every RET instruction of the function (one uprobe each,
 *                               found by disassembling it), not at its entry: it reads results
 *   GOSPAN_REGISTER_ABI         reads Go's ABIInternal registers directly (R14 = g, RAX = first
 *                               result): not attached to stack-ABI binaries (Go <= 1.16)
 *   GOSPAN_PARENTS              sends struct stream_parent_event records (user space: StreamParent)
 *   GOSPAN_IN_PROCESS           an in-process propagation probe: links a process's client calls to the
 *                               server call they are made for; attached all together or not at all,
 *                               and spans do not need them
 *   GOSPAN_SET(set)             attached only in one probe set of grpc-go's transport: `streams` (a
 *                               stream's start and end where grpc-go creates and closes it: the default
 *                               for register-ABI binaries) or `headers` (every HEADERS block written and
 *                               read: Go <= 1.16, response metadata capture, or a binary the streams set
 *                               cannot be attached to); untagged: both
 *   GOSPAN_STARTS(side)         its records start a span of that side (client, server: enum gospan_side);
 *                               every probe sending the same GOSPAN_EVENT kind says the same
 *   GOSPAN_SPANS(set, side...)  spans of these sides need the probe in probe set `set` (streams,
 *                               headers: enum gospan_probe_set; or any): a binary has client (server)
 *                               spans when every probe its set needs for them is attached
 *   GOSPAN_RAW_MESSAGE          its records' grpc-message is grpc-go's own string (read from a
 *                               status.Status), not a percent-encoded header value
 *   GOSPAN_PAST_GUARD           attached past the function's opening guard, `if s.swapState(streamDone)
 *                               == streamDone { return }` (found by disassembling it: the first XCHG on
 *                               the stream argument and the branch on its old value), where the
 *                               arguments it reads are still in their registers: a second call for the
 *                               same stream costs no hit
 * The function name may list alternatives, "a|b": the probe attaches to the one the binary has (grpc-go
 * renamed WriteStatus to writeStatus in v1.69).
 */
#define GOSPAN_PROBE(id, function) GOSPAN_TAG("gospan:probe=" #id) GOSPAN_TAG("gospan:function=" function)
#define GOSPAN_SERVER(copy) GOSPAN_TAG("gospan:server=" #copy)
#define GOSPAN_EVENT(kind) GOSPAN_TAG("gospan:event=" #kind)
#define GOSPAN_LAZY GOSPAN_TAG("gospan:lazy")
#define GOSPAN_AT_RETURNS GOSPAN_TAG("gospan:at_returns")
#define GOSPAN_REGISTER_ABI GOSPAN_TAG("gospan:register_abi")
#define GOSPAN_PARENTS GOSPAN_TAG("gospan:parents")
#define GOSPAN_IN_PROCESS GOSPAN_TAG("gospan:in_process")
#define GOSPAN_SET(set) GOSPAN_TAG("gospan:set=" #set)
#define GOSPAN_PAST_GUARD GOSPAN_TAG("gospan:past_guard")
#define GOSPAN_STARTS(side) GOSPAN_TAG("gospan:starts=" #side)
#define GOSPAN_SPANS(set, ...) GOSPAN_TAG("gospan:spans=" #set " " #__VA_ARGS__)
#define GOSPAN_RAW_MESSAGE GOSPAN_TAG("gospan:raw_message")

/* On a member of struct gospan_contract: user space gets a Java enum `class` (fully qualified) with a
 * constant per value of the member's C enum, named as the value without `prefix`, holding the value
 * (bpf/gen): a value added here is there at the next build, with nothing written in Java. */
#define GOSPAN_JAVA_ENUM(class, prefix) GOSPAN_TAG("gospan:java_enum=" class " " #prefix)

/* Every type and enum of the contract, for user space: a type reaches the object's BTF only if
 * something in the object uses it, and grpc.bpf.c points one unused global at this. */
struct gospan_contract {
	struct binary binary;
	struct header_event header_event;
	struct stream_parent_event stream_parent_event;
	struct exec_notice exec_notice;
	enum exec_notice_flags exec_notice_flags;
	enum gospan_probe probe;
	enum gospan_counter counter;
	enum gospan_limits limits;
	enum header_event_flags event_flags;
	enum header_field_flags field_flags;
	enum gospan_side side GOSPAN_JAVA_ENUM("io.gospan.receiver.event.Side", SIDE_);
	enum go_loc_kind loc_kind;
	enum stream_parent_via via GOSPAN_JAVA_ENUM("io.gospan.receiver.event.StreamParentVia", VIA_);
	enum binary_flags binary_flags;
	enum gospan_cookie cookie;
	struct socket_path socket_path;
	enum conn_kind conn_kind GOSPAN_JAVA_ENUM("io.gospan.offsets.resolve.ConnKind", CONN_);
	enum conn_status conn_status GOSPAN_JAVA_ENUM("io.gospan.receiver.probe.ConnStatus", CONN_);
	enum gospan_probe_set probe_set; /* offsets.resolve.Probe.ProbeSet */
};

#endif /* GOSPAN_GRPC_EVENTS_H */
