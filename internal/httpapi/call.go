package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/iggo-dev/iggo/internal/auth"
	"github.com/iggo-dev/iggo/wire"
)

// authClass is who may call a route.
type authClass uint8

const (
	// authPublic: no bearer.
	authPublic authClass = iota + 1
	// authAny: any authenticated user.
	authAny
	// authRule: the permission rule of the route's command (checked by
	// the dispatcher).
	authRule
)

// Route flags (http-api.md §6).
const (
	// flagConsistency: accepts ?consistency=serializable|linearizable.
	flagConsistency = 1 << iota
	// flagForward: relayed to the metadata primary by a cluster follower
	// (single node: a no-op, documented in the OpenAPI document).
	flagForward
)

// route is one row of the route table: it registers the handler and
// describes the operation in /openapi.json.
type route struct {
	Method  string
	Pattern string
	// Command is the binary command the route runs (0 for none).
	Command wire.Command
	Auth    authClass
	Flags   int
	Summary string
	// Request is a zero value of the JSON request body type (nil: none).
	Request any
	// Response is a zero value of the JSON reply type (nil: none).
	Response any
	// Status is the success status.
	Status int
	// Query names the query parameters the route reads.
	Query []string
	// ContentType of a non-JSON success body ("" = application/json).
	ContentType string
	handle      func(c *call) error
}

// call is one request being served.
type call struct {
	s    *Server
	w    http.ResponseWriter
	r    *http.Request
	rt   *route
	cred *credential
}

// wrap builds the handler of rt: authentication first (before path, query
// and body, http-api.md §1), the consistency flag, then the route.
func (s *Server) wrap(rt *route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &call{s: s, w: w, r: r, rt: rt}
		if rt.Auth != authPublic {
			cred, err := s.authenticate(r)
			if err != nil {
				writeError(w, r, err)
				return
			}
			c.cred = cred
		}
		if rt.Flags&flagConsistency != 0 {
			switch r.URL.Query().Get("consistency") {
			case "", "serializable", "linearizable":
			default:
				writeError(w, r, errBadRequest("consistency must be serializable or linearizable"))
				return
			}
		}
		// iggy-view on successful answers except /ping and /ui* (single
		// node: view 0); errors drop it again below.
		if rt.Pattern != "/ping" && !isUIPath(r.URL.Path) {
			w.Header().Set("iggy-view", s.viewHeader())
		}
		if s.opts.Cluster != nil {
			if done, err := s.routeInCluster(c); done {
				if err != nil {
					s.fail(c, err)
				}
				return
			}
		}
		if err := rt.handle(c); err != nil {
			s.fail(c, err)
		}
	})
}

// routeInCluster sends c to the leader when it must be served there
// (cluster.go): a linearizable read is redirected, a relayed write
// forwarded. It reports whether c was answered (err: with that error).
func (s *Server) routeInCluster(c *call) (bool, error) {
	r, rt := c.r, c.rt
	if r.Method == http.MethodGet || rt.Flags&flagForward == 0 {
		// A read (GET, or a POST that only reads, such as /snapshot).
		return rt.Flags&flagConsistency != 0 && s.linearizable(c.w, r), nil
	}
	if rt.Command == wire.CmdLogoutUser {
		return false, nil
	}
	if p, ok := s.opts.Cluster.Primary(peerAddr(r)); ok && p.Self {
		return false, nil
	}
	if r.Header.Get(forwardedHeader) != "" {
		return true, errNotPrimary() // one hop only
	}
	if s.forward == nil {
		return false, nil // the dispatcher answers 58
	}
	if err := s.relay(c); !errors.Is(err, errServeHere) {
		return true, err
	}
	return false, nil
}

// fail answers c with err (an *apiError, else 500). A relayed request
// refused because this node does not lead is marked so, and the relaying
// node tries the leader again.
func (s *Server) fail(c *call, err error) {
	w, r := c.w, c.r
	var ae *apiError
	if !errors.As(err, &ae) {
		s.log.Warn("http request failed", "method", r.Method, "path", r.URL.Path, "err", err)
		ae = codeError(wire.ErrError.Code)
		ae.Status = http.StatusInternalServerError
	}
	w.Header().Del("iggy-view")
	if r.Header.Get(forwardedHeader) != "" && (ae.Code == "not_primary" || ae.ID == wire.ErrTransientNotAccepted.Code) {
		w.Header().Set(notPrimaryHeader, "1")
	}
	writeError(w, r, ae)
}

// json writes v with status.
func (c *call) json(status int, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.raw(status, data)
	return nil
}

// raw writes an already encoded JSON document with status.
func (c *call) raw(status int, data []byte) {
	h := c.w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(data)))
	c.w.WriteHeader(status)
	_, _ = c.w.Write(data)
}

// empty answers status without a body.
func (c *call) empty(status int) error {
	c.w.WriteHeader(status)
	return nil
}

// decode reads the JSON body into v: the body is capped at
// http.max_request_size (413 + Connection: close), the Content-Type must
// be application/json (415), malformed JSON is 400, JSON that does not fit
// v is 422. strict rejects unknown keys (the produce body).
func (c *call) decode(v any, strict bool) error {
	data, err := c.readBody(nil)
	if err != nil {
		return err
	}
	return decodeJSON(data, v, strict)
}

// readBody checks the Content-Type (415) and reads the body, capped at
// http.max_request_size (413 + Connection: close), into dst; a body that
// is not UTF-8 is 400.
func (c *call) readBody(dst []byte) ([]byte, error) {
	ct := c.r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" {
		return nil, httpError(http.StatusUnsupportedMediaType, "unsupported_media_type", "Expected request with `Content-Type: application/json`")
	}
	limit := int64(c.s.cfg.MaxRequestSize)
	if c.r.ContentLength > limit {
		return nil, tooLarge()
	}
	// Room for the whole body plus the read that sees EOF, so a body of
	// the announced length is read without growing the buffer.
	want := int(max(min(c.r.ContentLength, limit), 0)) + bytes.MinRead + 1
	if cap(dst) < want {
		dst = make([]byte, 0, want)
	}
	buf := bytes.NewBuffer(dst[:0])
	_, err = buf.ReadFrom(http.MaxBytesReader(c.w, c.r.Body, limit))
	data := buf.Bytes()
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return nil, tooLarge()
		}
		return nil, errBadRequest("cannot read the request body")
	}
	if !utf8.Valid(data) {
		return nil, errBadRequest("request body is not valid UTF-8")
	}
	return data, nil
}

// decodeJSON reads data into v: malformed JSON is 400, JSON that does not
// fit v is 422; strict rejects unknown keys.
func decodeJSON(data []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return errBadRequest("malformed JSON: " + err.Error())
		}
		return errUnprocessable("invalid JSON body: " + err.Error())
	}
	if dec.More() {
		return errBadRequest("malformed JSON: trailing data")
	}
	return nil
}

func tooLarge() *apiError {
	e := httpError(http.StatusRequestEntityTooLarge, "payload_too_large", "Payload too large")
	e.Close = true
	return e
}

// ident reads an identifier path segment: 1..=255 bytes (else 400 id 6);
// a decimal u32 is numeric, anything else a name.
func (c *call) ident(name string) (wire.Identifier, error) {
	v := c.r.PathValue(name)
	if len(v) < 1 || len(v) > wire.MaxNameLen || !utf8.ValidString(v) {
		e := codeError(wire.ErrInvalidIdentifier.Code)
		f := name
		e.Field = &f
		return wire.Identifier{}, e
	}
	if n, err := strconv.ParseUint(v, 10, 32); err == nil {
		return wire.NumericID(uint32(n)), nil
	}
	return wire.NamedID(v), nil
}

// u32Path reads a u32 path segment (400 otherwise).
func (c *call) u32Path(name string) (uint32, error) {
	n, err := strconv.ParseUint(c.r.PathValue(name), 10, 32)
	if err != nil {
		return 0, errBadRequest("invalid " + name + ": not a u32")
	}
	return uint32(n), nil
}

// queryU64 reads an optional unsigned query parameter.
func (c *call) queryU64(name string, def uint64, bits int) (uint64, bool, error) {
	v := c.r.URL.Query().Get(name)
	if v == "" {
		if _, present := c.r.URL.Query()[name]; !present {
			return def, false, nil
		}
	}
	n, err := strconv.ParseUint(v, 10, bits)
	if err != nil {
		return 0, false, errBadRequest("invalid query parameter " + name)
	}
	return n, true, nil
}

// user is the caller's user id.
func (c *call) user() auth.UserID { return c.cred.user }

// read runs a read command for the caller.
func (c *call) read(code wire.Command, req body) (outcome, error) { return c.s.read(c.cred, code, req) }

// write runs a control-plane write for the caller.
func (c *call) write(code wire.Command, req body) (outcome, error) {
	return c.s.write(c.cred, code, req)
}

// decodeReply decodes a payload into v (a wire reply type).
func decodeReply(p []byte, v interface{ Decode([]byte) error }) error {
	if err := v.Decode(p); err != nil {
		return codeError(wire.CodeOf(err))
	}
	return nil
}
