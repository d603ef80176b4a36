package itest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/internal/broker"
	"github.com/iggo-dev/iggo/wire"
	"github.com/zeebo/xxh3"
)

// TestRestartKeepsEverything stops a broker and starts another on the
// same data directory: every entity, user, token, permission and the
// client table's dedup state is back.
func TestRestartKeepsEverything(t *testing.T) {
	for _, every := range []int{1 << 20, 5} { // journal replay only; snapshots + tail
		t.Run("snapshot every "+strconv.Itoa(every), func(t *testing.T) {
			dir := t.TempDir()
			s1 := Start(t, WithDir(dir), WithBrokerOptions(broker.WithSnapshotEvery(every)))
			c := s1.Dial(t)
			c.LoginRoot()
			st := mkStream(t, c, "orders")
			mkTopic(t, c, st, "eu", 3, wire.Options{wire.StringOption(wire.TopicOptMessageExpiry, "1 h")})
			mkTopic(t, c, st, "us", 1, nil)
			ExpectOK(t, c.Command(wire.OpCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: sid(st), TopicID: sid(0), Name: "g"}))
			perms := &wire.Permissions{Streams: []wire.StreamPermissions{{StreamID: st, ReadStream: true, Topics: []wire.TopicPermissions{{TopicID: 1, ManageTopic: true}}}}}
			ExpectOK(t, c.Command(wire.OpCreateUser, &wire.CreateUser{Username: "alice", Password: "alice-pw", Status: wire.UserActive, Permissions: perms}))
			a := s1.Dial(t)
			a.Login("alice", "alice-pw")
			var tok wire.RawToken
			decodeInto(t, ExpectOK(t, a.Command(wire.OpCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: "ci"})), &tok)

			// A request whose reply the client table caches.
			body := (&wire.CreateStream{Name: "dedup"}).AppendTo(nil)
			h := c.Header(wire.OpCreateStream, 0)
			h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(body)}
			first := c.Do(h, body)
			ExpectOK(t, first)

			before := snapshotOf(t, c)
			s1.Stop()

			s2 := Start(t, WithDir(dir), WithBrokerOptions(broker.WithSnapshotEvery(every)))
			r := s2.Dial(t)
			r.LoginRoot()
			if diff := cmp.Diff(before, snapshotOf(t, r), cmpEmpty); diff != "" {
				t.Fatalf("state after restart (-before +after):\n%s", diff)
			}
			s2.Dial(t).Login("alice", "alice-pw")
			if rr, f := s2.Dial(t).LoginWith(PATBody(tok.Token)); rr.Session == 0 || rr.UserID != 1 {
				t.Fatalf("PAT login after restart: %v", f)
			}
			// The client logs in again with the same client id: its
			// watermark and latest reply survived, so the retry is answered
			// from the cache, byte for byte, and not executed again.
			again := s2.Dial(t)
			again.ID = c.ID
			again.LoginRoot()
			h.Session = again.Session
			replay := again.Do(h, body)
			if replay.Reply.Op != first.Reply.Op || !bytes.Equal(replay.Body, first.Body) {
				t.Fatalf("retry after restart: %v, want the cached reply of op %d", replay, first.Reply.Op)
			}
			// An older request number is already applied.
			h.Request = 1
			ExpectResult(t, again.Do(h, body), wire.ErrRequestAlreadyApplied.Code)
		})
	}
}

// stateView is what TestRestartKeepsEverything compares.
type stateView struct {
	Streams wire.Streams
	Topics  []wire.TopicDetails
	Groups  wire.ConsumerGroups
	Users   []wire.UserDetails
}

func snapshotOf(t *testing.T, c *Client) stateView {
	t.Helper()
	var v stateView
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdGetStreams, nil)), &v.Streams)
	for _, s := range v.Streams {
		var topics wire.Topics
		decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetTopics, &wire.GetTopics{StreamID: sid(s.ID)})), &topics)
		for _, tp := range topics {
			v.Topics = append(v.Topics, getTopic(t, c, sid(s.ID), sid(tp.ID)))
			var gs wire.ConsumerGroups
			decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetConsumerGroups, &wire.GetConsumerGroups{StreamID: sid(s.ID), TopicID: sid(tp.ID)})), &gs)
			v.Groups = append(v.Groups, gs...)
		}
	}
	var users wire.Users
	decodeInto(t, ExpectPlain(t, c.Call(wire.CmdGetUsers, nil)), &users)
	for _, u := range users {
		var ud wire.UserDetails
		decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetUser, &wire.GetUser{UserID: sid(u.ID)})), &ud)
		v.Users = append(v.Users, ud)
	}
	return v
}

// TestCrashRecovery kills the broker process (SIGKILL) while a client
// streams metadata writes, many times, and checks after each restart that
// every acknowledged operation is there and nothing is half-applied.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	acked := map[string]bool{} // topic names acknowledged so far
	pending := ""
	const rounds = 12
	for round := range rounds {
		ch := startChild(t, dir, childMetadata)
		srv := &Server{Addr: ch.addr, Dir: dir}
		c := srv.Dial(t)
		c.LoginRoot()
		// Check the previous rounds' work.
		var sd wire.StreamDetails
		if round == 0 {
			ExpectOK(t, c.Command(wire.OpCreateStream, &wire.CreateStream{Name: "crash"}))
		}
		decodeInto(t, ExpectPlain(t, c.Read(wire.CmdGetStream, &wire.GetStream{StreamID: name("crash")})), &sd)
		present := map[string]bool{}
		for _, tp := range sd.Topics {
			present[tp.Name] = true
			if tp.PartitionsCount != 3 {
				t.Fatalf("round %d: topic %s has %d partitions (half-applied)", round, tp.Name, tp.PartitionsCount)
			}
			td := getTopic(t, c, name("crash"), name(tp.Name))
			if len(td.Partitions) != 3 || len(td.Options) != 1 {
				t.Fatalf("round %d: topic %s is %+v", round, tp.Name, td.Topic)
			}
		}
		for n := range acked {
			if !present[n] {
				t.Fatalf("round %d: acknowledged topic %s is missing", round, n)
			}
		}
		for n := range present {
			if !acked[n] && n != pending {
				t.Fatalf("round %d: topic %s was never sent", round, n)
			}
			acked[n] = true
		}
		// Stream writes; a timer kills the process in the middle.
		kill := time.Duration(20+rng.IntN(60)) * time.Millisecond
		killed := make(chan struct{})
		go func() {
			time.Sleep(kill)
			ch.cmd.Process.Signal(syscall.SIGKILL)
			close(killed)
		}()
		for i := 0; ; i++ {
			n := fmt.Sprintf("r%d-t%d", round, i)
			pending = n
			f, err := sendTopic(c, n)
			if err != nil {
				break
			}
			if f.Kind != wire.KindReply || f.Reply.Status != 0 {
				t.Fatalf("create %s answered %v", n, f)
			}
			if _, err := wire.SplitResult(f.Body); err != nil {
				t.Fatalf("create %s rejected: %v", n, err)
			}
			acked[n] = true
		}
		<-killed
		ch.cmd.Wait()
		c.Conn.Close()
	}
	if len(acked) < rounds {
		t.Fatalf("only %d operations acknowledged over %d rounds", len(acked), rounds)
	}
	t.Logf("%d topics acknowledged over %d kills", len(acked), rounds)
}

// sendTopic sends CREATE_TOPIC with three partitions and an explicit
// option, returning an error when the connection dies.
func sendTopic(c *Client, n string) (Frame, error) {
	body := (&wire.CreateTopic{StreamID: name("crash"), PartitionsCount: 3, Name: n,
		Options: wire.Options{wire.BoolOption(wire.TopicOptEnforceFsync, true)}}).AppendTo(nil)
	h := c.Header(wire.OpCreateTopic, 0)
	h.RequestChecksum = wire.Uint128{Lo: xxh3.Hash(body)}
	if err := c.Send(h, body); err != nil {
		return Frame{}, err
	}
	return c.Recv()
}
