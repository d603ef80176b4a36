package wire

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func samplePartitionMap() PartitionMap {
	return PartitionMap{
		Nodes: []PartitionMapNode{
			{ReplicaID: 0, Name: "node-0", Host: "10.0.0.1", TCPPort: 8090, HTTPPort: 3000},
			{ReplicaID: 2, Name: "node-2", Host: "node2.example", TCPPort: 8092, QUICPort: 8082, WebSocketPort: 8094},
		},
		Topics: []PartitionMapTopic{
			{StreamID: 1, StreamName: "orders", TopicID: 3, TopicName: "created", Partitions: []PartitionPlacement{
				{PartitionID: 0, Replicas: []uint8{2, 0}, Leader: 2, HasLeader: true, CaughtUp: []uint8{0, 2}, HasCaughtUp: true},
				{PartitionID: 1, Replicas: []uint8{0, 2}},
				{PartitionID: 2, Replicas: []uint8{0}, Leader: 0, HasLeader: true, HasCaughtUp: true},
			}},
			{StreamID: 2, StreamName: "s", TopicID: 1, TopicName: "empty"},
		},
	}
}

func TestPartitionMapRoundTrip(t *testing.T) {
	for name, m := range map[string]PartitionMap{
		"sample": samplePartitionMap(),
		"empty":  {},
		"nodes":  {Nodes: []PartitionMapNode{{ReplicaID: 255, Name: "", Host: ""}}},
	} {
		t.Run(name, func(t *testing.T) {
			if err := m.Validate(); err != nil {
				t.Fatal(err)
			}
			b := m.AppendTo(nil)
			var out PartitionMap
			if err := out.Decode(b); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(out, m) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", out, m)
			}
			if !bytes.Equal(out.AppendTo(nil), b) {
				t.Fatal("re-encoding differs")
			}
		})
	}
}

// TestPartitionMapLayout pins the bytes of a small map.
func TestPartitionMapLayout(t *testing.T) {
	m := PartitionMap{
		Nodes: []PartitionMapNode{{ReplicaID: 1, Name: "a", Host: "h", TCPPort: 0x0102}},
		Topics: []PartitionMapTopic{{StreamID: 7, StreamName: "s", TopicID: 8, TopicName: "t", Partitions: []PartitionPlacement{
			{PartitionID: 5, Replicas: []uint8{1, 2}, Leader: 2, HasLeader: true, CaughtUp: []uint8{2}, HasCaughtUp: true},
		}}},
	}
	want := []byte{
		1, 0, 0, 0, // nodes_count
		1,               // replica_id
		1, 0, 0, 0, 'a', // name
		1, 0, 0, 0, 'h', // host
		2, 1, 0, 0, 0, 0, 0, 0, // tcp, quic, http, websocket
		1, 0, 0, 0, // topics_count
		7, 0, 0, 0, 1, 's', // stream
		8, 0, 0, 0, 1, 't', // topic
		1, 0, 0, 0, // partitions_count
		5, 0, 0, 0, // partition_id
		2, 1, 2, // replicas
		3, 2, // flags (leader, caught up), leader
		1, 2, // caught_up
	}
	if got := m.AppendTo(nil); !bytes.Equal(got, want) {
		t.Fatalf("layout:\n got %v\nwant %v", got, want)
	}
}

func TestPartitionMapDecodeRejects(t *testing.T) {
	good := samplePartitionMap()
	enc := good.AppendTo(nil)
	placement := func(p PartitionPlacement) []byte {
		m := PartitionMap{Topics: []PartitionMapTopic{{StreamID: 1, StreamName: "s", TopicID: 1, TopicName: "t", Partitions: []PartitionPlacement{p}}}}
		return m.AppendTo(nil)
	}
	withFlags := func(flags, leader byte) []byte {
		b := placement(PartitionPlacement{PartitionID: 1})
		// [.. partition_id][replicas 0][flags][leader][caught_up 0]
		b[len(b)-3], b[len(b)-2] = flags, leader
		return b
	}
	caughtUpWithoutFlag := placement(PartitionPlacement{PartitionID: 1, Replicas: []uint8{0}})
	caughtUpWithoutFlag = append(caughtUpWithoutFlag[:len(caughtUpWithoutFlag)-1], 1, 0)
	for name, b := range map[string][]byte{
		"trailing byte":           append(append([]byte(nil), enc...), 0),
		"truncated":               enc[:len(enc)-1],
		"short nodes count":       {1, 0},
		"too many nodes":          {0x01, 0x01, 0, 0, 0, 0, 0, 0},
		"nodes beyond the bytes":  {3, 0, 0, 0, 0},
		"topics beyond the bytes": {0, 0, 0, 0, 0xff, 0xff, 0xff, 0x0f},
		"partitions beyond bytes": {0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 's', 1, 0, 0, 0, 1, 't', 0xff, 0xff, 0xff, 0xff},
		"empty stream name":       {0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 1, 't', 0, 0, 0, 0},
		"unknown flag bit":        withFlags(4, 0),
		"leader without flag":     withFlags(0, 3),
		"caught up without flag":  caughtUpWithoutFlag,
		"invalid utf-8 node name": {1, 0, 0, 0, 0, 1, 0, 0, 0, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	} {
		var m PartitionMap
		if err := m.Decode(b); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("%s: decode error %v, want ErrInvalidCommand", name, err)
		}
	}
	var m PartitionMap
	if err := m.Decode(withFlags(1, 3)); err != nil || !m.Topics[0].Partitions[0].HasLeader || m.Topics[0].Partitions[0].Leader != 3 {
		t.Fatalf("leader with its flag: %+v %v", m, err)
	}
}

func TestPartitionMapValidate(t *testing.T) {
	long := make([]uint8, 256)
	for name, m := range map[string]PartitionMap{
		"too many nodes":    {Nodes: make([]PartitionMapNode, MaxPartitionMapNodes+1)},
		"empty topic name":  {Topics: []PartitionMapTopic{{StreamName: "s"}}},
		"long stream name":  {Topics: []PartitionMapTopic{{StreamName: strings.Repeat("s", 256), TopicName: "t"}}},
		"replicas over 255": {Topics: []PartitionMapTopic{{StreamName: "s", TopicName: "t", Partitions: []PartitionPlacement{{Replicas: long}}}}},
		"caught up over 255": {Topics: []PartitionMapTopic{{StreamName: "s", TopicName: "t",
			Partitions: []PartitionPlacement{{CaughtUp: long, HasCaughtUp: true}}}}},
		"node name not utf-8": {Nodes: []PartitionMapNode{{Name: "\xff"}}},
	} {
		if err := m.Validate(); !errors.Is(err, ErrInvalidCommand) {
			t.Errorf("%s: %v, want ErrInvalidCommand", name, err)
		}
	}
}

func TestClusterPartitionsRequest(t *testing.T) {
	var c ClusterPartitions
	if b := c.AppendTo(nil); len(b) != 0 {
		t.Fatalf("no flags: body %v, want empty", b)
	}
	c.Flags = PartitionMapLeadersOnly
	b := c.AppendTo(nil)
	var out ClusterPartitions
	if err := out.Decode(b); err != nil || out.Flags != PartitionMapLeadersOnly {
		t.Fatalf("flags: %+v %v", out, err)
	}
	if err := out.Decode(nil); err != nil || out.Flags != 0 {
		t.Fatalf("empty body: %+v %v", out, err)
	}
}

func TestAttachSessionBody(t *testing.T) {
	login := LoginRegister{Version: ClientVersionInfo{ProtocolVersion: ProtocolVersion, SDKName: "go", SDKVersion: "1"}, Username: "u", Password: "p"}
	in := AttachSession{Session: 42, Login: login.AppendTo(nil)}
	var out AttachSession
	if err := out.Decode(in.AppendTo(nil)); err != nil || out.Session != 42 || !bytes.Equal(out.Login, in.Login) {
		t.Fatalf("round trip: %+v %v", out, err)
	}
	if err := out.Decode(make([]byte, 8)); !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("session 0: %v", err)
	}
	if err := out.Decode([]byte{1, 2}); !errors.Is(err, ErrInvalidCommand) {
		t.Fatalf("short: %v", err)
	}
}

func TestExtensionCommandsLookup(t *testing.T) {
	for code, name := range map[Command]string{
		CmdClusterPartitions: "CLUSTER_PARTITIONS",
		CmdClusterRebalance:  "CLUSTER_REBALANCE",
		CmdAttachSession:     "ATTACH_SESSION",
		CmdVerifyPartition:   "VERIFY_PARTITION",
		CmdPartitionTiers:    "PARTITION_TIERS",
	} {
		info, ok := LookupCommand(code)
		if !ok || info.Name != name || info.Operation != OpNonReplicated || info.Plane != PlaneRead {
			t.Errorf("%d: %+v %v", code, info, ok)
		}
		for _, c := range Commands() {
			if c.Code == code {
				t.Errorf("%s listed among the reference commands", name)
			}
		}
	}
}

func FuzzPartitionMap(f *testing.F) {
	m := samplePartitionMap()
	f.Add(m.AppendTo(nil))
	f.Add((&PartitionMap{}).AppendTo(nil))
	f.Add([]byte{1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m PartitionMap
		if m.Decode(b) != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("decoded map does not validate: %v", err)
		}
		enc := m.AppendTo(nil)
		if !bytes.Equal(enc, b) {
			t.Fatalf("re-encoding differs:\n got %x\nwant %x", enc, b)
		}
		var again PartitionMap
		if err := again.Decode(enc); err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("re-decode: %v", err)
		}
	})
}
