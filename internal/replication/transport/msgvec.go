package transport

import (
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// A raft message whose entries carry large data (a leader's append of
// client batches) is not marshalled into the writer's buffer: the
// message without its entries is, and each entry is appended by hand
// with its data left where it lies (an extData of the vectored write,
// appendMsgVec in encode.go).
// The bytes on the wire are a valid protobuf encoding of the whole
// message (fields may come in any order and repeated fields concatenate),
// so any decoder reads them; the receiving reader decodes the entries by
// hand too and leaves their large data in its frame buffer
// (decodeMsgAlias). Neither side copies an entry's data: the leader
// sends the same bytes to every follower without marshalling them once
// per follower, and a follower writes them to its segment from the frame
// it read.

// Field numbers of raftpb.Message and raftpb.Entry used by the hand
// encoding; TestMsgHeadCoversEveryField checks them against the
// descriptors.
const (
	msgFieldEntries protowire.Number = 7
	entFieldType    protowire.Number = 1
	entFieldTerm    protowire.Number = 2
	entFieldIndex   protowire.Number = 3
	entFieldData    protowire.Number = 4
)

// hasLargeEntry reports whether m carries an entry whose data is at
// least vecMin bytes.
func hasLargeEntry(m *raftpb.Message, vecMin int) bool {
	for _, e := range m.Entries {
		if len(e.Data) >= vecMin {
			return true
		}
	}
	return false
}

// msgHead returns m without its entries: a new message sharing m's
// other fields (raft never changes a message once it is in a Ready).
func msgHead(m *raftpb.Message) *raftpb.Message {
	return &raftpb.Message{
		Type: m.Type, To: m.To, From: m.From, Term: m.Term, LogTerm: m.LogTerm,
		Index: m.Index, Commit: m.Commit, Vote: m.Vote, Snapshot: m.Snapshot,
		Reject: m.Reject, RejectHint: m.RejectHint, Context: m.Context,
		Responses: m.Responses,
	}
}

// entryFieldsSize is the encoded size of e's fields (the entry's body).
func entryFieldsSize(e *raftpb.Entry) int {
	n := 0
	if e.Type != nil {
		n += protowire.SizeTag(entFieldType) + protowire.SizeVarint(uint64(*e.Type))
	}
	if e.Term != nil {
		n += protowire.SizeTag(entFieldTerm) + protowire.SizeVarint(*e.Term)
	}
	if e.Index != nil {
		n += protowire.SizeTag(entFieldIndex) + protowire.SizeVarint(*e.Index)
	}
	if e.Data != nil {
		n += protowire.SizeTag(entFieldData) + protowire.SizeBytes(len(e.Data))
	}
	return n
}

// msgVecSize is the encoded size of m as appendMsgVec writes it, given
// its head's size.
func msgVecSize(m *raftpb.Message, headSize int) int {
	n := headSize
	for _, e := range m.Entries {
		n += protowire.SizeTag(msgFieldEntries) + protowire.SizeBytes(entryFieldsSize(e))
	}
	return n
}

// decodeMsgAlias decodes a raft message into m, leaving the data of
// entries of at least aliasMin bytes in body instead of copying it;
// aliased says whether it did. Entries are read by hand, every other
// field by proto.Unmarshal, so the result equals proto.Unmarshal's; an
// entry this reader does not expect (an unknown field, an enum value
// raft does not define, a repeated field) sends the whole body to
// proto.Unmarshal, which copies.
func decodeMsgAlias(body []byte, m *raftpb.Message, aliasMin int) (aliased bool, err error) {
	if len(body) < aliasMin {
		// No entry in it can be large (heartbeats, acknowledgements):
		// one pass of proto.Unmarshal, not a scan first.
		return false, proto.Unmarshal(body, m)
	}
	var (
		entries []*raftpb.Entry
		rest    []byte // every field but the entries, in order
		restAt  = -1   // body[restAt:p] is a run of such fields not yet in rest
		p       = 0
	)
	flush := func(end int) {
		if restAt >= 0 {
			rest = append(rest, body[restAt:end]...)
			restAt = -1
		}
	}
	for p < len(body) {
		num, typ, n := protowire.ConsumeTag(body[p:])
		if n < 0 {
			return false, protowire.ParseError(n)
		}
		if num == msgFieldEntries && typ == protowire.BytesType {
			v, k := protowire.ConsumeBytes(body[p+n:])
			if k < 0 {
				return false, protowire.ParseError(k)
			}
			e, a, ok := decodeEntryAlias(v, aliasMin)
			if !ok {
				return false, proto.Unmarshal(body, m) // it copies every byte it keeps
			}
			flush(p)
			entries = append(entries, e)
			aliased = aliased || a
			p += n + k
			continue
		}
		k := protowire.ConsumeFieldValue(num, typ, body[p+n:])
		if k < 0 {
			return false, protowire.ParseError(k)
		}
		if restAt < 0 {
			restAt = p
		}
		p += n + k
	}
	if entries == nil {
		// No entry: the body is all rest.
		return false, proto.Unmarshal(body, m) // it copies every byte it keeps
	}
	flush(p)
	if err := proto.Unmarshal(rest, m); err != nil {
		return false, err
	}
	m.Entries = entries
	return aliased, nil
}

// decodeEntryAlias decodes one entry; ok false means it holds something
// the hand decoder leaves to proto.Unmarshal.
func decodeEntryAlias(b []byte, aliasMin int) (e *raftpb.Entry, aliased, ok bool) {
	e = &raftpb.Entry{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, false, false
		}
		b = b[n:]
		switch {
		case typ == protowire.VarintType && (num == entFieldType || num == entFieldTerm || num == entFieldIndex):
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return nil, false, false
			}
			b = b[k:]
			switch num {
			case entFieldType:
				t := raftpb.EntryType(v)
				if uint64(t) != v || t.Descriptor().Values().ByNumber(protoreflect.EnumNumber(t)) == nil {
					return nil, false, false
				}
				e.Type = &t
			case entFieldTerm:
				e.Term = &v
			default:
				e.Index = &v
			}
		case typ == protowire.BytesType && num == entFieldData:
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return nil, false, false
			}
			b = b[k:]
			if len(v) >= aliasMin {
				e.Data, aliased = v[:len(v):len(v)], true
			} else {
				e.Data = append(make([]byte, 0, len(v)), v...)
			}
		default:
			return nil, false, false
		}
	}
	return e, aliased, true
}
