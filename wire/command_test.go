package wire

import (
	"sort"
	"testing"
)

// TestCommandRegistry checks the registry against the summary table of
// commands.md: 51 codes, their operation bytes, planes, reply rewrites and
// result framing.
func TestCommandRegistry(t *testing.T) {
	cmds := Commands()
	if len(cmds) != 51 {
		t.Fatalf("registry has %d commands, commands.md lists 51", len(cmds))
	}
	if !sort.SliceIsSorted(cmds, func(i, j int) bool { return cmds[i].Code < cmds[j].Code }) {
		t.Fatal("registry is not in code order")
	}
	rewrites := map[Command]Operation{CmdCreateTopic: OpCreateTopicWithAssignments, CmdCreatePartitions: OpCreatePartitionsWithAssignments, CmdDeleteSegments: OpTruncatePartition}
	for _, c := range cmds {
		t.Run(c.Name, func(t *testing.T) {
			got, ok := LookupCommand(c.Code)
			if !ok || got != c {
				t.Fatalf("LookupCommand(%d) = %+v, %v", c.Code, got, ok)
			}
			if c.Code.String() != c.Name {
				t.Errorf("String() = %q", c.Code.String())
			}
			if want, ok := rewrites[c.Code]; ok {
				if c.ReplyOperation != want {
					t.Errorf("reply operation %v, want %v", c.ReplyOperation, want)
				}
			} else if c.ReplyOperation != c.Operation {
				t.Errorf("reply operation %v differs from %v", c.ReplyOperation, c.Operation)
			}
			switch {
			case c.Legacy:
				if c.Code != CmdLoginUser && c.Code != CmdLoginWithPersonalAccessToken {
					t.Errorf("unexpected legacy code")
				}
			case c.Operation == OpNonReplicated:
				if c.Plane != PlaneRead || c.ResultFramed {
					t.Errorf("read command: plane %v framed %v", c.Plane, c.ResultFramed)
				}
			case c.Operation.Session():
				if c.Plane != PlaneSession {
					t.Errorf("session op in plane %v", c.Plane)
				}
			case c.Operation.Partition():
				if c.Plane != PlanePartition {
					t.Errorf("partition op in plane %v", c.Plane)
				}
				if c.ResultFramed != c.ReplyOperation.ResultFramed() {
					t.Errorf("framing %v disagrees with the reply operation", c.ResultFramed)
				}
			default:
				if c.Plane != PlaneMetadata || !c.ResultFramed || !c.ReplyOperation.ResultFramed() {
					t.Errorf("metadata command: plane %v framed %v", c.Plane, c.ResultFramed)
				}
				back, ok := CommandForOperation(c.Operation)
				if !ok || back.Code != c.Code {
					t.Errorf("CommandForOperation(%v) = %v", c.Operation, back.Code)
				}
			}
		})
	}
	if _, ok := LookupCommand(999); ok {
		t.Error("LookupCommand accepted an unknown code")
	}
	if s := Command(999).String(); s != "Command(999)" {
		t.Errorf("unknown command String() = %q", s)
	}
}

// TestOperationClasses checks every byte value against the classification
// rules of framing.md.
func TestOperationClasses(t *testing.T) {
	for v := 0; v < 256; v++ {
		o := Operation(v)
		defined := v <= 3 || (v >= 64 && v <= 68) || (v >= 128 && v <= 149) || (v >= 160 && v <= 162)
		if o.Defined() != defined {
			t.Errorf("%d: Defined = %v", v, o.Defined())
		}
		if o.Internal() != (v >= 64 && v < 128) {
			t.Errorf("%d: Internal = %v", v, o.Internal())
		}
		meta := (v >= 64 && v < 128) || (v >= 128 && v <= 149 && v != 138)
		if o.Metadata() != meta {
			t.Errorf("%d: Metadata = %v", v, o.Metadata())
		}
		if o.ResultFramed() != (meta || v == 161 || v == 162) {
			t.Errorf("%d: ResultFramed = %v", v, o.ResultFramed())
		}
		if o.ClientAllowed() != (defined && v != 0 && !(v >= 64 && v < 128)) {
			t.Errorf("%d: ClientAllowed = %v", v, o.ClientAllowed())
		}
		if defined && o.String() == "Operation("+itoa(uint64(v))+")" {
			t.Errorf("%d: defined operation without a name", v)
		}
	}
}
