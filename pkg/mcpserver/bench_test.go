package mcpserver

// Benchmarks of the MCP layer: run_select through mcp-go's in-process and
// streamable HTTP clients against the executor alone on the same pool.
// Each reports the median per-call latency as p50-ns next to ns/op.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/pgtest"
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
	return startTBVersion(b, c, mcp.LATEST_PROTOCOL_VERSION)
}

// startTBVersion is startTB with the protocol version the client asks for.
func startTBVersion(b *testing.B, c *client.Client, version string) *client.Client {
	b.Helper()
	ctx := context.Background()
	b.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = version
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	if c.ProtocolVersion() != version {
		b.Fatalf("negotiated %s, want %s", c.ProtocolVersion(), version)
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
	if n := len(parseTSV(b, res.Content[0].(mcp.TextContent).Text).Rows); n != wantRows {
		b.Fatalf("%d rows, want %d", n, wantRows)
	}
	timeLoop(b, func() { once() })
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
	_, pool := newPoolServer(b, Config{}, 1)
	e := benchExecutor(b, pool)
	ctx := context.Background()
	var buf []byte
	if _, err := e.Run(ctx, "SELECT 1", nil, nil); err != nil {
		b.Fatal(err)
	}
	timeLoop(b, func() {
		res, err := e.Run(ctx, "SELECT 1", nil, buf[:0])
		if err != nil {
			b.Fatal(err)
		}
		buf = res.Doc
	})
}

// benchExecutor is an executor on pool as run_select's, by default
// settings and in its default format.
func benchExecutor(b *testing.B, pool *pgxpool.Pool) *pgexec.Executor {
	cfg := Config{}
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
	return e.WithFormat(pgexec.FormatTSV)
}

// timeLoop calls once b.N times, timing each call, and reports the p50
// beside ns/op.
func timeLoop(b *testing.B, once func()) {
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

func httpBenchClient(b *testing.B, cfg Config) *client.Client {
	return httpBenchClientVersion(b, cfg, mcp.LATEST_PROTOCOL_VERSION)
}

func httpBenchClientVersion(b *testing.B, cfg Config, version string) *client.Client {
	srv, _ := newPoolServer(b, cfg, 1)
	ts := httptest.NewServer(NewHTTPHandler(srv, HTTPOptions{}))
	b.Cleanup(ts.Close)
	c, err := client.NewStreamableHttpClient(ts.URL+EndpointPath, transport.WithHTTPHeaders(nil))
	if err != nil {
		b.Fatal(err)
	}
	return startTBVersion(b, c, version)
}

func BenchmarkHTTPRunSelect1(b *testing.B) {
	benchCalls(b, httpBenchClient(b, Config{}), "SELECT 1", 1)
}

func BenchmarkHTTP100kRows(b *testing.B) {
	c := httpBenchClient(b, Config{MaxRows: 100000, MaxBytes: 256 << 20})
	benchCalls(b, c, bench100kSQL, 100000)
}

// lineitemSQL makes 100,000 rows shaped like TPC-H lineitem (16 columns,
// the same types and similar widths) for the 100k-row benchmarks.
const lineitemSQL = `CREATE TABLE IF NOT EXISTS bench_lineitem AS SELECT
	g::bigint AS l_orderkey, (g * 7) % 200000 AS l_partkey, (g * 13) % 10000 AS l_suppkey, g % 7 + 1 AS l_linenumber,
	(g % 50 + 1)::numeric(15,2) AS l_quantity, (g * 1.37)::numeric(15,2) AS l_extendedprice,
	(g % 11 / 100.0)::numeric(15,2) AS l_discount, (g % 9 / 100.0)::numeric(15,2) AS l_tax,
	(ARRAY['A','N','R'])[g % 3 + 1]::char(1) AS l_returnflag, (ARRAY['F','O'])[g % 2 + 1]::char(1) AS l_linestatus,
	DATE '1992-01-02' + g % 2500 AS l_shipdate, DATE '1992-01-31' + g % 2500 AS l_commitdate,
	DATE '1992-01-10' + g % 2500 AS l_receiptdate, 'DELIVER IN PERSON'::char(25) AS l_shipinstruct,
	'TRUCK'::char(10) AS l_shipmode, 'carefully final deposits detect slyly ' || g % 1000 AS l_comment
	FROM generate_series(1, 100000) g`

// lineitemHTTP serves run_select over HTTP with caps raised for 100,000
// lineitem-shaped rows and returns the endpoint's URL.
func lineitemHTTP(b *testing.B) string {
	url, _ := lineitemHTTPConfig(b, Config{})
	return url
}

// serverTimer times each request its handler serves, up to the last byte
// handed to the connection.
type serverTimer struct {
	h    http.Handler
	last atomic.Int64 // nanoseconds
}

func (t *serverTimer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	t0 := time.Now()
	t.h.ServeHTTP(w, r)
	t.last.Store(int64(time.Since(t0)))
}

// lineitemHTTPConfig is lineitemHTTP with cfg's other settings; the
// timer has the server's time of the last request.
func lineitemHTTPConfig(b *testing.B, cfg Config) (string, *serverTimer) {
	cfg.MaxRows, cfg.MaxBytes = 100000, 256<<20
	srv, _ := newPoolServer(b, cfg, 1)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Shared(b).URL()) // the pool is read-only
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, lineitemSQL); err != nil {
		b.Fatal(err)
	}
	timer := &serverTimer{h: NewHTTPHandler(srv, HTTPOptions{})}
	ts := httptest.NewServer(timer)
	b.Cleanup(ts.Close)
	return ts.URL + EndpointPath, timer
}

// BenchmarkHTTPLineitem100k is run_select of 100,000 lineitem-shaped rows
// through mcp-go's streamable HTTP client.
func BenchmarkHTTPLineitem100k(b *testing.B) {
	c, err := client.NewStreamableHttpClient(lineitemHTTP(b))
	if err != nil {
		b.Fatal(err)
	}
	benchCalls(b, startTB(b, c), "SELECT * FROM bench_lineitem", 100000)
}

// BenchmarkHTTPLineitem100kRawClient is the same call from a minimal
// client: one POST of the JSON-RPC request and one json.Unmarshal of the
// reply. The difference to BenchmarkHTTPLineitem100k is mcp-go's client.
func BenchmarkHTTPLineitem100kRawClient(b *testing.B) {
	once := rawLineitemCall(b, lineitemHTTP(b))
	once()
	timeLoop(b, once)
}

// BenchmarkHTTPLineitem100kFastPath interleaves, per iteration, the
// 100,000-row call with the fast path and without it
// (Config.DisableFastPath), from the minimal client and from mcp-go's, and
// reports each one's p50, the p50 of the per-iteration ratios fast/mcp-go,
// and the server's own time (its handler, request in to last byte out) of
// each path over both clients' calls.
func BenchmarkHTTPLineitem100kFastPath(b *testing.B) {
	fastURL, fastTimer := lineitemHTTPConfig(b, Config{})
	slowURL, slowTimer := lineitemHTTPConfig(b, Config{DisableFastPath: true})
	mcpgoCall := func(url string) func() {
		c, err := client.NewStreamableHttpClient(url)
		if err != nil {
			b.Fatal(err)
		}
		startTB(b, c)
		var req mcp.CallToolRequest
		req.Params.Name = "run_select"
		req.Params.Arguments = map[string]any{"sql": "SELECT * FROM bench_lineitem", "max_rows": 100000}
		return func() {
			res, err := c.CallTool(context.Background(), req)
			if err != nil || res.IsError || !strings.HasSuffix(res.Content[0].(mcp.TextContent).Text, "\n(100000 rows)") {
				b.Fatal(err, res.IsError)
			}
		}
	}
	var fastServer, slowServer []time.Duration
	timed := func(f func(), t *serverTimer, d *[]time.Duration) func() {
		return func() {
			f()
			*d = append(*d, time.Duration(t.last.Load()))
		}
	}
	steps := []func(){
		timed(rawLineitemCall(b, fastURL), fastTimer, &fastServer),
		timed(rawLineitemCall(b, slowURL), slowTimer, &slowServer),
		timed(mcpgoCall(fastURL), fastTimer, &fastServer),
		timed(mcpgoCall(slowURL), slowTimer, &slowServer),
	}
	lat := interleave(b, steps)
	b.ReportMetric(p50(fastServer), "server-fast-p50-ns")
	b.ReportMetric(p50(slowServer), "server-mcpgo-p50-ns")
	b.ReportMetric(p50(lat[0]), "raw-fast-p50-ns")
	b.ReportMetric(p50(lat[1]), "raw-mcpgo-p50-ns")
	b.ReportMetric(p50(lat[2]), "client-fast-p50-ns")
	b.ReportMetric(p50(lat[3]), "client-mcpgo-p50-ns")
	b.ReportMetric(ratioP50(lat[0], lat[1]), "raw-fast/mcpgo")
	b.ReportMetric(ratioP50(lat[2], lat[3]), "client-fast/mcpgo")
	b.ReportMetric(0, "ns/op")
}

// rawLineitemCall returns one 100,000-row call to url from a minimal
// client, checked.
func rawLineitemCall(b *testing.B, url string) func() {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"` + mcp.LATEST_PROTOCOL_VERSION + `",` +
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}},` +
		`"name":"run_select","arguments":{"sql":"SELECT * FROM bench_lineitem","max_rows":100000}}}`
	return func() {
		req, err := http.NewRequest("POST", url, strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", mcp.LATEST_PROTOCOL_VERSION)
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "run_select")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		data, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			b.Fatalf("status %d, %v: %.300s", res.StatusCode, err, data)
		}
		var reply struct {
			Result struct {
				Content []struct{ Text string } `json:"content"`
				IsError bool                    `json:"isError"`
			} `json:"result"`
		}
		if err := json.Unmarshal(data, &reply); err != nil || reply.Result.IsError || len(reply.Result.Content) != 1 {
			b.Fatalf("reply %.300s: %v", data, err)
		}
		if !strings.HasSuffix(reply.Result.Content[0].Text, "\n(100000 rows)") {
			b.Fatalf("result ends %q", reply.Result.Content[0].Text[max(0, len(reply.Result.Content[0].Text)-40):])
		}
	}
}

// recorder is mcp-go's in-process transport keeping the bytes of the last
// request, so a benchmark can replay exactly what a real client sends.
type recorder struct {
	*transport.InProcessTransport
	last []byte
}

func (r *recorder) SendRequest(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	var err error
	if r.last, err = json.Marshal(req); err != nil {
		return nil, err
	}
	return r.InProcessTransport.SendRequest(ctx, req)
}

// BenchmarkOverheadSelect1 interleaves, per iteration, the executor alone,
// the server's handling of a JSON-RPC tools/call (decode, tool, encode)
// through mcp-go's HandleMessage and through the fast path (fastpath.go), a
// do-nothing tool through HandleMessage (mcp-go's share), a call through
// mcp-go's in-process client (which always takes HandleMessage), and one
// through mcp-go's client over this package's InProcessTransport (fast
// path), so that the noisy machine shifts all six alike. It reports each one's p50
// and the p50 of the per-iteration differences over the executor.
func BenchmarkOverheadSelect1(b *testing.B) {
	srv, pool := newPoolServer(b, Config{}, 1)
	srv.AddTool(mcp.NewTool("noop"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("1"), nil
	})
	e := benchExecutor(b, pool)
	rec := &recorder{InProcessTransport: transport.NewInProcessTransport(srv)}
	c := startTB(b, client.NewClient(rec))
	ours := startTB(b, NewInProcessClient(srv))
	ctx := context.Background()
	var req mcp.CallToolRequest
	req.Params.Name = "run_select"
	req.Params.Arguments = map[string]any{"sql": "SELECT 1"}
	if _, err := c.CallTool(ctx, req); err != nil {
		b.Fatal(err)
	}
	sel := rec.last // as the client sends it, with its _meta
	req.Params.Name = "noop"
	req.Params.Arguments = map[string]any{}
	if _, err := c.CallTool(ctx, req); err != nil {
		b.Fatal(err)
	}
	noop := rec.last
	req.Params.Name = "run_select"
	req.Params.Arguments = map[string]any{"sql": "SELECT 1"}
	handle := func(msg []byte) {
		out, err := json.Marshal(srv.HandleMessage(ctx, msg))
		if err != nil || !bytes.Contains(out, []byte(`"result"`)) || bytes.Contains(out, []byte(`"isError":true`)) {
			b.Fatalf("reply %s, %v", out, err)
		}
	}
	fast := fastPathOf(srv)
	steps := []func(){
		execSelect1(b, e),
		func() { handle(sel) },
		func() {
			out, ok := fast.handle(ctx, srv, sel)
			if !ok || !bytes.Contains(out, []byte(`"result"`)) || bytes.Contains(out, []byte(`"isError":true`)) {
				b.Fatalf("fast path: %v, reply %s", ok, out)
			}
		},
		func() { handle(noop) },
		func() {
			if res, err := c.CallTool(ctx, req); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		},
		func() {
			if res, err := ours.CallTool(ctx, req); err != nil || res.IsError {
				b.Fatal(err, res)
			}
		},
	}
	lat := interleave(b, steps)
	diff := func(j int) []time.Duration { return diffs(lat, j, 0) }
	b.ReportMetric(p50(lat[0]), "exec-p50-ns")
	b.ReportMetric(p50(lat[1]), "handle-p50-ns")
	b.ReportMetric(p50(lat[2]), "fast-p50-ns")
	b.ReportMetric(p50(lat[3]), "noop-p50-ns")
	b.ReportMetric(p50(lat[4]), "inproc-p50-ns")
	b.ReportMetric(p50(diff(1)), "handle-over-exec-p50-ns")
	b.ReportMetric(p50(diff(2)), "fast-over-exec-p50-ns")
	b.ReportMetric(p50(diff(4)), "inproc-over-exec-p50-ns")
	b.ReportMetric(p50(lat[5]), "ours-p50-ns")
	b.ReportMetric(p50(diff(5)), "ours-over-exec-p50-ns")
	b.ReportMetric(0, "ns/op")
}

// BenchmarkTransportsSelect1FastPath interleaves, per iteration, SELECT 1
// through mcp-go's client over stdio (in-process pipes into serveStdio)
// and over streamable HTTP, each against a server with the fast path and
// one without (Config.DisableFastPath), and reports each one's p50 and the
// p50 of the per-iteration ratios fast/mcp-go.
func BenchmarkTransportsSelect1FastPath(b *testing.B) {
	ctx := context.Background()
	stdioCall := func(cfg Config) func() {
		srv, _ := newPoolServer(b, cfg, 1)
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		sctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			serveStdio(sctx, srv, fastPathOf(srv), inR, outW, log.New(io.Discard, "", 0))
		}()
		b.Cleanup(func() { stop(); inW.Close(); outW.Close(); <-done })
		return selectCall(b, startTB(b, client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader(""))))))
	}
	httpCall := func(cfg Config) func() { return selectCall(b, httpBenchClient(b, cfg)) }
	steps := []func(){stdioCall(Config{}), stdioCall(Config{DisableFastPath: true}),
		httpCall(Config{}), httpCall(Config{DisableFastPath: true})}
	lat := interleave(b, steps)
	b.ReportMetric(p50(lat[0]), "stdio-fast-p50-ns")
	b.ReportMetric(p50(lat[1]), "stdio-mcpgo-p50-ns")
	b.ReportMetric(p50(lat[2]), "http-fast-p50-ns")
	b.ReportMetric(p50(lat[3]), "http-mcpgo-p50-ns")
	b.ReportMetric(ratioP50(lat[0], lat[1]), "stdio-fast/mcpgo")
	b.ReportMetric(ratioP50(lat[2], lat[3]), "http-fast/mcpgo")
	b.ReportMetric(0, "ns/op")
}

// selectCall returns one checked run_select of SELECT 1 through c.
func selectCall(b *testing.B, c *client.Client) func() {
	var req mcp.CallToolRequest
	req.Params.Name = "run_select"
	req.Params.Arguments = map[string]any{"sql": "SELECT 1"}
	return func() {
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// interleave warms every step up, then runs them in turn b.N times and
// returns each one's latencies.
func interleave(b *testing.B, steps []func()) [][]time.Duration {
	for _, f := range steps {
		f()
	}
	lat := make([][]time.Duration, len(steps))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, f := range steps {
			t0 := time.Now()
			f()
			lat[j] = append(lat[j], time.Since(t0))
		}
	}
	b.StopTimer()
	return lat
}

// execSelect1 is one checked SELECT 1 through e alone, reusing its buffer.
func execSelect1(b *testing.B, e *pgexec.Executor) func() {
	var buf []byte
	return func() {
		res, err := e.Run(context.Background(), "SELECT 1", nil, buf[:0])
		if err != nil {
			b.Fatal(err)
		}
		buf = res.Doc
	}
}

// diffs are the per-iteration differences lat[j][i] - lat[k][i].
func diffs(lat [][]time.Duration, j, k int) []time.Duration {
	d := make([]time.Duration, len(lat[j]))
	for i := range d {
		d[i] = lat[j][i] - lat[k][i]
	}
	return d
}

// p50 is the median of d, in nanoseconds.
func p50(d []time.Duration) float64 {
	d = slices.Clone(d)
	slices.Sort(d)
	return float64(d[len(d)/2].Nanoseconds())
}

// ratioP50 is the median of the per-iteration ratios a[i]/b[i].
func ratioP50(a, b []time.Duration) float64 {
	r := make([]float64, len(a))
	for i := range r {
		r[i] = float64(a[i]) / float64(b[i])
	}
	slices.Sort(r)
	return r[len(r)/2]
}

// BenchmarkHandleRunSelect1 is the server's own work per call on every
// transport: decode one JSON-RPC request, run the tool, encode the reply.
// A client's encoding of its request and decoding of the reply are not in
// it; BenchmarkInprocRunSelect1 adds mcp-go's client.
func BenchmarkHandleRunSelect1(b *testing.B) {
	srv, _ := newPoolServer(b, Config{}, 1)
	ctx := context.Background()
	initMsg := []byte(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + mcp.LATEST_PROTOCOL_VERSION + `","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`)
	srv.HandleMessage(ctx, initMsg)
	msg := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"run_select","arguments":{"sql":"SELECT 1"}}}`)
	once := func() []byte {
		out, err := json.Marshal(srv.HandleMessage(ctx, msg))
		if err != nil {
			b.Fatal(err)
		}
		return out
	}
	if out := once(); !json.Valid(out) || !strings.Contains(string(out), `?column?:int4\n1\n(1 rows)`) {
		b.Fatalf("unexpected reply %s", out)
	}
	timeLoop(b, func() { once() })
}

// BenchmarkE2ESelect1 interleaves, per iteration, SELECT 1 through the
// executor alone, through mcp-go's client over this package's in-process
// transport, and over streamable HTTP (httptest listener), each on its own
// server and pool of one, with the client speaking 2025-11-25 (the newest
// version of the official TypeScript SDK; "-v2025" metrics) and 2026-07-28
// ("-v2026"). It reports each one's p50 and the p50 of the per-iteration
// differences: in-process over the executor (issue 4's in-process
// overhead) and HTTP over in-process (its HTTP target).
func BenchmarkE2ESelect1(b *testing.B) {
	_, pool := newPoolServer(b, Config{}, 1)
	e := benchExecutor(b, pool)
	inproc := func(version string) func() {
		srv, _ := newPoolServer(b, Config{}, 1)
		return selectCall(b, startTBVersion(b, NewInProcessClient(srv), version))
	}
	const legacy, modern = mcp.LATEST_LEGACY_PROTOCOL_VERSION, mcp.LATEST_PROTOCOL_VERSION
	steps := []func(){
		execSelect1(b, e),
		inproc(legacy),
		httpCallVersion(b, legacy),
		inproc(modern),
		httpCallVersion(b, modern),
	}
	lat := interleave(b, steps)
	diff := func(j, k int) []time.Duration { return diffs(lat, j, k) }
	b.ReportMetric(p50(lat[0]), "exec-p50-ns")
	for i, v := range []string{"v2025", "v2026"} {
		in, ht := 1+2*i, 2+2*i
		b.ReportMetric(p50(lat[in]), "inproc-"+v+"-p50-ns")
		b.ReportMetric(p50(lat[ht]), "http-"+v+"-p50-ns")
		b.ReportMetric(p50(diff(in, 0)), "inproc-over-exec-"+v+"-p50-ns")
		b.ReportMetric(p50(diff(ht, in)), "http-over-inproc-"+v+"-p50-ns")
		b.ReportMetric(p50(diff(ht, 0)), "http-over-exec-"+v+"-p50-ns")
	}
	b.ReportMetric(0, "ns/op")
}

// httpCallVersion is one checked run_select of SELECT 1 over streamable
// HTTP, the client speaking version.
func httpCallVersion(b *testing.B, version string) func() {
	return selectCall(b, httpBenchClientVersion(b, Config{}, version))
}
