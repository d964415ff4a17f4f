package mcpserver

// Benchmarks of the MCP layer: run_select through mcp-go's in-process and
// streamable HTTP clients against the executor alone on the same pool.
// Each reports the median per-call latency as p50-ns next to ns/op.

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/pgexec"
)

const bench100kSQL = "SELECT g, g::text AS s, g * 1.5 AS f, DATE '2020-01-01' + g % 1000 AS d FROM generate_series(1, 100000) g"

// benchLatencies records one duration per operation.
type benchLatencies []time.Duration

func (l benchLatencies) report(b *testing.B) {
	if len(l) == 0 {
		return
	}
	slices.Sort(l)
	b.ReportMetric(float64(l[len(l)/2].Nanoseconds()), "p50-ns")
}

// startTB starts and initializes c for a benchmark.
func startTB(b *testing.B, c *client.Client) *client.Client {
	b.Helper()
	ctx := context.Background()
	b.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	return c
}

func benchCalls(b *testing.B, c *client.Client, sql string, wantRows int) {
	ctx := context.Background()
	var req mcp.CallToolRequest
	req.Params.Name = "run_select"
	req.Params.Arguments = map[string]any{"sql": sql}
	if wantRows > 100 {
		req.Params.Arguments = map[string]any{"sql": sql, "max_rows": wantRows}
	}
	once := func() *mcp.CallToolResult {
		res, err := c.CallTool(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if res.IsError {
			b.Fatalf("isError: %v", res.Content)
		}
		return res
	}
	// Warm up (connect) and check the row count outside the timed loop.
	res := once()
	if n := len(decodeTB(b, res.Content[0].(mcp.TextContent).Text).Rows); n != wantRows {
		b.Fatalf("%d rows, want %d", n, wantRows)
	}
	lat := make(benchLatencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		once()
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	lat.report(b)
}

func decodeTB(b *testing.B, text string) doc {
	var d doc
	if err := json.Unmarshal([]byte(text), &d); err != nil {
		b.Fatalf("not JSON: %v", err)
	}
	return d
}

func BenchmarkInprocRunSelect1(b *testing.B) {
	srv, _ := newPoolServer(b, Config{}, 1)
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		b.Fatal(err)
	}
	benchCalls(b, startTB(b, c), "SELECT 1", 1)
}

func BenchmarkExecutorSelect1(b *testing.B) {
	cfg := Config{}
	_, pool := newPoolServer(b, cfg, 1)
	if err := cfg.Check(); err != nil {
		b.Fatal(err)
	}
	v, err := cfg.validator()
	if err != nil {
		b.Fatal(err)
	}
	e, err := pgexec.New(pool, v, pgexec.Options{MaxRows: cfg.MaxRows, MaxBytes: cfg.MaxBytes, StatementTimeout: cfg.StatementTimeout})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var buf []byte
	if _, err := e.Run(ctx, "SELECT 1", nil, nil); err != nil {
		b.Fatal(err)
	}
	lat := make(benchLatencies, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		res, err := e.Run(ctx, "SELECT 1", nil, buf[:0])
		lat = append(lat, time.Since(t0))
		if err != nil {
			b.Fatal(err)
		}
		buf = res.JSON
	}
	b.StopTimer()
	lat.report(b)
}

func httpBenchClient(b *testing.B, cfg Config) *client.Client {
	srv, _ := newPoolServer(b, cfg, 1)
	ts := httptest.NewServer(NewHTTPHandler(srv, HTTPOptions{}))
	b.Cleanup(ts.Close)
	c, err := client.NewStreamableHttpClient(ts.URL+EndpointPath, transport.WithHTTPHeaders(nil))
	if err != nil {
		b.Fatal(err)
	}
	return startTB(b, c)
}

func BenchmarkHTTPRunSelect1(b *testing.B) {
	benchCalls(b, httpBenchClient(b, Config{}), "SELECT 1", 1)
}

func BenchmarkHTTP100kRows(b *testing.B) {
	c := httpBenchClient(b, Config{MaxRows: 100000, MaxBytes: 256 << 20})
	benchCalls(b, c, bench100kSQL, 100000)
}
