package config

import (
	"encoding/base64"
	"strings"
	"testing"
)

func TestEncryptionDefaults(t *testing.T) {
	c := Default()
	if c.System.Encryption.Enabled || c.System.Encryption.Key != "" {
		t.Fatalf("default system.encryption = %+v, want disabled with no key", c.System.Encryption)
	}
	if cph, err := c.System.Encryption.Cipher(); cph != nil || err != nil {
		t.Fatalf("Cipher() of the default = %v, %v, want nil, nil", cph, err)
	}
}

func TestEncryptionEnvAndValidation(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	c, _, err := Load("", []string{"IGGY_SYSTEM_ENCRYPTION_ENABLED=true", "IGGY_SYSTEM_ENCRYPTION_KEY=" + key})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("valid key refused: %v", err)
	}
	cph, err := c.System.Encryption.Cipher()
	if err != nil || cph == nil {
		t.Fatalf("Cipher() = %v, %v", cph, err)
	}
	short := base64.StdEncoding.EncodeToString(make([]byte, 17))
	for _, tc := range []struct{ name, key, want string }{
		{"short", short, "system.encryption.key: must be the standard base64 of 32 bytes (got 17 bytes); generate one with `openssl rand -base64 32`"},
		{"malformed", "%%%", "system.encryption.key: must be the standard base64 of 32 bytes (it is not valid standard base64); generate one with `openssl rand -base64 32`"},
		{"missing", "", "system.encryption.key: must be set to the standard base64 of 32 bytes; generate one with `openssl rand -base64 32`"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.System.Encryption = EncryptionConfig{Enabled: true, Key: Secret(tc.key)}
			err := c.Validate()
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Validate() = %v\nwant %s", err, tc.want)
			}
			if _, err := c.System.Encryption.Cipher(); err == nil || err.Error() != tc.want {
				t.Fatalf("Cipher() = %v, want %s", err, tc.want)
			}
		})
	}
	// Disabled: a leftover key is not used and not checked.
	c = Default()
	c.System.Encryption.Key = "%%%"
	if err := c.Validate(); err != nil {
		t.Fatalf("disabled encryption with a bad key: %v", err)
	}
}

func TestEncryptionKeyNotEncoded(t *testing.T) {
	key := base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	c, notices, err := Parse([]byte("[system.encryption]\nenabled = true\nkey = \"" + key + "\"\n"))
	if err != nil || len(notices) != 0 {
		t.Fatalf("Parse: %v %+v", err, notices)
	}
	if !c.System.Encryption.Enabled || string(c.System.Encryption.Key) != key {
		t.Fatalf("parsed %+v", c.System.Encryption)
	}
	out, err := c.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), key) || strings.Contains(string(out), key[:20]) {
		t.Fatalf("encoded configuration contains the key:\n%s", out)
	}
	if !strings.Contains(string(out), "[system.encryption]") {
		t.Fatalf("encoded configuration lacks [system.encryption]:\n%s", out)
	}
}
