package partition

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/storage"
	"github.com/iggo-dev/iggo/wire"
)

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestDamagedPartitionOpens damages a stored record and reopens the
// plane: the partition opens and serves, the damage is logged once with
// its offsets and listed by Damaged and DamagedPartitions.
func TestDamagedPartitionOpens(t *testing.T) {
	dir := t.TempDir()
	ref := catalog.TopicRef{StreamID: 4, TopicID: 5, Incarnation: 9, Settings: wire.DefaultTopicSettings()}
	p := newPlane(t, dir)
	if err := p.CreatePartitions(ref, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		appendTo(t, p, ref, 0, 2)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	// Record 2 (offsets 4..5): flip its last payload byte.
	log := filepath.Join(p.PartitionDir(ref, 0), "00000000000000000000.log")
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	pos := 0
	for range 3 {
		_, rest, err := wire.ParseBatch(b[pos:])
		if err != nil {
			t.Fatal(err)
		}
		pos = len(b) - len(rest)
	}
	b[pos-1] ^= 1
	if err := os.WriteFile(log, b, 0o644); err != nil {
		t.Fatal(err)
	}

	var out syncBuffer
	p2, err := New(Options{Dir: dir, Logger: slog.New(slog.NewTextHandler(&out, nil)), RetentionInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if err := p2.CreatePartitions(ref, []uint32{0}); err != nil {
		t.Fatal(err)
	}
	if !p2.Holds(ref, 0) {
		t.Fatal("damaged partition not open")
	}
	dmg := p2.lookup(ref.Incarnation, 0).log.Damaged()
	if len(dmg) != 1 || dmg[0].First != 4 || dmg[0].Last != 5 {
		t.Fatalf("damaged %+v, want offsets 4..5", dmg)
	}
	all := p2.DamagedPartitions()
	if len(all) != 1 || all[0].StreamID != 4 || all[0].TopicID != 5 || all[0].Partition != 0 || all[0].DamagedRecords() != 2 {
		t.Fatalf("damaged partitions %+v", all)
	}
	logged := out.String()
	if strings.Count(logged, "damaged records quarantined") != 1 || !strings.Contains(logged, "first_offset=4 last_offset=5") ||
		!strings.Contains(logged, "ranges=4-5") {
		t.Fatalf("log:\n%s", logged)
	}
	if st := p2.PartitionStats(ref, 0); st.Messages != 10 || st.CurrentOffset != 9 {
		t.Fatalf("stats %+v", st)
	}
	// Sends continue after the damage.
	if res := appendTo(t, p2, ref, 0, 1); res.BaseOffset != 10 {
		t.Fatalf("append at %d, want 10", res.BaseOffset)
	}
}

func TestDamageRanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   [][2]uint64
		want string
	}{
		{"none", nil, ""},
		{"one offset", [][2]uint64{{7, 7}}, "7"},
		{"ranges", [][2]uint64{{1, 3}, {9, 9}, {20, 40}}, "1-3,9,20-40"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var dmg []storage.Damage
			for _, r := range tc.in {
				dmg = append(dmg, storage.Damage{First: r[0], Last: r[1]})
			}
			if got := damageRanges(dmg); got != tc.want {
				t.Fatalf("%q, want %q", got, tc.want)
			}
		})
	}
}
