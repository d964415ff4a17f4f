package mcpserver

import (
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// recordingTracer returns a tracer whose ended spans rec holds.
func recordingTracer(t *testing.T) (trace.Tracer, *tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(t.Context()) })
	return tp.Tracer("test"), rec
}

func spanAttrs(s sdktrace.ReadOnlySpan) map[string]any {
	m := map[string]any{}
	for _, kv := range s.Attributes() {
		m[string(kv.Key)] = kv.Value.AsInterface()
	}
	return m
}

func TestTracingSpanPerCall(t *testing.T) {
	tr, rec := recordingTracer(t)
	c := newClient(t, Config{Tracer: tr, AllowFunctions: []string{"pg_sleep"}})
	if text, isErr := call(t, c, "run_select", map[string]any{"sql": "SELECT pg_sleep(0.02), 1"}); isErr {
		t.Fatal(text)
	}
	if _, isErr := call(t, c, "run_select", map[string]any{"sql": "DELETE FROM shop.customers"}); !isErr {
		t.Fatal("DELETE allowed")
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2", len(spans))
	}
	ok, refused := spans[0], spans[1]
	a := spanAttrs(ok)
	if ok.Name() != "tools/call run_select" || ok.SpanKind() != trace.SpanKindServer ||
		a["gen_ai.tool.name"] != "run_select" || a["mcpg.verdict"] != VerdictAllow || a["mcpg.rows"] != int64(1) {
		t.Errorf("span %q kind %v attrs %v", ok.Name(), ok.SpanKind(), a)
	}
	var sum int64
	for _, k := range []string{"mcpg.t_parse_ns", "mcpg.t_pool_ns", "mcpg.t_txn_ns", "mcpg.t_db_ns", "mcpg.t_serialize_ns"} {
		v, isInt := a[k].(int64)
		if !isInt || v < 0 {
			t.Errorf("%s = %v", k, a[k])
		}
		sum += v
	}
	if db := a["mcpg.t_db_ns"].(int64); db < 20e6 {
		t.Errorf("t_db %d ns for a 20 ms sleep", db)
	}
	if total := a["mcpg.dur_ns"].(int64); sum > total {
		t.Errorf("segments add to %d ns, more than the call's %d ns", sum, total)
	}
	if a := spanAttrs(refused); a["mcpg.verdict"] != VerdictRefuse || refused.Status().Code.String() != "Error" {
		t.Errorf("refused call: status %v attrs %v", refused.Status(), a)
	}
}

func TestTracingHonoursTraceparentOverHTTP(t *testing.T) {
	tr, rec := recordingTracer(t)
	ts := httptest.NewServer(NewHTTPHandler(newServer(t, Config{Tracer: tr}), HTTPOptions{}))
	defer ts.Close()
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	c := httpClient(t, ts, map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01"})
	if text, isErr := call(t, c, "list_schemas", nil); isErr {
		t.Fatal(text)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	s := spans[0]
	if s.SpanContext().TraceID().String() != traceID || s.Parent().SpanID().String() != parentID || !s.Parent().IsRemote() {
		t.Errorf("span trace %s parent %s (remote %v), want trace %s parent %s",
			s.SpanContext().TraceID(), s.Parent().SpanID(), s.Parent().IsRemote(), traceID, parentID)
	}
}
