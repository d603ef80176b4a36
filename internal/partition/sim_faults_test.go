package partition

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/iggo-dev/iggo/internal/replication"
)

// The scheduled faults and changes that take more than a line: replica
// moves, storage damage, leadership transfers and segment deletions.

// move runs a scheduled replica move; tried says whether it ran. The
// replica that leaves is drawn from the placement of the moment, the one
// that joins is the node holding none.
func (r *simRun) move(e simEvent) (tried bool, note string) {
	c := r.c
	pl := c.getPlacement()
	from := replication.NodeID(pl[e.Rand%uint64(len(pl))])
	to, ok := replication.NodeID(0), false
	for _, id := range c.roster {
		if !slices.Contains(pl, uint8(id)) {
			to, ok = id, true
			break
		}
	}
	if _, _, up := c.running(to); !ok || !up {
		return false, fmt.Sprintf("skipped: placement %v, no running node to join", pl)
	}
	note = fmt.Sprintf("n%d→n%d: ", from, to)
	if err := c.move(from, to); err != nil {
		return true, note + fmt.Sprintf("failed: %v (placement now %v)", err, c.getPlacement())
	}
	return true, note + fmt.Sprintf("done: placement %v", c.getPlacement())
}

// damage flips a bit in, or truncates, one file of a stopped node, the
// file and position drawn from e.Rand.
func (r *simRun) damage(e simEvent) string {
	nd := r.c.nodes[e.Node]
	nd.mu.Lock()
	defer nd.mu.Unlock()
	if nd.up {
		return "skipped: node is up"
	}
	var files []string
	filepath.WalkDir(nd.dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil && info.Size() > 0 {
				files = append(files, path)
			}
		}
		return nil
	})
	if len(files) == 0 {
		return "skipped: no files"
	}
	slices.Sort(files)
	path := files[e.Rand%uint64(len(files))]
	rel, _ := filepath.Rel(nd.dir, path)
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Sprint("skipped: ", err)
	}
	size := info.Size()
	pos := int64((e.Rand >> 20) % uint64(size))
	if e.Kind == evTruncate {
		// Somewhere in the second half: a lost tail.
		pos = size/2 + pos/2
		if err := os.Truncate(path, pos); err != nil {
			return fmt.Sprint("skipped: ", err)
		}
		return fmt.Sprintf("%s truncated from %d to %d bytes", rel, size, pos)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Sprint("skipped: ", err)
	}
	defer f.Close()
	var b [1]byte
	if _, err := f.ReadAt(b[:], pos); err != nil {
		return fmt.Sprint("skipped: ", err)
	}
	bit := byte(1) << (e.Rand >> 60 & 7)
	b[0] ^= bit
	if _, err := f.WriteAt(b[:], pos); err != nil {
		return fmt.Sprint("skipped: ", err)
	}
	return fmt.Sprintf("%s byte %d of %d bit %#x", rel, pos, size, bit)
}

// transfer asks the leader to hand its leadership to another voter
// (drawn from e.Rand), waiting at most 2 s.
func (r *simRun) transfer(e simEvent) (bool, string) {
	c := r.c
	lead, ok := c.leader()
	if !ok {
		return false, "skipped: no leader"
	}
	_, h, ok := c.running(lead)
	if !ok {
		return false, "skipped: leader stopped"
	}
	v, _ := h.Status(c.group())
	var to []replication.NodeID
	for _, id := range v.Voters {
		if id != lead {
			to = append(to, id)
		}
	}
	if len(to) == 0 {
		return false, "skipped: no other voter"
	}
	target := to[e.Rand%uint64(len(to))]
	ctx, cancel := ctxFor(2 * time.Second)
	defer cancel()
	if err := h.TransferLeadership(ctx, c.group(), target); err != nil {
		return true, fmt.Sprintf("n%d→n%d: %v", lead, target, err)
	}
	return true, fmt.Sprintf("n%d→n%d", lead, target)
}

// deleteSegments has every running node delete its count oldest sealed
// segments, as DELETE_SEGMENTS does through the metadata (node-local; the
// group's log is compacted first, so a replica behind is sent a
// snapshot). What the leader held is recorded first (seen).
func (r *simRun) deleteSegments(count uint32) (bool, string) {
	c := r.c
	lead, ok := c.leader()
	if !ok {
		return false, "skipped: no leader"
	}
	p, _, ok := c.running(lead)
	if !ok {
		return false, "skipped: leader stopped"
	}
	msgs, err := pollReplica(p)
	if err != nil {
		return false, fmt.Sprint("skipped: poll the leader: ", err)
	}
	r.mu.Lock()
	for _, m := range msgs {
		r.seen[m.payload] = m.offset
	}
	r.mu.Unlock()
	var done []string
	ref := c.ref()
	for _, id := range c.roster {
		if p, _, ok := c.running(id); ok && p.Holds(ref, 0) {
			if err := p.DeleteSegments(ref, 0, count); err != nil {
				done = append(done, fmt.Sprintf("n%d: %v", id, err))
			} else {
				done = append(done, fmt.Sprintf("n%d", id))
			}
		}
	}
	return true, fmt.Sprintf("%d segments on %v (leader n%d held %d messages)", count, done, lead, len(msgs))
}
