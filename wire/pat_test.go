package wire

import (
	"bytes"
	"strings"
	"testing"
)

var sampleCreatePATs = map[string]CreatePersonalAccessToken{
	"server default": {Name: "ci", Expiry: PATExpiryServerDefault},
	"never":          {Name: "forever", Expiry: PATExpiryNever},
	"one hour":       {Name: "hour", Expiry: 3_600_000_000},
	"go sdk quirk":   {Name: "ci", Expiry: 1 << 32},
	"max name":       {Name: strings.Repeat("t", MaxNameLen), Expiry: 1},
}

func TestCreatePersonalAccessTokenRoundTrip(t *testing.T) {
	for name, c := range sampleCreatePATs {
		t.Run(name, func(t *testing.T) {
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if enc := sysRoundTrip(t, &c, &CreatePersonalAccessToken{}); len(enc) != 1+len(c.Name)+8 {
				t.Errorf("body is %d bytes", len(enc))
			}
		})
	}
}

// TestCreatePersonalAccessTokenExpiryLayout checks a spec encoder writes the
// whole u64 little-endian, while the Go SDK's u32-in-the-high-half body
// decodes as argument<<32 (the documented choice).
func TestCreatePersonalAccessTokenExpiryLayout(t *testing.T) {
	c := CreatePersonalAccessToken{Name: "ci", Expiry: 1}
	if got, want := c.AppendTo(nil), sysHex("02 6369 0100000000000000"); !bytes.Equal(got, want) {
		t.Errorf("encode:\n got %x\nwant %x", got, want)
	}
	var d CreatePersonalAccessToken
	if err := d.Decode(sysHex("02 6369 00000000 01000000")); err != nil || d.Expiry != 1<<32 {
		t.Errorf("Go SDK body: expiry %d, err %v", d.Expiry, err)
	}
}

func TestCreatePersonalAccessTokenErrors(t *testing.T) {
	dec := (&CreatePersonalAccessToken{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "empty name", body: sysHex("00 0000000000000000"), dec: dec},
		{name: "u32 expiry", body: sysHex("02 6369 01000000"), dec: dec},
		{name: "name not utf8", body: sysHex("01 ff 0000000000000000"), dec: dec},
	})
	sysRunValidateCases(t, []sysValidateCase{
		{name: "empty name", validate: (&CreatePersonalAccessToken{}).Validate, want: ErrInvalidPersonalAccessTokenName},
		{name: "long name", validate: (&CreatePersonalAccessToken{Name: strings.Repeat("t", 256)}).Validate, want: ErrInvalidPersonalAccessTokenName},
	})
}

func TestDeletePersonalAccessToken(t *testing.T) {
	for _, name := range []string{"ci", "ü", strings.Repeat("t", MaxNameLen)} {
		d := DeletePersonalAccessToken{Name: name}
		if err := d.Validate(); err != nil {
			t.Fatal(err)
		}
		if enc := sysRoundTrip(t, &d, &DeletePersonalAccessToken{}); !bytes.Equal(enc, appendName(nil, name)) {
			t.Errorf("body %x is not the bare name", enc)
		}
	}
	dec := (&DeletePersonalAccessToken{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "empty name", body: sysHex("00"), dec: dec},
		{name: "name beyond body", body: sysHex("03 6369"), dec: dec},
	})
	sysRunValidateCases(t, []sysValidateCase{
		{name: "empty name", validate: (&DeletePersonalAccessToken{}).Validate, want: ErrInvalidPersonalAccessTokenName},
		{name: "name not utf8", validate: (&DeletePersonalAccessToken{Name: "\xff"}).Validate, want: ErrInvalidPersonalAccessTokenName},
	})
}

func TestRawToken(t *testing.T) {
	for name, tok := range map[string]string{
		"reference length": strings.Repeat("A", 66) + "==",
		"empty":            "",
		"max":              strings.Repeat("x", MaxRawTokenLen),
	} {
		t.Run(name, func(t *testing.T) {
			r := RawToken{Token: tok}
			if err := r.Validate(); err != nil {
				t.Fatal(err)
			}
			if enc := sysRoundTrip(t, &r, &RawToken{}); len(enc) != 1+len(tok) || int(enc[0]) != len(tok) {
				t.Errorf("layout %x", enc)
			}
		})
	}
	dec := (&RawToken{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty payload", body: nil, dec: dec},
		{name: "token beyond body", body: sysHex("05 6162"), dec: dec},
		{name: "not utf8", body: sysHex("01 ff"), dec: dec},
		{name: "trailing byte", body: sysHex("01 61 00"), dec: dec},
	})
	sysRunValidateCases(t, []sysValidateCase{
		{name: "long", validate: (&RawToken{Token: strings.Repeat("x", 256)}).Validate, want: ErrInvalidPersonalAccessToken},
		{name: "not utf8", validate: (&RawToken{Token: "\xff"}).Validate, want: ErrInvalidPersonalAccessToken},
	})
}

var samplePATLists = map[string]PersonalAccessTokens{
	"none": nil,
	"two":  {{Name: "ci", ExpiryAt: 0}, {Name: "deploy", ExpiryAt: 1_800_000_000_000_000}},
	"max":  {{Name: strings.Repeat("n", MaxNameLen), ExpiryAt: 1<<64 - 1}},
}

func TestPersonalAccessTokensRoundTrip(t *testing.T) {
	for name, ps := range samplePATLists {
		t.Run(name, func(t *testing.T) {
			if err := ps.Validate(); err != nil {
				t.Fatal(err)
			}
			enc := sysRoundTrip(t, &ps, &PersonalAccessTokens{})
			n := 0
			for _, p := range ps {
				n += 1 + len(p.Name) + 8
			}
			if len(enc) != n {
				t.Errorf("encoded %d bytes, want %d", len(enc), n)
			}
		})
	}
}

func TestPersonalAccessTokensErrors(t *testing.T) {
	dec := (&PersonalAccessTokens{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "missing expiry", body: sysHex("02 6369"), dec: dec},
		{name: "short expiry", body: sysHex("02 6369 00000000"), dec: dec},
		{name: "empty name", body: sysHex("00 0000000000000000"), dec: dec},
		{name: "second entry partial", body: sysHex("02 6369 0000000000000000 01"), dec: dec},
	})
	sysRunValidateCases(t, []sysValidateCase{
		{name: "empty name", validate: (&PersonalAccessTokens{{Name: "ok"}, {}}).Validate, want: ErrInvalidPersonalAccessTokenName},
	})
}
