package storage

import (
	"context"
	"time"
)

// pacer spreads reads at a rate of bytes per second: a token bucket that
// starts full with one second of tokens and fills with time. A zero or
// negative rate never waits.
type pacer struct {
	rate   int64
	now    func() time.Time
	sleep  func(ctx context.Context, d time.Duration) error
	tokens float64
	last   time.Time
}

func newPacer(rate int64, now func() time.Time, sleep func(context.Context, time.Duration) error) *pacer {
	return &pacer{rate: rate, now: now, sleep: sleep, tokens: float64(rate), last: now()}
}

// wait takes n bytes from the bucket, first waiting until it holds them
// (a request larger than the bucket waits until the bucket is full and
// then leaves it in debt, so the average rate holds).
func (pc *pacer) wait(ctx context.Context, n int64) error {
	if pc.rate <= 0 {
		return ctx.Err()
	}
	need := min(float64(n), float64(pc.rate))
	for {
		now := pc.now()
		pc.tokens = min(float64(pc.rate), pc.tokens+now.Sub(pc.last).Seconds()*float64(pc.rate))
		pc.last = now
		if pc.tokens >= need {
			pc.tokens -= float64(n)
			return ctx.Err()
		}
		d := time.Duration((need - pc.tokens) / float64(pc.rate) * float64(time.Second))
		if err := pc.sleep(ctx, max(d, time.Millisecond)); err != nil {
			return err
		}
	}
}

// sleepCtx sleeps for d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
