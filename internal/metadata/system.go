package metadata

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/internal/dispatch"
	"github.com/iggo-dev/iggo/wire"
)

// System is what the system commands report about the running server.
type System struct {
	// Version is the server build version ("0.1.0").
	Version string
	// Started is the process start time.
	Started time.Time
	// DataDir is system.path (disk space and the filesystem overview).
	DataDir string
	// ConfigFile is the effective configuration written at start
	// (GET_SNAPSHOT_FILE's ServerConfig entry).
	ConfigFile string
	// LogFile is the active log file (GET_SNAPSHOT_FILE's ServerLogs
	// entry holds its tail); empty when the log file is off.
	LogFile string
	// TCPAddr returns the bound TCP address, nil when TCP is disabled.
	TCPAddr func() net.Addr
	// QUICAddr and WebSocketAddr return the bound QUIC (UDP) and
	// WebSocket address, nil when the transport is disabled.
	QUICAddr      func() net.Addr
	WebSocketAddr func() net.Addr
	// HTTPAddr returns the bound HTTP API address, nil when HTTP is
	// disabled.
	HTTPAddr func() net.Addr
	// ClusterMetadata, when set (cluster mode), answers
	// GET_CLUSTER_METADATA for a caller at peer (the connection's remote
	// address): the roster with the metadata leader.
	ClusterMetadata func(peer string) wire.ClusterMetadata
	// PartitionRoom, when set (cluster mode), is asked before
	// CREATE_TOPIC and CREATE_PARTITIONS are proposed whether add more
	// partitions fit this node; a non-zero IggyError code refuses them.
	PartitionRoom func(add uint32) uint32
}

// Register installs every metadata-plane handler on d: the commands, the
// reads and the system commands (GET_STATS, GET_SNAPSHOT_FILE,
// GET_CLUSTER_METADATA, DESCRIBE_OPTIONS).
func (s *Store) Register(d *dispatch.Dispatcher, sys System) {
	s.registerCommands(d, sys)
	s.registerReads(d)
	p := &probe{}
	d.Handle(wire.CmdGetStats, func(x *dispatch.Exchange) { s.getStats(x, d, sys, p) })
	d.Handle(wire.CmdGetClusterMetadata, func(x *dispatch.Exchange) { getClusterMetadata(x, sys) })
	d.Handle(wire.CmdDescribeOptions, describeOptions)
	d.Handle(wire.CmdGetSnapshotFile, func(x *dispatch.Exchange) { s.getSnapshotFile(x, d, sys, p) })
}

// canReadServersX applies server_info to the connection's user.
func (s *Store) canReadServersX(x *dispatch.Exchange) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.reader(x)
	return a.root || canReadServers(a.perms)
}

// describeOptions answers DESCRIBE_OPTIONS (13): the catalog of the scope
// (unknown scope: status 3).
func describeOptions(x *dispatch.Exchange) {
	var req wire.DescribeOptions
	if !decodeRead(x, &req) {
		return
	}
	cat := wire.DescribeCatalog(req.Scope)
	x.Reply(cat.AppendTo(x.Scratch()))
}

// getClusterMetadata answers GET_CLUSTER_METADATA (12) for a single node
// (semantics.md §7): "single-node", one Leader "iggy-node" at the TCP
// listen address; the QUIC, WebSocket and HTTP ports of their listeners,
// 0 when disabled. Ports are the bound ones, which equal the configured
// ones unless a listener was configured on port 0 (the reference then
// reports 0; Iggo reports the port clients can actually use).
//
// The request has no fields: body bytes are ignored.
func getClusterMetadata(x *dispatch.Exchange, sys System) {
	if sys.ClusterMetadata != nil {
		m := sys.ClusterMetadata(x.Conn.Addr)
		x.Reply(m.AppendTo(x.Scratch()))
		return
	}
	node := wire.ClusterNode{Name: "iggy-node", Role: wire.ClusterLeader, Status: wire.ClusterNodeHealthy}
	if sys.TCPAddr != nil {
		if a, ok := sys.TCPAddr().(*net.TCPAddr); ok && a != nil {
			node.IP, node.TCPPort = a.IP.String(), uint16(a.Port)
		}
	}
	node.QUICPort, node.WebSocketPort = portOf(sys.QUICAddr), portOf(sys.WebSocketAddr)
	node.HTTPPort = portOf(sys.HTTPAddr)
	m := wire.ClusterMetadata{Name: "single-node", Nodes: []wire.ClusterNode{node}}
	x.Reply(m.AppendTo(x.Scratch()))
}

// portOf returns the port of the address f reports, 0 when f or the
// address is nil.
func portOf(f func() net.Addr) uint16 {
	if f == nil {
		return 0
	}
	switch a := f().(type) {
	case *net.TCPAddr:
		if a != nil {
			return uint16(a.Port)
		}
	case *net.UDPAddr:
		if a != nil {
			return uint16(a.Port)
		}
	}
	return 0
}

// stats gathers GET_STATS: process numbers from the runtime and /proc
// where cheap, counts from the committed state, counters from the
// partition plane.
func (s *Store) stats(d *dispatch.Dispatcher, sys System, p *probe) wire.Stats {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	now := time.Now()
	st := wire.Stats{
		ProcessID:     uint32(os.Getpid()),
		MemoryUsage:   ms.Sys,
		RunTime:       uint64(now.Sub(sys.Started).Microseconds()),
		StartTime:     uint64(sys.Started.UnixMicro()),
		ClientsCount:  uint32(d.Sessions().Len()),
		OSName:        runtime.GOOS,
		ServerVersion: sys.Version,
		ServerSemver:  semver(sys.Version),
		ThreadsCount:  uint32(runtime.GOMAXPROCS(0)),
	}
	st.Hostname, _ = os.Hostname()
	fillHost(&st, sys.DataDir)
	st.CPUUsage, st.TotalCPUUsage = p.cpu(now)
	s.mu.RLock()
	c := s.st.counts()
	var views []*topicView
	for _, sid := range sortedKeys(s.st.streams) {
		str := s.st.streams[sid]
		for _, tid := range sortedKeys(str.Topics) {
			views = append(views, topicDetails(str.Topics[tid], str))
		}
	}
	s.mu.RUnlock()
	st.StreamsCount, st.TopicsCount, st.PartitionsCount, st.ConsumerGroupsCount = c.streams, c.topics, c.partitions, c.groups
	fillTopics(s.data, views)
	for _, v := range views {
		st.MessagesSizeBytes += v.header.SizeBytes
		st.MessagesCount += v.header.MessagesCount
		for _, p := range v.partitions {
			st.SegmentsCount += p.SegmentsCount
		}
	}
	return st
}

// semver packs "major.minor.patch" like the protocol version (0 when it
// does not parse).
func semver(v string) uint32 {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) != 3 {
		return 0
	}
	var n [3]uint32
	for i, p := range parts {
		x, err := strconv.ParseUint(p, 10, 10)
		if err != nil {
			return 0
		}
		n[i] = uint32(x)
	}
	return wire.PackVersion(n[0], n[1], n[2])
}

// getStats answers GET_STATS (10); needs server_info. Body bytes are
// ignored (no request fields).
func (s *Store) getStats(x *dispatch.Exchange, d *dispatch.Dispatcher, sys System, p *probe) {
	if !s.canReadServersX(x) {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	st := s.stats(d, sys, p)
	x.Reply(st.AppendTo(x.Scratch()))
}

// Limits of the GET_SNAPSHOT_FILE archive.
const (
	// maxOverviewEntries bounds the filesystem overview listing.
	maxOverviewEntries = 10000
	// maxSnapshotFileBytes bounds one file copied into the archive.
	maxSnapshotFileBytes = 4 << 20
)

// getSnapshotFile answers GET_SNAPSHOT_FILE (11) with a ZIP archive of the
// requested diagnostics; needs server_info. Stored (1) and Deflated (2)
// are honoured; the other codes (bzip2, zstd, lzma, xz) have no encoder in
// the standard library and are written Deflated (commands.md leaves the
// archive content to the server). An empty type list means All.
func (s *Store) getSnapshotFile(x *dispatch.Exchange, d *dispatch.Dispatcher, sys System, p *probe) {
	var req wire.GetSnapshotFile
	if !decodeRead(x, &req) {
		return
	}
	if !s.canReadServersX(x) {
		x.Deny(wire.ErrUnauthorized.Code)
		return
	}
	method := zip.Deflate
	if req.Compression == wire.SnapshotStored {
		method = zip.Store
	}
	want := map[wire.SnapshotType]bool{}
	for _, t := range req.Types {
		want[t] = true
	}
	all := len(req.Types) == 0 || want[wire.SnapshotAll]
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	add := func(name string, content []byte) error {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: time.Now()})
		if err != nil {
			return err
		}
		_, err = w.Write(content)
		return err
	}
	var err error
	for _, t := range []wire.SnapshotType{
		wire.SnapshotFilesystemOverview, wire.SnapshotProcessList, wire.SnapshotResourceUsage,
		wire.SnapshotTest, wire.SnapshotServerLogs, wire.SnapshotServerConfig,
	} {
		if err != nil || !(all || want[t]) {
			continue
		}
		switch t {
		case wire.SnapshotFilesystemOverview:
			err = add("filesystem_overview.txt", filesystemOverview(sys.DataDir))
		case wire.SnapshotProcessList:
			err = add("process_list.txt", processList())
		case wire.SnapshotResourceUsage:
			st := s.stats(d, sys, p)
			err = add("resource_usage.txt", resourceUsage(&st))
		case wire.SnapshotTest:
			err = add("test.txt", []byte("test\n"))
		case wire.SnapshotServerLogs:
			err = add("server_logs.txt", serverLogs(sys.LogFile))
		case wire.SnapshotServerConfig:
			err = add("server_config.toml", readBounded(sys.ConfigFile))
		}
	}
	if err == nil {
		err = zw.Close()
	}
	if err != nil {
		x.Deny(wire.ErrSnapshotFileCompletionFailed.Code)
		return
	}
	x.Reply(append(x.Scratch(), buf.Bytes()...))
}

// filesystemOverview lists the data directory (path, size), bounded.
func filesystemOverview(dir string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "data directory: %s\n", dir)
	n := 0
	_ = filepath.WalkDir(dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if n++; n > maxOverviewEntries {
			b.WriteString("... (truncated)\n")
			return filepath.SkipAll
		}
		rel, _ := filepath.Rel(dir, path)
		if info, err := de.Info(); err == nil && !de.IsDir() {
			fmt.Fprintf(&b, "%12d  %s\n", info.Size(), rel)
		} else {
			fmt.Fprintf(&b, "%12s  %s/\n", "-", rel)
		}
		return nil
	})
	return []byte(b.String())
}

// processList describes this process (other processes are not the
// server's business to report).
func processList() []byte {
	return fmt.Appendf(nil, "pid %d\nexecutable %s\ngoroutines %d\n", os.Getpid(), executable(), runtime.NumGoroutine())
}

func executable() string {
	p, err := os.Executable()
	if err != nil {
		return "?"
	}
	return p
}

func resourceUsage(st *wire.Stats) []byte {
	return fmt.Appendf(nil, "memory_usage %d\ntotal_memory %d\navailable_memory %d\nrun_time_us %d\nread_bytes %d\nwritten_bytes %d\nstreams %d\ntopics %d\npartitions %d\nmessages %d\nclients %d\nfree_disk_space %d\ntotal_disk_space %d\n",
		st.MemoryUsage, st.TotalMemory, st.AvailableMemory, st.RunTime, st.ReadBytes, st.WrittenBytes,
		st.StreamsCount, st.TopicsCount, st.PartitionsCount, st.MessagesCount, st.ClientsCount,
		st.FreeDiskSpace, st.TotalDiskSpace)
}

// readBounded reads at most maxSnapshotFileBytes of path (empty when it
// cannot be read).
func readBounded(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, maxSnapshotFileBytes))
	return b
}

// RunPATCleaner deletes expired personal access tokens every interval
// until ctx ends (semantics.md §2.6). A cleanup entry is committed only
// when a token has expired.
func (s *Store) RunPATCleaner(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.CleanPATs()
		}
	}
}

// CleanPATs runs one pass of the PAT cleaner and reports how many tokens
// had expired.
func (s *Store) CleanPATs() int {
	if !s.IsLeader() {
		return 0 // the metadata leader cleans for the cluster
	}
	now := uint64(s.cfg.Now().UnixMicro())
	s.mu.RLock()
	n := s.st.expiredPATs(now)
	s.mu.RUnlock()
	if n == 0 {
		return 0
	}
	if _, err := s.submit(Entry{Kind: KindPATCleanup}); err != nil {
		s.log.Warn("PAT cleaner", "err", err)
		return 0
	}
	return n
}
