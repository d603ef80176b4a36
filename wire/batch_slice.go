package wire

import "encoding/binary"

// Stamp performs the server's in-place stamping (messages.md, "Batch
// checksum"; semantics.md §4.1): it writes partition_id (resolved at
// admission), base_offset (the partition's next offset) and base_timestamp
// (append time, µs), then recomputes batch_checksum over the stamped
// header. Frame bytes are never changed. The zero Batch is left alone.
func (v Batch) Stamp(partitionID, baseOffset, baseTimestamp uint64) {
	if len(v.b) < BatchHeaderSize {
		return
	}
	binary.LittleEndian.PutUint64(v.b[BatchOffPartitionID:], partitionID)
	binary.LittleEndian.PutUint64(v.b[BatchOffBaseOffset:], baseOffset)
	binary.LittleEndian.PutUint64(v.b[BatchOffBaseTimestamp:], baseTimestamp)
	binary.LittleEndian.PutUint64(v.b[BatchOffChecksum:], BatchChecksum(v.b))
}

// Select finds the frames a poll starting at fromOffset takes from this
// batch, at most maxCount of them: the first frame whose absolute offset
// (base_offset + offset_delta) is ≥ fromOffset and the contiguous run
// after it. It returns the frame index and the number of frames (count 0
// when nothing qualifies). Offsets within a batch ascend, so the run is
// the rest of the batch capped at maxCount.
func (v Batch) Select(fromOffset uint64, maxCount uint32) (first, count int) {
	base := v.BaseOffset()
	it := v.Messages()
	total := 0
	first = -1
	for m, ok := it.Next(); ok; m, ok = it.Next() {
		if first < 0 && base+uint64(m.OffsetDelta()) >= fromOffset {
			first = m.Index()
		}
		total++
	}
	if first < 0 || maxCount == 0 {
		return 0, 0
	}
	return first, int(min(uint64(total-first), uint64(maxCount)))
}

// AppendSlice appends to dst the poll record for frames [first,
// first+count) of the batch (messages.md, "Slicing"): the whole batch
// byte-for-byte when every frame is selected, otherwise a fresh header in
// which only batch_length (256 + slice length), message_count and
// batch_checksum (recomputed with the unchanged partition_id, base_offset,
// base_timestamp and origin_timestamp) differ, followed by the selected
// frames verbatim. Frames keep their offset_delta. Out-of-range arguments
// are clamped; an empty selection appends nothing.
func (v Batch) AppendSlice(dst []byte, first, count int) []byte {
	dst, frames := v.AppendSliceHeader(dst, first, count)
	return append(dst, frames...)
}

// AppendSliceHeader is AppendSlice without copying the frames: it appends
// only the slice's 256-byte header and returns the frame bytes that must
// follow it (a view into the batch), for vectored or file-backed writes.
func (v Batch) AppendSliceHeader(dst []byte, first, count int) (out []byte, frames []byte) {
	if len(v.b) < BatchHeaderSize || count <= 0 {
		return dst, nil
	}
	first = max(first, 0)
	blob := v.b[BatchHeaderSize:]
	start, end, n, total := -1, 0, 0, 0
	for off := 0; ; total++ {
		l, ok := frameLenAt(blob, off)
		if !ok {
			break
		}
		if total == first {
			start = off
		}
		if total >= first && n < count {
			end = off + l
			n++
		}
		off += l
	}
	if start < 0 || n == 0 {
		return dst, nil
	}
	frames = blob[start:end:end]
	if n == total && start == 0 && end == len(blob) {
		return append(dst, v.b[:BatchHeaderSize]...), frames
	}
	length := uint64(BatchHeaderSize + len(frames))
	var h batchHasher
	h.startFields(v.PartitionID(), v.BaseOffset(), v.BaseTimestamp(), v.OriginTimestamp(), length, uint32(n))
	for off := 0; off < len(frames); {
		l, ok := frameLenAt(frames, off)
		if !ok {
			break
		}
		h.write8(frames[off:])
		off += l
	}
	at := len(dst)
	dst = append(dst, v.b[:BatchHeaderSize]...)
	hdr := dst[at:]
	binary.LittleEndian.PutUint64(hdr[BatchOffLength:], length)
	binary.LittleEndian.PutUint32(hdr[BatchOffMessageCount:], uint32(n))
	binary.LittleEndian.PutUint64(hdr[BatchOffChecksum:], h.sum())
	return dst, frames
}
