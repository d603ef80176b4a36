package cli

import (
	"bytes"
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

// marshalYAML renders v as a YAML document with the same field names and
// order as its JSON form: v is encoded as JSON (its views carry json
// tags), the JSON is read back as a YAML node tree (JSON is YAML), and
// the tree is written in block style.
func marshalYAML(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode output: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("convert output to YAML: %w", err)
	}
	blockStyle(&doc)
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("encode output as YAML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encode output as YAML: %w", err)
	}
	return out.Bytes(), nil
}

// blockStyle clears the flow and quoting styles the JSON input gave the
// nodes, so the encoder picks block collections and plain scalars where
// they read back as the same value. Empty collections stay in flow style
// ([] and {}).
func blockStyle(n *yaml.Node) {
	switch n.Kind {
	case yaml.SequenceNode, yaml.MappingNode:
		if len(n.Content) > 0 {
			n.Style = 0
		}
	case yaml.ScalarNode:
		n.Style = 0
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}
