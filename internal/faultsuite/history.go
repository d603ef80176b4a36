//go:build !windows

package faultsuite

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"
)

// OpKind is the kind of a client operation.
type OpKind string

// Operation kinds.
const (
	// KindSend is SEND_MESSAGES of one message with a unique payload id.
	KindSend OpKind = "send"
	// KindPoll is a poll by offset of a sequential reader.
	KindPoll OpKind = "poll"
	// KindStore is STORE_CONSUMER_OFFSET of a single consumer.
	KindStore OpKind = "store-offset"
	// KindGet is GET_CONSUMER_OFFSET of a single consumer.
	KindGet OpKind = "get-offset"
	// KindJoin is JOIN_CONSUMER_GROUP.
	KindJoin OpKind = "group-join"
	// KindSync is SYNC_CONSUMER_GROUP: a member's observation of its
	// assignment.
	KindSync OpKind = "group-sync"
	// KindGroupPoll is a poll of a group member (next offset, auto commit).
	KindGroupPoll OpKind = "group-poll"
	// KindLeave is LEAVE_CONSUMER_GROUP.
	KindLeave OpKind = "group-leave"
	// KindFinal is the read of a whole partition after healing.
	KindFinal OpKind = "final-read"
)

// OpType is how an operation completed, as in Jepsen histories.
type OpType string

// Completion types.
const (
	// TypeOK: the server acknowledged the operation.
	TypeOK OpType = "ok"
	// TypeFail: the operation certainly did not take effect (refused with
	// a definite error).
	TypeFail OpType = "fail"
	// TypeInfo: the outcome is unknown (timeout, connection lost).
	TypeInfo OpType = "info"
)

// Record is one message as a client saw it.
type Record struct {
	Offset uint64 `json:"offset"`
	ID     uint64 `json:"id"`
	// PayloadOK reports whether the payload was exactly the one the
	// suite sent under ID (and the message id matched).
	PayloadOK bool `json:"payload_ok"`
}

// Op is one client operation: its invocation and its completion.
type Op struct {
	// Index is the operation's position in the history (invocation order).
	Index int `json:"index"`
	// Client is the worker that ran it (one SDK client each).
	Client int    `json:"client"`
	Kind   OpKind `json:"kind"`
	// Partition is the partition the operation targets.
	Partition uint32 `json:"partition"`
	// Invoke and Complete are nanoseconds since the history began.
	Invoke   int64  `json:"invoke"`
	Complete int64  `json:"complete"`
	Type     OpType `json:"type"`
	Err      string `json:"err,omitempty"`
	// PayloadID is the message id of a send.
	PayloadID uint64 `json:"payload_id,omitempty"`
	// Offset is the offset of an acknowledged send (when HasOffset), the
	// requested offset of a poll, or the value stored or read of a
	// consumer offset.
	Offset    uint64 `json:"offset"`
	HasOffset bool   `json:"has_offset,omitempty"`
	// Records are the messages a poll returned.
	Records []Record `json:"records,omitempty"`
	// Generation and Partitions are a group member's assignment as
	// SYNC_CONSUMER_GROUP answered it.
	Generation uint64   `json:"generation,omitempty"`
	Partitions []uint32 `json:"partitions,omitempty"`
	// Consumer names the consumer of offset operations.
	Consumer string `json:"consumer,omitempty"`
}

// History records the operations of concurrent clients.
type History struct {
	mu    sync.Mutex
	start time.Time
	ops   []Op
}

// NewHistory starts an empty history whose clock starts now.
func NewHistory() *History { return &History{start: time.Now()} }

// Now returns the history clock in nanoseconds.
func (h *History) Now() int64 { return time.Since(h.start).Nanoseconds() }

// Begin stamps op's invocation time; Finish records it.
func (h *History) Begin(op *Op) { op.Invoke = h.Now() }

// Finish stamps op's completion time and type and records it.
func (h *History) Finish(op Op, typ OpType, err error) {
	op.Complete = h.Now()
	op.Type = typ
	if err != nil {
		op.Err = err.Error()
	}
	h.mu.Lock()
	op.Index = len(h.ops)
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// Ops returns a copy of the recorded operations.
func (h *History) Ops() []Op {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]Op(nil), h.ops...)
}

// WriteJSON writes the history as one JSON object per line.
func (h *History) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	for _, op := range h.Ops() {
		if err := enc.Encode(op); err != nil {
			return fmt.Errorf("write history: %w", err)
		}
	}
	return nil
}
