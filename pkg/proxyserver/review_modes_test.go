package proxyserver

import (
	"context"
	"fmt"
	"testing"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// rvServe starts a proxy over the package's shared cluster with the admin
// console (user "admin", trust).
func rvServe(t *testing.T, mode string, edit func(*Config)) (*Server, string, *pgtest.Cluster) {
	t.Helper()
	return consoleServe(t, pgtest.Shared(t), mode, edit)
}

// rvBackends counts the server's backends whose application_name is app.
func rvBackends(t *testing.T, cl *pgtest.Cluster, app string) int {
	t.Helper()
	return countForTest(t, cl.URL(), fmt.Sprintf("select count(*) from pg_stat_activity where application_name = '%s'", app))
}

// PgBouncer documents PAUSE as "PgBouncer tries to disconnect from all
// servers. First it waits for all queries to complete. ... To be used at
// the time of database restart", and PgBouncer 1.18 does close them: after
// PAUSE, SHOW SERVERS is empty (checked on Debian's pgbouncer 1.18.0).
// docs/qprouter.md says the console's PAUSE answers "as PgBouncer's PAUSE".
// qprouter's PAUSE only stops handing servers out: the pool's idle server
// connections stay open, so the database restart PAUSE is for (a smart
// shutdown waits for every session) waits on them.
func TestModesReviewPauseDisconnectsServers(t *testing.T) {
	_, addr, cl := rvServe(t, "transaction", nil)
	ctx := context.Background()
	cn := pgxConnect(t, "postgres://postgres@"+addr+"/postgres?sslmode=disable&application_name=zzpause")
	if _, err := cn.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	if n := rvBackends(t, cl, "zzpause"); n != 1 {
		t.Fatalf("setup: %d backends of the proxy, want 1", n)
	}
	con := opsConsole(t, addr)
	opsShow(t, con, "PAUSE")
	defer opsShow(t, con, "RESUME")
	servers := opsShow(t, con, "SHOW SERVERS")
	n := rvBackends(t, cl, "zzpause")
	if n != 0 || len(servers) != 0 {
		t.Errorf("after PAUSE: %d backends still connected, SHOW SERVERS %v; want none (PgBouncer disconnects from the servers)", n, servers)
	}
}
