// Verification: row counts and checksums of the copy against the source.

package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
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
	// Tables limits the check; nil means every table in the file's
	// metadata.
	Tables []string
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
// the snapshot's recorded WAL position. Differences are reported in the
// checks, not as an error; the error is for failing to compare at all.
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
	if names == nil {
		for _, t := range meta.Tables {
			names = append(names, t.Schema+"."+t.Name)
		}
	}
	conn, err := pgx.Connect(ctx, opts.SourceURL)
	if err != nil {
		return nil, fmt.Errorf("verify: connect source: %w", err)
	}
	defer conn.Close(context.Background())
	if err := conn.PgConn().Exec(ctx, sessionSetup+"; BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").Close(); err != nil {
		return nil, fmt.Errorf("verify: begin: %w", err)
	}
	var lsn string
	var moved bool
	err = conn.QueryRow(ctx, `SELECT cur::text, cur > $1::pg_lsn FROM (SELECT CASE WHEN pg_is_in_recovery()
		THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END AS cur) s`, meta.WALLSN).Scan(&lsn, &moved)
	if err != nil {
		return nil, fmt.Errorf("verify: read WAL position: %w", err)
	}
	tables, err := describeTables(ctx, conn, names, true)
	if err != nil {
		return nil, fmt.Errorf("verify: %w", err)
	}
	var checks []TableCheck
	for _, t := range tables {
		c, err := checkTable(ctx, conn, db, t)
		if err != nil {
			return nil, err
		}
		c.SourceMoved = moved
		if !c.Match {
			if moved {
				c.Note = fmt.Sprintf("source WAL moved from %s to %s since the snapshot; the difference may be writes made after it", meta.WALLSN, lsn)
			} else {
				c.Note = fmt.Sprintf("source WAL still at %s: the copy differs from the data it was taken from", lsn)
			}
		}
		log.Info("verified", "table", t.String(), "match", c.Match, "source_rows", c.SourceRows, "copy_rows", c.CopyRows, "source_moved", moved)
		checks = append(checks, c)
	}
	return checks, nil
}

// checkTable computes one table's count and checksum on both sides. The
// source side runs on conn, whose transaction decides what it sees.
func checkTable(ctx context.Context, conn *pgx.Conn, db *sql.DB, t *table) (TableCheck, error) {
	c := TableCheck{Schema: t.Schema, Name: t.Name}
	pgQ, duckQ, err := checksumQueries(t, "")
	if err != nil {
		return c, err
	}
	var g errgroup.Group
	g.Go(func() error {
		if err := conn.QueryRow(ctx, pgQ).Scan(&c.SourceRows, &c.SourceSum); err != nil {
			return fmt.Errorf("checksum %s in PostgreSQL: %w", t, err)
		}
		return nil
	})
	g.Go(func() error {
		if err := db.QueryRowContext(ctx, duckQ).Scan(&c.CopyRows, &c.CopySum); err != nil {
			return fmt.Errorf("checksum %s in DuckDB: %w", t, err)
		}
		return nil
	})
	if err := g.Wait(); err != nil {
		return c, err
	}
	c.Match = c.SourceRows == c.CopyRows && c.SourceSum == c.CopySum
	return c, nil
}

// verify checks every table of a run against the exported snapshot, with
// the reader connections (each still in the snapshot's transaction) in
// parallel; any difference fails the run with a *MismatchError.
func (r *run) verify(ctx context.Context, tables []*table) ([]TableCheck, error) {
	conns := make(chan *pgx.Conn, len(r.readers))
	for _, c := range r.readers {
		conns <- c
	}
	checks := make([]TableCheck, len(tables))
	g, gctx := errgroup.WithContext(ctx)
	for i, t := range tables {
		g.Go(func() error {
			conn := <-conns
			defer func() { conns <- conn }()
			c, err := checkTable(gctx, conn, r.db, t)
			checks[i] = c
			return err
		})
	}
	if err := g.Wait(); err != nil {
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
