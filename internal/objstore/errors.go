package objstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"

	"github.com/minio/minio-go/v7"
)

// Sentinel errors, matched with errors.Is. Errors returned by a [Store]
// wrap at most one of them next to the underlying cause.
var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("object not found")
	// ErrVerify: the stored object does not match the bytes sent (size or
	// ETag differ).
	ErrVerify = errors.New("stored object does not match the bytes sent")
	// ErrBucketMissing: the bucket does not exist.
	ErrBucketMissing = errors.New("bucket does not exist")
	// ErrAccessDenied: the store refused the credentials or the request.
	ErrAccessDenied = errors.New("access denied")
	// ErrUnreachable: no answer from the store (connection refused, DNS,
	// TLS, timeout).
	ErrUnreachable = errors.New("object store unreachable")
	// ErrShortObject: the object ends before the requested range does.
	ErrShortObject = errors.New("object shorter than the requested range")
	// ErrForeignOwner: the bucket prefix belongs to another Iggo server
	// (see [Claim]).
	ErrForeignOwner = errors.New("bucket prefix owned by another server")
)

// errExists is returned by a conditional create when the key exists.
var errExists = errors.New("object already exists")

// keyedError is an error about one configuration key, printed as
// "key: msg" and wrapping the given errors.
type keyedError struct {
	key  string
	msg  string
	errs []error
}

func (e *keyedError) Error() string   { return e.key + ": " + e.msg }
func (e *keyedError) Unwrap() []error { return e.errs }

// configErr returns an error "key: msg" wrapping errs.
func configErr(key, msg string, errs ...error) error {
	return &keyedError{key: key, msg: msg, errs: errs}
}

// s3Code returns the S3 error code and HTTP status of err, if it is an
// error response from the store.
func s3Code(err error) (code string, status int) {
	var resp minio.ErrorResponse
	if errors.As(err, &resp) {
		return resp.Code, resp.StatusCode
	}
	return "", 0
}

// classify returns the sentinel that err from a request made under parent
// (or a context derived from it) falls under, or nil. A request canceled
// because parent ended is not classified: that is the caller's doing.
func classify(parent context.Context, err error) error {
	if err == nil {
		return nil
	}
	switch code, status := s3Code(err); {
	case code == "NoSuchKey" || code == "NoSuchVersion":
		return ErrNotFound
	case code == "NoSuchBucket":
		return ErrBucketMissing
	case code == "InvalidRange":
		return ErrShortObject
	case code == "InvalidAccessKeyId" || code == "XAdminUserNotFound" || // versitygw's answer to an unknown key
		code == "SignatureDoesNotMatch" ||
		code == "AccessDenied" || code == "AllAccessDisabled" ||
		code == "ExpiredToken" || code == "InvalidToken" ||
		code == "InvalidSecurity" || code == "AccountProblem":
		return ErrAccessDenied
	case status == http.StatusNotFound && code == "":
		return ErrNotFound
	case status == http.StatusForbidden || status == http.StatusUnauthorized:
		return ErrAccessDenied
	case status != 0:
		return nil
	}
	if parent.Err() != nil {
		return nil
	}
	var uerr *url.Error
	var nerr net.Error
	if errors.As(err, &uerr) || errors.As(err, &nerr) ||
		errors.Is(err, context.DeadlineExceeded) {
		return ErrUnreachable
	}
	return nil
}

// wrap adds the operation, the key and the matching sentinel to err from a
// request made under parent, and appends the store's error code, which the
// client leaves out of the error text.
func wrap(parent context.Context, op, key string, err error) error {
	code := ""
	if c, _ := s3Code(err); c != "" {
		code = " (" + c + ")"
	}
	if kind := classify(parent, err); kind != nil {
		return fmt.Errorf("objstore: %s %q: %w: %w%s", op, key, kind, err, code)
	}
	return fmt.Errorf("objstore: %s %q: %w%s", op, key, err, code)
}
