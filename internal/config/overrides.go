package config

import "strings"

// EnvOverrides returns the names of the IGGY_* variables in environ that
// set a configuration key (the ones Load applies), in their order in
// environ. Variables that are not configuration keys (IGGY_CONFIG_PATH,
// the root credentials, unknown names) are left out.
func EnvOverrides(environ []string) []string {
	scratch := Default()
	byEnv := map[string]bool{}
	for _, f := range leaves(&scratch) {
		byEnv[EnvName(f.key)] = true
	}
	var out []string
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || !strings.HasPrefix(name, EnvPrefix) {
			continue
		}
		if byEnv[name] {
			out = append(out, name)
			continue
		}
		if _, ok, _ := applyIndexedEnv(&scratch, name, value); ok {
			out = append(out, name)
		}
	}
	return out
}
