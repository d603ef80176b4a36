package httpapi

import (
	"strings"
	"testing"
)

// TestClusterJWTKey checks the derivation against BLAKE3 derive_key
// outputs computed independently (the Python blake3 package).
func TestClusterJWTKey(t *testing.T) {
	for _, tc := range []struct{ psk, want string }{
		{strings.Repeat("s", 40), "31a6a607df143dc1873cbf289f36e03b275fe37c7fb9aebbb9d3723ff47298e4"},
		{"0123456789abcdef0123456789abcdef", "8f56ac559961f280064ff270ad5ff196953973556bca0ad3a5edfeeac58c40b1"},
	} {
		if got := string(ClusterJWTKey([]byte(tc.psk))); got != tc.want {
			t.Errorf("ClusterJWTKey(%q) = %s, want %s", tc.psk, got, tc.want)
		}
	}
}
