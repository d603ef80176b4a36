package wire

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// sysHex decodes a hex string that may contain spaces (test fixtures).
func sysHex(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}

// sysRoundTrip encodes in, checks that the bytes decode into fresh equal to
// in and re-encode to the same bytes, and returns the encoding.
func sysRoundTrip[B Body](t *testing.T, in, fresh B) []byte {
	t.Helper()
	enc := in.AppendTo(nil)
	if err := fresh.Decode(enc); err != nil {
		t.Fatalf("decode %x: %v", enc, err)
	}
	if d := cmp.Diff(in, fresh, cmpopts.EquateEmpty(), cmpopts.EquateNaNs()); d != "" {
		t.Errorf("round trip mismatch (-in +decoded):\n%s", d)
	}
	if again := fresh.AppendTo(nil); !bytes.Equal(again, enc) {
		t.Errorf("re-encode:\n got %x\nwant %x", again, enc)
	}
	// AppendTo appends: a prefix in dst is kept.
	if pre := in.AppendTo([]byte{0xee}); pre[0] != 0xee || !bytes.Equal(pre[1:], enc) {
		t.Errorf("AppendTo does not append after existing bytes")
	}
	return enc
}

// sysDecodeErrCase is one body a decoder must refuse.
type sysDecodeErrCase struct {
	name string
	body []byte
	dec  func([]byte) error
	want error
}

func sysRunDecodeErrCases(t *testing.T, cases []sysDecodeErrCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if want == nil {
				want = ErrInvalidCommand
			}
			if err := tc.dec(tc.body); !errors.Is(err, want) {
				t.Errorf("decode %x: err = %v, want %v", tc.body, err, want)
			}
		})
	}
}

// sysValidateCase is one value whose Validate result is checked.
type sysValidateCase struct {
	name     string
	validate func() error
	want     error // nil = valid
}

func sysRunValidateCases(t *testing.T, cases []sysValidateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.validate()
			if tc.want == nil && err != nil {
				t.Errorf("Validate = %v, want nil", err)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
}

var sampleStats = map[string]Stats{
	"zero": {},
	"full": {
		ProcessID: 4242, CPUUsage: 12.5, TotalCPUUsage: 37.25,
		MemoryUsage: 1 << 30, TotalMemory: 16 << 30, AvailableMemory: 8 << 30,
		RunTime: 3_600_000_000, StartTime: 1_700_000_000_000_000,
		ReadBytes: 123, WrittenBytes: 456, MessagesSizeBytes: 789,
		StreamsCount: 3, TopicsCount: 7, PartitionsCount: 21, SegmentsCount: 42,
		MessagesCount: 1_000_000, ClientsCount: 5, ConsumerGroupsCount: 2,
		Hostname: "node-1", OSName: "Linux", OSVersion: "Debian 13", KernelVersion: "6.12.0",
		ServerVersion: "0.11.0", ServerSemver: 11264,
		CacheMetrics: []CacheMetric{
			{StreamID: 1, TopicID: 2, PartitionID: 0, Hits: 10, Misses: 2, HitRatio: 0.8333},
			{StreamID: 1, TopicID: 2, PartitionID: 1, Hits: 0, Misses: 0, HitRatio: 0},
		},
		ThreadsCount: 16, FreeDiskSpace: 100 << 30, TotalDiskSpace: 500 << 30,
	},
	"unicode and NaN": {Hostname: "hôte-ü", CPUUsage: float32(math.NaN()), TotalCPUUsage: float32(math.Inf(1))},
}

func TestStatsRoundTrip(t *testing.T) {
	for name, s := range sampleStats {
		t.Run(name, func(t *testing.T) {
			if err := s.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			sysRoundTrip(t, &s, &Stats{})
		})
	}
}

// TestStatsLayout pins the byte offsets of commands.md §10 against an
// encoding built independently, field by field.
func TestStatsLayout(t *testing.T) {
	s := sampleStats["full"]
	le := binary.LittleEndian
	var w []byte
	w = le.AppendUint32(w, s.ProcessID)
	w = le.AppendUint32(w, math.Float32bits(s.CPUUsage))
	w = le.AppendUint32(w, math.Float32bits(s.TotalCPUUsage))
	for _, v := range []uint64{s.MemoryUsage, s.TotalMemory, s.AvailableMemory, s.RunTime, s.StartTime, s.ReadBytes, s.WrittenBytes, s.MessagesSizeBytes} {
		w = le.AppendUint64(w, v)
	}
	for _, v := range []uint32{s.StreamsCount, s.TopicsCount, s.PartitionsCount, s.SegmentsCount} {
		w = le.AppendUint32(w, v)
	}
	w = le.AppendUint64(w, s.MessagesCount)
	w = le.AppendUint32(w, s.ClientsCount)
	w = le.AppendUint32(w, s.ConsumerGroupsCount)
	if len(w) != statsFixedLen {
		t.Fatalf("fixed block is %d bytes, commands.md says 108", len(w))
	}
	for _, str := range []string{s.Hostname, s.OSName, s.OSVersion, s.KernelVersion, s.ServerVersion} {
		w = le.AppendUint32(w, uint32(len(str)))
		w = append(w, str...)
	}
	w = le.AppendUint32(w, s.ServerSemver)
	w = le.AppendUint32(w, uint32(len(s.CacheMetrics)))
	for _, m := range s.CacheMetrics {
		before := len(w)
		w = le.AppendUint32(w, m.StreamID)
		w = le.AppendUint32(w, m.TopicID)
		w = le.AppendUint32(w, m.PartitionID)
		w = le.AppendUint64(w, m.Hits)
		w = le.AppendUint64(w, m.Misses)
		w = le.AppendUint32(w, math.Float32bits(m.HitRatio))
		if len(w)-before != cacheMetricLen {
			t.Fatalf("cache metric is %d bytes", len(w)-before)
		}
	}
	w = le.AppendUint32(w, s.ThreadsCount)
	w = le.AppendUint64(w, s.FreeDiskSpace)
	w = le.AppendUint64(w, s.TotalDiskSpace)
	if got := s.AppendTo(nil); !bytes.Equal(got, w) {
		t.Errorf("encode:\n got %x\nwant %x", got, w)
	}
	if got := binary.LittleEndian.Uint32(w[108:]); got != uint32(len(s.Hostname)) {
		t.Errorf("hostname length at offset 108 = %d", got)
	}
}

func TestStatsDecodeErrors(t *testing.T) {
	full := sampleStats["full"]
	enc := full.AppendTo(nil)
	// Offset of the cache-metrics count: after the strings and the semver.
	countOff := len(enc) - 4 - 8 - 8 - 2*cacheMetricLen - 4
	hugeCount := bytes.Clone(enc)
	binary.LittleEndian.PutUint32(hugeCount[countOff:], math.MaxUint32)
	shortCount := bytes.Clone(enc)
	binary.LittleEndian.PutUint32(shortCount[countOff:], 3)
	longHost := bytes.Clone(enc)
	binary.LittleEndian.PutUint32(longHost[108:], MaxSystemStringLen+1)
	badUTF8 := bytes.Clone(enc)
	badUTF8[112] = 0xff // first hostname byte
	dec := (&Stats{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "fixed block only", body: enc[:statsFixedLen], dec: dec},
		{name: "truncated tail", body: enc[:len(enc)-1], dec: dec},
		{name: "trailing byte", body: append(bytes.Clone(enc), 0), dec: dec},
		{name: "cache count beyond body", body: hugeCount, dec: dec},
		{name: "cache count off by one", body: shortCount, dec: dec},
		{name: "string over limit", body: longHost, dec: dec},
		{name: "string not utf8", body: badUTF8, dec: dec},
	})
}

func TestStatsValidate(t *testing.T) {
	sysRunValidateCases(t, []sysValidateCase{
		{name: "ok", validate: func() error { s := sampleStats["full"]; return s.Validate() }},
		{name: "long hostname", validate: func() error {
			s := Stats{Hostname: strings.Repeat("h", MaxSystemStringLen+1)}
			return s.Validate()
		}, want: ErrInvalidCommand},
		{name: "kernel not utf8", validate: func() error { s := Stats{KernelVersion: "\xff"}; return s.Validate() }, want: ErrInvalidCommand},
	})
}

var sampleClusterMetadata = map[string]ClusterMetadata{
	"no nodes": {Name: "single-node"},
	"single node": {Name: "single-node", Nodes: []ClusterNode{
		{Name: "iggy-node", IP: "127.0.0.1", TCPPort: 8090, QUICPort: 8080, HTTPPort: 3000, WebSocketPort: 8092, Role: ClusterLeader, Status: ClusterNodeHealthy},
	}},
	"three nodes": {Name: "iggy-cluster", Nodes: []ClusterNode{
		{Name: "a", IP: "10.0.0.1", TCPPort: 1, Role: ClusterLeader},
		{Name: "b", IP: "::1", TCPPort: 2, Role: ClusterFollower, Status: ClusterNodeStarting},
		{Name: "", IP: "", Role: 9, Status: ClusterNodeUnknown + 1},
	}},
	"max nodes": {Name: "big", Nodes: make([]ClusterNode, MaxClusterNodes)},
}

func TestClusterMetadataRoundTrip(t *testing.T) {
	for name, m := range sampleClusterMetadata {
		t.Run(name, func(t *testing.T) {
			if err := m.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			sysRoundTrip(t, &m, &ClusterMetadata{})
		})
	}
}

func TestClusterMetadataLayout(t *testing.T) {
	m := ClusterMetadata{Name: "c", Nodes: []ClusterNode{{Name: "n", IP: "ip", TCPPort: 0x0102, QUICPort: 0x0304, HTTPPort: 0x0506, WebSocketPort: 0x0708, Role: 1, Status: 3}}}
	want := sysHex("01000000 63 01000000 01000000 6e 02000000 6970 0201 0403 0605 0807 01 03")
	if got := m.AppendTo(nil); !bytes.Equal(got, want) {
		t.Errorf("encode:\n got %x\nwant %x", got, want)
	}
}

func TestClusterMetadataDecodeErrors(t *testing.T) {
	tooMany := ClusterMetadata{Name: "x", Nodes: make([]ClusterNode, MaxClusterNodes+1)}
	dec := (&ClusterMetadata{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "no node count", body: sysHex("01000000 63"), dec: dec},
		{name: "count beyond body", body: sysHex("01000000 63 ffffffff"), dec: dec},
		{name: "count without nodes", body: sysHex("01000000 63 01000000"), dec: dec},
		{name: "more than max nodes", body: tooMany.AppendTo(nil), dec: dec},
		{name: "name length beyond body", body: sysHex("05000000 63 00000000"), dec: dec},
		{name: "name over limit", body: binary.LittleEndian.AppendUint32(nil, MaxSystemStringLen+1), dec: dec},
		{name: "name not utf8", body: sysHex("01000000 ff 00000000"), dec: dec},
		{name: "node truncated", body: sysHex("01000000 63 01000000 01000000 6e 02000000 6970 0201 0403 0605 0807 01"), dec: dec},
		{name: "trailing byte", body: sysHex("01000000 63 00000000 00"), dec: dec},
	})
}

func TestClusterMetadataValidate(t *testing.T) {
	sysRunValidateCases(t, []sysValidateCase{
		{name: "ok", validate: func() error { m := sampleClusterMetadata["three nodes"]; return m.Validate() }},
		{name: "too many nodes", validate: func() error {
			m := ClusterMetadata{Nodes: make([]ClusterNode, MaxClusterNodes+1)}
			return m.Validate()
		}, want: ErrInvalidCommand},
		{name: "name not utf8", validate: func() error { m := ClusterMetadata{Name: "\xff"}; return m.Validate() }, want: ErrInvalidCommand},
		{name: "node ip too long", validate: func() error {
			m := ClusterMetadata{Nodes: []ClusterNode{{IP: strings.Repeat("1", MaxSystemStringLen+1)}}}
			return m.Validate()
		}, want: ErrInvalidCommand},
		{name: "node name not utf8", validate: func() error {
			m := ClusterMetadata{Nodes: []ClusterNode{{Name: "\xc3"}}}
			return m.Validate()
		}, want: ErrInvalidCommand},
	})
}

var sampleGetSnapshotFile = map[string]GetSnapshotFile{
	"all zstd":   {Compression: SnapshotZstd, Types: []SnapshotType{SnapshotAll}},
	"no types":   {Compression: SnapshotStored},
	"every type": {Compression: SnapshotXz, Types: []SnapshotType{1, 2, 3, 4, 5, 6, 100}},
	"repeated":   {Compression: SnapshotDeflated, Types: []SnapshotType{SnapshotServerLogs, SnapshotServerLogs}},
	"max types":  {Compression: SnapshotBzip2, Types: sysRepeat(SnapshotTest, MaxSnapshotTypes)},
}

func sysRepeat[T any](v T, n int) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestGetSnapshotFileRoundTrip(t *testing.T) {
	for name, g := range sampleGetSnapshotFile {
		t.Run(name, func(t *testing.T) {
			if err := g.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			enc := sysRoundTrip(t, &g, &GetSnapshotFile{})
			if len(enc) != 2+len(g.Types) || enc[0] != byte(g.Compression) || int(enc[1]) != len(g.Types) {
				t.Errorf("layout %x", enc)
			}
		})
	}
}

func TestGetSnapshotFileDecodeErrors(t *testing.T) {
	dec := (&GetSnapshotFile{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "no count", body: sysHex("01"), dec: dec},
		{name: "count beyond body", body: sysHex("01 02 64"), dec: dec},
		{name: "compression 0", body: sysHex("00 00"), dec: dec},
		{name: "compression 7", body: sysHex("07 01 64"), dec: dec},
		{name: "type 0", body: sysHex("01 01 00"), dec: dec},
		{name: "type 7", body: sysHex("01 02 01 07"), dec: dec},
		{name: "type 99", body: sysHex("01 01 63"), dec: dec},
	})
}

func TestGetSnapshotFileValidate(t *testing.T) {
	sysRunValidateCases(t, []sysValidateCase{
		{name: "ok", validate: func() error { g := sampleGetSnapshotFile["every type"]; return g.Validate() }},
		{name: "bad compression", validate: func() error { g := GetSnapshotFile{Compression: 0}; return g.Validate() }, want: ErrInvalidCommand},
		{name: "bad type", validate: func() error {
			g := GetSnapshotFile{Compression: SnapshotStored, Types: []SnapshotType{101}}
			return g.Validate()
		}, want: ErrInvalidCommand},
		{name: "too many types", validate: func() error {
			g := GetSnapshotFile{Compression: SnapshotStored, Types: sysRepeat(SnapshotAll, MaxSnapshotTypes+1)}
			return g.Validate()
		}, want: ErrInvalidCommand},
	})
}

// TestGetSnapshotFileTruncatesTypes checks the documented truncation keeps
// the output decodable.
func TestGetSnapshotFileTruncatesTypes(t *testing.T) {
	g := GetSnapshotFile{Compression: SnapshotStored, Types: sysRepeat(SnapshotAll, MaxSnapshotTypes+3)}
	var back GetSnapshotFile
	if err := back.Decode(g.AppendTo(nil)); err != nil || len(back.Types) != MaxSnapshotTypes {
		t.Errorf("decode truncated: %v, %d types", err, len(back.Types))
	}
}

// TestEmptySystemBodies checks the requests without a body (PING,
// GET_STATS, GET_CLUSTER_METADATA, GET_ME, GET_CLIENTS, GET_USERS,
// LOGOUT, GET_PERSONAL_ACCESS_TOKENS) use Empty, which refuses any byte.
func TestEmptySystemBodies(t *testing.T) {
	if got := (Empty{}).AppendTo(nil); len(got) != 0 {
		t.Errorf("Empty encodes to %x", got)
	}
	if err := (Empty{}).Decode(nil); err != nil {
		t.Errorf("Empty.Decode(nil) = %v", err)
	}
	if err := (Empty{}).Decode([]byte{0}); !errors.Is(err, ErrInvalidCommand) {
		t.Errorf("Empty.Decode(00) = %v", err)
	}
}
