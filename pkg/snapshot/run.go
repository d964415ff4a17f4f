// Run: the whole snapshot, from exporting it to renaming the finished file.

package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/copybin"
	"github.com/qpkit/qpkit/pkg/duckload"
	"golang.org/x/sync/errgroup"
)

// Run copies opts.Tables from PostgreSQL into a new DuckDB file that
// replaces opts.Target only when everything succeeded. All tables are read
// in one exported snapshot by parallel readers. On any error, or when ctx
// is cancelled, the temporary files are removed and the target is left as
// it was.
func Run(ctx context.Context, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	if err := opts.check(); err != nil {
		return nil, err
	}
	cfg, err := pgx.ParseConfig(opts.SourceURL)
	if err != nil {
		return nil, fmt.Errorf("parse source URL: %w", err)
	}
	cfg.RuntimeParams["application_name"] = "qpanalytics-snapshot"
	cfg.RuntimeParams["client_encoding"] = "UTF8" // text arrives as UTF-8 from any source encoding
	r := &run{opts: opts, cfg: cfg, log: opts.Logger, start: time.Now()}
	defer r.cleanup()
	res, err := r.do(ctx)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("snapshot interrupted: %w", errors.Join(ctx.Err(), err))
		}
		r.log.Error("snapshot failed; target left unchanged", "target", opts.Target, "err", err)
		return nil, err
	}
	return res, nil
}

// check refuses incomplete options before any work.
func (o Options) check() error {
	switch {
	case o.SourceURL == "":
		return errors.New("no source URL")
	case o.Target == "":
		return errors.New("no target file")
	case len(o.Tables) == 0:
		return errors.New("no tables to copy")
	case o.Compression != CompressFull && o.Compression != CompressFast:
		return fmt.Errorf("unknown compression %q (want %s or %s)", o.Compression, CompressFull, CompressFast)
	case o.Strategy != Appender && o.Strategy != Parquet:
		return fmt.Errorf("unknown strategy %q (want %s or %s)", o.Strategy, Appender, Parquet)
	case o.Readers < 0 || o.Writers < 0 || o.RangePages < 0:
		return errors.New("readers, writers and range pages must not be negative")
	case (o.SnapshotID == "") != (o.SnapshotLSN == ""):
		return errors.New("SnapshotID and SnapshotLSN go together")
	}
	return nil
}

// run holds one Run's state, so cleanup can release whatever was made.
type run struct {
	opts  Options
	cfg   *pgx.ConnConfig
	log   *slog.Logger
	start time.Time

	snap      *exported
	readers   []*pgx.Conn
	tmp       string
	connector *duckdb.Connector
	db        *sql.DB
	strat     writeStrategy
	done      bool // the target was replaced
}

// cleanup releases connections and, unless the run succeeded, removes the
// temporary database.
func (r *run) cleanup() {
	ctx := context.Background()
	if r.strat != nil {
		r.strat.abort()
	}
	for _, c := range r.readers {
		c.Close(ctx)
	}
	if r.snap != nil {
		r.snap.end(ctx)
	}
	r.closeDuck()
	if !r.done && r.tmp != "" {
		removeDuckDBFiles(r.tmp)
	}
}

func (r *run) closeDuck() error {
	var err error
	if r.db != nil {
		err = r.db.Close()
		r.db = nil
	}
	if r.connector != nil {
		err = errors.Join(err, r.connector.Close())
		r.connector = nil
	}
	return err
}

func (r *run) do(ctx context.Context) (*Result, error) {
	o := r.opts
	if err := r.takeSnapshot(ctx); err != nil {
		return nil, err
	}
	tables, err := describeTables(ctx, r.snap.conn, o.Tables, o.TextFallback)
	if err != nil {
		return nil, err
	}
	if testHookTables != nil {
		testHookTables(tables)
	}
	readers, writers := o.Readers, o.Writers
	if readers == 0 || writers == 0 {
		ar, aw := AutoWorkers(runtime.NumCPU(), sourceIsLocal(&r.cfg.Config))
		readers, writers = cmp0(readers, ar), cmp0(writers, aw)
	}
	ranges, perTable := planRanges(tables, o.RangePages, readers)
	readers = min(readers, len(ranges))
	r.log.Info("snapshot exported", "id", r.snap.ID, "lsn", r.snap.LSN, "tables", len(tables),
		"ranges", len(ranges), "readers", readers, "writers", writers, "strategy", o.Strategy)

	if err := r.openTarget(ctx, tables); err != nil {
		return nil, err
	}
	if err := r.importReaders(ctx, readers); err != nil {
		return nil, err
	}
	if !o.Verify && o.SnapshotID == "" {
		r.snap.end(ctx) // every reader holds the snapshot now
	}
	stats := make([]*tableStats, len(tables))
	for i := range stats {
		stats[i] = &tableStats{}
		stats[i].rangesOut.Store(int64(perTable[i]))
	}
	if err := r.copyAll(ctx, tables, stats, ranges, writers); err != nil {
		return nil, err
	}
	res := &Result{Target: o.Target, TakenAt: r.snap.TakenAt, SnapshotID: r.snap.ID, WALLSN: r.snap.LSN,
		Strategy: o.Strategy, Readers: readers, Writers: writers}
	for i, t := range tables {
		tr := TableResult{Schema: t.Schema, Name: t.Name, Rows: stats[i].rows.Load(),
			Bytes: stats[i].bytes.Load(), Pages: t.Pages, Ranges: perTable[i], Duration: stats[i].duration()}
		res.Tables = append(res.Tables, tr)
		r.log.Info("table copied", "table", t.String(), "rows", tr.Rows, "bytes", tr.Bytes, "pages", tr.Pages,
			"ranges", tr.Ranges, "duration", tr.Duration.Round(time.Millisecond))
	}
	if o.Verify {
		if testHookBeforeVerify != nil {
			testHookBeforeVerify(r.db)
		}
		if res.Checks, err = r.verify(ctx, tables, ranges); err != nil {
			return nil, err
		}
	}
	for _, c := range r.readers {
		c.Close(ctx) // ends the read-only transactions
	}
	r.readers = nil
	r.snap.end(ctx)
	res.Duration = time.Since(r.start)
	if err := r.finishTarget(ctx, res); err != nil {
		return nil, err
	}
	res.Duration = time.Since(r.start) // with the checkpoint and rename
	r.log.Info("snapshot done", "target", o.Target, "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// testHookTables lets tests alter the described tables (e.g. understate
// their size); nil outside tests.
var testHookTables func([]*table)

// testHookBeforeVerify lets tests alter the copy before Options.Verify
// checks it; nil outside tests.
var testHookBeforeVerify func(*sql.DB)

// cmp0 is v, or def when v is 0.
func cmp0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// takeSnapshot exports a snapshot, or imports the one given in Options.
func (r *run) takeSnapshot(ctx context.Context) error {
	if r.opts.SnapshotID == "" {
		snap, err := exportSnapshot(ctx, r.cfg)
		r.snap = snap
		return err
	}
	conn, err := importSnapshot(ctx, r.cfg, r.opts.SnapshotID)
	if err != nil {
		return err
	}
	r.snap = &exported{conn: conn, ID: r.opts.SnapshotID, LSN: r.opts.SnapshotLSN}
	if err := conn.QueryRow(ctx, "SELECT now()").Scan(&r.snap.TakenAt); err != nil {
		return fmt.Errorf("read snapshot time: %w", err)
	}
	return nil
}

// planRanges splits every table, largest first so that the long ranges
// start early; it returns the queue order and the ranges per table.
func planRanges(tables []*table, pagesPerRange, readers int) ([]pageRange, []int) {
	var total int64
	order := make([]int, len(tables))
	for i, t := range tables {
		total += t.Pages
		order[i] = i
	}
	per := int64(pagesPerRange)
	if per == 0 {
		per = rangePages(total, readers)
	}
	sort.SliceStable(order, func(a, b int) bool { return tables[order[a]].Pages > tables[order[b]].Pages })
	var out []pageRange
	perTable := make([]int, len(tables))
	for _, i := range order {
		rs := splitPages(i, tables[i].Pages, per)
		perTable[i] = len(rs)
		out = append(out, rs...)
	}
	return out, perTable
}

// importReaders opens the reader connections, each in the snapshot.
func (r *run) importReaders(ctx context.Context, n int) error {
	conns := make([]*pgx.Conn, n)
	g, gctx := errgroup.WithContext(ctx)
	for i := range conns {
		g.Go(func() error {
			c, err := importSnapshot(gctx, r.cfg, r.snap.ID)
			conns[i] = c
			return err
		})
	}
	err := g.Wait()
	for _, c := range conns {
		if c != nil {
			r.readers = append(r.readers, c)
		}
	}
	return err
}

// openTarget creates the temporary DuckDB file, its tables and the write
// strategy.
func (r *run) openTarget(ctx context.Context, tables []*table) error {
	tmp, err := tempPath(r.opts.Target)
	if err != nil {
		return err
	}
	r.tmp = tmp
	if r.connector, err = duckdb.NewConnector(tmp, nil); err != nil {
		return fmt.Errorf("create %s: %w", tmp, err)
	}
	r.db = sql.OpenDB(r.connector)
	for _, q := range r.opts.Compression.settings() {
		if _, err := r.db.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	for _, t := range tables {
		if err := duckload.CreateTable(ctx, r.db, t.Schema, t.Name, t.Cols); err != nil {
			return err
		}
	}
	switch r.opts.Strategy {
	case Parquet:
		r.strat, err = newParquetStrategy(r.opts.ScratchDir, r.opts.Target, r.db, tables)
	default:
		r.strat = &appenderStrategy{connector: r.connector}
	}
	return err
}

// copyAll runs the readers and writers until every range is written.
func (r *run) copyAll(ctx context.Context, tables []*table, stats []*tableStats, ranges []pageRange, writers int) error {
	queue := make(chan pageRange, len(ranges))
	for _, rg := range ranges {
		queue <- rg
	}
	close(queue)
	// Two batches per reader and per writer keep both sides busy; every
	// batch is in free, being filled, in out or being written, so memory
	// stays at nBatches * BatchRows rows.
	nBatches := 2 * (len(r.readers) + writers)
	free := make(chan *copybin.Batch, nBatches)
	for range nBatches {
		free <- &copybin.Batch{}
	}
	out := make(chan item, writers)

	rep := &reporter{w: r.opts.Progress, every: r.opts.ProgressEvery, tables: tables, stats: stats}
	repCtx, stopRep := context.WithCancel(ctx)
	var repDone sync.WaitGroup
	repDone.Go(func() { rep.run(repCtx) })

	g, gctx := errgroup.WithContext(ctx)
	var readersDone sync.WaitGroup
	for _, conn := range r.readers {
		readersDone.Add(1)
		g.Go(func() error {
			defer readersDone.Done()
			return readLoop(gctx, conn, tables, stats, r.opts.BatchRows, queue, out, free)
		})
	}
	g.Go(func() error { readersDone.Wait(); close(out); return nil })
	for w := range writers {
		g.Go(func() error { return writeLoop(gctx, w, r.strat, tables, stats, out, free) })
	}
	err := g.Wait()
	if err == nil {
		err = r.strat.finish(ctx)
	}
	stopRep()
	repDone.Wait()
	if err != nil {
		return err
	}
	rep.finish()
	return nil
}

// finishTarget writes the metadata, checkpoints and closes DuckDB, and
// renames the file over the target.
func (r *run) finishTarget(ctx context.Context, res *Result) error {
	m := &Meta{TakenAt: res.TakenAt, SourceHost: sourceHost(&r.cfg.Config), SourceDB: r.cfg.Database,
		SnapshotID: res.SnapshotID, WALLSN: res.WALLSN, Strategy: res.Strategy,
		Readers: res.Readers, Writers: res.Writers, Duration: res.Duration}
	for _, t := range res.Tables {
		m.Tables = append(m.Tables, TableMeta{Schema: t.Schema, Name: t.Name, Rows: t.Rows, Bytes: t.Bytes,
			SourcePages: t.Pages, Duration: t.Duration})
	}
	if err := writeMeta(ctx, r.db, m); err != nil {
		return err
	}
	if _, err := r.db.ExecContext(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint %s: %w", r.tmp, err)
	}
	r.strat.abort() // nothing is left open after a clean finish
	if err := r.closeDuck(); err != nil {
		return fmt.Errorf("close %s: %w", r.tmp, err)
	}
	if err := ctx.Err(); err != nil {
		return err // last chance to keep the old copy
	}
	if err := replaceTarget(r.tmp, r.opts.Target); err != nil {
		return err
	}
	r.done = true
	return nil
}

// sourceHost is host:port (or socket directory:port), without user or
// password.
func sourceHost(cfg *pgconn.Config) string {
	return cfg.Host + ":" + strconv.Itoa(int(cfg.Port))
}
