package httpapi

import (
	"net/http"

	"github.com/iggo-dev/iggo/wire"
)

// DamagedRange is one quarantined range of a partition in a
// VerifyPartitions answer.
type DamagedRange struct {
	FirstOffset uint64 `json:"first_offset"`
	LastOffset  uint64 `json:"last_offset"`
	// File is the segment log, relative to the server's data directory.
	File     string `json:"file"`
	Position uint64 `json:"position"`
	Bytes    uint64 `json:"bytes"`
	Reason   string `json:"reason"`
}

// PartitionVerify is one partition of a VerifyPartitions answer: status
// "checked", "not held" (this node holds no replica of it), "stopped" or
// "failed" (error says why).
type PartitionVerify struct {
	Partition uint32         `json:"partition"`
	Status    string         `json:"status"`
	Segments  uint32         `json:"segments"`
	Records   uint64         `json:"records"`
	Bytes     uint64         `json:"bytes"`
	Error     string         `json:"error,omitempty"`
	Damaged   []DamagedRange `json:"damaged"`
}

// VerifyPartitions is POST /streams/{stream_id}/topics/{topic_id}/partitions/verify
// (an Iggo extension, the binary VERIFY_PARTITION): the partitions of the
// topic as this node stores them, re-verified, with what is quarantined.
type VerifyPartitions struct {
	Partitions []PartitionVerify `json:"partitions"`
}

// VerifyJSON renders a VERIFY_PARTITION reply as the route answers it
// (`iggo partition verify -o json` prints the same document).
func VerifyJSON(r *wire.VerifyPartitionReply) VerifyPartitions {
	out := VerifyPartitions{Partitions: []PartitionVerify{}}
	for _, p := range r.Partitions {
		pv := PartitionVerify{Partition: p.PartitionID, Status: p.Status.String(), Segments: p.Segments,
			Records: p.Records, Bytes: p.Bytes, Error: p.Error, Damaged: []DamagedRange{}}
		for _, d := range p.Damaged {
			pv.Damaged = append(pv.Damaged, DamagedRange{FirstOffset: d.First, LastOffset: d.Last, File: d.File,
				Position: d.Pos, Bytes: d.Len, Reason: d.Reason})
		}
		out.Partitions = append(out.Partitions, pv)
	}
	return out
}

// verifyPartitions runs VERIFY_PARTITION on this node (never forwarded:
// it checks this node's disk), for ?partition_id or every partition.
func (c *call) verifyPartitions() error {
	s, t, err := c.streamTopic()
	if err != nil {
		return err
	}
	id, present, err := c.queryU64("partition_id", 0, 32)
	if err != nil {
		return err
	}
	req := &wire.VerifyPartition{StreamID: s, TopicID: t}
	if present {
		req.Partition = wire.SomePartition(uint32(id))
	}
	out, err := c.read(wire.CmdVerifyPartition, req)
	if err != nil {
		return err
	}
	var r wire.VerifyPartitionReply
	if err := decodeReply(out.payload, &r); err != nil {
		return err
	}
	return c.json(http.StatusOK, VerifyJSON(&r))
}
