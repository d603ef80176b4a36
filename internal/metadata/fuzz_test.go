package metadata

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/zeebo/xxh3"

	"github.com/google/go-cmp/cmp"
	"github.com/iggo-dev/iggo/wire"
)

func TestRecordRoundTrip(t *testing.T) {
	for _, e := range []Entry{
		{Op: 1, Kind: KindBootstrap, Timestamp: 7, Body: []byte("iggy"), Secret: []byte("$argon2id$...")},
		{Op: 2, Kind: KindRegister, Client: wire.Uint128{Lo: 1, Hi: 2}, UserID: 3, EffectsThrough: 1},
		{Op: 3, Kind: KindCommand, Client: wire.Uint128{Lo: 9}, Session: 2, Request: 5, RequestChecksum: wire.Uint128{Lo: 4},
			RequestTimestamp: 11, UserID: 1, Code: wire.CmdCreateTopic, Body: []byte{1, 2, 3}},
		{Op: 4, Kind: KindMarker},
	} {
		rec := AppendRecord(nil, &e)
		got, n, err := DecodeRecord(append(rec, 0xAA))
		if err != nil || n != len(rec) {
			t.Fatalf("decode: %v (n %d of %d)", err, n, len(rec))
		}
		if diff := cmp.Diff(e, got); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
		for cut := range len(rec) {
			if _, _, err := DecodeRecord(rec[:cut]); err == nil {
				t.Fatalf("a record cut at %d of %d decoded", cut, len(rec))
			}
		}
	}
}

// FuzzDecodeRecord: the journal record decoder never panics, and what it
// accepts re-encodes to the same bytes.
func FuzzDecodeRecord(f *testing.F) {
	f.Add(AppendRecord(nil, &Entry{Op: 1, Kind: KindCommand, Code: wire.CmdCreateStream, Body: []byte{3, 'a', 'b', 'c'}}))
	f.Add(AppendRecord(nil, &Entry{Op: 9, Kind: KindLogout, Client: wire.Uint128{Lo: 5}, Session: 3, Request: 1}))
	f.Add(AppendRecord(nil, &Entry{Op: 10, Kind: KindRevokeToken, UserID: 4, Body: appendRevokeToken(nil, "0193a000-0000-7000-8000-00000000000a", 1_800_000_000)}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// As given, and framed with a valid length and checksum so the
		// entry decoder behind the checksum is reached too.
		framed := binary.LittleEndian.AppendUint32(nil, uint32(len(data)))
		framed = binary.LittleEndian.AppendUint64(framed, xxh3.Hash(data))
		for _, in := range [][]byte{data, append(framed, data...)} {
			e, n, err := DecodeRecord(in)
			if err != nil {
				continue
			}
			if !bytes.Equal(AppendRecord(nil, &e), in[:n]) {
				t.Fatal("accepted record does not re-encode to itself")
			}
		}
	})
}

// FuzzDecodeSnapshot: the snapshot decoder never panics, and what it
// accepts re-encodes to the same bytes (the encoding is canonical). An
// accepted snapshot of an older version re-encodes in the current one,
// which must then re-encode to itself.
func FuzzDecodeSnapshot(f *testing.F) {
	s := openTest(f, f.TempDir(), 1<<30, nil)
	populate(f, s)
	full := s.encoded()
	s.Close()
	empty := encodeSnapshot(&snapshot{state: newState()})
	// Seeds and inputs are the bytes before the checksum; the target
	// appends a valid one so the decoder behind it is exercised.
	f.Add(full[:len(full)-8])
	f.Add(empty[:len(empty)-8])
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint64(append([]byte(nil), body...), xxh3.Hash(body))
		for _, in := range [][]byte{body, data} {
			sn, err := decodeSnapshot(in)
			if err != nil {
				continue
			}
			out := encodeSnapshot(sn)
			if binary.LittleEndian.Uint32(in[8:]) < snapshotVersion {
				again, err := decodeSnapshot(out)
				if err != nil || !bytes.Equal(encodeSnapshot(again), out) {
					t.Fatalf("an older snapshot re-encoded in the current version does not round-trip: %v", err)
				}
				continue
			}
			if !bytes.Equal(out, in) {
				t.Fatal("accepted snapshot does not re-encode to itself")
			}
		}
	})
}
