package wire

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

func TestHeaderKinds(t *testing.T) {
	sizes := map[HeaderKind]int{
		HeaderRaw: 0, HeaderString: 0, HeaderBool: 1, HeaderInt8: 1, HeaderInt16: 2, HeaderInt32: 4,
		HeaderInt64: 8, HeaderInt128: 16, HeaderUint8: 1, HeaderUint16: 2, HeaderUint32: 4,
		HeaderUint64: 8, HeaderUint128: 16, HeaderFloat32: 4, HeaderFloat64: 8,
	}
	for k := 0; k < 256; k++ {
		kind := HeaderKind(k)
		want, defined := sizes[kind]
		if kind.Defined() != defined {
			t.Errorf("%d.Defined() = %v", k, kind.Defined())
		}
		if kind.FixedSize() != want {
			t.Errorf("%d.FixedSize() = %d, want %d", k, kind.FixedSize(), want)
		}
		if defined == (kind.String() == "HeaderKind("+itoa(uint64(k))+")") {
			t.Errorf("%d.String() = %s", k, kind.String())
		}
	}
	if HeaderString.String() != "String" || HeaderFloat64.String() != "Float64" {
		t.Errorf("names")
	}
}

func TestHeaderFieldValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    HeaderField
		want error
	}{
		{"raw", RawHeader([]byte{0xff}), nil},
		{"string", StringHeader("text/plain"), nil},
		{"bool true", BoolHeader(true), nil},
		{"bool false", BoolHeader(false), nil},
		{"int8", Int8Header(-1), nil},
		{"int16", Int16Header(-2), nil},
		{"int32", Int32Header(-3), nil},
		{"int64", Int64Header(-4), nil},
		{"int128", Int128Header(Uint128{Lo: 1, Hi: math.MaxUint64}), nil},
		{"uint8", Uint8Header(5), nil},
		{"uint16", Uint16Header(6), nil},
		{"uint32", Uint32Header(7), nil},
		{"uint64", Uint64Header(8), nil},
		{"uint128", Uint128Header(Uint128{Lo: 9}), nil},
		{"float32", Float32Header(1.5), nil},
		{"float64", Float64Header(2.5), nil},
		{"kind 0", HeaderField{Kind: 0, Data: []byte{1}}, ErrInvalidHeaderKind},
		{"kind 16", HeaderField{Kind: 16, Data: []byte{1}}, ErrInvalidHeaderKind},
		{"empty raw", RawHeader(nil), ErrInvalidHeaderValue},
		{"raw 256", RawHeader(make([]byte, 256)), ErrInvalidHeaderValue},
		{"string not utf8", HeaderField{Kind: HeaderString, Data: []byte{0xff}}, ErrInvalidHeaderValue},
		{"bool 2", HeaderField{Kind: HeaderBool, Data: []byte{2}}, ErrInvalidHeaderValue},
		{"int32 short", HeaderField{Kind: HeaderInt32, Data: []byte{1, 2}}, ErrInvalidHeaderValue},
		{"uint64 long", HeaderField{Kind: HeaderUint64, Data: make([]byte, 9)}, ErrInvalidHeaderValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.f.Validate(); !errors.Is(err, tc.want) {
				t.Errorf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestHeaderFieldAccessors(t *testing.T) {
	if v, err := BoolHeader(true).Bool(); err != nil || !v {
		t.Errorf("Bool = %v, %v", v, err)
	}
	for _, tc := range []struct {
		f    HeaderField
		want uint64
	}{{Uint8Header(200), 200}, {Uint16Header(60000), 60000}, {Uint32Header(4e9), 4e9}, {Uint64Header(math.MaxUint64), math.MaxUint64}} {
		if v, err := tc.f.Uint64(); err != nil || v != tc.want {
			t.Errorf("%v.Uint64() = %d, %v", tc.f.Kind, v, err)
		}
	}
	for _, tc := range []struct {
		f    HeaderField
		want int64
	}{{Int8Header(-100), -100}, {Int16Header(-30000), -30000}, {Int32Header(-2e9), -2e9}, {Int64Header(math.MinInt64), math.MinInt64}} {
		if v, err := tc.f.Int64(); err != nil || v != tc.want {
			t.Errorf("%v.Int64() = %d, %v", tc.f.Kind, v, err)
		}
	}
	if v, err := Float32Header(1.25).Float64(); err != nil || v != 1.25 {
		t.Errorf("Float32 = %v, %v", v, err)
	}
	if v, err := Float64Header(-3.5).Float64(); err != nil || v != -3.5 {
		t.Errorf("Float64 = %v, %v", v, err)
	}
	if v, err := StringHeader("abc").Text(); err != nil || v != "abc" {
		t.Errorf("Text = %q, %v", v, err)
	}
	raw := RawHeader([]byte{1})
	if _, err := raw.Bool(); err == nil {
		t.Errorf("raw Bool")
	}
	if _, err := raw.Uint64(); err == nil {
		t.Errorf("raw Uint64")
	}
	if _, err := raw.Int64(); err == nil {
		t.Errorf("raw Int64")
	}
	if _, err := raw.Float64(); err == nil {
		t.Errorf("raw Float64")
	}
	if _, err := raw.Text(); err == nil {
		t.Errorf("raw Text")
	}
}

// contentType is the encodings.md example block.
const contentTypeHex = "020c000000636f6e74656e742d74797065020a000000746578742f706c61696e"

func TestUserHeadersRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    UserHeaders
		wire string
	}{
		{"empty", nil, ""},
		{"content type", UserHeaders{{Key: StringHeader("content-type"), Value: StringHeader("text/plain")}}, contentTypeHex},
		{"typed values and non-string key", UserHeaders{
			{Key: StringHeader("n"), Value: Uint32Header(7)},
			{Key: Int32Header(1), Value: BoolHeader(true)},
		}, "0201000000" + "6e" + "0b04000000" + "07000000" + "0604000000" + "01000000" + "0301000000" + "01"},
		{"undefined kinds forwarded", UserHeaders{{Key: HeaderField{Kind: 200, Data: []byte{1}}, Value: HeaderField{Kind: 255, Data: []byte{2}}}}, "c80100000001" + "ff0100000002"},
		{"duplicate keys kept", UserHeaders{{Key: StringHeader("a"), Value: RawHeader([]byte{1})}, {Key: StringHeader("a"), Value: RawHeader([]byte{2})}}, "0201000000610101000000010201000000610101000000" + "02"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.h.Validate(); err != nil {
				t.Fatal(err)
			}
			wire := mustHex(t, tc.wire)
			if tc.h.EncodedLen() != len(wire) {
				t.Errorf("EncodedLen %d, want %d", tc.h.EncodedLen(), len(wire))
			}
			h := tc.h
			checkBody(t, wire, &h, &UserHeaders{})
			if n, err := ValidateUserHeaders(wire); err != nil || n != len(tc.h) {
				t.Errorf("ValidateUserHeaders = %d, %v", n, err)
			}
		})
	}
}

func TestUserHeadersDecodeReusesAndAliases(t *testing.T) {
	wire := mustHex(t, contentTypeHex)
	h := make(UserHeaders, 0, 4)
	backing := &h[:1][0]
	if err := h.Decode(wire); err != nil {
		t.Fatal(err)
	}
	if &h[0] != backing {
		t.Errorf("backing array not reused")
	}
	if &h[0].Key.Data[0] != &wire[5] {
		t.Errorf("key data copied")
	}
	if n := testing.AllocsPerRun(100, func() { _ = h.Decode(wire) }); n != 0 {
		t.Errorf("Decode into capacity allocates %v", n)
	}
}

func TestUserHeadersStructuralErrors(t *testing.T) {
	long := append([]byte{2, 0, 1, 0, 0}, make([]byte, 256)...)
	for _, tc := range []struct {
		name string
		wire []byte
	}{
		{"kind 0 key", mustHex(t, "000100000061"+"020100000062")},
		{"kind 0 value", mustHex(t, "020100000061"+"000100000062")},
		{"zero length", mustHex(t, "0200000000"+"020100000062")},
		{"length 256", long},
		{"length past end", mustHex(t, "020500000061")},
		{"huge length", mustHex(t, "02ffffffff61")},
		{"truncated prefix", mustHex(t, "02010000")},
		{"odd field count", mustHex(t, "020100000061")},
		{"three fields", mustHex(t, "020100000061"+"020100000062"+"020100000063")},
		{"trailing byte", mustHex(t, "020100000061"+"020100000062"+"00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ValidateUserHeaders(tc.wire); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("ValidateUserHeaders = %v", err)
			}
			var h UserHeaders
			if err := h.Decode(tc.wire); !errors.Is(err, ErrInvalidCommand) {
				t.Errorf("Decode = %v", err)
			}
			it := IterUserHeaders(tc.wire)
			for _, ok := it.Next(); ok; _, ok = it.Next() {
			}
			if it.Err() == nil {
				t.Errorf("iterator reports no error")
			}
		})
	}
}

func TestUserHeadersValidate(t *testing.T) {
	big := make(UserHeaders, 0, 200)
	for range 200 {
		big = append(big, UserHeader{Key: RawHeader(make([]byte, 255)), Value: RawHeader(make([]byte, 255))})
	}
	for _, tc := range []struct {
		name string
		h    UserHeaders
		want error
	}{
		{"kind 0", UserHeaders{{Key: HeaderField{Data: []byte{1}}, Value: RawHeader([]byte{1})}}, ErrInvalidHeaderKind},
		{"empty key", UserHeaders{{Key: StringHeader(""), Value: RawHeader([]byte{1})}}, ErrInvalidHeaderKey},
		{"long key", UserHeaders{{Key: RawHeader(make([]byte, 256)), Value: RawHeader([]byte{1})}}, ErrInvalidHeaderKey},
		{"empty value", UserHeaders{{Key: StringHeader("k"), Value: RawHeader(nil)}}, ErrInvalidHeaderValue},
		{"too big", big, ErrTooBigUserHeaders},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.h.Validate(); !errors.Is(err, tc.want) {
				t.Errorf("Validate = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestUserHeadersIter(t *testing.T) {
	h := UserHeaders{{Key: StringHeader("a"), Value: Uint8Header(1)}, {Key: StringHeader("b"), Value: Uint8Header(2)}}
	wire := h.AppendTo(nil)
	it := IterUserHeaders(wire)
	var got UserHeaders
	for p, ok := it.Next(); ok; p, ok = it.Next() {
		got = append(got, p)
	}
	if it.Err() != nil {
		t.Fatal(it.Err())
	}
	if d := cmpDiff(h, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if !bytes.Equal(got.AppendTo(nil), wire) {
		t.Errorf("re-encode differs")
	}
}
