package objstore_test

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

func TestCheck(t *testing.T) {
	srv := objstoretest.Start(t)
	tests := []struct {
		name    string
		mutate  func(*objstore.Config)
		want    error  // the sentinel the error wraps, if any
		wantMsg string // the start of the error text; "": Check succeeds
	}{
		{name: "ok", mutate: func(*objstore.Config) {}},
		{name: "ok with prefix", mutate: func(c *objstore.Config) { c.Prefix = "some/prefix" }},
		{
			name:    "wrong secret",
			mutate:  func(c *objstore.Config) { c.SecretAccessKey = "wrong-secret" },
			want:    objstore.ErrAccessDenied,
			wantMsg: "tiered_storage.access_key_id: the object store refused the credentials (SignatureDoesNotMatch",
		},
		{
			name:   "unknown access key",
			mutate: func(c *objstore.Config) { c.AccessKeyID = "nobody" },
			want:   objstore.ErrAccessDenied,
			// versitygw answers XAdminUserNotFound where S3 answers InvalidAccessKeyId.
			wantMsg: "tiered_storage.access_key_id: the object store refused the credentials (",
		},
		{
			name:    "missing bucket",
			mutate:  func(c *objstore.Config) { c.Bucket = "no-such-bucket" },
			want:    objstore.ErrBucketMissing,
			wantMsg: `tiered_storage.bucket: bucket "no-such-bucket" does not exist at ` + srv.Endpoint,
		},
		{
			name:    "wrong region",
			mutate:  func(c *objstore.Config) { c.Region = "eu-west-1" },
			wantMsg: `tiered_storage.region: the object store rejected region "eu-west-1"`,
		},
		{
			name:    "https against plain http",
			mutate:  func(c *objstore.Config) { c.Endpoint = strings.Replace(c.Endpoint, "http://", "https://", 1) },
			want:    objstore.ErrUnreachable,
			wantMsg: "tiered_storage.tls:",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t, srv, "", tt.mutate)
			err := s.Check(testContext(t))
			if tt.wantMsg == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil || tt.want != nil && !errors.Is(err, tt.want) {
				t.Fatalf("Check = %v, want %v", err, tt.want)
			}
			checkMessage(t, err, tt.wantMsg)
		})
	}
}

func TestCheckUnreachable(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "", func(c *objstore.Config) { c.Timeout = 2 * time.Second })
	if err := s.Check(testContext(t)); err != nil {
		t.Fatal(err)
	}
	srv.Stop(t)
	start := time.Now()
	err := s.Check(testContext(t))
	took := time.Since(start)
	if !errors.Is(err, objstore.ErrUnreachable) {
		t.Fatalf("Check with the server down = %v, want ErrUnreachable", err)
	}
	checkMessage(t, err, "tiered_storage.endpoint: cannot reach "+srv.Endpoint)
	if took > 2*time.Second {
		t.Errorf("Check with the server down took %s", took)
	}
	// Other operations report the outage with the same sentinel (after
	// the client's own retries).
	if _, err := s.Head(testContext(t), "x"); !errors.Is(err, objstore.ErrUnreachable) {
		t.Errorf("Head with the server down = %v, want ErrUnreachable", err)
	}

	srv.Restart(t)
	if err := s.Check(testContext(t)); err != nil {
		t.Fatalf("Check after Restart: %v", err)
	}
}

func TestCheckTimeout(t *testing.T) {
	// A listener that accepts connections and never answers.
	srv := objstoretest.Start(t)
	silent := silentListener(t)
	s := newStore(t, srv, "", func(c *objstore.Config) {
		c.Endpoint = "http://" + silent
		c.Timeout = 300 * time.Millisecond
	})
	start := time.Now()
	err := s.Check(testContext(t))
	if !errors.Is(err, objstore.ErrUnreachable) {
		t.Fatalf("Check against a silent server = %v, want ErrUnreachable", err)
	}
	checkMessage(t, err, "tiered_storage.endpoint: cannot reach http://"+silent+": no answer within 300ms")
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("Check took %s with a 300ms timeout", took)
	}
}

// checkMessage checks that err is one line starting with prefix.
func checkMessage(t *testing.T, err error, prefix string) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		t.Errorf("error %q\ndoes not start with %q", msg, prefix)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error %q is not one line", msg)
	}
	t.Logf("error: %s", msg)
}

// silentListener returns the address of a listener that accepts
// connections and never answers; it closes them at the end of the test.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	})
	t.Cleanup(func() {
		l.Close()
		wg.Wait()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return l.Addr().String()
}
