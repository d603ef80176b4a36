package client

import (
	"errors"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// replay paces the retries of one request answered with transient
// rejections (RetryPolicy) and says when a run of 58s has lasted long
// enough to re-check the cluster leader (ClusterPolicy.FailoverCheck).
// It is owned by the goroutine retrying the request.
type replay struct {
	pol      RetryPolicy
	failover time.Duration // 0: never re-check (logins, leader following off)
	deadline time.Time     // end of the request budget
	attempts int
	pause    time.Duration
	since58  time.Time // start of the current run of 58 answers; zero when none
}

// newReplay starts the retry state of a request sent now. A login never
// re-checks the leader: it gets the whole budget on its connection
// (cluster-contract.md §3).
func (c *Client) newReplay(login bool) *replay {
	r := &replay{pol: c.opts.transient, pause: c.opts.transient.InitialBackoff}
	r.deadline = time.Now().Add(r.pol.Budget)
	if !login && !c.opts.cluster.DisableRedirect {
		r.failover = c.opts.cluster.FailoverCheck
	}
	return r
}

// next is called after the request was answered with the transient
// rejection err. It returns the pause before the identical frame is sent
// again, whether the leader should be re-checked first, and false when
// the request must give up and return err (retries disabled, MaxAttempts
// reached, or the pause would end past the budget).
func (r *replay) next(err error) (pause time.Duration, recheck, ok bool) {
	now := time.Now()
	if r.pol.MaxAttempts < 0 || r.pol.MaxAttempts > 0 && r.attempts >= r.pol.MaxAttempts {
		return 0, false, false
	}
	pause = r.pause
	if now.Add(pause).After(r.deadline) {
		return 0, false, false
	}
	r.attempts++
	r.pause = min(2*r.pause, r.pol.MaxBackoff)
	switch {
	case !errors.Is(err, wire.ErrTransientNotAccepted) || r.failover <= 0:
		r.since58 = time.Time{}
	case r.since58.IsZero():
		r.since58 = now
	case now.Sub(r.since58) >= r.failover:
		recheck, r.since58 = true, now
	}
	return pause, recheck, true
}
