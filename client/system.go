package client

import (
	"context"

	"github.com/iggo-dev/iggo/wire"
)

// Ping sends PING (code 1). It is the only request served before login
// and also refreshes the server's heartbeat clock.
func (c *Client) Ping(ctx context.Context) error {
	return c.call(ctx, wire.CmdPing, nil, nil)
}

// GetStats returns the server statistics (GET_STATS, code 10; needs the
// read_servers or manage_servers permission).
func (c *Client) GetStats(ctx context.Context) (*wire.Stats, error) {
	var s wire.Stats
	if err := c.call(ctx, wire.CmdGetStats, nil, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

// GetSnapshot returns a diagnostics ZIP archive (GET_SNAPSHOT_FILE, code
// 11) with the given entry compression and snapshot types; no types means
// wire.SnapshotAll. The archive's content is server-defined.
func (c *Client) GetSnapshot(ctx context.Context, compression wire.SnapshotCompression, types ...wire.SnapshotType) ([]byte, error) {
	if len(types) == 0 {
		types = []wire.SnapshotType{wire.SnapshotAll}
	}
	return c.invoke(ctx, wire.CmdGetSnapshotFile, &wire.GetSnapshotFile{Compression: compression, Types: types})
}

// GetClusterMetadata returns the cluster description (GET_CLUSTER_METADATA,
// code 12).
func (c *Client) GetClusterMetadata(ctx context.Context) (*wire.ClusterMetadata, error) {
	var m wire.ClusterMetadata
	if err := c.call(ctx, wire.CmdGetClusterMetadata, nil, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// DescribeOptions returns the option catalog of a scope (DESCRIBE_OPTIONS,
// code 13): topic options today, an empty list for streams and users.
func (c *Client) DescribeOptions(ctx context.Context, scope wire.OptionScope) (wire.OptionDescriptions, error) {
	var d wire.OptionDescriptions
	if err := c.call(ctx, wire.CmdDescribeOptions, &wire.DescribeOptions{Scope: scope}, &d); err != nil {
		return nil, err
	}
	return d, nil
}

// GetMe returns the caller's own connection record (GET_ME, code 20).
func (c *Client) GetMe(ctx context.Context) (*wire.ClientDetails, error) {
	var d wire.ClientDetails
	if err := c.call(ctx, wire.CmdGetMe, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// GetClient returns one connection's record by its server-side client id
// (GET_CLIENT, code 21). The server's empty "no such client" answer is
// returned as wire.ErrClientNotFound.
func (c *Client) GetClient(ctx context.Context, clientID uint32) (*wire.ClientDetails, error) {
	payload, err := c.invoke(ctx, wire.CmdGetClient, &wire.GetClient{ClientID: clientID})
	if err != nil {
		return nil, err
	}
	if wire.ClientNotFound(payload) {
		return nil, wrapCmd(wire.CmdGetClient, wire.ErrClientNotFound)
	}
	var d wire.ClientDetails
	if err := decodeReply(wire.CmdGetClient, payload, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// GetClients lists the server's connections (GET_CLIENTS, code 22).
func (c *Client) GetClients(ctx context.Context) (wire.Clients, error) {
	var cs wire.Clients
	if err := c.call(ctx, wire.CmdGetClients, nil, &cs); err != nil {
		return nil, err
	}
	return cs, nil
}

// decodeReply decodes a reply payload, reporting a failure as a protocol
// error of code.
func decodeReply(code wire.Command, payload []byte, out wire.Body) error {
	if err := out.Decode(payload); err != nil {
		return wrapCmd(code, &ProtocolError{Reason: "undecodable " + code.String() + " reply: " + err.Error()})
	}
	return nil
}

// getIfPresent sends a read whose reply is "X or empty" and decodes it
// into out; an empty reply is returned as notFound.
func (c *Client) getIfPresent(ctx context.Context, code wire.Command, req appender, out wire.Body, notFound error) error {
	payload, err := c.invoke(ctx, code, req)
	if err != nil {
		return err
	}
	if len(payload) == 0 {
		return wrapCmd(code, notFound)
	}
	return decodeReply(code, payload, out)
}
