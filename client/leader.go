package client

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// errFollowLeader closes a live connection so that the reconnect cycle
// moves the client to the cluster leader; the requests in flight on it
// are resent there with their request numbers.
var errFollowLeader = errors.New("moving to the cluster leader")

// exchange sends cl on cn alone (it never moves to another connection)
// and waits for its reply or ctx.
func (c *Client) exchange(ctx context.Context, cn *conn, cl *call) error {
	cl.noRetry = true
	if !cn.enqueue(cl) {
		return &ConnError{Err: cn.err()}
	}
	select {
	case <-cl.done:
	case <-ctx.Done():
		cl.abandoned.Store(true)
		return ctx.Err()
	}
	return cl.err
}

// readMetadata reads GET_CLUSTER_METADATA on cn.
func (c *Client) readMetadata(ctx context.Context, cn *conn) (*wire.ClusterMetadata, error) {
	cl := newCall(wire.CmdGetClusterMetadata, 0)
	cl.seal(c.id)
	if err := c.exchange(ctx, cn, cl); err != nil {
		return nil, err
	}
	payload, err := cl.result()
	if err != nil {
		return nil, err
	}
	var md wire.ClusterMetadata
	if err := md.Decode(payload); err != nil {
		return nil, &ProtocolError{Reason: "undecodable GET_CLUSTER_METADATA reply: " + err.Error()}
	}
	return &md, nil
}

// scheme is the connection-string name of the transport in use.
func (c *Client) scheme() string {
	if c.opts.transport != nil {
		return c.opts.transport.Scheme()
	}
	return SchemeTCP
}

// nodeAddr is the address of node n for the transport in use ("" when
// the node does not serve it).
func nodeAddr(n *wire.ClusterNode, scheme string) string {
	return endpoint(n.IP, scheme, n.TCPPort, n.QUICPort, n.WebSocketPort)
}

// endpoint is host joined with the port of the transport scheme names
// ("" when the host is unknown or the node does not serve it).
func endpoint(host, scheme string, tcp, quic, ws uint16) string {
	port := tcp
	switch scheme {
	case SchemeQUIC:
		port = quic
	case SchemeWS:
		port = ws
	}
	if port == 0 || host == "" {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// learnRoster records the healthy nodes of md as reconnect candidates and
// tells the router whether it talks to a cluster. A single-node reply is
// no cluster and leaves nothing to learn.
func (c *Client) learnRoster(md *wire.ClusterMetadata) {
	c.router.setClustered(len(md.Nodes) > 1)
	if len(md.Nodes) <= 1 {
		return
	}
	scheme := c.scheme()
	var roster []string
	for i := range md.Nodes {
		n := &md.Nodes[i]
		if a := nodeAddr(n, scheme); a != "" && n.Status == wire.ClusterNodeHealthy {
			roster = append(roster, a)
		}
	}
	c.mu.Lock()
	c.roster = roster
	c.mu.Unlock()
}

// findLeader reads the cluster metadata on cn and returns the address of
// the leader for the transport in use. It reports false, meaning "stay",
// when the metadata cannot be read, lists one node, or names a leader
// without a port for this transport; while it names no leader it is
// polled every LeaderlessPoll for up to LeaderlessWait.
func (c *Client) findLeader(ctx context.Context, cn *conn) (string, bool) {
	p := c.opts.cluster
	deadline := time.Now().Add(p.LeaderlessWait)
	for {
		md, err := c.readMetadata(ctx, cn)
		if err != nil {
			c.opts.logger.Debug("iggy cluster metadata unavailable, staying", "addr", cn.addr, "err", err)
			return "", false
		}
		c.learnRoster(md)
		if len(md.Nodes) <= 1 {
			return "", false
		}
		for i := range md.Nodes {
			if n := &md.Nodes[i]; n.Role == wire.ClusterLeader && n.Status == wire.ClusterNodeHealthy {
				a := nodeAddr(n, c.scheme())
				return a, a != ""
			}
		}
		if !time.Now().Add(p.LeaderlessPoll).Before(deadline) {
			c.opts.logger.Debug("iggy cluster reports no leader, staying", "addr", cn.addr)
			return "", false
		}
		if sleep(ctx, p.LeaderlessPoll) != nil {
			return "", false
		}
	}
}

// settle runs after a login on the unpublished connection cn: it follows
// the leader the metadata names, at most MaxRedirects times, and returns
// the connection to use (cn itself, or one to the leader; the ones left
// are closed). A leader that cannot be reached or logged in to leaves the
// client where it is.
func (c *Client) settle(ctx context.Context, cn *conn, cr *credentials) *conn {
	if c.opts.cluster.DisableRedirect {
		return cn
	}
	for redirects := 0; ; redirects++ {
		leader, ok := c.findLeader(ctx, cn)
		if !ok || sameAddr(leader, cn.addr) {
			return cn
		}
		if redirects == c.opts.cluster.MaxRedirects {
			c.opts.logger.Debug("iggy redirect limit reached, staying", "addr", cn.addr, "leader", leader, "redirects", redirects)
			return cn
		}
		c.opts.logger.Debug("following cluster leader", "from", cn.addr, "to", leader)
		next, err := c.open(ctx, leader, cr)
		if err != nil {
			c.opts.logger.Debug("iggy cluster leader unreachable, staying", "addr", cn.addr, "leader", leader, "err", err)
			return cn
		}
		cn.shutdown(errFollowLeader)
		<-cn.dead
		cn = next
	}
}

// leaderElsewhere reports the leader's address when the metadata read on
// the live connection cn names one at another address.
func (c *Client) leaderElsewhere(ctx context.Context, cn *conn) (string, bool) {
	if c.opts.cluster.DisableRedirect || c.opts.reconnect.Disabled {
		return "", false
	}
	leader, ok := c.findLeader(ctx, cn)
	if !ok || sameAddr(leader, cn.addr) {
		return "", false
	}
	return leader, true
}

// moveTo closes the live connection cn so that the reconnect cycle dials
// leader first (then the usual candidates). Requests in flight on cn are
// resent on the new connection with their request numbers; the new login
// settles on the leader again. It reports false when cn is no longer the
// live connection.
func (c *Client) moveTo(cn *conn, leader string) bool {
	c.mu.Lock()
	if c.cn != cn || c.closed {
		c.mu.Unlock()
		return false
	}
	c.next = leader
	c.mu.Unlock()
	c.opts.logger.Debug("following cluster leader", "from", cn.addr, "to", leader)
	cn.shutdown(errFollowLeader)
	return true
}

// recheckLeader is the failover check after a run of 58s on a request:
// when the metadata names a leader elsewhere, the client moves there and
// the caller's resend waits for the new connection.
func (c *Client) recheckLeader(ctx context.Context) {
	c.mu.Lock()
	cn := c.cn
	c.mu.Unlock()
	if cn == nil {
		return // a reconnect is already choosing the node
	}
	ctx, cancel := context.WithTimeout(ctx, c.opts.cluster.LeaderlessWait+DefaultDialTimeout)
	defer cancel()
	if leader, ok := c.leaderElsewhere(ctx, cn); ok {
		c.moveTo(cn, leader)
	}
}
