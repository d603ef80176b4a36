package wire

import "testing"

func TestClusterRebalanceReply(t *testing.T) {
	in := ClusterRebalanceReply{Started: 3, InProgress: 4, Known: true}
	var out ClusterRebalanceReply
	if err := out.Decode(in.AppendTo(nil)); err != nil || out != in {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
	if err := out.Decode(nil); err != nil || out.Known || out.Started != 0 {
		t.Fatalf("empty reply: %+v, %v", out, err)
	}
	for _, b := range [][]byte{{1, 0, 0, 0}, append(in.AppendTo(nil), 0)} {
		if err := out.Decode(b); err == nil {
			t.Fatalf("%d-byte reply accepted", len(b))
		}
	}
	if info, ok := LookupCommand(CmdClusterRebalance); !ok || info.Operation != OpNonReplicated || info.Name != "CLUSTER_REBALANCE" {
		t.Fatalf("lookup: %+v %v", info, ok)
	}
}
