package console_test

// Review of the uncommitted request_time change (proxy plan.go sets
// ClientStat.LastRequest; proxyserver/console.go shows it). Helpers are
// review_console_test.go's.

import (
	"context"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/proxyserver"
)

// PgBouncer 1.18 sets client->request_time on every packet it reads from
// the client (client.c client_proto, SBUF_EV_READ), before find_server: a
// client waiting for a server shows the time of the request it waits
// with. qprouter now records LastRequest only in plan(), which runs after
// lockServer has found a server, so a waiting client shows its previous
// request (here none: its connect time), older than its own wait. The
// code before this change showed WaitingSince for a waiting client.
func TestDiff14ReviewShowClientsRequestTimeOfWaitingClient(t *testing.T) {
	addr, _ := rvServe(t, "transaction", func(c *proxyserver.Config) { c.PoolSize = 1; c.AcquireTimeout = 10 * time.Second })
	holder := rvConnect(t, addr, "postgres", "zz14-holder")
	waiter := rvConnect(t, addr, "postgres", "zz14-waiter") // logging in needs the server too
	ctx := context.Background()
	if _, err := holder.Exec(ctx, "begin"); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	con := rvConsole(t, addr, "watcher")
	time.Sleep(1100 * time.Millisecond) // the column has whole seconds
	done := make(chan error, 1)
	go func() {
		_, err := waiter.Exec(ctx, "select 2")
		done <- err
	}()
	var r map[string]string
	for i := 0; i < 100; i++ {
		r = rvFind(rvShow(t, con, "SHOW CLIENTS"), "application_name", "zz14-waiter")
		if r != nil && r["state"] == "waiting" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := holder.Exec(ctx, "commit"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if r == nil || r["state"] != "waiting" {
		t.Fatalf("zz14-waiter never shown waiting: %v", r)
	}
	if r["request_time"] <= r["connect_time"] {
		t.Errorf("SHOW CLIENTS of a client waiting with a request sent 1.1 s after its login: request_time %q, connect_time %q (wait %s); want request_time the time of the request it waits with (PgBouncer: set on reading the packet, before find_server)", r["request_time"], r["connect_time"], r["wait"])
	}
}
