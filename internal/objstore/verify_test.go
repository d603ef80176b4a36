package objstore_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/objstore/objstoretest"
)

// hookProxy starts a reverse proxy to srv that calls hook with each
// request and the server's status code once the server has answered,
// before the client sees the answer. It returns the proxy's URL.
func hookProxy(t *testing.T, srv *objstoretest.Server, hook func(r *http.Request, key string, status int)) string {
	t.Helper()
	target, err := url.Parse(srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host // part of the request signature
		},
		ModifyResponse: func(resp *http.Response) error {
			key := strings.TrimPrefix(resp.Request.URL.Path, "/"+srv.Bucket+"/")
			hook(resp.Request, key, resp.StatusCode)
			return nil
		},
	}
	ps := httptest.NewServer(proxy)
	t.Cleanup(ps.Close)
	return ps.URL
}

// afterUploadProxy is a hookProxy that calls after(key) when the server
// has accepted a request that creates an object: a PUT that is not a
// part, or the POST completing a multipart upload.
func afterUploadProxy(t *testing.T, srv *objstoretest.Server, after func(key string)) string {
	t.Helper()
	return hookProxy(t, srv, func(r *http.Request, key string, status int) {
		q := r.URL.Query()
		creates := r.Method == http.MethodPut && !q.Has("partNumber") ||
			r.Method == http.MethodPost && q.Has("uploadId")
		if creates && status == http.StatusOK {
			after(key)
		}
	})
}

// TestPutDetectsAlteredObject makes the stored object differ from the bytes
// sent between the upload and Put's verifying HEAD, the way a faulty store
// or a concurrent writer would, and expects ErrVerify.
func TestPutDetectsAlteredObject(t *testing.T) {
	srv := objstoretest.Start(t)
	direct := newStore(t, srv, "")
	single := randomBytes(1000, 8)
	multi := randomBytes(objstore.MinPartSize+1000, 9)

	tests := []struct {
		name  string
		data  []byte
		alter func(t *testing.T, key string) error
		want  string
	}{
		{
			name: "single part truncated",
			data: single,
			alter: func(_ *testing.T, key string) error {
				return os.Truncate(srv.ObjectPath(key), int64(len(single)-1))
			},
			want: fmt.Sprintf("the store holds %d bytes", len(single)-1),
		},
		{
			name: "single part replaced",
			data: single,
			alter: func(t *testing.T, key string) error {
				other := bytes.Clone(single)
				other[0] ^= 1 // same size, other ETag
				_, err := direct.Put(testContext(t), key, bytes.NewReader(other), int64(len(other)), nil)
				return err
			},
			want: "with ETag",
		},
		{
			name: "multipart truncated",
			data: multi,
			alter: func(_ *testing.T, key string) error {
				return os.Truncate(srv.ObjectPath(key), objstore.MinPartSize)
			},
			want: fmt.Sprintf("the store holds %d bytes", objstore.MinPartSize),
		},
		{
			name: "multipart replaced by a single-part object",
			data: multi,
			alter: func(t *testing.T, key string) error {
				_, err := direct.Put(testContext(t), key, bytes.NewReader(multi), int64(len(multi)), nil)
				return err
			},
			want: "-2\"", // the ETag sent
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("altered-%d", i)
			var (
				mu       sync.Mutex
				alterErr error
				altered  bool
			)
			endpoint := afterUploadProxy(t, srv, func(k string) {
				mu.Lock()
				defer mu.Unlock()
				if k == key && !altered {
					altered = true
					alterErr = tt.alter(t, k)
				}
			})
			s := newStore(t, srv, "", func(c *objstore.Config) {
				c.Endpoint = endpoint
				c.PartSize = objstore.MinPartSize
			})
			// The direct store uploads single parts only.
			_, err := s.Put(testContext(t), key, bytes.NewReader(tt.data), int64(len(tt.data)), nil)
			mu.Lock()
			defer mu.Unlock()
			if !altered || alterErr != nil {
				t.Fatalf("the object was not altered (altered %v): %v", altered, alterErr)
			}
			if !errors.Is(err, objstore.ErrVerify) {
				t.Fatalf("Put = %v, want ErrVerify", err)
			}
			t.Logf("Put: %v", err)
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Put error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// changingReader returns different bytes at offset 0 on every pass over it,
// as a file rewritten during an upload would.
type changingReader struct {
	mu     sync.Mutex
	data   []byte
	passes int
}

func (r *changingReader) ReadAt(p []byte, off int64) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if off == 0 {
		r.passes++
	}
	if off >= int64(len(r.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.data[off:])
	if off == 0 && n > 0 {
		p[0] ^= byte(r.passes)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// TestPutRejectsBytesChangedWhileSending: Put hashes the source, then sends
// it with the hash as Content-MD5; a source that changes in between is
// refused by the store, and nothing is stored.
func TestPutRejectsBytesChangedWhileSending(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "", func(c *objstore.Config) { c.PartSize = objstore.MinPartSize })
	ctx := testContext(t)
	for _, size := range []int{1000, objstore.MinPartSize + 1} {
		key := fmt.Sprintf("changing-%d", size)
		r := &changingReader{data: randomBytes(size, 10)}
		_, err := s.Put(ctx, key, r, int64(size), nil)
		if err == nil {
			t.Fatalf("Put of %d bytes that changed while sending succeeded", size)
		}
		t.Logf("Put: %v", err)
		if !strings.Contains(err.Error(), "BadDigest") && !strings.Contains(err.Error(), "Content-MD5") {
			t.Errorf("Put error %q does not name the digest mismatch", err)
		}
		if _, err := s.Head(ctx, key); !errors.Is(err, objstore.ErrNotFound) {
			t.Errorf("Head after the refused Put = %v, want ErrNotFound", err)
		}
	}
	assertNoUploadsLeft(t, srv)
}

// failingReader fails reads at or after offset failAt.
type failingReader struct {
	data   []byte
	failAt int64
}

func (r *failingReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > r.failAt {
		return 0, errors.New("disk read error")
	}
	return copy(p, r.data[off:]), nil
}

func TestMultipartFailureAbortsUpload(t *testing.T) {
	srv := objstoretest.Start(t)
	s := newStore(t, srv, "", func(c *objstore.Config) {
		c.PartSize = objstore.MinPartSize
		c.Concurrency = 1
	})
	const size = 3 * objstore.MinPartSize
	r := &failingReader{data: randomBytes(size, 11), failAt: 2*objstore.MinPartSize + 10}
	_, err := s.Put(testContext(t), "failing", r, size, nil)
	if err == nil || !strings.Contains(err.Error(), "disk read error") {
		t.Fatalf("Put = %v, want the read error", err)
	}
	t.Logf("Put: %v", err)
	if _, err := s.Head(testContext(t), "failing"); !errors.Is(err, objstore.ErrNotFound) {
		t.Errorf("Head after the failed Put = %v, want ErrNotFound", err)
	}
	assertNoUploadsLeft(t, srv)
}
