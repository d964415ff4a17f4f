package tracing

import (
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// OTEL_SERVICE_NAME must name the service whatever else
// OTEL_RESOURCE_ATTRIBUTES holds (docs/mcpg.md: "OTEL_SERVICE_NAME
// overrides the service name mcpg"; OTel spec: OTEL_SERVICE_NAME sets
// service.name and wins over OTEL_RESOURCE_ATTRIBUTES). FromEnv only applies
// it when resource.New(WithFromEnv()) returns no error, so one malformed
// pair in OTEL_RESOURCE_ATTRIBUTES ("team", no '=': a partial-resource
// error; the SDK itself keeps the valid pairs) silently drops the service
// name and spans are exported as service "mcpg".
func TestCliReviewServiceNameLostWithBadResourceAttributes(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_SERVICE_NAME", "billing-mcp")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=prod,team")
	p, err := FromEnv(t.Context(), "mcpg", "1")
	if err != nil || p == nil {
		t.Fatalf("FromEnv: %v %v", p, err)
	}
	_, s := p.Tracer("x").Start(t.Context(), "s")
	svc := ""
	for _, kv := range s.(sdktrace.ReadOnlySpan).Resource().Attributes() {
		if kv.Key == "service.name" {
			svc = kv.Value.AsString()
		}
	}
	// Drop the span rather than trying to export it to the closed port.
	p.Shutdown(t.Context())
	if svc != "billing-mcp" {
		t.Errorf("service.name %q, want %q from OTEL_SERVICE_NAME", svc, "billing-mcp")
	}
}

// The OTel spec (sdk-environment-variables.md, "Enum value") says enum
// values SHOULD be interpreted case-insensitively, and FromEnv already
// treats OTEL_SDK_DISABLED so (EqualFold); OTEL_TRACES_EXPORTER=NONE (or
// None) is compared case-sensitively, so tracing stays on and mcpg keeps
// exporting spans the operator turned off.
func TestCliReviewTracesExporterNoneCaseInsensitive(t *testing.T) {
	for _, v := range []string{"NONE", "None"} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": v}
		if Enabled(func(k string) string { return env[k] }) {
			t.Errorf("OTEL_TRACES_EXPORTER=%s: tracing enabled, want off", v)
		}
	}
}
