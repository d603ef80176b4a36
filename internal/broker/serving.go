package broker

// Serving is closed once Run has started serving on every listener and
// logged each one's "listening" line: a caller announcing readiness
// waits for it, so its announcement comes last. It stays open when Run
// ends before (Shutdown first, or a second Run).
func (b *Broker) Serving() <-chan struct{} { return b.serving }
