package wire

// The partition map (CLUSTER_PARTITIONS) and the commands that go with
// it: Iggo extensions, see cluster_admin.go.
const (
	// CmdClusterPartitions reads the partition map: every node with its
	// client addresses, and per partition its replicas, its leader and
	// the replicas known to be caught up (ClusterPartitions body, which
	// may be empty; PartitionMap reply). Any node answers it from what
	// it knows; any authenticated user may ask, and sees the topics it
	// may read, poll or send to (every topic with read_servers).
	CmdClusterPartitions Command = 1003
	// CmdClusterRebalance plans replica moves that balance the replicas
	// over the nodes (empty body, ClusterRebalanceReply reply;
	// manage_servers, on the metadata leader): it answers once the first
	// moves are committed; the others follow as those finish.
	CmdClusterRebalance Command = 1004
	// CmdAttachSession binds a new connection to the caller's existing
	// session (AttachSession body, LoginRegisterReply reply), so that a
	// client can talk to several nodes under one client id and session
	// without a Register per connection: a Register would raise the
	// session epoch and fence the client's other connections. Closing an
	// attached connection does not end the session.
	CmdAttachSession Command = 1005
)

// MaxPartitionMapNodes bounds the nodes of a PartitionMap: replica ids
// are u8.
const MaxPartitionMapNodes = 256

// PartitionMapLeadersOnly is a ClusterPartitions flag: the server may
// leave CaughtUp unknown (HasCaughtUp false) for every partition, which
// spares it a progress lookup per partition it leads. Clients that route
// requests set it; tools that show the map do not.
const PartitionMapLeadersOnly uint8 = 1

// ClusterPartitions is the body of CLUSTER_PARTITIONS: empty, or
// [flags u8] (PartitionMapLeadersOnly; other bits are ignored). An empty
// body asks for everything.
type ClusterPartitions struct {
	Flags uint8
}

// AppendTo appends the body: nothing when Flags is 0.
func (c *ClusterPartitions) AppendTo(dst []byte) []byte {
	if c.Flags == 0 {
		return dst
	}
	return append(dst, c.Flags)
}

// Decode decodes the body; bytes after the flags are ignored, as in
// every request body.
func (c *ClusterPartitions) Decode(src []byte) error {
	c.Flags = 0
	if len(src) > 0 {
		c.Flags = src[0]
	}
	return nil
}

// PartitionMapNode is one node of a PartitionMap: [replica_id u8]
// [name str32][host str32][tcp u16][quic u16][http u16][websocket u16].
// Host is the client-facing address chosen for the caller, as in
// GET_CLUSTER_METADATA; a port is 0 when the node does not serve that
// transport.
type PartitionMapNode struct {
	ReplicaID                                  uint8
	Name, Host                                 string
	TCPPort, QUICPort, HTTPPort, WebSocketPort uint16
}

// PartitionPlacement is one partition of a PartitionMapTopic:
// [partition_id u32][replicas_count u8][replica_id u8 × count]
// [flags u8: bit 0 has_leader, bit 1 has_caught_up][leader u8]
// [caught_up_count u8][replica_id u8 × count]: a list holds at most 255
// members. Leader is meaningful only with HasLeader, CaughtUp only with
// HasCaughtUp (otherwise unknown to the answering node); without its flag
// the leader byte is 0 and the list empty.
type PartitionPlacement struct {
	PartitionID uint32
	// Replicas are the replica ids holding the partition, preferred
	// leader first when the cluster places partitions.
	Replicas    []uint8
	Leader      uint8
	HasLeader   bool
	CaughtUp    []uint8
	HasCaughtUp bool
}

// PartitionMapTopic is one topic of a PartitionMap: [stream_id u32]
// [stream_name Name][topic_id u32][topic_name Name][partitions_count u32]
// [PartitionPlacement × count], partitions in ascending id order.
type PartitionMapTopic struct {
	StreamID   uint32
	StreamName string
	TopicID    uint32
	TopicName  string
	Partitions []PartitionPlacement
}

// PartitionMap is the reply of CLUSTER_PARTITIONS: [nodes_count u32]
// [PartitionMapNode × count][topics_count u32][PartitionMapTopic × count].
// Nodes are in roster order, topics in ascending (stream, topic) order.
type PartitionMap struct {
	Nodes  []PartitionMapNode
	Topics []PartitionMapTopic
}

// Placement flag bits.
const (
	placementHasLeader   = 1
	placementHasCaughtUp = 2
)

// Minimum encoded sizes, used to bound counts by the bytes left before
// anything is allocated.
const (
	minMapNodeSize      = 1 + 4 + 4 + 4*2
	minMapTopicSize     = 4 + 2 + 4 + 2 + 4
	minPlacementSize    = 4 + 1 + 1 + 1 + 1
	maxReplicaListBytes = 255
)

// Validate checks what the encoding cannot carry: more nodes than replica
// ids, replica lists over 255 members, names that are not Names, node
// strings over MaxSystemStringLen.
func (m *PartitionMap) Validate() error {
	if len(m.Nodes) > MaxPartitionMapNodes {
		return ErrInvalidCommand
	}
	for i := range m.Nodes {
		n := &m.Nodes[i]
		if !validSystemString(n.Name) || !validSystemString(n.Host) {
			return ErrInvalidCommand
		}
	}
	for i := range m.Topics {
		t := &m.Topics[i]
		if !validName(t.StreamName) || !validName(t.TopicName) {
			return ErrInvalidCommand
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			if len(p.Replicas) > maxReplicaListBytes || len(p.CaughtUp) > maxReplicaListBytes {
				return ErrInvalidCommand
			}
		}
	}
	return nil
}

// AppendTo appends the payload. Call Validate first: lists longer than
// the encoding allows are cut.
func (m *PartitionMap) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, uint32(len(m.Nodes)))
	for i := range m.Nodes {
		n := &m.Nodes[i]
		dst = append(dst, n.ReplicaID)
		dst = appendStr32(dst, n.Name)
		dst = appendStr32(dst, n.Host)
		dst = appendU16(dst, n.TCPPort)
		dst = appendU16(dst, n.QUICPort)
		dst = appendU16(dst, n.HTTPPort)
		dst = appendU16(dst, n.WebSocketPort)
	}
	dst = appendU32(dst, uint32(len(m.Topics)))
	for i := range m.Topics {
		t := &m.Topics[i]
		dst = appendU32(dst, t.StreamID)
		dst = appendName(dst, t.StreamName)
		dst = appendU32(dst, t.TopicID)
		dst = appendName(dst, t.TopicName)
		dst = appendU32(dst, uint32(len(t.Partitions)))
		for j := range t.Partitions {
			dst = t.Partitions[j].appendTo(dst)
		}
	}
	return dst
}

func (p *PartitionPlacement) appendTo(dst []byte) []byte {
	dst = appendU32(dst, p.PartitionID)
	dst = appendReplicaList(dst, p.Replicas)
	var flags byte
	if p.HasLeader {
		flags |= placementHasLeader
	}
	if p.HasCaughtUp {
		flags |= placementHasCaughtUp
	}
	dst = append(dst, flags, p.Leader)
	return appendReplicaList(dst, p.CaughtUp)
}

// appendReplicaList appends [count u8][ids], at most 255 ids.
func appendReplicaList(dst []byte, ids []uint8) []byte {
	ids = ids[:min(len(ids), maxReplicaListBytes)]
	dst = append(dst, uint8(len(ids)))
	return append(dst, ids...)
}

// replicaList reads [count u8][ids]; an empty list is nil.
func (r *reader) replicaList() []uint8 {
	n := int(r.u8())
	b := r.take(n)
	if len(b) == 0 {
		return nil
	}
	return append([]uint8(nil), b...)
}

// Decode decodes the payload, rejecting trailing bytes, counts the bytes
// left cannot hold, a placement flag byte with unknown bits, and a leader
// or caught-up list without its flag.
func (m *PartitionMap) Decode(src []byte) error {
	r := newReader(src)
	*m = PartitionMap{}
	n := r.u32()
	if r.err == nil && (n > MaxPartitionMapNodes || uint64(n)*minMapNodeSize > uint64(r.remaining())) {
		return ErrInvalidCommand
	}
	if n > 0 {
		m.Nodes = make([]PartitionMapNode, n)
	}
	for i := range m.Nodes {
		nd := &m.Nodes[i]
		nd.ReplicaID = r.u8()
		nd.Name = r.str32(MaxSystemStringLen)
		nd.Host = r.str32(MaxSystemStringLen)
		nd.TCPPort, nd.QUICPort, nd.HTTPPort, nd.WebSocketPort = r.u16(), r.u16(), r.u16(), r.u16()
	}
	n = r.u32()
	if r.err == nil && uint64(n)*minMapTopicSize > uint64(r.remaining()) {
		return ErrInvalidCommand
	}
	if n > 0 && r.err == nil {
		m.Topics = make([]PartitionMapTopic, n)
	}
	for i := range m.Topics {
		t := &m.Topics[i]
		t.StreamID = r.u32()
		t.StreamName = r.name()
		t.TopicID = r.u32()
		t.TopicName = r.name()
		np := r.u32()
		if r.err != nil {
			break
		}
		if uint64(np)*minPlacementSize > uint64(r.remaining()) {
			return ErrInvalidCommand
		}
		if np > 0 {
			t.Partitions = make([]PartitionPlacement, np)
		}
		for j := range t.Partitions {
			if err := t.Partitions[j].read(&r); err != nil {
				return err
			}
		}
	}
	return r.finish()
}

func (p *PartitionPlacement) read(r *reader) error {
	p.PartitionID = r.u32()
	p.Replicas = r.replicaList()
	flags := r.u8()
	p.Leader = r.u8()
	p.CaughtUp = r.replicaList()
	if r.err != nil {
		return r.err
	}
	if flags&^(placementHasLeader|placementHasCaughtUp) != 0 {
		return ErrInvalidCommand
	}
	p.HasLeader = flags&placementHasLeader != 0
	p.HasCaughtUp = flags&placementHasCaughtUp != 0
	if !p.HasLeader && p.Leader != 0 || !p.HasCaughtUp && len(p.CaughtUp) != 0 {
		return ErrInvalidCommand
	}
	return nil
}

// AttachSession is the body of ATTACH_SESSION: [session u64] followed by
// the body of a LOGIN_REGISTER or LOGIN_REGISTER_WITH_PAT (version
// prefix, then the credentials). Session is the epoch the client's login
// returned; the server binds the connection to it when it is the client
// id's current session and the credentials name its user.
type AttachSession struct {
	Session uint64
	// Login is the login body, encoded (LoginRegister.AppendTo or
	// LoginRegisterWithPAT.AppendTo).
	Login []byte
}

// AppendTo appends the body.
func (a *AttachSession) AppendTo(dst []byte) []byte {
	dst = appendU64(dst, a.Session)
	return append(dst, a.Login...)
}

// Decode decodes the body; Login aliases src.
func (a *AttachSession) Decode(src []byte) error {
	r := newReader(src)
	a.Session = r.u64()
	a.Login = r.rest()
	if r.err == nil && a.Session == 0 {
		return ErrInvalidCommand
	}
	return r.err
}
