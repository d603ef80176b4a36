package client

import (
	"context"
	"errors"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// attachBudget bounds the transient retries of one ATTACH_SESSION (a
// node that has not applied the client's login yet answers 58).
const attachBudget = 5 * time.Second

// errNoSession refuses a node dial while the client is not logged in.
var errNoSession = errors.New("not logged in")

// loginBody encodes the login body of cr (password or token).
func (c *Client) loginBody(cr *credentials) []byte {
	version := wire.ClientVersionInfo{ProtocolVersion: wire.ProtocolVersion, SDKName: c.opts.sdkName, SDKVersion: c.opts.sdkVersion}
	if cr.token != "" {
		body := wire.LoginRegisterWithPAT{Version: version, Token: cr.token}
		return body.AppendTo(nil)
	}
	body := wire.LoginRegister{Version: version, Username: cr.username, Password: cr.password}
	return body.AppendTo(nil)
}

// openAttached dials addr for partition routing and attaches the
// connection to the main connection's session: same credentials, TLS,
// transport and client id, no new session epoch. The connection hands
// its unfinished calls to the router when it closes.
func (c *Client) openAttached(ctx context.Context, addr string) (*conn, error) {
	c.mu.Lock()
	cr, main := c.creds, c.cn
	c.mu.Unlock()
	if cr == nil || main == nil || main.session.Load() == 0 {
		return nil, errNoSession
	}
	session := main.session.Load()
	nc, err := c.dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	cn := newConn(c, nc, addr)
	cn.node = true
	cn.start()
	if err := c.attach(ctx, cn, cr, session); err != nil {
		cn.shutdown(err)
		<-cn.dead
		return nil, err
	}
	return cn, nil
}

// attach sends ATTACH_SESSION on cn for session with cr's credentials and
// records the session on cn. 58 (the node has not applied the login yet)
// is retried with the identical frame for up to attachBudget.
func (c *Client) attach(ctx context.Context, cn *conn, cr *credentials, session uint64) error {
	a := wire.AttachSession{Session: session, Login: c.loginBody(cr)}
	cl := newCall(wire.CmdAttachSession, 8+len(a.Login))
	cl.frame = a.AppendTo(cl.frame)
	cl.seal(c.id)
	deadline := time.Now().Add(attachBudget)
	pause := c.opts.transient.InitialBackoff
	for {
		if err := c.exchange(ctx, cn, cl); err != nil {
			return err
		}
		payload, err := cl.result()
		if err != nil {
			if !isTransient(err) || time.Now().Add(pause).After(deadline) {
				return err
			}
			if err := sleep(ctx, pause); err != nil {
				return err
			}
			pause = min(2*pause, c.opts.transient.MaxBackoff)
			cl.rearm()
			continue
		}
		var r wire.LoginRegisterReply
		if err := r.Decode(payload); err != nil {
			return &ProtocolError{Reason: "undecodable ATTACH_SESSION reply: " + err.Error()}
		}
		cn.session.Store(r.Session)
		return nil
	}
}

// ClusterPartitions reads the partition map of an Iggo cluster
// (CLUSTER_PARTITIONS, an Iggo extension): every node with its client
// addresses, and per partition its replicas, its leader and the replicas
// the answering node knows to be caught up (only a partition's leader
// knows). The topics listed are those the user may read, poll or send to
// (all with read_servers). A single node answers
// wire.ErrFeatureUnavailable, other servers wire.ErrInvalidCommand.
func (c *Client) ClusterPartitions(ctx context.Context) (*wire.PartitionMap, error) {
	var m wire.PartitionMap
	if err := c.call(ctx, wire.CmdClusterPartitions, &wire.ClusterPartitions{}, &m); err != nil {
		return nil, err
	}
	return &m, nil
}
