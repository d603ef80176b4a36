package itest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/config"
)

// withHTTP turns the HTTP API on at a free port.
func withHTTP(mod ...func(*config.HTTPConfig)) Option {
	return WithConfig(func(c *config.Config) {
		c.HTTP.Enabled, c.HTTP.Address = true, "127.0.0.1:0"
		for _, m := range mod {
			m(&c.HTTP)
		}
	})
}

// httpAPI is a JSON client of a test broker's HTTP API.
type httpAPI struct {
	t     testing.TB
	base  string
	c     *http.Client
	token string
}

func newHTTPAPI(t testing.TB, s *Server) *httpAPI {
	t.Helper()
	a := s.Broker.HTTPAddr()
	if a == nil {
		t.Fatal("HTTP API not enabled")
	}
	return &httpAPI{t: t, base: "http://" + a.String(), c: &http.Client{Timeout: 30 * time.Second}}
}

// httpReply is a decoded answer.
type httpReply struct {
	Status int
	Header http.Header
	Body   []byte
	// Close is set when the server asked to close the connection.
	Close bool
}

// errBody is the error JSON.
type errBody struct {
	ID     uint32  `json:"id"`
	Code   string  `json:"code"`
	Reason string  `json:"reason"`
	Field  *string `json:"field"`
}

// do sends a request; body is JSON-encoded unless it is a string (sent as
// is) or nil. The bearer is the api's token unless hdr overrides it.
func (a *httpAPI) do(method, path string, body any, hdr ...string) httpReply {
	a.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] == "" {
			req.Header.Del(hdr[i])
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := a.c.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return httpReply{Status: resp.StatusCode, Header: resp.Header, Body: data, Close: resp.Close}
}

// ok sends a request that must answer want and decodes the body into out.
func (a *httpAPI) ok(want int, out any, method, path string, body any) httpReply {
	a.t.Helper()
	r := a.do(method, path, body)
	if r.Status != want {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, r.Status, r.Body, want)
	}
	if out != nil {
		dec := json.NewDecoder(bytes.NewReader(r.Body))
		dec.UseNumber()
		if err := dec.Decode(out); err != nil {
			a.t.Fatalf("%s %s: decode %s: %v", method, path, r.Body, err)
		}
	}
	return r
}

// fail sends a request that must fail with status and error id.
func (a *httpAPI) fail(status int, id uint32, method, path string, body any, hdr ...string) errBody {
	a.t.Helper()
	r := a.do(method, path, body, hdr...)
	var e errBody
	if r.Status != status {
		a.t.Fatalf("%s %s = %d %s, want %d (id %d)", method, path, r.Status, r.Body, status, id)
	}
	if err := json.Unmarshal(r.Body, &e); err != nil {
		a.t.Fatalf("%s %s: error body %q: %v", method, path, r.Body, err)
	}
	if e.ID != id || e.Code == "" || e.Reason == "" {
		a.t.Fatalf("%s %s: error %+v, want id %d", method, path, e, id)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		a.t.Fatalf("%s %s: error content type %q", method, path, ct)
	}
	return e
}

// login logs in and keeps the token; it returns the token.
func (a *httpAPI) login(user, pass string) string {
	a.t.Helper()
	var id struct {
		UserID      uint32 `json:"user_id"`
		AccessToken struct {
			Token  string `json:"token"`
			Expiry uint64 `json:"expiry"`
		} `json:"access_token"`
	}
	a.token = ""
	a.ok(200, &id, "POST", "/users/login", map[string]string{"username": user, "password": pass})
	if id.AccessToken.Token == "" || id.AccessToken.Expiry == 0 {
		a.t.Fatalf("login reply %+v", id)
	}
	a.token = id.AccessToken.Token
	return a.token
}

// as returns a copy of the client with another bearer.
func (a *httpAPI) as(token string) *httpAPI {
	b := *a
	b.token = token
	return &b
}

// startHTTP starts a broker with the HTTP API and logs in as root.
func startHTTP(t *testing.T, opts ...Option) (*Server, *httpAPI) {
	t.Helper()
	s := Start(t, append([]Option{withHTTP()}, opts...)...)
	a := newHTTPAPI(t, s)
	a.login(RootUsername, RootPassword)
	return s, a
}

// topicBody is a minimal topic create body.
func topicBody(name string, partitions int) map[string]any {
	return map[string]any{"name": name, "partitions_count": partitions, "compression_algorithm": "none", "message_expiry": 0, "max_topic_size": 0}
}

// num reads a json.Number field of a decoded object.
func num(t testing.TB, v any) uint64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a number", v, v)
	}
	u, err := n.Int64()
	if err != nil {
		t.Fatalf("%v: %v", v, err)
	}
	return uint64(u)
}

// configHTTP and configT shorten option signatures.
type (
	configHTTP = config.HTTPConfig
	configT    = config.Config
)

func durationOf(d time.Duration) config.Duration { return config.Duration(d) }
