package itest

import (
	"errors"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/iggo-dev/iggo/wire"
)

// deliveryLog records, in one sequence, which member was handed which
// offsets and which commits the server accepted.
type deliveryLog struct {
	mu         sync.Mutex
	cond       *sync.Cond
	seq        uint64
	deliveries []delivery
	commits    []commitRec
	distinct   map[[2]uint64]bool
	expired    bool
}

// delivery is one message handed to a member: sent is the sequence number
// taken before the poll request went out, recv after its reply arrived.
type delivery struct {
	member     string
	partition  uint32
	offset     uint64
	sent, recv uint64
}

// commitRec is an accepted group offset store (recv after its reply).
type commitRec struct {
	member    string
	partition uint32
	offset    uint64
	recv      uint64
}

func newDeliveryLog() *deliveryLog {
	l := &deliveryLog{distinct: map[[2]uint64]bool{}}
	l.cond = sync.NewCond(&l.mu)
	return l
}

func (l *deliveryLog) tick() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	return l.seq
}

func (l *deliveryLog) delivered(member string, p uint32, offs []uint64, sent uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	for _, o := range offs {
		l.deliveries = append(l.deliveries, delivery{member: member, partition: p, offset: o, sent: sent, recv: l.seq})
		l.distinct[[2]uint64{uint64(p), o}] = true
	}
	l.cond.Broadcast()
}

func (l *deliveryLog) committed(member string, p uint32, off uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seq++
	l.commits = append(l.commits, commitRec{member: member, partition: p, offset: off, recv: l.seq})
}

// waitDistinct blocks until n distinct messages were delivered; false if
// the guard expired first (a lost message would otherwise hang the test).
func (l *deliveryLog) waitDistinct(n int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.distinct) < n && !l.expired {
		l.cond.Wait()
	}
	return len(l.distinct) >= n
}

func (l *deliveryLog) expire() {
	l.mu.Lock()
	l.expired = true
	l.mu.Unlock()
	l.cond.Broadcast()
}

// consumer is a member's polling loop: SYNC, then poll each assigned
// partition (Next, no auto-commit) and store the last offset it got, as
// an SDK consumer that commits after processing does.
type consumer struct {
	m     *member
	log   *deliveryLog
	leave atomic.Bool // LEAVE at the next iteration, then stop
	drop  atomic.Bool // close the connection after the next delivery, before committing
	done  chan error
}

func (c *consumer) run(stop <-chan struct{}) {
	c.done <- c.loop(stop)
}

func (c *consumer) loop(stop <-chan struct{}) error {
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		if c.leave.Load() {
			return c.m.leave()
		}
		a, ok, err := c.m.sync()
		if err != nil || !ok {
			return errors.Join(err, errors.New(c.m.name+": not a member"))
		}
		got := false
		for _, p := range a.Partitions {
			sent := c.log.tick()
			polled, err := c.m.poll(p, 5, false)
			if err != nil {
				return err
			}
			if polled.PartitionID == wire.PollResyncPartition {
				break // re-sync
			}
			offs := offsets(polled)
			if len(offs) == 0 {
				continue
			}
			got = true
			c.log.delivered(c.m.name, p, offs, sent)
			if c.drop.Load() {
				return c.m.c.Conn.Close()
			}
			last := offs[len(offs)-1]
			ok, err := c.m.store(p, last)
			if err != nil {
				return err
			}
			if ok {
				c.log.committed(c.m.name, p, last)
			}
		}
		if !got {
			runtime.Gosched()
		}
	}
}

// TestGroupConcurrentConsumers runs several members polling and
// committing concurrently while members join (cooperative hand-off), one
// leaves and one's connection drops (full rebalances). Every message is
// consumed at least once; before the first leave no message is handed to
// two members at all (ownership is exclusive and the hand-off waits for
// the source's commit); afterwards a message is handed again only if the
// member that had it never got its commit accepted.
func TestGroupConcurrentConsumers(t *testing.T) {
	const (
		partitions   = 8
		perPartition = 240
		total        = partitions * perPartition
	)
	e := startGroups(t, partitions)
	e.fill(t, perPartition, 24, 60)
	log := newDeliveryLog()
	guard := time.AfterFunc(2*time.Minute, log.expire)
	defer guard.Stop()
	stop := make(chan struct{})
	var consumers []*consumer
	start := func(name string) *consumer {
		c := &consumer{m: e.member(t, name), log: log, done: make(chan error, 1)}
		c.m.mustJoin(t)
		consumers = append(consumers, c)
		go c.run(stop)
		return c
	}
	stopAll := func() {
		close(stop)
		for _, c := range consumers {
			if err := <-c.done; err != nil {
				t.Errorf("consumer: %v", err)
			}
		}
	}
	start("a")
	var b, c *consumer
	for i, name := range []string{"b", "c", "d"} {
		if !log.waitDistinct(total * (i + 1) / 10) {
			stopAll()
			t.Fatal("consumers stalled")
		}
		m := start(name)
		switch name {
		case "b":
			b = m
		case "c":
			c = m
		}
	}
	if !log.waitDistinct(total / 2) {
		stopAll()
		t.Fatal("consumers stalled")
	}
	phase2 := log.tick() // no full rebalance can have happened before this
	b.leave.Store(true)
	c.drop.Store(true)
	start("e")
	ok := log.waitDistinct(total)
	stopAll()
	if !ok {
		t.Fatalf("only %d of %d messages consumed", len(log.distinct), total)
	}

	log.mu.Lock()
	defer log.mu.Unlock()
	byMessage := map[[2]uint64][]delivery{}
	for _, d := range log.deliveries {
		k := [2]uint64{uint64(d.partition), d.offset}
		byMessage[k] = append(byMessage[k], d)
	}
	committedBy := func(member string, p uint32, off, before uint64) bool {
		for _, cm := range log.commits {
			if cm.member == member && cm.partition == p && cm.offset >= off && cm.recv < before {
				return true
			}
		}
		return false
	}
	again := 0
	for k, ds := range byMessage {
		sort.Slice(ds, func(i, j int) bool { return ds[i].recv < ds[j].recv })
		for i := 1; i < len(ds); i++ {
			again++
			first, later := ds[i-1], ds[i]
			if first.sent < phase2 && later.sent < phase2 {
				t.Fatalf("partition %d offset %d handed to %s and then %s while ownership was exclusive", k[0], k[1], first.member, later.member)
			}
			if committedBy(first.member, first.partition, first.offset, later.sent) {
				t.Fatalf("partition %d offset %d handed to %s after %s had committed it", k[0], k[1], later.member, first.member)
			}
		}
	}
	t.Logf("%d deliveries of %d messages (%d again after the leave/disconnect), %d commits", len(log.deliveries), total, again, len(log.commits))
}
