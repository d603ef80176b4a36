package httpapi

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/iggo-dev/iggo/wire"
)

// MaxPayloadBytes is the largest message payload over HTTP (http-api.md
// §7.5).
const MaxPayloadBytes = 64_000_000

// SendMessagesRequest is POST .../messages; only these two keys are
// allowed.
type SendMessagesRequest struct {
	Partitioning *PartitioningJSON `json:"partitioning"`
	Messages     *[]MessageJSON    `json:"messages"`
}

// PartitioningJSON is {kind, value}: value is base64 (a 4-byte LE
// partition id, a message key, or "" for balanced).
type PartitioningJSON struct {
	Kind  *string `json:"kind"`
	Value *string `json:"value"`
}

// MessageJSON is one message to send.
type MessageJSON struct {
	ID      *U128   `json:"id,omitempty"`
	Payload *string `json:"payload"`
	// UserHeaders is an array of header entries, or a base64 string of a
	// pre-encoded TLV block.
	UserHeaders json.RawMessage `json:"user_headers,omitempty"`
}

// HeaderFieldJSON is a user-header key or value.
type HeaderFieldJSON struct {
	Kind  string `json:"kind"`
	Value string `json:"value"`
}

// HeaderEntryJSON is one user header.
type HeaderEntryJSON struct {
	Key   HeaderFieldJSON `json:"key"`
	Value HeaderFieldJSON `json:"value"`
}

// SendConfirmation is one partition append.
type SendConfirmation struct {
	StreamID    uint32 `json:"stream_id"`
	TopicID     uint32 `json:"topic_id"`
	PartitionID uint32 `json:"partition_id"`
	BaseOffset  uint64 `json:"base_offset"`
}

// SendMessagesReply is the 201 body of a produce.
type SendMessagesReply struct {
	Confirmations []SendConfirmation `json:"confirmations"`
}

// PolledHeader is a polled message's header.
type PolledHeader struct {
	Checksum          uint64 `json:"checksum"`
	ID                U128   `json:"id"`
	Offset            uint64 `json:"offset"`
	Timestamp         uint64 `json:"timestamp"`
	OriginTimestamp   uint64 `json:"origin_timestamp"`
	UserHeadersLength uint32 `json:"user_headers_length"`
	PayloadLength     uint32 `json:"payload_length"`
	Reserved          uint64 `json:"reserved"`
}

// PolledMessage is one polled message; user_headers is an entry array,
// or a base64 string when the stored block does not parse.
type PolledMessage struct {
	Header      PolledHeader `json:"header"`
	Payload     string       `json:"payload"`
	UserHeaders any          `json:"user_headers"`
}

// PolledMessages is the poll reply.
type PolledMessages struct {
	PartitionID   uint32          `json:"partition_id"`
	CurrentOffset uint64          `json:"current_offset"`
	Count         uint32          `json:"count"`
	Messages      []PolledMessage `json:"messages"`
}

var headerKinds = map[string]wire.HeaderKind{
	"raw": wire.HeaderRaw, "string": wire.HeaderString, "bool": wire.HeaderBool,
	"int8": wire.HeaderInt8, "int16": wire.HeaderInt16, "int32": wire.HeaderInt32, "int64": wire.HeaderInt64, "int128": wire.HeaderInt128,
	"uint8": wire.HeaderUint8, "uint16": wire.HeaderUint16, "uint32": wire.HeaderUint32, "uint64": wire.HeaderUint64, "uint128": wire.HeaderUint128,
	"float32": wire.HeaderFloat32, "float64": wire.HeaderFloat64,
}

func headerField(f HeaderFieldJSON) (wire.HeaderField, error) {
	k, ok := headerKinds[strings.ToLower(f.Kind)]
	if !ok {
		return wire.HeaderField{}, errUnprocessable("unknown user header kind " + strconv.Quote(f.Kind))
	}
	data, err := base64.StdEncoding.DecodeString(f.Value)
	if err != nil {
		return wire.HeaderField{}, errUnprocessable("user header value is not base64")
	}
	hf := wire.HeaderField{Kind: k, Data: data}
	if err := hf.Validate(); err != nil {
		return hf, codeError(wire.CodeOf(err))
	}
	return hf, nil
}

// userHeaders encodes a message's user_headers (absent/null: none).
func userHeaders(raw json.RawMessage) ([]byte, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	if s[0] == '"' {
		var b64 string
		if err := json.Unmarshal(raw, &b64); err != nil {
			return nil, errUnprocessable("user_headers is not a string")
		}
		block, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, errUnprocessable("user_headers is not base64")
		}
		return block, nil
	}
	var entries []HeaderEntryJSON
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, errUnprocessable("user_headers must be an array or a base64 string")
	}
	var hs wire.UserHeaders
	for _, e := range entries {
		k, err := headerField(e.Key)
		if err != nil {
			return nil, err
		}
		v, err := headerField(e.Value)
		if err != nil {
			return nil, err
		}
		hs = append(hs, wire.UserHeader{Key: k, Value: v})
	}
	block := hs.AppendTo(nil)
	if len(block) > wire.MaxUserHeadersSize {
		return nil, codeError(wire.ErrInvalidCommand.Code)
	}
	return block, nil
}

// partitioning reads partitioning.kind and partitioning.value.
func partitioning(kind, value string) (wire.Partitioning, error) {
	v, err := base64.StdEncoding.DecodeString(value)
	if err != nil {
		return wire.Partitioning{}, errUnprocessable("partitioning.value is not base64")
	}
	switch kind {
	case "balanced":
		return wire.Partitioning{Kind: wire.PartitionBalanced}, nil
	case "partition_id":
		if len(v) == 0 {
			return wire.Partitioning{}, codeError(wire.ErrInvalidKeyValueLength.Code)
		}
		if len(v) < 4 {
			return wire.Partitioning{}, codeError(wire.ErrInvalidCommand.Code)
		}
		return wire.Partitioning{Kind: wire.PartitionByID, PartitionID: binary.LittleEndian.Uint32(v)}, nil
	case "messages_key":
		if len(v) == 0 || len(v) > 255 {
			return wire.Partitioning{}, codeError(wire.ErrInvalidKeyValueLength.Code)
		}
		return wire.Partitioning{Kind: wire.PartitionByKey, Key: v}, nil
	}
	return wire.Partitioning{}, errUnprocessable("partitioning.kind must be balanced, partition_id or messages_key")
}

func randomID() wire.Uint128 {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = 0x40 | b[6]&0x0f
	b[8] = 0x80 | b[8]&0x3f
	return wire.Uint128{Hi: beU64(b[:8]), Lo: beU64(b[8:])}
}

func (c *call) sendMessages() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	ack := c.r.URL.Query().Get("ack")
	if ack != "" && ack != "replicated" && ack != "none" {
		return errBadRequest("ack must be replicated or none")
	}
	ps := c.s.getProduce()
	defer c.s.produces.Put(ps)
	req, err := c.produceRequest(ps, s, t)
	if err != nil {
		return err
	}
	out, err := c.s.partitionWrite(c.cred, wire.CmdSendMessages, req)
	if ack == "none" {
		if ae, ok := err.(*apiError); ok && (ae.Status == http.StatusForbidden || ae.Status == http.StatusNotFound || ae.Status == http.StatusUnauthorized) {
			return ae
		}
		c.w.Header().Set("iggy-durability", "none")
		return c.empty(http.StatusAccepted)
	}
	if err != nil {
		return err
	}
	var rep wire.SendMessagesReply
	if err := decodeReply(out.payload, &rep); err != nil {
		return err
	}
	res := SendMessagesReply{Confirmations: []SendConfirmation{}}
	for _, cf := range rep.Confirmations {
		res.Confirmations = append(res.Confirmations, SendConfirmation{StreamID: cf.StreamID, TopicID: cf.TopicID, PartitionID: cf.PartitionID, BaseOffset: cf.BaseOffset})
	}
	c.w.Header().Set("iggy-durability", "replicated-memory")
	return c.json(http.StatusCreated, res)
}

var pollKinds = map[string]wire.PollingKind{
	"offset": wire.PollOffset, "o": wire.PollOffset, "timestamp": wire.PollTimestamp, "t": wire.PollTimestamp,
	"first": wire.PollFirst, "f": wire.PollFirst, "last": wire.PollLast, "l": wire.PollLast, "next": wire.PollNext, "n": wire.PollNext,
}

// consumerQuery reads ?consumer_id= (default numeric 1).
func (c *call) consumerQuery() (wire.Identifier, error) {
	v := c.r.URL.Query().Get("consumer_id")
	if v == "" {
		return wire.NumericID(1), nil
	}
	return identText(v, "consumer_id")
}

func identText(v, field string) (wire.Identifier, error) {
	if len(v) > wire.MaxNameLen {
		e := codeError(wire.ErrInvalidIdentifier.Code)
		e.Field = &field
		return wire.Identifier{}, e
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return wire.NumericID(uint32(n)), nil
	}
	return wire.NamedID(v), nil
}

func (c *call) pollMessages() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	consumer, err := c.consumerQuery()
	if err != nil {
		return err
	}
	partition, _, err := c.queryU64("partition_id", 0, 32)
	if err != nil {
		return err
	}
	kind := wire.PollOffset
	if k := c.r.URL.Query().Get("kind"); k != "" {
		var ok bool
		if kind, ok = pollKinds[strings.ToLower(k)]; !ok {
			return errBadRequest("kind must be offset, timestamp, first, last or next")
		}
	}
	value, _, err := c.queryU64("value", 0, 64)
	if err != nil {
		return err
	}
	count, _, err := c.queryU64("count", 10, 32)
	if err != nil {
		return err
	}
	autoCommit := false
	switch c.r.URL.Query().Get("auto_commit") {
	case "", "false":
	case "true":
		autoCommit = true
	default:
		return errBadRequest("auto_commit must be true or false")
	}
	req := &wire.PollMessages{Consumer: wire.SingleConsumer(consumer), StreamID: s, TopicID: t,
		Partition: wire.SomePartition(uint32(partition)), Strategy: wire.PollingStrategy{Kind: kind, Value: value},
		Count: uint32(count), AutoCommit: autoCommit}
	pb := c.s.getPoll()
	defer c.s.polls.Put(pb)
	out, err := c.s.readInto(pb.reply, c.cred, wire.CmdPollMessages, req)
	if err != nil {
		return err // a missing stream or topic keeps its code (404 id 1009, 2010)
	}
	pb.reply = out.payload
	var pm wire.PolledMessages
	if err := decodeReply(out.payload, &pm); err != nil {
		return err
	}
	// Base64 is 4/3 of the records, plus about 300 bytes of keys and
	// numbers per message: one allocation when the pooled buffer is short.
	pb.json = appendPollJSON(slices.Grow(pb.json[:0], len(pm.Records)*4/3+300*int(pm.Count)+64), &pm)
	c.raw(http.StatusOK, pb.json)
	return nil
}
