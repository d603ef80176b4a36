package httpapi

import (
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// SnapshotRequest is POST /snapshot (PascalCase values).
type SnapshotRequest struct {
	Compression   *string  `json:"compression"`
	SnapshotTypes []string `json:"snapshot_types"`
}

var snapshotCompressions = map[string]wire.SnapshotCompression{
	"Stored": wire.SnapshotStored, "Deflated": wire.SnapshotDeflated, "Bzip2": wire.SnapshotBzip2,
	"Zstd": wire.SnapshotZstd, "Lzma": wire.SnapshotLzma, "Xz": wire.SnapshotXz,
}

var snapshotTypes = map[string]wire.SnapshotType{
	"FilesystemOverview": wire.SnapshotFilesystemOverview, "ProcessList": wire.SnapshotProcessList,
	"ResourceUsage": wire.SnapshotResourceUsage, "Test": wire.SnapshotTest, "ServerLogs": wire.SnapshotServerLogs,
	"ServerConfig": wire.SnapshotServerConfig, "All": wire.SnapshotAll,
}

func (c *call) ping() error {
	c.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write([]byte("pong"))
	return nil
}

func (c *call) stats() error {
	out, err := c.read(wire.CmdGetStats, nil)
	if err != nil {
		return err
	}
	var st wire.Stats
	if err := decodeReply(out.payload, &st); err != nil {
		return err
	}
	return c.json(http.StatusOK, statsJSON(&st))
}

func (c *call) snapshot() error {
	var req SnapshotRequest
	if err := c.decode(&req, false); err != nil {
		return err
	}
	if req.Compression == nil || req.SnapshotTypes == nil {
		return errUnprocessable("compression and snapshot_types are required")
	}
	comp, ok := snapshotCompressions[*req.Compression]
	if !ok {
		return errUnprocessable("unknown compression " + *req.Compression)
	}
	g := &wire.GetSnapshotFile{Compression: comp}
	for _, t := range req.SnapshotTypes {
		v, ok := snapshotTypes[t]
		if !ok {
			return errUnprocessable("unknown snapshot type " + t)
		}
		g.Types = append(g.Types, v)
	}
	out, err := c.read(wire.CmdGetSnapshotFile, g)
	if err != nil {
		return err
	}
	name := "iggy_snapshot_" + time.Now().Format("20060102_150405") + ".zip"
	h := c.w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", `attachment; filename="`+name+`"`)
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(out.payload)
	return nil
}

func (c *call) clusterMetadata() error {
	out, err := c.read(wire.CmdGetClusterMetadata, nil)
	if err != nil {
		return err
	}
	var m wire.ClusterMetadata
	if err := decodeReply(out.payload, &m); err != nil {
		return err
	}
	return c.json(http.StatusOK, clusterJSON(&m))
}

func (c *call) describeOptions() error {
	var scope wire.OptionScope
	switch c.r.PathValue("scope") {
	case "topic":
		scope = wire.OptionScopeTopic
	case "stream":
		scope = wire.OptionScopeStream
	case "user":
		scope = wire.OptionScopeUser
	default:
		return codeError(wire.ErrInvalidCommand.Code)
	}
	out, err := c.read(wire.CmdDescribeOptions, &wire.DescribeOptions{Scope: scope})
	if err != nil {
		return err
	}
	var ds wire.OptionDescriptions
	if err := decodeReply(out.payload, &ds); err != nil {
		return err
	}
	list := make([]OptionDescription, 0, len(ds))
	for _, d := range ds {
		bytes := make([]int, len(d.Default))
		for i, b := range d.Default {
			bytes[i] = int(b)
		}
		list = append(list, OptionDescription{Key: d.Key, Kind: strings.ToLower(d.Kind.String()), DefaultValue: bytes, Description: d.Description})
	}
	return c.json(http.StatusOK, list)
}

func (c *call) getClients() error {
	out, err := c.read(wire.CmdGetClients, nil)
	if err != nil {
		return err
	}
	var cs wire.Clients
	if err := decodeReply(out.payload, &cs); err != nil {
		return err
	}
	list := make([]ClientInfo, 0, len(cs))
	for i := range cs {
		list = append(list, clientJSON(&cs[i]))
	}
	return c.json(http.StatusOK, list)
}

func (c *call) getClient() error {
	id, err := c.u32Path("client_id")
	if err != nil {
		return err
	}
	out, err := c.read(wire.CmdGetClient, &wire.GetClient{ClientID: id})
	if err != nil {
		return err
	}
	if wire.ClientNotFound(out.payload) {
		return codeError(wire.ErrClientNotFound.Code)
	}
	var d wire.ClientDetails
	if err := decodeReply(out.payload, &d); err != nil {
		return err
	}
	h := d.Header()
	info := clientJSON(&h)
	res := ClientInfoDetails{ClientID: info.ClientID, UserID: info.UserID, Address: info.Address, Transport: info.Transport,
		ConsumerGroupsCount: uint32(len(d.ConsumerGroups)), ConsumerGroups: []ClientGroup{}}
	for _, g := range d.ConsumerGroups {
		res.ConsumerGroups = append(res.ConsumerGroups, ClientGroup{StreamID: g.StreamID, TopicID: g.TopicID, GroupID: g.GroupID})
	}
	return c.json(http.StatusOK, res)
}

// metrics serves the metrics handler behind bearer auth (404 when none).
func (c *call) metrics() error {
	if c.s.opts.Metrics == nil {
		return errNotFound()
	}
	c.s.opts.Metrics.ServeHTTP(c.w, c.r)
	return nil
}

// webUI serves the console: /ui and /ui/ are index.html; a missing path
// without a '.' is index.html too (single-page app), with one 404.
func (c *call) webUI() error {
	fsys := c.s.opts.WebUI
	if !c.s.consoleOn() {
		return errConsoleOff()
	}
	p := strings.TrimPrefix(c.r.PathValue("path"), "/")
	if p == "" {
		p = "index.html"
	}
	p = path.Clean(p)
	data, err := fs.ReadFile(fsys, p)
	if err != nil {
		if strings.Contains(path.Base(p), ".") {
			c.w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			c.w.WriteHeader(http.StatusNotFound)
			_, _ = c.w.Write([]byte("Not Found"))
			return nil
		}
		p = "index.html"
		if data, err = fs.ReadFile(fsys, p); err != nil {
			return errNotFound()
		}
	}
	if csp := c.s.opts.WebUICSP; csp != "" {
		c.w.Header().Set("Content-Security-Policy", csp)
	}
	ct := mime.TypeByExtension(path.Ext(p))
	if ct == "" {
		ct = http.DetectContentType(data)
	}
	c.w.Header().Set("Content-Type", ct)
	c.w.WriteHeader(http.StatusOK)
	_, _ = c.w.Write(data)
	return nil
}
