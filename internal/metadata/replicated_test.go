package metadata

import (
	"bytes"
	"testing"

	"github.com/iggo-dev/iggo/wire"
)

func TestProposalRoundTrip(t *testing.T) {
	e := Entry{Op: proposedOp, Kind: KindCommand, Timestamp: 7, Client: wire.Uint128{Lo: 9}, Session: 3, Request: 4,
		UserID: 1, Code: wire.CmdCreateStream, Body: []byte("body"), Secret: []byte("secret")}
	data := appendProposal(nil, 0xfeed, 2, &e)
	nonce, replica, got, err := decodeProposal(data)
	if err != nil || nonce != 0xfeed || replica != 2 || got.Kind != e.Kind || !bytes.Equal(got.Body, e.Body) || got.Request != 4 {
		t.Fatalf("decode: nonce %x replica %d entry %+v err %v", nonce, replica, got, err)
	}
	for _, bad := range [][]byte{nil, data[:5], append([]byte{9}, data[1:]...), append(append([]byte(nil), data...), 0)} {
		if _, _, _, err := decodeProposal(bad); err == nil {
			t.Errorf("decodeProposal(%x) accepted", bad)
		}
	}
}

// FuzzDecodeProposal: any bytes a peer's log could hold decode or fail
// cleanly, and what decodes encodes back to the same bytes.
func FuzzDecodeProposal(f *testing.F) {
	e := Entry{Op: proposedOp, Kind: KindRegister, Client: wire.Uint128{Lo: 1}}
	f.Add(appendProposal(nil, 1, 0, &e))
	f.Add([]byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		nonce, replica, got, err := decodeProposal(data)
		if err != nil {
			return
		}
		if again := appendProposal(nil, nonce, replica, &got); !bytes.Equal(again, data) {
			t.Fatalf("re-encoding differs:\n%x\n%x", again, data)
		}
	})
}
