package wire

// Consumer routing: the four commands the 0.11.0 SDKs (Rust iggy 0.11.0,
// and the SDKs built on it) send to a cluster for the requests that must
// run on a partition's primary: polls with auto-commit and consumer-offset
// writes. They are not in commands.md; their codes and layouts are the
// SDK's (iggy_binary_protocol 0.11.0: codes.rs, dispatch.rs,
// requests/system/attach_consumer_session.rs,
// responses/messages/poll_routing.rs). All four travel as NonReplicated
// requests. Once the client found more than one node in
// GET_CLUSTER_METADATA it does, for each such request:
//
//  1. GET_POLL_ROUTING (the poll's body) or GET_CONSUMER_OFFSET_ROUTING
//     (a GET_CONSUMER_OFFSET body: the head of the offset write) on its
//     coordinator connection: the reply (PollRouting) names the
//     partition's primary and the client's session there.
//  2. A data connection to that node, logged in with the client's
//     credentials (a session of its own), then ATTACH_CONSUMER_SESSION
//     with the coordinator session: partition requests on the data
//     connection then act for that session in consumer groups.
//  3. POLL_MESSAGES_ON_PRIMARY (a POLL_MESSAGES body, the same reply) or
//     the offset write itself on the data connection.
//
// A TransientNotAccepted (58) answer at steps 2-3 makes the client ask for
// the route again, so a node that does not lead the partition answers so.
const (
	// CmdAttachConsumerSession attaches a logged-in connection to the
	// client's coordinator session (AttachConsumerSession body, empty
	// reply).
	CmdAttachConsumerSession Command = 14
	// CmdGetPollRouting names the primary of the partition a poll reads
	// (PollMessages body, PollRouting reply).
	CmdGetPollRouting Command = 103
	// CmdPollMessagesOnPrimary is POLL_MESSAGES on the partition's
	// primary (PollMessages body, poll reply); another node answers 58.
	CmdPollMessagesOnPrimary Command = 104
	// CmdGetConsumerOffsetRouting names the primary of the partition an
	// offset write changes (GetConsumerOffset body, PollRouting reply).
	CmdGetConsumerOffsetRouting Command = 123
)

// routingTable lists the consumer-routing commands in code order.
var routingTable = [...]CommandInfo{
	read(CmdAttachConsumerSession, "ATTACH_CONSUMER_SESSION"),
	read(CmdGetPollRouting, "GET_POLL_ROUTING"),
	read(CmdPollMessagesOnPrimary, "POLL_MESSAGES_ON_PRIMARY"),
	read(CmdGetConsumerOffsetRouting, "GET_CONSUMER_OFFSET_ROUTING"),
}

// lookupRouting finds a consumer-routing command.
func lookupRouting(code Command) (CommandInfo, bool) {
	for _, c := range routingTable {
		if c.Code == code {
			return c, true
		}
	}
	return CommandInfo{}, false
}

// AttachConsumerSessionSize is the encoded size of AttachConsumerSession.
const AttachConsumerSessionSize = 32

// AttachConsumerSession is the body of ATTACH_CONSUMER_SESSION and the
// head of PollRouting: [client_id u128][session u64][metadata_watermark
// u64]. Client and Session are the coordinator connection's client id
// and session epoch; MetadataWatermark is a metadata commit index the
// attaching node must have applied first (it holds the consumer-group
// memberships the client saw committed).
type AttachConsumerSession struct {
	Client            Uint128
	Session           uint64
	MetadataWatermark uint64
}

// AppendTo appends the body.
func (a *AttachConsumerSession) AppendTo(dst []byte) []byte {
	dst = appendU128(dst, a.Client)
	dst = appendU64(dst, a.Session)
	return appendU64(dst, a.MetadataWatermark)
}

// Decode decodes the body; bytes after it are ignored, as in every
// request body.
func (a *AttachConsumerSession) Decode(src []byte) error {
	if len(src) < AttachConsumerSessionSize {
		return ErrInvalidCommand
	}
	a.Client = GetUint128(src)
	r := newReader(src[16:])
	a.Session = r.u64()
	a.MetadataWatermark = r.u64()
	return r.done()
}

// PollRouting is the reply of GET_POLL_ROUTING and
// GET_CONSUMER_OFFSET_ROUTING: the session to attach to
// (AttachConsumerSession), then the primary as a GET_CLUSTER_METADATA node
// ([name str32][ip str32][tcp u16][quic u16][http u16][websocket u16][role
// u8][status u8]).
type PollRouting struct {
	Session AttachConsumerSession
	Primary ClusterNode
}

// AppendTo appends the reply.
func (p *PollRouting) AppendTo(dst []byte) []byte {
	dst = p.Session.AppendTo(dst)
	n := &p.Primary
	dst = appendStr32(dst, n.Name)
	dst = appendStr32(dst, n.IP)
	dst = appendU16(dst, n.TCPPort)
	dst = appendU16(dst, n.QUICPort)
	dst = appendU16(dst, n.HTTPPort)
	dst = appendU16(dst, n.WebSocketPort)
	return append(dst, byte(n.Role), byte(n.Status))
}

// Decode decodes the reply, rejecting trailing bytes.
func (p *PollRouting) Decode(src []byte) error {
	if err := p.Session.Decode(src); err != nil {
		return err
	}
	r := newReader(src[AttachConsumerSessionSize:])
	p.Primary = ClusterNode{
		Name:    r.str32(MaxSystemStringLen),
		IP:      r.str32(MaxSystemStringLen),
		TCPPort: r.u16(), QUICPort: r.u16(), HTTPPort: r.u16(), WebSocketPort: r.u16(),
		Role: ClusterNodeRole(r.u8()), Status: ClusterNodeStatus(r.u8()),
	}
	return r.finish()
}
