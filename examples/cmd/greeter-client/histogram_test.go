package main

import (
	"math"
	"testing"
)

func TestBucketRoundTrip(t *testing.T) {
	for _, v := range []uint64{0, 1, 63, 64, 127, 128, 129, 1000, 12345, 1 << 20, 1<<40 + 12345, math.MaxInt64} {
		got := uint64(bucketValue(bucketOf(v)))
		if v < 128 {
			if got != v {
				t.Errorf("value %d: bucket value %d, want exact", v, got)
			}
			continue
		}
		if rel := math.Abs(float64(got)-float64(v)) / float64(v); rel > 1.0/64 {
			t.Errorf("value %d: bucket value %d, off by %.3f%%", v, got, 100*rel)
		}
	}
}

func TestBucketsAreMonotonic(t *testing.T) {
	prev := -1
	for v := uint64(0); v < 1<<16; v++ {
		b := bucketOf(v)
		if b < prev || b > prev+1 {
			t.Fatalf("value %d: bucket %d after %d", v, b, prev)
		}
		prev = b
	}
}

func TestQuantiles(t *testing.T) {
	h := newHistogram()
	if h.quantile(0.5) != 0 {
		t.Error("empty histogram: want 0")
	}
	for v := int64(1); v <= 10000; v++ {
		h.add(v)
	}
	for _, c := range []struct {
		q    float64
		want float64
	}{{0.5, 5000}, {0.9, 9000}, {0.99, 9900}, {1, 10000}} {
		got := float64(h.quantile(c.q))
		if math.Abs(got-c.want)/c.want > 1.0/64 {
			t.Errorf("quantile %.2f = %v, want about %v", c.q, got, c.want)
		}
	}
	if h.max != 10000 {
		t.Errorf("max %d", h.max)
	}

	other := newHistogram()
	other.add(20000)
	h.merge(other)
	if h.total != 10001 || h.max != 20000 || h.quantile(1) != 20000 {
		t.Errorf("after merge: total %d, max %d, q1 %d", h.total, h.max, h.quantile(1))
	}
}
