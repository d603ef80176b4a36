//go:build !windows

package clustertest

import (
	"fmt"
	"time"

	"github.com/anishathalye/porcupine"
)

// logModel is a partition log. The state is the log's length and the
// fold of its message ids (logState): an append of a known outcome must
// have received offset = the length; one of unknown outcome appends at
// whatever offset is next; a read must have returned exactly the log
// (same length, same fold).
var logModel = porcupine.Model{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byPart := map[uint32][]porcupine.Operation{}
		var order []uint32
		for _, op := range history {
			p := op.Input.(logInput).Partition
			if _, ok := byPart[p]; !ok {
				order = append(order, p)
			}
			byPart[p] = append(byPart[p], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, p := range order {
			out = append(out, byPart[p])
		}
		return out
	},
	Init: func() any { return logState{} },
	Step: func(state, input, output any) (bool, any) {
		s := state.(logState)
		in, out := input.(logInput), output.(logOutput)
		if in.Kind == Append {
			if out.Known && out.Offset != s.Len {
				return false, s
			}
			return true, logState{Len: s.Len + 1, Fold: foldID(s.Fold, in.MsgID)}
		}
		return out.Len == s.Len && out.Fold == s.Fold, s
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(logInput), output.(logOutput)
		if in.Kind == Append {
			if !out.Known {
				return fmt.Sprintf("p%d append(%#x) -> ?", in.Partition, in.MsgID)
			}
			return fmt.Sprintf("p%d append(%#x) -> %d", in.Partition, in.MsgID, out.Offset)
		}
		return fmt.Sprintf("p%d read() -> %d messages", in.Partition, out.Len)
	},
	DescribeState: func(state any) string {
		return fmt.Sprintf("%d messages", state.(logState).Len)
	},
}

// checkTimeout bounds one porcupine check; a check that does not finish
// in time is reported as such (never as a pass).
const checkTimeout = 60 * time.Second

// CheckLinearizable checks ops against logModel.
func CheckLinearizable(ops []Op) porcupine.CheckResult {
	return porcupine.CheckOperationsTimeout(logModel, Porcupine(ops), checkTimeout)
}
