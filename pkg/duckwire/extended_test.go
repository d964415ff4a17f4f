package duckwire

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"
)

func expect(t *testing.T, got []pgproto3.BackendMessage, want string) {
	t.Helper()
	if s := summary(got); s != want {
		t.Fatalf("got  %s\nwant %s", s, want)
	}
}

func TestSimpleQueryMessages(t *testing.T) {
	s := startServer(t, nil)
	c := dialRaw(t, s.addr)
	c.send(&pgproto3.Query{String: "select 1 as a; select 'x' as b"})
	expect(t, c.until('Z'), "T D(1) C(SELECT 1) T D(x) C(SELECT 1) Z(I)")
	c.send(&pgproto3.Query{String: " -- nothing\n"})
	expect(t, c.until('Z'), "I Z(I)")
	c.send(&pgproto3.Query{String: "select 1; select nope; select 2"})
	expect(t, c.until('Z'), "T D(1) C(SELECT 1) E(42703) Z(I)")
	c.send(&pgproto3.Query{String: "begin; select 1"})
	expect(t, c.until('Z'), "C(BEGIN) T D(1) C(SELECT 1) Z(T)")
	c.send(&pgproto3.Query{String: "select nope"})
	expect(t, c.until('Z'), "E(42703) Z(E)")
	c.send(&pgproto3.Query{String: "select 1"})
	expect(t, c.until('Z'), "E(25P02) Z(E)")
	c.send(&pgproto3.Query{String: "commit"})
	expect(t, c.until('Z'), "C(ROLLBACK) Z(I)")
	c.send(&pgproto3.Query{String: "show transaction_isolation; show server_version; set application_name = 'x'"})
	expect(t, c.until('Z'), "T D(repeatable read) C(SHOW) T D(15.0 (qpanalytics)) C(SHOW) S C(SET) Z(I)")
	c.send(&pgproto3.Query{String: "set timezone = 'Asia/Tokyo'; reset all; show timezone; set server_version = '1'"})
	// The error ends the Query's implicit block, which undoes its RESET
	// ALL: application_name is 'x' again, reported before ReadyForQuery.
	expect(t, c.until('Z'), "S C(SET) S S C(RESET) T D(UTC) C(SHOW) E(55P02) S Z(I)")
	c.send(&pgproto3.Query{String: "show application_name"})
	expect(t, c.until('Z'), "T D(x) C(SHOW) Z(I)")
	c.send(&pgproto3.Query{String: "select version(), current_setting('server_version_num')"})
	expect(t, c.until('Z'), "T D("+FullVersion+",150000) C(SELECT 1) Z(I)")
}

func TestRefusesWrites(t *testing.T) {
	s := startServer(t, nil)
	c := dialRaw(t, s.addr)
	for sql, code := range map[string]string{
		"insert into lineitem values (1, 1, 'x', current_date)": "25006",
		"create table x (a int)":                                "25006",
		"create temp table x (a int)":                           "25006",
		"copy lineitem to '/tmp/lineitem.csv'":                  "0A000",
		"copy lineitem from stdin":                              "25006",
		"delete from lineitem":                                  "25006",
		"select * into t2 from lineitem":                        "25006",
		"attach 'x.db'":                                         "42601",
		"pragma threads=1":                                      "42601",
		"select * from read_csv('/etc/passwd')":                 "0A000",
		"select 1 for update":                                   "0A000",
	} {
		c.send(&pgproto3.Query{String: sql})
		got := c.until('Z')
		if e, ok := got[0].(*pgproto3.ErrorResponse); !ok || e.Code != code {
			t.Errorf("%s: got %s, want E(%s)", sql, summary(got), code)
		}
	}
	c.send(&pgproto3.Query{String: "select count(*) from lineitem"})
	expect(t, c.until('Z'), "T D(1000) C(SELECT 1) Z(I)")
}

func TestExtendedPortalSuspendAndResume(t *testing.T) {
	s := startServer(t, nil)
	c := dialRaw(t, s.addr)
	c.send(&pgproto3.Parse{Name: "s1", Query: "select l_orderkey from lineitem where l_orderkey <= $1 order by 1"},
		&pgproto3.Describe{ObjectType: 'S', Name: "s1"},
		&pgproto3.Bind{DestinationPortal: "p1", PreparedStatement: "s1", Parameters: [][]byte{[]byte("5")}},
		&pgproto3.Describe{ObjectType: 'P', Name: "p1"},
		&pgproto3.Execute{Portal: "p1", MaxRows: 2},
		&pgproto3.Execute{Portal: "p1", MaxRows: 2},
		&pgproto3.Flush{})
	got := c.until('s')
	got = append(got, c.until('s')...)
	expect(t, got, "1 t T 2 T D(1) D(2) s D(3) D(4) s")
	if pd := got[1].(*pgproto3.ParameterDescription); len(pd.ParameterOIDs) != 1 || pd.ParameterOIDs[0] != 20 {
		t.Errorf("parameter types %v, want [20]", pd.ParameterOIDs)
	}
	c.send(&pgproto3.Execute{Portal: "p1"}, &pgproto3.Close{ObjectType: 'P', Name: "p1"}, &pgproto3.Sync{})
	expect(t, c.until('Z'), "D(5) C(SELECT 1) 3 Z(I)") // the rows of this Execute, as PostgreSQL counts
	// The named statement survives Sync and runs again, in binary.
	c.send(&pgproto3.Bind{PreparedStatement: "s1", Parameters: [][]byte{{0, 0, 0, 0, 0, 0, 0, 1}}, ParameterFormatCodes: []int16{1}, ResultFormatCodes: []int16{1}},
		&pgproto3.Execute{}, &pgproto3.Close{ObjectType: 'S', Name: "s1"}, &pgproto3.Sync{})
	expect(t, c.until('Z'), "2 D(\x00\x00\x00\x00\x00\x00\x00\x01) C(SELECT 1) 3 Z(I)")
	c.send(&pgproto3.Bind{PreparedStatement: "s1"}, &pgproto3.Sync{})
	expect(t, c.until('Z'), "E(26000) Z(I)")
}

func TestExtendedErrorSkipsToSync(t *testing.T) {
	s := startServer(t, nil)
	c := dialRaw(t, s.addr)
	c.send(&pgproto3.Parse{Query: "select 1"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "select nope"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "select 2"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect(t, c.until('Z'), "1 2 D(1) C(SELECT 1) E(42703) Z(I)")
	c.send(&pgproto3.Parse{Query: "begin"}, &pgproto3.Bind{}, &pgproto3.Execute{},
		&pgproto3.Parse{Query: "select 1/'x'"}, &pgproto3.Bind{}, &pgproto3.Execute{}, &pgproto3.Sync{})
	got := c.until('Z')
	if last := got[len(got)-1].(*pgproto3.ReadyForQuery); last.TxStatus != 'E' {
		t.Fatalf("got %s, want an error and Z(E)", summary(got))
	}
	c.send(&pgproto3.Query{String: "rollback"})
	expect(t, c.until('Z'), "C(ROLLBACK) Z(I)")
	c.send(&pgproto3.Parse{Query: ""}, &pgproto3.Bind{}, &pgproto3.Describe{ObjectType: 'P'}, &pgproto3.Execute{}, &pgproto3.Sync{})
	expect(t, c.until('Z'), "1 2 n I Z(I)")
	c.send(&pgproto3.Parse{Query: "select 1; select 2"}, &pgproto3.Sync{})
	expect(t, c.until('Z'), "E(42601) Z(I)")
}

func TestPgxExtendedModes(t *testing.T) {
	s := startServer(t, nil)
	ctx := context.Background()
	for _, simple := range []bool{false, true} {
		c := connect(t, s.url, simple)
		for i := 0; i < 2; i++ { // the second run uses the statement cache
			var (
				i8   int64
				num  string
				ts   time.Time
				tstz time.Time
				arr  []string
				txt  string
				b    bool
				iv   time.Duration
			)
			err := c.QueryRow(ctx, `select i8, num::text, ts, tstz, tarr, t, b, interval '2 hours' from types where i4 = $1 and t like $2`, 42, "h%").
				Scan(&i8, &num, &ts, &tstz, &arr, &txt, &b, &iv)
			if err != nil {
				t.Fatalf("simple=%v: %v", simple, err)
			}
			if i8 != 9007199254740993 || num != "1.50" || ts.Format(time.RFC3339Nano) != "2024-01-02T03:04:05.123456Z" ||
				!tstz.Equal(time.Date(2024, 1, 2, 3, 4, 5, 5e8, time.UTC)) || len(arr) != 2 || arr[0] != "a b" || txt != `héllo "q"` || !b || iv != 2*time.Hour {
				t.Fatalf("simple=%v: got %v %v %v %v %v %v %v %v", simple, i8, num, ts, tstz, arr, txt, b, iv)
			}
		}
		rows, err := c.Query(ctx, "select l_orderkey, l_quantity, l_shipdate from lineitem order by 1 limit 3")
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				t.Fatal(err)
			}
			n++
			if vals[0].(int64) != int64(n) {
				t.Fatalf("row %d: %v", n, vals)
			}
		}
		if rows.Err() != nil || n != 3 {
			t.Fatalf("rows: %d %v", n, rows.Err())
		}
		var d time.Time
		if err := c.QueryRow(ctx, "select $1::date + 1", time.Date(2024, 2, 28, 0, 0, 0, 0, time.UTC)).Scan(&d); err != nil || d.Day() != 29 {
			t.Fatalf("date param: %v %v", d, err)
		}
		if _, err := c.Exec(ctx, "select * from nope"); err == nil {
			t.Fatal("no error for a missing table")
		}
		var one int
		if err := c.QueryRow(ctx, "select 1").Scan(&one); err != nil || one != 1 {
			t.Fatalf("after error: %v", err)
		}
	}
	_ = pgx.QueryExecModeCacheStatement
}

// TestPassthroughRefusesDuckDBWrites checks the last gate, DuckDB's own
// statement type, with no dialect in front.
func TestPassthroughRefusesDuckDBWrites(t *testing.T) {
	s := startServer(t, func(c *Config) { c.Dialect = Passthrough })
	c := dialRaw(t, s.addr)
	for sql, code := range map[string]string{
		"create temp table x (a int)":           "25006",
		"attach 'x.db'":                         "25006",
		"pragma threads=1":                      "0A000",
		"select * from read_csv('/etc/passwd')": "42501",
		"create temp table x (a int); select 1": "25006",
	} {
		c.send(&pgproto3.Query{String: sql})
		got := c.until('Z')
		if e, ok := got[0].(*pgproto3.ErrorResponse); !ok || e.Code != code {
			t.Errorf("%s: got %s, want E(%s)", sql, summary(got), code)
		}
	}
	c.send(&pgproto3.Query{String: "select count(*) from range(10)"})
	expect(t, c.until('Z'), "T D(10) C(SELECT 1) Z(I)")
}

// TestParameterTypes checks that bound values keep the types DuckDB
// inferred (the described result stays right) and that parameters DuckDB
// cannot type accept numbers.
func TestParameterTypes(t *testing.T) {
	s := startServer(t, nil)
	c := connect(t, s.url, false)
	ctx := context.Background()
	var n int32
	if err := c.QueryRow(ctx, "select coalesce($1, 5)", int64(7)).Scan(&n); err != nil || n != 7 {
		t.Fatalf("coalesce: %d %v", n, err)
	}
	// DuckDB types neither the parameter nor the result before binding:
	// the result is described as text.
	var f string
	if err := c.QueryRow(ctx, "select l_orderkey + $1 from lineitem where l_orderkey = 1", 2.5).Scan(&f); err != nil || f != "3.5" {
		t.Fatalf("untyped arithmetic: %v %v", f, err)
	}
	var cnt int64
	if err := c.QueryRow(ctx, "select count(*) from lineitem where l_quantity > $1 and l_shipdate >= $2", "40", time.Date(1995, 6, 1, 0, 0, 0, 0, time.UTC)).Scan(&cnt); err != nil || cnt == 0 {
		t.Fatalf("decimal and date parameters: %d %v", cnt, err)
	}
	// JSON keeps its text (the query is wrapped to read it as VARCHAR).
	var j string
	if err := c.QueryRow(ctx, "select j, i4 from types where i4 = $1", 42).Scan(&j, new(int32)); err != nil || j != `{"a": [1, 2]}` {
		t.Fatalf("json: %q %v", j, err)
	}
	if _, err := c.Exec(ctx, "select coalesce($1, 5)", "1099511627776"); sqlCode(err) != "22003" {
		t.Fatalf("out of range: %v", err)
	}
}
