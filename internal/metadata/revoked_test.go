package metadata

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/zeebo/xxh3"
)

// TestRevokedTokensSurviveRestart: a revoked jti is revoked after a
// replay of the journal alone (a crash) and after a restart from the
// snapshot written at Close; a jti never revoked is not.
func TestRevokedTokensSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, 1<<30, nil)
	if code, err := s.RevokeToken(3, "jti-1", 1_800_000_000); err != nil || code != 0 {
		t.Fatalf("revoke: %d %v", code, err)
	}
	if !s.TokenRevoked("jti-1") || s.TokenRevoked("jti-2") {
		t.Fatal("revoked set wrong right after the revocation")
	}
	if n := testing.AllocsPerRun(100, func() { _ = s.TokenRevoked("jti-1") }); n != 0 {
		t.Fatalf("TokenRevoked allocates %v per call", n)
	}
	replayed := openTest(t, dir, 1<<30, nil) // no Close: the journal alone
	if !replayed.TokenRevoked("jti-1") {
		t.Fatal("a revocation was lost by a journal replay")
	}
	replayed.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	r := openTest(t, dir, 1<<30, nil)
	defer r.Close()
	if !r.TokenRevoked("jti-1") || r.TokenRevoked("jti-2") {
		t.Fatal("revoked set wrong after a restart from the snapshot")
	}
	if code, _ := r.RevokeToken(0, "", 1); code == 0 {
		t.Fatal("an empty jti was accepted")
	}
}

// TestRevokedTokensBound: entries past their until are dropped at the
// applying entry's time, and a full list drops the entry that expires
// soonest (ties: the smallest jti), whatever order the entries came in.
func TestRevokedTokensBound(t *testing.T) {
	r := newRevokedTokens()
	for _, tok := range []revokedToken{{"d", 30}, {"b", 20}, {"c", 20}, {"a", 40}} {
		r.add(tok.jti, tok.until, 10, 3)
	}
	// Full at 3: adding "a" dropped "b" (until 20, smaller jti than "c").
	if got := keys(&r); !slices.Equal(got, []string{"a", "c", "d"}) {
		t.Fatalf("after the bound: %v", got)
	}
	// At 31, "c" (20) and "d" (30) are past; "e" comes in.
	r.add("e", 50, 31, 3)
	if got := keys(&r); !slices.Equal(got, []string{"a", "e"}) {
		t.Fatalf("after the sweep at 31: %v", got)
	}
	// At exactly until an entry is kept (a token verifies through it).
	r.add("f", 60, 40, 3)
	if !r.has("a") {
		t.Fatal("an entry was dropped at its until")
	}
	// Revoking a jti again changes nothing.
	r.add("a", 99, 40, 3)
	if r.byJTI["a"] != 40 || len(r.heap) != len(r.byJTI) {
		t.Fatalf("a repeated revocation changed the list: %v (heap %d)", r.byJTI, len(r.heap))
	}
}

// TestRevokedTokensDeterministic: two stores fed the same entries in
// the same order encode the same list.
func TestRevokedTokensDeterministic(t *testing.T) {
	a, b := newRevokedTokens(), newRevokedTokens()
	for i := range 200 {
		jti, until := fmt.Sprintf("j%03d", (i*37)%200), int64(100+i%7)
		a.add(jti, until, int64(i/20), 50)
		b.add(jti, until, int64(i/20), 50)
	}
	if !bytes.Equal(appendRevoked(nil, &a), appendRevoked(nil, &b)) || len(a.byJTI) != 50 {
		t.Fatalf("lists differ or not bounded (%d entries)", len(a.byJTI))
	}
}

// TestRevokedSnapshotRoundTrip: the revoked list in a snapshot decodes
// to the same list, the heap included; a version 3 snapshot (before the
// list existed) decodes with none; a list out of order is corrupt.
func TestRevokedSnapshotRoundTrip(t *testing.T) {
	st := newState()
	st.revoked.add("x", 70, 0, 10)
	st.revoked.add("y", 50, 0, 10)
	st.revoked.add("w", 60, 0, 10)
	enc := encodeSnapshot(&snapshot{op: 9, state: st})
	sn, err := decodeSnapshot(enc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st.revoked.byJTI, sn.state.revoked.byJTI); diff != "" {
		t.Fatalf("revoked after the round trip (-want +got):\n%s", diff)
	}
	if top := sn.state.revoked.heap[0]; top != (revokedToken{"y", 50}) {
		t.Fatalf("heap top after decode %v, want y", top)
	}
	if !bytes.Equal(encodeSnapshot(sn), enc) {
		t.Fatal("snapshot does not re-encode to itself")
	}

	old := encodeSnapshot(&snapshot{state: newState()})
	body := old[:len(old)-8]
	body[8] = 3 // version 3: no revoked section
	i := len(body) - 4 - 4
	body = append(body[:i], body[i+4:]...) // drop the empty revoked count
	v3 := withChecksum(body)
	if sn, err := decodeSnapshot(v3); err != nil || len(sn.state.revoked.byJTI) != 0 {
		t.Fatalf("version 3 snapshot: %v", err)
	}

	bad := newState()
	bad.revoked.add("a", 1, 0, 10)
	bad.revoked.add("b", 1, 0, 10)
	enc = encodeSnapshot(&snapshot{state: bad})
	swapped := bytes.Replace(bytes.Replace(enc[:len(enc)-8], []byte{1, 0, 'a'}, []byte{1, 0, '?'}, 1), []byte{1, 0, 'b'}, []byte{1, 0, 'a'}, 1)
	swapped = bytes.Replace(swapped, []byte{1, 0, '?'}, []byte{1, 0, 'b'}, 1)
	if _, err := decodeSnapshot(withChecksum(swapped)); err == nil {
		t.Fatal("a revoked list out of order decoded")
	}
}

// FuzzRevokeToken: the KindRevokeToken body decoder never panics, and
// what it accepts re-encodes to the same bytes.
func FuzzRevokeToken(f *testing.F) {
	f.Add(appendRevokeToken(nil, "0193a000-0000-7000-8000-00000000000a", 1_800_000_000))
	f.Add(appendRevokeToken(nil, "x", -1))
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8})
	f.Fuzz(func(t *testing.T, b []byte) {
		jti, until, ok := decodeRevokeToken(b)
		if !ok {
			return
		}
		if again := appendRevokeToken(nil, jti, until); !bytes.Equal(again, b) {
			t.Fatalf("re-encoded % x, input % x", again, b)
		}
	})
}

func keys(r *revokedTokens) []string {
	out := make([]string, 0, len(r.byJTI))
	for k := range r.byJTI {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// withChecksum appends a snapshot's checksum to body.
func withChecksum(body []byte) []byte {
	return binary.LittleEndian.AppendUint64(append([]byte(nil), body...), xxh3.Hash(body))
}

// BenchmarkRevokedFull: a revocation applied to a full list (one
// eviction) and the per-request check against it.
func BenchmarkRevokedFull(b *testing.B) {
	r := newRevokedTokens()
	for i := range auth.MaxRevokedTokens {
		r.add(fmt.Sprintf("0193a000-0000-7000-8000-%012d", i), int64(1_000_000+i), 0, auth.MaxRevokedTokens)
	}
	jtis := make([]string, 1024)
	for i := range jtis {
		jtis[i] = fmt.Sprintf("0193b000-0000-7000-8000-%012d", i)
	}
	b.Run("add", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			r.add(jtis[i%len(jtis)]+fmt.Sprint(i), int64(2_000_000+i), 0, auth.MaxRevokedTokens)
		}
	})
	b.Run("has", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = r.has(jtis[i%len(jtis)])
		}
	})
}
