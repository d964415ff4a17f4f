package tracing

import (
	"strings"
	"testing"
)

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		if got := Enabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: Enabled %v, want %v", c.env, got, c.want)
		}
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	p, err := FromEnv(t.Context(), "svc", "1")
	if p != nil || err != nil || p.Tracer("x") != nil || p.Shutdown(t.Context()) != nil {
		t.Fatalf("off: %v %v", p, err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if _, err := FromEnv(t.Context(), "svc", "1"); err == nil || !strings.Contains(err.Error(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Errorf("grpc: %v", err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	p, err = FromEnv(t.Context(), "svc", "1")
	if err != nil || p == nil || p.Tracer("x") == nil {
		t.Fatalf("on: %v %v", p, err)
	}
	p.Shutdown(t.Context())
}
