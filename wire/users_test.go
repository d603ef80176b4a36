package wire

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// userOptField builds one options TLV field [kind u8][len u32][data].
func userOptField(kind byte, data string) []byte {
	b := []byte{kind}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

// userOptPairs builds an options block of String keys with Uint8 values.
func userOptPairs(keys ...string) []byte {
	var b []byte
	for _, k := range keys {
		b = append(b, userOptField(2, k)...)
		b = append(b, userOptField(9, "\x01")...)
	}
	return b
}

var sampleUsers = map[string]User{
	"root":         {ID: 0, CreatedAt: 1, Status: UserActive, Username: "iggy"},
	"inactive":     {ID: 7, CreatedAt: 1_700_000_000_000_000, Status: UserInactive, Username: "bob"},
	"raw status":   {ID: 8, Status: 9, Username: "x"},
	"with options": {ID: 3, Status: UserActive, Username: "ünïcode", Options: userOptPairs("a", "b")},
	"max name":     {ID: 4, Status: UserActive, Username: strings.Repeat("n", MaxNameLen)},
}

func TestUserRoundTrip(t *testing.T) {
	for name, u := range sampleUsers {
		t.Run(name, func(t *testing.T) {
			if err := u.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			enc := sysRoundTrip(t, &u, &User{})
			if want := 14 + len(u.Username) + 4 + len(u.Options); len(enc) != want {
				t.Errorf("encoded %d bytes, commands.md says 14+N+4+O = %d", len(enc), want)
			}
		})
	}
}

func TestUserLayout(t *testing.T) {
	u := User{ID: 1, CreatedAt: 1700000000000000, Status: UserActive, Username: "alice"}
	want := sysHex("01000000 00401e18240a0600 01 05 616c696365 00000000")
	if got := u.AppendTo(nil); !bytes.Equal(got, want) {
		t.Errorf("encode:\n got %x\nwant %x", got, want)
	}
}

func TestUserDecodeErrors(t *testing.T) {
	ok := sampleUsers["with options"]
	enc := ok.AppendTo(nil)
	dec := (&User{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "empty username", body: sysHex("01000000 0000000000000000 01 00 00000000"), dec: dec},
		{name: "username not utf8", body: sysHex("01000000 0000000000000000 01 01 ff 00000000"), dec: dec},
		{name: "missing options length", body: sysHex("01000000 0000000000000000 01 01 61"), dec: dec},
		{name: "options length beyond body", body: sysHex("01000000 0000000000000000 01 01 61 07000000 02010000"), dec: dec},
		{name: "options length over limit", body: sysHex("01000000 0000000000000000 01 01 61 a1860100"), dec: dec},
		{name: "options key without value", body: append(sysHex("01000000 0000000000000000 01 01 61 07000000"), userOptField(2, "ab")...), dec: dec},
		{name: "truncated", body: enc[:len(enc)-1], dec: dec},
		{name: "trailing byte", body: append(bytes.Clone(enc), 0), dec: dec},
	})
}

func TestUserValidate(t *testing.T) {
	v := func(u User) func() error { return u.Validate }
	sysRunValidateCases(t, []sysValidateCase{
		{name: "ok", validate: v(sampleUsers["with options"])},
		{name: "empty username", validate: v(User{}), want: ErrInvalidUsername},
		{name: "long username", validate: v(User{Username: strings.Repeat("u", MaxNameLen+1)}), want: ErrInvalidUsername},
		{name: "username not utf8", validate: v(User{Username: "\xff"}), want: ErrInvalidUsername},
		{name: "bad options", validate: v(User{Username: "u", Options: []byte{1}}), want: ErrInvalidCommand},
	})
}

var sampleUserDetails = map[string]UserDetails{
	"no permissions":    {User: sampleUsers["root"]},
	"with permissions":  {User: sampleUsers["inactive"], Permissions: &encodingsExamplePermissions},
	"empty permissions": {User: sampleUsers["with options"], Permissions: &Permissions{}},
	"many permissions": {User: sampleUsers["raw status"], Permissions: func() *Permissions {
		p := samplePermissions["unsorted streams and topics (Go SDK map order)"]
		return &p
	}()},
}

func TestUserDetailsRoundTrip(t *testing.T) {
	for name, d := range sampleUserDetails {
		t.Run(name, func(t *testing.T) {
			if err := d.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			enc := sysRoundTrip(t, &d, &UserDetails{})
			tail := enc[len(d.User.AppendTo(nil)):]
			if d.Permissions == nil {
				if !bytes.Equal(tail, []byte{0, 0, 0, 0}) {
					t.Errorf("no-permissions tail = %x, want 00000000", tail)
				}
				return
			}
			perms := d.Permissions.AppendTo(nil)
			if tail[0] != 1 || binary.LittleEndian.Uint32(tail[1:]) != uint32(len(perms)) || !bytes.Equal(tail[5:], perms) {
				t.Errorf("permissions tail = %x, want 01 len %x", tail, perms)
			}
		})
	}
}

func TestUserNotFound(t *testing.T) {
	if !UserNotFound(nil) || !UserNotFound([]byte{}) {
		t.Error("empty payload is not reported as not found")
	}
	d := sampleUserDetails["no permissions"]
	if UserNotFound(d.AppendTo(nil)) {
		t.Error("UserDetails reported as not found")
	}
	if err := (&UserDetails{}).Decode(nil); err == nil {
		t.Error("UserDetails decoded from an empty payload")
	}
}

func TestUserDetailsDecodeErrors(t *testing.T) {
	root := sampleUsers["root"]
	u := root.AppendTo(nil)
	withTail := func(h string) []byte { return append(bytes.Clone(u), sysHex(h)...) }
	perms := encodingsExampleBytes
	lenPrefixed := func(n uint32, p []byte) []byte {
		b := append(bytes.Clone(u), 1)
		b = binary.LittleEndian.AppendUint32(b, n)
		return append(b, p...)
	}
	dec := (&UserDetails{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "header only", body: u, dec: dec},
		{name: "flag 0 alone", body: withTail("00"), dec: dec},
		{name: "flag 0 short", body: withTail("000000"), dec: dec},
		{name: "flag 0 non-zero padding", body: withTail("00000100"), dec: dec},
		{name: "flag 2", body: withTail("02000000"), dec: dec},
		{name: "flag 1 without length", body: withTail("01"), dec: dec},
		{name: "permissions length too short", body: lenPrefixed(uint32(len(perms)-1), perms), dec: dec},
		{name: "permissions length too long", body: lenPrefixed(uint32(len(perms)+1), append(bytes.Clone(perms), 0)), dec: dec},
		{name: "permissions length beyond body", body: lenPrefixed(0xffffffff, perms), dec: dec},
		{name: "bad permissions", body: lenPrefixed(11, sysHex("00000000000000000000 02")), dec: dec},
		{name: "trailing byte", body: withTail("0000000000"), dec: dec},
	})
}

var sampleUserLists = map[string]Users{
	"none":  nil,
	"one":   {sampleUsers["root"]},
	"three": {sampleUsers["root"], sampleUsers["with options"], sampleUsers["raw status"]},
}

func TestUsersRoundTrip(t *testing.T) {
	for name, us := range sampleUserLists {
		t.Run(name, func(t *testing.T) {
			enc := sysRoundTrip(t, &us, &Users{})
			var concat []byte
			for i := range us {
				concat = us[i].AppendTo(concat)
			}
			if !bytes.Equal(enc, concat) {
				t.Errorf("list is not the headers back to back")
			}
		})
	}
}

// TestUsersDecodeReuses checks a second decode replaces the first list.
func TestUsersDecodeReuses(t *testing.T) {
	three := sampleUserLists["three"]
	one := sampleUserLists["one"]
	us := Users{}
	if err := us.Decode(three.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if err := us.Decode(one.AppendTo(nil)); err != nil {
		t.Fatal(err)
	}
	if d := cmpDiff(one, us); d != "" {
		t.Errorf("second decode (-want +got):\n%s", d)
	}
	if err := us.Decode([]byte{1}); err == nil || us != nil {
		t.Errorf("failed decode: err %v, list %v", err, us)
	}
}

func TestUsersDecodeErrors(t *testing.T) {
	one := sampleUserLists["one"]
	enc := one.AppendTo(nil)
	dec := (&Users{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "partial header", body: enc[:len(enc)-2], dec: dec},
		{name: "second header partial", body: append(bytes.Clone(enc), enc[:5]...), dec: dec},
		{name: "bad second username", body: append(bytes.Clone(enc), sysHex("01000000 0000000000000000 01 00 00000000")...), dec: dec},
	})
}

var sampleGetUsers = map[string]GetUser{
	"numeric": {UserID: NumericID(2)},
	"zero":    {UserID: NumericID(0)},
	"named":   {UserID: NamedID("alice")},
}

func TestGetUserDeleteUserRoundTrip(t *testing.T) {
	for name, g := range sampleGetUsers {
		t.Run(name, func(t *testing.T) {
			if err := g.Validate(); err != nil {
				t.Fatal(err)
			}
			enc := sysRoundTrip(t, &g, &GetUser{})
			if !bytes.Equal(enc, g.UserID.AppendTo(nil)) {
				t.Errorf("body is not the bare identifier")
			}
			d := DeleteUser(g)
			if err := d.Validate(); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(sysRoundTrip(t, &d, &DeleteUser{}), enc) {
				t.Errorf("DELETE_USER body differs from GET_USER body")
			}
		})
	}
}

func TestGetUserDeleteUserErrors(t *testing.T) {
	for _, dec := range []struct {
		name string
		fn   func([]byte) error
	}{{"GetUser", (&GetUser{}).Decode}, {"DeleteUser", (&DeleteUser{}).Decode}} {
		t.Run(dec.name, func(t *testing.T) {
			sysRunDecodeErrCases(t, []sysDecodeErrCase{
				{name: "empty", body: nil, dec: dec.fn},
				{name: "numeric length 3", body: sysHex("01 03 010203"), dec: dec.fn},
				{name: "unknown kind", body: sysHex("03 01 61"), dec: dec.fn},
				{name: "empty name", body: sysHex("02 00"), dec: dec.fn},
			})
		})
	}
	sysRunValidateCases(t, []sysValidateCase{
		{name: "GetUser empty name", validate: (&GetUser{UserID: NamedID("")}).Validate, want: ErrInvalidIdentifier},
		{name: "DeleteUser zero identifier", validate: (&DeleteUser{}).Validate, want: ErrInvalidIdentifier},
	})
}

var sampleCreateUsers = map[string]CreateUser{
	"no permissions":   {Username: "bob", Password: "pw", Status: UserInactive},
	"with permissions": {Username: "alice", Password: "secret", Status: UserActive, Permissions: &encodingsExamplePermissions},
	"empty password":   {Username: "nopass", Status: UserActive},
	"empty set":        {Username: "e", Password: "p", Status: UserActive, Permissions: &Permissions{}},
	"options":          {Username: "opt", Password: "p", Status: UserActive, Options: userOptPairs("k")},
	"max password":     {Username: "long", Password: strings.Repeat("p", MaxPasswordLen), Status: UserActive},
}

func TestCreateUserRoundTrip(t *testing.T) {
	for name, c := range sampleCreateUsers {
		t.Run(name, func(t *testing.T) {
			if err := c.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			sysRoundTrip(t, &c, &CreateUser{})
		})
	}
}

// TestCreateUserRawStatus checks an undefined status byte decodes as sent
// (the reference server stores it as active) while Validate refuses it.
func TestCreateUserRawStatus(t *testing.T) {
	body := sysHex("03 626f62 02 7077 07 00")
	var c CreateUser
	if err := c.Decode(body); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if c.Status != 7 || c.Status.Valid() {
		t.Errorf("status = %d", c.Status)
	}
	if err := c.Validate(); err != ErrInvalidUserStatus {
		t.Errorf("Validate = %v", err)
	}
}

func TestCreateUserDecodeErrors(t *testing.T) {
	dec := (&CreateUser{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "empty username", body: sysHex("00 02 7077 01 00"), dec: dec},
		{name: "password beyond body", body: sysHex("03 626f62 09 7077 01 00"), dec: dec},
		{name: "password not utf8", body: sysHex("03 626f62 01 ff 01 00"), dec: dec},
		{name: "missing status", body: sysHex("03 626f62 02 7077"), dec: dec},
		{name: "missing has_permissions", body: sysHex("03 626f62 02 7077 01"), dec: dec},
		{name: "has_permissions 2", body: sysHex("03 626f62 02 7077 01 02"), dec: dec},
		{name: "permissions length beyond body", body: sysHex("03 626f62 02 7077 01 01 20000000 00"), dec: dec},
		{name: "permissions length short", body: append(sysHex("03 626f62 02 7077 01 01 1f000000"), encodingsExampleBytes...), dec: dec},
		{name: "options odd fields", body: append(sysHex("03 626f62 02 7077 01 00"), userOptField(2, "k")...), dec: dec},
		{name: "options key not string", body: append(sysHex("03 626f62 02 7077 01 00"), append(userOptField(1, "k"), userOptField(9, "\x01")...)...), dec: dec},
		{name: "options trailing garbage", body: append(sysHex("03 626f62 02 7077 01 00"), append(userOptPairs("k"), 0)...), dec: dec},
	})
}

func TestCreateUserValidate(t *testing.T) {
	v := func(c CreateUser) func() error { return c.Validate }
	ok := sampleCreateUsers["with permissions"]
	bad := func(f func(*CreateUser)) CreateUser { c := ok; f(&c); return c }
	sysRunValidateCases(t, []sysValidateCase{
		{name: "ok", validate: v(ok)},
		{name: "empty username", validate: v(bad(func(c *CreateUser) { c.Username = "" })), want: ErrInvalidUsername},
		{name: "long username", validate: v(bad(func(c *CreateUser) { c.Username = strings.Repeat("u", 256) })), want: ErrInvalidUsername},
		{name: "long password", validate: v(bad(func(c *CreateUser) { c.Password = strings.Repeat("p", 256) })), want: ErrInvalidPassword},
		{name: "password not utf8", validate: v(bad(func(c *CreateUser) { c.Password = "\xff" })), want: ErrInvalidPassword},
		{name: "status 0", validate: v(bad(func(c *CreateUser) { c.Status = 0 })), want: ErrInvalidUserStatus},
		{name: "status 3", validate: v(bad(func(c *CreateUser) { c.Status = 3 })), want: ErrInvalidUserStatus},
		{name: "bad options", validate: v(bad(func(c *CreateUser) { c.Options = userOptField(2, "k") })), want: ErrInvalidCommand},
		{name: "bad permissions", validate: v(bad(func(c *CreateUser) {
			c.Permissions = &Permissions{Streams: []StreamPermissions{{StreamID: 1}, {StreamID: 1}}}
		})), want: ErrInvalidCommand},
	})
}

var sampleUpdateUsers = map[string]UpdateUser{
	"nothing":         {UserID: NumericID(2)},
	"username only":   {UserID: NumericID(2), Username: "bobby"},
	"status only":     {UserID: NamedID("bob"), Status: UserInactive},
	"both":            {UserID: NamedID("bob"), Username: "robert", Status: UserActive},
	"raw status":      {UserID: NumericID(1), Status: 200},
	"options":         {UserID: NumericID(1), Options: userOptPairs("x", "y")},
	"everything else": {UserID: NumericID(1), Username: "u", Status: UserActive, Options: userOptPairs("z")},
}

func TestUpdateUserRoundTrip(t *testing.T) {
	for name, u := range sampleUpdateUsers {
		t.Run(name, func(t *testing.T) {
			enc := sysRoundTrip(t, &u, &UpdateUser{})
			// Both flag bytes are always present.
			r := newReader(enc)
			r.identifier()
			if r.flag() {
				r.name()
			}
			if r.flag() {
				r.u8()
			}
			if r.err != nil || !bytes.Equal(r.rest(), u.Options) {
				t.Errorf("layout %x", enc)
			}
		})
	}
}

func TestUpdateUserDecodeErrors(t *testing.T) {
	dec := (&UpdateUser{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "missing flags", body: sysHex("01 04 02000000"), dec: dec},
		{name: "missing status flag", body: sysHex("01 04 02000000 00"), dec: dec},
		{name: "has_username 2", body: sysHex("01 04 02000000 02 00"), dec: dec},
		{name: "has_status 2", body: sysHex("01 04 02000000 00 02 01"), dec: dec},
		{name: "empty username", body: sysHex("01 04 02000000 01 00 00"), dec: dec},
		{name: "status missing", body: sysHex("01 04 02000000 00 01"), dec: dec},
		{name: "status 0 with flag", body: sysHex("01 04 02000000 00 01 00"), dec: dec},
		{name: "bad options", body: sysHex("01 04 02000000 00 00 00"), dec: dec},
	})
}

func TestUpdateUserValidate(t *testing.T) {
	v := func(u UpdateUser) func() error { return u.Validate }
	sysRunValidateCases(t, []sysValidateCase{
		{name: "ok", validate: v(sampleUpdateUsers["both"])},
		{name: "nothing", validate: v(sampleUpdateUsers["nothing"])},
		{name: "bad identifier", validate: v(UpdateUser{UserID: Identifier{Kind: 3}}), want: ErrInvalidIdentifier},
		{name: "long username", validate: v(UpdateUser{UserID: NumericID(1), Username: strings.Repeat("u", 256)}), want: ErrInvalidUsername},
		{name: "status 3", validate: v(UpdateUser{UserID: NumericID(1), Status: 3}), want: ErrInvalidUserStatus},
		{name: "bad options", validate: v(UpdateUser{UserID: NumericID(1), Options: []byte{0}}), want: ErrInvalidCommand},
	})
}

var sampleUpdatePermissions = map[string]UpdatePermissions{
	"clear":     {UserID: NumericID(2)},
	"set":       {UserID: NamedID("alice"), Permissions: &encodingsExamplePermissions},
	"empty set": {UserID: NumericID(3), Permissions: &Permissions{}},
}

func TestUpdatePermissionsRoundTrip(t *testing.T) {
	for name, u := range sampleUpdatePermissions {
		t.Run(name, func(t *testing.T) {
			if err := u.Validate(); err != nil {
				t.Fatal(err)
			}
			enc := sysRoundTrip(t, &u, &UpdatePermissions{})
			id := u.UserID.AppendTo(nil)
			if u.Permissions == nil && !bytes.Equal(enc, append(id, 0)) {
				t.Errorf("clear body %x should end after the flag", enc)
			}
		})
	}
}

func TestUpdatePermissionsErrors(t *testing.T) {
	dec := (&UpdatePermissions{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "missing flag", body: sysHex("01 04 02000000"), dec: dec},
		{name: "flag 2", body: sysHex("01 04 02000000 02"), dec: dec},
		{name: "flag 1 without length", body: sysHex("01 04 02000000 01"), dec: dec},
		{name: "length mismatch", body: append(sysHex("01 04 02000000 01 21000000"), encodingsExampleBytes...), dec: dec},
	})
	// Bytes after the flag 0 are trailing bytes of a request body: ignored.
	var u UpdatePermissions
	if err := u.Decode(sysHex("01 04 02000000 00 00000000")); err != nil || u.Permissions != nil || u.UserID != NumericID(2) {
		t.Errorf("flag 0 with trailing length = %+v, %v", u, err)
	}
	sysRunValidateCases(t, []sysValidateCase{
		{name: "bad identifier", validate: (&UpdatePermissions{}).Validate, want: ErrInvalidIdentifier},
		{name: "bad permissions", validate: (&UpdatePermissions{UserID: NumericID(1), Permissions: &Permissions{
			Streams: []StreamPermissions{{Topics: []TopicPermissions{{}, {}}}},
		}}).Validate, want: ErrInvalidCommand},
	})
}

var sampleChangePasswords = map[string]ChangePassword{
	"named":        {UserID: NamedID("alice"), CurrentPassword: "secret", NewPassword: "secret2"},
	"numeric":      {UserID: NumericID(0), CurrentPassword: "a", NewPassword: "b"},
	"empty":        {UserID: NumericID(1)},
	"max password": {UserID: NumericID(1), CurrentPassword: strings.Repeat("c", 255), NewPassword: strings.Repeat("n", 255)},
}

func TestChangePasswordRoundTrip(t *testing.T) {
	for name, c := range sampleChangePasswords {
		t.Run(name, func(t *testing.T) {
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			sysRoundTrip(t, &c, &ChangePassword{})
		})
	}
}

func TestChangePasswordErrors(t *testing.T) {
	dec := (&ChangePassword{}).Decode
	sysRunDecodeErrCases(t, []sysDecodeErrCase{
		{name: "empty", body: nil, dec: dec},
		{name: "missing new", body: sysHex("01 04 01000000 01 61"), dec: dec},
		{name: "new beyond body", body: sysHex("01 04 01000000 01 61 02 62"), dec: dec},
		{name: "current not utf8", body: sysHex("01 04 01000000 01 ff 00"), dec: dec},
	})
	sysRunValidateCases(t, []sysValidateCase{
		{name: "bad identifier", validate: (&ChangePassword{}).Validate, want: ErrInvalidIdentifier},
		{name: "long current", validate: (&ChangePassword{UserID: NumericID(1), CurrentPassword: strings.Repeat("c", 256)}).Validate, want: ErrInvalidPassword},
		{name: "long new", validate: (&ChangePassword{UserID: NumericID(1), NewPassword: strings.Repeat("n", 256)}).Validate, want: ErrInvalidPassword},
		{name: "new not utf8", validate: (&ChangePassword{UserID: NumericID(1), NewPassword: "\xff"}).Validate, want: ErrInvalidPassword},
	})
}

func TestValidUserOptions(t *testing.T) {
	manyPairs := func(n int) []byte {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = string(rune('A'+i/256)) + string(rune('a'+i%256))
		}
		return userOptPairs(keys...)
	}
	for _, tc := range []struct {
		name string
		b    []byte
		want bool
	}{
		{"empty", nil, true},
		{"one pair", userOptPairs("k"), true},
		{"two pairs", userOptPairs("k", "l"), true},
		{"max pairs", manyPairs(MaxUserOptionPairs), true},
		{"too many pairs", manyPairs(MaxUserOptionPairs + 1), false},
		{"duplicate key", userOptPairs("k", "k"), false},
		{"key without value", userOptField(2, "k"), false},
		{"key kind 1", append(userOptField(1, "k"), userOptField(9, "\x01")...), false},
		{"key not utf8", append(userOptField(2, "\xff"), userOptField(9, "\x01")...), false},
		{"value kind 0", append(userOptField(2, "k"), userOptField(0, "\x01")...), false},
		{"value kind 200 accepted", append(userOptField(2, "k"), userOptField(200, "\x01")...), true},
		{"empty value", append(userOptField(2, "k"), userOptField(2, "")...), false},
		{"value 256 bytes", append(userOptField(2, "k"), userOptField(1, strings.Repeat("v", 256))...), false},
		{"value 255 bytes", append(userOptField(2, "k"), userOptField(1, strings.Repeat("v", 255))...), true},
		{"field truncated", userOptPairs("k")[:9], false},
		{"header truncated", []byte{2, 1, 0}, false},
		{"over byte limit", make([]byte, MaxUserOptionsLen+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := validUserOptions(tc.b); got != tc.want {
				t.Errorf("validUserOptions = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUserStatusString(t *testing.T) {
	for s, want := range map[UserStatus]string{UserActive: "active", UserInactive: "inactive", 0: "unknown", 3: "unknown"} {
		if got := s.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", s, got, want)
		}
	}
}
