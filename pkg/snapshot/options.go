// The settings of a snapshot run, with their defaults.

package snapshot

import (
	"io"
	"log/slog"
	"time"
)

// Strategy is how decoded batches reach DuckDB.
type Strategy string

const (
	// Appender writes batches straight into DuckDB through its Appender
	// API, one appender per writer and table.
	Appender Strategy = "appender"
	// Parquet writes batches to Parquet files in a scratch directory, one
	// per writer and table, then DuckDB loads them in parallel.
	Parquet Strategy = "parquet"
)

// Options configures Run. Zero values mean the documented default.
type Options struct {
	// SourceURL is the PostgreSQL connection URL or DSN (pgx syntax).
	SourceURL string
	// Tables names the tables to copy; a bare name means schema public,
	// "schema.table" is allowed. At least one is required.
	Tables []string
	// Target is the DuckDB database file to create or replace.
	Target string
	// Strategy is Appender (default) or Parquet.
	Strategy Strategy
	// Readers is the number of parallel PostgreSQL readers; Writers the
	// number of parallel writers. 0 means AutoWorkers' choice.
	Readers, Writers int
	// RangePages is the number of heap pages per ctid range; 0 means
	// about four ranges per reader over all tables (at least 64 pages).
	RangePages int
	// BatchRows is the rows per decoded batch; 0 means 4096.
	BatchRows int
	// ScratchDir holds the Parquet files of the Parquet strategy; "" means
	// the target's directory. Its files are removed at the end.
	ScratchDir string
	// Compression is CompressFast (default: no FSST compression of
	// strings, whose analysis is most of DuckDB's writing cost; strings
	// with few distinct values still get dictionaries, which cost little
	// to write and speed up filters on them) or CompressFull (every DuckDB
	// method: the smallest file, slower to write).
	Compression Compression
	// TextFallback copies columns of types without an exact DuckDB type
	// (unconstrained numeric, inet, ...) as their PostgreSQL text form
	// (VARCHAR) instead of refusing the table.
	TextFallback bool
	// SnapshotID and SnapshotLSN, when set, name a snapshot exported by
	// someone else (e.g. a logical replication slot created with SNAPSHOT
	// 'export', whose consistent point is the LSN) that Run imports instead
	// of exporting its own; its exporter must keep it alive until Run
	// returns.
	SnapshotID, SnapshotLSN string
	// Verify compares row counts and checksums of every table against the
	// still-open exported snapshot before the copy replaces the target; a
	// mismatch fails the run.
	Verify bool
	// Progress receives per-table progress lines at most every
	// ProgressEvery and a summary line per table; nil means none.
	Progress io.Writer
	// ProgressEvery is the progress interval; 0 means 500ms.
	ProgressEvery time.Duration
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
}

// withDefaults fills the zero values that do not depend on the source.
func (o Options) withDefaults() Options {
	if o.Strategy == "" {
		o.Strategy = Appender
	}
	if o.Compression == "" {
		o.Compression = CompressFast
	}
	if o.BatchRows <= 0 {
		o.BatchRows = 4096
	}
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 500 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Compression chooses how hard DuckDB compresses the copy as it writes it.
type Compression string

const (
	CompressFull Compression = "full"
	CompressFast Compression = "fast"
)

// settings are the DuckDB statements that select c on the writing
// database. DuckDB compresses each row group as it is written, trying every
// method; the FSST analysis of strings dominates that cost.
func (c Compression) settings() []string {
	if c == CompressFast {
		return []string{"SET disabled_compression_methods = 'fsst'"}
	}
	return nil
}
