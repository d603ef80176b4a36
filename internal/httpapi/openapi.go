package httpapi

import (
	"encoding/json"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// openAPIVersion is the document's OpenAPI version.
const openAPIVersion = "3.1.0"

var pathParam = regexp.MustCompile(`\{([a-z_]+)(\.\.\.)?\}`)

// openAPIPath turns a mux pattern into an OpenAPI path ("{path...}" ->
// "{path}") and lists its parameters.
func openAPIPath(pattern string) (string, []string) {
	pattern = strings.TrimSuffix(pattern, "{$}") // "/{$}" is exactly "/"
	var names []string
	for _, m := range pathParam.FindAllStringSubmatch(pattern, -1) {
		names = append(names, m[1])
	}
	return pathParam.ReplaceAllString(pattern, "{$1}"), names
}

// schemaGen builds JSON Schemas of Go types into components.
type schemaGen struct {
	components map[string]any
}

var (
	sizeType     = reflect.TypeFor[Size]()
	u128Type     = reflect.TypeFor[U128]()
	rawJSONType  = reflect.TypeFor[json.RawMessage]()
	consumerType = reflect.TypeFor[ConsumerID]()
)

func (g *schemaGen) schema(t reflect.Type) map[string]any {
	switch t {
	case sizeType:
		return map[string]any{"type": "string", "description": "byte size, e.g. \"1.5 KiB\""}
	case u128Type:
		return map[string]any{"type": "integer", "description": "u128 message id (may exceed 2^64; strings accepted in requests)"}
	case rawJSONType:
		return map[string]any{"description": "array of header entries or base64 string of a TLV block"}
	case consumerType:
		return map[string]any{"oneOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}}
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.schema(t.Elem())
	case reflect.Bool:
		return map[string]any{"type": "boolean"}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Int, reflect.Int32, reflect.Int64:
		s := map[string]any{"type": "integer"}
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
			s["minimum"] = 0
		}
		return s
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}
	case reflect.String:
		return map[string]any{"type": "string"}
	case reflect.Slice:
		return map[string]any{"type": "array", "items": g.schema(t.Elem())}
	case reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": g.schema(t.Elem())}
	case reflect.Interface:
		return map[string]any{}
	case reflect.Struct:
		name := t.Name()
		if _, done := g.components[name]; !done {
			g.components[name] = nil // reserve (recursion)
			props := map[string]any{}
			var required []string
			for i := range t.NumField() {
				f := t.Field(i)
				tag := f.Tag.Get("json")
				if tag == "-" || !f.IsExported() {
					continue
				}
				parts := strings.Split(tag, ",")
				key := parts[0]
				if key == "" {
					key = f.Name
				}
				props[key] = g.schema(f.Type)
				if !strings.Contains(tag, "omitempty") {
					required = append(required, key)
				}
			}
			obj := map[string]any{"type": "object", "properties": props}
			if len(required) > 0 {
				obj["required"] = required
			}
			g.components[name] = obj
		}
		return map[string]any{"$ref": "#/components/schemas/" + name}
	}
	return map[string]any{}
}

// OpenAPI renders the OpenAPI 3.1 document of the route table.
func (s *Server) OpenAPI() ([]byte, error) {
	g := &schemaGen{components: map[string]any{}}
	g.schema(reflect.TypeFor[errorBody]())
	paths := map[string]map[string]any{}
	for _, rt := range s.routes {
		p, params := openAPIPath(rt.Pattern)
		op := map[string]any{
			"operationId": operationID(rt),
			"summary":     rt.Summary,
		}
		if rt.Command != 0 {
			op["x-iggy-command"] = uint32(rt.Command)
		}
		var ps []any
		for _, name := range params {
			ps = append(ps, map[string]any{"name": name, "in": "path", "required": true, "schema": map[string]any{"type": "string"}})
		}
		for _, q := range rt.Query {
			ps = append(ps, map[string]any{"name": q, "in": "query", "required": false, "schema": map[string]any{"type": "string"}})
		}
		if rt.Flags&flagConsistency != 0 {
			ps = append(ps, map[string]any{"name": "consistency", "in": "query", "required": false,
				"schema": map[string]any{"type": "string", "enum": []string{"serializable", "linearizable"}}})
		}
		if len(ps) > 0 {
			op["parameters"] = ps
		}
		if rt.Auth == authPublic {
			op["security"] = []any{}
		}
		if rt.Request != nil {
			op["requestBody"] = map[string]any{"required": true, "content": map[string]any{
				"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(rt.Request))}}}
		}
		ok := map[string]any{"description": "success"}
		switch {
		case rt.Response != nil:
			ok["content"] = map[string]any{"application/json": map[string]any{"schema": g.schema(reflect.TypeOf(rt.Response))}}
		case rt.ContentType != "":
			ok["content"] = map[string]any{rt.ContentType: map[string]any{"schema": map[string]any{"type": "string"}}}
		}
		op["responses"] = map[string]any{
			strconv.Itoa(rt.Status): ok,
			"default": map[string]any{"description": "error", "content": map[string]any{
				"application/json": map[string]any{"schema": map[string]any{"$ref": "#/components/schemas/errorBody"}}}},
		}
		if paths[p] == nil {
			paths[p] = map[string]any{}
		}
		paths[p][strings.ToLower(rt.Method)] = op
	}
	doc := map[string]any{
		"openapi": openAPIVersion,
		"info":    map[string]any{"title": "Iggo HTTP API", "version": "0.11.0"},
		"paths":   paths,
		"components": map[string]any{
			"schemas":         g.components,
			"securitySchemes": map[string]any{"bearer": map[string]any{"type": "http", "scheme": "bearer", "description": "JWT from a login, or a raw personal access token"}},
		},
		"security": []any{map[string]any{"bearer": []any{}}},
	}
	return json.MarshalIndent(doc, "", "  ")
}

// operationID is a stable id: method and the pattern's words.
func operationID(rt *route) string {
	var words []string
	for _, seg := range strings.Split(rt.Pattern, "/") {
		seg = strings.Trim(seg, "{}.$")
		seg = strings.ReplaceAll(seg, "-", "_")
		if seg != "" {
			words = append(words, seg)
		}
	}
	return strings.ToLower(rt.Method) + "_" + strings.Join(words, "_")
}

// routeKeys lists "METHOD path" of every route in document form (tests).
func (s *Server) routeKeys() []string {
	var out []string
	for _, rt := range s.routes {
		p, _ := openAPIPath(rt.Pattern)
		out = append(out, rt.Method+" "+p)
	}
	sort.Strings(out)
	return out
}
