package replicated

import (
	"bytes"
	"errors"
	"testing"

	"github.com/iggo-dev/iggo/internal/replication"
)

func TestLeaveCodecRoundTrip(t *testing.T) {
	for _, g := range []replication.GroupID{0, 1, 20 << 24, 1<<63 | 5} {
		got, err := decodeLeaveRequest(encodeLeaveRequest(g))
		if err != nil || got != g {
			t.Fatalf("request %d: got %d, %v", g, got, err)
		}
	}
	for _, r := range []leaveReply{
		{outcome: leaveDone},
		{outcome: leaveDone, index: 1 << 40},
		{outcome: leaveNotLeader},
		{outcome: leaveNotLeader, leader: 0, hasLeader: true},
		{outcome: leaveNotLeader, leader: 255, hasLeader: true},
	} {
		got, err := decodeLeaveReply(encodeLeaveReply(r))
		if err != nil || got != r {
			t.Fatalf("reply %+v: got %+v, %v", r, got, err)
		}
	}
}

func TestLeaveCodecRefusesMalformed(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{},
		{2, 1},               // unknown version
		{leaveVersion},       // no group
		{leaveVersion, 0x80}, // truncated uvarint
		{leaveVersion, 1, 0}, // trailing byte
		{leaveVersion, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, // overlong
	} {
		if _, err := decodeLeaveRequest(b); !errors.Is(err, errBadLeave) {
			t.Errorf("request %x: err %v, want errBadLeave", b, err)
		}
	}
	for _, b := range [][]byte{
		nil,
		{leaveDone},                     // no leader field
		{leaveDone, 0},                  // no index
		{2, 0, 0},                       // unknown outcome
		{leaveNotLeader, 0x81, 0x02, 0}, // leader 256 (replica ids are u8)
		{leaveDone, 0x80, 0x00, 0},      // not the shortest encoding
		{leaveDone, 0, 0x80, 0x00},      // not the shortest encoding
		{leaveDone, 0, 0, 0},            // trailing byte
	} {
		if _, err := decodeLeaveReply(b); !errors.Is(err, errBadLeave) {
			t.Errorf("reply %x: err %v, want errBadLeave", b, err)
		}
	}
}

// FuzzLeaveCodec: leave requests and replies from any peer decode without
// panicking, and whatever decodes encodes back to the same bytes (one
// encoding per value).
func FuzzLeaveCodec(f *testing.F) {
	f.Add(encodeLeaveRequest(20<<24 | 3))
	f.Add(encodeLeaveReply(leaveReply{outcome: leaveNotLeader, leader: 2, hasLeader: true}))
	f.Add(encodeLeaveReply(leaveReply{outcome: leaveDone, index: 300}))
	f.Fuzz(func(t *testing.T, b []byte) {
		if g, err := decodeLeaveRequest(b); err == nil {
			if again := encodeLeaveRequest(g); !bytes.Equal(again, b) {
				t.Fatalf("request %x decodes to group %d, which encodes to %x", b, g, again)
			}
		}
		if r, err := decodeLeaveReply(b); err == nil {
			if again := encodeLeaveReply(r); !bytes.Equal(again, b) {
				t.Fatalf("reply %x decodes to %+v, which encodes to %x", b, r, again)
			}
		}
	})
}
