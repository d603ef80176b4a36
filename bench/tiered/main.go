// Command tiered measures tiered storage (docs/OPERATIONS.md, "Tiered
// storage") in one run against a real S3-compatible store (versitygw):
//
//  1. upload: with the store down, produce -gb GB into one partition
//     (segments of -segment bytes, every sealed one kept local), start the
//     store and time the catch-up of the uploads; then upload the same
//     segment files with a plain client of the same library, part size
//     and concurrency, to another prefix: the ratio is what the tier's
//     pipeline (verification before and after, manifest, index copy)
//     costs against the store's own speed for the same objects;
//  2. read: restart the server with -retention of local data, so every
//     older segment is dropped locally and the read cache starts empty,
//     drop the page cache (when allowed), and poll everything from offset
//     0: MB/s of the part served from the bucket (cold) against the part
//     served from local disk;
//  3. local disk: produce -gb GB again with the store up and -retention
//     of local data, sampling the partition directory's size; its
//     maximum against the retention plus one segment.
//
// It prints a table and writes it as JSON to -out.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/iggo-dev/iggo/client"
	"github.com/iggo-dev/iggo/internal/objstore"
	"github.com/iggo-dev/iggo/internal/tier"
	"github.com/iggo-dev/iggo/wire"
)

const (
	streamName = "tiered-bench"
	topicName  = "t"
	msgSize    = 1000
	batchMsgs  = 1000
	accessKey  = "tiered-bench"
	secretKey  = "tiered-bench-secret-0123456789"
	bucket     = "iggo-bench"
)

type options struct {
	iggo, versitygw, out, dir string
	gb                        float64
	segment, retention        int64
	concurrency               int
}

// result is the figures of one run.
type result struct {
	GB                       float64 `json:"gb"`
	SegmentBytes             int64   `json:"segment_bytes"`
	Segments                 int     `json:"segments"`
	UploadMBps               float64 `json:"upload_mb_s"`
	StoreMBps                float64 `json:"store_put_mb_s"`
	UploadRatio              float64 `json:"upload_ratio"`
	RemoteReadMBps           float64 `json:"remote_cold_read_mb_s"`
	LocalReadMBps            float64 `json:"local_read_mb_s"`
	RemoteReadMB             float64 `json:"remote_read_mb"`
	LocalReadMB              float64 `json:"local_read_mb"`
	ProduceMBps              float64 `json:"produce_mb_s"`
	MaxLocalMB               float64 `json:"max_local_mb"`
	LocalBoundMB             float64 `json:"local_bound_mb"`
	PageCacheDropped         bool    `json:"page_cache_dropped"`
	UploadConcurrency        int     `json:"upload_concurrency"`
	UploadCatchUpSeconds     float64 `json:"upload_catch_up_s"`
	StorePutSeconds          float64 `json:"store_put_s"`
	RemoteReadSeconds        float64 `json:"remote_read_s"`
	LocalReadSeconds         float64 `json:"local_read_s"`
	ProduceWithUploadSeconds float64 `json:"produce_s"`
}

func main() {
	var o options
	flag.StringVar(&o.iggo, "iggo", "iggo", "the iggo binary")
	flag.StringVar(&o.versitygw, "versitygw", "versitygw", "the versitygw binary")
	flag.StringVar(&o.out, "out", "bench/results/tiered.json", "result file")
	flag.StringVar(&o.dir, "dir", "", "working directory (default: a new temporary one, removed at the end)")
	flag.Float64Var(&o.gb, "gb", 2, "GB produced in each phase")
	flag.Int64Var(&o.segment, "segment", 64<<20, "segment size in bytes")
	flag.Int64Var(&o.retention, "retention", 200<<20, "local retention in bytes")
	flag.IntVar(&o.concurrency, "concurrency", 2, "upload concurrency (server and plain client)")
	flag.Parse()
	log.SetFlags(log.Ltime)
	if err := run(o); err != nil {
		log.Fatal(err)
	}
}

func run(o options) error {
	dir := o.dir
	if dir == "" {
		d, err := os.MkdirTemp("", "iggo-tiered-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	res := result{GB: o.gb, SegmentBytes: o.segment, UploadConcurrency: o.concurrency}
	store := &storeProc{bin: o.versitygw, root: filepath.Join(dir, "s3"), addr: freeAddr()}
	if err := os.MkdirAll(filepath.Join(store.root, bucket), 0o755); err != nil {
		return err
	}
	defer store.stop()
	data := filepath.Join(dir, "data")
	srv := &serverProc{bin: o.iggo, data: data, addr: freeAddr(), store: store.addr, prefix: "run1", concurrency: o.concurrency}
	defer srv.stop()

	// 1. Uploads: everything sealed piles up while the store is down.
	log.Printf("phase 1: produce %.1f GB with the store down", o.gb)
	if err := srv.start(1 << 40); err != nil {
		return err
	}
	if err := produce(srv.addr, o.gb, o.segment, nil); err != nil {
		return err
	}
	part := partitionDir(data)
	sealed, err := sealedSegments(part)
	if err != nil {
		return err
	}
	res.Segments = len(sealed)
	var total int64
	for _, s := range sealed {
		total += s.size
	}
	log.Printf("%d sealed segments, %.0f MB; starting the store", len(sealed), mb(total))
	if err := store.start(); err != nil {
		return err
	}
	// Timed from the first segment listed to the last (the wait for the
	// backoff after the outage is not upload time): every segment but
	// the first.
	if err := waitUploaded(part, 1, 2*time.Minute); err != nil {
		return err
	}
	t0 := time.Now()
	if err := waitUploaded(part, len(sealed), 10*time.Minute); err != nil {
		return err
	}
	res.UploadCatchUpSeconds = time.Since(t0).Seconds()
	res.UploadMBps = mb(total-sealed[0].size) / res.UploadCatchUpSeconds
	log.Printf("uploads of segments 2..%d took %.1f s: %.0f MB/s", len(sealed), res.UploadCatchUpSeconds, res.UploadMBps)
	secs, err := plainUpload(store.addr, sealed, o.concurrency)
	if err != nil {
		return err
	}
	res.StorePutSeconds = secs
	res.StoreMBps = mb(total) / secs
	res.UploadRatio = res.UploadMBps / res.StoreMBps
	log.Printf("plain client, same objects: %.1f s, %.0f MB/s (ratio %.2f)", secs, res.StoreMBps, res.UploadRatio)

	// 2. Reads: local copies beyond the retention dropped, cache empty.
	srv.stop()
	if err := srv.start(o.retention); err != nil {
		return err
	}
	if err := waitLocal(part, o.retention+o.segment, 2*time.Minute); err != nil {
		return err
	}
	res.PageCacheDropped = dropPageCache()
	localFirst, err := firstLocalOffset(part)
	if err != nil {
		return err
	}
	rem, loc, err := readAll(srv.addr, localFirst)
	if err != nil {
		return err
	}
	res.RemoteReadMB, res.RemoteReadSeconds = mb(rem.bytes), rem.secs
	res.LocalReadMB, res.LocalReadSeconds = mb(loc.bytes), loc.secs
	res.RemoteReadMBps = mb(rem.bytes) / rem.secs
	res.LocalReadMBps = mb(loc.bytes) / loc.secs
	log.Printf("read back: remote %.0f MB at %.0f MB/s (cold), local %.0f MB at %.0f MB/s", mb(rem.bytes), res.RemoteReadMBps, mb(loc.bytes), res.LocalReadMBps)

	// 3. Local disk while producing with the store up.
	srv.stop()
	srv.fresh, srv.prefix = true, "run2"
	if err := srv.start(o.retention); err != nil {
		return err
	}
	srv.fresh = false
	var maxLocal int64
	t1 := time.Now()
	if err := produce(srv.addr, o.gb, o.segment, func() {
		if n := dirBytes(partitionDir(data)); n > maxLocal {
			maxLocal = n
		}
	}); err != nil {
		return err
	}
	res.ProduceWithUploadSeconds = time.Since(t1).Seconds()
	res.ProduceMBps = o.gb * 1000 / res.ProduceWithUploadSeconds
	deadline := time.Now().Add(5 * time.Minute)
	for time.Now().Before(deadline) {
		n := dirBytes(partitionDir(data))
		maxLocal = max(maxLocal, n)
		if pending, _ := pendingSegments(partitionDir(data)); pending == 0 {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	res.MaxLocalMB = mb(maxLocal)
	res.LocalBoundMB = mb(o.retention + o.segment)
	log.Printf("producing %.1f GB with uploads: %.0f MB/s, local disk at most %.0f MB (retention + one segment: %.0f MB)", o.gb, res.ProduceMBps, res.MaxLocalMB, res.LocalBoundMB)

	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.out), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(o.out, append(b, '\n'), 0o644); err != nil {
		return err
	}
	fmt.Printf("\n| figure | value |\n|---|---|\n")
	fmt.Printf("| upload (tier, %d at once) | %.0f MB/s |\n", o.concurrency, res.UploadMBps)
	fmt.Printf("| plain PUT of the same objects | %.0f MB/s |\n", res.StoreMBps)
	fmt.Printf("| ratio | %.2f |\n", res.UploadRatio)
	fmt.Printf("| cold read from the bucket | %.0f MB/s (%.0f MB) |\n", res.RemoteReadMBps, res.RemoteReadMB)
	fmt.Printf("| read from local disk | %.0f MB/s (%.0f MB) |\n", res.LocalReadMBps, res.LocalReadMB)
	fmt.Printf("| produce with uploads | %.0f MB/s |\n", res.ProduceMBps)
	fmt.Printf("| local disk at most | %.0f MB (bound %.0f MB) |\n", res.MaxLocalMB, res.LocalBoundMB)
	fmt.Printf("| page cache dropped before reads | %v |\n", res.PageCacheDropped)
	return nil
}

func mb(n int64) float64 { return float64(n) / 1e6 }

// freeAddr returns a free loopback address.
func freeAddr() string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitPort waits until addr accepts connections.
func waitPort(addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s does not answer", addr)
}

// storeProc is the versitygw process.
type storeProc struct {
	bin, root, addr string
	cmd             *exec.Cmd
}

func (s *storeProc) start() error {
	s.cmd = exec.Command(s.bin, "--port", s.addr, "--access", accessKey, "--secret", secretKey,
		"--region", "us-east-1", "--quiet", "posix", s.root)
	s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start versitygw: %w", err)
	}
	return waitPort(s.addr, 20*time.Second)
}

func (s *storeProc) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

// serverProc is the iggo server process.
type serverProc struct {
	bin, data, addr, store string
	// prefix is the key prefix: a fresh data directory is a new owner,
	// which the prefix of the old one refuses.
	prefix      string
	concurrency int
	fresh       bool
	cmd         *exec.Cmd
}

func (s *serverProc) start(retention int64) error {
	args := []string{"server", "--data-path", s.data, "--tcp-address", s.addr, "--log-level", "warn"}
	if s.fresh {
		args = append(args, "--fresh")
	}
	s.cmd = exec.Command(s.bin, args...)
	s.cmd.Env = append(os.Environ(),
		"IGGY_QUIC_ADDRESS=127.0.0.1:0", "IGGY_WEBSOCKET_ADDRESS=127.0.0.1:0", "IGGY_HTTP_ENABLED=false",
		"IGGY_TIERED_STORAGE_ENABLED=true",
		"IGGY_TIERED_STORAGE_ENDPOINT=http://"+s.store,
		"IGGY_TIERED_STORAGE_BUCKET="+bucket,
		"IGGY_TIERED_STORAGE_PREFIX="+s.prefix,
		"IGGY_TIERED_STORAGE_ACCESS_KEY_ID="+accessKey,
		"IGGY_TIERED_STORAGE_SECRET_ACCESS_KEY="+secretKey,
		"IGGY_TIERED_STORAGE_LOCAL_RETENTION_SIZE="+strconv.FormatInt(retention, 10),
		"IGGY_TIERED_STORAGE_UPLOAD_CONCURRENCY="+strconv.Itoa(s.concurrency),
		"IGGY_TIERED_STORAGE_UPLOAD_INTERVAL=200ms",
	)
	s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
	if err := s.cmd.Start(); err != nil {
		return fmt.Errorf("start iggo: %w", err)
	}
	return waitPort(s.addr, 30*time.Second)
}

func (s *serverProc) stop() {
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		_ = s.cmd.Wait()
		s.cmd = nil
	}
}

func dial(addr string) (*client.Client, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	if _, err := c.Login(ctx, "iggy", "iggy"); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// produce creates the topic if needed and sends gb GB of 1000-byte
// messages in batches of 1000, calling sample after each batch.
func produce(addr string, gb float64, segment int64, sample func()) error {
	c, err := dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.CreateStream(ctx, streamName); err != nil && !strings.Contains(err.Error(), "exist") {
		return fmt.Errorf("create stream: %w", err)
	}
	if _, err := c.CreateTopic(ctx, wire.NamedID(streamName), topicName, 1,
		wire.Uint64Option(wire.TopicOptSegmentSize, uint64(segment))); err != nil && !strings.Contains(err.Error(), "exist") {
		return fmt.Errorf("create topic: %w", err)
	}
	msgs := make([]wire.Message, batchMsgs)
	payload := make([]byte, msgSize)
	for i := range payload {
		payload[i] = byte('a' + i%26)
	}
	batches := int(gb * 1e9 / (msgSize * batchMsgs))
	for b := range batches {
		for i := range msgs {
			msgs[i] = wire.Message{ID: wire.Uint128{Hi: uint64(b + 1), Lo: uint64(i + 1)}, Payload: payload}
		}
		if _, err := c.SendMessages(ctx, wire.NamedID(streamName), wire.NamedID(topicName), wire.PartitioningByID(0), msgs); err != nil {
			return fmt.Errorf("send batch %d: %w", b, err)
		}
		if sample != nil {
			sample()
		}
	}
	return nil
}

// span is the bytes and seconds of one part of a read.
type span struct {
	bytes int64
	secs  float64
}

// readAll polls the partition from offset 0 to its end: the part before
// localFirst comes from the bucket, the rest from local disk.
func readAll(addr string, localFirst uint64) (remote, local span, err error) {
	c, err := dial(addr)
	if err != nil {
		return span{}, span{}, err
	}
	defer c.Close()
	ctx := context.Background()
	var pb client.PollBuffer
	req := wire.PollMessages{Consumer: wire.SingleConsumer(wire.NumericID(1)), StreamID: wire.NamedID(streamName),
		TopicID: wire.NamedID(topicName), Partition: wire.SomePartition(0), Count: batchMsgs}
	var next uint64
	start := time.Now()
	phaseStart := start
	for {
		req.Strategy = wire.OffsetStrategy(next)
		p, err := c.PollMessagesBuffer(ctx, req, &pb)
		if err != nil {
			return remote, local, fmt.Errorf("poll at %d: %w", next, err)
		}
		if p.Count == 0 {
			break
		}
		it := p.Messages()
		for m, ok := it.Next(); ok; m, ok = it.Next() {
			if m.Offset != next {
				return remote, local, fmt.Errorf("offset %d where %d was expected", m.Offset, next)
			}
			if len(m.Payload) != msgSize {
				return remote, local, fmt.Errorf("offset %d: payload of %d bytes", m.Offset, len(m.Payload))
			}
			next++
		}
		n := int64(len(p.Records))
		if next <= localFirst {
			remote.bytes += n
		} else {
			local.bytes += n
		}
		if next == localFirst {
			remote.secs = time.Since(phaseStart).Seconds()
			phaseStart = time.Now()
		}
		if next > p.CurrentOffset {
			break
		}
	}
	local.secs = time.Since(phaseStart).Seconds()
	if remote.secs == 0 {
		return remote, local, errors.New("the read never crossed from the bucket to local disk")
	}
	return remote, local, nil
}

// segmentFile is a local segment log.
type segmentFile struct {
	start     uint64
	path, idx string
	size      int64
}

// partitionDir finds the one partition directory under data.
func partitionDir(data string) string {
	var found string
	_ = filepath.WalkDir(filepath.Join(data, "streams"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && filepath.Base(filepath.Dir(path)) == "partitions" {
			found = path
		}
		return nil
	})
	return found
}

// segments lists the partition's local segment logs, oldest first.
func segments(dir string) ([]segmentFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []segmentFile
	for _, e := range ents {
		stem, ok := strings.CutSuffix(e.Name(), ".log")
		if !ok || len(stem) != 20 {
			continue
		}
		start, err := strconv.ParseUint(stem, 10, 64)
		if err != nil {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return nil, err
		}
		out = append(out, segmentFile{start: start, path: filepath.Join(dir, e.Name()), idx: filepath.Join(dir, stem+".index"), size: fi.Size()})
	}
	return out, nil
}

// sealedSegments are the local segments but the newest (active) one.
func sealedSegments(dir string) ([]segmentFile, error) {
	s, err := segments(dir)
	if err != nil || len(s) == 0 {
		return nil, err
	}
	return s[:len(s)-1], nil
}

// pendingSegments counts sealed local segments the manifest does not list.
func pendingSegments(dir string) (int, error) {
	s, err := sealedSegments(dir)
	if err != nil {
		return 0, err
	}
	m, err := tier.ReadManifest(dir)
	if err != nil {
		return 0, err
	}
	listed := map[uint64]bool{}
	for _, r := range m.Segments {
		listed[r.Start] = true
	}
	n := 0
	for _, f := range s {
		if !listed[f.start] {
			n++
		}
	}
	return n, nil
}

// waitUploaded waits until the manifest lists n segments.
func waitUploaded(dir string, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if m, err := tier.ReadManifest(dir); err == nil && len(m.Segments) >= n {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("uploads of %d segments did not finish in %s", n, limit)
}

// waitLocal waits until the local segment logs hold at most limit bytes.
func waitLocal(dir string, limit int64, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if n := logBytes(dir); n <= limit {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("local data did not shrink to %d bytes", limit)
}

func logBytes(dir string) int64 {
	s, _ := segments(dir)
	var n int64
	for _, f := range s {
		n += f.size
	}
	return n
}

// dirBytes is the size of every file under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

func firstLocalOffset(dir string) (uint64, error) {
	s, err := segments(dir)
	if err != nil || len(s) == 0 {
		return 0, fmt.Errorf("no local segment in %s: %v", dir, err)
	}
	return s[0].start, nil
}

// plainUpload puts the segment files (log and index) with the S3
// library alone (its own PutObject, same part size, no checksums or
// verification of ours), concurrency files at a time, and returns the
// seconds.
func plainUpload(addr string, segs []segmentFile, concurrency int) (float64, error) {
	st, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""),
		Region: "us-east-1", BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return 0, err
	}
	sem := make(chan struct{}, concurrency)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	start := time.Now()
	for _, s := range segs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			for _, path := range []string{s.idx, s.path} {
				if err := putFile(st, path); err != nil {
					mu.Lock()
					first = errors.Join(first, err)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start).Seconds(), first
}

func putFile(st *minio.Client, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	_, err = st.PutObject(context.Background(), bucket, "plain/"+filepath.Base(path), f, fi.Size(),
		minio.PutObjectOptions{PartSize: objstore.DefaultPartSize, ContentType: "application/octet-stream"})
	return err
}
