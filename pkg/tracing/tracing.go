// Package tracing sets up OpenTelemetry tracing from the standard OTEL_*
// environment: spans go to an OTLP/HTTP collector when
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set, and nothing is set up at all otherwise, so that a server without a
// collector pays nothing for tracing.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// Propagator reads and writes W3C traceparent/tracestate headers.
var Propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Enabled reports whether the environment asks for trace export.
func Enabled(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	// The spec reads enum values without regard to case.
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") ||
		strings.EqualFold(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")), "none") {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Provider is a tracer provider exporting over OTLP/HTTP; Shutdown flushes
// the spans still buffered.
type Provider struct {
	*sdktrace.TracerProvider
}

// FromEnv returns a Provider when Enabled(os.Getenv), or nil when tracing
// is off. The exporter reads the OTEL_EXPORTER_OTLP_* variables itself
// (endpoint, headers, timeout, TLS). Only the http/protobuf protocol is
// built in: asking for grpc is an error rather than silently not
// exporting.
func FromEnv(ctx context.Context, service, version string) (*Provider, error) {
	if !Enabled(nil) {
		return nil, nil
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		if p := os.Getenv(k); p != "" {
			if p != "http/protobuf" {
				return nil, fmt.Errorf("tracing: %s=%q is not supported; use http/protobuf", k, p)
			}
			break
		}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(
		attribute.String("service.name", service),
		attribute.String("service.version", version),
	))
	if err != nil && !errors.Is(err, resource.ErrSchemaURLConflict) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	if name := os.Getenv("OTEL_SERVICE_NAME"); name != "" {
		// The environment's service name wins, as the OTel spec says,
		// whatever else OTEL_RESOURCE_ATTRIBUTES holds (a malformed pair
		// there must not lose it).
		if merged, err := resource.Merge(res, resource.NewSchemaless(attribute.String("service.name", name))); err == nil {
			res = merged
		}
	}
	return &Provider{sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
	)}, nil
}

// Tracer returns the named tracer of p, or nil for a nil p (tracing off).
func (p *Provider) Tracer(name string) trace.Tracer {
	if p == nil {
		return nil
	}
	return p.TracerProvider.Tracer(name)
}

// Shutdown flushes and stops p; a nil p does nothing.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	return p.TracerProvider.Shutdown(ctx)
}
