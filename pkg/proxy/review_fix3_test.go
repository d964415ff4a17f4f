package proxy_test

import (
	"context"
	"testing"

	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/proxy"
)

// An SQL prepared statement made by dynamic SQL in a DO block (EXECUTE
// 'PREPARE ...') outlives the transaction exactly as a plain PREPARE does.
// The pin pattern used to match "prepare <name> as" anywhere in the text;
// preparesStatement (state.go) now looks only at the first word of each
// statement, so the DO block no longer pins: the statement stays on the
// server for the next client, who can EXECUTE it, and the client that made
// it loses it (26000) once it lands on another server.
func TestFixReviewPrepareInDoBlockPins(t *testing.T) {
	c := pgtest.Shared(t)
	r := startProxy(t, c, cfg{mode: proxy.Transaction, size: 1})
	a := connect(t, r.url("postgres"))
	b := connect(t, r.url("postgres"))
	rvExec(t, a, "DO $$ BEGIN EXECUTE 'PREPARE zzfix3_q AS SELECT ''a-secret''::text'; END $$")
	if got := rvSimple(t, a, "EXECUTE zzfix3_q"); got != "a-secret" {
		t.Errorf("client a's own EXECUTE zzfix3_q: %q (a must keep the server its statement is on)", got)
	}
	a.Close(context.Background()) // its server is reset (DISCARD ALL) and handed on
	if got := rvSimple(t, b, "select count(*) from pg_prepared_statements where name = 'zzfix3_q'"); got != "0" {
		t.Errorf("client b's session has client a's SQL prepared statement zzfix3_q (count %s); on PostgreSQL it is only in a's session", got)
	}
}
