package duckwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// slowQuery runs for many seconds on DuckDB unless interrupted.
const slowQuery = "select sum(a.l_orderkey * b.l_orderkey * c.l_orderkey) from lineitem a, lineitem b, lineitem c, lineitem d"

func sqlCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

func TestCancelRequestInterruptsQuery(t *testing.T) {
	s := startServer(t, nil)
	c := connect(t, s.url, false)
	ctx := context.Background()
	go func() {
		time.Sleep(300 * time.Millisecond)
		if err := c.PgConn().CancelRequest(ctx); err != nil {
			t.Error(err)
		}
	}()
	t0 := time.Now()
	_, err := c.Exec(ctx, slowQuery)
	if code := sqlCode(err); code != "57014" {
		t.Fatalf("got %v, want SQLSTATE 57014", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("cancel took %v", d)
	}
	var n int
	if err := c.QueryRow(ctx, "select count(*) from lineitem").Scan(&n); err != nil || n != 1000 {
		t.Fatalf("session after cancel: %d %v", n, err)
	}
	if _, err := c.Exec(ctx, "set statement_timeout = '200ms'"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, slowQuery); sqlCode(err) != "57014" {
		t.Fatalf("statement_timeout: got %v", err)
	}
	if err := c.QueryRow(ctx, "select 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
}

// TestCancelWhileStreaming cancels a large result while its rows are
// being read: the rest is not sent and the session stays usable.
func TestCancelWhileStreaming(t *testing.T) {
	s := startServer(t, nil)
	c := connect(t, s.url, true)
	ctx := context.Background()
	rows, err := c.Query(ctx, "select a.l_comment, b.l_comment from lineitem a, lineitem b")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for rows.Next() {
		if n++; n == 1000 {
			if err := c.PgConn().CancelRequest(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if sqlCode(rows.Err()) != "57014" || n >= 1_000_000 {
		t.Fatalf("read %d of 1000000 rows, err %v; want 57014", n, rows.Err())
	}
	var one int
	if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
}

func TestGracefulShutdown(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ShutdownGrace = 500 * time.Millisecond })
	idle := dialRaw(t, s.addr)
	busy := connect(t, s.url, false)
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		_, err := busy.Exec(ctx, slowQuery)
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	s.cancel()
	// The idle session is told and closed at once.
	got := idle.until('E')
	if e := got[len(got)-1].(*pgproto3.ErrorResponse); e.Code != "57P01" {
		t.Fatalf("idle session got %s", summary(got))
	}
	// The running query outlives the grace period: it is canceled.
	select {
	case err := <-errc:
		if err == nil {
			t.Fatal("the slow query finished")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the running query was not canceled")
	}
	select {
	case err := <-s.done:
		if err != nil {
			t.Fatal(err)
		}
		s.done <- nil // for the cleanup
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if d := time.Since(t0); d < 400*time.Millisecond {
		t.Fatalf("stopped after %v, before the grace period", d)
	}
	if _, err := net.DialTimeout("tcp", s.addr, time.Second); err == nil {
		t.Fatal("still accepting")
	}
}

func TestShutdownLetsShortQueriesFinish(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ShutdownGrace = 20 * time.Second })
	busy := connect(t, s.url, false)
	errc := make(chan error, 1)
	go func() {
		var n int64
		errc <- busy.QueryRow(context.Background(), "select count(*) from lineitem a, lineitem b, lineitem c where c.l_orderkey <= 30").Scan(&n)
	}()
	time.Sleep(20 * time.Millisecond)
	s.cancel()
	if err := <-errc; err != nil {
		t.Fatalf("the running query did not finish: %v", err)
	}
	if err := <-s.done; err != nil {
		t.Fatal(err)
	}
	s.done <- nil
}

// TestGarbageDoesNotCrash sends random and truncated messages after the
// startup; the server answers or hangs up, and keeps serving.
func TestGarbageDoesNotCrash(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxMessage = 1 << 16 })
	rng := rand.New(rand.NewSource(1))
	seeds := [][]byte{
		{'P', 0, 0, 0, 4}, {'B', 0, 0, 0, 5, 0}, {'E', 0, 0, 0, 3}, {'Q', 0xff, 0xff, 0xff, 0xff},
		{'D', 0, 0, 0, 6, 'X', 0}, {'B', 0, 0, 0, 12, 0, 0, 0, 1, 0, 1, 0, 0, 0xff, 0xff}, {'C', 0, 0, 0, 4},
		[]byte("Q\x00\x00\x00\x0dselect 1\x00"),
	}
	for i := 0; i < 150; i++ {
		var b []byte
		if i < len(seeds) {
			b = seeds[i]
		} else {
			b = make([]byte, rng.Intn(64))
			rng.Read(b)
			if len(b) > 0 && rng.Intn(2) == 0 {
				b[0] = "PBDECSHQXdcf"[rng.Intn(12)]
			}
		}
		c := dialRaw(t, s.addr)
		c.conn.Write(b)
		c.conn.Write([]byte{'S', 0, 0, 0, 4})
		c.conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		io.Copy(io.Discard, c.conn)
		c.conn.Close()
	}
	c := dialRaw(t, s.addr)
	c.send(&pgproto3.Query{String: "select 42"})
	expect(t, c.until('Z'), "T D(42) C(SELECT 1) Z(I)")
}

// FuzzMessages feeds arbitrary bytes to a session (go test -fuzz=FuzzMessages).
func FuzzMessages(f *testing.F) {
	f.Add([]byte{'P', 0, 0, 0, 4})
	f.Add([]byte("Q\x00\x00\x00\x0dselect 1\x00"))
	s := startServer(f, nil)
	f.Fuzz(func(t *testing.T, b []byte) {
		conn, err := net.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fe := pgproto3.NewFrontend(conn, conn)
		fe.Send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: map[string]string{"user": "f"}})
		fe.Flush()
		conn.Write(b)
		// Half-closing tells the server no more bytes come, so it answers
		// and hangs up at once instead of waiting out the read deadline.
		conn.(*net.TCPConn).CloseWrite()
		conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		io.Copy(io.Discard, conn)
	})
}

func TestMetricsAndHealth(t *testing.T) {
	s := startServer(t, nil)
	c := connect(t, s.url, false)
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		if _, err := c.Exec(ctx, "select count(*) from lineitem"); err != nil {
			t.Fatal(err)
		}
	}
	c.Exec(ctx, "delete from lineitem")
	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + s.admin + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("/healthz"); code != 200 {
		t.Fatalf("/healthz: %d", code)
	}
	if code, body := get("/api/clients"); code != 200 || !strings.Contains(body, `"user": "analyst"`) || !strings.Contains(body, `"state": "idle"`) {
		t.Fatalf("/api/clients: %d %s", code, body)
	}
	_, m := get("/metrics")
	value := func(name string) float64 {
		t.Helper()
		match := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(m)
		if match == nil {
			t.Fatalf("no %s in\n%s", name, m)
		}
		v, _ := strconv.ParseFloat(match[1], 64)
		return v
	}
	if v := value(`qpanalytics_queries_total{outcome="ok"}`); v < 3 {
		t.Errorf("ok queries %v", v)
	}
	if v := value(`qpanalytics_queries_total{outcome="refused"}`); v != 1 {
		t.Errorf("refused queries %v", v)
	}
	if v := value(`qpanalytics_query_duration_seconds_count`); v < 3 {
		t.Errorf("latency count %v", v)
	}
	if v := value(`qpanalytics_sessions`); v != 1 {
		t.Errorf("sessions %v", v)
	}
	if v := value(`qpanalytics_snapshot_age_seconds`); v < 3590 || v > 3700 {
		t.Errorf("snapshot age %v, want about 3600", v)
	}
	if v := value(`qpanalytics_database_bytes`); v < 4096 {
		t.Errorf("database bytes %v", v)
	}
}

// TestConcurrentSessionsAreIsolated runs sessions in parallel, one with
// another TimeZone: DuckDB's session state (here the TimeZone casts
// follow) does not leak between them.
func TestConcurrentSessionsAreIsolated(t *testing.T) {
	s := startServer(t, nil)
	ctx := context.Background()
	tokyo := connect(t, s.url, false)
	if _, err := tokyo.Exec(ctx, "set timezone = 'Asia/Tokyo'"); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 8)
	for g := 0; g < 8; g++ {
		c := connect(t, s.url, g%2 == 0)
		go func() {
			for i := 0; i < 20; i++ {
				var got string
				if err := c.QueryRow(ctx, "select tstz::timestamp::text from types where i4 = 42").Scan(&got); err != nil {
					errc <- err
					return
				}
				if got != "2024-01-02 03:04:05.5" {
					errc <- fmt.Errorf("session %d: %q", g, got)
					return
				}
			}
			errc <- nil
		}()
	}
	var got string
	if err := tokyo.QueryRow(ctx, "select tstz::timestamp::text from types where i4 = 42").Scan(&got); err != nil || got != "2024-01-02 12:04:05.5" {
		t.Fatalf("tokyo: %q %v", got, err)
	}
	for g := 0; g < 8; g++ {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, cfg := range []Config{
		{},
		{Database: filepath.Join(t.TempDir(), "missing.duckdb")},
		{Database: makeDB(t), TimeZone: "Nowhere/Special"},
	} {
		if s, err := New(cfg); err == nil {
			s.Close()
			t.Errorf("New(%+v) succeeded", cfg)
		}
	}
}
