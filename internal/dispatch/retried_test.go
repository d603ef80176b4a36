package dispatch

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/session"
	"github.com/iggo-dev/iggo/wire"
)

// TestRetriedHookAnswersARetry: a retried metadata request whose reply
// the client table holds goes through Options.Retried; a non-zero code
// answers it (the handler does not run again), zero sends the cached
// reply again, byte for byte.
func TestRetriedHookAnswersARetry(t *testing.T) {
	var gate uint32
	var seen []wire.Command
	h := auth.NewHasher(auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}, nil)
	store := auth.NewMemStore()
	table := session.NewClientTable(8, nil)
	m := session.NewManager(auth.NewAuthenticator(store, h, nil), session.NewMemLog(nil, table.Apply), table, session.Options{})
	d := New(m, store, Options{Retried: func(cmd wire.Command, body []byte) uint32 {
		seen = append(seen, cmd)
		if !bytes.Equal(body, []byte("body")) {
			t.Errorf("hook saw body %q", body)
		}
		return gate
	}})
	runs := 0
	d.Handle(wire.CmdPurgeTopic, func(x *Exchange) {
		runs++
		x.Commit(7, wire.AppendResultOK(x.Scratch()))
	})
	client := wire.Uint128{Lo: 42}
	c, err := m.RegisterTrusted(client, 0, "test")
	if err != nil {
		t.Fatal(err)
	}
	info, _ := wire.LookupCommand(wire.CmdPurgeTopic)
	serve := func() Exchange {
		var x Exchange
		x.Header = wire.RequestHeader{Client: client, Operation: info.Operation, Code: wire.CmdPurgeTopic, Session: c.Session(), Request: 1}
		x.Body, x.Conn = []byte("body"), c
		d.Serve(&x)
		if !x.Answered {
			t.Fatal("unanswered")
		}
		return x
	}
	first := serve()
	if runs != 1 || len(seen) != 0 {
		t.Fatalf("first request: handler ran %d times, hook saw %v", runs, seen)
	}
	gate = wire.ErrTransientNotCommitted.Code
	retry := serve()
	if runs != 1 || len(seen) != 1 || seen[0] != wire.CmdPurgeTopic {
		t.Fatalf("retry: handler ran %d times, hook saw %v", runs, seen)
	}
	if len(retry.Out) != 12 || binary.LittleEndian.Uint32(retry.Out[8:]) != gate {
		t.Fatalf("retry answered %x, want the result %d", retry.Out, gate)
	}
	gate = 0
	again := serve()
	if runs != 1 || !bytes.Equal(again.Head[:], first.Head[:]) || !bytes.Equal(again.Out, first.Out) {
		t.Fatalf("second retry: handler ran %d times; got %x %x, want the cached %x %x", runs, again.Head[:8], again.Out, first.Head[:8], first.Out)
	}
}
