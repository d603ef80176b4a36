package wire

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// roundTripCase is one entry of the catalog round-trip tables: in encodes,
// decodes into fresh() equal to in, and re-encodes to the same bytes.
type roundTripCase struct {
	name  string
	in    Body
	fresh func() Body
	// strict: every proper prefix of the encoding must fail to decode
	// (false for bodies that end in a list or options block running to
	// the end, where a prefix on an element boundary is valid).
	strict bool
}

func runRoundTrips(t *testing.T, cases []roundTripCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			prefix := []byte("prefix")
			enc := tc.in.AppendTo(append([]byte(nil), prefix...))
			if !bytes.HasPrefix(enc, prefix) {
				t.Fatalf("AppendTo overwrote dst")
			}
			enc = enc[len(prefix):]
			got := tc.fresh()
			if err := got.Decode(enc); err != nil {
				t.Fatalf("decode %x: %v", enc, err)
			}
			if d := cmpDiff(tc.in, got); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
			if re := got.AppendTo(nil); !bytes.Equal(re, enc) {
				t.Errorf("re-encode:\n got %x\nwant %x", re, enc)
			}
			trailing := tc.fresh()
			err := trailing.Decode(append(enc[:len(enc):len(enc)], 0))
			switch {
			case prefixDecoded(tc.in) && err != nil:
				t.Errorf("request decode refused a trailing byte: %v", err)
			case prefixDecoded(tc.in):
				if d := cmpDiff(tc.in, trailing); d != "" {
					t.Errorf("trailing byte changed the value (-want +got):\n%s", d)
				}
			case err == nil:
				t.Errorf("decode accepted a trailing byte")
			}
			if tc.strict {
				for n := 0; n < len(enc); n++ {
					if err := tc.fresh().Decode(enc[:n]); err == nil {
						t.Errorf("decode accepted the %d-byte prefix of %d bytes", n, len(enc))
						break
					}
				}
			}
		})
	}
}

// tlvField builds one raw TLV field for malformed-block tests.
func tlvField(kind byte, length uint32, data string) []byte {
	b := []byte{kind}
	b = appendU32(b, length)
	return append(b, data...)
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// manyOptions returns n distinct options of the given value size.
func manyOptions(n, valueLen int) Options {
	out := make(Options, n)
	for i := range out {
		out[i] = Option{Key: "k" + itoa(uint64(i)), Kind: OptionKindRaw, Value: bytes.Repeat([]byte{'v'}, valueLen)}
	}
	return out
}

func TestOptionsRoundTrip(t *testing.T) {
	opts := Options{
		StringOption("compression_algorithm", "gzip"),
		Uint64Option("message_expiry", 3600000000),
		BoolOption("enforce_fsync", true),
		Uint32Option("messages_required_to_save", 7),
		Uint8Option("x", 2),
		{Key: "future", Kind: 200, Value: []byte{1, 2, 3}},
		{Key: strings.Repeat("k", 255), Kind: OptionKindRaw, Value: bytes.Repeat([]byte{0xff}, 255)},
	}
	runRoundTrips(t, []roundTripCase{
		{name: "empty", in: &Options{}, fresh: func() Body { return &Options{} }},
		{name: "mixed kinds", in: &opts, fresh: func() Body { return &Options{} }},
		{name: "1024 pairs", in: ptr(manyOptions(MaxOptionPairs, 1)), fresh: func() Body { return &Options{} }},
	})
}

func ptr[T any](v T) *T { return &v }

// TestOptionsWireBytes pins the TLV layout against encodings.md's example
// (content-type: text/plain) and the request/reply forms.
func TestOptionsWireBytes(t *testing.T) {
	o := Options{StringOption("content-type", "text/plain")}
	want := mustHex(t, "020c000000636f6e74656e742d74797065020a000000746578742f706c61696e")
	if got := o.AppendTo(nil); !bytes.Equal(got, want) {
		t.Errorf("request form:\n got %x\nwant %x", got, want)
	}
	if got := appendOptionsBlock(nil, o); !bytes.Equal(got, cat(appendU32(nil, uint32(len(want))), want)) {
		t.Errorf("reply form: %x", got)
	}
	if o.EncodedLen() != len(want) {
		t.Errorf("EncodedLen = %d, want %d", o.EncodedLen(), len(want))
	}
	if got := appendOptionsBlock(nil, nil); !bytes.Equal(got, []byte{0, 0, 0, 0}) {
		t.Errorf("empty reply block = %x", got)
	}
}

func TestOptionsDecodeErrors(t *testing.T) {
	key := tlvField(2, 1, "k")
	val := tlvField(1, 1, "v")
	pair := cat(key, val)
	tooMany := manyOptions(MaxOptionPairs+1, 1).AppendTo(nil)
	tooBig := manyOptions(400, 250).AppendTo(nil) // 400 × 262 bytes > 100000
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"key kind raw", cat(tlvField(1, 1, "k"), val), ErrInvalidCommand},
		{"key kind uint8", cat(tlvField(9, 1, "k"), val), ErrInvalidCommand},
		{"key not utf-8", cat(tlvField(2, 1, "\xff"), val), ErrInvalidCommand},
		{"key kind zero", cat(tlvField(0, 1, "k"), val), ErrInvalidCommand},
		{"value kind zero", cat(key, tlvField(0, 1, "v")), ErrInvalidCommand},
		{"key length zero", cat(tlvField(2, 0, ""), val), ErrInvalidCommand},
		{"value length zero", cat(key, tlvField(1, 0, "")), ErrInvalidCommand},
		{"value length 256", cat(key, tlvField(1, 256, strings.Repeat("v", 256))), ErrInvalidCommand},
		{"key length 256", cat(tlvField(2, 256, strings.Repeat("k", 256)), val), ErrInvalidCommand},
		{"length past end", cat(key, tlvField(1, 5, "v")), ErrInvalidCommand},
		{"huge length", cat(key, tlvField(1, 0xffffffff, "v")), ErrInvalidCommand},
		{"truncated prefix", cat(key, []byte{1, 1, 0}), ErrInvalidCommand},
		{"odd field count", key, ErrInvalidCommand},
		{"duplicate key", cat(pair, pair), ErrInvalidCommand},
		{"duplicate key later", cat(pair, tlvField(2, 1, "x"), val, pair), ErrInvalidCommand},
		{"1025 pairs", tooMany, ErrOptionsBlockTooLarge},
		{"over 100000 bytes", tooBig, ErrOptionsBlockTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var o Options
			if err := o.Decode(tc.in); !errors.Is(err, tc.want) {
				t.Errorf("Decode = %v, want %v", err, tc.want)
			}
			// The same bytes in the reply form fail the same way.
			r := newReader(cat(appendU32(nil, uint32(len(tc.in))), tc.in))
			r.optionsBlock()
			if err := r.finish(); !errors.Is(err, tc.want) {
				t.Errorf("reply form = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestOptionsBlockLength(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"length over the limit", appendU32(nil, MaxOptionsBlockBytes+1), ErrOptionsBlockTooLarge},
		{"length past the end", cat(appendU32(nil, 12), tlvField(2, 1, "k")), ErrInvalidCommand},
		{"short length", []byte{1, 0}, ErrInvalidCommand},
		{"exactly the limit is not too large", cat(appendU32(nil, MaxOptionsBlockBytes), make([]byte, 10)), ErrInvalidCommand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newReader(tc.in)
			r.optionsBlock()
			if err := r.finish(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	// A block near both limits decodes.
	big := manyOptions(MaxOptionPairs, 80)
	enc := big.AppendTo(nil)
	if len(enc) > MaxOptionsBlockBytes || len(enc) < 90000 {
		t.Fatalf("test block is %d bytes", len(enc))
	}
	var o Options
	if err := o.Decode(enc); err != nil || len(o) != MaxOptionPairs {
		t.Errorf("large block: %d pairs, %v", len(o), err)
	}
	if err := big.Validate(); err != nil {
		t.Errorf("Validate large block: %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Options
		want error
	}{
		{"empty", nil, nil},
		{"valid", Options{StringOption("a", "b"), Uint64Option("c", 1)}, nil},
		{"empty key", Options{StringOption("", "b")}, ErrInvalidCommand},
		{"key too long", Options{StringOption(strings.Repeat("k", 256), "b")}, ErrInvalidCommand},
		{"key not utf-8", Options{StringOption("\xff", "b")}, ErrInvalidCommand},
		{"kind zero", Options{{Key: "a", Value: []byte{1}}}, ErrInvalidCommand},
		{"empty value", Options{{Key: "a", Kind: OptionKindRaw}}, ErrInvalidCommand},
		{"value too long", Options{{Key: "a", Kind: OptionKindRaw, Value: make([]byte, 256)}}, ErrInvalidCommand},
		{"duplicate", Options{StringOption("a", "b"), StringOption("a", "c")}, ErrInvalidCommand},
		{"too many pairs", manyOptions(MaxOptionPairs+1, 1), ErrOptionsBlockTooLarge},
		{"too many bytes", manyOptions(400, 250), ErrOptionsBlockTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.in.Validate(); !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Errorf("Validate = %v, want %v", err, tc.want)
			}
			if tc.want != nil {
				return
			}
			var o Options
			if err := o.Decode(tc.in.AppendTo(nil)); err != nil {
				t.Errorf("a valid block does not decode: %v", err)
			}
		})
	}
}

func TestOptionsDecodeDoesNotAlias(t *testing.T) {
	src := Options{StringOption("k", "value")}.AppendTo(nil)
	var o Options
	if err := o.Decode(src); err != nil {
		t.Fatal(err)
	}
	for i := range src {
		src[i] = 0
	}
	if string(o[0].Value) != "value" || o[0].Key != "k" {
		t.Errorf("decoded option changed with its input: %+v", o[0])
	}
}

func TestOptionConstructors(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  Option
		want Option
	}{
		{"string", StringOption("a", "xy"), Option{Key: "a", Kind: OptionKindString, Value: []byte("xy")}},
		{"bool true", BoolOption("a", true), Option{Key: "a", Kind: OptionKindBool, Value: []byte{1}}},
		{"bool false", BoolOption("a", false), Option{Key: "a", Kind: OptionKindBool, Value: []byte{0}}},
		{"uint8", Uint8Option("a", 9), Option{Key: "a", Kind: OptionKindUint8, Value: []byte{9}}},
		{"uint32", Uint32Option("a", 0x01020304), Option{Key: "a", Kind: OptionKindUint32, Value: []byte{4, 3, 2, 1}}},
		{"uint64", Uint64Option("a", 0x0102030405060708), Option{Key: "a", Kind: OptionKindUint64, Value: []byte{8, 7, 6, 5, 4, 3, 2, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if d := cmpDiff(tc.want, tc.got); d != "" {
				t.Error(d)
			}
			if fs := tc.got.Kind.FixedSize(); fs != 0 && fs != len(tc.got.Value) {
				t.Errorf("value is %d bytes, kind %v needs %d", len(tc.got.Value), tc.got.Kind, fs)
			}
		})
	}
	o := Options{StringOption("a", "1"), StringOption("b", "2")}
	if got, ok := o.Get("b"); !ok || string(got.Value) != "2" {
		t.Errorf("Get(b) = %+v, %v", got, ok)
	}
	if _, ok := o.Get("c"); ok {
		t.Errorf("Get(c) found a missing key")
	}
}

func TestOptionKind(t *testing.T) {
	for _, tc := range []struct {
		kind OptionKind
		name string
		size int
	}{
		{0, "kind(0)", 0},
		{OptionKindRaw, "raw", 0},
		{OptionKindString, "string", 0},
		{OptionKindBool, "bool", 1},
		{OptionKindInt8, "int8", 1},
		{OptionKindInt16, "int16", 2},
		{OptionKindInt32, "int32", 4},
		{OptionKindInt64, "int64", 8},
		{OptionKindInt128, "int128", 16},
		{OptionKindUint8, "uint8", 1},
		{OptionKindUint16, "uint16", 2},
		{OptionKindUint32, "uint32", 4},
		{OptionKindUint64, "uint64", 8},
		{OptionKindUint128, "uint128", 16},
		{OptionKindFloat32, "float32", 4},
		{OptionKindFloat64, "float64", 8},
		{16, "kind(16)", 0},
		{255, "kind(255)", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.kind.String(); got != tc.name {
				t.Errorf("String = %q", got)
			}
			if got := tc.kind.FixedSize(); got != tc.size {
				t.Errorf("FixedSize = %d", got)
			}
		})
	}
}
