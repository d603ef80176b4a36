package local

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// NodeView is what one node answered to GET_CLUSTER_METADATA.
type NodeView struct {
	// Addr is the node's client address.
	Addr string
	// Err is set when the node could not be reached, refused the login or
	// the request; Metadata is then empty.
	Err      error
	Metadata wire.ClusterMetadata
	// Leader is the roster position of the node it reports as Leader, or
	// -1.
	Leader int
}

// Survey asks every address for GET_CLUSTER_METADATA (after a root login),
// each bounded by perNode, all at once. A node whose metadata does not list
// len(addrs) nodes (e.g. a server not in cluster mode) counts as an error.
func Survey(ctx context.Context, addrs []string, perNode time.Duration) []NodeView {
	out := make([]NodeView, len(addrs))
	done := make(chan struct{}, len(addrs))
	for i, a := range addrs {
		go func() {
			defer func() { done <- struct{}{} }()
			out[i] = NodeView{Addr: a, Leader: -1}
			nctx, cancel := context.WithTimeout(ctx, perNode)
			defer cancel()
			m, err := FetchMetadata(nctx, a, perNode)
			if err != nil {
				out[i].Err = err
				return
			}
			if len(m.Nodes) != len(addrs) {
				out[i].Err = fmt.Errorf("%s reports %d nodes (cluster %q), want %d: not running this cluster", a, len(m.Nodes), m.Name, len(addrs))
				return
			}
			out[i].Metadata, out[i].Leader = m, LeaderIndex(m)
		}()
	}
	for range addrs {
		<-done
	}
	return out
}

// FetchMetadata dials addr, logs in as root and reads the cluster
// metadata, each request bounded by timeout.
func FetchMetadata(ctx context.Context, addr string, timeout time.Duration) (wire.ClusterMetadata, error) {
	c, err := Dial(ctx, addr)
	if err != nil {
		return wire.ClusterMetadata{}, err
	}
	defer c.Close()
	c.Timeout = timeout
	if err := c.Login(RootUsername, RootPassword); err != nil {
		return wire.ClusterMetadata{}, fmt.Errorf("login at %s: %w", addr, err)
	}
	m, err := c.ClusterMetadata()
	if err != nil {
		return m, fmt.Errorf("cluster metadata from %s: %w", addr, err)
	}
	return m, nil
}

// Agreed returns the roster position of the leader when the node at that
// position reports itself as Leader and no reachable node names another
// one; -1 otherwise. Nodes among skip (by position) are not consulted and
// are never the answer (a stopped or stale node).
func Agreed(views []NodeView, skip ...int) int {
	leader := -1
	for i, v := range views {
		if contains(skip, i) || v.Err != nil {
			continue
		}
		if v.Leader >= 0 {
			if leader >= 0 && leader != v.Leader {
				return -1
			}
			leader = v.Leader
		}
	}
	if leader < 0 || leader >= len(views) || contains(skip, leader) || views[leader].Err != nil || views[leader].Leader != leader {
		return -1
	}
	return leader
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// ErrNoLeader is returned by WaitLeader when no leader was agreed on in
// time.
var ErrNoLeader = errors.New("no leader reported")

// WaitLeader surveys addrs every interval until Agreed finds a leader
// (ignoring the positions in skip) and returns its position with the last
// survey. It gives up when ctx ends (ErrNoLeader wrapped with the last
// survey's errors).
func WaitLeader(ctx context.Context, addrs []string, interval time.Duration, skip ...int) (int, []NodeView, error) {
	return waitLeader(ctx, addrs, interval, false, skip)
}

// WaitReady is WaitLeader that also waits until every node answers.
func WaitReady(ctx context.Context, addrs []string, interval time.Duration) (int, []NodeView, error) {
	return waitLeader(ctx, addrs, interval, true, nil)
}

func waitLeader(ctx context.Context, addrs []string, interval time.Duration, all bool, skip []int) (int, []NodeView, error) {
	for {
		views := Survey(ctx, addrs, 2*time.Second)
		if l := Agreed(views, skip...); l >= 0 && (!all || allUp(views)) {
			return l, views, nil
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return -1, views, fmt.Errorf("%w: %s", ErrNoLeader, describe(views))
		case <-t.C:
		}
	}
}

// describe summarizes a survey for an error message.
func describe(views []NodeView) string {
	s := ""
	for i, v := range views {
		if i > 0 {
			s += "; "
		}
		switch {
		case v.Err != nil:
			s += fmt.Sprintf("%s: %v", v.Addr, v.Err)
		case v.Leader < 0:
			s += fmt.Sprintf("%s: no leader", v.Addr)
		default:
			s += fmt.Sprintf("%s: leader %s", v.Addr, v.Metadata.Nodes[v.Leader].Name)
		}
	}
	return s
}

func allUp(views []NodeView) bool {
	for _, v := range views {
		if v.Err != nil {
			return false
		}
	}
	return true
}
