package objstore

import (
	"context"
	"crypto/md5" //nolint:gosec // S3 ETags are MD5 sums
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
)

// Put uploads the size bytes of r under key with the user metadata meta
// (sent as x-amz-meta-* headers; keys are lower-cased) and returns the
// stored object's Info once verified.
//
// Objects up to [Store.PartSize] bytes go in one PUT, larger ones in a
// multipart upload of PartSize parts with at most Config.Concurrency parts
// in flight. r is read twice per part: once to compute the MD5, once to
// send; the MD5 goes along as Content-MD5, so the store rejects a part
// whose bytes changed in between. After the upload a HEAD must report size
// bytes and the ETag [ComputeETag] gives for the bytes sent, or Put returns
// an error wrapping [ErrVerify]. A failed multipart upload is aborted.
//
// Putting an existing key overwrites it.
func (s *Store) Put(ctx context.Context, key string, r io.ReaderAt, size int64, meta map[string]string) (Info, error) {
	return s.put(ctx, key, r, size, meta, false)
}

// put is Put; with ifAbsent the upload is a single PUT with
// "If-None-Match: *" that fails with errExists when key exists.
func (s *Store) put(ctx context.Context, key string, r io.ReaderAt, size int64, meta map[string]string, ifAbsent bool) (Info, error) {
	if key == "" {
		return Info{}, errors.New("objstore: put: empty key")
	}
	parts, err := layout(size, s.partSize)
	if err != nil {
		return Info{}, fmt.Errorf("objstore: put %q: %w", key, err)
	}
	userMeta, err := userMetadata(meta)
	if err != nil {
		return Info{}, fmt.Errorf("objstore: put %q: %w", key, err)
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream", UserMetadata: userMeta}
	var etag string
	if size <= s.partSize {
		if ifAbsent {
			opts.SetMatchETagExcept("*")
		}
		etag, err = s.putSingle(ctx, key, r, size, opts)
	} else {
		if ifAbsent {
			return Info{}, fmt.Errorf("objstore: put %q: a conditional put must fit in one part", key)
		}
		etag, err = s.putMultipart(ctx, key, r, parts, opts)
	}
	if err != nil {
		return Info{}, err
	}
	return s.verify(ctx, key, size, etag)
}

// putSingle uploads the object in one PUT and returns its local ETag.
func (s *Store) putSingle(ctx context.Context, key string, r io.ReaderAt, size int64, opts minio.PutObjectOptions) (string, error) {
	sum, err := md5Of(r, 0, size)
	if err != nil {
		return "", fmt.Errorf("objstore: put %q: %w", key, err)
	}
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	up, err := s.core.PutObject(rctx, s.bucket, key, io.NewSectionReader(r, 0, size), size,
		base64.StdEncoding.EncodeToString(sum[:]), "", opts)
	if err != nil {
		if code, _ := s3Code(err); code == "PreconditionFailed" {
			return "", fmt.Errorf("objstore: put %q: %w", key, errExists)
		}
		return "", wrap(ctx, "put", key, err)
	}
	want := singleETag(sum)
	if up.ETag != want {
		return "", fmt.Errorf("objstore: put %q: %w: the store answered ETag %q, the bytes sent have MD5 %s", key, ErrVerify, up.ETag, want)
	}
	return want, nil
}

// putMultipart uploads the object in parts and returns its local ETag. On
// failure it aborts the upload.
func (s *Store) putMultipart(ctx context.Context, key string, r io.ReaderAt, parts []part, opts minio.PutObjectOptions) (etag string, err error) {
	rctx, cancel := s.requestContext(ctx)
	uploadID, err := s.core.NewMultipartUpload(rctx, s.bucket, key, opts)
	cancel()
	if err != nil {
		return "", wrap(ctx, "put (start multipart upload)", key, err)
	}
	defer func() {
		if err != nil {
			if aerr := s.abort(ctx, key, uploadID); aerr != nil {
				err = errors.Join(err, aerr)
			}
		}
	}()
	sums, completed, err := s.uploadParts(ctx, key, uploadID, r, parts)
	if err != nil {
		return "", err
	}
	rctx, cancel = s.requestContext(ctx)
	defer cancel()
	up, err := s.core.CompleteMultipartUpload(rctx, s.bucket, key, uploadID, completed, minio.PutObjectOptions{})
	if err != nil {
		return "", wrap(ctx, "put (complete multipart upload)", key, err)
	}
	want := multipartETag(sums)
	if up.ETag != want {
		return "", fmt.Errorf("objstore: put %q: %w: the store answered ETag %q for the completed upload, the bytes sent give %s", key, ErrVerify, up.ETag, want)
	}
	return want, nil
}

// uploadParts uploads parts with at most s.concurrency in flight and
// returns their MD5 sums and the list CompleteMultipartUpload needs, both
// in part order. The first failure cancels the rest.
func (s *Store) uploadParts(ctx context.Context, key, uploadID string, r io.ReaderAt, parts []part) ([][md5.Size]byte, []minio.CompletePart, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sums := make([][md5.Size]byte, len(parts))
	completed := make([]minio.CompletePart, len(parts))
	var (
		once     sync.Once
		firstErr error
		wg       sync.WaitGroup
	)
	next := make(chan part)
	for range min(s.concurrency, len(parts)) {
		wg.Go(func() {
			for p := range next {
				if ctx.Err() != nil {
					continue
				}
				sum, cp, err := s.uploadPart(ctx, key, uploadID, r, p)
				if err != nil {
					once.Do(func() { firstErr = err; cancel() })
					continue
				}
				sums[p.number-1], completed[p.number-1] = sum, cp
			}
		})
	}
feed:
	for _, p := range parts {
		select {
		case next <- p:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("objstore: put %q: %w", key, err)
	}
	return sums, completed, nil
}

// uploadPart hashes and uploads one part and checks the ETag the store
// answers against the local MD5.
func (s *Store) uploadPart(ctx context.Context, key, uploadID string, r io.ReaderAt, p part) ([md5.Size]byte, minio.CompletePart, error) {
	sum, err := md5Of(r, p.off, p.size)
	if err != nil {
		return sum, minio.CompletePart{}, fmt.Errorf("objstore: put %q part %d: %w", key, p.number, err)
	}
	rctx, cancel := s.requestContext(ctx)
	defer cancel()
	op, err := s.core.PutObjectPart(rctx, s.bucket, key, uploadID, p.number,
		io.NewSectionReader(r, p.off, p.size), p.size,
		minio.PutObjectPartOptions{Md5Base64: base64.StdEncoding.EncodeToString(sum[:])})
	if err != nil {
		return sum, minio.CompletePart{}, wrap(ctx, fmt.Sprintf("put part %d of", p.number), key, err)
	}
	got, want := strings.Trim(op.ETag, `"`), singleETag(sum)
	if got != want {
		return sum, minio.CompletePart{}, fmt.Errorf("objstore: put %q part %d: %w: the store answered ETag %q, the bytes sent have MD5 %s", key, p.number, ErrVerify, got, want)
	}
	return sum, minio.CompletePart{PartNumber: p.number, ETag: want}, nil
}

// abort aborts a multipart upload with one attempt, even when ctx is done,
// so that its parts do not linger in the bucket.
func (s *Store) abort(ctx context.Context, key, uploadID string) error {
	actx, cancel := s.requestContext(context.WithoutCancel(ctx))
	defer cancel()
	err := minio.Core{Client: s.probe}.AbortMultipartUpload(actx, s.bucket, key, uploadID)
	if err != nil {
		if code, _ := s3Code(err); code == "NoSuchUpload" {
			return nil
		}
		return fmt.Errorf("objstore: abort multipart upload of %q (upload id %s): %w", key, uploadID, err)
	}
	return nil
}

// verify checks with a HEAD that key holds size bytes with the given ETag.
func (s *Store) verify(ctx context.Context, key string, size int64, etag string) (Info, error) {
	info, err := s.head(ctx, key)
	if err != nil {
		return Info{}, wrap(ctx, "put (verify)", key, err)
	}
	if info.Size != size || info.ETag != etag {
		return Info{}, fmt.Errorf("objstore: put %q: %w: the store holds %d bytes with ETag %q, sent %d bytes with ETag %q",
			key, ErrVerify, info.Size, info.ETag, size, etag)
	}
	return info, nil
}

// userMetadata checks meta and returns it with lower-case keys carrying
// the x-amz-meta- prefix, so that no key is taken for a standard header.
func userMetadata(meta map[string]string) (map[string]string, error) {
	if len(meta) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(meta))
	for k, v := range meta {
		name := strings.TrimPrefix(strings.ToLower(k), metaPrefix)
		if name == "" || strings.IndexFunc(name, func(c rune) bool {
			return (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_'
		}) >= 0 {
			return nil, fmt.Errorf("metadata key %q: use letters, digits, '-' and '_'", k)
		}
		if strings.IndexFunc(v, func(c rune) bool { return c < ' ' || c > '~' }) >= 0 {
			return nil, fmt.Errorf("metadata %q: the value must be printable ASCII", k)
		}
		if _, dup := out[metaPrefix+name]; dup {
			return nil, fmt.Errorf("metadata key %q: given twice (keys are case-insensitive)", k)
		}
		out[metaPrefix+name] = v
	}
	return out, nil
}

// metaPrefix starts the header of each user metadata entry.
const metaPrefix = "x-amz-meta-"
