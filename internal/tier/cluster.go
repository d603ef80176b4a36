package tier

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/iggo-dev/iggo/internal/fileio"
)

// recordVersion is the layout of a record: version u8 | epoch u64 | the
// segment as the manifest encodes it.
const recordVersion = 1

// encodeRecord returns the record that r was uploaded in purge epoch
// epoch.
func encodeRecord(epoch uint64, r Remote) []byte {
	b := []byte{recordVersion}
	b = binary.LittleEndian.AppendUint64(b, epoch)
	return appendRemote(b, &r)
}

// decodeRecord parses a record.
func decodeRecord(b []byte) (epoch uint64, r Remote, err error) {
	if len(b) < 1 || b[0] != recordVersion {
		return 0, r, fmt.Errorf("%w: record version", errManifest)
	}
	d := decoder{b: b[1:]}
	epoch = d.u64()
	r = d.remote()
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d trailing bytes in a record", errManifest, len(d.b))
	}
	if d.err == nil && (r.End <= r.Start || r.Bytes <= 0 || r.Records == 0 || r.Key == "") {
		d.err = fmt.Errorf("%w: record of segment %d..%d malformed", errManifest, r.Start, r.End)
	}
	return epoch, r, d.err
}

// publish replicates uploaded segments through the group's log, one
// record each, oldest first. A segment a purge made stale (its record
// applied in an older epoch, so no manifest lists it) has its objects
// deleted.
func (p *Partition) publish(ctx context.Context, up []Remote, epoch uint64) error {
	for _, r := range up {
		if err := p.cl.Publish(ctx, encodeRecord(epoch, r)); err != nil {
			return fmt.Errorf("publish upload of segment %d: %w", r.Start, err)
		}
		p.mu.Lock()
		cur := p.man.Load()
		if cur.Epoch != epoch {
			n := cur.clone()
			n.Deletes = append(n.Deletes, r.Key, IndexKey(r.Key))
			err := p.commit(n)
			p.mu.Unlock()
			if err != nil {
				return err
			}
			continue
		}
		p.mu.Unlock()
		p.m.met.uploadedSegments.Add(1)
		p.m.met.uploadedBytes.Add(uint64(r.Bytes))
	}
	return nil
}

// ApplyRecord applies a record of the group's log on this replica: the
// segment joins the manifest unless a purge applied since it was
// uploaded (another epoch) or the manifest already holds its offsets.
// When this replica's own local segment is the same one, its index is
// kept beside the manifest now; otherwise the index is fetched from the
// bucket when a read first needs it. It runs on the replication loop.
func (p *Partition) ApplyRecord(record []byte) error {
	epoch, r, err := decodeRecord(record)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	cur := p.man.Load()
	if cur.Epoch != epoch {
		return nil
	}
	n := cur.clone()
	if !n.insert(r) {
		return nil
	}
	for _, s := range p.log.Sealed() {
		if s.Start == r.Start && s.End == r.End {
			if err := copyIndex(s.IndexPath, p.indexPath(r.Start)); err != nil {
				p.m.log.Warn("remote tier: keep the index of an uploaded segment", "partition", p.ref, "err", err)
			}
			break
		}
	}
	return p.commit(n)
}

// copyIndex keeps a copy of a sealed segment's index at dst.
func copyIndex(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return fileio.WriteFileAtomic(dst, b)
}

// Snapshot returns the manifest for a snapshot of the group.
func (p *Partition) Snapshot() []byte {
	return p.man.Load().encode()
}

// Restore makes the manifest of a snapshot this replica's (it restarts
// from the snapshot); local index copies of segments it does not list
// go, and the rest are fetched from the bucket as reads need them.
func (p *Partition) Restore(snapshot []byte) error {
	m, err := decodeManifest(snapshot)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.man.Load()
	var stale []Remote
	for _, s := range old.Segments {
		if i := m.find(s.Start); i < 0 || m.Segments[i].Start != s.Start || m.Segments[i].End != s.End {
			stale = append(stale, s)
		}
	}
	if err := p.commit(m); err != nil {
		return err
	}
	p.removeIndexes(stale)
	return nil
}
