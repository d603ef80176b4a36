package storage

import (
	"reflect"
	"testing"
)

func TestOffsetsAll(t *testing.T) {
	o, err := OpenOffsets(t.TempDir(), false)
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if got := o.All(); len(got) != 0 {
		t.Fatalf("empty store lists %v", got)
	}
	for _, e := range []OffsetEntry{{KindGroup, 2, 9}, {KindConsumer, 7, 1}, {KindConsumer, 3, 5}} {
		if err := o.Store(e.Kind, e.ID, e.Offset); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := o.Delete(KindConsumer, 7); err != nil {
		t.Fatal(err)
	}
	want := []OffsetEntry{{KindConsumer, 3, 5}, {KindGroup, 2, 9}}
	if got := o.All(); !reflect.DeepEqual(got, want) {
		t.Fatalf("All() = %v, want %v", got, want)
	}
}
