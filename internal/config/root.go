package config

import (
	"fmt"
	"strings"
)

// Default root credentials when neither IGGY_ROOT_USERNAME nor
// IGGY_ROOT_PASSWORD is set. Iggo always uses iggy/iggy here, as if the
// reference's --with-default-root-credentials were given (the reference
// otherwise generates a random password and logs it once).
const (
	DefaultRootUsername = "iggy"
	DefaultRootPassword = "iggy"
)

// RootCredentials returns the root user's credentials from environ
// (semantics.md §2.1): IGGY_ROOT_USERNAME and IGGY_ROOT_PASSWORD must be set
// as a pair, 3..=50 and 3..=100 bytes; neither set means the defaults.
func RootCredentials(environ []string) (username, password string, err error) {
	var u, p string
	var hasU, hasP bool
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case EnvRootUsername:
			u, hasU = v, true
		case EnvRootPassword:
			p, hasP = v, true
		}
	}
	switch {
	case !hasU && !hasP:
		return DefaultRootUsername, DefaultRootPassword, nil
	case hasU != hasP:
		return "", "", fmt.Errorf("%s and %s must be set together", EnvRootUsername, EnvRootPassword)
	case len(u) < 3 || len(u) > 50:
		return "", "", fmt.Errorf("%s must be 3..=50 bytes long", EnvRootUsername)
	case len(p) < 3 || len(p) > 100:
		return "", "", fmt.Errorf("%s must be 3..=100 bytes long", EnvRootPassword)
	}
	return u, p, nil
}
