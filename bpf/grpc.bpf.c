// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * gospan's uprobes on grpc-go's HTTP/2 transport and on the ServeHTTP path's HTTP/2 server.
 * Entry probes only: Go moves goroutine stacks, so a uretprobe's trampoline return address
 * corrupts them.
 *
 * Each probe hit costs the traced program the uprobe trap plus this code, and every helper call
 * is a large part of the latter (docs/benchmarks.md has the figures), so the programs read only
 * what spans need: the stream id, END_STREAM, the connection (its socket on a stream's start),
 * and the header fields named in `header_names`. The comments below say why each way of saving
 * a helper call is there; what each saved is in docs/benchmarks.md.
 *
 * One object, split by concern into the headers included at the end (as OBI splits its
 * tracers): the maps and load-time settings here, then process.bpf.h, headers.bpf.h,
 * transport.bpf.h, serve_http.bpf.h, propagation.bpf.h, streams.bpf.h.
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
 * lookup instead of walking task->mm->exe_file->f_inode and hashing the key. The generation tells a slot reused for another binary from the one a link
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

/* Where a record is built (the BPF stack has 512 bytes): it is packed (pack_event) and only its
 * used part copied to `events` (bpf_ringbuf_output), so a stream's end with :path and grpc-status
 * takes ~144 bytes of the ring buffer, not 1504 (352 before packing), and the ring buffer's cache
 * lines shared with the reader are written once. */
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
 * WAKEUP_CHECK_EVERY of them, not on every record (a bpf_ringbuf_query is a cold cache line). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} records_sent SEC(".maps");

/* Bit n set: some name in `header_names` that a request (or a response: headers, trailers)
 * carries is n bytes long. Set by user space before load; a field of another length is skipped
 * without reading its name (a user read and a map lookup saved): on a request,
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
 * wakeup per record (an IPI; a VM exit in a guest) costs the traced program more than the rest
 * of the hit. Set by user space before load; 0 wakes on every record. */
const volatile __u64 wakeup_bytes = 0;

/* Whether response headers that do not end the stream (the HEADERS before the trailers) are
 * sent. Spans need only the request headers and the trailers; the response headers carry
 * :status and custom metadata, wanted only when user space captures extra header names.
 * Without them those 2 of a unary call's 6 hits return after a few reads. Set before load. */
const volatile __u8 capture_response_headers = 0;

/* The id of `content-type` in `header_names` (set before load): an HTTP/2 server's request
 * is recorded only when it is gRPC. */
const volatile __u8 content_type_id = 255;

/* The ids of `:path`, `grpc-status` and `grpc-message` in `header_names` (set before load): the
 * streams set's records carry the method and the status as those fields, read from grpc-go's
 * structs instead of a HEADERS block (streams.bpf.h). */
const volatile __u8 path_id = 255;
const volatile __u8 grpc_status_id = 255;
const volatile __u8 grpc_message_id = 255;

/* Keeps the contract's types in the object's BTF, where the Java side is generated from. */
const volatile struct gospan_contract *unused_contract __attribute__((unused));

/* Clamps a 64-bit size to [0, max] in a way the verifier sees: clang would otherwise
 * drop a check it has already proven, and the verifier would lose the bound. */
_Static_assert(GOSPAN_VALUE_LEN == 124 && GOSPAN_NAME_LEN == 32 && sizeof(struct header_event) == 1504,
	       "VERIFIER_CLAMP literals below");
#define VERIFIER_CLAMP(var, max) \
	asm volatile("if %[v] <= " #max " goto +1; %[v] = " #max : [v] "+r"(var))

/* A kfunc of kernels >= 6.2: a kernel address as a read-only BTF pointer, so the kernel
 * structs behind it are read with direct loads instead of one bpf_probe_read_kernel each.
 * Weak: NULL where the kernel lacks it (then the CO-RE path runs). */
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

/* By concern, each using what the ones before it define: */
#include "process.bpf.h"    /* the traced binary and the connection's socket; exec notices */
#include "headers.bpf.h"    /* header fields, records, a received HEADERS frame */
#include "transport.bpf.h"  /* grpc-go's transport: writeHeader, operateHeaders */
#include "serve_http.bpf.h" /* the ServeHTTP path: processHeaders, the trailers' encoding */
#include "propagation.bpf.h" /* in-process propagation: handleStream, NewStream's returns (and the
			      * streams set's client start) */
#include "streams.bpf.h"    /* the streams set's ends: closeStream, writeStatus */
