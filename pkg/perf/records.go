// Package perf holds the benchmark records that perfrun writes, perfstat
// summarizes and perfhtml renders (docs/formats.md, "Benchmark records"),
// with a line-numbered reader and a flush-per-record writer for them.
package perf

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Version is the format version written into every record. A reader takes
// any 1.x and refuses other major versions.
const Version = "1.0"

// majorVersion is the major version this package reads.
const majorVersion = 1

// Record type names, the value of each record's "type" field.
const (
	TypeRun      = "run"
	TypeSample   = "sample"
	TypeLoad     = "load"
	TypeEnd      = "end"
	TypeStat     = "stat"
	TypeOverhead = "overhead"
	TypeTDB      = "tdb"
	TypeCompare  = "compare"
)

// Sample phases and statuses.
const (
	PhaseCold = "cold"
	PhaseWarm = "warm"

	StatusOK      = "ok"
	StatusTimeout = "timeout"
	StatusError   = "error"
)

// PathNative and PathServer are the two paths the overhead and t_db rules
// single out.
const (
	PathNative = "native"
	PathServer = "server"
)

// Header is the part every record shares. Writer fills it in.
type Header struct {
	Type    string `json:"type"`
	Version string `json:"version"`
	// RunID is empty (and omitted) only on compare records, which name
	// their two runs in OldRunID and NewRunID.
	RunID string `json:"run_id,omitempty"`
}

func (h *Header) header() *Header { return h }

// Record is one of *Run, *Sample, *Load, *End, *Stat, *Overhead, *TDB or
// *Compare.
type Record interface {
	header() *Header
	recordType() string
}

// Tool names the program that wrote a run.
type Tool struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	GitSHA    string `json:"git_sha"`
	GoVersion string `json:"go_version"`
}

// Host describes the machine a run ran on.
type Host struct {
	CPUModel string `json:"cpu_model"`
	Cores    int    `json:"cores"`
	MemBytes int64  `json:"mem_bytes"`
	OS       string `json:"os"`
	Kernel   string `json:"kernel"`
	Hostname string `json:"hostname"`
}

// Postgres describes the server a run measured.
type Postgres struct {
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings"`
}

// Query is one entry of a run's query list.
type Query struct {
	ID     string `json:"id"`
	Weight string `json:"weight"`
	Size   string `json:"size"`
	SQL    string `json:"sql"`
}

// Run is the first record of a samples file: the provenance of the rest.
type Run struct {
	Header
	StartedAt time.Time `json:"started_at"`
	Tool      Tool      `json:"tool"`
	Host      Host      `json:"host"`
	Postgres  Postgres  `json:"postgres"`
	// ScaleFactor is the TPC-H scale factor, nil (JSON null) when unknown.
	ScaleFactor *float64 `json:"scale_factor"`
	Iterations  int      `json:"iterations"`
	Warmup      int      `json:"warmup"`
	// MinTimeNS is perfrun's --min-time (0: off, and absent in older files).
	MinTimeNS int64 `json:"min_time_ns,omitempty"`
	// MCPProtocol is the MCP protocol version of the e2e paths' client
	// (absent in older files, which used 2026-07-28).
	MCPProtocol     string   `json:"mcp_protocol_version,omitempty"`
	TimeoutMS       int64    `json:"timeout_ms"`
	Concurrency     []int    `json:"concurrency"`
	SweepDurationNS int64    `json:"sweep_duration_ns"`
	Paths           []string `json:"paths"`
	Queries         []Query  `json:"queries"`
	Args            []string `json:"args"`
}

// Sample is one timed call.
type Sample struct {
	Header
	Path        string `json:"path"`
	Query       string `json:"query"`
	Phase       string `json:"phase"`
	Concurrency int    `json:"concurrency"`
	Iter        int    `json:"iter"`
	Client      int    `json:"client"`
	Status      string `json:"status"`
	Error       string `json:"error,omitempty"`
	DurNS       int64  `json:"dur_ns"`
	Rows        int64  `json:"rows"`
	ResultBytes int64  `json:"result_bytes"`
	// The executor's segments, set on the server path only (nil and
	// absent elsewhere).
	TParseNS     *int64 `json:"t_parse_ns,omitempty"`
	TPoolNS      *int64 `json:"t_pool_ns,omitempty"`
	TTxnNS       *int64 `json:"t_txn_ns,omitempty"`
	TDBNS        *int64 `json:"t_db_ns,omitempty"`
	TSerializeNS *int64 `json:"t_serialize_ns,omitempty"`
	// TSerializeOverlapNS is the part of t_db spent serializing rows as
	// they arrived (informational, not a segment; server path only).
	TSerializeOverlapNS *int64 `json:"t_serialize_overlap_ns,omitempty"`
}

// Load is one level of the concurrency sweep for one (path, query).
type Load struct {
	Header
	Path        string `json:"path"`
	Query       string `json:"query"`
	Concurrency int    `json:"concurrency"`
	DurationNS  int64  `json:"duration_ns"`
	Requests    int64  `json:"requests"`
	Errors      int64  `json:"errors"`
	Timeouts    int64  `json:"timeouts"`
	Conns       int    `json:"conns"`
}

// End is the last record of a run that stopped on its own or on a signal.
type End struct {
	Header
	FinishedAt  time.Time `json:"finished_at"`
	Interrupted bool      `json:"interrupted"`
	Samples     int64     `json:"samples"`
}

// Segments holds one number per executor segment.
type Segments struct {
	TParse     int64 `json:"t_parse"`
	TPool      int64 `json:"t_pool"`
	TTxn       int64 `json:"t_txn"`
	TDB        int64 `json:"t_db"`
	TSerialize int64 `json:"t_serialize"`
}

// Stat summarizes one (path, query, phase, concurrency) group.
type Stat struct {
	Header
	Path        string `json:"path"`
	Query       string `json:"query"`
	Weight      string `json:"weight"`
	Size        string `json:"size"`
	Phase       string `json:"phase"`
	Concurrency int    `json:"concurrency"`
	N           int    `json:"n"`
	Timeouts    int    `json:"timeouts"`
	Errors      int    `json:"errors"`
	// Of the ok samples' dur_ns, rounded to whole nanoseconds; 0 when N is
	// 0 (Warnings then says so).
	MinNS  int64 `json:"min_ns"`
	P50NS  int64 `json:"p50_ns"`
	P95NS  int64 `json:"p95_ns"`
	P99NS  int64 `json:"p99_ns"`
	MaxNS  int64 `json:"max_ns"`
	MeanNS int64 `json:"mean_ns"`
	// [lo, hi] bootstrap intervals at CILevel.
	P50CINS   [2]int64 `json:"p50_ci_ns"`
	P95CINS   [2]int64 `json:"p95_ci_ns"`
	CILevel   float64  `json:"ci_level"`
	Resamples int      `json:"resamples"`
	Seed      uint64   `json:"seed"`
	// SegmentsP50NS is set when the group's samples carry segments.
	SegmentsP50NS *Segments `json:"segments_p50_ns,omitempty"`
	// SerializeOverlapP50NS is the median of t_serialize_overlap_ns, the
	// part of t_db spent serializing rows as they arrived (set when the
	// samples carry it).
	SerializeOverlapP50NS *int64 `json:"t_serialize_overlap_p50_ns,omitempty"`
	// ThroughputRPS and LoadErrors are set in the sweep (from its load
	// record); LoadErrors counts the level's errors plus timeouts.
	ThroughputRPS *float64 `json:"throughput_rps,omitempty"`
	LoadErrors    *int64   `json:"load_errors,omitempty"`
	Warnings      []string `json:"warnings,omitempty"`
}

// Overhead compares a path's median with native's for one group.
type Overhead struct {
	Header
	Path            string   `json:"path"`
	Query           string   `json:"query"`
	Phase           string   `json:"phase"`
	Concurrency     int      `json:"concurrency"`
	NativeP50NS     int64    `json:"native_p50_ns"`
	PathP50NS       int64    `json:"path_p50_ns"`
	DeltaP50NS      int64    `json:"delta_p50_ns"`
	DeltaP50CINS    [2]int64 `json:"delta_p50_ci_ns"`
	RelP50          float64  `json:"rel_p50"`
	ThroughputRatio *float64 `json:"throughput_ratio,omitempty"`
	// The paired estimate (concurrency 1): the median over iterations of
	// (path - native) / native, with its bootstrap interval; absent when
	// fewer than 5 iterations completed on both paths.
	PairedN        int         `json:"paired_n,omitempty"`
	PairedRelP50   *float64    `json:"paired_rel_p50,omitempty"`
	PairedRelP50CI *[2]float64 `json:"paired_rel_p50_ci,omitempty"`
	// OwnP50NS is the median of dur_ns - t_db_ns, the time the path spent
	// outside the database exchange within the same call (server path
	// only); OwnRelP50 is it over native's p50. It resolves overheads far
	// below the noise of timing two separate calls.
	OwnP50NS  *int64   `json:"own_p50_ns,omitempty"`
	OwnRelP50 *float64 `json:"own_rel_p50,omitempty"`
}

// TDB checks that the server's t_db segment agrees with native's time.
type TDB struct {
	Header
	Query            string  `json:"query"`
	NativeP50NS      int64   `json:"native_p50_ns"`
	ServerTDBP50NS   int64   `json:"server_t_db_p50_ns"`
	ToleranceRel     float64 `json:"tolerance_rel"`
	FloorNS          int64   `json:"floor_ns"`
	TDBMatchesNative bool    `json:"t_db_matches_native"`
}

// Compare is one group present in two sample files.
type Compare struct {
	Header
	Path        string  `json:"path"`
	Query       string  `json:"query"`
	Phase       string  `json:"phase"`
	Concurrency int     `json:"concurrency"`
	OldRunID    string  `json:"old_run_id"`
	NewRunID    string  `json:"new_run_id"`
	OldP50NS    int64   `json:"old_p50_ns"`
	NewP50NS    int64   `json:"new_p50_ns"`
	ChangeRel   float64 `json:"change_rel"`
	PValue      float64 `json:"p_value"`
	Alpha       float64 `json:"alpha"`
	Significant bool    `json:"significant"`
}

func (*Run) recordType() string      { return TypeRun }
func (*Sample) recordType() string   { return TypeSample }
func (*Load) recordType() string     { return TypeLoad }
func (*End) recordType() string      { return TypeEnd }
func (*Stat) recordType() string     { return TypeStat }
func (*Overhead) recordType() string { return TypeOverhead }
func (*TDB) recordType() string      { return TypeTDB }
func (*Compare) recordType() string  { return TypeCompare }

// newRecord returns an empty record of type typ, or nil if typ is unknown.
func newRecord(typ string) Record {
	switch typ {
	case TypeRun:
		return new(Run)
	case TypeSample:
		return new(Sample)
	case TypeLoad:
		return new(Load)
	case TypeEnd:
		return new(End)
	case TypeStat:
		return new(Stat)
	case TypeOverhead:
		return new(Overhead)
	case TypeTDB:
		return new(TDB)
	case TypeCompare:
		return new(Compare)
	}
	return nil
}

// validate checks the fields a reader relies on. Records written by other
// tools than perfrun are checked the same way.
func validate(rec Record) error {
	switch r := rec.(type) {
	case *Run:
		if r.RunID == "" {
			return errors.New("run_id missing")
		}
		seen := map[string]bool{}
		for i, q := range r.Queries {
			if q.ID == "" {
				return fmt.Errorf("queries[%d].id missing", i)
			}
			if seen[q.ID] {
				return fmt.Errorf("queries[%d].id %q repeated", i, q.ID)
			}
			seen[q.ID] = true
		}
	case *Sample:
		if r.Path == "" || r.Query == "" {
			return errors.New("path or query missing")
		}
		if r.Phase != PhaseCold && r.Phase != PhaseWarm {
			return fmt.Errorf("phase %q is not cold or warm", r.Phase)
		}
		if r.Status != StatusOK && r.Status != StatusTimeout && r.Status != StatusError {
			return fmt.Errorf("status %q is not ok, timeout or error", r.Status)
		}
		if r.Concurrency < 1 {
			return fmt.Errorf("concurrency %d < 1", r.Concurrency)
		}
		if r.DurNS < 0 {
			return fmt.Errorf("dur_ns %d < 0", r.DurNS)
		}
		for _, s := range []struct {
			name string
			v    *int64
		}{{"t_parse_ns", r.TParseNS}, {"t_pool_ns", r.TPoolNS}, {"t_txn_ns", r.TTxnNS}, {"t_db_ns", r.TDBNS}, {"t_serialize_ns", r.TSerializeNS}, {"t_serialize_overlap_ns", r.TSerializeOverlapNS}} {
			if s.v != nil && *s.v < 0 {
				return fmt.Errorf("%s %d < 0", s.name, *s.v)
			}
		}
	case *Load:
		if r.Path == "" || r.Query == "" {
			return errors.New("path or query missing")
		}
		if r.Concurrency < 1 {
			return fmt.Errorf("concurrency %d < 1", r.Concurrency)
		}
		if r.DurationNS < 0 || r.Requests < 0 || r.Errors < 0 || r.Timeouts < 0 {
			return errors.New("negative duration_ns, requests, errors or timeouts")
		}
	case *Stat:
		if r.Path == "" || r.Query == "" {
			return errors.New("path or query missing")
		}
	case *Overhead:
		if r.Path == "" || r.Query == "" {
			return errors.New("path or query missing")
		}
	case *TDB:
		if r.Query == "" {
			return errors.New("query missing")
		}
	case *Compare:
		if r.Path == "" || r.Query == "" {
			return errors.New("path or query missing")
		}
	}
	return nil
}

// checkVersion accepts "1.<minor>".
func checkVersion(v string) error {
	major, minor, ok := strings.Cut(v, ".")
	if !ok || !digits(major) || !digits(minor) {
		return fmt.Errorf("version %q is not major.minor", v)
	}
	if m, err := strconv.Atoi(major); err != nil || m != majorVersion {
		return fmt.Errorf("unsupported version %s (this reader knows %d.x)", v, majorVersion)
	}
	return nil
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// LineError is a bad record: Name is the file name ("-" for stdin) and Line
// is 1-based.
type LineError struct {
	Name string
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: bad record: %v", e.Name, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// maxLine bounds one record's length.
const maxLine = 16 << 20

// Reader reads records one JSON line at a time, in the manner of
// bufio.Scanner:
//
//	r := perf.NewReader(f, "samples.jsonl")
//	for r.Scan() {
//		switch rec := r.Record().(type) { ... }
//	}
//	if err := r.Err(); err != nil { ... }
//
// Each record is a new value the caller may keep. Blank lines are skipped.
// The first error (a *LineError for a bad or over-long line, the input's
// own error otherwise) stops the reader.
type Reader struct {
	sc   *bufio.Scanner
	name string
	line int
	rec  Record
	raw  []byte
	err  error
}

// NewReader reads from r; name (a file name, or "-" for stdin) prefixes
// error messages.
func NewReader(r io.Reader, name string) *Reader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	return &Reader{sc: sc, name: name}
}

// Scan reads the next record and reports whether there is one.
func (r *Reader) Scan() bool {
	if r.err != nil {
		return false
	}
	for r.sc.Scan() {
		r.line++
		line := bytes.TrimSpace(r.sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rec, err := decode(line)
		if err != nil {
			r.err = &LineError{Name: r.name, Line: r.line, Err: err}
			return false
		}
		r.rec = rec
		r.raw = line
		return true
	}
	if err := r.sc.Err(); err != nil {
		// Only an over-long line is a bad record; any other error is the
		// input failing (a directory, EIO), not a line of it.
		if errors.Is(err, bufio.ErrTooLong) {
			r.err = &LineError{Name: r.name, Line: r.line + 1, Err: err}
		} else {
			r.err = fmt.Errorf("%s: %w", r.name, err)
		}
	}
	return false
}

// Record returns the record Scan read.
func (r *Reader) Record() Record { return r.rec }

// Raw returns the line Scan read, without surrounding space. It is valid
// only until the next Scan.
func (r *Reader) Raw() []byte { return r.raw }

// Line returns the 1-based line number of the record Scan read.
func (r *Reader) Line() int { return r.line }

// Name returns the name the reader was made with.
func (r *Reader) Name() string { return r.name }

// Err returns the error that stopped the reader, nil at a clean end.
func (r *Reader) Err() error { return r.err }

// decode parses one non-empty line.
func decode(line []byte) (Record, error) {
	if line[0] != '{' {
		return nil, errors.New("not a JSON object")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, jsonError(err)
	}
	typ, err := headerString(m, "type")
	if err == nil && typ == "" {
		err = errors.New("type missing")
	}
	if err != nil {
		return nil, err
	}
	version, err := headerString(m, "version")
	if err != nil {
		return nil, err
	}
	if err := checkVersion(version); err != nil {
		return nil, err
	}
	rec := newRecord(typ)
	if rec == nil {
		return nil, fmt.Errorf("unknown record type %q", typ)
	}
	line, _ = exactObject(line, m, reflect.TypeOf(rec).Elem())
	if err := json.Unmarshal(line, rec); err != nil {
		return nil, fmt.Errorf("%s: %w", typ, fieldError(err, m, reflect.TypeOf(rec).Elem()))
	}
	// A null dur_ns would decode as 0 ns: it is missing, as in headerString.
	if raw, ok := m["dur_ns"]; typ == TypeSample && (!ok || string(raw) == "null") {
		return nil, fmt.Errorf("%s: dur_ns missing", typ)
	}
	if err := validate(rec); err != nil {
		return nil, fmt.Errorf("%s: %w", typ, err)
	}
	return rec, nil
}

// headerString reads the string field key of a record's object m (its
// exact name).
func headerString(m map[string]json.RawMessage, key string) (string, error) {
	raw, ok := m[key]
	if !ok || string(raw) == "null" {
		return "", fmt.Errorf("%s missing", key)
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return "", fmt.Errorf("field %s: %s is not string", key, te.Value)
		}
		return "", fmt.Errorf("field %s: %w", key, err)
	}
	return v, nil
}

// fieldError names the field of a time that does not parse, which
// encoding/json does not.
func fieldError(err error, m map[string]json.RawMessage, t reflect.Type) error {
	var pe *time.ParseError
	if errors.As(err, &pe) {
		for k, ft := range jsonFields(t).exact {
			var tm time.Time
			if raw, ok := m[k]; ok && ft == reflect.TypeFor[time.Time]() && json.Unmarshal(raw, &tm) != nil {
				return fmt.Errorf("field %s: %w", k, err)
			}
		}
	}
	return jsonError(err)
}

// jsonError names the field a type mismatch happened in.
func jsonError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("field %s: %s is not %s", te.Field, te.Value, te.Type)
	}
	return err
}

// Records is a whole file, each record type in reading order.
type Records struct {
	// Run is the file's run record, nil if it has none (a compare file).
	Run *Run
	// RunRaw is the run record's line exactly as read, so a tool can copy
	// it unchanged, fields unknown to this package included.
	RunRaw []byte

	Samples   []Sample
	Loads     []Load
	Ends      []End
	Stats     []Stat
	Overheads []Overhead
	TDBs      []TDB
	Compares  []Compare
}

// ReadAll reads every record from r; name prefixes error messages. A run
// record anywhere but first is an error, and so is a record whose run_id
// is not the run record's (records may omit run_id).
func ReadAll(r io.Reader, name string) (*Records, error) {
	rd := NewReader(r, name)
	recs := new(Records)
	first := true
	for rd.Scan() {
		if h := rd.Record().header(); recs.Run != nil && h.RunID != "" && h.RunID != recs.Run.RunID {
			return nil, &LineError{Name: name, Line: rd.Line(), Err: fmt.Errorf("run_id %q is not the run record's %q", h.RunID, recs.Run.RunID)}
		}
		switch rec := rd.Record().(type) {
		case *Run:
			if !first {
				return nil, &LineError{Name: name, Line: rd.Line(), Err: errors.New("run record is not the first record")}
			}
			recs.Run = rec
			recs.RunRaw = bytes.Clone(rd.Raw())
		case *Sample:
			recs.Samples = append(recs.Samples, *rec)
		case *Load:
			recs.Loads = append(recs.Loads, *rec)
		case *End:
			recs.Ends = append(recs.Ends, *rec)
		case *Stat:
			recs.Stats = append(recs.Stats, *rec)
		case *Overhead:
			recs.Overheads = append(recs.Overheads, *rec)
		case *TDB:
			recs.TDBs = append(recs.TDBs, *rec)
		case *Compare:
			recs.Compares = append(recs.Compares, *rec)
		}
		first = false
	}
	if err := rd.Err(); err != nil {
		return nil, err
	}
	return recs, nil
}

// Writer writes records as JSON lines, one Write call on the underlying
// writer per record, and flushes after each record when the underlying
// writer has a Flush method, so an interrupted run loses nothing it wrote.
// After an error every later Write returns the same error.
type Writer struct {
	w     io.Writer
	runID string
	buf   bytes.Buffer
	enc   *json.Encoder
	err   error
}

// NewWriter writes to w. runID is put on every record that has none; when
// it is empty the writer takes the run_id of the first run record written.
func NewWriter(w io.Writer, runID string) *Writer {
	wr := &Writer{w: w, runID: runID}
	wr.enc = json.NewEncoder(&wr.buf)
	wr.enc.SetEscapeHTML(false)
	return wr
}

// RunID returns the run_id the writer puts on records.
func (w *Writer) RunID() string { return w.runID }

// Write sets rec's type and version, and its run_id when empty (except on
// compare records), then writes it as one line.
func (w *Writer) Write(rec Record) error {
	if w.err != nil {
		return w.err
	}
	h := rec.header()
	h.Type = rec.recordType()
	h.Version = Version
	if _, ok := rec.(*Run); ok && w.runID == "" {
		w.runID = h.RunID
	}
	if _, ok := rec.(*Compare); !ok && h.RunID == "" {
		h.RunID = w.runID
	}
	w.buf.Reset()
	if err := w.enc.Encode(rec); err != nil { // Encode appends '\n'
		w.err = fmt.Errorf("encode %s record: %w", h.Type, err)
		return w.err
	}
	return w.emit(w.buf.Bytes())
}

// WriteRaw writes line, one JSON record without its newline, unchanged;
// perfstat copies the run record this way.
func (w *Writer) WriteRaw(line []byte) error {
	if w.err != nil {
		return w.err
	}
	w.buf.Reset()
	w.buf.Write(bytes.TrimSpace(line))
	w.buf.WriteByte('\n')
	return w.emit(w.buf.Bytes())
}

func (w *Writer) emit(b []byte) error {
	if _, err := w.w.Write(b); err != nil {
		w.err = err
		return err
	}
	if f, ok := w.w.(interface{ Flush() error }); ok {
		if err := f.Flush(); err != nil {
			w.err = err
			return err
		}
	}
	return nil
}
