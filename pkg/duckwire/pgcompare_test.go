package duckwire

import (
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/qpkit/qpkit/pkg/pgtest"
)

// dialWith opens a raw protocol connection with the given startup parameters.
func dialWith(t *testing.T, addr string, params map[string]string) *rawClient {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	c := &rawClient{t: t, conn: conn, fe: pgproto3.NewFrontend(conn, conn)}
	c.send(&pgproto3.StartupMessage{ProtocolVersion: pgproto3.ProtocolVersion30, Parameters: params})
	c.until('Z')
	return c
}

// clientPair is the same client against qpanalytics and against PostgreSQL 15.
type clientPair struct{ qp, pg *rawClient }

func dialBoth(t *testing.T, extra map[string]string) clientPair {
	t.Helper()
	s := startServer(t, nil)
	u, err := url.Parse(pgtest.Shared(t).URL())
	if err != nil {
		t.Fatal(err)
	}
	qpParams := map[string]string{"user": "raw", "database": "x"}
	pgParams := map[string]string{"user": "postgres", "database": "postgres"}
	for k, v := range extra {
		qpParams[k], pgParams[k] = v, v
	}
	return clientPair{qp: dialWith(t, s.addr, qpParams), pg: dialWith(t, u.Host, pgParams)}
}

// both sends msgs to each server and returns the summaries up to ReadyForQuery.
func (p clientPair) both(msgs ...pgproto3.FrontendMessage) (qp, pg string) {
	p.qp.send(msgs...)
	p.pg.send(msgs...)
	return summarize(p.qp.until('Z')), summarize(p.pg.until('Z'))
}

// summarize is summary with RowDescription field names shown and
// ParameterStatus messages left out.
func summarize(msgs []pgproto3.BackendMessage) string {
	var parts []string
	for _, m := range msgs {
		if _, ok := m.(*pgproto3.ParameterStatus); ok {
			continue // where PostgreSQL reports a change differs and does not matter here
		}
		if rd, ok := m.(*pgproto3.RowDescription); ok {
			var names []string
			for _, f := range rd.Fields {
				names = append(names, string(f.Name))
			}
			parts = append(parts, "T("+strings.Join(names, ",")+")")
			continue
		}
		parts = append(parts, summary([]pgproto3.BackendMessage{m}))
	}
	return strings.Join(parts, " ")
}

func sameAnswers(t *testing.T, what, qp, pg string) {
	t.Helper()
	if qp != pg {
		t.Errorf("%s:\n qpanalytics %s\n postgres    %s", what, qp, pg)
	}
}

// An Execute that resumes a suspended portal reports in its
// CommandComplete the rows that Execute sent, as PostgreSQL does.
func TestResumedPortalTag(t *testing.T) {
	p := dialBoth(t, nil)
	const q = "select x from (values (1),(2),(3),(4),(5)) v(x) order by x"
	qp, pg := p.both(&pgproto3.Parse{Query: q}, &pgproto3.Bind{DestinationPortal: "p"},
		&pgproto3.Execute{Portal: "p", MaxRows: 2}, &pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	sameAnswers(t, "resumed portal", qp, pg)
}

// SHOW's column is named with the setting's canonical spelling.
func TestShowColumnName(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{"show timezone", "show DateStyle", "show intervalstyle"} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		// Values may differ (DateStyle of the test cluster); compare the description only.
		qp, pg = strings.SplitN(qp, " ", 2)[0], strings.SplitN(pg, " ", 2)[0]
		sameAnswers(t, q, qp, pg)
	}
	qp, pg := p.both(&pgproto3.Parse{Name: "sh", Query: "show timezone"}, &pgproto3.Describe{ObjectType: 'S', Name: "sh"}, &pgproto3.Sync{})
	sameAnswers(t, "Describe of SHOW", qp, pg)
}

// Division by zero, which the dialect turns into DuckDB's error(), keeps
// PostgreSQL's SQLSTATE 22012.
func TestDivisionByZeroSQLState(t *testing.T) {
	p := dialBoth(t, nil)
	for _, q := range []string{"select 1/0", "select x % 0 from (values (1)) v(x)"} {
		qp, pg := p.both(&pgproto3.Query{String: q})
		sameAnswers(t, q, qp, pg)
	}
}

// RESET and RESET ALL go back to the value the client gave at startup.
func TestResetKeepsStartupValue(t *testing.T) {
	p := dialBoth(t, map[string]string{"application_name": "from_startup"})
	qp, pg := p.both(&pgproto3.Query{String: "set application_name = 'x'; reset application_name; show application_name"})
	sameAnswers(t, "reset", qp, pg)
	qp, pg = p.both(&pgproto3.Query{String: "set application_name = 'y'; reset all; show application_name"})
	sameAnswers(t, "reset all", qp, pg)
}

// SET TimeZone to an offset: the text of timestamptz results and DuckDB's
// own time zone (casts to date) follow it. A plain number is hours east,
// the hh:mm form a POSIX zone (west), as PostgreSQL reads them; an offset
// DuckDB cannot follow (not whole hours) is refused.
func TestTimeZoneOffsetRefusedWhenFractional(t *testing.T) {
	c := dialWith(t, startServer(t, nil).addr, map[string]string{"user": "raw", "database": "x"})
	c.send(&pgproto3.Query{String: "set timezone = '-05:30'"})
	if got := summarize(c.until('Z')); !strings.Contains(got, "22023") {
		t.Errorf("SET TimeZone '-05:30': %s, want 22023", got)
	}
}

// SET TimeZone to an offset: the text of timestamptz results and DuckDB's
// own time zone (casts to date) follow it.
func TestTimeZoneOffset(t *testing.T) {
	p := dialBoth(t, nil)
	for _, tz := range []string{"+00", "+02", "-05:00"} {
		p.both(&pgproto3.Query{String: "set timezone = 'Asia/Tokyo'"})
		qp, pg := p.both(&pgproto3.Query{String: "set timezone = '" + tz + "'; " +
			"select '2024-01-01 20:00:00+00'::timestamptz as ts, ('2024-01-01 20:00:00+00'::timestamptz)::date as d"})
		sameAnswers(t, "TimeZone "+tz, qp, pg)
	}
}

// COMMIT ends the transaction block and with it every portal: a portal
// name can be bound again afterwards.
func TestCommitClosesPortals(t *testing.T) {
	p := dialBoth(t, nil)
	const q = "select x from (values (1),(2),(3)) v(x) order by x"
	qp, pg := p.both(&pgproto3.Query{String: "begin"})
	sameAnswers(t, "begin", qp, pg)
	qp, pg = p.both(&pgproto3.Parse{Name: "s", Query: q}, &pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s"},
		&pgproto3.Execute{Portal: "p", MaxRows: 1}, &pgproto3.Sync{})
	sameAnswers(t, "portal in block", qp, pg)
	qp, pg = p.both(&pgproto3.Query{String: "commit"})
	sameAnswers(t, "commit", qp, pg)
	qp, pg = p.both(&pgproto3.Bind{DestinationPortal: "p", PreparedStatement: "s"},
		&pgproto3.Execute{Portal: "p"}, &pgproto3.Sync{})
	sameAnswers(t, "bind the same portal name after commit", qp, pg)
}

// A client that connected but has not sent its startup packet yet does
// not hold the server's shutdown for the whole grace period: no query
// runs.
func TestShutdownNotHeldByHandshake(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ShutdownGrace = 6 * time.Second })
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	time.Sleep(200 * time.Millisecond)
	t0 := time.Now()
	s.cancel()
	var serr error
	select {
	case serr = <-s.done:
	case <-time.After(15 * time.Second):
		t.Fatal("server did not stop")
	}
	s.done <- serr // for startServer's cleanup
	if d := time.Since(t0); d > 2*time.Second {
		t.Errorf("shutdown with one silent connection and no running query took %v", d.Round(time.Millisecond))
	}
}
