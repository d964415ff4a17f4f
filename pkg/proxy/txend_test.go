package proxy_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// A transaction ended by an Execute (a prepared COMMIT or ROLLBACK) before
// the Sync, with a message after it that fails or succeeds: that message
// runs in a new implicit transaction, so settings made in the ended
// transaction stand after a COMMIT and are gone after a ROLLBACK,
// whatever comes after.
// The proxy must see it so too: otherwise the server keeps a setting the
// proxy does not know of, which the next client on it then sees.
func TestSettingsOfTransactionEndedMidGroup(t *testing.T) {
	for _, loop := range []bool{false, true} {
		for _, tc := range []struct{ end, after string }{
			{"commit", "selec 1"}, {"rollback", "selec 1"}, {"commit", "select 1"}, {"rollback", "select 1"},
		} {
			end := tc.end
			t.Run(fmt.Sprintf("loop=%v %s then %s", loop, end, tc.after), func(t *testing.T) {
				r := startProxy(t, pgtest.Shared(t), cfg{mode: proxy.Transaction, size: 1, loop: loop})
				a := dialRaw(t, r.addr)
				a.fe.Send(&pgproto3.Parse{Name: "end", Query: end})
				a.fe.Send(&pgproto3.Sync{})
				a.fe.Flush()
				a.answers(t, 1)
				if got := a.query(t, "begin", "set work_mem = '1234kB'"); len(got) != 0 {
					t.Fatalf("begin, set: %q", got)
				}
				a.fe.Send(&pgproto3.Bind{PreparedStatement: "end"})
				a.fe.Send(&pgproto3.Execute{})
				a.fe.Send(&pgproto3.Parse{Query: tc.after}) // after the transaction ended
				a.fe.Send(&pgproto3.Bind{})
				a.fe.Send(&pgproto3.Execute{})
				a.fe.Send(&pgproto3.Sync{})
				a.fe.Flush()
				wantErr := map[string][]string{"selec 1": {"error"}, "select 1": {"1"}}[tc.after]
				if got := a.answers(t, 1); !slices.Equal(got, wantErr) {
					t.Fatalf("%s, then Parse of %s: %q", end, tc.after, got)
				}
				want := map[string]string{"commit": "1234kB", "rollback": "4MB"}[end]
				b := dialRaw(t, r.addr)
				if got := b.query(t, "show work_mem"); !slices.Equal(got, []string{"4MB"}) {
					t.Errorf("another client on the same server sees work_mem %q", got)
				}
				b.conn.Close()
				if got := a.query(t, "show work_mem"); !slices.Equal(got, []string{want}) {
					t.Errorf("the client's own work_mem after %s: %q, want %q", end, got, want)
				}
			})
		}
	}
}
