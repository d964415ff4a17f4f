package snapshot

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/copybin"
	"github.com/qpkit/qpkit/pkg/pgtest"
	"github.com/qpkit/qpkit/pkg/tpchload"
)

// rawSchema has tables whose COPY misbehaves on purpose. The cast of mood
// to text (used when the column is read AsText) raises a NOTICE and
// changes a reported setting for 'loud' rows and sleeps for the 'slow' one;
// latin's last row cannot be sent in LATIN1.
const rawSchema = `
CREATE TYPE mood AS ENUM ('ok', 'loud', 'slow');
CREATE FUNCTION mood_text(m mood) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	IF m = 'loud' THEN
		RAISE NOTICE 'loud row';
		PERFORM set_config('application_name', 'loud', false);
		RETURN 'loud';
	ELSIF m = 'slow' THEN
		PERFORM pg_sleep(30);
		RETURN 'slow';
	END IF;
	RETURN 'ok';
END $$;
CREATE CAST (mood AS text) WITH FUNCTION mood_text(mood);
CREATE TABLE noisy (id int, m mood);
INSERT INTO noisy SELECT i, CASE WHEN i % 1000 = 0 THEN 'loud' ELSE 'ok' END::mood FROM generate_series(1, 20000) i;
CREATE TABLE stall (id int, m mood);
INSERT INTO stall SELECT i, 'ok' FROM generate_series(1, 50000) i;
INSERT INTO stall VALUES (50001, 'slow');
CREATE TABLE latin (id int, s text);
INSERT INTO latin SELECT i, 'row ' || i FROM generate_series(1, 100000) i;
INSERT INTO latin VALUES (100001, 'euro €');
`

func newStats(n int) []*tableStats {
	stats := make([]*tableStats, n)
	for i := range stats {
		stats[i] = &tableStats{}
	}
	return stats
}

// openReader imports a fresh snapshot of url into a reader connection and
// describes tables in it (mood columns read as text).
func openReader(t *testing.T, url string, names ...string) (*pgx.Conn, []*table) {
	t.Helper()
	ctx := context.Background()
	cfg := mustConfig(t, url)
	snap, err := exportSnapshot(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.end(ctx)
	tables, err := describeTables(ctx, snap.conn, names, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range tables {
		for i := range tb.Cols {
			if tb.Cols[i].Type == "mood" {
				tb.Cols[i].AsText = true // through the cast
			}
		}
	}
	conn, err := importSnapshot(ctx, cfg, snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return conn, tables
}

// allRanges splits every table into ranges of per pages.
func allRanges(tables []*table, per int64) []pageRange {
	var out []pageRange
	for i, tb := range tables {
		out = append(out, splitPages(i, tb.Pages, per)...)
	}
	return out
}

// Many ranges of several tables go through one borrowed connection, inside
// the imported snapshot, and leave it usable by pgx in the same
// transaction.
func TestRawCopyRangesShareConnection(t *testing.T) {
	url := newSource(t, splitSchema)
	for k, wait := range []time.Duration{rawCoalesceWait, 0} {
		t.Run(fmt.Sprintf("coalesce %s", wait), func(t *testing.T) {
			defer func(w time.Duration) { rawCoalesceWait = w }(rawCoalesceWait)
			rawCoalesceWait = wait
			testRangesShareConnection(t, url, 30001+1000*k)
		})
	}
}

// testRangesShareConnection inserts 1000 rows into big from id on after
// the snapshot, which the reader must not see.
func testRangesShareConnection(t *testing.T, url string, id int) {
	ctx := context.Background()
	conn, tables := openReader(t, url, "big", "small", "empty", "other.Mixed")
	want := pgInt(t, url, "SELECT (SELECT count(*) FROM big) + (SELECT count(*) FROM small) + (SELECT count(*) FROM other.\"Mixed\")")
	pgInt(t, url, fmt.Sprintf("WITH i AS (INSERT INTO big SELECT i, 'later', 0, 0 FROM generate_series(%d, %d) i RETURNING 1) SELECT count(*) FROM i", id, id+999))
	ranges := allRanges(tables, 5)
	if len(ranges) < 20 {
		t.Fatalf("only %d ranges", len(ranges))
	}
	stats := newStats(len(tables))
	rows, err := drainRanges(ctx, readLoop, conn, tables, ranges, 500, stats)
	if err != nil {
		t.Fatal(err)
	}
	if rows != want {
		t.Errorf("read %d rows over %d ranges, the snapshot has %d", rows, len(ranges), want)
	}
	var pid uint32
	var big int64
	if err := conn.QueryRow(ctx, "SELECT pg_backend_pid(), (SELECT count(*) FROM big)").Scan(&pid, &big); err != nil {
		t.Fatalf("connection unusable after the ranges: %v", err)
	}
	if pid != conn.PgConn().PID() || big != want-2-500 {
		t.Errorf("after the ranges: backend %d (was %d), big has %d rows (want the snapshot's %d)", pid, conn.PgConn().PID(), big, want-502)
	}
	for i, st := range stats {
		if st.bytes.Load() == 0 && tables[i].Name != "empty" {
			t.Errorf("%s: no bytes counted", tables[i])
		}
	}
}

// An ErrorResponse after data has flowed becomes an error with the
// SQLSTATE, the table and the range; so does one before CopyOutResponse.
func TestRawCopyServerError(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, rawSchema)
	conn, tables := openReader(t, url, "latin")
	if _, err := conn.Exec(ctx, "SET client_encoding = 'LATIN1'"); err != nil {
		t.Fatal(err)
	}
	rows, err := drainRanges(ctx, readLoop, conn, tables, allRanges(tables, 1<<30), 100, newStats(1))
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22P05" {
		t.Fatalf("error %v, want SQLSTATE 22P05 (untranslatable character)", err)
	}
	if !strings.Contains(err.Error(), "copy public.latin pages [0,...)") {
		t.Errorf("error %q does not name the table and range", err)
	}
	if rows == 0 {
		t.Errorf("the error came before any data; want it mid-stream")
	}
	if !conn.IsClosed() {
		t.Errorf("connection left open after a failed COPY")
	}

	conn, tables = openReader(t, url, "latin")
	tables[0].Name = "gone"
	_, err = drainRanges(ctx, readLoop, conn, tables, allRanges(tables, 1<<30), 100, newStats(1))
	if !errors.As(err, &pgErr) || pgErr.Code != "42P01" || !strings.Contains(err.Error(), "public.gone") {
		t.Fatalf("error %v, want SQLSTATE 42P01 naming public.gone", err)
	}
}

// NoticeResponse and ParameterStatus messages inside and after the COPY
// data are skipped.
func TestRawCopySkipsNotices(t *testing.T) {
	ctx := context.Background()
	url := newSource(t, rawSchema)
	// The cast does raise notices, as pgx sees them.
	cfg := mustConfig(t, url)
	var notices atomic.Int64
	cfg.OnNotice = func(*pgconn.PgConn, *pgconn.Notice) { notices.Add(1) }
	probe, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Close(ctx)
	if _, err := probe.Exec(ctx, "SELECT m::text FROM noisy"); err != nil || notices.Load() != 20 {
		t.Fatalf("%d notices (%v), want 20", notices.Load(), err)
	}

	conn, tables := openReader(t, url, "noisy")
	ranges := allRanges(tables, 20) // several ranges, each with notices
	rows, err := drainRanges(ctx, readLoop, conn, tables, ranges, 0, newStats(1))
	if err != nil {
		t.Fatal(err)
	}
	if rows != 20000 || len(ranges) < 3 {
		t.Errorf("%d rows in %d ranges", rows, len(ranges))
	}
	var app string
	if err := conn.QueryRow(ctx, "SELECT current_setting('application_name')").Scan(&app); err != nil || app != "loud" {
		t.Errorf("after the copy: application_name %q (%v)", app, err)
	}
}

// Cancelling while the reader waits for the server mid-stream returns at
// once, not when the server's next row is ready, and closes the
// connection.
func TestRawCopyCancelMidStream(t *testing.T) {
	url := newSource(t, rawSchema)
	conn, tables := openReader(t, url, "stall")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stats := newStats(1)
	done := make(chan error, 1)
	go func() {
		// One batch holds the whole table, so the decoder is inside a
		// socket read when the slow row stalls the stream.
		_, err := drainRanges(ctx, readLoop, conn, tables, allRanges(tables, 1<<30), 60000, stats)
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for stats[0].bytes.Load() < 50000*10 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d bytes read", stats[0].bytes.Load())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("finished before the slow row: %v", err)
	default:
	}
	start := time.Now()
	cancel()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("still reading 5s after cancel")
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("returned %s after cancel", d)
	}
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "public.stall pages [0,...)") {
		t.Errorf("error %v, want context.Canceled naming the range", err)
	}
	if !conn.IsClosed() {
		t.Errorf("connection left open after cancel")
	}
}

// When the decoder gives up (here: told int8 where the server sends int4),
// the reader stops reading at once and closes the connection.
func TestRawCopyDecoderStopsEarly(t *testing.T) {
	url := newSource(t, rawSchema)
	conn, tables := openReader(t, url, "latin")
	tables[0].Cols[0].TypeOID, tables[0].Cols[0].Type = 20, "bigint"
	_, err := drainRanges(context.Background(), readLoop, conn, tables, allRanges(tables, 1<<30), 0, newStats(1))
	var de *copybin.DecodeError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "read public.latin pages [0,...)") {
		t.Fatalf("error %v, want a decode error naming the range", err)
	}
	if !conn.IsClosed() {
		t.Errorf("connection left open after the decoder stopped")
	}
}

// cost is the wall time and this process's CPU time (user+sys) of a call.
// cost is the wall time, this process's CPU time (user+sys) and its
// voluntary context switches during a call.
type cost struct {
	wall, cpu time.Duration
	switches  int64
}

func (c cost) String() string {
	return fmt.Sprintf("%s/%s/%dcs", c.wall.Round(time.Millisecond), c.cpu.Round(time.Millisecond), c.switches)
}

func measure(t *testing.T, f func()) cost {
	t.Helper()
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	start := time.Now()
	f()
	wall := time.Since(start)
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano()+r1.Stime.Nano()-r0.Utime.Nano()-r0.Stime.Nano()) * time.Nanosecond
	return cost{wall, cpu, r1.Nvcsw - r0.Nvcsw}
}

func medianCost(cs []cost) cost {
	w := make([]time.Duration, len(cs))
	c := make([]time.Duration, len(cs))
	s := make([]int64, len(cs))
	for i, x := range cs {
		w[i], c[i], s[i] = x.wall, x.cpu, x.switches
	}
	slices.Sort(w)
	slices.Sort(c)
	slices.Sort(s)
	return cost{w[len(w)/2], c[len(c)/2], s[len(s)/2]}
}

func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

// readOnly reads every range of tables[0] on one reader connection in the
// snapshot through readLoop and throws the batches away; it returns the
// rows decoded.
func readOnly(t *testing.T, ctx context.Context, url string, ranges []pageRange, loop readLoopFunc) (int64, error) {
	t.Helper()
	cfg := mustConfig(t, url)
	snap, err := exportSnapshot(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.end(context.Background())
	tables, err := describeTables(ctx, snap.conn, []string{"lineitem"}, false)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := importSnapshot(ctx, cfg, snap.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	return drainRanges(ctx, loop, conn, tables, ranges, 0, newStats(len(tables)))
}

// TestMeasureRawCopy times reading lineitem of TPC-H at
// SNAPSHOT_RAWCOPY_SF (e.g. 0.1), SNAPSHOT_RAWCOPY_ROUNDS times (default 3)
// each way, interleaved: psql's COPY to /dev/null; read+decode only (no
// DuckDB) by readLoop, by the old pgx path and by readLoop without read
// coalescing; and Run with one reader and one writer (unless
// SNAPSHOT_RAWCOPY_NORUN is set). SNAPSHOT_RAWCOPY_PROFILE=prefix writes CPU
// profiles of the first two read+decode ways. It is skipped unless
// SNAPSHOT_RAWCOPY_SF is set, as it is a measurement, not a check.
func TestMeasureRawCopy(t *testing.T) {
	sfText := os.Getenv("SNAPSHOT_RAWCOPY_SF")
	if sfText == "" {
		t.Skip("set SNAPSHOT_RAWCOPY_SF to measure")
	}
	sf, err := strconv.ParseFloat(sfText, 64)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	url := newSource(t, "")
	if err := tpchload.LoadPostgres(ctx, url, sf, false); err != nil {
		t.Fatal(err)
	}
	pgInt(t, url, "SELECT count(*) FROM (SELECT 1 FROM lineitem) s") // warm the cache once
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Fatal(err)
	}
	var ps, psChild, ro, old, nc, run []cost
	var rows int64
	rounds := 3
	if r, err := strconv.Atoi(os.Getenv("SNAPSHOT_RAWCOPY_ROUNDS")); err == nil && r > 0 {
		rounds = r
	}
	for i := range rounds {
		ps = append(ps, measure(t, func() {
			// A nil Stdout is the null device.
			cmd := exec.Command(psql, "-X", "-q", "-c", "COPY lineitem TO STDOUT (FORMAT binary)", url)
			if err := cmd.Run(); err != nil {
				t.Fatal(err)
			}
			psChild = append(psChild, cost{cpu: cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()})
		}))
		ro = append(ro, measure(t, func() {
			defer profile(t, fmt.Sprintf("raw%d", i))()
			n, err := readOnly(t, ctx, url, []pageRange{{Table: 0, From: 0, To: -1}}, readLoop)
			if err != nil {
				t.Fatal(err)
			}
			rows = n
		}))
		old = append(old, measure(t, func() {
			defer profile(t, fmt.Sprintf("pgx%d", i))()
			n, err := readOnly(t, ctx, url, []pageRange{{Table: 0, From: 0, To: -1}}, readLoopPgx)
			if err != nil || n != rows {
				t.Fatalf("pgx path: %d rows (%v), raw path %d", n, err, rows)
			}
		}))
		nc = append(nc, measure(t, func() {
			defer func(w time.Duration) { rawCoalesceWait = w }(rawCoalesceWait)
			rawCoalesceWait = 0
			n, err := readOnly(t, ctx, url, []pageRange{{Table: 0, From: 0, To: -1}}, readLoop)
			if err != nil || n != rows {
				t.Fatalf("raw path without coalescing: %d rows (%v), with %d", n, err, rows)
			}
		}))
		run = append(run, measure(t, func() {
			if os.Getenv("SNAPSHOT_RAWCOPY_NORUN") != "" {
				return
			}
			res, err := Run(ctx, Options{SourceURL: url, Target: target(t), Tables: []string{"lineitem"}, Readers: 1, Writers: 1})
			if err != nil {
				t.Fatal(err)
			}
			if res.Tables[0].Rows != rows {
				t.Errorf("run %d: %d rows, read-only %d", i, res.Tables[0].Rows, rows)
			}
		}))
		t.Logf("round %d (load %s): psql %v, read %v, pgx %v, uncoalesced %v, run %v", i, loadAvg(), ps[i], ro[i], old[i], nc[i], run[i])
	}
	f := func(cs []cost) string {
		m := medianCost(cs)
		lo := slices.MinFunc(cs, func(a, b cost) int { return int(a.cpu - b.cpu) })
		return fmt.Sprintf("wall %s cpu %s (min %s) voluntary switches %d", m.wall.Round(time.Millisecond),
			m.cpu.Round(time.Millisecond), lo.cpu.Round(time.Millisecond), m.switches)
	}
	t.Logf("SF %g lineitem %d rows, medians of %d, load %s", sf, rows, rounds, loadAvg())
	t.Logf("psql COPY > /dev/null: wall %s (psql's own cpu %s)", medianCost(ps).wall.Round(time.Millisecond),
		medianCost(psChild).cpu.Round(time.Millisecond))
	t.Logf("read+decode only:      %s", f(ro))
	t.Logf("same, old pgx path:    %s", f(old))
	t.Logf("same, no coalescing:   %s", f(nc))
	t.Logf("Run 1 reader 1 writer: %s", f(run))
}

// drainRanges runs loop (readLoop) over ranges of tables on conn, returning
// every batch to the free list at once; it returns the rows decoded. The
// bytes read are counted in stats (one per table).
func drainRanges(ctx context.Context, loop readLoopFunc, conn *pgx.Conn, tables []*table, ranges []pageRange,
	batchRows int, stats []*tableStats) (int64, error) {
	queue := make(chan pageRange, len(ranges))
	for _, rg := range ranges {
		queue <- rg
	}
	close(queue)
	free := make(chan *copybin.Batch, 2)
	free <- &copybin.Batch{}
	free <- &copybin.Batch{}
	out := make(chan item, 1)
	done := make(chan error, 1)
	go func() { done <- loop(ctx, conn, tables, stats, batchRows, queue, out, free); close(out) }()
	var rows int64
	for it := range out {
		rows += int64(it.Batch.Len)
		free <- it.Batch
	}
	return rows, <-done
}

// profile writes a CPU profile to $SNAPSHOT_RAWCOPY_PROFILE.name until
// the returned function is called; it does nothing when that is unset.
func profile(t *testing.T, name string) func() {
	path := os.Getenv("SNAPSHOT_RAWCOPY_PROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path + "." + name)
	if err != nil {
		t.Fatal(err)
	}
	pprof.StartCPUProfile(f)
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// readLoopFunc is readLoop's shape.
type readLoopFunc func(ctx context.Context, conn *pgx.Conn, tables []*table, stats []*tableStats, batchRows int,
	queue <-chan pageRange, out chan<- item, free chan *copybin.Batch) error

// readLoopPgx is the reader as it was before rawConn, for comparison.
func readLoopPgx(ctx context.Context, conn *pgx.Conn, tables []*table, stats []*tableStats, batchRows int,
	queue <-chan pageRange, out chan<- item, free chan *copybin.Batch) error {
	for rg := range queue {
		if err := readRangePgx(ctx, conn.PgConn(), tables[rg.Table], rg, batchRows, out, free); err != nil {
			return err
		}
	}
	return nil
}

// readRangePgx is the old readRange: pgconn's CopyTo writes into a
// copybin.Pipe in one goroutine while this one decodes from it.
func readRangePgx(ctx context.Context, pc *pgconn.PgConn, t *table, rg pageRange, batchRows int,
	out chan<- item, free chan *copybin.Batch) error {
	pipe := copybin.NewPipe()
	copyErr := make(chan error, 1)
	go func() {
		_, err := pc.CopyTo(ctx, pipe, copySQL(t, rg))
		if cerr := pipe.CloseWrite(err); err == nil {
			err = cerr
		}
		copyErr <- err
	}()
	_, err := decodeRange(ctx, pipe, t, rg, batchRows, out, free)
	pipe.CloseRead(io.ErrClosedPipe)
	if cerr := <-copyErr; cerr != nil {
		return cerr
	}
	return err
}

// recordCopy runs query in a transaction on a fresh connection to url and
// returns the server's response bytes, CopyOutResponse to ReadyForQuery.
func recordCopy(tb testing.TB, url, query string) []byte {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		tb.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "BEGIN"); err != nil {
		tb.Fatal(err)
	}
	if err := conn.PgConn().SyncConn(ctx); err != nil {
		tb.Fatal(err)
	}
	nc := conn.PgConn().Conn()
	q := binary.BigEndian.AppendUint32([]byte{'Q'}, uint32(4+len(query)+1))
	if _, err := nc.Write(append(append(q, query...), 0)); err != nil {
		tb.Fatal(err)
	}
	br := bufio.NewReaderSize(nc, 1<<20)
	var resp []byte
	for {
		hdr := make([]byte, 5)
		if _, err := io.ReadFull(br, hdr); err != nil {
			tb.Fatal(err)
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[1:])-4)
		if _, err := io.ReadFull(br, body); err != nil {
			tb.Fatal(err)
		}
		resp = append(append(resp, hdr...), body...)
		if hdr[0] == 'E' {
			tb.Fatalf("recording %s: %v", query, serverError(body))
		}
		if hdr[0] == 'Z' {
			return resp
		}
	}
}

// replayServer answers every Query message on every connection with resp,
// in large writes, so that what is measured is the client alone.
func replayServer(tb testing.TB, resp []byte) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				br := bufio.NewReader(c)
				hdr := make([]byte, 5)
				for {
					if _, err := io.ReadFull(br, hdr); err != nil {
						return
					}
					if _, err := br.Discard(int(binary.BigEndian.Uint32(hdr[1:])) - 4); err != nil {
						return
					}
					if hdr[0] != 'Q' {
						return // Terminate
					}
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// dialReplay connects a PgConn to a replay server, skipping the startup.
func dialReplay(tb testing.TB, addr string) *pgconn.PgConn {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		tb.Fatal(err)
	}
	cfg, err := pgconn.ParseConfig("postgres://bench@" + addr + "/bench?sslmode=disable")
	if err != nil {
		tb.Fatal(err)
	}
	pc, err := pgconn.Construct(&pgconn.HijackedConn{Conn: c, Config: cfg, TxStatus: 'T', ParameterStatuses: map[string]string{}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { pc.Close(context.Background()) })
	return pc
}

// consume runs read with fresh out and free channels, handing every batch
// straight back; it returns the rows seen.
func consume(read func(out chan<- item, free chan *copybin.Batch) error) (int64, error) {
	free := make(chan *copybin.Batch, 2)
	free <- &copybin.Batch{}
	free <- &copybin.Batch{}
	out := make(chan item, 1)
	done := make(chan error, 1)
	go func() { done <- read(out, free); close(out) }()
	var rows int64
	for it := range out {
		rows += int64(it.Batch.Len)
		free <- it.Batch
	}
	return rows, <-done
}

// BenchmarkReadRange decodes TPC-H lineitem (SF $SNAPSHOT_RAWCOPY_SF,
// default 0.01) replayed from memory by a stand-in server, so that only
// the client's work is measured: the raw path against pgx's CopyTo
// through a Pipe. cpu-ns/op is this
// process's user+sys time, the stand-in's writes included (the same for
// both).
func BenchmarkReadRange(b *testing.B) {
	sf := 0.01
	if v, err := strconv.ParseFloat(os.Getenv("SNAPSHOT_RAWCOPY_SF"), 64); err == nil {
		sf = v
	}
	ctx := context.Background()
	c := pgtest.Shared(b)
	name := fmt.Sprintf("snap%d", dbSeq.Add(1))
	admin, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		b.Fatal(err)
	}
	url := c.DBURL(name)
	if err := tpchload.LoadPostgres(ctx, url, sf, false); err != nil {
		b.Fatal(err)
	}
	src, err := pgx.Connect(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close(ctx)
	tables, err := describeTables(ctx, src, []string{"lineitem"}, false)
	if err != nil {
		b.Fatal(err)
	}
	tb, rg := tables[0], pageRange{From: 0, To: -1}
	resp := recordCopy(b, url, copySQL(tb, rg))
	addr := replayServer(b, resp)
	var want int64
	run := func(b *testing.B, read func(out chan<- item, free chan *copybin.Batch) error) {
		b.SetBytes(int64(len(resp)))
		var r0, r1 syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
		for b.Loop() {
			rows, err := consume(read)
			if err != nil {
				b.Fatal(err)
			}
			if want == 0 {
				want = rows
			}
			if rows != want || rows == 0 {
				b.Fatalf("%d rows, want %d", rows, want)
			}
		}
		syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
		cpu := r1.Utime.Nano() + r1.Stime.Nano() - r0.Utime.Nano() - r0.Stime.Nano()
		b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(r1.Nvcsw-r0.Nvcsw)/float64(b.N), "vcsw/op")
	}
	b.Run("raw", func(b *testing.B) {
		rc, err := newRawConn(ctx, dialReplay(b, addr))
		if err != nil {
			b.Fatal(err)
		}
		st := &tableStats{}
		run(b, func(out chan<- item, free chan *copybin.Batch) error {
			return readRange(ctx, rc, tb, rg, st, 0, out, free)
		})
	})
	b.Run("pgx", func(b *testing.B) {
		pc := dialReplay(b, addr)
		run(b, func(out chan<- item, free chan *copybin.Batch) error {
			return readRangePgx(ctx, pc, tb, rg, 0, out, free)
		})
	})
}
