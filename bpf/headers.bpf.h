/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Records, for grpc.bpf.c (included once, after process.bpf.h): header fields read from a
 * []hpack.HeaderField through the per-binary name cache, a record built and sent, and a received
 * HEADERS frame (MetaHeadersFrame) turned into a record, shared by transport.bpf.h and
 * serve_http.bpf.h.
 */
#ifndef GOSPAN_HEADERS_BPF_H
#define GOSPAN_HEADERS_BPF_H

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
 * which never changes and is at the same link-time address in every process of the binary (a PIE's
 * runtime address minus its load bias). So a name there is read and looked up once per binary, then
 * found in its slot's `name_cache` by link-time address: no bpf_probe_read_user, no hash lookup.
 * Names elsewhere (the heap:
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

/* The cache entry for a name at link-time address [ptr, ptr + len), or NULL when it is not in
 * read-only data. */
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
 * read-only data). `ptr` is the process's address, `bias` its load bias (the cache is keyed by
 * link-time address). A global function, verified once on its own: the caller's loop sees one
 * unknown result instead of one state per path through the cache (a static function of its own
 * was re-verified per call with the caller's `bias`, four times the work of the whole program).
 */
__noinline __u8 name_id_of(struct binary *bin, __u64 ptr, __u64 len, __u64 bias)
{
	char name[GOSPAN_NAME_LEN] = {};
	__u8 name_id = NAME_NOT_WANTED;
	__u64 linked = ptr - bias; /* the link-time address: the same in every process of a PIE */
	__u64 *cached = bias == NO_LOAD_BIAS ? NULL : name_cache_entry(bin, linked, len);

	if (cached) {
		__u64 entry = *(volatile __u64 *)cached; /* one load: another CPU may replace it */

		if (entry == name_cache_value(linked, len, entry & 0xff))
			return entry & 0xff;
	}
	VERIFIER_CLAMP(len, 31); /* GOSPAN_NAME_LEN - 1 */
	if (bpf_probe_read_user(name, len, (void *)ptr))
		return NAME_NOT_WANTED;
	__u8 *id = bpf_map_lookup_elem(&header_names, name);

	if (id)
		name_id = *id;
	if (cached)
		*cached = name_cache_value(linked, len, name_id);
	return name_id;
}

/* The []hpack.HeaderField array, copied from user memory in one read: one bpf_probe_read_user
 * per field header cost more than the rest of the loop. */
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
	/* names in read-only data are cached by link-time address: a PIE's move with its load bias */
	__u64 bias = load_bias(bin);

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
		__u8 name_id = name_id_of(bin, s.ptr, s.len, bias);

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
 * READ_WINDOW bytes of each other (a read costs little more for a few hundred bytes than for
 * 8), else in two. Sizes are constants <= 16. Uses `fields_scratch`. 0 on success.
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

/* Appends a field named `name_id` whose value is the Go string [ptr, ptr + len) (cut to
 * GOSPAN_VALUE_LEN, flagged), for the records built from grpc-go's structs rather than a HEADERS
 * block. Nothing when the record is full or the name is not captured. */
static __always_inline void string_field(enum gospan_probe probe, struct header_event *e, __u8 name_id, __u64 ptr,
					 __s64 len)
{
	__u8 slot = e->field_count;

	if (name_id == NAME_NOT_WANTED || slot >= GOSPAN_MAX_FIELDS)
		return;
	struct header_field *f = &e->fields[slot];
	__u64 n = len < 0 ? 0 : len;

	f->name_id = name_id;
	f->flags = 0;
	if (n > GOSPAN_VALUE_LEN) {
		f->flags = FIELD_VALUE_TRUNCATED;
		count(probe, COUNTER_FIELD_TRUNCATED);
	}
	VERIFIER_CLAMP(n, 124); /* GOSPAN_VALUE_LEN */
	if (n && bpf_probe_read_user(f->value, n, (void *)ptr)) {
		n = 0;
		e->flags |= EVENT_READ_FAILED;
	}
	f->value_len = n;
	e->field_count = slot + 1;
}

/* Appends a field named `name_id` whose value is `v` in decimal (a grpc-status, as on the wire). */
static __always_inline void decimal_field(struct header_event *e, __u8 name_id, __s32 v)
{
	__u8 slot = e->field_count;
	char digits[10];
	__u32 u = v < 0 ? -(__u32)v : (__u32)v;
	int n = 0, at = 0;

	if (name_id == NAME_NOT_WANTED || slot >= GOSPAN_MAX_FIELDS)
		return;
	struct header_field *f = &e->fields[slot];

	for (int i = 0; i < 10; i++) {
		digits[i] = '0' + u % 10;
		u /= 10;
		n = i + 1;
		if (!u)
			break;
	}
	f->name_id = name_id;
	f->flags = 0;
	if (v < 0)
		f->value[at++] = '-';
	for (int i = 9; i >= 0; i--) {
		if (i < n)
			f->value[at++] = digits[i];
	}
	f->value_len = at;
	e->field_count = slot + 1;
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
	e->conn_status = CONN_OK;
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

_Static_assert(GOSPAN_MAX_FIELDS == 10 && GOSPAN_FIELD_ALIGN == 8 && __builtin_offsetof(struct header_event, fields) == 96,
	       "pack_entry's VERIFIER_CLAMP literals");

/* Moves the entry of slot `slot` (a field, or at GOSPAN_MAX_FIELDS the socket path) to byte `at`
 * of the record (at <= the slot's own offset), zero-pads it to GOSPAN_FIELD_ALIGN and returns its
 * packed size in bytes (8..128); 0 when `e` is NULL. A global function of its own: the verifier
 * checks it once, for any slot, length and place, where a loop over the entries in pack_event
 * had it walk each entry's length and place apart (~85,000 instructions in every program that
 * sends, ~0.8 s of the sidecar's start on 2 vCPUs). It copies the whole slot, not only the
 * entry's words: those past the entry land below at + 128 <= the slot's end, on bytes already
 * packed or about to be, never on a later slot's. */
__noinline __u32 pack_entry(struct header_event *e, __u32 at, __u32 slot)
{
	if (!e)
		return 0;
	__u8 *base = (__u8 *)e;
	__u64 to = at;
	__u64 s = slot;

	VERIFIER_CLAMP(s, 10); /* GOSPAN_MAX_FIELDS */
	__u64 from = offsetof(struct header_event, fields) + s * sizeof(struct header_field);
	/* value_len, or the socket path's len at the same place */
	__u64 len = e->fields[s].value_len;

	VERIFIER_CLAMP(len, 124); /* GOSPAN_VALUE_LEN */
	__u64 used = offsetof(struct header_field, value) + len; /* 4..128 */
	__u64 words = (used + 7) / 8;                            /* 1..16 */

	/* the clamps show the verifier to + 128 and from + 128 within the record */
	VERIFIER_CLAMP(to, 1376);   /* 96 + 10 * 128 */
	VERIFIER_CLAMP(from, 1376); /* 96 + 10 * 128 */
	if (to != from) {
#pragma unroll
		for (int k = 0; k < 16; k++)
			*(__u64 *)(base + to + k * 8) = *(__u64 *)(base + from + k * 8);
	}
	/* the last word's bytes past the entry: zero, not a previous record's (tail 0: all kept) */
	__u64 tail = words * 8 - used; /* 0..7 */
	__u64 last = to + (words - 1) * 8;

	VERIFIER_CLAMP(last, 1496); /* 1376 + 15 * 8 */
	*(__u64 *)(base + last) &= ~0ULL >> (tail * 8);
	return words * 8;
}

/*
 * Packs a filled record in place and returns its size in bytes: the field_count fields in use, each
 * as its first 4 + value_len bytes zero-padded to a multiple of GOSPAN_FIELD_ALIGN, one behind the
 * other from `fields`, then, with EVENT_SOCKET_PATH, the struct socket_path read_conn left in the last
 * slot, packed the same way (struct header_event). An entry never starts after its slot (an entry is
 * at most a slot's 128 bytes), so each is copied forward a word at a time over bytes already read
 * (pack_entry). A global function, verified once on its own rather than in every program that sends
 * a record. 0 when `e` is NULL.
 */
__noinline __u32 pack_event(struct header_event *e)
{
	if (!e)
		return 0;
	__u32 n = e->field_count > GOSPAN_MAX_FIELDS ? GOSPAN_MAX_FIELDS : e->field_count;
	__u32 with_path = (e->flags & EVENT_SOCKET_PATH) ? 1 : 0;
	__u32 at = offsetof(struct header_event, fields); /* where the next entry goes */

	for (__u32 i = 0; i <= GOSPAN_MAX_FIELDS; i++) {
		__u32 slot;

		if (i < n)
			slot = i;
		else if (i == n && with_path)
			slot = GOSPAN_MAX_FIELDS; /* the socket path's slot */
		else
			break;
		at += pack_entry(e, at, slot);
	}
	return at;
}

/* Submits `size` bytes of `record` to `events` with its pid (`*pid`, a field of the record) as
 * gospan sees it (visible_tgid), and counts the outcome; nothing for a process gospan cannot see.
 * `*pid` is the kernel's tgid again afterwards: the maps' keys use it. Every record goes through
 * here. */
static __always_inline void submit(enum gospan_probe probe, void *record, __u64 size, __u32 *pid)
{
	__u32 tgid = *pid;

	*pid = visible_tgid(tgid);
	if (!*pid)
		count(probe, COUNTER_INVISIBLE_PROCESS);
	else if (bpf_ringbuf_output(&events, record, size, wakeup_flags()))
		count(probe, COUNTER_RING_BUFFER_FULL);
	else
		count(probe, COUNTER_EVENTS_SENT);
	*pid = tgid;
}

/* Packs a filled header record and copies it to `events`. Its slots hold the packed entries
 * afterwards: nothing reads the record again. */
static __always_inline void send(enum gospan_probe probe, struct header_event *e)
{
	__u64 size = pack_event(e);

	VERIFIER_CLAMP(size, 1504); /* sizeof(struct header_event) */
	if (size < offsetof(struct header_event, fields))
		return;
	submit(probe, e, size, &e->pid);
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
	read_conn(probe, bin, t + conn_off, NULL, side == SIDE_SERVER, e);
	send(probe, e);
	return 0;
}

#endif /* GOSPAN_HEADERS_BPF_H */
