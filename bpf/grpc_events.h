/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The contract between grpc.bpf.c and the Java receiver: the per-binary offsets the
 * programs read, the event records they write to the `events` ring buffer, and the
 * counters they keep. This header is the single definition of each layout. Every
 * struct has fixed-width fields, explicit padding and a size assertion; the Java
 * side describes each layout once and a test checks it against the BTF of the
 * built object.
 */
#ifndef GOSPAN_GRPC_EVENTS_H
#define GOSPAN_GRPC_EVENTS_H

#include "go_abi.h"

/* What a probe is attached to (grpc-go internal/transport unless said otherwise). */
enum gospan_probe {
	PROBE_LOOPY_WRITER_WRITE_HEADER = 0,    /* (*loopyWriter).writeHeader, both sides */
	PROBE_HTTP2_CLIENT_OPERATE_HEADERS = 1, /* (*http2Client).operateHeaders */
	PROBE_HTTP2_SERVER_OPERATE_HEADERS = 2, /* (*http2Server).operateHeaders */
	PROBE_HPACK_ENCODER_WRITE_FIELD = 3,    /* x/net http2/hpack (*Encoder).WriteField */
	PROBE_COUNT = 4,
};

/* Per-probe counters, in the `probe_counters` per-CPU array at [probe * COUNTER_COUNT + counter]. */
enum gospan_counter {
	COUNTER_HITS = 0,            /* the program ran */
	COUNTER_EVENTS_SENT = 1,     /* a record was submitted to `events` */
	COUNTER_RINGBUF_FULL = 2,    /* bpf_ringbuf_reserve failed: the record is lost */
	COUNTER_READ_FAILED = 3,     /* an argument or user memory read faulted */
	COUNTER_NO_OFFSETS = 4,      /* the task's executable has no entry in go_offsets_by_exe */
	COUNTER_UNKNOWN_ITAB = 5,    /* the net.Conn is of a type we cannot unwrap */
	COUNTER_FIELD_TRUNCATED = 6, /* a header name or value was cut to fit */
	COUNTER_COUNT = 7,
};

/* The traced binary: device and inode of the task's executable (mm->exe_file). */
struct exe_key {
	__u64 dev; /* kernel dev_t of the superblock (MAJOR << 20 | MINOR) */
	__u64 ino;
};
_Static_assert(sizeof(struct exe_key) == 16, "struct exe_key is 16 bytes");

/*
 * Offsets and argument locations for one traced binary, filled by user space from
 * the offsets catalog or the binary's DWARF. A field set to -1 (offsets) or
 * GO_LOC_NONE (locations) is unknown; user space does not attach a probe whose
 * needs are unknown.
 */
struct go_offsets {
	/* (*loopyWriter).writeHeader(l *loopyWriter, streamID uint32, endStream bool,
	 *                            hf []hpack.HeaderField, onWrite func())
	 * grpc-go internal/transport/controlbuf.go */
	struct go_loc write_header_l;
	struct go_loc write_header_stream_id;
	struct go_loc write_header_end_stream;
	struct go_loc write_header_hf_ptr;
	struct go_loc write_header_hf_len;
	/* loopyWriter.side: 0 client, 1 server (grpc-go side type) */
	__s32 loopy_writer_side;
	__u32 _pad0; /* pads the struct to 8 */
};
_Static_assert(sizeof(struct go_offsets) == 48, "struct go_offsets is 48 bytes");

enum header_event_flags {
	EVENT_END_STREAM = 1 << 0,       /* writeHeader endStream / END_STREAM frame flag */
	EVENT_CONN_UNKNOWN = 1 << 1,     /* the connection could not be identified */
	EVENT_FIELDS_TRUNCATED = 1 << 2, /* more header fields than fit in the record */
	EVENT_READ_FAILED = 1 << 3,      /* some user memory could not be read */
};

enum gospan_side {
	SIDE_CLIENT = 0,
	SIDE_SERVER = 1,
	SIDE_UNKNOWN = 255,
};

/* One ring buffer record per probe hit that concerns a stream's headers. */
struct header_event {
	__u64 ts_ns;     /* bpf_ktime_get_ns(): CLOCK_MONOTONIC, ns */
	__u32 pid;       /* thread group id */
	__u32 tid;
	__u64 conn_id;   /* net.Conn data pointer: identifies the connection within pid; 0 unknown */
	__u32 stream_id; /* HTTP/2 stream id */
	__u8 probe;      /* enum gospan_probe */
	__u8 side;       /* enum gospan_side */
	__u8 flags;      /* enum header_event_flags */
	__u8 field_count;
	__s32 fd;        /* socket fd of the connection in pid; -1 unknown */
	__u32 _pad0;     /* pads the struct to 8 */
};
_Static_assert(sizeof(struct header_event) == 40, "struct header_event is 40 bytes");

#endif /* GOSPAN_GRPC_EVENTS_H */
