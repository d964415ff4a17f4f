package duckload

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/qpkit/qpkit/pkg/copybin"
)

// TestParquetRoundTrip writes the table into two Parquet files (one per
// half), loads both and compares with PostgreSQL.
func TestParquetRoundTrip(t *testing.T) {
	src := loadSource(t)
	ctx := context.Background()
	db := openDuck(t)
	if err := CreateTable(ctx, db, "pg", "alltypes", src.cols); err != nil {
		t.Fatal(err)
	}
	var files []string
	for k := range 2 {
		var buf bytes.Buffer
		q := fmt.Sprintf("COPY (SELECT * FROM alltypes WHERE id %% 2 = %d) TO STDOUT (FORMAT binary)", k)
		if _, err := src.conn.PgConn().CopyTo(ctx, &buf, q); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), fmt.Sprintf("part%d.parquet", k))
		if err := writeParquet(path, src.cols, &buf, 1000); err != nil {
			t.Fatal(err)
		}
		files = append(files, path)
	}
	if err := LoadParquet(ctx, db, "pg", "alltypes", files); err != nil {
		t.Fatal(err)
	}
	src.check(t, db, "pg.alltypes")
	// The file itself carries the exact types, not just what INSERT casts to.
	var typ string
	if err := db.QueryRow(fmt.Sprintf("SELECT string_agg(column_type, ',' ORDER BY column_name) FROM (DESCRIBE SELECT n15, n38, n4, tstz, ts, u, d, an FROM read_parquet('%s'))", files[0])).Scan(&typ); err != nil {
		t.Fatal(err)
	}
	if want := "DECIMAL(12,3)[],DATE,DECIMAL(15,2),DECIMAL(38,10),DECIMAL(4,4),TIMESTAMP,TIMESTAMP WITH TIME ZONE,UUID"; typ != want {
		t.Errorf("Parquet column types %s, want %s", typ, want)
	}
}

func writeParquet(path string, cols []copybin.Column, r io.Reader, max int) error {
	sink, err := NewParquetSink(path, cols)
	if err != nil {
		return err
	}
	dec, err := copybin.NewDecoder(r, cols)
	if err != nil {
		sink.Close()
		return err
	}
	var b copybin.Batch
	for {
		_, err := dec.Next(&b, max)
		if err == io.EOF {
			return sink.Close()
		}
		if err == nil {
			err = sink.Write(&b)
		}
		if err != nil {
			sink.Close()
			return err
		}
	}
}
