package wire

import "testing"

func BenchmarkRequestHeaderEncode(b *testing.B) {
	h := RequestHeader{Prologue: Prologue{Size: 1024}, Client: Uint128{Lo: 1, Hi: 2}, Request: 9, Operation: OpSendMessages, Session: 3}
	buf := make([]byte, HeaderSize)
	b.ReportAllocs()
	b.SetBytes(HeaderSize)
	for b.Loop() {
		h.Encode(buf)
	}
}

func BenchmarkRequestHeaderDecode(b *testing.B) {
	buf := (&RequestHeader{Prologue: Prologue{Size: 1024}, Client: Uint128{Lo: 1, Hi: 2}, Request: 9, Operation: OpSendMessages, Session: 3}).AppendTo(nil)
	var h RequestHeader
	b.ReportAllocs()
	b.SetBytes(HeaderSize)
	for b.Loop() {
		if err := h.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReplyHeaderEncode(b *testing.B) {
	h := ReplyHeader{Prologue: Prologue{Size: 260}, Client: Uint128{Lo: 1}, Request: 9, Operation: OpCreateStream}
	buf := make([]byte, HeaderSize)
	b.ReportAllocs()
	b.SetBytes(HeaderSize)
	for b.Loop() {
		h.Encode(buf)
	}
}

func BenchmarkReplyHeaderDecode(b *testing.B) {
	buf := (&ReplyHeader{Prologue: Prologue{Size: 260}, Client: Uint128{Lo: 1}, Request: 9, Operation: OpCreateStream}).AppendTo(nil)
	var h ReplyHeader
	b.ReportAllocs()
	b.SetBytes(HeaderSize)
	for b.Loop() {
		if err := h.Decode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
