package bench

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"
)

// The histogram is log-linear, in the manner of HdrHistogram: values
// below 2^histSubBits are counted exactly; above, each power-of-two range
// [2^k, 2^(k+1)) is split into 2^(histSubBits-1) equal buckets, so a
// bucket is never wider than 1/2^(histSubBits-1) of its lower bound.
// Reporting the middle of a bucket then bounds the relative error of any
// percentile (and of Min, Max, Mean, which are tracked exactly anyway)
// by HistRelativeError. Written here instead of importing
// hdrhistogram-go, which is not in the module mirror list this project
// works from; the layout is the same idea with 2 significant decimal
// digits (HdrHistogram's "significant figures = 2" is 1/100, ours 1/256).
const (
	// histSubBits is log2 of the sub-buckets per power of two.
	histSubBits = 8
	histSub     = 1 << (histSubBits - 1) // buckets per octave above the exact range
	// histMaxExp is the number of octaves above the exact range: values
	// up to 2^63-1 ns (292 years) fit.
	histMaxExp = 64 - histSubBits
	// histBuckets is the length of the counts array.
	histBuckets = (histMaxExp + 2) * histSub
)

// HistRelativeError is the largest relative error of a value a
// Histogram reports for a percentile: half a bucket width over the
// bucket's lower bound, 1/2^histSubBits = 0.39 %.
const HistRelativeError = 1.0 / (1 << histSubBits)

// Histogram counts non-negative durations (recorded in nanoseconds) with
// bounded relative error. The zero value is ready to use. It is not safe
// for concurrent use: each actor records into its own and the run merges
// them at the end.
type Histogram struct {
	counts   []uint64 // allocated on first Record
	total    uint64
	min, max uint64
	sum      float64 // ns; float so long runs cannot overflow
}

// histIndex is the bucket of v.
func histIndex(v uint64) int {
	if v < 2*histSub {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits // >= 1
	return shift*histSub + int(v>>shift)
}

// histBounds returns the lowest value of bucket i and its width.
func histBounds(i int) (lo, width uint64) {
	if i < 2*histSub {
		return uint64(i), 1
	}
	shift := i/histSub - 1
	return uint64(i-shift*histSub) << shift, 1 << shift
}

// Record adds one value.
func (h *Histogram) Record(d time.Duration) { h.RecordN(d, 1) }

// RecordN adds n equal values (a batch whose messages share a latency).
// Negative durations count as 0.
func (h *Histogram) RecordN(d time.Duration, n uint64) {
	if n == 0 {
		return
	}
	v := uint64(max(d, 0))
	if h.counts == nil {
		h.counts = make([]uint64, histBuckets)
	}
	h.counts[histIndex(v)] += n
	if h.total == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.total += n
	h.sum += float64(v) * float64(n)
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 { return h.total }

// Min is the smallest recorded value (exact), 0 when empty.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Max is the largest recorded value (exact), 0 when empty.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean is the exact mean, 0 when empty.
func (h *Histogram) Mean() time.Duration {
	if h.total == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.total))
}

// Percentile returns the value at percentile p (0 < p <= 100) by the
// nearest-rank rule: the smallest recorded value v such that at least p %
// of the values are <= v, reported as the middle of its bucket (clamped
// to the exact Min and Max), so within HistRelativeError of the exact
// nearest-rank value. Empty: 0.
func (h *Histogram) Percentile(p float64) time.Duration {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(p / 100 * float64(h.total)))
	rank = min(max(rank, 1), h.total)
	var seen uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		if seen += c; seen >= rank {
			lo, w := histBounds(i)
			v := lo + (w-1)/2
			return time.Duration(min(max(v, h.min), h.max))
		}
	}
	return time.Duration(h.max)
}

// Merge adds every value of o.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.total == 0 {
		return
	}
	if h.counts == nil {
		h.counts = make([]uint64, histBuckets)
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	h.max = max(h.max, o.max)
	h.total += o.total
	h.sum += o.sum
}

// Point is one step of a cumulative distribution: Fraction of the values
// are <= Value.
type Point struct {
	Value    time.Duration
	Fraction float64
}

// Distribution returns the cumulative distribution, one point per
// non-empty bucket (the bucket's upper value, clamped to Max).
func (h *Histogram) Distribution() []Point {
	var out []Point
	var seen uint64
	for i, c := range h.counts {
		if c == 0 {
			continue
		}
		seen += c
		lo, w := histBounds(i)
		out = append(out, Point{Value: time.Duration(min(lo+w-1, h.max)), Fraction: float64(seen) / float64(h.total)})
	}
	return out
}

// histJSON is the stored form: the non-empty buckets as [index, count]
// pairs, so a result file can be re-analysed or merged later.
type histJSON struct {
	SubBits int         `json:"sub_bucket_bits"`
	Unit    string      `json:"unit"`
	Count   uint64      `json:"count"`
	Min     uint64      `json:"min"`
	Max     uint64      `json:"max"`
	Sum     float64     `json:"sum"`
	Buckets [][2]uint64 `json:"buckets"`
}

// MarshalJSON stores the histogram sparsely.
func (h *Histogram) MarshalJSON() ([]byte, error) {
	j := histJSON{SubBits: histSubBits, Unit: "ns", Count: h.total, Min: h.min, Max: h.max, Sum: h.sum, Buckets: [][2]uint64{}}
	for i, c := range h.counts {
		if c != 0 {
			j.Buckets = append(j.Buckets, [2]uint64{uint64(i), c})
		}
	}
	return json.Marshal(j)
}

var errHistJSON = errors.New("histogram: malformed stored form")

// UnmarshalJSON reads the stored form, checking the layout matches and
// the bucket counts add up.
func (h *Histogram) UnmarshalJSON(b []byte) error {
	var j histJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	if j.SubBits != histSubBits || j.Unit != "ns" {
		return fmt.Errorf("%w: sub_bucket_bits %d unit %q", errHistJSON, j.SubBits, j.Unit)
	}
	var n Histogram
	var total uint64
	for _, b := range j.Buckets {
		if b[0] >= histBuckets || b[1] == 0 || total+b[1] < total {
			return fmt.Errorf("%w: bucket %v", errHistJSON, b)
		}
		if n.counts == nil {
			n.counts = make([]uint64, histBuckets)
		}
		n.counts[b[0]] += b[1]
		total += b[1]
	}
	if total != j.Count || j.Min > j.Max {
		return fmt.Errorf("%w: counts %d, header %d", errHistJSON, total, j.Count)
	}
	n.total, n.min, n.max, n.sum = j.Count, j.Min, j.Max, j.Sum
	*h = n
	return nil
}
