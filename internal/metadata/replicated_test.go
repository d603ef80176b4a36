package metadata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/iggo-dev/iggo/internal/replication"
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

// TestTransientCode: a failed replicated write answers what
// replication.Transient decides for the replication error (classify), the
// store's own verdicts win over the context error they wrap, and what
// nobody classifies is outcome unknown (57).
func TestTransientCode(t *testing.T) {
	const unknown, notAccepted = 57, 58
	for _, tc := range []struct {
		name string
		err  error
		want uint32
	}{
		{"not leader", classify(&replication.NotLeaderError{Group: replication.MetadataGroup}), notAccepted},
		{"dropped", classify(replication.ErrProposalDropped), notAccepted},
		{"host stopped before admission", classify(replication.ErrStopped), notAccepted},
		{"host stopped after admission", classify(fmt.Errorf("%w: %w", replication.ErrOutcomeUnknown, replication.ErrStopped)), unknown},
		{"deadline before admission", classify(fmt.Errorf("propose to group 0: %w", context.DeadlineExceeded)), notAccepted},
		{"deadline after admission", classify(fmt.Errorf("%w: %w", replication.ErrOutcomeUnknown, context.DeadlineExceeded)), unknown},
		{"refused", classify(fmt.Errorf("prepare: %w", replication.ErrRefused)), notAccepted},
		{"pending", classify(fmt.Errorf("prepare: %w", replication.ErrPending)), unknown},
		{"unclassified replication failure", classify(replication.ErrStorage), unknown},
		{"store's own wait ended", fmt.Errorf("%w: %w", ErrOutcomeUnknown, context.DeadlineExceeded), unknown},
		{"closed", ErrClosed, notAccepted},
		{"unclassified refusal", fmt.Errorf("submit: %w", replication.ErrRefused), notAccepted},
		{"journal failure", errors.New("write journal: disk full"), unknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := transientCode(tc.err); got != tc.want {
				t.Fatalf("transientCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
	if wire.ErrTransientNotCommitted.Code != unknown || wire.ErrTransientNotAccepted.Code != notAccepted {
		t.Fatal("the transient status codes moved")
	}
}
