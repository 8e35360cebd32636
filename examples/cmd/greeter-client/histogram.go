package main

import "math/bits"

// histogram counts non-negative values (latencies in µs) in log-linear
// buckets: exact below 64, then 64 buckets per power of two, so a quantile
// is off by at most 1/64 (1.6%) whatever the number of values, in constant
// memory (the client can run forever).
type histogram struct {
	counts []int64
	total  int64
	max    int64
}

const subBucketBits = 6 // 64 sub-buckets per power of two

func newHistogram() *histogram {
	return &histogram{counts: make([]int64, (64-subBucketBits+1)<<subBucketBits)}
}

// bucketOf maps v to its bucket: v itself below 64; above, the top 7 bits of
// v (64..127) and the shift that produced them.
func bucketOf(v uint64) int {
	if v < 1<<subBucketBits {
		return int(v)
	}
	shift := bits.Len64(v) - subBucketBits - 1
	return (shift+1)<<subBucketBits + int(v>>uint(shift)) - 1<<subBucketBits
}

// bucketValue is the middle of bucket b's range.
func bucketValue(b int) int64 {
	if b < 1<<subBucketBits {
		return int64(b)
	}
	shift := uint(b>>subBucketBits - 1)
	low := uint64(b&(1<<subBucketBits-1)+1<<subBucketBits) << shift
	return int64(low + (uint64(1)<<shift-1)/2)
}

func (h *histogram) add(v int64) {
	if v < 0 {
		v = 0
	}
	h.counts[bucketOf(uint64(v))]++
	h.total++
	if v > h.max {
		h.max = v
	}
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	if o.max > h.max {
		h.max = o.max
	}
}

// quantile returns the value at quantile q (0..1), 0 for no values.
func (h *histogram) quantile(q float64) int64 {
	if h.total == 0 {
		return 0
	}
	rank := int64(q*float64(h.total) + 0.5)
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			if v := bucketValue(b); v < h.max {
				return v
			}
			return h.max
		}
	}
	return h.max
}
