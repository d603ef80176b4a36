package wire

import (
	"math"
	"unicode/utf8"
)

// Bodies of the system, user, personal-access-token and client commands
// (commands.md "System", "Users", "Personal access tokens"). Requests that
// carry nothing use Empty: PING (1), GET_STATS (10), GET_CLUSTER_METADATA
// (12), GET_ME (20), GET_CLIENTS (22), GET_USERS (32), LOGOUT_USER (39) and
// GET_PERSONAL_ACCESS_TOKENS (41). Their replies: PING and LOGOUT_USER
// empty, GET_STATS Stats, GET_CLUSTER_METADATA ClusterMetadata, GET_ME
// ClientDetails, GET_CLIENTS Clients, GET_USERS Users, GET_PERSONAL_ACCESS_TOKENS
// PersonalAccessTokens. This file holds the system ones; users.go, pat.go,
// clients.go and permissions.go the rest.

// Limits of the system bodies.
const (
	// MaxSystemStringLen bounds each [len u32][UTF-8] string of Stats and
	// ClusterMetadata (host and OS names, versions, node names, addresses).
	// Real values are tens of bytes; the bound only keeps a hostile length
	// from reaching the allocator.
	MaxSystemStringLen = 64 << 10
	// MaxClusterNodes is the most nodes a ClusterMetadata may list: the Go
	// SDK refuses more than 64 (commands.md §12), so neither side sends or
	// accepts more.
	MaxClusterNodes = 64

	// statsFixedLen is the fixed numeric block at the start of Stats.
	statsFixedLen = 108
	// cacheMetricLen is one cache-metrics entry of Stats.
	cacheMetricLen = 32
	// clusterNodeMinLen is a node with empty name and ip.
	clusterNodeMinLen = 4 + 4 + 4*2 + 2
)

// Stats is the payload of GET_STATS (code 10, commands.md §10). Counters
// are little-endian integers, the CPU figures and hit ratios IEEE-754
// binary32. Memory, disk and I/O figures are bytes; RunTime and StartTime
// are in microseconds (run time as a duration, start time since the epoch).
type Stats struct {
	ProcessID           uint32
	CPUUsage            float32
	TotalCPUUsage       float32
	MemoryUsage         uint64
	TotalMemory         uint64
	AvailableMemory     uint64
	RunTime             uint64
	StartTime           uint64
	ReadBytes           uint64
	WrittenBytes        uint64
	MessagesSizeBytes   uint64
	StreamsCount        uint32
	TopicsCount         uint32
	PartitionsCount     uint32
	SegmentsCount       uint32
	MessagesCount       uint64
	ClientsCount        uint32
	ConsumerGroupsCount uint32
	Hostname            string
	OSName              string
	OSVersion           string
	KernelVersion       string
	ServerVersion       string
	// ServerSemver is the server version packed like the protocol version
	// (major<<20 | minor<<10 | patch); 0 = absent.
	ServerSemver  uint32
	CacheMetrics  []CacheMetric
	ThreadsCount  uint32
	FreeDiskSpace uint64
	// TotalDiskSpace is bytes, like FreeDiskSpace.
	TotalDiskSpace uint64
}

// CacheMetric is one per-partition cache entry of Stats:
// [stream_id u32][topic_id u32][partition_id u32][hits u64][misses u64]
// [hit_ratio f32].
type CacheMetric struct {
	StreamID    uint32
	TopicID     uint32
	PartitionID uint32
	Hits        uint64
	Misses      uint64
	HitRatio    float32
}

// Validate checks the strings fit MaxSystemStringLen and are UTF-8.
func (s *Stats) Validate() error {
	for _, str := range [...]string{s.Hostname, s.OSName, s.OSVersion, s.KernelVersion, s.ServerVersion} {
		if !validSystemString(str) {
			return ErrInvalidCommand
		}
	}
	return nil
}

// AppendTo appends the payload.
func (s *Stats) AppendTo(dst []byte) []byte {
	dst = appendU32(dst, s.ProcessID)
	dst = appendU32(dst, math.Float32bits(s.CPUUsage))
	dst = appendU32(dst, math.Float32bits(s.TotalCPUUsage))
	dst = appendU64(dst, s.MemoryUsage)
	dst = appendU64(dst, s.TotalMemory)
	dst = appendU64(dst, s.AvailableMemory)
	dst = appendU64(dst, s.RunTime)
	dst = appendU64(dst, s.StartTime)
	dst = appendU64(dst, s.ReadBytes)
	dst = appendU64(dst, s.WrittenBytes)
	dst = appendU64(dst, s.MessagesSizeBytes)
	dst = appendU32(dst, s.StreamsCount)
	dst = appendU32(dst, s.TopicsCount)
	dst = appendU32(dst, s.PartitionsCount)
	dst = appendU32(dst, s.SegmentsCount)
	dst = appendU64(dst, s.MessagesCount)
	dst = appendU32(dst, s.ClientsCount)
	dst = appendU32(dst, s.ConsumerGroupsCount)
	dst = appendStr32(dst, s.Hostname)
	dst = appendStr32(dst, s.OSName)
	dst = appendStr32(dst, s.OSVersion)
	dst = appendStr32(dst, s.KernelVersion)
	dst = appendStr32(dst, s.ServerVersion)
	dst = appendU32(dst, s.ServerSemver)
	dst = appendU32(dst, uint32(len(s.CacheMetrics)))
	for _, m := range s.CacheMetrics {
		dst = appendU32(dst, m.StreamID)
		dst = appendU32(dst, m.TopicID)
		dst = appendU32(dst, m.PartitionID)
		dst = appendU64(dst, m.Hits)
		dst = appendU64(dst, m.Misses)
		dst = appendU32(dst, math.Float32bits(m.HitRatio))
	}
	dst = appendU32(dst, s.ThreadsCount)
	dst = appendU64(dst, s.FreeDiskSpace)
	return appendU64(dst, s.TotalDiskSpace)
}

// Decode decodes the payload, rejecting trailing bytes. The cache-metrics
// count is checked against the remaining bytes before anything is
// allocated.
func (s *Stats) Decode(src []byte) error {
	r := newReader(src)
	s.ProcessID = r.u32()
	s.CPUUsage = math.Float32frombits(r.u32())
	s.TotalCPUUsage = math.Float32frombits(r.u32())
	s.MemoryUsage = r.u64()
	s.TotalMemory = r.u64()
	s.AvailableMemory = r.u64()
	s.RunTime = r.u64()
	s.StartTime = r.u64()
	s.ReadBytes = r.u64()
	s.WrittenBytes = r.u64()
	s.MessagesSizeBytes = r.u64()
	s.StreamsCount = r.u32()
	s.TopicsCount = r.u32()
	s.PartitionsCount = r.u32()
	s.SegmentsCount = r.u32()
	s.MessagesCount = r.u64()
	s.ClientsCount = r.u32()
	s.ConsumerGroupsCount = r.u32()
	s.Hostname = r.str32(MaxSystemStringLen)
	s.OSName = r.str32(MaxSystemStringLen)
	s.OSVersion = r.str32(MaxSystemStringLen)
	s.KernelVersion = r.str32(MaxSystemStringLen)
	s.ServerVersion = r.str32(MaxSystemStringLen)
	s.ServerSemver = r.u32()
	n := r.u32()
	s.CacheMetrics = nil
	if r.err == nil && uint64(n)*cacheMetricLen > uint64(r.remaining()) {
		r.fail(ErrInvalidCommand)
	}
	if r.err == nil && n > 0 {
		s.CacheMetrics = make([]CacheMetric, n)
		for i := range s.CacheMetrics {
			s.CacheMetrics[i] = CacheMetric{
				StreamID: r.u32(), TopicID: r.u32(), PartitionID: r.u32(),
				Hits: r.u64(), Misses: r.u64(), HitRatio: math.Float32frombits(r.u32()),
			}
		}
	}
	s.ThreadsCount = r.u32()
	s.FreeDiskSpace = r.u64()
	s.TotalDiskSpace = r.u64()
	return r.finish()
}

// ClusterNodeRole is a node's role in ClusterMetadata: 0 Leader,
// 1 Follower. Decoders carry other values as sent.
type ClusterNodeRole uint8

// Cluster node roles.
const (
	ClusterLeader   ClusterNodeRole = 0
	ClusterFollower ClusterNodeRole = 1
)

// ClusterNodeStatus is a node's status in ClusterMetadata. Decoders carry
// values outside the table as sent.
type ClusterNodeStatus uint8

// Cluster node statuses (commands.md §12).
const (
	ClusterNodeHealthy     ClusterNodeStatus = 0
	ClusterNodeStarting    ClusterNodeStatus = 1
	ClusterNodeStopping    ClusterNodeStatus = 2
	ClusterNodeUnreachable ClusterNodeStatus = 3
	ClusterNodeMaintenance ClusterNodeStatus = 4
	ClusterNodeUnknown     ClusterNodeStatus = 5
)

// ClusterNode is one node of ClusterMetadata:
// [name_len u32][name][ip_len u32][ip][tcp_port u16][quic_port u16]
// [http_port u16][websocket_port u16][role u8][status u8]. A port is 0 when
// the node does not serve that transport.
type ClusterNode struct {
	Name          string
	IP            string
	TCPPort       uint16
	QUICPort      uint16
	HTTPPort      uint16
	WebSocketPort uint16
	Role          ClusterNodeRole
	Status        ClusterNodeStatus
}

// ClusterMetadata is the payload of GET_CLUSTER_METADATA (code 12):
// [name_len u32][name][nodes_count u32][ClusterNode × nodes_count]. A
// single node server reports one Leader node.
type ClusterMetadata struct {
	Name  string
	Nodes []ClusterNode
}

// Validate checks the node count (at most MaxClusterNodes) and the string
// lengths.
func (m *ClusterMetadata) Validate() error {
	if len(m.Nodes) > MaxClusterNodes || !validSystemString(m.Name) {
		return ErrInvalidCommand
	}
	for i := range m.Nodes {
		if !validSystemString(m.Nodes[i].Name) || !validSystemString(m.Nodes[i].IP) {
			return ErrInvalidCommand
		}
	}
	return nil
}

// AppendTo appends the payload.
func (m *ClusterMetadata) AppendTo(dst []byte) []byte {
	dst = appendStr32(dst, m.Name)
	dst = appendU32(dst, uint32(len(m.Nodes)))
	for i := range m.Nodes {
		n := &m.Nodes[i]
		dst = appendStr32(dst, n.Name)
		dst = appendStr32(dst, n.IP)
		dst = appendU16(dst, n.TCPPort)
		dst = appendU16(dst, n.QUICPort)
		dst = appendU16(dst, n.HTTPPort)
		dst = appendU16(dst, n.WebSocketPort)
		dst = append(dst, byte(n.Role), byte(n.Status))
	}
	return dst
}

// Decode decodes the payload, rejecting trailing bytes and more than
// MaxClusterNodes nodes.
func (m *ClusterMetadata) Decode(src []byte) error {
	r := newReader(src)
	m.Name = r.str32(MaxSystemStringLen)
	n := r.u32()
	m.Nodes = nil
	if r.err == nil && (n > MaxClusterNodes || uint64(n)*clusterNodeMinLen > uint64(r.remaining())) {
		r.fail(ErrInvalidCommand)
	}
	if r.err == nil && n > 0 {
		m.Nodes = make([]ClusterNode, n)
		for i := range m.Nodes {
			m.Nodes[i] = ClusterNode{
				Name:    r.str32(MaxSystemStringLen),
				IP:      r.str32(MaxSystemStringLen),
				TCPPort: r.u16(), QUICPort: r.u16(), HTTPPort: r.u16(), WebSocketPort: r.u16(),
				Role: ClusterNodeRole(r.u8()), Status: ClusterNodeStatus(r.u8()),
			}
		}
	}
	return r.finish()
}

// SnapshotCompression is the compression of the GET_SNAPSHOT_FILE archive
// entries.
type SnapshotCompression uint8

// Snapshot compressions (commands.md §11).
const (
	SnapshotStored    SnapshotCompression = 1
	SnapshotDeflated  SnapshotCompression = 2
	SnapshotBzip2     SnapshotCompression = 3
	SnapshotZstd      SnapshotCompression = 4
	SnapshotLzma      SnapshotCompression = 5
	SnapshotXz        SnapshotCompression = 6
	snapshotCompLimit SnapshotCompression = 7
)

// Valid reports whether c is a defined compression code.
func (c SnapshotCompression) Valid() bool { return c >= SnapshotStored && c < snapshotCompLimit }

// SnapshotType selects what a snapshot collects.
type SnapshotType uint8

// Snapshot types (commands.md §11).
const (
	SnapshotFilesystemOverview SnapshotType = 1
	SnapshotProcessList        SnapshotType = 2
	SnapshotResourceUsage      SnapshotType = 3
	SnapshotTest               SnapshotType = 4
	SnapshotServerLogs         SnapshotType = 5
	SnapshotServerConfig       SnapshotType = 6
	SnapshotAll                SnapshotType = 100
)

// Valid reports whether t is a defined snapshot type.
func (t SnapshotType) Valid() bool {
	return (t >= SnapshotFilesystemOverview && t <= SnapshotServerConfig) || t == SnapshotAll
}

// MaxSnapshotTypes is the most types one request can list (a u8 count).
const MaxSnapshotTypes = 255

// GetSnapshotFile is the body of GET_SNAPSHOT_FILE (code 11):
// [compression u8][types_count u8][snapshot_type u8 × types_count]. The
// reply payload is a bare ZIP archive, which this package does not model.
//
// The decoder refuses an undefined compression or type code
// (ErrInvalidCommand, status 3), since the server could not act on it.
// An empty type list and repeated types are accepted as sent; what the
// server collects for them is its choice.
type GetSnapshotFile struct {
	Compression SnapshotCompression
	Types       []SnapshotType
}

// Validate checks the compression, the type codes and their count.
func (g *GetSnapshotFile) Validate() error {
	if !g.Compression.Valid() || len(g.Types) > MaxSnapshotTypes {
		return ErrInvalidCommand
	}
	for _, t := range g.Types {
		if !t.Valid() {
			return ErrInvalidCommand
		}
	}
	return nil
}

// AppendTo appends the body. More than MaxSnapshotTypes types are
// truncated; call Validate first to refuse them.
func (g *GetSnapshotFile) AppendTo(dst []byte) []byte {
	types := g.Types
	if len(types) > MaxSnapshotTypes {
		types = types[:MaxSnapshotTypes]
	}
	dst = append(dst, byte(g.Compression), byte(len(types)))
	for _, t := range types {
		dst = append(dst, byte(t))
	}
	return dst
}

// Decode decodes the body, rejecting undefined codes; bytes after the
// types_count type codes are ignored (a request body: the reference
// decodes a prefix).
func (g *GetSnapshotFile) Decode(src []byte) error {
	r := newReader(src)
	g.Compression = SnapshotCompression(r.u8())
	b := r.take(int(r.u8()))
	g.Types = nil
	if r.err == nil && !g.Compression.Valid() {
		r.fail(ErrInvalidCommand)
	}
	if r.err == nil && len(b) > 0 {
		g.Types = make([]SnapshotType, len(b))
		for i, c := range b {
			g.Types[i] = SnapshotType(c)
			if !g.Types[i].Valid() {
				r.fail(ErrInvalidCommand)
			}
		}
	}
	return r.done()
}

// validSystemString reports whether s fits a [len u32] string of at most
// MaxSystemStringLen UTF-8 bytes.
func validSystemString(s string) bool {
	return len(s) <= MaxSystemStringLen && utf8.ValidString(s)
}
