package metadata

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/wire"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var cheapParams = auth.Params{MemoryKiB: 64, Iterations: 1, Parallelism: 1, SaltBytes: 16, KeyBytes: 32}

// fakeClock advances one second per reading, so timestamps differ.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

// recData records the catalog.Data calls it receives.
type recData struct {
	NopData
	mu    sync.Mutex
	calls []string
}

func (d *recData) add(s string) {
	d.mu.Lock()
	d.calls = append(d.calls, s)
	d.mu.Unlock()
}

func (d *recData) CreatePartitions(t catalog.TopicRef, ids []uint32) error {
	d.add("create " + refStr(t) + " " + idsString(ids))
	return nil
}

func (d *recData) DeletePartitions(t catalog.TopicRef, ids []uint32) error {
	d.add("delete-partitions " + refStr(t) + " " + idsString(ids))
	return nil
}

func (d *recData) DeleteTopic(t catalog.TopicRef) error {
	d.add("delete-topic " + refStr(t))
	return nil
}

func (d *recData) PurgeTopic(t catalog.TopicRef) error { d.add("purge " + refStr(t)); return nil }

func (d *recData) DeleteSegments(t catalog.TopicRef, p, n uint32) error {
	d.add("delete-segments " + refStr(t))
	return nil
}

func (d *recData) take() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := d.calls
	d.calls = nil
	return out
}

func idsString(ids []uint32) string {
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(itoa(uint64(id)))
	}
	return b.String()
}

func itoa(v uint64) string {
	if v == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for v > 0 {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return string(b[i:])
}

type testStore struct {
	*Store
	dir   string
	clock *fakeClock
	data  *recData
}

func openTest(t testing.TB, dir string, every int, data *recData) *testStore {
	t.Helper()
	clock := &fakeClock{t: time.Unix(1_700_000_000, 0)}
	if data == nil {
		data = &recData{}
	}
	s, err := Open(Config{
		Dir: dir, Now: clock.now, Data: data, Hasher: auth.NewHasher(cheapParams, nil),
		ClientsTableMax: 16, SnapshotEvery: every, Logger: quiet,
		Root: func() (string, string, error) { return "iggy", "iggy", nil },
	})
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return &testStore{Store: s, dir: dir, clock: clock, data: data}
}

// do commits a command as user and returns the result.
func (s *testStore) do(t testing.TB, user uint32, code wire.Command, body wire.Body) result {
	t.Helper()
	c, err := s.submit(Entry{Kind: KindCommand, UserID: user, Code: code, Body: body.AppendTo(nil)})
	if err != nil {
		t.Fatalf("submit %d: %v", code, err)
	}
	return c.res
}

func (s *testStore) ok(t testing.TB, code wire.Command, body wire.Body) result {
	t.Helper()
	r := s.do(t, 0, code, body)
	if r.code != 0 {
		t.Fatalf("command %d rejected with %d", code, r.code)
	}
	return r
}

// encoded is the state's snapshot encoding (canonical).
func (s *Store) encoded() []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return encodeSnapshot(&snapshot{op: 0, state: s.st, clients: s.table.Snapshot()})
}

// populate runs a mix of commands.
func populate(t testing.TB, s *testStore) {
	t.Helper()
	s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "orders"})
	s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "audit"})
	s.ok(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("orders"), PartitionsCount: 3, Name: "eu",
		Options: wire.Options{wire.StringOption(wire.TopicOptMessageExpiry, "7 days")}})
	s.ok(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), PartitionsCount: 1, Name: "us"})
	s.ok(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NamedID("audit"), PartitionsCount: 1, Name: "durable",
		Options: wire.Options{wire.StringOption(wire.TopicOptConsumerOffsetDurability, "persisted"), wire.StringOption(wire.TopicOptDurability, "persisted")}})
	s.ok(t, wire.CmdUpdateTopic, &wire.UpdateTopic{StreamID: wire.NumericID(0), TopicID: wire.NumericID(1), Name: "us-east",
		Options: wire.Options{wire.Uint64Option(wire.TopicOptMaxTopicSize, 8<<30)}})
	s.ok(t, wire.CmdCreatePartitions, &wire.CreatePartitions{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), PartitionsCount: 2})
	s.ok(t, wire.CmdCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), Name: "g1"})
	s.ok(t, wire.CmdCreateConsumerGroup, &wire.CreateConsumerGroup{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), Name: "g2"})
	s.ok(t, wire.CmdDeleteConsumerGroup, &wire.DeleteConsumerGroup{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0), GroupID: wire.NumericID(0)})
	s.ok(t, wire.CmdCreateUser, &wire.CreateUser{Username: "alice", Status: wire.UserActive, Permissions: &wire.Permissions{
		Global:  wire.GlobalPermissions{ReadStreams: true},
		Streams: []wire.StreamPermissions{{StreamID: 1, ManageStream: true, Topics: []wire.TopicPermissions{{TopicID: 4, ReadTopic: true}}}},
	}})
	if r := s.do(t, 1, wire.CmdCreatePersonalAccessToken, &wire.CreatePersonalAccessToken{Name: "ci", Expiry: 0}); r.code != wire.ErrPersonalAccessTokenAlreadyExists.Code {
		// Without a secret the token hash is empty: rejected. Commit one properly.
		t.Fatalf("PAT without a hash: code %d", r.code)
	}
	if _, err := s.CreatePAT(1, "ci", 10_000_000); err != nil {
		t.Fatal(err)
	}
	s.ok(t, wire.CmdUpdateStream, &wire.UpdateStream{StreamID: wire.NumericID(1), Name: "audit-log"})
	for _, jti := range []string{"0193a000-0000-7000-8000-00000000000b", "0193a000-0000-7000-8000-00000000000a"} {
		if code, err := s.RevokeToken(0, jti, 1_800_000_000); err != nil {
			t.Fatalf("revoke %s: %d %v", jti, code, err)
		}
	}
}

func TestReplayReachesTheLiveState(t *testing.T) {
	dir := t.TempDir()
	live := openTest(t, dir, 1<<30, nil)
	populate(t, live)
	want := live.encoded()
	// No Close: the second store recovers from the journal alone, as
	// after a crash.
	again := openTest(t, dir, 1<<30, nil)
	if got := again.encoded(); !bytes.Equal(got, want) {
		t.Fatalf("replayed state differs from the live state")
	}
	if again.Op() != live.Op() {
		t.Fatalf("op %d after replay, %d live", again.Op(), live.Op())
	}
	live.Close()
	again.Close()
}

func TestSnapshotRoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 1<<30, nil)
	populate(t, s)
	enc := s.encoded()
	sn, err := decodeSnapshot(enc)
	if err != nil {
		t.Fatal(err)
	}
	if again := encodeSnapshot(sn); !bytes.Equal(again, enc) {
		t.Fatal("snapshot does not round-trip")
	}
	// Restart from the snapshot written at Close.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, dir, 1<<30, nil)
	defer r.Close()
	if !bytes.Equal(r.encoded(), enc) {
		t.Fatal("state after restart from snapshot differs")
	}
	if u, ok := r.UserByName("alice"); !ok || u.Permissions == nil || !u.Permissions.Global.ReadStreams {
		t.Fatalf("alice after restart: %+v %v", u, ok)
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if tp := r.st.stream(wire.NamedID("audit-log")).topic(wire.NamedID("durable")); tp == nil || !tp.Opts.Settings.EnforceFsync || !tp.Opts.Settings.ConsumerOffsetFsync {
		t.Fatalf("durable topic after restart from the snapshot: %+v", tp)
	}
}

func TestPeriodicSnapshotsBoundReplay(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 4, nil)
	for i := range 20 {
		s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "s" + itoa(uint64(i))})
	}
	want := s.encoded()
	snaps, _ := listOps(dir, snapshotPrefix, snapshotSuffix)
	journals, _ := listOps(dir, journalPrefix, journalSuffix)
	if len(snaps) != 2 || len(journals) > 2 {
		t.Fatalf("snapshots %v journals %v: old files not pruned", snaps, journals)
	}
	r := openTest(t, dir, 4, nil)
	defer r.Close()
	if !bytes.Equal(r.encoded(), want) {
		t.Fatal("state differs after restart from a periodic snapshot")
	}
	s.Close()
}

func journalPath(t *testing.T, dir string) string {
	t.Helper()
	firsts, err := listOps(dir, journalPrefix, journalSuffix)
	if err != nil || len(firsts) == 0 {
		t.Fatalf("journals %v %v", firsts, err)
	}
	return filepath.Join(dir, journalName(firsts[len(firsts)-1]))
}

func TestTornTailIsDropped(t *testing.T) {
	for _, tc := range []struct {
		name string
		tail func(rec []byte) []byte
	}{
		{"header only", func(rec []byte) []byte { return rec[:5] }},
		{"half a record", func(rec []byte) []byte { return rec[:len(rec)/2] }},
		{"garbled last record", func(rec []byte) []byte {
			b := append([]byte(nil), rec...)
			b[len(b)-1] ^= 0xff
			return b
		}},
		{"zero fill", func(rec []byte) []byte { return make([]byte, 4096) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir, 1<<30, nil)
			s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "kept"})
			want := s.encoded()
			op := s.Op()
			path := journalPath(t, dir)
			size := fileSize(t, path)
			rec := AppendRecord(nil, &Entry{Op: op + 1, Kind: KindCommand, Code: wire.CmdCreateStream, Body: (&wire.CreateStream{Name: "torn"}).AppendTo(nil)})
			appendFile(t, path, tc.tail(rec))
			r := openTest(t, dir, 1<<30, nil)
			defer r.Close()
			if !bytes.Equal(r.encoded(), want) || r.Op() != op {
				t.Fatalf("state after a torn tail: op %d, want %d", r.Op(), op)
			}
			if got := fileSize(t, path); got != size {
				t.Fatalf("journal is %d bytes after recovery, want %d", got, size)
			}
			// The journal takes new entries after the cut.
			r.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "after"})
			s.Close()
		})
	}
}

func TestMidLogCorruptionStopsStartup(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 1<<30, nil)
	for _, n := range []string{"a", "b", "c"} {
		s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: n})
	}
	// No Close (no final snapshot): the journal must be replayed.
	path := journalPath(t, dir)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Flip a byte inside the second record.
	_, n, err := DecodeRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	data[n+recordHeaderLen+3] ^= 0x40
	if err := os.WriteFile(path, data, 0o640); err != nil {
		t.Fatal(err)
	}
	_, err = Open(Config{Dir: dir, Hasher: auth.NewHasher(cheapParams, nil), Logger: quiet})
	if err == nil || !strings.Contains(err.Error(), "bad record at offset") || !strings.Contains(err.Error(), "refusing to start") {
		t.Fatalf("open with a corrupt middle record: %v", err)
	}
}

func TestCorruptSnapshotFallsBack(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 3, nil)
	for i := range 8 {
		s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "s" + itoa(uint64(i))})
	}
	want := s.encoded()
	snaps, _ := listOps(dir, snapshotPrefix, snapshotSuffix)
	newest := filepath.Join(dir, snapshotName(snaps[len(snaps)-1]))
	data, _ := os.ReadFile(newest)
	data[20] ^= 1
	os.WriteFile(newest, data, 0o640)
	r := openTest(t, dir, 3, nil)
	defer r.Close()
	if !bytes.Equal(r.encoded(), want) {
		t.Fatal("fallback to the older snapshot lost state")
	}
	s.Close()
}

func TestEffectsAreNotRepeatedAfterRestart(t *testing.T) {
	dir := t.TempDir()
	data := &recData{}
	s := openTest(t, dir, 1<<30, data)
	s.ok(t, wire.CmdCreateStream, &wire.CreateStream{Name: "s"})
	s.ok(t, wire.CmdCreateTopic, &wire.CreateTopic{StreamID: wire.NumericID(0), PartitionsCount: 2, Name: "t"})
	s.ok(t, wire.CmdPurgeTopic, &wire.PurgeTopic{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0)})
	inc := s.st.streams[0].Topics[0].Incarnation
	ref := catalog.TopicRef{StreamID: 0, TopicID: 0, Incarnation: inc}
	if diff := cmp.Diff([]string{"create " + refStr(ref) + " 0,1", "purge " + refStr(ref)}, data.take()); diff != "" {
		t.Fatalf("live effects (-want +got):\n%s", diff)
	}
	// Crash (no Close) and restart: the purge completed and is not re-run;
	// the partitions are opened.
	r := openTest(t, dir, 1<<30, data)
	if diff := cmp.Diff([]string{"create " + refStr(ref) + " 0,1"}, data.take()); diff != "" {
		t.Fatalf("effects at restart (-want +got):\n%s", diff)
	}
	// A delete whose effect may not have run is re-run at restart.
	r.ok(t, wire.CmdDeleteTopic, &wire.DeleteTopic{StreamID: wire.NumericID(0), TopicID: wire.NumericID(0)})
	data.take()
	r2 := openTest(t, dir, 1<<30, data)
	defer r2.Close()
	if diff := cmp.Diff([]string{"delete-topic " + refStr(ref)}, data.take()); diff != "" {
		t.Fatalf("effects at restart after a delete (-want +got):\n%s", diff)
	}
	s.Close()
	r.Close()
}

func TestJournalFailureIsSticky(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 1<<30, nil)
	s.j.f.Close() // make the next write fail
	if _, err := s.submit(Entry{Kind: KindCommand, Code: wire.CmdCreateStream, Body: (&wire.CreateStream{Name: "x"}).AppendTo(nil)}); err == nil {
		t.Fatal("write to a closed journal succeeded")
	}
	if _, err := s.submit(Entry{Kind: KindMarker}); err == nil || errors.Is(err, ErrClosed) {
		t.Fatalf("second write: %v, want the sticky failure", err)
	}
}

func TestRootCreatedOnFirstStartOnly(t *testing.T) {
	dir := t.TempDir()
	calls := 0
	open := func(name string) *Store {
		s, err := Open(Config{Dir: dir, Logger: quiet, Hasher: auth.NewHasher(cheapParams, nil), Root: func() (string, string, error) {
			calls++
			return name, "secret", nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open("admin")
	s.Close()
	s = open("other")
	defer s.Close()
	if calls != 1 {
		t.Fatalf("root credentials read %d times", calls)
	}
	if _, ok := s.UserByName("admin"); !ok {
		t.Fatal("stored root lost")
	}
	if _, ok := s.UserByName("other"); ok {
		t.Fatal("root recreated from new credentials")
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func appendFile(t *testing.T, path string, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
}

func refStr(t catalog.TopicRef) string {
	return itoa(uint64(t.StreamID)) + "/" + itoa(uint64(t.TopicID)) + "@" + itoa(t.Incarnation)
}
