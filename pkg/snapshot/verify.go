// Verification: row counts and checksums of the copy against the source.

package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"runtime"
	"slices"
	"strings"
	"sync"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/copybin"
	"golang.org/x/sync/errgroup"
)

// VerifyOptions configures a standalone Verify.
type VerifyOptions struct {
	// SourceURL is the PostgreSQL the copy was taken from.
	SourceURL string
	// Target is the DuckDB file, opened read-only; unused when DB is set.
	Target string
	// DB is an open handle on the copy (e.g. the server's); optional.
	DB *sql.DB
	// Tables limits the check; empty means every table in the file's
	// metadata.
	Tables []string
	// Readers is the number of parallel source readers; 0 means
	// AutoWorkers' choice.
	Readers int
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
}

// TableCheck is the comparison of one table.
type TableCheck struct {
	Schema, Name         string
	SourceRows, CopyRows int64
	SourceSum, CopySum   string // see checksumQueries
	Match                bool
	// SourceMoved says the source's WAL position has passed the snapshot's
	// (standalone Verify only): the source may have changed since the copy
	// was taken, so a mismatch is not by itself evidence of a bad copy.
	// WAL also moves for writes to other tables and databases and for page
	// pruning, so a moved WAL does not prove this table changed.
	SourceMoved bool
	// Note explains a mismatch in words.
	Note string
}

// MismatchError is Run's error when Options.Verify found differences.
type MismatchError struct{ Checks []TableCheck }

func (e *MismatchError) Error() string {
	var bad []string
	for _, c := range e.Checks {
		if !c.Match {
			bad = append(bad, fmt.Sprintf("%s.%s (source %d rows, copy %d rows)", c.Schema, c.Name, c.SourceRows, c.CopyRows))
		}
	}
	return "copy differs from the snapshot: " + strings.Join(bad, ", ")
}

// Verify compares, per table, the row count and checksum of the current
// source with the copy, and says whether the source has moved on since
// the snapshot's recorded WAL position. The source side is read by
// parallel readers sharing one exported snapshot, split into ctid ranges.
// Differences are reported in the checks, not as an error; the error is
// for failing to compare at all.
func Verify(ctx context.Context, opts VerifyOptions) ([]TableCheck, error) {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	db := opts.DB
	if db == nil {
		if opts.Target == "" {
			return nil, errors.New("verify: no target file")
		}
		connector, err := duckdb.NewConnector(opts.Target+"?access_mode=READ_ONLY", nil)
		if err != nil {
			return nil, fmt.Errorf("verify: open %s: %w", opts.Target, err)
		}
		defer connector.Close()
		db = sql.OpenDB(connector)
		defer db.Close()
	}
	meta, err := ReadMeta(ctx, db)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	names := opts.Tables
	if len(names) == 0 {
		for _, t := range meta.Tables {
			names = append(names, t.Schema+"."+t.Name)
		}
	}
	cfg, err := pgx.ParseConfig(opts.SourceURL)
	if err != nil {
		return nil, fmt.Errorf("verify: parse source URL: %w", err)
	}
	cfg.RuntimeParams["application_name"] = "qpanalytics-verify"
	cfg.RuntimeParams["client_encoding"] = "UTF8"
	snap, err := exportSnapshot(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	defer snap.end(context.Background())
	var moved bool
	if err := snap.conn.QueryRow(ctx, `SELECT $1::pg_lsn > $2::pg_lsn`, snap.LSN, meta.WALLSN).Scan(&moved); err != nil {
		return nil, fmt.Errorf("verify: compare WAL positions: %w", err)
	}
	tables, err := describeTables(ctx, snap.conn, names, true)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	// A table whose columns changed in PostgreSQL since the copy (added,
	// dropped, renamed, retyped) differs, whatever its rows: reported as a
	// mismatch, not checksummed (the copy may lack a column the source has).
	var shapeChecks []TableCheck
	same := tables[:0:0]
	for _, t := range tables {
		diff, err := columnDifference(ctx, db, t)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		if diff != "" {
			shapeChecks = append(shapeChecks, TableCheck{Schema: t.Schema, Name: t.Name, SourceMoved: moved, Note: diff})
			log.Info("verified", "table", t.String(), "match", false, "note", diff)
			continue
		}
		same = append(same, t)
	}
	tables = same
	readers := opts.Readers
	if readers == 0 {
		readers, _ = AutoWorkers(runtime.NumCPU(), sourceIsLocal(&cfg.Config))
	}
	ranges, _ := planRanges(tables, 0, readers)
	conns := []*pgx.Conn{snap.conn}
	defer func() {
		for _, c := range conns[1:] {
			c.Close(context.Background())
		}
	}()
	for range min(readers, len(ranges)) - 1 {
		c, err := importSnapshot(ctx, cfg, snap.ID)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		conns = append(conns, c)
	}
	checks, err := compare(ctx, conns, db, tables, ranges)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	for i := range checks {
		c := &checks[i]
		c.SourceMoved = moved
		if !c.Match {
			if moved {
				c.Note = fmt.Sprintf("source WAL moved from %s to %s since the snapshot; the difference may be writes made after it", meta.WALLSN, snap.LSN)
			} else {
				c.Note = fmt.Sprintf("source WAL still at %s: the copy differs from the data it was taken from", snap.LSN)
			}
		}
		log.Info("verified", "table", c.Schema+"."+c.Name, "match", c.Match, "source_rows", c.SourceRows, "copy_rows", c.CopyRows, "source_moved", moved)
	}
	return append(shapeChecks, checks...), nil
}

// columnDifference compares t's columns in PostgreSQL now with the copy's
// in DuckDB, by name and order; "" when they are the same, else a note.
func columnDifference(ctx context.Context, db *sql.DB, t *table) (string, error) {
	rows, err := db.QueryContext(ctx, `SELECT column_name, data_type FROM duckdb_columns()
		WHERE database_name = current_database() AND schema_name = ? AND table_name = ? ORDER BY column_index`, t.Schema, t.Name)
	if err != nil {
		return "", fmt.Errorf("columns of %s in DuckDB: %w", t, err)
	}
	var copyCols, copyTypes []string
	for rows.Next() {
		var n, typ string
		if err := rows.Scan(&n, &typ); err != nil {
			rows.Close()
			return "", fmt.Errorf("columns of %s in DuckDB: %w", t, err)
		}
		copyCols, copyTypes = append(copyCols, n), append(copyTypes, typ)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("columns of %s in DuckDB: %w", t, err)
	}
	srcCols := make([]string, len(t.Cols))
	for i, c := range t.Cols {
		srcCols[i] = c.Name
	}
	if len(copyCols) == 0 {
		return "the copy has no such table", nil
	}
	if !slices.Equal(srcCols, copyCols) {
		return fmt.Sprintf("columns differ: PostgreSQL has (%s), the copy (%s); the table changed since the copy was taken",
			strings.Join(srcCols, ", "), strings.Join(copyCols, ", ")), nil
	}
	// The same names: also the types a copy taken now would have, as
	// DuckDB spells them (a retyped column).
	for i, c := range t.Cols {
		want, err := copybin.DuckDBType(c)
		if err != nil {
			return fmt.Sprintf("column %s: %v; the table changed since the copy was taken", c.Name, err), nil
		}
		var spelled string
		if err := db.QueryRowContext(ctx, "SELECT typeof(CAST(NULL AS "+want+"))").Scan(&spelled); err != nil {
			return "", fmt.Errorf("type %s in DuckDB: %w", want, err)
		}
		if spelled != copyTypes[i] {
			return fmt.Sprintf("column %s is %s in a copy taken now, %s in this copy; the table changed since the copy was taken",
				c.Name, spelled, copyTypes[i]), nil
		}
	}
	return "", nil
}

// compare computes every table's count and checksum on both sides at once:
// the source side range by range on conns (whose transactions decide what
// they see; the sums add up), the copy side table by table on db.
func compare(ctx context.Context, conns []*pgx.Conn, db *sql.DB, tables []*table, ranges []pageRange) ([]TableCheck, error) {
	checks := make([]TableCheck, len(tables))
	sums := make([]big.Int, len(tables))
	conv := false
	if len(conns) > 0 {
		enc := conns[0].PgConn().ParameterStatus("server_encoding")
		conv = enc != "UTF8" && enc != "SQL_ASCII" && enc != ""
	}
	var mu sync.Mutex
	queue := make(chan pageRange, len(ranges))
	for _, rg := range ranges {
		queue <- rg
	}
	close(queue)
	g, gctx := errgroup.WithContext(ctx)
	for _, conn := range conns {
		g.Go(func() error {
			for rg := range queue {
				t := tables[rg.Table]
				q, _, err := checksumQueries(t, rg.where(), conv)
				if err != nil {
					return err
				}
				var n int64
				var sum string
				if err := conn.QueryRow(gctx, q).Scan(&n, &sum); err != nil {
					return fmt.Errorf("checksum %s pages %s in PostgreSQL: %w", t, rangeText(rg), err)
				}
				var v big.Int
				if _, ok := v.SetString(sum, 10); !ok {
					return fmt.Errorf("checksum %s: PostgreSQL returned %q", t, sum)
				}
				mu.Lock()
				checks[rg.Table].SourceRows += n
				sums[rg.Table].Add(&sums[rg.Table], &v)
				mu.Unlock()
			}
			return nil
		})
	}
	g.Go(func() error {
		for i, t := range tables {
			_, q, err := checksumQueries(t, "", conv)
			if err != nil {
				return err
			}
			if err := db.QueryRowContext(gctx, q).Scan(&checks[i].CopyRows, &checks[i].CopySum); err != nil {
				return fmt.Errorf("checksum %s in DuckDB: %w", t, err)
			}
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, t := range tables {
		c := &checks[i]
		c.Schema, c.Name, c.SourceSum = t.Schema, t.Name, sums[i].String()
		c.Match = c.SourceRows == c.CopyRows && c.SourceSum == c.CopySum
	}
	return checks, nil
}

// verify checks every table of a run against the exported snapshot, with
// the reader connections (each still in the snapshot's transaction); any
// difference fails the run with a *MismatchError.
func (r *run) verify(ctx context.Context, tables []*table, ranges []pageRange) ([]TableCheck, error) {
	checks, err := compare(ctx, r.readers, r.db, tables, ranges)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	for _, c := range checks {
		if !c.Match {
			return checks, &MismatchError{Checks: checks}
		}
	}
	r.log.Info("verified against the snapshot", "tables", len(checks))
	return checks, nil
}
