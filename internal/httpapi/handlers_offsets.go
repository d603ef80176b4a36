package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/iggo-dev/iggo/wire"
)

// ConsumerID is a consumer id in a JSON body: a u32 or a name.
type ConsumerID struct{ wire.Identifier }

// UnmarshalJSON implements json.Unmarshaler.
func (c *ConsumerID) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if len(s) > 0 && s[0] == '"' {
		var name string
		if err := json.Unmarshal(b, &name); err != nil {
			return err
		}
		id, err := identText(name, "consumer_id")
		if err != nil {
			return err
		}
		c.Identifier = id
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return errUnprocessable("consumer_id must be a u32 or a string")
	}
	c.Identifier = wire.NumericID(uint32(n))
	return nil
}

// StoreOffsetRequest is PUT .../consumer-offsets. ConsumerKind is an Iggo
// extension ("consumer", the default, or "consumer_group").
type StoreOffsetRequest struct {
	ConsumerKind *ConsumerKind `json:"consumer_kind,omitempty"`
	ConsumerID   *ConsumerID   `json:"consumer_id,omitempty"`
	PartitionID  *uint32       `json:"partition_id"`
	Offset       *uint64       `json:"offset"`
}

// ConsumerOffset is GET .../consumer-offsets. ConsumerKind is set only for
// a group (the Iggo extension), so a plain consumer's reply keeps the
// reference's shape exactly.
type ConsumerOffset struct {
	ConsumerKind  string `json:"consumer_kind,omitempty"`
	PartitionID   uint32 `json:"partition_id"`
	CurrentOffset uint64 `json:"current_offset"`
	StoredOffset  uint64 `json:"stored_offset"`
}

func (c *call) getOffset() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	kind, err := c.kindQuery()
	if err != nil {
		return err
	}
	id, err := c.consumerQuery()
	if err != nil {
		return err
	}
	p, _, err := c.queryU64("partition_id", 0, 32)
	if err != nil {
		return err
	}
	out, err := c.read(wire.CmdGetConsumerOffset, &wire.GetConsumerOffset{Consumer: kind.consumer(id), StreamID: s, TopicID: t, Partition: wire.SomePartition(uint32(p))})
	if err != nil {
		return err
	}
	if len(out.payload) == 0 {
		return errNotFound()
	}
	var o wire.ConsumerOffset
	if err := decodeReply(out.payload, &o); err != nil {
		return err
	}
	return c.json(http.StatusOK, ConsumerOffset{ConsumerKind: kind.echo(), PartitionID: o.PartitionID, CurrentOffset: o.CurrentOffset, StoredOffset: o.StoredOffset})
}

func (c *call) storeOffset() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	var req StoreOffsetRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Offset == nil {
		return errUnprocessable("offset is required")
	}
	id := wire.NumericID(1)
	if req.ConsumerID != nil {
		id = req.ConsumerID.Identifier
	}
	kind := kindConsumer
	if req.ConsumerKind != nil {
		kind = *req.ConsumerKind
	}
	part := wire.OptPartition{}
	if req.PartitionID != nil {
		part = wire.SomePartition(*req.PartitionID)
	}
	st := &wire.StoreConsumerOffset{Consumer: kind.consumer(id), StreamID: s, TopicID: t, Partition: part, Offset: *req.Offset, Ack: wire.AckQuorum}
	if _, err := c.s.partitionWrite(c.cred, wire.CmdStoreConsumerOffset, st); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}

func (c *call) deleteOffset() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	kind, err := c.kindQuery()
	if err != nil {
		return err
	}
	id, err := c.ident("consumer_id")
	if err != nil {
		return err
	}
	part := wire.OptPartition{}
	if p, present, err := c.queryU64("partition_id", 0, 32); err != nil {
		return err
	} else if present {
		part = wire.SomePartition(uint32(p))
	}
	d := &wire.DeleteConsumerOffset{Consumer: kind.consumer(id), StreamID: s, TopicID: t, Partition: part, Ack: wire.AckQuorum}
	if _, err := c.s.partitionWrite(c.cred, wire.CmdDeleteConsumerOffset, d); err != nil {
		return err
	}
	return c.empty(http.StatusNoContent)
}
