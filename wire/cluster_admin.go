package wire

// Iggo's extension commands: cluster administration (1001, 1002, 1004),
// the partition map (1003, cluster_partitions.go), session attachment
// (1005), partition verification (1006, verify_partition.go) and the
// tiers of a topic's partitions (1007, partition_tiers.go). They are not
// part of the reference protocol: their codes lie above the reference's
// range (which ends at 606) and below the dispatcher's limit of 1023;
// they are sent as NonReplicated requests like reads, and only an Iggo
// server serves them (the cluster commands in cluster mode only: a single
// node answers FeatureUnavailable; other servers treat them as unknown
// codes). LookupCommand knows them; Commands lists the reference's codes
// only.
const (
	// CmdClusterAddNode adds a node to the cluster at run time
	// (ClusterNodeSpec body, empty reply): the node joins every raft group
	// as a learner, receives the data, and only then becomes a voter.
	CmdClusterAddNode Command = 1001
	// CmdClusterRemoveNode removes a node (ClusterRemoveNode body, empty
	// reply) from every raft group through joint consensus.
	CmdClusterRemoveNode Command = 1002
)

// extensionTable lists Iggo's extension commands in code order.
var extensionTable = [...]CommandInfo{
	read(CmdClusterAddNode, "CLUSTER_ADD_NODE"),
	read(CmdClusterRemoveNode, "CLUSTER_REMOVE_NODE"),
	read(CmdClusterPartitions, "CLUSTER_PARTITIONS"),
	read(CmdClusterRebalance, "CLUSTER_REBALANCE"),
	read(CmdAttachSession, "ATTACH_SESSION"),
	read(CmdVerifyPartition, "VERIFY_PARTITION"),
	read(CmdPartitionTiers, "PARTITION_TIERS"),
}

// lookupExtension finds an extension command.
func lookupExtension(code Command) (CommandInfo, bool) {
	for _, c := range extensionTable {
		if c.Code == code {
			return c, true
		}
	}
	return CommandInfo{}, false
}

// ClusterNodeSpec is the body of CLUSTER_ADD_NODE: the new node's roster
// entry. [replica_id u8][name str32][ip str32][tcp u16][quic u16][http
// u16][websocket u16][tcp_replica u16].
type ClusterNodeSpec struct {
	ReplicaID                                  uint8
	Name, IP                                   string
	TCPPort, QUICPort, HTTPPort, WebSocketPort uint16
	ReplicaPort                                uint16
	// Rack and MetadataOnly are the node's roster rack and
	// metadata_only flag: an optional tail [rack str32][flags u8: bit 0
	// metadata_only], sent only when one is set.
	Rack         string
	MetadataOnly bool
}

// AppendTo appends the body.
func (s *ClusterNodeSpec) AppendTo(dst []byte) []byte {
	dst = append(dst, s.ReplicaID)
	dst = appendStr32(dst, s.Name)
	dst = appendStr32(dst, s.IP)
	dst = appendU16(dst, s.TCPPort)
	dst = appendU16(dst, s.QUICPort)
	dst = appendU16(dst, s.HTTPPort)
	dst = appendU16(dst, s.WebSocketPort)
	dst = appendU16(dst, s.ReplicaPort)
	if s.Rack == "" && !s.MetadataOnly {
		return dst
	}
	dst = appendStr32(dst, s.Rack)
	var flags byte
	if s.MetadataOnly {
		flags |= 1
	}
	return append(dst, flags)
}

// Decode decodes the body, rejecting trailing bytes.
func (s *ClusterNodeSpec) Decode(src []byte) error {
	r := newReader(src)
	s.ReplicaID = r.u8()
	s.Name = r.str32(MaxSystemStringLen)
	s.IP = r.str32(MaxSystemStringLen)
	s.TCPPort, s.QUICPort, s.HTTPPort, s.WebSocketPort, s.ReplicaPort = r.u16(), r.u16(), r.u16(), r.u16(), r.u16()
	s.Rack, s.MetadataOnly = "", false
	if r.err == nil && r.off < len(r.b) {
		s.Rack = r.str32(MaxSystemStringLen)
		flags := r.u8()
		if r.err == nil && flags > 1 {
			return ErrInvalidCommand
		}
		s.MetadataOnly = flags&1 != 0
	}
	return r.finish()
}

// ClusterRemoveNode is the body of CLUSTER_REMOVE_NODE: [replica_id u8].
type ClusterRemoveNode struct {
	ReplicaID uint8
}

// AppendTo appends the body.
func (s *ClusterRemoveNode) AppendTo(dst []byte) []byte { return append(dst, s.ReplicaID) }

// Decode decodes the body, rejecting trailing bytes.
func (s *ClusterRemoveNode) Decode(src []byte) error {
	r := newReader(src)
	s.ReplicaID = r.u8()
	return r.finish()
}
