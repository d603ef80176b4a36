package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func sampleVerifyReply() VerifyPartitionReply {
	return VerifyPartitionReply{Partitions: []PartitionVerify{
		{PartitionID: 1, Status: VerifyChecked, Segments: 3, Records: 120, Bytes: 1 << 20},
		{PartitionID: 2, Status: VerifyChecked, Segments: 2, Records: 80, Bytes: 4096, Damaged: []DamagedRange{
			{First: 10, Last: 19, Pos: 2048, Len: 512, File: "streams/1/topics/1-3/partitions/2/00000000000000000000.log", Reason: "checksum mismatch"},
			{First: 40, Last: 40, Pos: 0, Len: 77, File: "streams/1/topics/1-3/partitions/2/00000000000000000040.log", Reason: "length"},
		}},
		{PartitionID: 3, Status: VerifyNotHeld},
		{PartitionID: 4, Status: VerifyStopped, Error: "corrupt record at position 12"},
		{PartitionID: 5, Status: VerifyFailed, Segments: 1, Records: 4, Bytes: 10, Error: "read: input/output error"},
	}}
}

func TestVerifyPartitionBody(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   VerifyPartition
		hex  string
	}{
		{name: "all partitions", in: VerifyPartition{StreamID: NumericID(1), TopicID: NumericID(2)},
			hex: "01040100000001040200000000" + "00000000"},
		{name: "one partition by name", in: VerifyPartition{StreamID: NamedID("s"), TopicID: NumericID(7), Partition: SomePartition(3)},
			hex: "020173" + "010407000000" + "0103000000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.in.AppendTo(nil)
			if got := hex.EncodeToString(b); got != tc.hex {
				t.Fatalf("encoding %s, want %s", got, tc.hex)
			}
			var out VerifyPartition
			if err := out.Decode(append(b, 9, 9)); err != nil || !reflect.DeepEqual(out, tc.in) {
				t.Fatalf("decode with trailing bytes: %+v %v", out, err)
			}
		})
	}
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{name: "empty", body: nil},
		{name: "no topic", body: NumericID(1).AppendTo(nil)},
		{name: "no partition", body: NumericID(2).AppendTo(NumericID(1).AppendTo(nil))},
		{name: "bad partition flag", body: append(NumericID(2).AppendTo(NumericID(1).AppendTo(nil)), 2, 0, 0, 0, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out VerifyPartition
			if err := out.Decode(tc.body); err == nil {
				t.Fatalf("decoded %+v", out)
			}
		})
	}
}

func TestVerifyPartitionReplyRoundTrip(t *testing.T) {
	for name, v := range map[string]VerifyPartitionReply{
		"sample": sampleVerifyReply(),
		"empty":  {},
	} {
		t.Run(name, func(t *testing.T) {
			b := v.AppendTo(nil)
			var out VerifyPartitionReply
			if err := out.Decode(b); err != nil {
				t.Fatalf("decode: %v", err)
			}
			if !reflect.DeepEqual(out, v) {
				t.Fatalf("round trip:\n got %+v\nwant %+v", out, v)
			}
			if !bytes.Equal(out.AppendTo(nil), b) {
				t.Fatal("re-encoding differs")
			}
		})
	}
}

// TestVerifyPartitionReplyLayout pins the bytes of a small reply.
func TestVerifyPartitionReplyLayout(t *testing.T) {
	v := VerifyPartitionReply{Partitions: []PartitionVerify{{PartitionID: 2, Status: VerifyChecked, Segments: 1, Records: 5, Bytes: 6,
		Damaged: []DamagedRange{{First: 3, Last: 4, Pos: 7, Len: 8, File: "f", Reason: "r"}}}}}
	want := "01000000" + "02000000" + "00" + "01000000" + "0500000000000000" + "0600000000000000" + "00000000" + "01000000" +
		"0300000000000000" + "0400000000000000" + "0700000000000000" + "0800000000000000" + "0100000066" + "0100000072"
	if got := hex.EncodeToString(v.AppendTo(nil)); got != want {
		t.Fatalf("layout\n got %s\nwant %s", got, want)
	}
}

func TestVerifyPartitionReplyRejects(t *testing.T) {
	good := sampleVerifyReply()
	enc := good.AppendTo(nil)
	one := (&VerifyPartitionReply{Partitions: []PartitionVerify{{PartitionID: 1}}}).AppendTo(nil)
	statusAt := 4 + 4
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{name: "empty", body: nil},
		{name: "trailing byte", body: append(append([]byte(nil), enc...), 0)},
		{name: "truncated", body: enc[:len(enc)-1]},
		{name: "count beyond body", body: []byte{0xff, 0xff, 0xff, 0x0f}},
		{name: "unknown status", body: func() []byte { b := append([]byte(nil), one...); b[statusAt] = 4; return b }()},
		{name: "range count beyond body", body: func() []byte {
			b := append([]byte(nil), one...)
			copy(b[len(b)-4:], []byte{2, 0, 0, 0})
			return b
		}()},
		{name: "too many ranges", body: func() []byte {
			b := append([]byte(nil), one[:len(one)-4]...)
			b = appendU32(b, MaxVerifyRanges+1)
			return append(b, make([]byte, (MaxVerifyRanges+1)*minDamagedRangeSize)...)
		}()},
		{name: "text over limit", body: func() []byte {
			b := append([]byte(nil), one[:len(one)-8]...)
			b = appendU32(b, MaxVerifyText+1)
			b = append(b, strings.Repeat("x", MaxVerifyText+1)...)
			return appendU32(b, 0)
		}()},
		{name: "text not utf8", body: func() []byte {
			b := append([]byte(nil), one[:len(one)-8]...)
			b = appendStr32(b, "\xff")
			return appendU32(b, 0)
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out VerifyPartitionReply
			if err := out.Decode(tc.body); !errors.Is(err, ErrInvalidCommand) {
				t.Fatalf("decode: %v (%+v)", err, out)
			}
		})
	}
}

func TestVerifyPartitionReplyCuts(t *testing.T) {
	long := strings.Repeat("é", MaxVerifyText) // 2 bytes a rune
	v := VerifyPartitionReply{Partitions: []PartitionVerify{{PartitionID: 1, Error: "bad \xff byte",
		Damaged: make([]DamagedRange, MaxVerifyRanges+3)}}}
	v.Partitions[0].Damaged[0].File = long
	var out VerifyPartitionReply
	if err := out.Decode(v.AppendTo(nil)); err != nil {
		t.Fatalf("decode: %v", err)
	}
	p := out.Partitions[0]
	if len(p.Damaged) != MaxVerifyRanges || len(p.Damaged[0].File) != MaxVerifyText || p.Error != "bad \uFFFD byte" {
		t.Fatalf("cut: %d ranges, file of %d bytes, error %q", len(p.Damaged), len(p.Damaged[0].File), p.Error)
	}
}

func FuzzVerifyPartition(f *testing.F) {
	f.Add((&VerifyPartition{StreamID: NumericID(1), TopicID: NamedID("t"), Partition: SomePartition(2)}).AppendTo(nil))
	f.Add((&VerifyPartition{StreamID: NumericID(1), TopicID: NumericID(1)}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var v VerifyPartition
		if v.Decode(b) == nil {
			var again VerifyPartition
			if err := again.Decode(v.AppendTo(nil)); err != nil || !reflect.DeepEqual(again, v) {
				t.Fatalf("re-decode: %+v %v", again, err)
			}
		}
	})
}

func FuzzVerifyPartitionReply(f *testing.F) {
	s := sampleVerifyReply()
	f.Add(s.AppendTo(nil))
	f.Add((&VerifyPartitionReply{}).AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		var v VerifyPartitionReply
		if v.Decode(b) == nil {
			enc := v.AppendTo(nil)
			if !bytes.Equal(enc, b) {
				t.Fatalf("re-encoding differs")
			}
			var again VerifyPartitionReply
			if err := again.Decode(enc); err != nil || !reflect.DeepEqual(again, v) {
				t.Fatalf("re-decode: %v", err)
			}
		}
	})
}
