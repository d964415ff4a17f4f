package duckwire

import (
	"context"
	"database/sql"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// fixtureSQL builds the test database: tables of varied types and the
// metadata schema the server must hide.
var fixtureSQL = []string{
	`CREATE TABLE lineitem (l_orderkey BIGINT NOT NULL, l_quantity DECIMAL(15,2), l_comment VARCHAR, l_shipdate DATE)`,
	`INSERT INTO lineitem SELECT i, (i % 50) + 0.5, 'comment ' || i, DATE '1995-01-01' + INTERVAL (i % 365) DAY FROM range(1, 1001) t(i)`,
	`CREATE TABLE types (i2 SMALLINT, i4 INTEGER, i8 BIGINT, f4 REAL, f8 DOUBLE, num DECIMAL(10,2), big HUGEINT,
		t VARCHAR, b BOOLEAN, d DATE, ts TIMESTAMP, tstz TIMESTAMPTZ, iv INTERVAL, u UUID, bl BLOB, j JSON, arr INTEGER[], tarr VARCHAR[])`,
	`INSERT INTO types VALUES (-2, 42, 9007199254740993, 1.5, 0.1, 1.50, 170141183460469231731687303715884105727,
		'héllo "q"', true, DATE '2024-01-02', TIMESTAMP '2024-01-02 03:04:05.123456', TIMESTAMPTZ '2024-01-02 03:04:05.5+00',
		INTERVAL '1 year 2 months 3 days 04:05:06.5', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x00\xff'::BLOB, '{"a": [1, 2]}',
		[1, NULL, 3], ['a b', 'c'])`,
	`INSERT INTO types (i4) VALUES (NULL)`,
	`CREATE SCHEMA _qpanalytics`,
	`CREATE TABLE _qpanalytics.snapshot (taken_at TIMESTAMPTZ)`,
	`INSERT INTO _qpanalytics.snapshot VALUES (now() - INTERVAL 1 HOUR)`,
}

// makeDB writes the fixture DuckDB file and returns its path.
func makeDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "analytics.duckdb")
	db, err := sql.Open("duckdb", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range fixtureSQL {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path
}

// server is a running test server.
type server struct {
	addr, admin string
	url         string
	cancel      context.CancelFunc
	done        chan error
}

// startServer serves a fresh fixture database until the test ends.
func startServer(t testing.TB, mod func(*Config)) *server {
	t.Helper()
	cfg := Config{Database: makeDB(t), Threads: 2, ShutdownGrace: 2 * time.Second,
		Log: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	if mod != nil {
		mod(&cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	aln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listener, cfg.AdminListener = ln, aln
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{addr: ln.Addr().String(), admin: aln.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	s.url = "postgres://analyst@" + s.addr + "/analytics?sslmode=disable"
	go func() { s.done <- Serve(ctx, cfg) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			t.Error("server did not stop")
		}
	})
	return s
}

func connect(t testing.TB, url string, simple bool) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	if simple {
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}
