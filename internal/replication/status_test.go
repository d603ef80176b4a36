package replication

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

func TestTransient(t *testing.T) {
	const (
		unknown  = 57 // wire.ErrTransientNotCommitted
		accepted = 58 // wire.ErrTransientNotAccepted: "not accepted"
		none     = 0
	)
	if wire.ErrTransientNotCommitted.Code != unknown || wire.ErrTransientNotAccepted.Code != accepted {
		t.Fatal("the transient status codes moved")
	}
	wrap := func(err error) error { return fmt.Errorf("propose to group 3: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want uint32 // none: ok is false
	}{
		{"nil", nil, none},
		{"stopped", ErrStopped, accepted},
		{"unknown group", ErrUnknownGroup, accepted},
		{"group exists", ErrGroupExists, none},
		{"group removed", ErrGroupRemoved, accepted},
		{"not leader", ErrNotLeader, accepted},
		{"not leader error", &NotLeaderError{Group: 3, Leader: 1, HasLeader: true}, accepted},
		{"proposal dropped", ErrProposalDropped, accepted},
		{"proposal lost", ErrProposalLost, accepted},
		{"outcome unknown", ErrOutcomeUnknown, unknown},
		{"storage", ErrStorage, none},
		{"log lost", ErrLogLost, none},
		{"compact range", ErrCompactRange, none},
		{"compact conf", ErrCompactConf, none},
		{"refused", ErrRefused, accepted},
		{"pending", ErrPending, unknown},
		{"wrapped stopped", wrap(ErrStopped), accepted},
		{"wrapped unknown group", wrap(ErrUnknownGroup), accepted},
		{"wrapped not leader error", wrap(&NotLeaderError{Group: 3}), accepted},
		{"wrapped dropped", wrap(ErrProposalDropped), accepted},
		{"wrapped lost", wrap(ErrProposalLost), accepted},
		{"wrapped outcome unknown", wrap(fmt.Errorf("%w: entry not found in the log", ErrOutcomeUnknown)), unknown},
		{"wrapped storage", wrap(fmt.Errorf("%w: append: disk full", ErrStorage)), none},
		{"early append failure", wrap(fmt.Errorf("%w: %w: append: disk full", ErrOutcomeUnknown, ErrStorage)), unknown},
		{"deadline before admission", wrap(context.DeadlineExceeded), accepted},
		{"canceled before admission", wrap(context.Canceled), accepted},
		{"deadline after admission", wrap(fmt.Errorf("%w: %w", ErrOutcomeUnknown, context.DeadlineExceeded)), unknown},
		{"canceled after admission", wrap(fmt.Errorf("%w: %w", ErrOutcomeUnknown, context.Canceled)), unknown},
		{"stopped after admission", wrap(fmt.Errorf("%w: %w", ErrOutcomeUnknown, ErrStopped)), unknown},
		{"removed after admission", fmt.Errorf("%w: %w", ErrOutcomeUnknown, ErrGroupRemoved), unknown},
		{"prepare refused", wrap(fmt.Errorf("stamp batch: %w: partition replaying its log", ErrRefused)), accepted},
		{"prepare pending", wrap(fmt.Errorf("stamp batch: %w: request 7 of client 9", ErrPending)), unknown},
		{"pending and refused", errors.Join(ErrRefused, ErrPending), unknown},
		{"unknown and not leader", errors.Join(ErrNotLeader, ErrOutcomeUnknown), unknown},
		{"prepare error of its own", wrap(errors.New("batch too large")), none},
		{"unknown error", errors.New("something else"), none},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, ok := Transient(tc.err)
			if ok != (tc.want != none) || code != tc.want {
				t.Fatalf("Transient(%v) = %d, %v; want %d, %v", tc.err, code, ok, tc.want, tc.want != none)
			}
		})
	}
}

// TestContextEndedBeforeAdmission: a proposal whose context ends while
// the loop is busy gets a bare context error (58), and the loop never
// runs it afterwards.
func TestContextEndedBeforeAdmission(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCluster(t, 1, 41, nil)
		c.addGroupOn(0, 1, GroupOptions{Voters: []NodeID{0}})
		h := c.hosts[0]
		ctx := contextWithTimeout(t, 10*time.Second)
		if _, err := h.WaitFor(ctx, 1, func(v View) bool { return v.Role == RoleLeader }); err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		var once sync.Once
		free := func() { once.Do(func() { close(release) }) }
		t.Cleanup(free) // runs before the hosts close, should the test fail
		// The loop is busy until release.
		if err := h.do(ctx, func() { <-release }); err != nil {
			t.Fatal(err)
		}
		calls := map[string]func(context.Context) error{
			"propose": func(ctx context.Context) error { _, err := h.Propose(ctx, 1, []byte("propose-late")); return err },
			"forward": func(ctx context.Context) error { return h.Forward(ctx, 1, []byte("forward-late")) },
			"change membership": func(ctx context.Context) error {
				_, err := h.ChangeMembership(ctx, 1, []MemberChange{{AddLearner, 5}})
				return err
			},
		}
		for name, call := range calls {
			short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			err := call(short)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrOutcomeUnknown) {
				t.Fatalf("%s while the loop is busy: %v, want a bare deadline error", name, err)
			}
			if code, ok := Transient(err); !ok || code != wire.ErrTransientNotAccepted.Code {
				t.Fatalf("%s: Transient(%v) = %d, %v; want 58", name, err, code, ok)
			}
		}
		free()
		if _, err := h.Propose(ctx, 1, []byte("after")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		for _, e := range c.sms[0].entries(1) {
			if string(e.Data) != "after" {
				t.Fatalf("a proposal whose call had failed was applied: %q", e.Data)
			}
		}
		if v, _ := h.Status(1); len(v.Learners) != 0 {
			t.Fatalf("a membership change whose call had failed was applied: %+v", v)
		}
	})
}

// TestAdmittedProposalFailsUnknown: a proposal admitted by the leader but
// not committed when its group is removed, or its host stops, fails with
// ErrOutcomeUnknown (57): its entry may still commit elsewhere.
func TestAdmittedProposalFailsUnknown(t *testing.T) {
	for _, tc := range []struct {
		name  string
		end   func(h *Host) error
		cause error
	}{
		{"group removed", func(h *Host) error { return h.RemoveGroup(context.Background(), 1) }, ErrGroupRemoved},
		{"host stopped", func(h *Host) error { h.Close(); return nil }, ErrStopped},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c := newCluster(t, 3, 43, nil)
				c.addGroup(1)
				lead := c.leader(1, 10*time.Second)
				h := c.hosts[lead]
				ctx := contextWithTimeout(t, 10*time.Second)
				_, before, err := h.Progress(ctx, 1)
				if err != nil {
					t.Fatal(err)
				}
				for _, id := range c.ids {
					if id != lead {
						c.net.isolate(id, c.ids, true) // nothing commits
					}
				}
				errc := make(chan error, 1)
				go func() {
					_, err := h.Propose(context.Background(), 1, []byte("stranded"))
					errc <- err
				}()
				for { // until the leader appended the entry
					_, last, err := h.Progress(ctx, 1)
					if err != nil {
						t.Fatal(err)
					}
					if last > before {
						break
					}
					time.Sleep(testTiming.Tick)
				}
				if err := tc.end(h); err != nil {
					t.Fatal(err)
				}
				err = <-errc
				if !errors.Is(err, ErrOutcomeUnknown) || !errors.Is(err, tc.cause) {
					t.Fatalf("admitted proposal: %v, want %v wrapped in %v", err, tc.cause, ErrOutcomeUnknown)
				}
				if code, ok := Transient(err); !ok || code != wire.ErrTransientNotCommitted.Code {
					t.Fatalf("Transient(%v) = %d, %v; want 57", err, code, ok)
				}
			})
		})
	}
}
