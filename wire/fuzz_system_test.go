package wire

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Fuzz targets for the system, user, PAT and client decoders. Each one
// checks that a decoder never panics, fails only with ErrInvalidCommand,
// and that whatever decodes survives encode -> decode unchanged. Where the
// encoding is canonical (no lenient permission booleans inside) the
// decoded value must also re-encode to the very input bytes.

// sysFuzzOpts says which extra properties a decoder's fuzz target checks.
type sysFuzzOpts struct {
	// canonical: encode(decode(b)) == b for every b that decodes (its
	// consumed prefix for a request body that ignores trailing bytes).
	canonical bool
	// validates: every decoded value passes its Validate method.
	validates bool
}

// sysFuzzDecoder runs the shared fuzz property for body type T.
func sysFuzzDecoder[T any, P interface {
	*T
	Body
}](f *testing.F, seeds [][]byte, o sysFuzzOpts) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var x T
		if err := P(&x).Decode(b); err != nil {
			if !errors.Is(err, ErrInvalidCommand) {
				t.Fatalf("decode error %v is not InvalidCommand", err)
			}
			return
		}
		enc := P(&x).AppendTo(nil)
		if o.canonical && !sameEncoding(P(&x), enc, b) {
			t.Fatalf("not canonical:\n  in %x\n out %x", b, enc)
		}
		if o.validates {
			v, ok := any(P(&x)).(interface{ Validate() error })
			if !ok {
				t.Fatalf("%T has no Validate", &x)
			}
			if err := v.Validate(); err != nil {
				t.Fatalf("decoded value fails Validate: %v", err)
			}
		}
		var y T
		if err := P(&y).Decode(enc); err != nil {
			t.Fatalf("re-decode of %x: %v", enc, err)
		}
		if d := cmp.Diff(&x, &y, cmpopts.EquateEmpty(), cmpopts.EquateNaNs()); d != "" {
			t.Fatalf("decode(encode(x)) != x (-x +y):\n%s", d)
		}
		if again := P(&y).AppendTo(nil); !bytes.Equal(again, enc) {
			t.Fatalf("encoding unstable:\n %x\n %x", enc, again)
		}
	})
}

// sysMaxSeedLen skips round-trip samples built to hit a limit (thousands
// of topics, 4 KiB addresses): the fuzzer minimizes large inputs slowly.
const sysMaxSeedLen = 1 << 10

// sysSampleSeeds encodes the round-trip samples of one type.
func sysSampleSeeds[T any, P interface {
	*T
	Body
}](m map[string]T) [][]byte {
	var out [][]byte
	for _, v := range m {
		if b := P(&v).AppendTo(nil); len(b) <= sysMaxSeedLen {
			out = append(out, b)
		}
	}
	return out
}

// sysVectorSeeds returns the bodies (requests.json) or payloads after the
// result section (replies.json) of the named vectors. Without ../shared
// it returns nothing and the target runs on its other seeds.
func sysVectorSeeds(f *testing.F, file string, names ...string) [][]byte {
	f.Helper()
	data, err := os.ReadFile(filepath.Join(vectorsDir, file))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		f.Fatal(err)
	}
	var doc struct {
		Vectors []struct {
			Name    string `json:"name"`
			Body    string `json:"body_hex"`
			Payload string `json:"payload_after_result_section_hex"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, want := range names {
		found := false
		for _, v := range doc.Vectors {
			if v.Name != want {
				continue
			}
			h := v.Body
			if file == "replies.json" {
				h = v.Payload
			}
			b, err := hex.DecodeString(h)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, b)
			found = true
		}
		if !found {
			f.Fatalf("vector %s not in %s", want, file)
		}
	}
	return out
}

func sysSeeds(parts ...[][]byte) [][]byte {
	var out [][]byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func FuzzPermissions(f *testing.F) {
	userPerms := func(name string) [][]byte {
		var out [][]byte
		for _, b := range sysVectorSeeds(f, "replies.json", name) {
			var d UserDetails
			if d.Decode(b) == nil && d.Permissions != nil {
				out = append(out, d.Permissions.AppendTo(nil))
			}
		}
		return out
	}
	sysFuzzDecoder[Permissions](f, sysSeeds(sysSampleSeeds(samplePermissions), [][]byte{encodingsExampleBytes},
		userPerms("get_user_with_permissions")), sysFuzzOpts{validates: true})
}

func FuzzUser(f *testing.F) {
	sysFuzzDecoder[User](f, sysSampleSeeds(sampleUsers), sysFuzzOpts{canonical: true, validates: true})
}

func FuzzUserDetails(f *testing.F) {
	sysFuzzDecoder[UserDetails](f, sysSeeds(sysSampleSeeds(sampleUserDetails),
		sysVectorSeeds(f, "replies.json", "get_user_with_permissions", "get_user_no_permissions", "create_user_ok")),
		sysFuzzOpts{validates: true})
}

func FuzzUsers(f *testing.F) {
	sysFuzzDecoder[Users](f, sysSampleSeeds(sampleUserLists), sysFuzzOpts{canonical: true})
}

func FuzzGetUser(f *testing.F) {
	sysFuzzDecoder[GetUser](f, sysSeeds(sysSampleSeeds(sampleGetUsers), sysVectorSeeds(f, "requests.json", "get_user")),
		sysFuzzOpts{canonical: true, validates: true})
}

func FuzzDeleteUser(f *testing.F) {
	sysFuzzDecoder[DeleteUser](f, sysSeeds(sysSampleSeeds(sampleGetUsers), sysVectorSeeds(f, "requests.json", "delete_user")),
		sysFuzzOpts{canonical: true, validates: true})
}

func FuzzCreateUser(f *testing.F) {
	sysFuzzDecoder[CreateUser](f, sysSeeds(sysSampleSeeds(sampleCreateUsers),
		sysVectorSeeds(f, "requests.json", "create_user_with_permissions", "create_user_no_permissions")), sysFuzzOpts{})
}

func FuzzUpdateUser(f *testing.F) {
	sysFuzzDecoder[UpdateUser](f, sysSeeds(sysSampleSeeds(sampleUpdateUsers), sysVectorSeeds(f, "requests.json", "update_user")),
		sysFuzzOpts{canonical: true})
}

func FuzzUpdatePermissions(f *testing.F) {
	sysFuzzDecoder[UpdatePermissions](f, sysSeeds(sysSampleSeeds(sampleUpdatePermissions), sysVectorSeeds(f, "requests.json", "update_permissions_none")),
		sysFuzzOpts{validates: true})
}

func FuzzChangePassword(f *testing.F) {
	sysFuzzDecoder[ChangePassword](f, sysSeeds(sysSampleSeeds(sampleChangePasswords), sysVectorSeeds(f, "requests.json", "change_password")),
		sysFuzzOpts{canonical: true, validates: true})
}

func FuzzStats(f *testing.F) {
	sysFuzzDecoder[Stats](f, sysSampleSeeds(sampleStats), sysFuzzOpts{canonical: true, validates: true})
}

func FuzzClusterMetadata(f *testing.F) {
	sysFuzzDecoder[ClusterMetadata](f, sysSampleSeeds(sampleClusterMetadata), sysFuzzOpts{canonical: true, validates: true})
}

func FuzzGetSnapshotFile(f *testing.F) {
	sysFuzzDecoder[GetSnapshotFile](f, sysSampleSeeds(sampleGetSnapshotFile), sysFuzzOpts{canonical: true, validates: true})
}

func FuzzClient(f *testing.F) {
	sysFuzzDecoder[Client](f, sysSampleSeeds(sampleClients), sysFuzzOpts{canonical: true, validates: true})
}

func FuzzClientDetails(f *testing.F) {
	sysFuzzDecoder[ClientDetails](f, sysSeeds(sysSampleSeeds(sampleClientDetails), sysVectorSeeds(f, "replies.json", "get_client")),
		sysFuzzOpts{canonical: true, validates: true})
}

func FuzzClients(f *testing.F) {
	sysFuzzDecoder[Clients](f, sysSampleSeeds(sampleClientLists), sysFuzzOpts{canonical: true})
}

func FuzzGetClient(f *testing.F) {
	sysFuzzDecoder[GetClient](f, sysVectorSeeds(f, "requests.json", "get_client"), sysFuzzOpts{canonical: true})
}

func FuzzCreatePersonalAccessToken(f *testing.F) {
	sysFuzzDecoder[CreatePersonalAccessToken](f, sysSeeds(sysSampleSeeds(sampleCreatePATs), sysVectorSeeds(f, "requests.json", "create_personal_access_token")),
		sysFuzzOpts{canonical: true, validates: true})
}

func FuzzDeletePersonalAccessToken(f *testing.F) {
	sysFuzzDecoder[DeletePersonalAccessToken](f, sysVectorSeeds(f, "requests.json", "delete_personal_access_token"),
		sysFuzzOpts{canonical: true, validates: true})
}

func FuzzRawToken(f *testing.F) {
	sysFuzzDecoder[RawToken](f, sysVectorSeeds(f, "replies.json", "create_pat_ok"), sysFuzzOpts{canonical: true, validates: true})
}

func FuzzPersonalAccessTokens(f *testing.F) {
	sysFuzzDecoder[PersonalAccessTokens](f, sysSeeds(sysSampleSeeds(samplePATLists), sysVectorSeeds(f, "replies.json", "get_pats")),
		sysFuzzOpts{canonical: true, validates: true})
}
