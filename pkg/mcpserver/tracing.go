// One OpenTelemetry span per tool call, when a tracer is configured.

package mcpserver

import (
	"context"

	"github.com/qpkit/qpkit/pkg/pgexec"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// startSpan starts the span of one call of tool, a child of any trace
// context the transport extracted (W3C traceparent over HTTP). Without a
// tracer it returns ctx and a nil span and costs nothing more.
func (h *handler) startSpan(ctx context.Context, tool string) (context.Context, trace.Span) {
	if h.cfg.Tracer == nil {
		return ctx, nil
	}
	return h.cfg.Tracer.Start(ctx, "tools/call "+tool, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(
			attribute.String("mcp.method.name", "tools/call"),
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", tool),
			attribute.String("db.system.name", "postgresql"),
		))
}

// endSpan records a call's outcome and, for a statement that reached the
// executor, its timing segments in nanoseconds, then ends span.
func endSpan(span trace.Span, r *AuditRecord, o *outcome) {
	if span == nil {
		return
	}
	attrs := []attribute.KeyValue{
		attribute.String("mcpg.verdict", r.Verdict),
		attribute.String("mcpg.principal", r.Principal),
		attribute.Int("mcpg.rows", r.Rows),
		attribute.Int("mcpg.bytes", r.Bytes),
		attribute.Int64("mcpg.dur_ns", r.DurNS),
	}
	if r.Session != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", r.Session))
	}
	if r.SQLSHA256 != "" {
		attrs = append(attrs, attribute.String("mcpg.sql_sha256", r.SQLSHA256))
	}
	if o.timed {
		attrs = append(attrs, timingAttrs(o.timing)...)
	}
	span.SetAttributes(attrs...)
	if r.Error != "" {
		span.SetStatus(codes.Error, r.Error)
	}
	span.End()
}

// timingAttrs are the executor's segments as span attributes, named like
// the benchmark's fields.
func timingAttrs(t pgexec.Timing) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.Int64("mcpg.t_parse_ns", t.Parse.Nanoseconds()),
		attribute.Int64("mcpg.t_pool_ns", t.Pool.Nanoseconds()),
		attribute.Int64("mcpg.t_txn_ns", t.Txn.Nanoseconds()),
		attribute.Int64("mcpg.t_db_ns", t.DB.Nanoseconds()),
		attribute.Int64("mcpg.t_serialize_ns", t.Serialize.Nanoseconds()),
		attribute.Int64("mcpg.t_serialize_overlap_ns", t.SerializeOverlap.Nanoseconds()),
	}
}
