package config

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

//go:generate go run ./gen -src . -o ../../deploy/config.toml

// Masked is what Render writes for a secret that is set.
const Masked = "******"

// RenderOptions shapes Render's output.
type RenderOptions struct {
	// Header is written first, as comment lines.
	Header string
	// Docs maps "TypeName.FieldName" to the field's doc comment, written
	// above its key; "TypeName" maps to the type's doc, written above its
	// table header. Nil writes no comments.
	Docs map[string]string
	// EnvNames adds each key's IGGY_* variable to its comment.
	EnvNames bool
}

var (
	secretType    = reflect.TypeFor[Secret]()
	durationType  = reflect.TypeFor[Duration]()
	sizeType      = reflect.TypeFor[Size]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// IsSecret reports whether a schema field holds a secret: its type is
// Secret, or it is tagged `secret:"true"`. Secrets are masked by Render.
func IsSecret(f reflect.StructField) bool {
	return f.Type == secretType || f.Tag.Get("secret") == "true"
}

// SecretKeys returns the dotted keys of every secret in the schema
// (elements of arrays of tables as key[].field), sorted.
func SecretKeys() []string {
	var out []string
	var walk func(prefix string, t reflect.Type)
	walk = func(prefix string, t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name := tomlName(f)
			if name == "" {
				continue
			}
			key := joinKey(prefix, name)
			switch {
			case IsSecret(f):
				out = append(out, key)
			case isTable(f.Type):
				walk(key, f.Type)
			case isTableArray(f.Type):
				walk(key+"[]", f.Type.Elem())
			}
		}
	}
	walk("", reflect.TypeFor[Config]())
	sort.Strings(out)
	return out
}

// Render writes c as commented TOML: every key of the schema in field
// order, leaves of a table before its sub-tables, durations and sizes in
// the reference's humane units ("7 days", "500 MB"), secrets that are set
// as Masked. Parsing the output gives c back, secrets aside. It renders
// both the shipped example configuration and `iggo server --print-config`.
func Render(c *Config, o RenderOptions) ([]byte, error) {
	var b strings.Builder
	comment(&b, o.Header)
	r := renderer{b: &b, o: o}
	if err := r.table("", reflect.ValueOf(c).Elem(), false); err != nil {
		return nil, err
	}
	return []byte(strings.TrimLeft(b.String(), "\n")), nil
}

type renderer struct {
	b *strings.Builder
	o RenderOptions
}

func tomlName(f reflect.StructField) string {
	name := strings.Split(f.Tag.Get("toml"), ",")[0]
	if name == "-" || !f.IsExported() {
		return ""
	}
	return name
}

func joinKey(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

func isTable(t reflect.Type) bool {
	return t.Kind() == reflect.Struct && !reflect.PointerTo(t).Implements(textMarshaler) && !t.Implements(textMarshaler)
}

func isTableArray(t reflect.Type) bool {
	return t.Kind() == reflect.Slice && isTable(t.Elem())
}

// table writes the leaves of v, then its sub-tables. inArray marks the
// inside of an array of tables, whose keys have no environment variable
// of the simple form.
func (r *renderer) table(key string, v reflect.Value, inArray bool) error {
	t := v.Type()
	var subs []int
	for i := range t.NumField() {
		f := t.Field(i)
		name := tomlName(f)
		if name == "" {
			continue
		}
		if isTable(f.Type) || isTableArray(f.Type) {
			subs = append(subs, i)
			continue
		}
		val, err := leafText(f, v.Field(i))
		if err != nil {
			return fmt.Errorf("%s: %w", joinKey(key, name), err)
		}
		doc := r.o.Docs[t.Name()+"."+f.Name]
		if r.o.EnvNames && !inArray {
			doc = strings.TrimSpace(doc + "\nEnv: " + EnvName(joinKey(key, name)))
		}
		comment(r.b, doc)
		fmt.Fprintf(r.b, "%s = %s\n", name, val)
	}
	for _, i := range subs {
		f := t.Field(i)
		sub := joinKey(key, tomlName(f))
		doc := r.o.Docs[t.Name()+"."+f.Name]
		if isTable(f.Type) {
			r.b.WriteString("\n")
			comment(r.b, doc)
			fmt.Fprintf(r.b, "[%s]\n", sub)
			if err := r.table(sub, v.Field(i), inArray); err != nil {
				return err
			}
			continue
		}
		s := v.Field(i)
		r.b.WriteString("\n")
		if s.Len() == 0 {
			comment(r.b, strings.TrimSpace(doc+"\nNone by default; add [["+sub+"]] tables."))
			continue
		}
		for j := range s.Len() {
			if j == 0 {
				comment(r.b, doc)
			} else {
				r.b.WriteString("\n")
			}
			fmt.Fprintf(r.b, "[[%s]]\n", sub)
			if err := r.table(sub, s.Index(j), true); err != nil {
				return err
			}
		}
	}
	return nil
}

func comment(b *strings.Builder, doc string) {
	doc = strings.TrimSpace(doc)
	if doc == "" {
		return
	}
	for _, line := range strings.Split(doc, "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			b.WriteString("#\n")
			continue
		}
		b.WriteString("# " + line + "\n")
	}
}

// leafText renders one value as TOML.
func leafText(f reflect.StructField, v reflect.Value) (string, error) {
	if IsSecret(f) {
		if v.Kind() == reflect.String && v.String() == "" {
			return `""`, nil
		}
		return `"` + Masked + `"`, nil
	}
	switch v.Type() {
	case durationType:
		return `"` + HumanDuration(time.Duration(v.Int())) + `"`, nil
	case sizeType:
		return `"` + HumanSize(v.Uint()) + `"`, nil
	}
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return `""`, nil
		}
		v = v.Elem()
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		text, err := m.MarshalText()
		if err != nil {
			return "", err
		}
		return scalar(string(text))
	}
	if v.Kind() == reflect.Map {
		return inlineTable(v)
	}
	return scalar(v.Interface())
}

// scalar encodes x with the TOML encoder (strings, numbers, booleans and
// arrays of them).
func scalar(x any) (string, error) {
	var b strings.Builder
	if err := toml.NewEncoder(&b).Encode(map[string]any{"v": x}); err != nil {
		return "", err
	}
	s := strings.TrimSpace(b.String())
	val, ok := strings.CutPrefix(s, "v = ")
	if !ok {
		return "", fmt.Errorf("value of type %T is not a TOML scalar", x)
	}
	return val, nil
}

func inlineTable(v reflect.Value) (string, error) {
	keys := v.MapKeys()
	sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		val, err := scalar(v.MapIndex(k).Interface())
		if err != nil {
			return "", err
		}
		name, err := scalar(fmt.Sprint(k))
		if err != nil {
			return "", err
		}
		parts = append(parts, name+" = "+val)
	}
	return "{" + strings.Join(parts, ", ") + "}", nil
}

// HumanDuration writes d as ParseDuration reads it, in the reference's
// style: "7 days", "1 h", "30 s", "1 h 30 m", "500 ms"; "0" for zero.
func HumanDuration(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	neg := d < 0
	if neg {
		d = -d
	}
	units := []struct {
		name string
		d    time.Duration
	}{
		{"days", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second},
		{"ms", time.Millisecond}, {"us", time.Microsecond}, {"ns", time.Nanosecond},
	}
	var parts []string
	for _, u := range units {
		if n := d / u.d; n > 0 {
			name := u.name
			if name == "days" && n == 1 {
				name = "day"
			}
			parts = append(parts, fmt.Sprintf("%d %s", n, name))
			d -= n * u.d
		}
	}
	s := strings.Join(parts, " ")
	if neg {
		s = "-" + s
	}
	return s
}

// HumanSize writes n with the unit that divides it exactly and gives the
// smallest number, decimal (KB, MB, GB, TB) or binary (KiB ... TiB), as
// ParseSize reads it; "0" for zero.
func HumanSize(n uint64) string {
	if n == 0 {
		return "0"
	}
	best, unit := n, "B"
	for _, u := range []struct {
		name string
		f    uint64
	}{{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40}} {
		if n%u.f == 0 && n/u.f < best {
			best, unit = n/u.f, u.name
		}
	}
	return fmt.Sprintf("%d %s", best, unit)
}
