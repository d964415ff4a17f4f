// Client connections for tests, closed when the test ends.

package proxyserver

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// pgxConnect connects a pgx client to url; the test fails when it cannot.
func pgxConnect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	cn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cn.Close(context.Background()) })
	return cn
}

// pgconnConnect connects a pgconn client to url; the test fails when it
// cannot.
func pgconnConnect(t *testing.T, url string) *pgconn.PgConn {
	t.Helper()
	pc, err := pgconn.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(context.Background()) })
	return pc
}

// extAnswer is what extRun saw: DataRows, a PortalSuspended, and the
// SQLSTATE of an ErrorResponse ("" for none).
type extAnswer struct {
	rows      int
	suspended bool
	code      string
}

// extRun sends msgs and a Sync on pc and reads the answer up to
// ReadyForQuery.
func extRun(t *testing.T, pc *pgconn.PgConn, msgs ...pgproto3.FrontendMessage) extAnswer {
	t.Helper()
	fe := pc.Frontend()
	for _, m := range msgs {
		fe.Send(m)
	}
	fe.Send(&pgproto3.Sync{})
	if err := fe.Flush(); err != nil {
		t.Fatal(err)
	}
	var a extAnswer
	for {
		m, err := fe.Receive()
		if err != nil {
			t.Fatal(err)
		}
		switch m := m.(type) {
		case *pgproto3.DataRow:
			a.rows++
		case *pgproto3.PortalSuspended:
			a.suspended = true
		case *pgproto3.ErrorResponse:
			a.code = m.Code
		case *pgproto3.ReadyForQuery:
			return a
		}
	}
}
