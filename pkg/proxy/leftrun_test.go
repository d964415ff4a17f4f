package proxy_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// A client that leaves in the middle of an extended-protocol run (its
// messages since the last Sync answered because it sent Flush) leaves its
// server inside the run's implicit transaction, or skipping to a Sync
// after an error. A direct connection's backend rolls the run back as the
// client goes. Through the proxy that server must not serve the next
// client: a Query there would hang (skipped until a Sync) or commit the
// departed client's work.
func TestLeftMidExtendedRun(t *testing.T) {
	c := pgtest.Shared(t)
	direct := connect(t, c.URL())
	ctx := context.Background()
	setups := []struct {
		name string
		cfg  cfg
	}{
		{"session", cfg{mode: proxy.Session, size: 1, timeout: 10 * time.Second}},
		{"transaction", cfg{mode: proxy.Transaction, size: 1, timeout: 10 * time.Second}},
		{"loop", cfg{mode: proxy.Transaction, size: 1, timeout: 10 * time.Second, loop: true}},
	}
	for i, s := range setups {
		t.Run(s.name, func(t *testing.T) {
			r := startProxy(t, c, s.cfg)
			next := func() {
				t.Helper()
				b := dialRaw(t, r.addr)
				defer b.conn.Close()
				if got := b.query(t, "select 1"); !slices.Equal(got, []string{"1"}) {
					t.Fatalf("the next client's select 1: %q", got)
				}
			}

			a := dialRaw(t, r.addr)
			a.fe.Send(&pgproto3.Parse{Query: "selec 1"})
			a.fe.Send(&pgproto3.Flush{})
			if got := a.receive(t, 1); got[0] != "ErrorResponse" {
				t.Fatalf("a failing Parse and Flush: %q", got)
			}
			a.conn.Close()
			next() // hangs until its deadline when it gets the skipping server

			table := fmt.Sprintf("left_mid_run_%d", i)
			if _, err := direct.Exec(ctx, "drop table if exists "+table); err != nil {
				t.Fatal(err)
			}
			a = dialRaw(t, r.addr)
			a.fe.Send(&pgproto3.Parse{Query: "create table " + table + " (a int)"})
			a.fe.Send(&pgproto3.Bind{})
			a.fe.Send(&pgproto3.Execute{})
			a.fe.Send(&pgproto3.Flush{})
			want := []string{"ParseComplete", "BindComplete", "CommandComplete"}
			if got := a.receive(t, 3); !slices.Equal(got, want) {
				t.Fatalf("a CREATE TABLE and Flush: %q", got)
			}
			a.conn.Close()
			next()
			var exists bool
			if err := direct.QueryRow(ctx, "select to_regclass($1) is not null", table).Scan(&exists); err != nil {
				t.Fatal(err)
			}
			if exists {
				t.Fatalf("%s exists: the departed client's uncommitted CREATE TABLE was committed by the next client", table)
			}
		})
	}
}

// receive flushes what was sent and reads n messages, returning their
// types.
func (c *rawClient) receive(t testing.TB, n int) []string {
	t.Helper()
	if err := c.fe.Flush(); err != nil {
		t.Fatal(err)
	}
	c.conn.SetDeadline(time.Now().Add(10 * time.Second))
	var got []string
	for range n {
		m, err := c.fe.Receive()
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		got = append(got, fmt.Sprintf("%T", m)[len("*pgproto3."):])
	}
	return got
}
