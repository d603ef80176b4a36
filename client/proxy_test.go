package client_test

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

// proxy forwards frames between clients and a server and can break a
// connection at a chosen reply: drop reports whether to close both sides
// instead of forwarding a reply to the client (after the server executed
// the request). It records every request header it forwarded.
type proxy struct {
	t      testing.TB
	ln     net.Listener
	target string
	drop   func(wire.ReplyHeader) bool

	mu    sync.Mutex
	reqs  []proxied // guarded by mu
	conns int       // guarded by mu
	wg    sync.WaitGroup
}

type proxied struct {
	Conn int
	Hdr  wire.RequestHeader
	Body []byte
}

func newProxy(t testing.TB, target string, drop func(wire.ReplyHeader) bool) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, ln: ln, target: target, drop: drop}
	var live []net.Conn
	var liveMu sync.Mutex
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			cc, err := ln.Accept()
			if err != nil {
				return
			}
			sc, err := net.Dial("tcp", target)
			if err != nil {
				cc.Close()
				continue
			}
			liveMu.Lock()
			live = append(live, cc, sc)
			liveMu.Unlock()
			p.mu.Lock()
			idx := p.conns
			p.conns++
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); p.pump(idx, cc, sc, true) }()
			go func() { defer p.wg.Done(); p.pump(idx, sc, cc, false) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		liveMu.Lock()
		for _, c := range live {
			c.Close()
		}
		liveMu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *proxy) Addr() string { return p.ln.Addr().String() }

// pump copies frames from src to dst; requests (toServer) are recorded,
// replies may be dropped.
func (p *proxy) pump(idx int, src, dst net.Conn, toServer bool) {
	defer src.Close()
	defer dst.Close()
	hdr := make([]byte, wire.HeaderSize)
	for {
		if _, err := io.ReadFull(src, hdr); err != nil {
			return
		}
		frame := make([]byte, wire.PeekSize(hdr))
		copy(frame, hdr)
		if _, err := io.ReadFull(src, frame[wire.HeaderSize:]); err != nil {
			return
		}
		if toServer {
			var h wire.RequestHeader
			h.Decode(frame)
			p.mu.Lock()
			p.reqs = append(p.reqs, proxied{Conn: idx, Hdr: h, Body: frame[wire.HeaderSize:]})
			p.mu.Unlock()
		} else if wire.PeekKind(frame) == wire.KindReply {
			var h wire.ReplyHeader
			h.Decode(frame)
			if p.drop != nil && p.drop(h) {
				return // closes both directions: the reply is lost
			}
		}
		if _, err := dst.Write(frame); err != nil {
			return
		}
	}
}

// requests returns the forwarded request headers.
func (p *proxy) requests() []proxied {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]proxied(nil), p.reqs...)
}
