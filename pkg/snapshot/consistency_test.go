package snapshot

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
)

const bankSchema = `
CREATE TABLE accounts (id int PRIMARY KEY, balance bigint NOT NULL, pad text) WITH (fillfactor = 50);
INSERT INTO accounts SELECT i, 1000, repeat('p', 200) FROM generate_series(1, 30000) i;
CREATE TABLE ledger (id bigserial, amount bigint);
CREATE TABLE counter (n bigint);
INSERT INTO counter VALUES (0);
`

// bankWriter moves money between accounts, logs each move in ledger and
// counts it in counter, in one transaction per move, and now and then
// rewrites many rows so that tuples move between pages. Any copy of one
// consistent point keeps the invariants: 30000 accounts, the total
// balance, and count(ledger) = counter.n.
func bankWriter(ctx context.Context, t *testing.T, url string, commits *atomic.Int64) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(context.Background())
	for i := 0; ctx.Err() == nil; i++ {
		a, b, x := 1+rand.IntN(30000), 1+rand.IntN(30000), rand.IntN(100)
		batch := &pgx.Batch{}
		batch.Queue("BEGIN")
		batch.Queue("UPDATE accounts SET balance = balance - $2 WHERE id = $1", a, x)
		batch.Queue("UPDATE accounts SET balance = balance + $2 WHERE id = $1", b, x)
		if i%10 == 0 {
			batch.Queue("UPDATE accounts SET pad = pad WHERE id % 97 = $1", i%97)
		}
		batch.Queue("INSERT INTO ledger (amount) VALUES ($1)", x)
		batch.Queue("UPDATE counter SET n = n + 1")
		batch.Queue("COMMIT")
		if err := conn.SendBatch(ctx, batch).Close(); err != nil {
			if ctx.Err() == nil {
				t.Error(err)
			}
			return
		}
		commits.Add(1)
	}
}

func TestSnapshotIsConsistentUnderWrites(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, bankSchema)
	wctx, stop := context.WithCancel(ctx)
	var commits atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() { bankWriter(wctx, t, url, &commits) })
	for commits.Load() < 20 {
		if t.Failed() {
			t.FailNow()
		}
	}
	tgt := target(t)
	res, err := Run(ctx, Options{SourceURL: url, Target: tgt, Tables: []string{"accounts", "ledger", "counter"},
		Readers: 3, Writers: 2, RangePages: 16, BatchRows: 500, Verify: true})
	during := commits.Load()
	stop()
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	db := openCopy(t, tgt)
	if n := queryInt(t, db, "SELECT count(DISTINCT id) FROM public.accounts"); n != 30000 {
		t.Errorf("copy has %d distinct accounts, want 30000", n)
	}
	if n := queryInt(t, db, "SELECT count(*) FROM public.accounts"); n != 30000 {
		t.Errorf("copy has %d account rows, want 30000", n)
	}
	if n := queryInt(t, db, "SELECT sum(balance) FROM public.accounts"); n != 30000*1000 {
		t.Errorf("copy has total balance %d, want %d", n, 30000*1000)
	}
	copied := queryInt(t, db, "SELECT n FROM public.counter")
	if n := queryInt(t, db, "SELECT count(*) FROM public.ledger"); n != copied {
		t.Errorf("copy has %d ledger rows but counter %d", n, copied)
	}
	final := pgInt(t, url, "SELECT n FROM public.counter")
	if copied < 20 || copied >= final {
		t.Errorf("copy's counter %d; writes before the run >= 20, after it %d", copied, final)
	}
	t.Logf("counter: %d in the copy, %d when Run returned, %d at the end; %d pages of accounts", copied, during, final, res.Tables[0].Pages)

	// Against the current source, ledger differs, and Verify says the
	// source has moved rather than calling the copy corrupt.
	checks, err := Verify(ctx, VerifyOptions{SourceURL: url, DB: db, Tables: []string{"ledger"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(checks) != 1 || checks[0].Match || !checks[0].SourceMoved || checks[0].Note == "" {
		t.Errorf("verify after writes: %+v", checks)
	}
}
