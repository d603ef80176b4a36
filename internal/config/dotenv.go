package config

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// DefaultEnvFile is the .env file read from the working directory when
// IGGY_ENV_PATH is not set (config.md §1).
const DefaultEnvFile = ".env"

// maxEnvFileBytes bounds the .env file read.
const maxEnvFileBytes = 1 << 20

// WithDotEnv returns environ extended by the KEY=VALUE lines of the .env
// file (IGGY_ENV_PATH, else ./.env). Variables already in environ win; a
// missing file is not an error. Lines may start with "export ", values may
// be single- or double-quoted, and '#' starts a comment line.
func WithDotEnv(environ []string) ([]string, error) {
	path := DefaultEnvFile
	explicit := false
	for _, kv := range environ {
		if k, v, _ := strings.Cut(kv, "="); k == EnvEnvPath && v != "" {
			path, explicit = v, true
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !explicit {
			return environ, nil
		}
		return environ, fmt.Errorf("env file: %w", err)
	}
	if len(data) > maxEnvFileBytes {
		return environ, fmt.Errorf("env file %s: larger than %d bytes", path, maxEnvFileBytes)
	}
	vars, err := ParseDotEnv(data)
	if err != nil {
		return environ, fmt.Errorf("env file %s: %w", path, err)
	}
	set := map[string]bool{}
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		set[k] = true
	}
	out := append([]string(nil), environ...)
	for _, kv := range vars {
		k, _, _ := strings.Cut(kv, "=")
		if !set[k] {
			out = append(out, kv)
			set[k] = true
		}
	}
	return out, nil
}

// ParseDotEnv parses .env text into "KEY=VALUE" strings in file order.
func ParseDotEnv(data []byte) ([]string, error) {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return nil, fmt.Errorf("line %d: want KEY=VALUE", n)
		}
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		out = append(out, k+"="+v)
	}
	return out, sc.Err()
}
