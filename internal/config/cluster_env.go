package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// Environment limits for array-of-table elements (cluster-contract.md
// §1.3: vector elements by index, up to 256 nodes and 16 selectors).
const (
	maxEnvSliceIndex = 255
)

// applyIndexedEnv sets a leaf reached through an array of tables, such as
// IGGY_CLUSTER_NODES_1_PORTS_TCP or
// IGGY_CLUSTER_NODES_0_ADVERTISED_ADDRESSES_2_CLIENT_CIDR. An index past
// the end grows the array with zero-valued elements (which validation
// then reports). It returns the dotted key it set (with [i] indexes) and
// false when name does not address such a leaf.
func applyIndexedEnv(cfg *Config, name, value string) (string, bool, error) {
	rest, ok := strings.CutPrefix(name, EnvPrefix)
	if !ok {
		return "", false, nil
	}
	return setIndexed(reflect.ValueOf(cfg).Elem(), "", rest, value, false)
}

// setIndexed matches rest (upper-case, '_'-joined) against the fields of
// the struct v. viaSlice records whether an array index was crossed: plain
// leaves are handled by applyEnv itself.
func setIndexed(v reflect.Value, prefix, rest, value string, viaSlice bool) (string, bool, error) {
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
		up := strings.ToUpper(tag)
		fv := v.Field(i)
		switch {
		case fv.Kind() == reflect.Slice && fv.Type().Elem().Kind() == reflect.Struct:
			after, ok := strings.CutPrefix(rest, up+"_")
			if !ok {
				continue
			}
			digits, tail, ok := strings.Cut(after, "_")
			if !ok {
				continue
			}
			idx, err := strconv.Atoi(digits)
			if err != nil || idx < 0 || digits != strconv.Itoa(idx) {
				continue
			}
			if idx > maxEnvSliceIndex {
				return key, true, fmt.Errorf("index %d is above %d", idx, maxEnvSliceIndex)
			}
			elem := reflect.New(fv.Type().Elem()).Elem()
			if idx < fv.Len() {
				elem.Set(fv.Index(idx))
			}
			k, ok, err := setIndexed(elem, fmt.Sprintf("%s[%d]", key, idx), tail, value, true)
			if !ok {
				continue
			}
			if idx >= fv.Len() {
				grown := reflect.MakeSlice(fv.Type(), idx+1, idx+1)
				reflect.Copy(grown, fv)
				fv.Set(grown)
			}
			fv.Index(idx).Set(elem)
			return k, true, err
		case fv.Kind() == reflect.Struct && !reflect.PointerTo(fv.Type()).Implements(textUnmarshaler):
			if after, ok := strings.CutPrefix(rest, up+"_"); ok {
				if k, ok, err := setIndexed(fv, key, after, value, viaSlice); ok {
					return k, true, err
				}
			}
		default:
			if viaSlice && rest == up {
				return key, true, setText(fv, value)
			}
		}
	}
	return "", false, nil
}

// vsrFileNotices warns about every VSR-only key the TOML file sets to a
// value other than its default (the reference's own config.toml lists
// them all with their defaults, which deserves no warning).
func vsrFileNotices(cfg *Config, md toml.MetaData) []Notice {
	var out []Notice
	for _, k := range VSROnlyClusterKeys {
		if md.IsDefined(strings.Split(k, ".")...) && !isDefaultValue(cfg, k) {
			n, _ := vsrNotice(k, "config key "+k)
			out = append(out, n)
		}
	}
	return out
}

// isDefaultValue reports whether the leaf key of cfg holds its Default()
// value.
func isDefaultValue(cfg *Config, key string) bool {
	def := Default()
	var a, b reflect.Value
	for _, f := range leaves(cfg) {
		if f.key == key {
			a = f.v
		}
	}
	for _, f := range leaves(&def) {
		if f.key == key {
			b = f.v
		}
	}
	return a.IsValid() && b.IsValid() && reflect.DeepEqual(a.Interface(), b.Interface())
}
