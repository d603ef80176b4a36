package httpapi

import (
	"math"
	"strconv"

	"github.com/iggo-dev/iggo/wire"
)

// CacheMetric is one entry of Stats.cache_metrics.
type CacheMetric struct {
	Hits     uint64  `json:"hits"`
	Misses   uint64  `json:"misses"`
	HitRatio float32 `json:"hit_ratio"`
}

// Stats is GET /stats.
type Stats struct {
	ProcessID           uint32                 `json:"process_id"`
	CPUUsage            float32                `json:"cpu_usage"`
	TotalCPUUsage       float32                `json:"total_cpu_usage"`
	MemoryUsage         Size                   `json:"memory_usage"`
	TotalMemory         Size                   `json:"total_memory"`
	AvailableMemory     Size                   `json:"available_memory"`
	RunTime             uint64                 `json:"run_time"`
	StartTime           uint64                 `json:"start_time"`
	ReadBytes           Size                   `json:"read_bytes"`
	WrittenBytes        Size                   `json:"written_bytes"`
	MessagesSizeBytes   Size                   `json:"messages_size_bytes"`
	StreamsCount        uint32                 `json:"streams_count"`
	TopicsCount         uint32                 `json:"topics_count"`
	PartitionsCount     uint32                 `json:"partitions_count"`
	SegmentsCount       uint32                 `json:"segments_count"`
	MessagesCount       uint64                 `json:"messages_count"`
	ClientsCount        uint32                 `json:"clients_count"`
	ConsumerGroupsCount uint32                 `json:"consumer_groups_count"`
	Hostname            string                 `json:"hostname"`
	OSName              string                 `json:"os_name"`
	OSVersion           string                 `json:"os_version"`
	KernelVersion       string                 `json:"kernel_version"`
	IggyServerVersion   string                 `json:"iggy_server_version"`
	IggyServerSemver    *uint32                `json:"iggy_server_semver"`
	CacheMetrics        map[string]CacheMetric `json:"cache_metrics"`
	ThreadsCount        uint32                 `json:"threads_count"`
	FreeDiskSpace       Size                   `json:"free_disk_space"`
	TotalDiskSpace      Size                   `json:"total_disk_space"`
}

func statsJSON(s *wire.Stats) Stats {
	out := Stats{
		ProcessID: s.ProcessID, CPUUsage: s.CPUUsage, TotalCPUUsage: s.TotalCPUUsage, MemoryUsage: Size(s.MemoryUsage),
		TotalMemory: Size(s.TotalMemory), AvailableMemory: Size(s.AvailableMemory), RunTime: s.RunTime, StartTime: s.StartTime,
		ReadBytes: Size(s.ReadBytes), WrittenBytes: Size(s.WrittenBytes), MessagesSizeBytes: Size(s.MessagesSizeBytes),
		StreamsCount: s.StreamsCount, TopicsCount: s.TopicsCount, PartitionsCount: s.PartitionsCount, SegmentsCount: s.SegmentsCount,
		MessagesCount: s.MessagesCount, ClientsCount: s.ClientsCount, ConsumerGroupsCount: s.ConsumerGroupsCount,
		Hostname: s.Hostname, OSName: s.OSName, OSVersion: s.OSVersion, KernelVersion: s.KernelVersion,
		IggyServerVersion: s.ServerVersion, CacheMetrics: map[string]CacheMetric{}, ThreadsCount: s.ThreadsCount,
		FreeDiskSpace: Size(s.FreeDiskSpace), TotalDiskSpace: Size(s.TotalDiskSpace),
	}
	if s.ServerSemver != 0 {
		v := s.ServerSemver
		out.IggyServerSemver = &v
	}
	for _, m := range s.CacheMetrics {
		k := strconv.FormatUint(uint64(m.StreamID), 10) + "-" + strconv.FormatUint(uint64(m.TopicID), 10) + "-" + strconv.FormatUint(uint64(m.PartitionID), 10)
		out.CacheMetrics[k] = CacheMetric{Hits: m.Hits, Misses: m.Misses, HitRatio: m.HitRatio}
	}
	return out
}

// Endpoints are a cluster node's ports.
type Endpoints struct {
	TCP       uint16 `json:"tcp"`
	QUIC      uint16 `json:"quic"`
	HTTP      uint16 `json:"http"`
	WebSocket uint16 `json:"websocket"`
}

// ClusterNode is one node of ClusterMetadata.
type ClusterNode struct {
	Name      string    `json:"name"`
	IP        string    `json:"ip"`
	Endpoints Endpoints `json:"endpoints"`
	Role      string    `json:"role"`
	Status    string    `json:"status"`
}

// ClusterMetadata is GET /cluster/metadata.
type ClusterMetadata struct {
	Name  string        `json:"name"`
	Nodes []ClusterNode `json:"nodes"`
}

var nodeStatusNames = map[wire.ClusterNodeStatus]string{
	wire.ClusterNodeHealthy: "healthy", wire.ClusterNodeStarting: "starting", wire.ClusterNodeStopping: "stopping",
	wire.ClusterNodeUnreachable: "unreachable", wire.ClusterNodeMaintenance: "maintenance", wire.ClusterNodeUnknown: "unknown",
}

func clusterJSON(m *wire.ClusterMetadata) ClusterMetadata {
	out := ClusterMetadata{Name: m.Name, Nodes: []ClusterNode{}}
	for _, n := range m.Nodes {
		role := "leader"
		if n.Role == wire.ClusterFollower {
			role = "follower"
		}
		st, ok := nodeStatusNames[n.Status]
		if !ok {
			st = "unknown"
		}
		out.Nodes = append(out.Nodes, ClusterNode{Name: n.Name, IP: n.IP, Role: role, Status: st,
			Endpoints: Endpoints{TCP: n.TCPPort, QUIC: n.QUICPort, HTTP: n.HTTPPort, WebSocket: n.WebSocketPort}})
	}
	return out
}

// ClientInfo is a client in GET /clients.
type ClientInfo struct {
	ClientID            uint32  `json:"client_id"`
	UserID              *uint32 `json:"user_id"`
	Address             string  `json:"address"`
	Transport           string  `json:"transport"`
	ConsumerGroupsCount uint32  `json:"consumer_groups_count"`
}

// ClientGroup is a membership of ClientInfoDetails.
type ClientGroup struct {
	StreamID uint32 `json:"stream_id"`
	TopicID  uint32 `json:"topic_id"`
	GroupID  uint32 `json:"group_id"`
}

// ClientInfoDetails is GET /clients/{client_id}.
type ClientInfoDetails struct {
	ClientID            uint32        `json:"client_id"`
	UserID              *uint32       `json:"user_id"`
	Address             string        `json:"address"`
	Transport           string        `json:"transport"`
	ConsumerGroupsCount uint32        `json:"consumer_groups_count"`
	ConsumerGroups      []ClientGroup `json:"consumer_groups"`
}

func transportName(t wire.Transport) string {
	switch t {
	case wire.TransportTCP:
		return "TCP"
	case wire.TransportQUIC:
		return "QUIC"
	case wire.TransportWebSocket:
		return "WebSocket"
	case 3:
		return "HTTP"
	}
	return "Unknown"
}

// clientJSON renders a client; a connection that has not logged in
// (user id u32::MAX on the wire) has user_id null.
func clientJSON(c *wire.Client) ClientInfo {
	var uid *uint32
	if c.UserID != math.MaxUint32 {
		u := c.UserID
		uid = &u
	}
	return ClientInfo{ClientID: c.ClientID, UserID: uid, Address: c.Address, Transport: transportName(c.Transport), ConsumerGroupsCount: c.ConsumerGroupsCount}
}

// OptionDescription is one entry of GET /options/{scope}.
type OptionDescription struct {
	Key          string `json:"key"`
	Kind         string `json:"kind"`
	DefaultValue []int  `json:"default_value"`
	Description  string `json:"description"`
}
