package objstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/minio/minio-go/v7"
)

// Object is one entry of a listing.
type Object struct {
	// Key is the object's full key.
	Key string
	// Size is the object's length in bytes.
	Size int64
}

// listPageSize is the number of keys asked for per list request, the most
// S3 returns.
const listPageSize = 1000

// List returns every object under prefix, a full key prefix such as
// s.Key("streams/1/"), in key order. Each page of the listing is one
// request bounded by the timeout.
func (s *Store) List(ctx context.Context, prefix string) ([]Object, error) {
	var all []Object
	after := ""
	for {
		page, more, err := s.listPage(ctx, prefix, after)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if !more {
			break
		}
		after = page[len(page)-1].Key
	}
	slices.SortFunc(all, func(a, b Object) int { return strings.Compare(a.Key, b.Key) })
	return all, nil
}

// listPage returns up to listPageSize objects under prefix with keys after
// after, and whether more may follow.
func (s *Store) listPage(ctx context.Context, prefix, after string) (page []Object, more bool, err error) {
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	opts := minio.ListObjectsOptions{
		Prefix:     prefix,
		Recursive:  true,
		StartAfter: after,
		MaxKeys:    listPageSize,
	}
	// The iterator requests the next page only when this one is used up,
	// so stopping after listPageSize objects keeps this to one request
	// (two if the store sends a short page that is not the last).
	for oi := range s.client.ListObjectsIter(rctx, s.bucket, opts) {
		if oi.Err != nil {
			return nil, false, wrap(ctx, "list", prefix, oi.Err)
		}
		page = append(page, Object{Key: oi.Key, Size: oi.Size})
		if len(page) == listPageSize {
			return page, true, nil
		}
	}
	if err := rctx.Err(); err != nil {
		return nil, false, wrap(ctx, "list", prefix, fmt.Errorf("listing stopped: %w", err))
	}
	return page, false, nil
}
