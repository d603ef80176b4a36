package dispatch

// serveAttach answers ATTACH_SESSION (an Iggo extension, session.Manager.Attach):
// it binds the connection to the caller's existing session. The reply is
// the login reply's payload (user id, session epoch, server version); a
// refusal is the login's eviction, or status 58 while this node does not
// know the session yet.
func (d *Dispatcher) serveAttach(x *Exchange) {
	res := d.sessions.Attach(x.Conn, x.Header.Client, x.Body)
	switch {
	case res.Evict != 0:
		x.Evict(res.Evict)
	case res.Status != 0:
		x.Deny(res.Status)
	default:
		x.Reply(res.Reply.AppendTo(x.Scratch()))
	}
}
