package stats

import "math/bits"

// Dist summarizes a distribution of non-negative integers (hops, ns).
type Dist struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean"`
	P50   int64   `json:"p50"`
	P99   int64   `json:"p99"`
	Max   int64   `json:"max"`
}

// hist is a log-linear histogram: values below 64 have a bucket each, and
// above that each power of two is cut in 32 buckets, so a quantile is off
// by less than 1/32 of its value. Its size is bounded (at most 1,900
// buckets for int64), whatever the number of samples.
type hist struct {
	counts   []int64
	n        int64
	sum      float64
	min, max int64
}

const subBits = 5 // 32 buckets per power of two above 64

func bucket(v int64) int {
	if v < 64 {
		return int(v)
	}
	s := bits.Len64(uint64(v)) - (subBits + 1) // v>>s is in [32, 64)
	return 64 + (s-1)<<subBits + int(v>>s) - 1<<subBits
}

// bounds returns the smallest and largest value of bucket i.
func bounds(i int) (lo, hi int64) {
	if i < 64 {
		return int64(i), int64(i)
	}
	s := (i-64)>>subBits + 1
	m := int64((i-64)&(1<<subBits-1) + 1<<subBits)
	return m << s, (m+1)<<s - 1
}

func (h *hist) add(v int64) {
	v = max(v, 0)
	b := bucket(v)
	for b >= len(h.counts) {
		h.counts = append(h.counts, 0)
	}
	h.counts[b]++
	if h.n == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.n++
	h.sum += float64(v)
}

// quantile returns the q-quantile (0 < q <= 1): the middle of the bucket
// that holds it, kept within the exact minimum and maximum.
func (h *hist) quantile(q float64) int64 {
	rank := int64(q*float64(h.n) + 0.999999)
	rank = min(max(rank, 1), h.n)
	var seen int64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			lo, hi := bounds(i)
			return min(max(lo+(hi-lo)/2, h.min), h.max)
		}
	}
	return h.max
}

func (h *hist) dist() Dist {
	if h.n == 0 {
		return Dist{}
	}
	return Dist{Count: h.n, Mean: h.sum / float64(h.n), P50: h.quantile(0.5), P99: h.quantile(0.99), Max: h.max}
}
