package objstore

import (
	"context"
	"time"
)

// AbortIncomplete aborts the multipart uploads under the full key prefix
// that were started before before: the parts an upload cut short by a
// crash or an outage left in the bucket, which S3 keeps (and bills) until
// they are aborted. It returns how many it aborted.
func (s *Store) AbortIncomplete(ctx context.Context, prefix string, before time.Time) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the listing if it is left early
	n := 0
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, prefix, true) {
		if u.Err != nil {
			return n, wrap(ctx, "list incomplete uploads", prefix, u.Err)
		}
		if !u.Initiated.Before(before) {
			continue
		}
		rctx, rcancel := s.requestContext(ctx)
		err := s.core.AbortMultipartUpload(rctx, s.bucket, u.Key, u.UploadID)
		rcancel()
		if code, _ := s3Code(err); err != nil && code != "NoSuchUpload" {
			return n, wrap(ctx, "abort incomplete upload", u.Key, err)
		}
		n++
	}
	return n, nil
}
