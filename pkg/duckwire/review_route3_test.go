// Third review of qprouter's routing: the route.Router seam sending a
// query shape to qpanalytics (docs/qpanalytics.md, "Routing from
// qprouter"), with a real qprouter proxy (pkg/proxy), a real PostgreSQL
// 15 as the primary and this package's server as the analytics backend.
// Each test asserts the correct behaviour and fails on the code it was
// written against.

package duckwire

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/pgwire"
	"github.com/qpkit/qpkit/pkg/pool"
	"github.com/qpkit/qpkit/pkg/proxy"
	"github.com/qpkit/qpkit/pkg/route"
)

// rvr3ShapeRouter sends the query shape "reads lineitem" to the analytics
// pool and everything else to the client's own database on PostgreSQL.
type rvr3ShapeRouter struct{ pools *route.Pools }

func (r rvr3ShapeRouter) Route(ctx context.Context, req route.Request) (*pool.Pool, error) {
	if strings.Contains(strings.ToLower(req.SQL), "from lineitem") {
		return r.pools.Get("analytics", req.User), nil
	}
	return r.pools.Route(ctx, req)
}

// rvr3StartRouter starts a transaction-mode qprouter whose router sends
// lineitem reads to a qpanalytics server and the rest to PostgreSQL; it
// returns the proxy's address.
func rvr3StartRouter(t *testing.T) string {
	t.Helper()
	pg := pgtest.Shared(t)
	qpa := startServer(t, nil)
	toPG, err := pool.URLConnector(pg.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	toQPA, err := pool.URLConnector("postgres://"+qpa.addr+"/analytics?sslmode=disable", nil)
	if err != nil {
		t.Fatal(err)
	}
	connect := func(ctx context.Context, database, user string) (*pgconn.PgConn, error) {
		if database == "analytics" {
			return toQPA(ctx, database, user)
		}
		return toPG(ctx, database, user)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	pools := &route.Pools{Connect: connect, Log: log, Config: func(db, user string) pool.Config {
		return pool.Config{Size: 2, AcquireTimeout: 3 * time.Second}
	}}
	p, err := proxy.New(proxy.Options{
		Mode:   proxy.Transaction,
		Pools:  pools,
		Router: rvr3ShapeRouter{pools},
		Auth: &pgwire.ServerConfig{Credentials: func(user, db string) (pgwire.Credential, error) {
			return pgwire.Credential{Method: pgwire.AuthTrust}, nil
		}},
		Log: log,
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go p.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p.Shutdown(ctx)
		pools.Close()
	})
	return ln.Addr().String()
}

// rvr3Client connects through the proxy with the simple protocol (so that
// the router sees the text) and the given startup parameters.
func rvr3Client(t *testing.T, addr string, params map[string]string) *pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://postgres@%s/postgres?sslmode=disable", addr))
	if err != nil {
		t.Fatal(err)
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	for k, v := range params {
		cfg.RuntimeParams[k] = v
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

// rvr3Count reads lineitem's row count, which the router sends to
// qpanalytics (1000 rows in this package's fixture; PostgreSQL has no
// such table).
func rvr3Count(ctx context.Context, c *pgx.Conn) (int64, error) {
	var n int64
	err := c.QueryRow(ctx, "SELECT count(*) FROM lineitem").Scan(&n)
	return n, err
}

// Companion: a client with no settings of its own is served by
// qpanalytics through the router (the route itself works).
func TestRoute3ReviewAnalyticsRouteWithoutSettings(t *testing.T) {
	addr := rvr3StartRouter(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c := rvr3Client(t, addr, nil)
	if n, err := rvr3Count(ctx, c); err != nil || n != 1000 {
		t.Fatalf("routed to qpanalytics: %d, %v", n, err)
	}
}

// A client with any session setting cannot use the analytics route: in
// transaction mode qprouter brings each server it hands a client to the
// client's settings with one query, "SET SESSION AUTHORIZATION DEFAULT;
// RESET ALL; SELECT pg_catalog.set_config('application_name', 'psql',
// false)..." (pkg/proxy syncServer, state.go resetAll, session.go startup
// vars). qpanalytics refuses both halves of it: SET SESSION
// AUTHORIZATION DEFAULT with 55P02 (PostgreSQL 15 answers SET: DEFAULT is
// the session user, allowed for anyone) and set_config with 0A000 (a
// PostgreSQL built-in; qpanalytics supports the same change as SET), so
// the client's session is ended with "qprouter: this session's settings
// could not be restored on another server connection". psql
// (application_name), JDBC (extra_float_digits, DateStyle, ...), npgsql
// and any client that runs a SET are hit on their first routed query.
// Expected: the query is answered with the settings applied, as for a
// client without settings.
func TestRoute3ReviewAnalyticsRouteLosesClientsWithSettings(t *testing.T) {
	addr := rvr3StartRouter(t)
	for _, tc := range []struct {
		name   string
		params map[string]string
		set    string
	}{
		{"startup application_name (psql)", map[string]string{"application_name": "psql"}, ""},
		{"SET TimeZone", nil, "SET TimeZone = 'Europe/Paris'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			c := rvr3Client(t, addr, tc.params)
			if tc.set != "" {
				if _, err := c.Exec(ctx, tc.set); err != nil {
					t.Fatalf("%s (on PostgreSQL): %v", tc.set, err)
				}
			}
			n, err := rvr3Count(ctx, c)
			if err != nil || n != 1000 {
				t.Fatalf("SELECT count(*) FROM lineitem routed to qpanalytics: %d, %v; want 1000", n, err)
			}
		})
	}
}
