package duckdialect

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/tpchload"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// openDuck opens an in-memory DuckDB whose every connection runs
// SessionSQL, the way the server must.
func openDuck(t testing.TB) *sql.DB {
	t.Helper()
	db := openDuckShared()
	t.Cleanup(func() { db.Close() })
	return db
}

// openDuckShared is openDuck for databases that live as long as the test
// binary.
func openDuckShared() *sql.DB {
	c, err := duckdb.NewConnector("", func(ex driver.ExecerContext) error {
		for _, s := range SessionSQL() {
			if _, err := ex.ExecContext(context.Background(), s, nil); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	})
	if err != nil {
		panic(err) // an in-memory database with a fixed init cannot fail to configure
	}
	return sql.OpenDB(c)
}

// engines is PostgreSQL and DuckDB holding the same TPC-H data.
type engines struct {
	pg   *pgx.Conn
	duck *sql.DB
}

var (
	smallOnce sync.Once
	small     *engines
	smallErr  error
)

// tpchEngines loads SF 0.01 once per test binary into the shared cluster
// and an in-memory DuckDB.
func tpchEngines(t *testing.T) *engines {
	t.Helper()
	smallOnce.Do(func() { small, smallErr = loadEngines(t, pgtest.Shared(t).URL(), 0.01) })
	if smallErr != nil {
		t.Fatal(smallErr)
	}
	return small
}

func loadEngines(t *testing.T, url string, sf float64) (*engines, error) {
	ctx := context.Background()
	start := time.Now()
	if err := tpchload.LoadPostgres(ctx, url, sf, true); err != nil {
		return nil, err
	}
	duck := openDuck(t)
	if err := tpchload.LoadDuckDB(ctx, duck, sf); err != nil {
		return nil, err
	}
	pg, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	t.Logf("loaded TPC-H SF %g into postgres and duckdb in %v", sf, time.Since(start).Round(time.Millisecond))
	return &engines{pg: pg, duck: duck}, nil
}

// result is a query's column names and rows, every value normalized to
// text (see norm).
type result struct {
	cols []string
	rows [][]string
}

func pgQuery(ctx context.Context, conn *pgx.Conn, q string) (result, error) {
	rows, err := conn.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return result{}, err
	}
	defer rows.Close()
	var res result
	for _, f := range rows.FieldDescriptions() {
		res.cols = append(res.cols, f.Name)
	}
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return result{}, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = norm(v)
		}
		res.rows = append(res.rows, row)
	}
	return res, rows.Err()
}

func duckQuery(ctx context.Context, db *sql.DB, q string) (result, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return result{}, err
	}
	defer rows.Close()
	var res result
	if res.cols, err = rows.Columns(); err != nil {
		return result{}, err
	}
	for rows.Next() {
		vals := make([]any, len(res.cols))
		ptrs := make([]any, len(vals))
		for i := range ptrs {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return result{}, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			row[i] = norm(v)
		}
		res.rows = append(res.rows, row)
	}
	return res, rows.Err()
}

// norm writes a value for comparison: numbers as "n:" and their exact
// decimal text, strings without trailing spaces (char(n) padding), dates
// and times in ISO form.
func norm(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return "s:" + strings.TrimRight(x, " ")
	case bool:
		return fmt.Sprintf("b:%v", x)
	case int, int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return fmt.Sprintf("n:%d", x)
	case *big.Int:
		return "n:" + x.String()
	case float32:
		return "n:" + strconv.FormatFloat(float64(x), 'f', -1, 32)
	case float64:
		return "n:" + strconv.FormatFloat(x, 'f', -1, 64)
	case pgtype.Numeric:
		if x.NaN {
			return "n:NaN"
		}
		f, _ := x.Value()
		return fmt.Sprintf("n:%v", f)
	case duckdb.Decimal:
		return "n:" + x.String()
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return "t:" + x.UTC().Format("2006-01-02")
		}
		return "t:" + x.UTC().Format("2006-01-02 15:04:05.999999")
	case pgtype.Interval:
		return fmt.Sprintf("i:%dm%dd%dus", x.Months, x.Days, x.Microseconds)
	case duckdb.Interval:
		return fmt.Sprintf("i:%dm%dd%dus", x.Months, x.Days, x.Micros)
	}
	return fmt.Sprintf("?%T:%v", v, v)
}

// sameValue compares normalized values; numbers match when they agree
// after rounding to two decimals (the TPC-H answer-set rule), allowing for
// a tie on the rounding boundary.
func sameValue(a, b string) bool {
	if a == b {
		return true
	}
	if !strings.HasPrefix(a, "n:") || !strings.HasPrefix(b, "n:") {
		return false
	}
	x, err1 := strconv.ParseFloat(a[2:], 64)
	y, err2 := strconv.ParseFloat(b[2:], 64)
	if err1 != nil || err2 != nil {
		return false
	}
	if math.Round(x*100) == math.Round(y*100) {
		return true
	}
	return math.Abs(x-y) < 0.01*(1+1e-9*math.Abs(x))
}

func sameRow(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameValue(a[i], b[i]) {
			return false
		}
	}
	return true
}

// compareResults checks column names, row count and rows. keys are the
// output columns the query orders by: rows must come in the same order of
// those keys, and rows with equal keys are compared as multisets. With no
// keys the whole result is compared as a multiset.
func compareResults(want, got result, keys []int) error {
	if strings.Join(want.cols, ",") != strings.Join(got.cols, ",") {
		return fmt.Errorf("columns differ: postgres %q, duckdb %q", want.cols, got.cols)
	}
	if len(want.rows) != len(got.rows) {
		return fmt.Errorf("row count differs: postgres %d, duckdb %d", len(want.rows), len(got.rows))
	}
	keyOf := func(row []string) []string {
		k := make([]string, len(keys))
		for i, c := range keys {
			k[i] = row[c]
		}
		return k
	}
	for start := 0; start < len(want.rows); {
		end := start + 1
		if len(keys) == 0 {
			end = len(want.rows)
		}
		for end < len(want.rows) && sameRow(keyOf(want.rows[end]), keyOf(want.rows[start])) {
			end++
		}
		w, g := sortRows(want.rows[start:end]), sortRows(got.rows[start:end])
		for i := range w {
			if !sameRow(w[i], g[i]) {
				return fmt.Errorf("row %d differs: postgres %q, duckdb %q", start+i, w[i], g[i])
			}
		}
		start = end
	}
	return nil
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func sortRows(rows [][]string) [][]string {
	out := append([][]string(nil), rows...)
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i], "\x00") < strings.Join(out[j], "\x00") })
	return out
}
