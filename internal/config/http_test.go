package config

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestHTTPConfigLayers(t *testing.T) {
	file := `
[http]
address = "0.0.0.0:3001"
max_request_size = "4 MB"
[http.cors]
allowed_origins = ["http://a", "http://b"]
[http.jwt]
algorithm = "HS512"
access_token_expiry = "none"
encoding_secret = "file-secret"
`
	cfg, _, err := Parse([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.HTTP.Address != "0.0.0.0:3001" || cfg.HTTP.MaxRequestSize != 4_000_000 || cfg.HTTP.JWT.AccessTokenExpiry != NoTokenExpiry ||
		strings.Join(cfg.HTTP.CORS.AllowedOrigins, ",") != "http://a,http://b" || cfg.HTTP.JWT.Algorithm != "HS512" {
		t.Fatalf("parsed %+v", cfg.HTTP)
	}
	env := []string{"IGGY_HTTP_CORS_ALLOWED_METHODS=GET, POST", "IGGY_HTTP_JWT_ACCESS_TOKEN_EXPIRY=15 m", "IGGY_HTTP_JWT_DECODING_SECRET=env-secret"}
	if _, err := applyEnv(&cfg, env); err != nil {
		t.Fatal(err)
	}
	if got := cfg.HTTP.CORS.AllowedMethods.Clean(); strings.Join(got, ",") != "GET,POST" || cfg.HTTP.JWT.AccessTokenExpiry != TokenExpiry(15*time.Minute) {
		t.Fatalf("env overlay %+v", cfg.HTTP)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	// Secrets never reach the encoded configuration.
	out, err := cfg.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "file-secret") || strings.Contains(string(out), "env-secret") || !strings.Contains(string(out), `access_token_expiry = "15m0s"`) {
		t.Fatalf("encoded config:\n%s", out)
	}
	// The encoded form parses back (secrets empty).
	back, _, err := Parse(out)
	if err != nil || back.HTTP.JWT.EncodingSecret != "" || back.HTTP.JWT.AccessTokenExpiry != TokenExpiry(15*time.Minute) {
		t.Fatalf("round trip %+v %v", back.HTTP.JWT, err)
	}
	if _, _, err := Parse([]byte("[http.jwt]\naccess_token_expiry = \"server_default\"\n")); err == nil {
		t.Fatal("server_default accepted")
	}
}

func TestSecretMasked(t *testing.T) {
	s := Secret("hunter2")
	if got := fmt.Sprintf("%v %s", s, s); got != "****** ******" {
		t.Fatalf("printed %q", got)
	}
	if got := s.LogValue().String(); got != "******" {
		t.Fatalf("logged %q", got)
	}
	if string(s) != "hunter2" || Secret("").String() != "" {
		t.Fatal("value changed")
	}
}
