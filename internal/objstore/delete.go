package objstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Delete removes key. A missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	err := s.client.RemoveObject(rctx, s.bucket, key, minio.RemoveObjectOptions{})
	if err != nil && !errors.Is(classify(ctx, err), ErrNotFound) {
		return wrap(ctx, "delete", key, err)
	}
	return nil
}

// DeletePrefix removes every object under prefix, a full key prefix such as
// s.Key("streams/1/"), and returns how many it removed. The prefix must lie
// inside the store's own prefix and must not be empty, so that a mistake
// cannot empty the bucket. Objects are removed a page at a time, with one
// multi-object delete request per page.
func (s *Store) DeletePrefix(ctx context.Context, prefix string) (int, error) {
	if prefix == "" {
		return 0, errors.New("objstore: delete prefix: refusing an empty prefix, which would empty the bucket")
	}
	if s.prefix != "" && !strings.HasPrefix(prefix, s.prefix+"/") {
		return 0, fmt.Errorf("objstore: delete prefix %q: outside the store prefix %q", prefix, s.prefix+"/")
	}
	deleted := 0
	after := ""
	for {
		page, more, err := s.listPage(ctx, prefix, after)
		if err != nil {
			return deleted, err
		}
		n, err := s.deleteObjects(ctx, page)
		deleted += n
		if err != nil {
			return deleted, fmt.Errorf("objstore: delete prefix %q: %w", prefix, err)
		}
		if !more {
			return deleted, nil
		}
		after = page[len(page)-1].Key
	}
}

// deleteObjects removes objs with one multi-object delete request and
// returns how many were removed.
func (s *Store) deleteObjects(ctx context.Context, objs []Object) (int, error) {
	if len(objs) == 0 {
		return 0, nil
	}
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	in := make(chan minio.ObjectInfo, len(objs))
	for _, o := range objs {
		in <- minio.ObjectInfo{Key: o.Key}
	}
	close(in)
	deleted := 0
	var errs []error
	for res := range s.client.RemoveObjectsWithResult(rctx, s.bucket, in, minio.RemoveObjectsOptions{}) {
		switch {
		case res.Err == nil:
			deleted++
		case errors.Is(classify(ctx, res.Err), ErrNotFound):
		default:
			errs = append(errs, wrap(ctx, "delete", res.ObjectName, res.Err))
		}
	}
	switch len(errs) {
	case 0:
	case 1:
		return deleted, errs[0]
	default:
		return deleted, fmt.Errorf("%w (and %d more objects not deleted)", errs[0], len(errs)-1)
	}
	return deleted, nil
}
