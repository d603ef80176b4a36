package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/wire"
	"github.com/spf13/cobra"
)

// clientCommand finishes a top-level client command: the shared flags
// (defined on the root, see addClientFlags) are checked before any
// connection is made.
func (a *app) clientCommand(cmd *cobra.Command) *cobra.Command {
	cmd.PersistentPreRunE = func(*cobra.Command, []string) error {
		if _, err := a.jsonOutput(); err != nil {
			return err
		}
		if a.timeout < 0 {
			return usagef("--timeout %s: want a positive duration or 0 for none", a.timeout)
		}
		return nil
	}
	return cmd
}

func (a *app) pingCmd() *cobra.Command {
	var count int
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "ping",
		Short: "Check that the server answers (PING; no login needed)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 {
				return usagef("--count %d: want at least 1", count)
			}
			js, err := a.jsonOutput()
			if err != nil {
				return err
			}
			c, err := a.dial(cmd, false)
			if err != nil {
				return err
			}
			defer c.Close()
			type pingView struct {
				Seq    int     `json:"seq"`
				RTTMs  float64 `json:"rtt_ms"`
				Server string  `json:"server"`
			}
			var out []pingView
			for i := 1; i <= count; i++ {
				if i > 1 {
					if err := sleepCtx(cmd.Context(), interval); err != nil {
						return err
					}
				}
				start := time.Now()
				if err := a.call(cmd, c.Ping); err != nil {
					return wrapf(err, "ping")
				}
				rtt := time.Since(start)
				v := pingView{Seq: i, RTTMs: float64(rtt.Microseconds()) / 1000, Server: c.Addr()}
				if !js {
					fmt.Fprintf(cmd.OutOrStdout(), "pong from %s: seq=%d time=%.3f ms\n", c.Addr(), i, v.RTTMs)
				}
				out = append(out, v)
			}
			if js {
				return a.print(cmd, out, nil)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&count, "count", "c", 1, "number of pings")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "pause between pings")
	return a.clientCommand(cmd)
}

// sleepCtx pauses for d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (a *app) meCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "me",
		Short: "Show this connection as the server sees it (GET_ME)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(c *client.Client) error {
				var d *wire.ClientDetails
				if err := a.call(cmd, func(ctx context.Context) (err error) { d, err = c.GetMe(ctx); return err }); err != nil {
					return wrapf(err, "get me")
				}
				return a.printClient(cmd, d)
			})
		},
	}
	return a.clientCommand(cmd)
}

func (a *app) printClient(cmd *cobra.Command, d *wire.ClientDetails) error {
	v := newClientDetailsView(d)
	return a.print(cmd, v, func(tw *tabwriter.Writer) {
		kv(tw, "Client ID", d.ClientID)
		kv(tw, "User ID", fmtUserID(d.UserID))
		kv(tw, "Transport", d.Transport)
		kv(tw, "Address", d.Address)
		kv(tw, "Consumer groups", len(d.ConsumerGroups))
		if len(d.ConsumerGroups) > 0 {
			row(tw)
			row(tw, "STREAM", "TOPIC", "GROUP")
			for _, g := range d.ConsumerGroups {
				row(tw, g.StreamID, g.TopicID, g.GroupID)
			}
		}
	})
}

func (a *app) statsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show server statistics (GET_STATS)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(c *client.Client) error {
				var s *wire.Stats
				if err := a.call(cmd, func(ctx context.Context) (err error) { s, err = c.GetStats(ctx); return err }); err != nil {
					return wrapf(err, "get stats")
				}
				return a.print(cmd, newStatsView(s), func(tw *tabwriter.Writer) { statsTable(tw, s) })
			})
		},
	}
	return a.clientCommand(cmd)
}

type statsView struct {
	ServerVersion       string    `json:"server_version"`
	ProcessID           uint32    `json:"process_id"`
	Hostname            string    `json:"hostname"`
	OS                  string    `json:"os_name"`
	OSVersion           string    `json:"os_version"`
	KernelVersion       string    `json:"kernel_version"`
	StartTime           time.Time `json:"start_time"`
	RunTimeMicros       uint64    `json:"run_time_us"`
	CPUUsage            float32   `json:"cpu_usage"`
	TotalCPUUsage       float32   `json:"total_cpu_usage"`
	MemoryUsage         uint64    `json:"memory_usage"`
	TotalMemory         uint64    `json:"total_memory"`
	AvailableMemory     uint64    `json:"available_memory"`
	ReadBytes           uint64    `json:"read_bytes"`
	WrittenBytes        uint64    `json:"written_bytes"`
	ThreadsCount        uint32    `json:"threads_count"`
	FreeDiskSpace       uint64    `json:"free_disk_space"`
	TotalDiskSpace      uint64    `json:"total_disk_space"`
	StreamsCount        uint32    `json:"streams_count"`
	TopicsCount         uint32    `json:"topics_count"`
	PartitionsCount     uint32    `json:"partitions_count"`
	SegmentsCount       uint32    `json:"segments_count"`
	MessagesCount       uint64    `json:"messages_count"`
	MessagesSizeBytes   uint64    `json:"messages_size_bytes"`
	ClientsCount        uint32    `json:"clients_count"`
	ConsumerGroupsCount uint32    `json:"consumer_groups_count"`
}

func newStatsView(s *wire.Stats) statsView {
	return statsView{
		ServerVersion: s.ServerVersion, ProcessID: s.ProcessID, Hostname: s.Hostname, OS: s.OSName, OSVersion: s.OSVersion,
		KernelVersion: s.KernelVersion, StartTime: microsTime(s.StartTime), RunTimeMicros: s.RunTime,
		CPUUsage: s.CPUUsage, TotalCPUUsage: s.TotalCPUUsage, MemoryUsage: s.MemoryUsage, TotalMemory: s.TotalMemory,
		AvailableMemory: s.AvailableMemory, ReadBytes: s.ReadBytes, WrittenBytes: s.WrittenBytes, ThreadsCount: s.ThreadsCount,
		FreeDiskSpace: s.FreeDiskSpace, TotalDiskSpace: s.TotalDiskSpace, StreamsCount: s.StreamsCount, TopicsCount: s.TopicsCount,
		PartitionsCount: s.PartitionsCount, SegmentsCount: s.SegmentsCount, MessagesCount: s.MessagesCount,
		MessagesSizeBytes: s.MessagesSizeBytes, ClientsCount: s.ClientsCount, ConsumerGroupsCount: s.ConsumerGroupsCount,
	}
}

func statsTable(tw *tabwriter.Writer, s *wire.Stats) {
	kv(tw, "Server version", s.ServerVersion)
	kv(tw, "Process ID", s.ProcessID)
	kv(tw, "Hostname", s.Hostname)
	kv(tw, "OS", strings.TrimSpace(s.OSName+" "+s.OSVersion))
	kv(tw, "Kernel", s.KernelVersion)
	kv(tw, "Started", fmtTime(s.StartTime))
	kv(tw, "Uptime", fmtDuration((time.Duration(s.RunTime) * time.Microsecond).Truncate(time.Second)))
	kv(tw, "CPU usage", fmt.Sprintf("%.1f%% (total %.1f%%)", s.CPUUsage, s.TotalCPUUsage))
	kv(tw, "Memory", fmt.Sprintf("%s used, %s available of %s", fmtSize(s.MemoryUsage), fmtSize(s.AvailableMemory), fmtSize(s.TotalMemory)))
	kv(tw, "Disk", fmt.Sprintf("%s free of %s", fmtSize(s.FreeDiskSpace), fmtSize(s.TotalDiskSpace)))
	kv(tw, "I/O", fmt.Sprintf("%s read, %s written", fmtSize(s.ReadBytes), fmtSize(s.WrittenBytes)))
	kv(tw, "Threads", s.ThreadsCount)
	kv(tw, "Streams", s.StreamsCount)
	kv(tw, "Topics", s.TopicsCount)
	kv(tw, "Partitions", s.PartitionsCount)
	kv(tw, "Segments", s.SegmentsCount)
	kv(tw, "Messages", fmt.Sprintf("%d (%s)", s.MessagesCount, fmtSize(s.MessagesSizeBytes)))
	kv(tw, "Clients", s.ClientsCount)
	kv(tw, "Consumer groups", s.ConsumerGroupsCount)
}

func (a *app) clientCmd() *cobra.Command {
	cmd := group("client", "Inspect the server's client connections", "")
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the connections (GET_CLIENTS)",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withClient(cmd, func(c *client.Client) error {
				var cs wire.Clients
				if err := a.call(cmd, func(ctx context.Context) (err error) { cs, err = c.GetClients(ctx); return err }); err != nil {
					return wrapf(err, "list clients")
				}
				views := make([]clientView, len(cs))
				for i := range cs {
					views[i] = newClientView(&cs[i])
				}
				return a.print(cmd, views, func(tw *tabwriter.Writer) {
					row(tw, "ID", "USER", "TRANSPORT", "ADDRESS", "GROUPS")
					for _, c := range cs {
						row(tw, c.ClientID, fmtUserID(c.UserID), c.Transport, c.Address, c.ConsumerGroupsCount)
					}
				})
			})
		},
	}
	get := &cobra.Command{
		Use:   "get CLIENT_ID",
		Short: "Show one connection with its consumer groups (GET_CLIENT)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			id, err := parseU32("client id", args[0])
			if err != nil {
				return err
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var d *wire.ClientDetails
				if err := a.call(cmd, func(ctx context.Context) (err error) { d, err = c.GetClient(ctx, id); return err }); err != nil {
					return wrapf(err, "get client %d", id)
				}
				return a.printClient(cmd, d)
			})
		},
	}
	cmd.AddCommand(list, get)
	return a.clientCommand(cmd)
}

func (a *app) optionsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:       "options [topic|stream|user]",
		Short:     "Describe the options a resource accepts (DESCRIBE_OPTIONS; default: topic)",
		Args:      maxArgs(1),
		ValidArgs: []string{"topic", "stream", "user"},
		RunE: func(cmd *cobra.Command, args []string) error {
			scope := wire.OptionScopeTopic
			if len(args) == 1 {
				switch strings.ToLower(args[0]) {
				case "topic", "topics":
				case "stream", "streams":
					scope = wire.OptionScopeStream
				case "user", "users":
					scope = wire.OptionScopeUser
				default:
					return usagef("options %q: want topic, stream or user", args[0])
				}
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var ds wire.OptionDescriptions
				if err := a.call(cmd, func(ctx context.Context) (err error) { ds, err = c.DescribeOptions(ctx, scope); return err }); err != nil {
					return wrapf(err, "describe %s options", scope)
				}
				type optionView struct {
					Key         string `json:"key"`
					Kind        string `json:"kind"`
					Default     any    `json:"default"`
					Description string `json:"description"`
				}
				views := make([]optionView, len(ds))
				for i, d := range ds {
					views[i] = optionView{Key: d.Key, Kind: d.Kind.String(), Description: d.Description}
					if len(d.Default) > 0 {
						views[i].Default = optionValue(d.Kind, d.Default)
					}
				}
				return a.print(cmd, views, func(tw *tabwriter.Writer) {
					if len(ds) == 0 {
						fmt.Fprintf(tw, "no %s options\n", scope)
						return
					}
					row(tw, "KEY", "KIND", "DEFAULT", "DESCRIPTION")
					for _, d := range ds {
						def := "-"
						if len(d.Default) > 0 {
							def = fmtOptionValue(d.Key, d.Kind, d.Default)
						}
						row(tw, d.Key, d.Kind, def, d.Description)
					}
				})
			})
		},
	}
	return a.clientCommand(cmd)
}

func (a *app) clusterCmd() *cobra.Command {
	run := func(cmd *cobra.Command, _ []string) error {
		return a.withClient(cmd, func(c *client.Client) error {
			var m *wire.ClusterMetadata
			if err := a.call(cmd, func(ctx context.Context) (err error) { m, err = c.GetClusterMetadata(ctx); return err }); err != nil {
				return wrapf(err, "get cluster metadata")
			}
			type nodeView struct {
				Name          string `json:"name"`
				IP            string `json:"ip"`
				TCPPort       uint16 `json:"tcp_port"`
				QUICPort      uint16 `json:"quic_port"`
				HTTPPort      uint16 `json:"http_port"`
				WebSocketPort uint16 `json:"websocket_port"`
				Role          string `json:"role"`
				Status        string `json:"status"`
			}
			v := struct {
				Name  string     `json:"name"`
				Nodes []nodeView `json:"nodes"`
			}{Name: m.Name, Nodes: []nodeView{}}
			for _, n := range m.Nodes {
				v.Nodes = append(v.Nodes, nodeView{n.Name, n.IP, n.TCPPort, n.QUICPort, n.HTTPPort, n.WebSocketPort, roleName(n.Role), nodeStatusName(n.Status)})
			}
			return a.print(cmd, v, func(tw *tabwriter.Writer) {
				kv(tw, "Cluster", m.Name)
				row(tw)
				row(tw, "NODE", "IP", "TCP", "QUIC", "HTTP", "WEBSOCKET", "ROLE", "STATUS")
				for _, n := range v.Nodes {
					row(tw, n.Name, n.IP, n.TCPPort, n.QUICPort, n.HTTPPort, n.WebSocketPort, n.Role, n.Status)
				}
			})
		})
	}
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show the cluster and its nodes (GET_CLUSTER_METADATA)",
		Args:  noArgs,
		RunE:  run,
	}
	cmd.AddCommand(&cobra.Command{Use: "metadata", Short: "Show the cluster and its nodes (same as 'iggo cluster')", Args: noArgs, RunE: run})
	return a.clientCommand(cmd)
}

func roleName(r wire.ClusterNodeRole) string {
	switch r {
	case wire.ClusterLeader:
		return "leader"
	case wire.ClusterFollower:
		return "follower"
	}
	return fmt.Sprintf("role(%d)", r)
}

func nodeStatusName(s wire.ClusterNodeStatus) string {
	switch s {
	case wire.ClusterNodeHealthy:
		return "healthy"
	case wire.ClusterNodeStarting:
		return "starting"
	case wire.ClusterNodeStopping:
		return "stopping"
	case wire.ClusterNodeUnreachable:
		return "unreachable"
	case wire.ClusterNodeMaintenance:
		return "maintenance"
	case wire.ClusterNodeUnknown:
		return "unknown"
	}
	return fmt.Sprintf("status(%d)", s)
}

// snapshot compression and type names for flags (commands.md §11).
var (
	snapshotCompressions = map[string]wire.SnapshotCompression{
		"stored": wire.SnapshotStored, "deflated": wire.SnapshotDeflated, "bzip2": wire.SnapshotBzip2,
		"zstd": wire.SnapshotZstd, "lzma": wire.SnapshotLzma, "xz": wire.SnapshotXz,
	}
	snapshotTypes = map[string]wire.SnapshotType{
		"filesystem": wire.SnapshotFilesystemOverview, "processes": wire.SnapshotProcessList,
		"resources": wire.SnapshotResourceUsage, "test": wire.SnapshotTest, "logs": wire.SnapshotServerLogs,
		"config": wire.SnapshotServerConfig, "all": wire.SnapshotAll,
	}
)

func (a *app) snapshotCmd() *cobra.Command {
	var compression string
	var types []string
	cmd := &cobra.Command{
		Use:   "snapshot [FILE]",
		Short: "Download a diagnostics snapshot (a ZIP archive) to FILE (GET_SNAPSHOT_FILE)",
		Long: `Download a diagnostics snapshot, a ZIP archive, to FILE (default
iggo-snapshot-YYYYMMDD-HHMMSS.zip in the current directory; "-" writes it to
standard output). The file is created with mode 0600: it can hold the server
configuration.`,
		Args: maxArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			comp, ok := snapshotCompressions[strings.ToLower(compression)]
			if !ok {
				return usagef("--compression %q: want stored, deflated, bzip2, zstd, lzma or xz", compression)
			}
			var ts []wire.SnapshotType
			for _, t := range types {
				st, ok := snapshotTypes[strings.ToLower(t)]
				if !ok {
					return usagef("--type %q: want all, filesystem, processes, resources, test, logs or config", t)
				}
				ts = append(ts, st)
			}
			path := "iggo-snapshot-" + time.Now().Format("20060102-150405") + ".zip"
			if len(args) == 1 {
				path = args[0]
			}
			return a.withClient(cmd, func(c *client.Client) error {
				var data []byte
				if err := a.call(cmd, func(ctx context.Context) (err error) { data, err = c.GetSnapshot(ctx, comp, ts...); return err }); err != nil {
					return wrapf(err, "get snapshot")
				}
				if path == "-" {
					_, err := cmd.OutOrStdout().Write(data)
					return err
				}
				if err := writeFile(path, data); err != nil {
					return err
				}
				return a.done(cmd, fmt.Sprintf("snapshot written to %s (%s)", path, fmtSize(uint64(len(data)))), map[string]any{"file": path, "size_bytes": len(data)})
			})
		},
	}
	cmd.Flags().StringVar(&compression, "compression", "deflated", "entry compression: stored, deflated, bzip2, zstd, lzma or xz")
	cmd.Flags().StringSliceVar(&types, "type", nil, "what to collect, repeatable or comma-separated: all (default), filesystem, processes, resources, test, logs, config")
	return a.clientCommand(cmd)
}

// writeFile writes data to path, created with mode 0600 (an existing
// file is truncated).
func writeFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
