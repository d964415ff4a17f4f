package proxyserver

import (
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qpkit/qpkit/pkg/console"
)

// statsPeriod is the period of SHOW STATS' averages (PgBouncer's
// stats_period default).
const statsPeriod = time.Minute

// consoleStats are SHOW STATS' counters, per pool ("database/user") as
// the proxy's hooks report them, summed per database when shown.
type consoleStats struct {
	pools sync.Map // pool name -> *poolCounters
	// dbOf names the database of a pool, when the proxy has it: a pool's
	// name "database/user" is ambiguous once either name has a '/'.
	dbOf func(pool string) (string, bool)

	mu         sync.Mutex
	last, prev map[string]totals // per database, at lastAt and prevAt
	lastAt     time.Time
	prevAt     time.Time
}

type poolCounters struct {
	// database is the pool's, once the proxy has the pool to say (dbOf);
	// nil before. A client's byte counters are made before its pool.
	database                      atomic.Pointer[string]
	xacts, queries                atomic.Int64
	xactTime, queryTime, waitTime atomic.Int64 // nanoseconds
	received, sent                atomic.Int64 // bytes from and to the pool's clients
}

// totals are a database's counters at one moment.
type totals struct {
	xacts, queries                int64
	received, sent                int64
	xactTime, queryTime, waitTime time.Duration
}

func newConsoleStats() *consoleStats {
	return &consoleStats{lastAt: time.Now()}
}

func (st *consoleStats) counters(pool string) *poolCounters {
	if c, ok := st.pools.Load(pool); ok {
		return c.(*poolCounters)
	}
	c, _ := st.pools.LoadOrStore(pool, &poolCounters{})
	return c.(*poolCounters)
}

// databaseOf is the database of pool, whose counters are c.
func (st *consoleStats) databaseOf(pool string, c *poolCounters) string {
	if db := c.database.Load(); db != nil {
		return *db
	}
	if st.dbOf != nil {
		if db, ok := st.dbOf(pool); ok {
			c.database.Store(&db)
			return db
		}
	}
	db, _, _ := strings.Cut(pool, "/") // a pool gone already: the likely reading
	return db
}

func (st *consoleStats) query(pool string, d time.Duration) {
	c := st.counters(pool)
	c.queries.Add(1)
	c.queryTime.Add(int64(d))
}

func (st *consoleStats) wait(pool string, d time.Duration) { st.counters(pool).waitTime.Add(int64(d)) }

// bytes are the byte counters of a session of pool (proxy.Options.PoolBytes).
func (st *consoleStats) bytes(pool string) (read, wrote func(n int)) {
	c := st.counters(pool)
	return func(n int) { c.received.Add(int64(n)) }, func(n int) { c.sent.Add(int64(n)) }
}

func (st *consoleStats) transaction(pool string, d time.Duration) {
	c := st.counters(pool)
	c.xacts.Add(1)
	c.xactTime.Add(int64(d))
}

// now sums the counters per database.
func (st *consoleStats) now() map[string]totals {
	out := map[string]totals{}
	st.pools.Range(func(k, v any) bool {
		c := v.(*poolCounters)
		db := st.databaseOf(k.(string), c)
		t := out[db]
		t.xacts += c.xacts.Load()
		t.queries += c.queries.Load()
		t.received += c.received.Load()
		t.sent += c.sent.Load()
		t.xactTime += time.Duration(c.xactTime.Load())
		t.queryTime += time.Duration(c.queryTime.Load())
		t.waitTime += time.Duration(c.waitTime.Load())
		out[db] = t
		return true
	})
	return out
}

// run closes a period every statsPeriod until ctx ends.
func (st *consoleStats) run(ctx context.Context) {
	t := time.NewTicker(statsPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			cur := st.now()
			st.mu.Lock()
			st.prev, st.prevAt = st.last, st.lastAt
			st.last, st.lastAt = cur, now
			st.mu.Unlock()
		}
	}
}

// snapshot is SHOW STATS: the totals, and the averages of the last
// complete period (zero before the first ends). Bytes are those read from
// and written to the database's clients after their login.
func (st *consoleStats) snapshot() []console.Stats {
	cur := st.now()
	st.mu.Lock()
	last, prev, secs := st.last, st.prev, st.lastAt.Sub(st.prevAt).Seconds()
	complete := st.last != nil
	st.mu.Unlock()
	out := make([]console.Stats, 0, len(cur))
	for db, t := range cur {
		s := console.Stats{Database: db, Transactions: t.xacts, Queries: t.queries, Received: t.received, Sent: t.sent,
			TransactionTime: t.xactTime, QueryTime: t.queryTime, WaitTime: t.waitTime}
		if complete && secs > 0 {
			a, b := last[db], prev[db]
			dq, dx := a.queries-b.queries, a.xacts-b.xacts
			if dx > 0 {
				s.Averages.TransactionTime = (a.xactTime - b.xactTime) / time.Duration(dx)
			}
			s.Averages.Transactions = int64(float64(a.xacts-b.xacts) / secs)
			s.Averages.Queries = int64(float64(dq) / secs)
			s.Averages.Received = int64(float64(a.received-b.received) / secs)
			s.Averages.Sent = int64(float64(a.sent-b.sent) / secs)
			if dq > 0 {
				s.Averages.QueryTime = (a.queryTime - b.queryTime) / time.Duration(dq)
			}
			s.Averages.WaitTime = time.Duration(float64(a.waitTime-b.waitTime) / secs)
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Database < out[j].Database })
	return out
}
