// Package config is the server's configuration: the TOML schema (a subset
// of the reference server's config.toml, same names and defaults), the
// IGGY_* environment overlay computed from that schema, and validation.
//
// Layers, later wins: Default(), an optional TOML file, IGGY_* environment
// variables, then command-line flags (applied by the caller before
// Validate). See ../shared/design/config.md.
package config

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// Config is the whole server configuration.
type Config struct {
	System              SystemConfig              `toml:"system"`
	TCP                 TCPConfig                 `toml:"tcp"`
	QUIC                QUICConfig                `toml:"quic"`
	WebSocket           WebSocketConfig           `toml:"websocket"`
	HTTP                HTTPConfig                `toml:"http"`
	Heartbeat           HeartbeatConfig           `toml:"heartbeat"`
	PersonalAccessToken PersonalAccessTokenConfig `toml:"personal_access_token"`
	Metadata            MetadataConfig            `toml:"metadata"`
	MessageBus          MessageBusConfig          `toml:"message_bus"`
	DataMaintenance     DataMaintenanceConfig     `toml:"data_maintenance"`
	Storage             StorageConfig             `toml:"storage"`
	TieredStorage       TieredStorageConfig       `toml:"tiered_storage"`
	ConsumerGroup       ConsumerGroupConfig       `toml:"consumer_group"`
	Cluster             ClusterConfig             `toml:"cluster"`
	Telemetry           TelemetryConfig           `toml:"telemetry"`
}

// ConsumerGroupConfig is [consumer_group] (config.md §3).
type ConsumerGroupConfig struct {
	// RebalancingTimeout is the longest a partition stays pending
	// revocation in the cooperative hand-off (semantics.md §6.3 step 4).
	RebalancingTimeout Duration `toml:"rebalancing_timeout"`
}

// SystemConfig is the [system] table.
type SystemConfig struct {
	// Path is the data directory (IGGY_SYSTEM_PATH), default "local_data".
	Path    string        `toml:"path"`
	Runtime RuntimeConfig `toml:"runtime"`
	Logging LoggingConfig `toml:"logging"`

	Encryption EncryptionConfig `toml:"encryption"`
}

// RuntimeConfig is [system.runtime]: where the effective config is written.
type RuntimeConfig struct {
	// Path is relative to SystemConfig.Path, default "runtime".
	Path string `toml:"path"`
}

// TCPConfig is the [tcp] table: the binary protocol over TCP (and TLS).
// MaxConnections, FrameReadTimeout and WriteTimeout are Iggo extensions
// (the reference has no such keys); they bound what one peer can hold.
type TCPConfig struct {
	Enabled bool      `toml:"enabled"`
	Address string    `toml:"address"`
	TLS     TLSConfig `toml:"tls"`
	// MaxConnections caps concurrently open client connections; a
	// connection accepted past the cap is closed at once.
	MaxConnections int `toml:"max_connections"`
	// FrameReadTimeout is how long a frame may take to arrive once its
	// first byte has been read; an idle connection has no read deadline.
	FrameReadTimeout Duration `toml:"frame_read_timeout"`
	// WriteTimeout is how long one vectored write of replies may block;
	// a client that stops reading is disconnected after it.
	WriteTimeout Duration `toml:"write_timeout"`
}

// TLSConfig is [tcp.tls].
type TLSConfig struct {
	Enabled bool `toml:"enabled"`
	// SelfSigned generates an ephemeral certificate when CertFile does not
	// exist; otherwise the PEM pair is loaded.
	SelfSigned bool   `toml:"self_signed"`
	CertFile   string `toml:"cert_file"`
	KeyFile    string `toml:"key_file"`
}

// HeartbeatConfig is [heartbeat]: the stale-client verifier.
type HeartbeatConfig struct {
	Enabled bool `toml:"enabled"`
	// Interval is the verifier period; a session is stale after 1.2 x
	// Interval without a request (semantics.md §1.10).
	Interval Duration `toml:"interval"`
}

// PersonalAccessTokenConfig is [personal_access_token].
type PersonalAccessTokenConfig struct {
	MaxTokensPerUser uint32        `toml:"max_tokens_per_user"`
	Cleaner          CleanerConfig `toml:"cleaner"`
}

// CleanerConfig is [personal_access_token.cleaner].
type CleanerConfig struct {
	Enabled  bool     `toml:"enabled"`
	Interval Duration `toml:"interval"`
}

// MetadataConfig is [metadata].
type MetadataConfig struct {
	// ClientsTableMax is the number of client-table slots (2..=65536).
	ClientsTableMax int `toml:"clients_table_max"`
}

// MessageBusConfig is [message_bus].
type MessageBusConfig struct {
	// MaxMessageSize is the largest frame (header + body) accepted on
	// every binary transport.
	MaxMessageSize Size `toml:"max_message_size"`
	// HandshakeGrace bounds a QUIC handshake, a WebSocket upgrade, or TLS
	// plus upgrade (WSS); an overrun drops the connection.
	HandshakeGrace Duration `toml:"handshake_grace"`
	// CloseGrace bounds the close sequence of a QUIC or WebSocket
	// connection.
	CloseGrace Duration `toml:"close_grace"`
}

// Limits enforced by Validate.
const (
	MinClientsTableMax = 2
	MaxClientsTableMax = 65536
	// MinFrameBytes is the smallest allowed max_message_size: a header
	// plus a small body.
	MinFrameBytes = 4 << 10
	// MaxFrameBytes is the largest allowed max_message_size; the wire
	// size field is a u32, and larger bodies are never needed.
	MaxFrameBytes = 1 << 30
	// MaxConnectionsLimit bounds tcp.max_connections.
	MaxConnectionsLimit = 1 << 20
)

// Default returns the shipped defaults (config.md): data in ./local_data,
// TCP on 127.0.0.1:8090 without TLS, QUIC on UDP 127.0.0.1:8080 and
// WebSocket on 127.0.0.1:8092 (transports.md), heartbeat every 30 s, 100 PATs per
// user, 8192 client-table slots, 64 MiB frames.
func Default() Config {
	return Config{
		System: SystemConfig{
			Path:    "local_data",
			Runtime: RuntimeConfig{Path: "runtime"},
			Logging: defaultLogging(),
		},
		TCP: TCPConfig{
			Enabled: true,
			Address: "127.0.0.1:8090",
			TLS: TLSConfig{
				SelfSigned: true,
				CertFile:   "core/certs/iggy_cert.pem",
				KeyFile:    "core/certs/iggy_key.pem",
			},
			MaxConnections:   10000,
			FrameReadTimeout: Duration(30 * time.Second),
			WriteTimeout:     Duration(30 * time.Second),
		},
		Heartbeat:           HeartbeatConfig{Enabled: true, Interval: Duration(30 * time.Second)},
		PersonalAccessToken: PersonalAccessTokenConfig{MaxTokensPerUser: 100, Cleaner: CleanerConfig{Enabled: true, Interval: Duration(time.Minute)}},
		Metadata:            MetadataConfig{ClientsTableMax: 8192},
		MessageBus:          MessageBusConfig{MaxMessageSize: Size(wire.MaxFrameSize), HandshakeGrace: Duration(10 * time.Second), CloseGrace: Duration(2 * time.Second)},
		QUIC:                defaultQUIC(),
		WebSocket:           defaultWebSocket(),
		HTTP:                defaultHTTP(),
		Telemetry:           defaultTelemetry(),
		DataMaintenance:     defaultDataMaintenance(),
		Storage:             defaultStorage(),
		TieredStorage:       defaultTieredStorage(),
		ConsumerGroup:       ConsumerGroupConfig{RebalancingTimeout: Duration(30 * time.Second)},
		Cluster:             defaultCluster(),
	}
}

// LogLevels maps the accepted system.logging.level values to slog levels
// (as integers: -4 debug, 0 info, 4 warn, 8 error). trace maps to debug.
var LogLevels = map[string]int{"trace": -4, "debug": -4, "info": 0, "warn": 4, "warning": 4, "error": 8}

// Validate checks every value and returns all problems joined, each naming
// its key, so a bad configuration refuses to start with a clear message.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key string, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", key, fmt.Sprintf(format, args...)))
	}
	if strings.TrimSpace(c.System.Path) == "" {
		bad("system.path", "must not be empty")
	}
	errs = append(errs, c.validateLogging()...)
	if c.TCP.Enabled {
		if err := checkAddress(c.TCP.Address); err != nil {
			bad("tcp.address", "%v", err)
		}
	}
	if c.TCP.MaxConnections < 1 || c.TCP.MaxConnections > MaxConnectionsLimit {
		bad("tcp.max_connections", "%d is outside 1..=%d", c.TCP.MaxConnections, MaxConnectionsLimit)
	}
	if c.TCP.FrameReadTimeout <= 0 {
		bad("tcp.frame_read_timeout", "must be positive")
	}
	if c.TCP.WriteTimeout <= 0 {
		bad("tcp.write_timeout", "must be positive")
	}
	if c.TCP.TLS.Enabled && !c.TCP.TLS.SelfSigned && (c.TCP.TLS.CertFile == "" || c.TCP.TLS.KeyFile == "") {
		bad("tcp.tls", "cert_file and key_file are required when self_signed is false")
	}
	if c.Heartbeat.Enabled && c.Heartbeat.Interval <= 0 {
		bad("heartbeat.interval", "must be positive when the heartbeat is enabled")
	}
	if c.PersonalAccessToken.MaxTokensPerUser == 0 {
		bad("personal_access_token.max_tokens_per_user", "must be at least 1")
	}
	if c.PersonalAccessToken.Cleaner.Enabled && c.PersonalAccessToken.Cleaner.Interval <= 0 {
		bad("personal_access_token.cleaner.interval", "must be positive when the cleaner is enabled")
	}
	if n := c.Metadata.ClientsTableMax; n < MinClientsTableMax || n > MaxClientsTableMax {
		bad("metadata.clients_table_max", "%d is outside %d..=%d", n, MinClientsTableMax, MaxClientsTableMax)
	}
	if s := c.MessageBus.MaxMessageSize; s < MinFrameBytes || s > MaxFrameBytes {
		bad("message_bus.max_message_size", "%s is outside %s..=%s", s, Size(MinFrameBytes), Size(MaxFrameBytes))
	}
	errs = append(errs, c.DataMaintenance.validate()...)
	errs = append(errs, c.Storage.validate()...)
	errs = append(errs, c.validateTieredStorage()...)
	errs = append(errs, c.validateTransports()...)
	errs = append(errs, c.validateHTTP()...)
	errs = append(errs, c.validateTelemetry()...)
	errs = append(errs, c.validateCluster()...)
	errs = append(errs, c.validateEncryption()...)
	if c.ConsumerGroup.RebalancingTimeout <= 0 {
		bad("consumer_group.rebalancing_timeout", "must be positive")
	}
	return errors.Join(errs...)
}

func checkAddress(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port", addr)
	}
	if host != "" && net.ParseIP(host) == nil && strings.ContainsAny(host, " /") {
		return fmt.Errorf("%q has an invalid host", addr)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return fmt.Errorf("%q has an invalid port", addr)
	}
	_ = p
	return nil
}
