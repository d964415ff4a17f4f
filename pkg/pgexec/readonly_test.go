// Tests of the guarantees: read-only, the envelope gating the statement, timeouts, cancellation, clean connections.

package pgexec

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWritesRejected runs writes through a validator that allows
// everything, on a pool without default_transaction_read_only: the
// envelope alone must stop them.
func TestWritesRejected(t *testing.T) {
	a := admin(t)
	mustExec(t, a, "DROP TABLE IF EXISTS canary; CREATE TABLE canary (v int); INSERT INTO canary VALUES (42)")
	mustExec(t, a, "DROP SEQUENCE IF EXISTS canary_seq; CREATE SEQUENCE canary_seq")
	pool := newPool(t, 1, false)
	e := newExec(t, pool, Options{})
	res := run(t, e, "SELECT current_setting('default_transaction_read_only') AS d, current_setting('transaction_read_only') AS t")
	if !strings.Contains(string(res.JSON), `"rows":[["off","on"]]`) {
		t.Fatalf("only the envelope should make the statement read-only here: %s", res.JSON)
	}
	cases := []struct{ sql, code string }{
		{"INSERT INTO canary VALUES (1)", "25006"},
		{"UPDATE canary SET v = 0", "25006"},
		{"DELETE FROM canary", "25006"},
		{"WITH d AS (DELETE FROM canary RETURNING *) SELECT * FROM d", "25006"},
		{"CREATE TABLE pwned (a int)", "25006"},
		{"CREATE TEMP TABLE pwned (a int)", "25006"},
		{"SELECT nextval('canary_seq')", "25006"},
		{"SELECT setval('canary_seq', 100)", "25006"},
		{"COPY canary FROM STDIN", "25006"},
		{"SELECT 1; DELETE FROM canary", "42601"},
		{"COMMIT; DELETE FROM canary", "42601"},
		{"SELECT set_config('transaction_read_only', 'off', true), (SELECT count(*) FROM canary)", "25001"},
		{"DO $$BEGIN SET transaction_read_only = off; INSERT INTO canary VALUES (2); END$$", "25001"},
		{"DO $$BEGIN INSERT INTO canary VALUES (3); END$$", "25006"},
	}
	for _, c := range cases {
		t.Run(c.sql, func(t *testing.T) {
			qe := queryErr(t, e, c.sql)
			if qe.SQLState != c.code || qe.Stage != StageQuery {
				t.Fatalf("got %s %q, want SQLSTATE %s", qe.SQLState, qe.Message, c.code)
			}
			if n := queryInt(t, a, "SELECT count(*) FROM canary WHERE v <> 42"); n != 0 {
				t.Fatalf("canary changed: %d rows", n)
			}
			if n := queryInt(t, a, "SELECT count(*) FROM canary"); n != 1 {
				t.Fatalf("canary has %d rows", n)
			}
			if n := queryInt(t, a, "SELECT count(*) FROM pg_class WHERE relname = 'pwned'"); n != 0 {
				t.Fatal("table created")
			}
			if n := queryInt(t, a, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM canary_seq"); n != 0 {
				t.Fatalf("sequence advanced to %d", n)
			}
			assertPoolIdle(t, pool)
			run(t, e, "SELECT 1")
		})
	}
	if e.DestroyedConns() != 0 {
		t.Fatalf("%d connections destroyed; failed statements should leave them clean", e.DestroyedConns())
	}
}

// TestSessionChangesDoNotLeak: statements that succeed inside the
// read-only transaction but try to change the session are undone by the
// ROLLBACK, or cost the connection.
func TestSessionChangesDoNotLeak(t *testing.T) {
	pool := newPool(t, 1, true)
	e := newExec(t, pool, Options{})
	pid := run(t, e, "SELECT pg_backend_pid() AS pid").JSON

	for _, sql := range []string{
		"SET default_transaction_read_only = off",
		"SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
		"SELECT set_config('default_transaction_read_only', 'off', false)",
		"SET transaction_read_only = off",
	} {
		run(t, e, sql)
		res := run(t, e, "SELECT current_setting('default_transaction_read_only') AS d, pg_backend_pid() AS pid")
		if !strings.Contains(string(res.JSON), `"rows":[["on",`) {
			t.Fatalf("after %q: %s", sql, res.JSON)
		}
		if !strings.Contains(string(res.JSON), strings.TrimSuffix(strings.SplitN(string(pid), `"rows":[[`, 2)[1], `]],"row_count":1,"truncated":false}`)) {
			t.Fatalf("after %q the connection was replaced: %s vs %s", sql, res.JSON, pid)
		}
	}
	if e.DestroyedConns() != 0 {
		t.Fatal("transactional SETs should not cost the connection")
	}

	// PREPARE is not undone by ROLLBACK: the connection is destroyed.
	run(t, e, "PREPARE leak AS SELECT 1")
	if e.DestroyedConns() != 1 {
		t.Fatalf("destroyed %d, want 1", e.DestroyedConns())
	}
	res := run(t, e, "SELECT count(*) AS n FROM pg_prepared_statements")
	if !strings.Contains(string(res.JSON), `"rows":[[0]]`) {
		t.Fatalf("prepared statement leaked into the next call: %s", res.JSON)
	}
	// A COMMIT ends the envelope early (ROLLBACK then only warns); LOCK is
	// allowed read-only and is released by ROLLBACK. Neither tag is on the
	// clean list, so both cost the connection.
	run(t, e, "COMMIT")
	run(t, e, "LOCK TABLE pg_class IN ACCESS SHARE MODE")
	if e.DestroyedConns() != 3 {
		t.Fatalf("destroyed %d, want 3", e.DestroyedConns())
	}
	assertPoolIdle(t, pool)
}

// TestEnvelopeFailureSkipsStatement breaks BEGIN or SET LOCAL and shows
// the statement never runs: nextval would advance the sequence if it ran
// outside a read-only transaction (the pool has no read-only default).
// The control case proves the test would notice.
func TestEnvelopeFailureSkipsStatement(t *testing.T) {
	a := admin(t)
	mustExec(t, a, "DROP SEQUENCE IF EXISTS env_seq; CREATE SEQUENCE env_seq")
	pool := newPool(t, 1, false)
	opts, _ := Options{}.withDefaults()
	advanced := func() bool {
		return queryInt(t, a, "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM env_seq") != 0
	}
	for _, c := range []struct{ name, begin, set string }{
		{"BEGIN fails", "BEGIN TRANSACTION READ ONLY BOGUS", setTimeoutSQL(opts.StatementTimeout)},
		{"SET LOCAL fails", beginSQL, "SET LOCAL statement_timeout = 'bogus'"},
		{"both fail", "BOGUS", "SET LOCAL no_such_setting = 1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, err := newExecutor(pool, allowAll{}, opts, c.begin, c.set)
			if err != nil {
				t.Fatal(err)
			}
			_, err = e.Run(testCtx(t), "SELECT nextval('env_seq')", nil, nil)
			var qe *QueryError
			if !errors.As(err, &qe) || qe.Stage != StageEnvelope {
				t.Fatalf("want an envelope error, got %v", err)
			}
			if !strings.Contains(err.Error(), "statement not run") {
				t.Fatal(err)
			}
			if advanced() {
				t.Fatal("the statement ran although the envelope failed")
			}
			assertPoolIdle(t, pool)
			if e.DestroyedConns() != 0 {
				t.Fatal("the ROLLBACK segment should leave the connection idle")
			}
		})
	}
	t.Run("control: no read-only transaction", func(t *testing.T) {
		e, err := newExecutor(pool, allowAll{}, opts, "SELECT 1", "SELECT 2")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.Run(testCtx(t), "SELECT nextval('env_seq')", nil, nil); err != nil {
			t.Fatal(err)
		}
		if !advanced() {
			t.Fatal("control: the sequence should have advanced")
		}
	})
}

func TestStatementTimeout(t *testing.T) {
	pool := newPool(t, 1, true)
	e := newExec(t, pool, Options{StatementTimeout: 100 * time.Millisecond})
	start := time.Now()
	qe := queryErr(t, e, "SELECT pg_sleep(5)")
	if !qe.TimedOut || qe.SQLState != "57014" || qe.Message != "statement timed out after 100ms" {
		t.Fatalf("%+v", qe)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
	run(t, e, "SELECT 1")
	if e.DestroyedConns() != 0 {
		t.Fatal("a timed-out statement should not cost the connection")
	}
	// The timeout is LOCAL: it is gone after the call.
	a := admin(t)
	if n := queryInt(t, a, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep%' AND state = 'active'"); n != 0 {
		t.Fatal("statement still running")
	}
	e2 := newExec(t, pool, Options{})
	res := run(t, e2, "SELECT current_setting('statement_timeout') AS s")
	if !strings.Contains(string(res.JSON), `"rows":[["30s"]]`) {
		t.Fatalf("%s", res.JSON)
	}
	assertPoolIdle(t, pool)
}

func TestContextCancel(t *testing.T) {
	pool := newPool(t, 1, true)
	e := newExec(t, pool, Options{})
	a := admin(t)
	for _, deadline := range []bool{false, true} {
		t.Run(fmt.Sprintf("deadline=%v", deadline), func(t *testing.T) {
			var ctx context.Context
			var cancel context.CancelFunc
			if deadline {
				ctx, cancel = context.WithTimeout(context.Background(), 150*time.Millisecond)
			} else {
				ctx, cancel = context.WithCancel(context.Background())
				time.AfterFunc(150*time.Millisecond, cancel)
			}
			defer cancel()
			start := time.Now()
			_, err := e.Run(ctx, "SELECT pg_sleep(5)", nil, nil)
			var qe *QueryError
			if !errors.As(err, &qe) || !qe.Canceled || !strings.HasPrefix(qe.Message, "canceled by the client") {
				t.Fatalf("got %v", err)
			}
			if !errors.Is(err, ctx.Err()) {
				t.Fatalf("%v should wrap %v", err, ctx.Err())
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %v", d)
			}
			if n := queryInt(t, a, "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(5)' AND state = 'active'"); n != 0 {
				t.Fatal("the server is still running the statement")
			}
			assertPoolIdle(t, pool)
			run(t, e, "SELECT 1")
		})
	}
	// An already canceled context never reaches the pool.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := e.Run(ctx, "SELECT 1", nil, nil)
	var qe *QueryError
	if !errors.As(err, &qe) || !qe.Canceled || res.Timing.Pool != 0 {
		t.Fatalf("%v %+v", err, res.Timing)
	}
}

func TestConcurrency(t *testing.T) {
	pool := newPool(t, 3, true)
	e := newExec(t, pool, Options{MaxRows: 50, StatementTimeout: 50 * time.Millisecond})
	stmts := []struct {
		sql     string
		wantErr bool
	}{
		{"SELECT g, g::text FROM generate_series(1, 200) g", false},
		{"SELECT 1/0", true},
		{"INSERT INTO nowhere VALUES (1)", true},
		{"SELECT pg_sleep(1)", true},
		{"SELECT $1::int AS x", false},
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 30; i++ {
				s := stmts[(w+i)%len(stmts)]
				var params []any
				if strings.Contains(s.sql, "$1") {
					params = []any{i}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				if (w+i)%7 == 0 {
					cancel() // some calls are canceled before or while running
				}
				_, err := e.Run(ctx, s.sql, params, nil)
				cancel()
				var qe *QueryError
				if err != nil && !(errors.As(err, &qe) && (s.wantErr || qe.Canceled)) {
					errs <- fmt.Errorf("%s: %v", s.sql, err)
					return
				}
				if err == nil && s.wantErr {
					errs <- fmt.Errorf("%s: no error", s.sql)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assertPoolIdle(t, pool)
	a := admin(t)
	if n := queryInt(t, a, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgexec' AND state <> 'idle'"); n != 0 {
		t.Fatalf("%d pgexec backends not idle", n)
	}
	if n := queryInt(t, a, "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgexec'"); n > 3 {
		t.Fatalf("%d pgexec backends, pool max 3", n)
	}
}
