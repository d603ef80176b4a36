package encryption

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestParseKey(t *testing.T) {
	good := b64(testKey(1))
	if k, err := ParseKey("  " + good + "\n"); err != nil || !bytes.Equal(k, testKey(1)) {
		t.Fatalf("ParseKey(good) = %x, %v", k, err)
	}
	short := b64(testKey(1)[:17])
	urlSafe := base64.URLEncoding.EncodeToString(bytes.Repeat([]byte{0xfb, 0xff}, 16))
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "must be set"},
		{"short", short, "(got 17 bytes)"},
		{"long", b64(append(testKey(1), 0)), "(got 33 bytes)"},
		{"not base64", "not a key!", "not valid standard base64"},
		{"url alphabet", urlSafe, "not valid standard base64"},
		{"unpadded", strings.TrimRight(good, "="), "not valid standard base64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseKey(tc.in)
			if !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "openssl rand -base64 32") {
				t.Fatalf("ParseKey = %v, want ErrKey mentioning %q and the hint", err, tc.want)
			}
			if tc.in != "" && strings.Contains(err.Error(), tc.in) {
				t.Fatalf("error repeats the key: %v", err)
			}
		})
	}
}

func TestGenerateKey(t *testing.T) {
	a, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := GenerateKey()
	if a == b {
		t.Fatal("two generated keys are equal")
	}
	if _, err := NewFromBase64(a); err != nil {
		t.Fatalf("generated key does not parse: %v", err)
	}
}

func TestNewRejectsKeyLength(t *testing.T) {
	for _, n := range []int{0, 16, 24, 31, 33} {
		if _, err := New(make([]byte, n)); !errors.Is(err, ErrKey) {
			t.Errorf("New(%d bytes) = %v, want ErrKey", n, err)
		}
	}
}

func TestSealOpen(t *testing.T) {
	c := testCipher(t, 1)
	for _, plain := range [][]byte{nil, []byte("x"), bytes.Repeat([]byte("abc"), 1000)} {
		sealed, err := c.Seal([]byte("prefix"), plain)
		if err != nil {
			t.Fatal(err)
		}
		if string(sealed[:6]) != "prefix" || len(sealed) != 6+len(plain)+Overhead {
			t.Fatalf("sealed length %d, want %d after the prefix", len(sealed), 6+len(plain)+Overhead)
		}
		if len(plain) > 2 && bytes.Contains(sealed, plain) {
			t.Fatal("sealed section contains the plaintext")
		}
		got, err := c.Open([]byte("p"), sealed[6:])
		if err != nil || string(got[:1]) != "p" || !bytes.Equal(got[1:], plain) {
			t.Fatalf("Open = %q, %v", got, err)
		}
	}
}

func TestSealNoncesDiffer(t *testing.T) {
	c := testCipher(t, 1)
	seen := map[string]bool{}
	for range 1000 {
		s, err := c.Seal(nil, []byte("same"))
		if err != nil {
			t.Fatal(err)
		}
		n := string(s[:NonceSize])
		if seen[n] {
			t.Fatal("nonce reused")
		}
		seen[n] = true
	}
}

func TestOpenTamperAndWrongKey(t *testing.T) {
	c := testCipher(t, 1)
	sealed, err := c.Seal(nil, []byte("attack at dawn"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x01
		if _, err := c.Open(nil, bad); !errors.Is(err, ErrAuth) {
			t.Fatalf("byte %d flipped: Open = %v, want ErrAuth", i, err)
		}
	}
	if _, err := testCipher(t, 2).Open(nil, sealed); !errors.Is(err, ErrAuth) {
		t.Fatalf("wrong key: Open = %v, want ErrAuth", err)
	}
	if _, err := c.Open(nil, sealed[:Overhead-1]); !errors.Is(err, ErrLayout) {
		t.Fatalf("short section: Open = %v, want ErrLayout", err)
	}
	if _, err := c.Open(nil, sealed[:len(sealed)-1]); !errors.Is(err, ErrAuth) {
		t.Fatalf("truncated section: Open = %v, want ErrAuth", err)
	}
}

func TestFingerprint(t *testing.T) {
	a, a2, b := testCipher(t, 1), testCipher(t, 1), testCipher(t, 2)
	if a.Fingerprint() != a2.Fingerprint() {
		t.Fatal("fingerprint is not deterministic")
	}
	if a.Fingerprint() == b.Fingerprint() {
		t.Fatal("two keys share a fingerprint")
	}
	if len(a.Fingerprint()) != 2*fingerprintBytes {
		t.Fatalf("fingerprint %q has length %d", a.Fingerprint(), len(a.Fingerprint()))
	}
	for _, leak := range []string{b64(testKey(1)), hex.EncodeToString(testKey(1))[:16]} {
		if strings.Contains(a.Fingerprint(), leak) {
			t.Fatal("fingerprint reveals the key")
		}
	}
}
