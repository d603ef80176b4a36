package cli

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestMarshalYAMLKeepsNamesOrderAndTypes(t *testing.T) {
	v := struct {
		Name   string   `json:"name"`
		Digits string   `json:"digits"`
		Yes    string   `json:"yes"`
		Count  uint64   `json:"count"`
		Empty  []int    `json:"empty"`
		Parts  []uint32 `json:"parts"`
		Opt    *int     `json:"opt"`
	}{"orders", "123", "true", 1 << 60, []int{}, []uint32{0, 2}, nil}
	out, err := marshalYAML(v)
	if err != nil {
		t.Fatal(err)
	}
	want := "name: orders\ndigits: \"123\"\nyes: \"true\"\ncount: 1152921504606846976\nempty: []\nparts:\n  - 0\n  - 2\nopt: null\n"
	if string(out) != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	var back map[string]any
	if err := yaml.Unmarshal(out, &back); err != nil || back["digits"] != "123" || back["yes"] != "true" {
		t.Fatalf("read back %v, %v", back, err)
	}
}
