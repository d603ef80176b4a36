package httpapi

import (
	"encoding/base64"
	"strings"

	"github.com/iggo-dev/iggo/wire"
)

// pollStructs renders a poll reply through the PolledMessages structs, the
// form encoding/json marshals: the reference appendPollJSON must match.
func pollStructs(pm *wire.PolledMessages) PolledMessages {
	res := PolledMessages{PartitionID: pm.PartitionID, CurrentOffset: pm.CurrentOffset, Messages: []PolledMessage{}}
	it := pm.Messages()
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		res.Messages = append(res.Messages, PolledMessage{
			Header: PolledHeader{Checksum: m.Checksum, ID: U128(m.ID), Offset: m.Offset, Timestamp: m.Timestamp,
				OriginTimestamp: m.OriginTimestamp, UserHeadersLength: uint32(len(m.UserHeaders)), PayloadLength: uint32(len(m.Payload))},
			Payload:     base64.StdEncoding.EncodeToString(m.Payload),
			UserHeaders: headersStructs(m.UserHeaders),
		})
	}
	res.Count = uint32(len(res.Messages))
	return res
}

// headersStructs renders a stored user-headers block as entries, or as a
// base64 string when it does not parse.
func headersStructs(block []byte) any {
	entries := []HeaderEntryJSON{}
	it := wire.IterUserHeaders(block)
	for h, ok := it.Next(); ok; h, ok = it.Next() {
		entries = append(entries, HeaderEntryJSON{
			Key:   HeaderFieldJSON{Kind: strings.ToLower(h.Key.Kind.String()), Value: base64.StdEncoding.EncodeToString(h.Key.Data)},
			Value: HeaderFieldJSON{Kind: strings.ToLower(h.Value.Kind.String()), Value: base64.StdEncoding.EncodeToString(h.Value.Data)},
		})
	}
	if it.Err() != nil {
		return base64.StdEncoding.EncodeToString(block)
	}
	return entries
}
