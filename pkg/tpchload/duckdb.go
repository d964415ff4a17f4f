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
// tables must not exist yet. db may be any database/sql handle opened with
// the duckdb driver.
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
	for _, t := range tpch.Tables {
		if err := loadDuckTable(ctx, db, g, t, cols[t.String()], dir); err != nil {
			return err
		}
	}
	slog.Debug("tpchload: duckdb loaded", "sf", sf, "dur", time.Since(start))
	return nil
}

// loadDuckTable generates one table into a CSV file and reads it into a new
// DuckDB table.
func loadDuckTable(ctx context.Context, db *sql.DB, g *tpch.Generator, t tpch.Table, cols []column, dir string) error {
	path := filepath.Join(dir, t.String()+".csv")
	if err := writeCSV(ctx, g, t, path); err != nil {
		return err
	}
	defer os.Remove(path)
	var defs, types, selects []string
	for _, c := range cols {
		defs = append(defs, c.name+" "+c.duck+" NOT NULL")
		types = append(types, fmt.Sprintf("'%s': '%s'", c.name, c.duck))
		if c.trim {
			selects = append(selects, fmt.Sprintf("rtrim(%s, ' ') AS %s", c.name, c.name))
		} else {
			selects = append(selects, c.name)
		}
	}
	create := fmt.Sprintf("CREATE TABLE %s (%s)", t, strings.Join(defs, ", "))
	if _, err := db.ExecContext(ctx, create); err != nil {
		return fmt.Errorf("duckdb create %s: %w", t, err)
	}
	// quote '"' and escape '"' are RFC 4180, which tpch.FormatCSV writes.
	insert := fmt.Sprintf(`INSERT INTO %s SELECT %s FROM read_csv('%s', header = false, delim = ',', quote = '"', escape = '"', columns = {%s})`,
		t, strings.Join(selects, ", "), path, strings.Join(types, ", "))
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
