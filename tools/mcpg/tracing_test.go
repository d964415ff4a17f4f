package main

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/pgtest"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is a minimal OTLP/HTTP trace collector keeping what it got.
type otlpReceiver struct {
	mu   sync.Mutex
	reqs []*coltrace.ExportTraceServiceRequest
	errs []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req coltrace.ExportTraceServiceRequest
	o.mu.Lock()
	defer o.mu.Unlock()
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		o.errs = append(o.errs, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
	} else if err := proto.Unmarshal(body, &req); err != nil {
		o.errs = append(o.errs, err.Error())
	} else {
		o.reqs = append(o.reqs, &req)
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Write(out)
}

// TestServeExportsSpansOverOTLP runs mcpg serve with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at a local collector and checks that a run_select call arrives
// as a span with its timing segments, in the caller's trace.
func TestServeExportsSpansOverOTLP(t *testing.T) {
	db := pgtest.Shared(t)
	rcv := &otlpReceiver{}
	col := httptest.NewServer(rcv)
	defer col.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", col.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	addr, stop := serving(t, "--database-url", db.URL(), "--http", "127.0.0.1:0")
	const traceID = "0af7651916cd43dd8448eb211c80319c"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := httpClient(t, ctx, addr, map[string]string{"traceparent": "00-" + traceID + "-b7ad6b7169203331-01"})
	var req mcp.CallToolRequest
	req.Params.Name = "run_select"
	req.Params.Arguments = map[string]any{"sql": "SELECT 1"}
	if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
		t.Fatalf("run_select: %v %+v", err, res)
	}
	c.Close()
	if code, errs := stop(); code != exitOK { // shutdown flushes the batch
		t.Fatalf("exit %d: %s", code, errs)
	}
	rcv.mu.Lock()
	defer rcv.mu.Unlock()
	if len(rcv.errs) > 0 {
		t.Errorf("collector: %v", rcv.errs)
	}
	found := false
	for _, r := range rcv.reqs {
		for _, rs := range r.ResourceSpans {
			svc := ""
			for _, kv := range rs.Resource.GetAttributes() {
				if kv.Key == "service.name" {
					svc = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if s.Name != "tools/call run_select" {
						continue
					}
					found = true
					keys := map[string]bool{}
					for _, kv := range s.Attributes {
						keys[kv.Key] = true
					}
					if svc != "mcpg" || hex.EncodeToString(s.TraceId) != traceID || !keys["mcpg.t_db_ns"] || !keys["mcpg.t_parse_ns"] {
						t.Errorf("span: service %q trace %x attrs %v", svc, s.TraceId, keys)
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("no run_select span among %d export requests", len(rcv.reqs))
	}
}

func TestServeRefusesGRPCProtocol(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	code, _, stderr := call(t, "", "serve", "--database-url", "postgres://127.0.0.1:1/x")
	if code != exitUsage || !strings.Contains(stderr, "OTEL_EXPORTER_OTLP_PROTOCOL") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
