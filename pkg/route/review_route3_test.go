// Third review of qprouter's routing (pkg/route): each test asserts the
// correct behaviour and fails on the code it was written against.

package route

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/pool"
)

// docs/qprouter.md: a URL with several hosts spreads new server
// connections over them, "a host that does not answer giving way to the
// next; ?load_balance_hosts=disable takes the first host that answers
// every time" (PgBouncer's disable: "a new connection continues using the
// same host entry until a connection fails, after which the next host
// entry is chosen"). With the first host silent, every server connection
// of the pool spends the client's whole acquire timeout on it: pgx gets
// the acquire context and, with no connect_timeout in the URL, no
// per-host bound, so the second, healthy host is never tried and every
// client gets 53300. Expected: the pool serves from the second host.
func TestRoute3ReviewSilentFirstHostNeverGivesWay(t *testing.T) {
	c := rvCluster(t)
	hung := silentHost(t).Port
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable&load_balance_hosts=disable", hung, c.Port)
	tg, err := NewTargets("", map[string]string{"app": url})
	if err != nil {
		t.Fatal(err)
	}
	p := pool.New("app", "postgres", pool.Config{Size: 2, AcquireTimeout: 3 * time.Second}, tg.Connector(nil), nil)
	defer p.Close()
	for i := range 2 {
		start := time.Now()
		conn, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatalf("connection %d through %s: %v after %s; want a server connection from the second host (127.0.0.1:%d), which answers",
				i+1, url, err, time.Since(start).Round(100*time.Millisecond), c.Port)
		}
		p.Discard(conn)
	}
}

// The same with the default round robin: each new connection starts at
// the next host, so every second one starts at the silent host and is
// never given to the healthy one: half the clients fail (53300 after the
// acquire timeout) although one host of the two serves.
func TestRoute3ReviewSilentHostFailsEverySecondConnection(t *testing.T) {
	c := rvCluster(t)
	hung := silentHost(t).Port
	url := fmt.Sprintf("postgres://postgres@127.0.0.1:%d,127.0.0.1:%d/postgres?sslmode=disable", c.Port, hung)
	tg, err := NewTargets("", map[string]string{"app": url})
	if err != nil {
		t.Fatal(err)
	}
	connect := tg.Connector(nil)
	failed := 0
	var last error
	for range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		pc, err := connect(ctx, "app", "postgres")
		cancel()
		if err != nil {
			failed++
			last = err
			continue
		}
		pc.Close(context.Background())
	}
	if failed > 0 {
		t.Errorf("%d of 2 new server connections failed (%v) though host 127.0.0.1:%d of %s answers; want the silent host to give way to it", failed, last, c.Port, url)
	}
}
