package httpapi

import (
	"encoding/json"
	"errors"

	"github.com/iggo-dev/iggo/wire"
)

// errKind is the decode error of a consumer_kind body field (422).
var errKind = errors.New(`consumer_kind must be "consumer" or "consumer_group"`)

// ConsumerKind is the Iggo extension that lets the consumer-offset routes
// address a consumer group: "consumer" (the default, the reference's only
// kind) or "consumer_group" (kind 2 of the wire Consumer). It is the
// consumer_kind query parameter of GET and DELETE and the consumer_kind
// body field of PUT; the request then runs the same binary command as a
// binary client's, with the same permissions and group rules.
type ConsumerKind string

// Consumer kinds of the extension.
const (
	kindConsumer      ConsumerKind = "consumer"
	kindConsumerGroup ConsumerKind = "consumer_group"
)

// parseConsumerKind accepts the two kinds by their exact names.
func parseConsumerKind(s string) (ConsumerKind, bool) {
	switch k := ConsumerKind(s); k {
	case kindConsumer, kindConsumerGroup:
		return k, true
	}
	return "", false
}

// UnmarshalJSON implements json.Unmarshaler: another value is 422.
func (k *ConsumerKind) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return errKind
	}
	v, ok := parseConsumerKind(s)
	if !ok {
		return errKind
	}
	*k = v
	return nil
}

// consumer is the wire Consumer of kind k with identifier id.
func (k ConsumerKind) consumer(id wire.Identifier) wire.Consumer {
	if k == kindConsumerGroup {
		return wire.GroupConsumer(id)
	}
	return wire.SingleConsumer(id)
}

// echo is the consumer_kind field of a GET reply: the group kind only, so
// a plain consumer's reply has the reference's shape.
func (k ConsumerKind) echo() string {
	if k == kindConsumerGroup {
		return string(k)
	}
	return ""
}

// kindQuery reads the optional consumer_kind query parameter (absent or
// empty: consumer; another value: 400).
func (c *call) kindQuery() (ConsumerKind, error) {
	v := c.r.URL.Query().Get("consumer_kind")
	if v == "" {
		return kindConsumer, nil
	}
	k, ok := parseConsumerKind(v)
	if !ok {
		return "", errBadRequest("consumer_kind must be consumer or consumer_group")
	}
	return k, nil
}
