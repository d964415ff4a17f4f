// Review of 1c0c9e0 (route: connectHosts tries the hosts of a multi-host
// URL one by one, each within its share of the acquire timeout): each test
// asserts libpq's / the previous behaviour and fails on 1c0c9e0.

package route

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rv12d12Standby starts a throwaway cluster and turns it into a hot standby
// (standby.signal, no primary: it stays in recovery and serves read-only
// queries, pg_is_in_recovery() is true).
func rv12d12Standby(t *testing.T) *pgtest.Cluster {
	t.Helper()
	c := pgtest.Start(t, pgtest.Options{})
	if err := c.StopServer(); err != nil {
		t.Fatal(err)
	}
	sig := filepath.Join(c.DataDir(), "standby.signal")
	if err := os.WriteFile(sig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(c.DataDir()); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			os.Chown(sig, int(st.Uid), int(st.Gid))
		}
	}
	if err := c.StartServer(); err != nil {
		t.Fatal(err)
	}
	return c
}

// rv12d12InRecovery is pg_is_in_recovery() on pc.
func rv12d12InRecovery(t *testing.T, pc *pgconn.PgConn) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	res, err := pc.Exec(ctx, "select pg_is_in_recovery()").ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return string(res[0].Rows[0][0])
}

// target_session_attrs=prefer-standby (libpq's, which pgx reads from the
// URL; docs/qprouter.md: "Host, port, TLS parameters ... and the rest of
// a URL apply to that database only"): libpq and pgconn.ConnectConfig try
// every host for a standby and only fall back to a primary when none is
// one. connectHosts calls pgconn.ConnectConfig once per host, so for the
// first host (a primary) pgconn's own fallback connects to it at once and
// the standby listed second is never tried. Without a deadline (plain
// pgconn.ConnectConfig) the same URL reaches the standby.
func TestDiff12ReviewPreferStandbySkipsLaterStandby(t *testing.T) {
	primary := rvCluster(t)
	standby := rv12d12Standby(t)
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&target_session_attrs=prefer-standby&load_balance_hosts=disable",
		primary.Port, standby.Port)
	tgs, err := NewTargets("", map[string]string{"app": url})
	if err != nil {
		t.Fatal(err)
	}
	connect := tgs.Connector(nil)

	// No deadline: pgconn.ConnectConfig as before, the standby serves.
	pc, err := connect(context.Background(), "app", "postgres")
	if err != nil {
		t.Fatal(err)
	}
	if got := rv12d12InRecovery(t, pc); got != "t" {
		t.Fatalf("sanity: without a deadline pg_is_in_recovery() = %s, want t (standby)", got)
	}
	pc.Close(context.Background())

	// An acquire timeout, as every pool connection has.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pc, err = connect(ctx, "app", "postgres")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close(context.Background())
	if got := rv12d12InRecovery(t, pc); got != "t" {
		t.Fatalf("prefer-standby with hosts primary,standby and an acquire timeout: connected to the primary "+
			"(pg_is_in_recovery() = %s); want the standby, as libpq and pgconn.ConnectConfig choose", got)
	}
}

// rv12d12Refused is a 127.0.0.1 port nobody listens on (connection refused).
func rv12d12Refused(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}

// A host name with two addresses, the first black-holed (a dead AAAA
// record, a stale A record), the second a live server; the URL's other
// host is down (refuses at once). Before 1c0c9e0 each address got its own
// ConnectTimeout (acquire/hosts: 1.5 s of 3 s), as libpq's connect_timeout
// "applies separately to each host name or IP address", so the live
// address served after 1.5 s. connectHosts gives the whole host one share
// (1.5 s) for all its addresses: the silent first address uses it up, the
// live second address is never tried, the other host refuses, and the
// connection fails with half the acquire timeout still left.
func TestDiff12ReviewSecondAddressNeverTriedWithTimeLeft(t *testing.T) {
	c := rvCluster(t)
	const acquire = 3 * time.Second
	silent := silentHost(t).String()
	live := net.JoinHostPort("127.0.0.1", strconv.Itoa(c.Port))
	url := fmt.Sprintf("postgres://postgres@dual.test:%d,127.0.0.1:%d/postgres?sslmode=disable&load_balance_hosts=disable",
		c.Port, rv12d12Refused(t))
	tgs, err := NewTargets("", map[string]string{"app": url})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := tgs.For("app")
	if err != nil {
		t.Fatal(err)
	}
	tg.cfg.LookupFunc = func(ctx context.Context, host string) ([]string, error) {
		if host == "dual.test" {
			return []string{silent, live}, nil // a name with two addresses, as DNS gives them
		}
		return net.DefaultResolver.LookupHost(ctx, host)
	}
	ctx, cancel := context.WithTimeout(context.Background(), acquire)
	defer cancel()
	start := time.Now()
	pc, err := tgs.Connector(nil)(ctx, "app", "postgres")
	if err != nil {
		t.Fatalf("connect failed after %s with %s of the %s acquire timeout left and dual.test's live address "+
			"never tried: %v", time.Since(start).Round(10*time.Millisecond),
			time.Until(start.Add(acquire)).Round(10*time.Millisecond), acquire, err)
	}
	pc.Close(context.Background())
}
