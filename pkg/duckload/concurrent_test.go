package duckload

import (
	"bytes"
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"

	"github.com/qpkit/qpkit/pkg/copybin"
)

// TestConcurrentAppenders appends three disjoint parts of the table through
// three sinks on three connections at the same time.
func TestConcurrentAppenders(t *testing.T) {
	src := loadSource(t)
	ctx := context.Background()
	db := openDuck(t)
	if err := CreateTable(ctx, db, "", "alltypes", src.cols); err != nil {
		t.Fatal(err)
	}
	const parts = 3
	errs := make(chan error, parts)
	for k := range parts {
		var buf bytes.Buffer
		q := fmt.Sprintf("COPY (SELECT * FROM alltypes WHERE id %% %d = %d) TO STDOUT (FORMAT binary)", parts, k)
		if _, err := src.conn.PgConn().CopyTo(ctx, &buf, q); err != nil {
			t.Fatal(err)
		}
		go func() { errs <- appendAll(ctx, db, "", "alltypes", src.cols, &buf, 777) }()
	}
	for range parts {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	src.check(t, db, "alltypes")
}

// TestCreateTableRefusesLossy checks that a column without an exact DuckDB
// type stops CreateTable with its name, and that the DDL is as documented.
func TestCreateTableRefusesLossy(t *testing.T) {
	db := openDuck(t)
	cols := []copybin.Column{{Name: "id", TypeOID: 23, TypMod: -1, NotNull: true}, {Name: "Amount", TypeOID: 1700, TypMod: -1, Type: "numeric"}}
	err := CreateTable(context.Background(), db, "", "t", cols)
	if err == nil || !strings.Contains(err.Error(), `"Amount"`) || !strings.Contains(err.Error(), "unconstrained numeric") {
		t.Fatalf("error %v, want one naming column \"Amount\"", err)
	}
	cols[1].AsText = true
	ddl, err := CreateTableSQL("s", "t", cols)
	if err != nil || ddl != `CREATE TABLE "s"."t" ("id" INTEGER NOT NULL, "Amount" VARCHAR)` {
		t.Fatalf("DDL %q, %v", ddl, err)
	}
}

// TestAppenderSinkChecksTable checks that a table whose columns differ from
// the stream's is refused before anything is written.
func TestAppenderSinkChecksTable(t *testing.T) {
	ctx := context.Background()
	db := openDuck(t)
	if _, err := db.Exec(`CREATE TABLE t (id INTEGER, amount DECIMAL(10,3))`); err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cases := map[string][]copybin.Column{
		"DECIMAL(10,2)": {{Name: "id", TypeOID: 23}, {Name: "amount", TypeOID: 1700, TypMod: 10<<16 | 2 + 4}},
		"the stream 3":  {{Name: "id", TypeOID: 23}, {Name: "amount", TypeOID: 1700, TypMod: 10<<16 | 3 + 4}, {Name: "x", TypeOID: 25}},
		`"amount"`:      {{Name: "id", TypeOID: 23}, {Name: "amount", TypeOID: 25}},
	}
	for want, cols := range cases {
		err := conn.Raw(func(dc any) error {
			s, err := NewAppenderSink(dc.(driver.Conn), "", "t", cols)
			if err == nil {
				s.Close()
			}
			return err
		})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want one mentioning %s", err, want)
		}
	}
}
