package wire

import "unicode/utf8"

// Limits of the client bodies.
const (
	// MaxClientAddressLen bounds the address string of a Client. Peer
	// addresses ("ip:port", IPv6 with zone) are far shorter; the bound only
	// keeps a hostile length from reaching the allocator.
	MaxClientAddressLen = 4096

	// clientGroupLen is one {stream_id, topic_id, group_id} entry.
	clientGroupLen = 12
)

// Transport is the transport byte of a Client: 1 TCP (also TLS), 2 QUIC,
// 4 WebSocket (also WSS) (commands.md, "Client"). Decoders carry unknown
// values as sent; the Go SDK shows them as "Unknown".
type Transport uint8

// Transports.
const (
	TransportTCP       Transport = 1
	TransportQUIC      Transport = 2
	TransportWebSocket Transport = 4
)

// String returns "tcp", "quic", "websocket" or "unknown".
func (t Transport) String() string {
	switch t {
	case TransportTCP:
		return "tcp"
	case TransportQUIC:
		return "quic"
	case TransportWebSocket:
		return "websocket"
	}
	return "unknown"
}

// Client is one client header (commands.md, "Client (ClientHeader)"), the
// element of the GET_CLIENTS reply:
// [client_id u32][user_id u32][transport u8][address_len u32][address]
// [consumer_groups_count u32]. The list form carries the count but not the
// group entries.
type Client struct {
	ClientID uint32
	// UserID is the logged-in user; a connection that has not logged in
	// reports u32::MAX (semantics.md §7; commands.md leaves it UNKNOWN and 0
	// would name the root user).
	UserID              uint32
	Transport           Transport
	Address             string
	ConsumerGroupsCount uint32
}

// Validate checks the address: UTF-8, at most MaxClientAddressLen bytes.
func (c *Client) Validate() error {
	if !validClientAddress(c.Address) {
		return ErrInvalidCommand
	}
	return nil
}

// AppendTo appends the client header.
func (c *Client) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, c.ClientID)
	dst = appendU32(dst, c.UserID)
	dst = appendU8(dst, uint8(c.Transport))
	dst = appendU32(dst, uint32(len(c.Address)))
	dst = append(dst, c.Address...)
	return appendU32(dst, c.ConsumerGroupsCount)
}

// Decode decodes exactly one client header (no trailing bytes).
func (c *Client) Decode(src []byte) error {
	r := newReader(src)
	c.read(&r)
	return r.finish()
}

func (c *Client) read(r *reader) {
	c.ClientID = r.u32()
	c.UserID = r.u32()
	c.Transport = Transport(r.u8())
	c.Address = r.str32(MaxClientAddressLen)
	c.ConsumerGroupsCount = r.u32()
}

// ClientConsumerGroup is one consumer-group membership of a client, as
// listed in ClientDetails.
type ClientConsumerGroup struct {
	StreamID uint32
	TopicID  uint32
	GroupID  uint32
}

// ClientDetails is the payload of GET_ME and GET_CLIENT (commands.md,
// "ClientDetails"): a Client header whose consumer_groups_count drives the
// {stream_id u32, topic_id u32, group_id u32} entries that follow. The
// count is len(ConsumerGroups).
//
// GET_CLIENT answers an unknown client id with an empty body (status 0); a
// caller checks ClientNotFound(payload) before decoding, since Decode
// refuses an empty payload.
type ClientDetails struct {
	ClientID       uint32
	UserID         uint32
	Transport      Transport
	Address        string
	ConsumerGroups []ClientConsumerGroup
}

// ClientNotFound reports whether a GET_CLIENT reply payload is the empty
// "no such client" answer rather than ClientDetails.
func ClientNotFound(payload []byte) bool { return len(payload) == 0 }

// Header returns the Client header of d, as GET_CLIENTS lists it.
func (d *ClientDetails) Header() Client {
	return Client{ClientID: d.ClientID, UserID: d.UserID, Transport: d.Transport,
		Address: d.Address, ConsumerGroupsCount: uint32(len(d.ConsumerGroups))}
}

// Validate checks the address: UTF-8, at most MaxClientAddressLen bytes.
func (d *ClientDetails) Validate() error {
	if !validClientAddress(d.Address) {
		return ErrInvalidCommand
	}
	return nil
}

// AppendTo appends the details.
func (d *ClientDetails) AppendTo(dst []byte) []byte {
	h := d.Header()
	dst = h.AppendTo(dst)
	for _, g := range d.ConsumerGroups {
		dst = appendU32(dst, g.StreamID)
		dst = appendU32(dst, g.TopicID)
		dst = appendU32(dst, g.GroupID)
	}
	return dst
}

// Decode decodes the details, rejecting trailing bytes. The entry count is
// checked against the remaining bytes before anything is allocated.
func (d *ClientDetails) Decode(src []byte) error {
	r := newReader(src)
	var h Client
	h.read(&r)
	d.ClientID, d.UserID, d.Transport, d.Address = h.ClientID, h.UserID, h.Transport, h.Address
	d.ConsumerGroups = nil
	n := h.ConsumerGroupsCount
	if r.err == nil && uint64(n)*clientGroupLen != uint64(r.remaining()) {
		r.fail(ErrInvalidCommand)
	}
	if r.err == nil && n > 0 {
		d.ConsumerGroups = make([]ClientConsumerGroup, n)
		for i := range d.ConsumerGroups {
			d.ConsumerGroups[i] = ClientConsumerGroup{StreamID: r.u32(), TopicID: r.u32(), GroupID: r.u32()}
		}
	}
	return r.finish()
}

// Clients is the payload of GET_CLIENTS: Client headers back to back until
// the end of the payload, no count; an empty payload is no clients
// (commands.md §22).
type Clients []Client

// AppendTo appends every client header.
func (cs *Clients) AppendTo(dst []byte) []byte {
	for i := range *cs {
		dst = (*cs)[i].AppendTo(dst)
	}
	return dst
}

// Decode decodes client headers until the end of src. Each header consumes
// at least 17 bytes, so the list grows with the input only.
func (cs *Clients) Decode(src []byte) error {
	r := newReader(src)
	list := (*cs)[:0]
	for r.remaining() > 0 && r.err == nil {
		var c Client
		c.read(&r)
		list = append(list, c)
	}
	if err := r.finish(); err != nil {
		*cs = nil
		return err
	}
	*cs = list
	return nil
}

// GetClient is the body of GET_CLIENT (code 21): [client_id u32].
type GetClient struct {
	ClientID uint32
}

// AppendTo appends the body.
func (g *GetClient) AppendTo(dst []byte) []byte { return appendU32(dst, g.ClientID) }

// Decode decodes the client id and ignores trailing bytes.
func (g *GetClient) Decode(src []byte) error {
	r := newReader(src)
	g.ClientID = r.u32()
	return r.done()
}

// validClientAddress reports whether s fits the address field.
func validClientAddress(s string) bool {
	return len(s) <= MaxClientAddressLen && utf8.ValidString(s)
}
