package config

import (
	"strings"
	"testing"
	"time"
)

func TestTelemetryDefaults(t *testing.T) {
	c := Default()
	tc := c.Telemetry
	if tc.Enabled || tc.ServiceName != "iggy" || tc.Logs.Transport != "grpc" || tc.Logs.Endpoint != "http://localhost:7281/v1/logs" ||
		tc.Traces.Transport != "grpc" || tc.Traces.Endpoint != "http://localhost:7281/v1/traces" || tc.Traces.SampleRatio != 1 ||
		tc.Metrics.Transport != "grpc" || tc.Metrics.Endpoint != "" || tc.Metrics.Interval != Duration(time.Minute) {
		t.Fatalf("defaults %+v", tc)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestTelemetryFileAndEnv(t *testing.T) {
	c, notices, err := Parse([]byte("[telemetry]\nenabled = true\nservice_name = \"svc\"\n[telemetry.traces]\ntransport = \"http\"\nsample_ratio = 0.5\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range notices {
		if strings.Contains(n.Message, "telemetry") {
			t.Errorf("telemetry key reported: %s", n.Message)
		}
	}
	if !c.Telemetry.Enabled || c.Telemetry.ServiceName != "svc" || c.Telemetry.Traces.Transport != "http" || c.Telemetry.Traces.SampleRatio != 0.5 {
		t.Fatalf("parsed %+v", c.Telemetry)
	}
	if _, err := applyEnv(&c, []string{"IGGY_TELEMETRY_TRACES_SAMPLE_RATIO=0.25", "IGGY_TELEMETRY_LOGS_TRANSPORT=http", "IGGY_TELEMETRY_TRACES_ENDPOINT=http://127.0.0.1:4318/v1/traces"}); err != nil {
		t.Fatal(err)
	}
	if c.Telemetry.Traces.SampleRatio != 0.25 || c.Telemetry.Logs.Transport != "http" || c.Telemetry.Traces.Endpoint != "http://127.0.0.1:4318/v1/traces" {
		t.Fatalf("env %+v", c.Telemetry)
	}
	if _, err := applyEnv(&c, []string{"IGGY_TELEMETRY_TRACES_SAMPLE_RATIO=lots"}); err == nil {
		t.Fatal("a non-numeric ratio was accepted")
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := c.Encode()
	if err != nil || !strings.Contains(string(out), "sample_ratio") {
		t.Fatalf("encode: %v\n%s", err, out)
	}
	back, _, err := Parse(out)
	if err != nil || back.Telemetry != c.Telemetry {
		t.Fatalf("round trip: %v %+v", err, back.Telemetry)
	}
}

func TestTelemetryValidation(t *testing.T) {
	c := Default()
	c.Telemetry.Traces.SampleRatio = 1.5
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "telemetry.traces.sample_ratio") {
		t.Fatalf("ratio 1.5: %v", err)
	}
	c = Default()
	c.Telemetry.Enabled = true
	c.Telemetry.ServiceName = " "
	c.Telemetry.Logs.Transport = "udp"
	c.Telemetry.Traces.Endpoint = "localhost:4317"
	err := c.Validate()
	for _, key := range []string{"telemetry.service_name", "telemetry.logs.transport", "telemetry.traces.endpoint"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("missing %s in %v", key, err)
		}
	}
	c.Telemetry.Metrics.Endpoint = "grpc://collector"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "telemetry.metrics.endpoint") {
		t.Errorf("bad metrics endpoint: %v", err)
	}
	c.Telemetry.Metrics.Endpoint = ""
	c.Telemetry.Metrics.Interval = 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "telemetry.metrics.interval") {
		t.Errorf("zero metrics interval: %v", err)
	}
	c.Telemetry.Metrics.Interval = Duration(time.Minute)
	// Disabled telemetry is not checked beyond the ratio.
	c.Telemetry.Enabled = false
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
}
