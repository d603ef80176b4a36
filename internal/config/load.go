package config

import (
	"encoding"
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// EnvPrefix starts every configuration environment variable.
const EnvPrefix = "IGGY_"

// Environment variables outside the schema (config.md §1).
const (
	EnvConfigPath   = "IGGY_CONFIG_PATH"
	EnvEnvPath      = "IGGY_ENV_PATH"
	EnvRootUsername = "IGGY_ROOT_USERNAME"
	EnvRootPassword = "IGGY_ROOT_PASSWORD"
)

// maxConfigFileBytes bounds the configuration file read.
const maxConfigFileBytes = 4 << 20

// Notice is something the loader wants logged once the logger exists: an
// unknown key (Warn) or a recognized reference key this build does not use.
type Notice struct {
	Warn    bool
	Message string
}

// relocated lists keys of older releases whose meaning moved to topic
// options; like the reference, their presence refuses boot (config.md §6).
var relocated = map[string]string{
	"system.topic.max_size":                              "the topic option max_topic_size",
	"system.topic.message_expiry":                        "the topic option message_expiry",
	"system.partition.enforce_fsync":                     "the topic option enforce_fsync",
	"system.partition.messages_required_to_save":         "the topic option messages_required_to_save",
	"system.partition.size_of_messages_required_to_save": "the topic option size_of_messages_required_to_save",
	"system.segment.size":                                "the topic option segment_size",
	"system.segment.preallocate":                         "the topic option preallocate_segments",
	"system.message_deduplication":                       "nothing (server-side message deduplication was removed)",
	"extra":                                              "nothing (the section was removed)",
}

// unused lists reference sections and keys this build accepts and ignores
// (transports and tuning it does not implement, and sections older
// releases had). They are reported as informational notices, not warnings.
var unused = []string{
	"http.jwt.trusted_issuers", "data_maintenance",
	"partition", "metadata.prepare_queue_depth", "metadata.journal_slots",
	"system.sharding", "system.memory_pool", "system.stream", "system.topic",
	"system.partition", "system.segment", "system.recovery", "system.runtime",
	"message_saver", "system.state", "system.backup", "system.compression", "tcp.socket",
	"cache_indexes", "tcp.ipv6",
}

// field is one leaf of the schema: its dotted TOML key and its value.
type field struct {
	key string
	v   reflect.Value
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// leaves walks the schema of c and returns every settable leaf.
func leaves(c *Config) []field {
	var out []field
	var walk func(prefix string, v reflect.Value)
	walk = func(prefix string, v reflect.Value) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			tag := strings.Split(f.Tag.Get("toml"), ",")[0]
			if tag == "" || tag == "-" {
				continue
			}
			key := tag
			if prefix != "" {
				key = prefix + "." + tag
			}
			fv := v.Field(i)
			if fv.Kind() == reflect.Struct && !reflect.PointerTo(fv.Type()).Implements(textUnmarshaler) {
				walk(key, fv)
				continue
			}
			out = append(out, field{key: key, v: fv})
		}
	}
	walk("", reflect.ValueOf(c).Elem())
	return out
}

// Keys returns every dotted key of the schema, sorted.
func Keys() []string {
	var c Config
	var out []string
	for _, f := range leaves(&c) {
		out = append(out, f.key)
	}
	sort.Strings(out)
	return out
}

// EnvName returns the environment variable for a dotted key:
// IGGY_ + upper-cased key with '.' replaced by '_'.
func EnvName(key string) string {
	return EnvPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

func matchesPrefix(key string, prefixes []string) bool {
	for _, p := range prefixes {
		if key == p || strings.HasPrefix(key, p+".") {
			return true
		}
	}
	return false
}

// Load builds a configuration from the defaults, the TOML file at path
// (skipped when path is empty) and the IGGY_* variables in environ
// ("KEY=value" strings, as os.Environ returns). It does not call Validate:
// flags are applied by the caller first.
func Load(path string, environ []string) (Config, []Notice, error) {
	cfg := Default()
	var notices []Notice
	if path != "" {
		data, err := readFile(path)
		if err != nil {
			return cfg, notices, err
		}
		n, err := decodeTOML(&cfg, data)
		notices = append(notices, n...)
		if err != nil {
			return cfg, notices, fmt.Errorf("config file %s: %w", path, err)
		}
	}
	n, err := applyEnv(&cfg, environ)
	notices = append(notices, n...)
	return cfg, notices, err
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	if st.Size() > maxConfigFileBytes {
		return nil, fmt.Errorf("config file %s: larger than %d bytes", path, maxConfigFileBytes)
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("config file %s: %w", path, err)
	}
	return data, nil
}

// Parse decodes TOML text over the defaults (no environment). It is the
// entry point of the configuration fuzz target.
func Parse(data []byte) (Config, []Notice, error) {
	cfg := Default()
	n, err := decodeTOML(&cfg, data)
	return cfg, n, err
}

// decodeTOML merges data over cfg. Keys outside the schema are reported;
// relocated keys are an error.
func decodeTOML(cfg *Config, data []byte) (notices []Notice, err error) {
	md, err := toml.Decode(string(data), cfg)
	if err != nil {
		return nil, err
	}
	known := Keys()
	notices = append(notices, vsrFileNotices(cfg, md)...)
	var refused []error
	seen := map[string]bool{}
	for _, k := range md.Undecoded() {
		key := k.String()
		if r := relocatedFor(key); r != "" {
			if !seen[r] {
				refused = append(refused, fmt.Errorf("key %s is no longer a server setting: use %s", r, relocated[r]))
				seen[r] = true
			}
			continue
		}
		if typ := md.Type(k...); typ == "Hash" || typ == "ArrayHash" {
			continue // its keys are reported one by one
		}
		if matchesPrefix(key, unused) {
			notices = append(notices, Notice{Message: "config key " + key + " is not used by this server"})
			continue
		}
		notices = append(notices, Notice{Warn: true, Message: "unknown config key " + key + hint(key, known, func(s string) string { return s })})
	}
	return notices, errors.Join(refused...)
}

// relocatedFor returns the relocated key key falls under, or "".
func relocatedFor(key string) string {
	for r := range relocated {
		if key == r || strings.HasPrefix(key, r+".") {
			return r
		}
	}
	return ""
}

// applyEnv applies IGGY_* overrides computed from the schema.
func applyEnv(cfg *Config, environ []string) ([]Notice, error) {
	fields := leaves(cfg)
	byEnv := make(map[string]field, len(fields))
	var envNames []string
	for _, f := range fields {
		byEnv[EnvName(f.key)] = f
		envNames = append(envNames, EnvName(f.key))
	}
	var notices []Notice
	var errs []error
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		switch name {
		case EnvConfigPath, EnvEnvPath, EnvRootUsername, EnvRootPassword:
			continue
		}
		if f, ok := byEnv[name]; ok {
			if err := setText(f.v, value); err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %w", name, f.key, err))
			}
			if n, ok := vsrNotice(f.key, "environment variable "+name+" ("+f.key+")"); ok && !isDefaultValue(cfg, f.key) {
				notices = append(notices, n)
			}
			continue
		}
		if key, ok, err := applyIndexedEnv(cfg, name, value); ok {
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %w", name, key, err))
			}
			continue
		}
		if r := relocatedEnv(name); r != "" {
			errs = append(errs, fmt.Errorf("%s: %s is no longer a server setting: use %s", name, r, relocated[r]))
			continue
		}
		if unusedEnv(name) {
			notices = append(notices, Notice{Message: "environment variable " + name + " is not used by this server"})
			continue
		}
		notices = append(notices, Notice{Warn: true, Message: "unknown environment variable " + name + hint(name, envNames, func(s string) string { return s })})
	}
	return notices, errors.Join(errs...)
}

func relocatedEnv(name string) string {
	for r := range relocated {
		e := EnvName(r)
		if name == e || strings.HasPrefix(name, e+"_") {
			return r
		}
	}
	return ""
}

func unusedEnv(name string) bool {
	for _, p := range unused {
		e := EnvName(p)
		if name == e || strings.HasPrefix(name, e+"_") {
			return true
		}
	}
	return false
}

// setText parses s into the leaf v according to its type.
func setText(v reflect.Value, s string) error {
	if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
		return u.UnmarshalText([]byte(s))
	}
	s = strings.TrimSpace(s)
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not a boolean", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int64, reflect.Int32:
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint64, reflect.Uint32, reflect.Uint16, reflect.Uint8:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an unsigned integer", s)
		}
		v.SetUint(n)
	default:
		return fmt.Errorf("unsupported type %s", v.Type())
	}
	return nil
}

// hint returns ` (did you mean X?)` for the candidate closest to s, when
// one is close enough.
func hint(s string, candidates []string, norm func(string) string) string {
	best, bestD := "", 4
	for _, c := range candidates {
		if d := levenshtein(norm(s), norm(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

func levenshtein(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return 1 << 30
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Encode renders c as TOML (the effective configuration the server writes
// under its runtime directory).
func (c *Config) Encode() ([]byte, error) {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(c); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}
