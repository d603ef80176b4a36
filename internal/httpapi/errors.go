package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"unicode"

	"github.com/iggo-dev/iggo/wire"
)

// apiError is an error answer: the JSON body {id, code, reason, field}
// (http-api.md §4) and its HTTP status.
type apiError struct {
	Status int
	ID     uint32
	Code   string
	Reason string
	Field  *string
	// Close asks for Connection: close (413 on HTTP/1.x).
	Close bool
	// RetryAfter adds Retry-After: 1 (429 and transient 503).
	RetryAfter bool
}

func (e *apiError) Error() string { return e.Code + ": " + e.Reason }

// errorBody is the JSON shape of every error.
type errorBody struct {
	ID     uint32  `json:"id"`
	Code   string  `json:"code"`
	Reason string  `json:"reason"`
	Field  *string `json:"field"`
}

// httpError is an HTTP-layer error: id = status, field null.
func httpError(status int, code, reason string) *apiError {
	return &apiError{Status: status, ID: uint32(status), Code: code, Reason: reason}
}

// Common HTTP-layer errors.
func errNotFound() *apiError {
	return httpError(http.StatusNotFound, "not_found", "Resource not found")
}

// errBadCredentials is a refused password login: id 42
// (invalid_credentials) with status 401. Elsewhere id 42 (a wrong current
// password on a password change) stays 400: the session is still valid,
// and a 401 would sign the web console out.
func errBadCredentials() *apiError {
	e := codeError(wire.ErrInvalidCredentials.Code)
	e.Status = http.StatusUnauthorized
	return e
}

func errBadRequest(reason string) *apiError {
	return httpError(http.StatusBadRequest, "bad_request", reason)
}

func errUnprocessable(reason string) *apiError {
	return httpError(http.StatusUnprocessableEntity, "unprocessable_entity", reason)
}

func errUnavailable() *apiError {
	e := &apiError{Status: http.StatusServiceUnavailable, ID: wire.ErrCannotEstablishConnection.Code, Code: "cannot_establish_connection", Reason: "Cannot establish connection", RetryAfter: true}
	return e
}

// codeError is the typed error of an IggyError code (http-api.md §4).
func codeError(code uint32) *apiError {
	name := "Error"
	if e, ok := wire.ErrorForCode(code).(*wire.Error); ok {
		name = e.Name
	}
	e := &apiError{Status: statusOf(code), ID: code, Code: snake(name), Reason: reasonOf(name)}
	if f := fieldOf(code); f != "" {
		e.Field = &f
	}
	if code == wire.ErrTransientNotCommitted.Code || code == wire.ErrTransientNotAccepted.Code {
		e.RetryAfter = true
	}
	return e
}

// statusOf maps an IggyError code to its HTTP status (http-api.md §4).
func statusOf(code uint32) int {
	switch code {
	case 20, 100, 1009, 2010, 3007, 3021, 4000, 5000, 5003, 5006:
		return http.StatusNotFound
	case 40, 53, 77, 78:
		return http.StatusUnauthorized
	case 41:
		return http.StatusForbidden
	case 57, 58:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// fieldOf is the error body's field for a code (http-api.md §4).
func fieldOf(code uint32) string {
	switch code {
	case 1009, 1014:
		return "stream_id"
	case 2010, 2016:
		return "topic_id"
	case 3007:
		return "partition_id"
	case 4000:
		return "segment_id"
	case 100:
		return "client_id"
	case 1012, 1013, 2013, 2014, 5004, 51:
		return "name"
	case 4100:
		return "offset"
	case 5002:
		return "consumer_group_id"
	case 46:
		return "username"
	}
	return ""
}

// snake turns an upstream variant name into snake_case
// ("StreamIdNotFound" -> "stream_id_not_found").
func snake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// reasonOf is a readable sentence for a variant name ("Stream id not
// found"). The reference's Display texts carry the failing values; ours
// are generic (http-api.md §4: informational, MAY differ).
func reasonOf(name string) string {
	s := strings.ReplaceAll(snake(name), "_", " ")
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// writeError writes e as the JSON error body.
func writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter {
		h.Set("Retry-After", "1")
	}
	if e.Close && r != nil && r.ProtoMajor == 1 {
		h.Set("Connection", "close")
	}
	body, _ := json.Marshal(errorBody{ID: e.ID, Code: e.Code, Reason: e.Reason, Field: e.Field})
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}
