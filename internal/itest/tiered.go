package itest

import (
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

// WithTieredStorage turns tiered storage on over an S3-compatible server
// started for the test (objstoretest.Start: the test is skipped without
// its binary). Local retention is 0, so a sealed segment's local copy is
// dropped as soon as it is uploaded, and partitions are scanned every
// 50 ms.
func WithTieredStorage(t testing.TB) Option {
	t.Helper()
	srv := objstoretest.Start(t)
	return WithConfig(func(c *config.Config) {
		ts := &c.TieredStorage
		ts.Enabled = true
		ts.Endpoint, ts.Region, ts.Bucket, ts.Prefix = srv.Endpoint, srv.Region, srv.Bucket, "itest"
		ts.AccessKeyID, ts.SecretAccessKey = config.Secret(srv.AccessKey), config.Secret(srv.SecretKey)
		ts.LocalRetentionSize = 0
		ts.UploadInterval = config.Duration(50 * time.Millisecond)
		ts.RequestTimeout = config.Duration(10 * time.Second)
	})
}
