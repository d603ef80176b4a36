package broker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/iggo-dev/iggo/internal/fileio"
	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/tier"
)

// tierStateDir is the directory, under system.path, of the remote
// tier's own files: this server's owner identity and the queue of
// deletions.
const tierStateDir = "tier"

// ownerFile holds the identity this server claims bucket prefixes with.
const ownerFile = "owner"

// startCheckTimeout bounds the start-up check of the object store.
const startCheckTimeout = 15 * time.Second

// openTier starts the remote tier when tiered_storage.enabled is set. Wrong
// credentials, a missing bucket or a prefix holding another server's
// objects stop the start with one line naming the key to fix; an object
// store that does not answer is a warning, and uploads wait for it.
func (b *Broker) openTier() (*tier.Manager, error) {
	tc := b.cfg.TieredStorage
	if !tc.Enabled {
		return nil, nil
	}
	u, err := tc.EndpointURL()
	if err != nil {
		return nil, fmt.Errorf("tiered_storage.endpoint: %w", err)
	}
	id, secret := tc.Credentials(os.Getenv)
	store, err := objstore.New(objstore.Config{
		Endpoint: u.String(), Region: tc.Region, Bucket: tc.Bucket, Prefix: tc.Prefix,
		AccessKeyID: id, SecretAccessKey: secret, PathStyle: tc.PathStyle, TLS: tc.TLS,
		CAFile: tc.CAFile, InsecureSkipVerify: tc.InsecureSkipVerify,
		PartSize: int64(tc.PartSize), Timeout: tc.RequestTimeout.Std(),
	})
	if err != nil {
		return nil, err
	}
	stateDir := filepath.Join(b.cfg.System.Path, tierStateDir)
	owner, err := tierOwner(stateDir)
	if err != nil {
		return nil, err
	}
	if b.clusterEnabled() {
		// Every node of a cluster reads the objects its partitions'
		// leaders uploaded: the prefix belongs to the cluster.
		id := clusterID(b.cfg.Cluster.Name)
		owner = fmt.Sprintf("cluster-%016x%016x", id.Hi, id.Lo)
	}
	claim := func(ctx context.Context) error { return objstore.Claim(ctx, store, owner) }
	ctx, cancel := context.WithTimeout(context.Background(), startCheckTimeout)
	err = store.Check(ctx)
	if err == nil {
		err = claim(ctx)
	}
	cancel()
	switch {
	case err == nil:
		b.log.Info("remote tier ready", "endpoint", store.Endpoint(), "bucket", tc.Bucket, "prefix", tc.Prefix)
	case errors.Is(err, objstore.ErrUnreachable):
		b.log.Warn("remote tier: the object store does not answer; sealed segments stay local until it does", "err", err)
	default:
		return nil, err
	}
	// A node of a cluster leaves the other nodes' uploads in flight
	// alone: it aborts only those older than any request can last.
	var incompleteAge time.Duration
	if b.clusterEnabled() {
		incompleteAge = max(time.Hour, 2*tc.RequestTimeout.Std())
	}
	keep := tier.LocalRetention{Bytes: uint64(tc.LocalRetentionSize), Age: tc.LocalRetentionAge.Std()}
	m, err := tier.NewManager(tier.Options{
		Bucket:            store,
		StateDir:          stateDir,
		CacheDir:          tc.CacheDirPath(b.cfg.System.Path),
		CacheBytes:        int64(tc.CacheSize),
		UploadConcurrency: tc.UploadConcurrency,
		UploadInterval:    tc.UploadInterval.Std(),
		RequestTimeout:    tc.RequestTimeout.Std(),
		LocalRetention:    keep,
		Logger:            b.log.With("component", "tier"),
		Clock:             b.opts.now,
		Claim:             claim,
		IncompleteAge:     incompleteAge,
	})
	if err != nil {
		return nil, fmt.Errorf("remote tier: %w", err)
	}
	return m, nil
}

// tierOwner returns this server's identity for bucket prefixes, created
// at random on first use and kept in dir.
func tierOwner(dir string) (string, error) {
	path := filepath.Join(dir, ownerFile)
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("remote tier owner: %w", err)
	}
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("remote tier owner: %w", err)
	}
	id := hex.EncodeToString(raw[:])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("remote tier owner: %w", err)
	}
	if err := fileio.WriteFileAtomic(path, []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("remote tier owner: %w", err)
	}
	return id, nil
}
