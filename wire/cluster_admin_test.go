package wire

import "testing"

func TestClusterAdminBodies(t *testing.T) {
	in := ClusterNodeSpec{ReplicaID: 3, Name: "d", IP: "127.0.0.1", TCPPort: 8093, ReplicaPort: 8193}
	var out ClusterNodeSpec
	if err := out.Decode(in.AppendTo(nil)); err != nil || out != in {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
	if err := out.Decode(append(in.AppendTo(nil), 0)); err == nil {
		t.Fatal("trailing byte accepted")
	}
	for _, tail := range []ClusterNodeSpec{
		{ReplicaID: 4, Name: "e", IP: "10.0.0.5", TCPPort: 1, ReplicaPort: 2, Rack: "r2"},
		{ReplicaID: 5, Name: "f", IP: "10.0.0.6", TCPPort: 1, ReplicaPort: 2, MetadataOnly: true},
	} {
		if err := out.Decode(tail.AppendTo(nil)); err != nil || out != tail {
			t.Fatalf("round trip with a tail: %+v, %v", out, err)
		}
	}
	bad := append(in.AppendTo(nil), 0, 0, 0, 0, 2) // empty rack, unknown flag
	if err := out.Decode(bad); err == nil {
		t.Fatal("unknown flag accepted")
	}
	var rm ClusterRemoveNode
	if err := rm.Decode([]byte{2}); err != nil || rm.ReplicaID != 2 {
		t.Fatalf("remove: %+v %v", rm, err)
	}
	if info, ok := LookupCommand(CmdClusterAddNode); !ok || info.Operation != OpNonReplicated || info.Name != "CLUSTER_ADD_NODE" {
		t.Fatalf("lookup: %+v %v", info, ok)
	}
	for _, c := range Commands() {
		if c.Code == CmdClusterAddNode || c.Code == CmdClusterRemoveNode {
			t.Fatal("extension listed among the reference commands")
		}
	}
}

func FuzzClusterNodeSpec(f *testing.F) {
	f.Add((&ClusterNodeSpec{ReplicaID: 1, Name: "n", IP: "10.0.0.1"}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var s ClusterNodeSpec
		if s.Decode(b) == nil {
			var again ClusterNodeSpec
			if err := again.Decode(s.AppendTo(nil)); err != nil || again != s {
				t.Fatalf("re-decode: %v", err)
			}
		}
	})
}
