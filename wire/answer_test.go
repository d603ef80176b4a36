package wire

import (
	"bytes"
	"encoding/binary"
	"testing"
)

func TestReadAnswer(t *testing.T) {
	h := ReplyHeader{Prologue: Prologue{Size: HeaderSize + 3}, Request: 7, Operation: OpCreateStream}
	frame := append(h.AppendTo(nil), 1, 2, 3)
	a, err := ReadAnswer(bytes.NewReader(frame))
	if err != nil || a.Kind != KindReply || a.Reply.Request != 7 || !bytes.Equal(a.Body, []byte{1, 2, 3}) {
		t.Fatalf("ReadAnswer: %+v, %v", a, err)
	}
	if _, err := ReadAnswer(bytes.NewReader(frame[:HeaderSize+1])); err == nil {
		t.Fatal("a short body was accepted")
	}
	bad := append([]byte(nil), frame...)
	binary.LittleEndian.PutUint32(bad[offSize:], 100) // size below the header
	if _, err := ReadAnswer(bytes.NewReader(bad)); err == nil {
		t.Fatal("a size below the header was accepted")
	}
}

func FuzzReadAnswer(f *testing.F) {
	h := ReplyHeader{Prologue: Prologue{Size: HeaderSize}}
	f.Add(h.AppendTo(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ReadAnswer(bytes.NewReader(b))
		if err == nil && len(a.Body)+HeaderSize > len(b) {
			t.Fatalf("body of %d bytes from %d input bytes", len(a.Body), len(b))
		}
	})
}
