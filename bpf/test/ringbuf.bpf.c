// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Test fixture (RingBufferIT): writes records of varying length into a small ring buffer, each
 * run of the program one record, so the Java reader of the mapped pages can be compared with
 * libbpf's own consumer on real kernel output: order, lengths not a multiple of 8, wrap-around,
 * discarded records (reserved, then discarded), and, with a producer running while the reader
 * reads, records still being written (the busy bit). Run through BPF_PROG_TEST_RUN. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";

#define MAX_RECORD 400

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 14); /* bytes; the test may resize before load */
} records SEC(".maps");

struct record {
	__u64 seq;
	__u8 fill[MAX_RECORD - 8];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct record);
} scratch SEC(".maps");

/* [0] records attempted (the next sequence number), [1] records the ring buffer had no room
 * for, [2] records reserved, then discarded */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

static __always_inline void add(__u32 i)
{
	__u64 *c = bpf_map_lookup_elem(&counts, &i);

	if (c)
		__sync_fetch_and_add(c, 1);
}

/* Every discard_every-th record is discarded (0: none). */
const volatile __u32 discard_every = 0;

/* The record of sequence number n: 8 + (n * 37) % (MAX_RECORD - 7) bytes (8..400), its seq then
 * bytes (n + i) & 0xff. */
SEC("raw_tp")
int write_record(void *ctx)
{
	__u32 zero = 0;
	__u64 *next = bpf_map_lookup_elem(&counts, &zero);
	struct record *r;
	__u64 len, n;

	if (!next)
		return 0;
	n = __sync_fetch_and_add(next, 1);

	if (discard_every && n % discard_every == discard_every - 1) {
		__u64 *d = bpf_ringbuf_reserve(&records, 64, 0);

		if (!d) {
			add(1);
			return 0;
		}
		*d = n;
		bpf_ringbuf_discard(d, BPF_RB_NO_WAKEUP);
		add(2);
		return 0;
	}
	r = bpf_map_lookup_elem(&scratch, &zero);
	if (!r)
		return 0;
	r->seq = n;
	for (int i = 0; i < MAX_RECORD - 8; i++)
		r->fill[i] = (n + i) & 0xff;
	len = 8 + (n * 37) % (MAX_RECORD - 7);
	asm volatile("" : "+r"(len)); /* clang knows the bound; the verifier is told by the check */
	if (len > MAX_RECORD)
		return 0;
	if (bpf_ringbuf_output(&records, r, len, BPF_RB_NO_WAKEUP))
		add(1);
	return 0;
}
