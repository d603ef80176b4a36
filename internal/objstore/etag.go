package objstore

import (
	"crypto/md5" //nolint:gosec // S3 ETags are MD5 sums
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
)

// part is one piece of an upload: bytes [off, off+size) of the source.
type part struct {
	number int // 1-based
	off    int64
	size   int64
}

// layout splits size bytes into the parts they are uploaded as: one part
// when size <= partSize (a plain PUT), else parts of partSize bytes with a
// shorter last one.
func layout(size, partSize int64) ([]part, error) {
	if size < 0 {
		return nil, fmt.Errorf("negative size %d", size)
	}
	if partSize <= 0 {
		return nil, fmt.Errorf("part size %d is not positive", partSize)
	}
	if size <= partSize {
		return []part{{number: 1, off: 0, size: size}}, nil
	}
	n := (size + partSize - 1) / partSize
	if n > MaxParts {
		return nil, fmt.Errorf("%d bytes need %d parts of %d bytes, more than the %d S3 allows; raise tiered_storage.part_size", size, n, partSize, MaxParts)
	}
	parts := make([]part, n)
	for i := range parts {
		off := int64(i) * partSize
		parts[i] = part{number: i + 1, off: off, size: min(partSize, size-off)}
	}
	return parts, nil
}

// md5Of returns the MD5 sum of bytes [off, off+size) of r.
func md5Of(r io.ReaderAt, off, size int64) ([md5.Size]byte, error) {
	var sum [md5.Size]byte
	h := md5.New() //nolint:gosec // S3 ETags are MD5 sums
	n, err := io.Copy(h, io.NewSectionReader(r, off, size))
	if err != nil {
		return sum, fmt.Errorf("read bytes %d-%d: %w", off, off+size, err)
	}
	if n != size {
		return sum, fmt.Errorf("read bytes %d-%d: %w after %d bytes", off, off+size, io.ErrUnexpectedEOF, n)
	}
	h.Sum(sum[:0])
	return sum, nil
}

// singleETag is the ETag S3 gives an object stored with one PUT: the hex
// MD5 of its bytes.
func singleETag(sum [md5.Size]byte) string {
	return hex.EncodeToString(sum[:])
}

// multipartETag is the ETag S3 gives an object completed from parts with
// the given MD5 sums: the hex MD5 of the concatenated binary sums, "-", and
// the number of parts.
func multipartETag(sums [][md5.Size]byte) string {
	h := md5.New() //nolint:gosec // S3 ETags are MD5 sums
	for _, s := range sums {
		h.Write(s[:])
	}
	return hex.EncodeToString(h.Sum(nil)) + "-" + strconv.Itoa(len(sums))
}

// ComputeETag returns the ETag an S3 store gives the size bytes of r
// uploaded by [Store.Put] with the given part size ([Store.PartSize]): the
// hex MD5 when size <= partSize, else the multipart form
// hex(MD5(MD5(part 1) || ... || MD5(part N))) + "-N". Comparing it with
// [Store.Head] tells whether a local file is the stored object.
func ComputeETag(r io.ReaderAt, size, partSize int64) (string, error) {
	parts, err := layout(size, partSize)
	if err != nil {
		return "", fmt.Errorf("objstore: etag: %w", err)
	}
	sums := make([][md5.Size]byte, len(parts))
	for i, p := range parts {
		if sums[i], err = md5Of(r, p.off, p.size); err != nil {
			return "", fmt.Errorf("objstore: etag: %w", err)
		}
	}
	if size <= partSize {
		return singleETag(sums[0]), nil
	}
	return multipartETag(sums), nil
}
