// Loading TPC-H into PostgreSQL with parallel COPY streams.

package tpchload

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/tpch"
)

// LoadPostgres creates the eight TPC-H tables in the database at url, loads
// scale factor sf into them (one COPY stream per table, all at once), adds
// the primary keys, foreign keys and indexes of tpch.ConstraintsSQL when
// indexes is true, and runs ANALYZE. The tables must not exist yet; a
// load that fails drops them again, so it can simply be run once more.
func LoadPostgres(ctx context.Context, url string, sf float64, indexes bool) (err error) {
	start := time.Now()
	g, err := tpch.NewGenerator(sf)
	if err != nil {
		return fmt.Errorf("tpch generator for sf %g: %w", sf, err)
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to postgres: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, tpch.SchemaSQL); err != nil {
		return fmt.Errorf("create tpch schema: %w", err)
	}
	defer func() {
		if err != nil {
			bg := context.WithoutCancel(ctx)
			dropTables(bg, func(q string) error { _, err := conn.Exec(bg, q); return err })
		}
	}()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, len(tpch.Tables))
	for _, t := range tpch.Tables {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := copyTable(ctx, url, g, t); err != nil {
				errs <- err
				cancel() // the first failure stops the other streams
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err = <-errs; err != nil {
		return err
	}
	final := "ANALYZE"
	if indexes {
		final = tpch.ConstraintsSQL + ";\nANALYZE"
	}
	if _, err = conn.Exec(ctx, final); err != nil {
		return fmt.Errorf("constraints and analyze: %w", err)
	}
	slog.Debug("tpchload: postgres loaded", "sf", sf, "indexes", indexes, "dur", time.Since(start))
	return nil
}

// copyTable streams one generated table into PostgreSQL on its own
// connection, so that tables load in parallel.
func copyTable(ctx context.Context, url string, g *tpch.Generator, t tpch.Table) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect to postgres for %s: %w", t, err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	pr, pw := io.Pipe()
	go func() {
		_, err := g.WriteTable(ctx, pw, t, tpch.Options{Format: tpch.FormatCopy, Jobs: 1})
		pw.CloseWithError(err)
	}()
	if _, err := conn.PgConn().CopyFrom(ctx, pr, "COPY "+t.String()+" FROM STDIN"); err != nil {
		pr.CloseWithError(err) // unblocks the generator
		return fmt.Errorf("copy %s: %w", t, err)
	}
	return nil
}

// dropTables drops the eight tables with exec, after a load that failed
// part-way: a caller that sees the error finds no half-loaded tables.
// Its own failure is only logged; the load's error is what counts.
func dropTables(ctx context.Context, exec func(string) error) {
	for i := len(tpch.Tables) - 1; i >= 0; i-- { // one by one: DuckDB drops one per statement
		if err := exec("DROP TABLE IF EXISTS " + tpch.Tables[i].String() + " CASCADE"); err != nil {
			slog.Warn("tpchload: dropping the tables of a failed load", "table", tpch.Tables[i].String(), "err", err)
		}
	}
}
