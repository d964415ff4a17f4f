package console

import (
	"testing"
	"time"
)

// SHOW TOTALS' average times are over the period's transactions and
// queries of every database, as PgBouncer's: an idle database does not
// dilute them, and databases with less than one transaction a second
// (whole-number rates of 0) still give their mean.
func TestGrandTotalsAverageTimes(t *testing.T) {
	get := func(rows [][]any, name string) any {
		for _, r := range rows {
			if r[0] == name {
				return r[1]
			}
		}
		t.Fatalf("no %s in %v", name, rows)
		return nil
	}
	busy := Stats{Database: "a", Averages: Averages{Transactions: 60, Queries: 60, TransactionTime: time.Millisecond, QueryTime: time.Millisecond}}
	idle := Stats{Database: "b"}
	rows := grandTotals([]Stats{busy, idle})
	if x, q := get(rows, "avg_xact_time"), get(rows, "avg_query_time"); x != int64(1000) || q != int64(1000) {
		t.Errorf("one busy database and an idle one: avg_xact_time %v, avg_query_time %v; want 1000 and 1000", x, q)
	}
	slow := Stats{Database: "c", Averages: Averages{TransactionTime: 2 * time.Millisecond, QueryTime: 2 * time.Millisecond}}
	rows = grandTotals([]Stats{slow, idle})
	if x := get(rows, "avg_xact_time"); x != int64(2000) {
		t.Errorf("less than one transaction a second: avg_xact_time %v, want 2000", x)
	}
}
