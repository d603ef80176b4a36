package session

import "context"

// ForwardedConn returns a connection that stands for a client of another
// cluster node whose request that node forwarded here (a partition
// request sent to a node that does not lead the partition): bound to b
// (the caller's user, client id and session epoch, checked by the node
// the client is connected to) without a login. Its Context is ctx, which
// bounds the forwarded request. It is not in any manager's registry.
func ForwardedConn(ctx context.Context, b Binding, addr string) *Conn {
	c := &Conn{Addr: addr, ctx: ctx}
	c.setBinding(b)
	return c
}
