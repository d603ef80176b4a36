package bench

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// exactPercentile is the nearest-rank percentile of sorted values.
func exactPercentile(sorted []uint64, p float64) uint64 {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

func TestHistogramBuckets(t *testing.T) {
	// Every bucket's lower bound maps back to it, buckets tile the line
	// without gaps, and none is wider than 2 × HistRelativeError of its
	// lower bound (so its middle is within HistRelativeError).
	next := uint64(0)
	for i := range histBuckets {
		lo, w := histBounds(i)
		if lo != next {
			t.Fatalf("bucket %d starts at %d, want %d", i, lo, next)
		}
		if histIndex(lo) != i || histIndex(lo+w-1) != i {
			t.Fatalf("bucket %d [%d, +%d) does not map back", i, lo, w)
		}
		if w > 1 && float64(w)/float64(lo) > 2*HistRelativeError {
			t.Fatalf("bucket %d width %d over %d", i, w, lo)
		}
		next = lo + w
		if next == 0 { // wrapped past 2^64-1: the last bucket
			if i != histBuckets-1 {
				t.Fatalf("bucket %d reaches 2^64 before the end", i)
			}
		}
	}
	if got := histIndex(math.MaxUint64); got != histBuckets-1 {
		t.Fatalf("max value in bucket %d, want %d", got, histBuckets-1)
	}
}

func TestHistogramPercentilesWithinError(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tc := range []struct {
		name string
		gen  func() uint64
		n    int
	}{
		{"small exact values", func() uint64 { return rng.Uint64N(256) }, 5000},
		{"uniform to 10ms", func() uint64 { return rng.Uint64N(uint64(10 * time.Millisecond)) }, 20000},
		{"lognormal latencies", func() uint64 { return uint64(math.Exp(rng.NormFloat64()*1.5 + 14)) }, 50000},
		{"bimodal with outliers", func() uint64 {
			switch x := rng.Float64(); {
			case x < 0.001:
				return uint64(time.Second) + rng.Uint64N(uint64(time.Second))
			case x < 0.5:
				return 200_000 + rng.Uint64N(10_000)
			default:
				return 3_000_000 + rng.Uint64N(1_000_000)
			}
		}, 30000},
		{"one value", func() uint64 { return 1234567 }, 10},
		{"huge values", func() uint64 { return math.MaxInt64 - rng.Uint64N(1<<40) }, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Histogram
			vals := make([]uint64, tc.n)
			var sum float64
			for i := range vals {
				vals[i] = tc.gen()
				sum += float64(vals[i])
				h.Record(time.Duration(vals[i]))
			}
			slices.Sort(vals)
			if h.Count() != uint64(tc.n) || uint64(h.Min()) != vals[0] || uint64(h.Max()) != vals[len(vals)-1] {
				t.Fatalf("count %d min %d max %d, want %d %d %d", h.Count(), h.Min(), h.Max(), tc.n, vals[0], vals[len(vals)-1])
			}
			if mean := sum / float64(tc.n); math.Abs(float64(h.Mean())-mean) > mean*1e-9+1 {
				t.Fatalf("mean %d, want %f", h.Mean(), mean)
			}
			for _, p := range []float64{0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 99.99, 100} {
				want := exactPercentile(vals, p)
				got := uint64(h.Percentile(p))
				if diff := math.Abs(float64(got) - float64(want)); diff > float64(want)*HistRelativeError {
					t.Errorf("p%g = %d, exact %d: relative error %.5f > %.5f", p, got, want, diff/float64(want), HistRelativeError)
				}
			}
		})
	}
}

func TestHistogramMergeEqualsRecordingAll(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var a, b, all Histogram
	for i := range 10000 {
		v := time.Duration(rng.Uint64N(1 << uint(10+i%30)))
		all.Record(v)
		if i%3 == 0 {
			a.Record(v)
		} else {
			b.Record(v)
		}
	}
	var m Histogram
	m.Merge(&a)
	m.Merge(&b)
	m.Merge(nil)
	m.Merge(&Histogram{})
	if !histEqual(&m, &all) {
		t.Fatal("merged histogram differs from one recording every value")
	}
}

func TestHistogramEmptyAndRecordN(t *testing.T) {
	var h Histogram
	if h.Percentile(50) != 0 || h.Mean() != 0 || h.Max() != 0 || h.Distribution() != nil {
		t.Fatal("empty histogram reports values")
	}
	h.RecordN(5*time.Millisecond, 0)
	if h.Count() != 0 {
		t.Fatal("RecordN with n = 0 counted")
	}
	h.RecordN(-time.Second, 2)
	h.RecordN(time.Millisecond, 98)
	if h.Count() != 100 || h.Min() != 0 || h.Percentile(2) != 0 || h.Percentile(3) == 0 {
		t.Fatalf("count %d min %v p2 %v p3 %v", h.Count(), h.Min(), h.Percentile(2), h.Percentile(3))
	}
	d := h.Distribution()
	if len(d) != 2 || d[1].Fraction != 1 || d[0].Fraction != 0.02 {
		t.Fatalf("distribution %v", d)
	}
}

func histEqual(a, b *Histogram) bool {
	if a.total != b.total || a.min != b.min || a.max != b.max || math.Abs(a.sum-b.sum) > 1e-6*math.Max(1, a.sum) {
		return false
	}
	for i := range histBuckets {
		var x, y uint64
		if a.counts != nil {
			x = a.counts[i]
		}
		if b.counts != nil {
			y = b.counts[i]
		}
		if x != y {
			return false
		}
	}
	return true
}

func TestHistogramJSONRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		vals []time.Duration
	}{
		{"empty", nil},
		{"one", []time.Duration{time.Millisecond}},
		{"spread", []time.Duration{1, 255, 256, 1000, time.Millisecond, time.Second, time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Histogram
			for _, v := range tc.vals {
				h.Record(v)
			}
			data, err := json.Marshal(&h)
			if err != nil {
				t.Fatal(err)
			}
			var back Histogram
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			if !histEqual(&h, &back) {
				t.Fatalf("round trip changed the histogram: %s", data)
			}
		})
	}
}

func TestHistogramJSONRejectsMalformed(t *testing.T) {
	for _, tc := range []struct{ name, json string }{
		{"other layout", `{"sub_bucket_bits":7,"unit":"ns","count":0,"buckets":[]}`},
		{"other unit", `{"sub_bucket_bits":8,"unit":"us","count":0,"buckets":[]}`},
		{"index out of range", `{"sub_bucket_bits":8,"unit":"ns","count":1,"min":1,"max":1,"buckets":[[99999,1]]}`},
		{"zero count bucket", `{"sub_bucket_bits":8,"unit":"ns","count":0,"buckets":[[3,0]]}`},
		{"counts disagree", `{"sub_bucket_bits":8,"unit":"ns","count":5,"min":3,"max":3,"buckets":[[3,1]]}`},
		{"count overflow", `{"sub_bucket_bits":8,"unit":"ns","count":0,"min":5,"max":6,"buckets":[[5,9223372036854775808],[6,9223372036854775808]]}`},
		{"min over max", `{"sub_bucket_bits":8,"unit":"ns","count":1,"min":9,"max":3,"buckets":[[3,1]]}`},
		{"not an object", `[1,2]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h Histogram
			err := json.Unmarshal([]byte(tc.json), &h)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(tc.name, "object") && !strings.Contains(err.Error(), "histogram") {
				t.Fatalf("error %v does not name the histogram", err)
			}
		})
	}
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	v := time.Duration(1)
	for b.Loop() {
		h.Record(v)
		v = (v*7 + 13) & (1<<30 - 1)
	}
}

// FuzzHistogramJSON: the stored form never panics the decoder or the
// readers, and what decodes re-encodes to the same histogram.
func FuzzHistogramJSON(f *testing.F) {
	var h Histogram
	for _, v := range []time.Duration{0, 1, 300, time.Millisecond, time.Hour} {
		h.Record(v)
	}
	seed, _ := json.Marshal(&h)
	f.Add(seed)
	f.Add([]byte(`{"sub_bucket_bits":8,"unit":"ns","count":0,"buckets":[]}`))
	f.Add([]byte(`{"sub_bucket_bits":8,"unit":"ns","count":2,"min":5,"max":5,"buckets":[[5,1],[5,1]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Histogram
		if err := json.Unmarshal(data, &h); err != nil {
			return
		}
		h.Percentile(50)
		h.Percentile(100)
		h.Distribution()
		h.Mean()
		again, err := json.Marshal(&h)
		if err != nil {
			t.Fatal(err)
		}
		var back Histogram
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("re-encoded form refused: %v\n%s", err, again)
		}
		if !histEqual(&h, &back) {
			t.Fatalf("round trip changed the histogram:\n%s\n%s", data, again)
		}
	})
}
