// Loading TPC-H into DuckDB through temporary CSV files.

package tpchload

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/qpkit/qpkit/pkg/tpch"
)

// LoadDuckDB creates the eight TPC-H tables in db and loads scale factor
// sf into them, with the column types qpanalytics's copy uses (char(n)
// values stripped of trailing spaces). Each table is generated as CSV into
// a temporary directory, read with read_csv and the file removed. The
// tables must not exist yet: the eight are created together or not at
// all, and a load that fails drops them again. db may be any database/sql
// handle opened with the duckdb driver.
func LoadDuckDB(ctx context.Context, db *sql.DB, sf float64) error {
	start := time.Now()
	cols, err := schemaColumns()
	if err != nil {
		return err
	}
	g, err := tpch.NewGenerator(sf)
	if err != nil {
		return fmt.Errorf("tpch generator for sf %g: %w", sf, err)
	}
	dir, err := os.MkdirTemp("", "tpchload-")
	if err != nil {
		return fmt.Errorf("temporary directory for csv files: %w", err)
	}
	defer os.RemoveAll(dir)
	if err := createDuckTables(ctx, db, cols); err != nil {
		return err
	}
	for _, t := range tpch.Tables {
		if err := loadDuckTable(ctx, db, g, t, cols[t.String()], dir); err != nil {
			dropTables(context.WithoutCancel(ctx), func(q string) error { _, err := db.ExecContext(context.WithoutCancel(ctx), q); return err })
			return err
		}
	}
	slog.Debug("tpchload: duckdb loaded", "sf", sf, "dur", time.Since(start))
	return nil
}

// createDuckTables creates the eight tables in one transaction, so that
// one that exists already leaves none of the others behind.
func createDuckTables(ctx context.Context, db *sql.DB, cols map[string][]column) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("duckdb begin: %w", err)
	}
	defer tx.Rollback()
	for _, t := range tpch.Tables {
		var defs []string
		for _, c := range cols[t.String()] {
			defs = append(defs, c.name+" "+c.duck+" NOT NULL")
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", t, strings.Join(defs, ", "))); err != nil {
			return fmt.Errorf("duckdb create %s: %w", t, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("duckdb create tables: %w", err)
	}
	return nil
}

// loadDuckTable generates one table into a CSV file and reads it into its
// DuckDB table.
func loadDuckTable(ctx context.Context, db *sql.DB, g *tpch.Generator, t tpch.Table, cols []column, dir string) error {
	path := filepath.Join(dir, t.String()+".csv")
	if err := writeCSV(ctx, g, t, path); err != nil {
		return err
	}
	defer os.Remove(path)
	var types, selects []string
	for _, c := range cols {
		types = append(types, fmt.Sprintf("'%s': '%s'", c.name, c.duck))
		if c.trim {
			selects = append(selects, fmt.Sprintf("rtrim(%s, ' ') AS %s", c.name, c.name))
		} else {
			selects = append(selects, c.name)
		}
	}
	// quote '"' and escape '"' are RFC 4180, which tpch.FormatCSV writes;
	// the path is a string literal (TMPDIR may hold a quote).
	insert := fmt.Sprintf(`INSERT INTO %s SELECT %s FROM read_csv('%s', header = false, delim = ',', quote = '"', escape = '"', columns = {%s})`,
		t, strings.Join(selects, ", "), strings.ReplaceAll(path, "'", "''"), strings.Join(types, ", "))
	if _, err := db.ExecContext(ctx, insert); err != nil {
		return fmt.Errorf("duckdb load %s: %w", t, err)
	}
	return nil
}

// writeCSV generates table t into the file at path.
func writeCSV(ctx context.Context, g *tpch.Generator, t tpch.Table, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	if _, err := g.WriteTable(ctx, w, t, tpch.Options{Format: tpch.FormatCSV}); err != nil {
		f.Close()
		return fmt.Errorf("generate %s: %w", t, err)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	return nil
}
