package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Info describes a stored object.
type Info struct {
	// Size is the object's length in bytes.
	Size int64
	// ETag is the object's ETag without quotes.
	ETag string
	// Meta is the user metadata: keys lower-case, without the x-amz-meta-
	// prefix.
	Meta map[string]string
}

// Head returns the size, ETag and user metadata of key. A missing key
// gives an error wrapping [ErrNotFound].
func (s *Store) Head(ctx context.Context, key string) (Info, error) {
	info, err := s.head(ctx, key)
	if err != nil {
		return Info{}, wrap(ctx, "head", key, err)
	}
	return info, nil
}

// head is Head returning the client's error as is.
func (s *Store) head(ctx context.Context, key string) (Info, error) {
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	oi, err := s.client.StatObject(rctx, s.bucket, key, minio.StatObjectOptions{})
	if err != nil {
		return Info{}, err
	}
	info := Info{Size: oi.Size, ETag: strings.Trim(oi.ETag, `"`)}
	for name, values := range oi.Metadata {
		lower := strings.ToLower(name)
		if strings.HasPrefix(lower, metaPrefix) && len(lower) > len(metaPrefix) && len(values) > 0 {
			if info.Meta == nil {
				info.Meta = make(map[string]string)
			}
			info.Meta[lower[len(metaPrefix):]] = values[0]
		}
	}
	return info, nil
}

// ReadRange fills p with the bytes of key starting at off, with one ranged
// GET. A missing key gives an error wrapping [ErrNotFound]; an object that
// ends before off+len(p) one wrapping [ErrShortObject].
func (s *Store) ReadRange(ctx context.Context, key string, off int64, p []byte) error {
	if off < 0 {
		return fmt.Errorf("objstore: read %q: negative offset %d", key, off)
	}
	if len(p) == 0 {
		return nil
	}
	end := off + int64(len(p)) // exclusive
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	var opts minio.GetObjectOptions
	if err := opts.SetRange(off, end-1); err != nil {
		return fmt.Errorf("objstore: read %q: %w", key, err)
	}
	body, _, header, err := s.core.GetObject(rctx, s.bucket, key, opts)
	if err != nil {
		return wrap(ctx, fmt.Sprintf("read bytes %d-%d of", off, end), key, err)
	}
	defer body.Close()
	start, total, ok := parseContentRange(header.Get("Content-Range"))
	switch {
	case ok && start != off:
		return fmt.Errorf("objstore: read %q: asked for bytes from %d, the store sent bytes from %d", key, off, start)
	case !ok && off != 0:
		return fmt.Errorf("objstore: read %q: the store ignored the range request for bytes %d-%d", key, off, end)
	case ok && total >= 0 && total < end:
		return fmt.Errorf("objstore: read %q bytes %d-%d: %w: it has %d bytes", key, off, end, ErrShortObject, total)
	}
	n, err := io.ReadFull(body, p)
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("objstore: read %q bytes %d-%d: %w: got %d bytes", key, off, end, ErrShortObject, n)
	}
	if err != nil {
		return wrap(ctx, fmt.Sprintf("read bytes %d-%d of", off, end), key, err)
	}
	return nil
}

// parseContentRange parses "bytes first-last/total"; total is -1 when the
// store gives "*".
func parseContentRange(v string) (first, total int64, ok bool) {
	rest, found := strings.CutPrefix(v, "bytes ")
	if !found {
		return 0, 0, false
	}
	span, size, found := strings.Cut(rest, "/")
	if !found {
		return 0, 0, false
	}
	firstStr, _, found := strings.Cut(span, "-")
	if !found {
		return 0, 0, false
	}
	first, err := strconv.ParseInt(firstStr, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if size == "*" {
		return first, -1, true
	}
	total, err = strconv.ParseInt(size, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	return first, total, true
}

// GetSmall returns the whole of key, which must be at most max bytes long.
// A missing key gives an error wrapping [ErrNotFound].
func (s *Store) GetSmall(ctx context.Context, key string, max int64) ([]byte, error) {
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	body, info, _, err := s.core.GetObject(rctx, s.bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return nil, wrap(ctx, "get", key, err)
	}
	defer body.Close()
	if info.Size > max {
		return nil, fmt.Errorf("objstore: get %q: the object has %d bytes, more than the %d expected", key, info.Size, max)
	}
	data, err := io.ReadAll(io.LimitReader(body, max+1))
	if err != nil {
		return nil, wrap(ctx, "get", key, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("objstore: get %q: the object has more than the %d bytes expected", key, max)
	}
	return data, nil
}
