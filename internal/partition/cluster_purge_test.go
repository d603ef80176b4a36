package partition

import (
	"testing"
	"time"

	"github.com/iggo-dev/iggo/internal/catalog"
	"github.com/iggo-dev/iggo/internal/replication"
	"github.com/iggo-dev/iggo/wire"
)

// TestClusterSendAfterPurgeLandsAfterIt: a send that follows a purge
// (its metadata entry applied, the partition entry only queued) waits for
// the purge and is stored after it, never purged by it.
func TestClusterSendAfterPurgeLandsAfterIt(t *testing.T) {
	_, nodes := startCluster(t, 3)
	g := GroupID(clusterRef, 0)
	for _, nd := range nodes {
		waitLeader(t, nd, g, func(v replication.View) bool { return v.HasLeader && v.Leader == 0 })
	}
	client := wire.Uint128{Lo: 11}
	for round := range 5 {
		for i := range 3 {
			if st, _ := csend(t, nodes[0].plane, client, uint64(10*round+i+1), sendBody(t, clusterRef, 2, "old")); st != 0 {
				t.Fatalf("round %d send %d: status %d", round, i, st)
			}
		}
		for _, nd := range nodes {
			if err := nd.plane.PurgeTopic(purgeRef(uint64(round + 1))); err != nil {
				t.Fatal(err)
			}
		}
		if st, base := csend(t, nodes[0].plane, client, uint64(10*round+9), sendBody(t, clusterRef, 1, "new")); st != 0 || base != 0 {
			t.Fatalf("round %d: send right after the purge: status %d base %d, want stored at 0", round, st, base)
		}
		for _, nd := range nodes {
			eventually(t, 5*time.Second, "the send after the purge on every node", func() bool { return messages(nd.plane) == 1 })
		}
	}
}

// purgeRef is clusterRef for the purge of identity id.
func purgeRef(id uint64) catalog.TopicRef {
	r := clusterRef
	r.PurgedAt = id
	return r
}
