package storage

import (
	"encoding/binary"
	"hash/crc64"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

const (
	benchMsgs    = 1000
	benchMsgSize = 1024
)

// benchFormat stamps like the wire batch costs: the real batch checksum
// hashes 44 header bytes plus 8 bytes per frame (the frame checksums), not
// the payload, so hashing the whole record (as fakeFormat does) would
// measure CRC speed instead of the log. Records it writes are not meant to
// be recovered.
type benchFormat struct{ fakeFormat }

func (benchFormat) Stamp(rec []byte, base, ts uint64) {
	binary.LittleEndian.PutUint64(rec[0:8], base)
	binary.LittleEndian.PutUint64(rec[8:16], ts)
	n := min(len(rec), fakeHeaderLen+8*int(binary.LittleEndian.Uint32(rec[20:24])))
	c := crc64.Update(0, crcTable, rec[:24])
	binary.LittleEndian.PutUint64(rec[24:32], crc64.Update(c, crcTable, rec[32:n]))
}

// benchRecord is one fake record the size of a batch of 1000 x 1 KB messages.
func benchRecord() []byte { return makeRecord(benchMsgs, benchMsgs*benchMsgSize, 1) }

func reportThroughput(b *testing.B, bytes, msgs int64) {
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(bytes)/s/1e6, "MB/s")
	b.ReportMetric(float64(msgs)/s, "msgs/s")
}

// BenchmarkAppend appends batches of 1000 x 1 KB: page cache with the
// default background-flush thresholds (1 MiB: a background fdatasync per
// batch), page cache with the flusher never triggered (the cost of the
// append path alone), and enforce_fsync (one appender, so one fdatasync
// per batch).
func BenchmarkAppend(b *testing.B) {
	for _, tc := range []struct {
		name  string
		fsync bool
		flush uint64 // FlushBytes and FlushMessages; 0 = defaults
		tmpfs bool   // on /dev/shm: the engine's CPU cost without a disk
	}{
		{"pagecache", false, 0, false},
		{"pagecache-noflush", false, 1 << 62, false},
		{"fsync", true, 0, false},
		{"tmpfs-pagecache", false, 0, true},
		{"tmpfs-fsync", true, 0, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			dir := b.TempDir()
			if tc.tmpfs {
				dir = fastTempDir(b)
			}
			p := mustOpen(b, dir, Options{Format: benchFormat{}, Fsync: tc.fsync, SegmentBytes: 256 << 20,
				FlushBytes: tc.flush, FlushMessages: tc.flush, FlushInterval: -1})
			rec := benchRecord()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := p.Append(rec, benchMsgs); err != nil {
					b.Fatal(err)
				}
			}
			reportThroughput(b, int64(b.N)*int64(len(rec)), int64(b.N)*benchMsgs)
			b.StopTimer()
			mustClose(b, p)
			os.RemoveAll(dir)
		})
	}
}

// BenchmarkAppendFsyncParallel shows group commit: concurrent appenders
// share fdatasyncs.
func BenchmarkAppendFsyncParallel(b *testing.B) {
	p := mustOpen(b, b.TempDir(), Options{Format: benchFormat{}, Fsync: true, SegmentBytes: 256 << 20})
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rec := makeRecord(10, 10*benchMsgSize, 1)
		for pb.Next() {
			if _, err := p.Append(rec, 10); err != nil {
				b.Error(err)
				return
			}
		}
	})
	reportThroughput(b, int64(b.N)*int64(10*benchMsgSize+fakeHeaderLen), int64(b.N)*10)
	b.ReportMetric(float64(b.N)/float64(p.syncRounds.Load()), "appends/sync")
	b.StopTimer()
	mustClose(b, p)
}

// BenchmarkAppendSmall appends single 1 KB messages (per-record overhead).
func BenchmarkAppendSmall(b *testing.B) {
	p := mustOpen(b, b.TempDir(), Options{Format: benchFormat{}, SegmentBytes: 256 << 20})
	rec := makeRecord(1, benchMsgSize, 1)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Append(rec, 1); err != nil {
			b.Fatal(err)
		}
	}
	reportThroughput(b, int64(b.N)*int64(len(rec)), int64(b.N))
	b.StopTimer()
	mustClose(b, p)
}

// fillForRead writes n batch records over several segments.
func fillForRead(b *testing.B, n int) *Partition {
	p := mustOpen(b, b.TempDir(), Options{Format: benchFormat{}, SegmentBytes: 64 << 20})
	rec := benchRecord()
	for range n {
		if _, err := p.Append(rec, benchMsgs); err != nil {
			b.Fatal(err)
		}
	}
	must(b, p.Flush())
	return p
}

// BenchmarkRead reads 1000-message batches back (from the page cache):
// pread into a caller buffer, and sendfile to a loopback TCP socket.
func BenchmarkRead(b *testing.B) {
	const records = 256
	p := fillForRead(b, records)
	defer mustClose(b, p)
	b.Run("pread", func(b *testing.B) {
		var r ReadResult
		buf := make([]byte, len(benchRecord()))
		b.ReportAllocs()
		var total int64
		i := 0
		for b.Loop() {
			off := uint64(i%records) * benchMsgs
			i++
			if err := p.Read(&r, off, benchMsgs, 0); err != nil {
				b.Fatal(err)
			}
			for _, e := range r.Extents {
				n, err := e.ReadAt(buf[:e.Len], 0)
				if err != nil {
					b.Fatal(err)
				}
				total += int64(n)
			}
		}
		r.Release()
		reportThroughput(b, total, total/int64(len(buf))*benchMsgs)
	})
	b.Run("sendfile", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		must(b, err)
		defer ln.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			io.Copy(io.Discard, c)
		}()
		c, err := net.Dial("tcp", ln.Addr().String())
		must(b, err)
		var r ReadResult
		b.ReportAllocs()
		var total int64
		i := 0
		for b.Loop() {
			off := uint64(i%records) * benchMsgs
			i++
			if err := p.Read(&r, off, benchMsgs, 0); err != nil {
				b.Fatal(err)
			}
			for _, e := range r.Extents {
				n, err := e.WriteTo(c)
				if err != nil {
					b.Fatal(err)
				}
				total += n
			}
		}
		r.Release()
		reportThroughput(b, total, total/int64(len(benchRecord()))*benchMsgs)
		c.Close()
		<-done
	})
}

// BenchmarkLookup finds the record holding an offset: in sealed segments
// (binary search over the .index file with pread) and in the active
// segment (in memory).
func BenchmarkLookup(b *testing.B) {
	p := mustOpen(b, b.TempDir(), Options{Format: benchFormat{}, SegmentBytes: 8 << 20, Clock: newFakeClock().Now})
	defer mustClose(b, p)
	rec := makeRecord(4, 100, 1)
	const records = 200_000 // about 26 MB over 4 segments, 4 messages each
	for range records {
		if _, err := p.Append(rec, 4); err != nil {
			b.Fatal(err)
		}
	}
	first := p.segs.Load().segs
	activeStart := first[len(first)-1].start
	for _, tc := range []struct {
		name   string
		lo, hi uint64
	}{{"sealed", 0, activeStart}, {"active", activeStart, records * 4}} {
		b.Run(tc.name, func(b *testing.B) {
			var r ReadResult
			b.ReportAllocs()
			x := uint64(12345)
			for b.Loop() {
				x = x*6364136223846793005 + 1442695040888963407
				off := tc.lo + (x>>11)%(tc.hi-tc.lo)
				if err := p.Read(&r, off, 1, 0); err != nil {
					b.Fatal(err)
				}
			}
			r.Release()
		})
	}
	b.Run("timestamp", func(b *testing.B) {
		b.ReportAllocs()
		ts := uint64(time.UnixMicro(1_700_000_000_000_000).UnixMicro())
		for b.Loop() {
			if _, _, err := p.OffsetForTimestamp(ts); err != nil {
				b.Fatal(err)
			}
		}
	})
}
