package httpapi

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"
)

// TestOpenAPIMatchesRoutes walks every route of the table against the
// generated document and every operation of the document against the
// table, and checks that the mux serves each one (no 404/405 from the
// router itself).
func TestOpenAPIMatchesRoutes(t *testing.T) {
	s := testServer(t, defaultHTTP(), newClock().Now)
	w := serve(s, http.MethodGet, "/openapi.json", nil)
	if w.Code != 200 {
		t.Fatalf("GET /openapi.json = %d", w.Code)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Fatalf("openapi %q", doc.OpenAPI)
	}
	var inDoc []string
	for p, ops := range doc.Paths {
		for m := range ops {
			inDoc = append(inDoc, strings.ToUpper(m)+" "+p)
		}
	}
	sort.Strings(inDoc)
	want := s.routeKeys()
	if strings.Join(inDoc, "\n") != strings.Join(want, "\n") {
		t.Fatalf("document operations\n%s\nroute table\n%s", strings.Join(inDoc, "\n"), strings.Join(want, "\n"))
	}
	if len(want) < 45 {
		t.Fatalf("only %d routes", len(want))
	}
	for _, rt := range s.routes {
		path := strings.NewReplacer("{stream_id}", "1", "{topic_id}", "2", "{group_id}", "3", "{user_id}", "4",
			"{client_id}", "5", "{partition_id}", "6", "{consumer_id}", "7", "{name}", "tok", "{scope}", "topic", "{path...}", "x", "{$}", "").Replace(rt.Pattern)
		r, pattern := s.mux.Handler(newReq(rt.Method, path))
		if r == nil || pattern != rt.Method+" "+rt.Pattern {
			t.Errorf("%s %s routed to %q", rt.Method, path, pattern)
		}
		var op map[string]any
		_ = json.Unmarshal(doc.Paths[strings.NewReplacer("{path...}", "{path}", "{$}", "").Replace(rt.Pattern)][strings.ToLower(rt.Method)], &op)
		if op["summary"] != rt.Summary {
			t.Errorf("%s %s: summary %v", rt.Method, rt.Pattern, op["summary"])
		}
		if _, hasBody := op["requestBody"]; hasBody != (rt.Request != nil) {
			t.Errorf("%s %s: requestBody in document %v, in table %v", rt.Method, rt.Pattern, hasBody, rt.Request != nil)
		}
	}
}

func TestUnknownRouteAndMethod(t *testing.T) {
	s := testServer(t, defaultHTTP(), newClock().Now)
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/nope", 404},
		{"GET", "/streams/", 404},
		{"PATCH", "/streams", 405},
		{"DELETE", "/ping", 405},
		{"GET", "/streams/../streams", 404},
		{"GET", "/streams//topics", 404},
	} {
		w := serve(s, tc.method, tc.path, nil)
		var body errorBody
		if w.Code != tc.status || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.ID != uint32(tc.status) {
			t.Errorf("%s %s = %d %s", tc.method, tc.path, w.Code, w.Body.String())
		}
	}
}

func TestMetricsEndpointCollision(t *testing.T) {
	cfg := defaultHTTP()
	cfg.Metrics.Endpoint = "/ping"
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("panicked: %v", r)
		}
	}()
	h := testServerErr(t, cfg)
	if h == nil {
		t.Fatal("a metrics endpoint on /ping was accepted")
	}
}
