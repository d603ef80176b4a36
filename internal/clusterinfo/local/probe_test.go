package local

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestAgreed(t *testing.T) {
	down := errors.New("down")
	v := func(leaders ...int) []NodeView {
		out := make([]NodeView, len(leaders))
		for i, l := range leaders {
			if l == -2 {
				out[i] = NodeView{Err: down, Leader: -1}
				continue
			}
			out[i] = NodeView{Leader: l}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		views []NodeView
		skip  []int
		want  int
	}{
		{"all agree on 0", v(0, 0, 0), nil, 0},
		{"one follower does not know yet", v(1, 1, -1), nil, 1},
		{"leader does not claim itself", v(-1, 0, 0), nil, -1},
		{"disagreement", v(0, 1, 1), nil, -1},
		{"leader down", v(-2, 0, 0), nil, -1},
		{"down follower ignored", v(0, -2, 0), nil, 0},
		{"nobody knows", v(-1, -1, -1), nil, -1},
		{"skipped stale node", v(0, 1, 1), []int{0}, 1},
		{"skipped leader", v(1, 1, 1), []int{1}, -1},
		{"all down", v(-2, -2, -2), nil, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Agreed(tc.views, tc.skip...); got != tc.want {
				t.Fatalf("Agreed = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestReasonNamesTheCauseOnce(t *testing.T) {
	const addr = "127.0.0.1:1"
	_, err := Dial(t.Context(), addr)
	if err == nil {
		t.Skip("something listens on port 1")
	}
	if got := Reason(err, addr); got != "dial: connection refused" {
		t.Fatalf("Reason(%q) = %q", err, got)
	}
	wrapped := fmt.Errorf("login at %s: %w", addr, &ServerError{Code: 42})
	if got := Reason(wrapped, addr); strings.Contains(got, addr) || !strings.HasPrefix(got, "login: ") {
		t.Fatalf("Reason(%q) = %q", wrapped, got)
	}
}
