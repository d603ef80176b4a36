package replication

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/anishathalye/porcupine"
)

// registerInput is one operation on a single register replicated through
// group 1: a write of Value, or a read (through the log, so it is
// linearizable) whose output is the value it saw.
type registerInput struct {
	Write bool
	Value int
}

// registerModel: state is the last written value (0 initially).
var registerModel = porcupine.Model{
	Init: func() any { return 0 },
	Step: func(state, input, output any) (bool, any) {
		in := input.(registerInput)
		if in.Write {
			return true, in.Value
		}
		return output.(int) == state.(int), state
	},
	DescribeOperation: func(input, output any) string {
		in := input.(registerInput)
		if in.Write {
			return fmt.Sprintf("write(%d)", in.Value)
		}
		return fmt.Sprintf("read() -> %v", output)
	},
}

// valueAt returns the register value that a read entry at idx saw on
// node id: the last write applied before it.
func (c *cluster) valueAt(id NodeID, g GroupID, idx uint64) (int, bool) {
	ents := c.sms[id].entries(g)
	pos := -1
	for i, e := range ents {
		if e.Index == idx {
			pos = i
		}
	}
	if pos < 0 {
		return 0, false
	}
	for i := pos - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(string(ents[i].Data), "w:"); ok {
			n, err := strconv.Atoi(v)
			return n, err == nil
		}
	}
	return 0, true
}

// TestLinearizableRegister records every client operation (invocation and
// completion, virtual time) of concurrent clients under crashes,
// restarts, isolations and a lossy network, and checks the history with
// porcupine. A write whose outcome is unknown stays open until the end of
// the history; one that was never admitted, or provably lost, is left out.
func TestLinearizableRegister(t *testing.T) {
	for seed := range uint64(3) {
		var history []porcupine.Operation
		synctest.Test(t, func(t *testing.T) { history = registerHistory(t, seed) })
		res := porcupine.CheckOperationsTimeout(registerModel, history, 20*time.Second)
		writes, unknown := 0, 0
		for _, op := range history {
			if op.Input.(registerInput).Write {
				writes++
				if op.Return == math.MaxInt64 {
					unknown++
				}
			}
		}
		t.Logf("seed %d: %d operations (%d writes, %d of unknown outcome): %s", seed, len(history), writes, unknown, res)
		if res != porcupine.Ok {
			t.Fatalf("seed %d: history is %s", seed, res)
		}
		// Control: a read of a value nobody wrote must be rejected, so
		// the check above can fail.
		tampered := append([]porcupine.Operation(nil), history...)
		for i, op := range tampered {
			if !op.Input.(registerInput).Write {
				tampered[i].Output = -1
				break
			}
		}
		if r := porcupine.CheckOperationsTimeout(registerModel, tampered, 20*time.Second); r != porcupine.Illegal {
			t.Fatalf("seed %d: a tampered history checks as %s", seed, r)
		}
	}
}

func registerHistory(t *testing.T, seed uint64) []porcupine.Operation {
	c := newCluster(t, 3, seed+900, nil)
	c.net.set(lossy)
	c.addGroup(1)
	c.leader(1, 5*time.Second)
	var mu sync.Mutex
	var history []porcupine.Operation
	start := time.Now()
	now := func() int64 { return int64(time.Since(start)) }
	nextValue := 0
	const clients, rounds, opsPerRound = 3, 8, 4
	for round := range rounds {
		var wg sync.WaitGroup
		for cl := range clients {
			wg.Go(func() {
				for op := range opsPerRound {
					write := (cl+op+round)%2 == 0
					mu.Lock()
					nextValue++
					v := nextValue
					mu.Unlock()
					in := registerInput{Write: write, Value: v}
					data := "w:" + strconv.Itoa(v)
					if !write {
						data = fmt.Sprintf("r:%d:%d:%d", cl, round, op)
					}
					lead, ok := c.hosts[0], false
					for _, id := range c.ids {
						if h := c.hosts[id]; h != nil {
							if v, _ := h.Status(1); v.Role == RoleLeader {
								lead, ok = h, true
							}
						}
					}
					if !ok || lead == nil {
						time.Sleep(testTiming.Tick)
						continue
					}
					call := now()
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
					idx, err := lead.Propose(ctx, 1, []byte(data))
					cancel()
					ret := now()
					o := porcupine.Operation{ClientId: cl, Input: in, Call: call, Return: ret}
					switch {
					case err == nil && write:
					case err == nil:
						val, found := c.valueAt(lead.cfg.Self, 1, idx)
						if !found {
							t.Errorf("read at %d not found on its leader", idx)
							continue
						}
						o.Output = val
					case write && errors.Is(err, ErrOutcomeUnknown):
						o.Return = math.MaxInt64
					default:
						continue // never admitted, lost, or a failed read
					}
					mu.Lock()
					history = append(history, o)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		// One fault per round, healed the round after.
		switch round % 4 {
		case 0:
			c.crash(c.leader(1, 10*time.Second))
		case 1:
			for _, id := range c.ids {
				if c.hosts[id] == nil {
					c.start(id)
				}
			}
		case 2:
			c.net.isolate(c.leader(1, 10*time.Second), c.ids, true)
		case 3:
			c.net.set(func(n *memNet) { clear(n.cut) })
		}
	}
	for _, id := range c.ids {
		if c.hosts[id] == nil {
			c.start(id)
		}
	}
	c.net.set(func(n *memNet) { clear(n.cut) })
	return history
}
