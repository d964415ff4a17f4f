// The check command: validate statements from files or stdin, one JSON line per statement.

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/qpkit/qpkit/pkg/safesql"
)

type checkCmd struct {
	Files               []string `arg:"" optional:"" name:"file" help:"SQL files to check; none or - reads stdin."`
	JSONL               bool     `name:"jsonl" help:"Input is JSON lines, one {\"sql\": \"...\"} object per line, instead of SQL text split at top-level semicolons."`
	AllowFunction       []string `name:"allow-function" placeholder:"NAME" help:"Also allow this function (repeatable); NAME or SCHEMA.NAME as PostgreSQL stores it."`
	AllowExplainAnalyze bool     `name:"allow-explain-analyze" help:"Allow EXPLAIN ANALYZE, which executes the statement."`
	MaxLength           int      `name:"max-length" default:"65536" help:"Longest statement in bytes."`
	MaxDepth            int      `name:"max-depth" default:"64" help:"Deepest bracket nesting (at most 1000)."`
}

// record is one line of output; see docs/formats.md, "mcpg check".
type record struct {
	Type      string `json:"type"`
	Version   int    `json:"version"`
	File      string `json:"file"`
	Index     int    `json:"index"`
	Line      int    `json:"line,omitempty"`
	Verdict   string `json:"verdict"`
	Kind      string `json:"kind,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Construct string `json:"construct,omitempty"`
	Position  *int   `json:"position,omitempty"`
	SQL       string `json:"sql"`
}

// maxSQLShown is how much of a statement a record repeats.
const maxSQLShown = 200

// statement is one input statement and where it came from.
type statement struct {
	file  string
	index int // 1-based within the file
	line  int // JSON-lines input only
	sql   string
}

func (c *checkCmd) Run(e *env) error {
	if c.MaxLength < 1 {
		return usagef("--max-length %d must be at least 1", c.MaxLength)
	}
	if c.MaxDepth < 1 || c.MaxDepth > 1000 {
		return usagef("--max-depth %d is out of range 1..1000", c.MaxDepth)
	}
	v, err := safesql.New(safesql.Options{
		AllowExplainAnalyze: c.AllowExplainAnalyze,
		AllowFunctions:      c.AllowFunction,
		MaxLength:           c.MaxLength,
		MaxDepth:            c.MaxDepth,
	})
	if err != nil {
		return usagef("%s", strings.TrimPrefix(err.Error(), "safesql: "))
	}
	files := c.Files
	if len(files) == 0 {
		files = []string{"-"}
	}
	// Read and split everything first, so unreadable input fails before
	// any record is written.
	var stmts []statement
	for _, f := range files {
		data, err := readInput(f, e.stdin)
		if err != nil {
			return err
		}
		var s []statement
		if c.JSONL {
			s, err = splitJSONL(f, data)
		} else {
			s = splitSQL(f, string(data))
		}
		if err != nil {
			return err
		}
		stmts = append(stmts, s...)
	}
	w := bufio.NewWriter(e.stdout)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	refused := false
	for _, s := range stmts {
		rec := record{Type: "check", Version: 1, File: s.file, Index: s.index, Line: s.line, SQL: shorten(s.sql)}
		kind, r := v.Check(s.sql)
		if r != nil {
			refused = true
			pos := r.Position
			rec.Verdict, rec.Reason, rec.Construct, rec.Position = "refuse", r.Reason, r.Construct, &pos
		} else {
			rec.Verdict, rec.Kind = "allow", string(kind)
		}
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if refused {
		return errRefused
	}
	return nil
}

func readInput(name string, stdin io.Reader) ([]byte, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, usagef("cannot read %s: %v", displayName(name), err)
	}
	return data, nil
}

func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// splitSQL splits text at top-level semicolons with PostgreSQL's own
// scanner, so semicolons in literals, quoted identifiers, comments and
// dollar quotes do not split. The scanner reads a C string, so NUL bytes
// are masked for splitting only; the statements keep them and the
// validator refuses them. Text the scanner cannot split (an unterminated
// literal) is checked as one statement.
func splitSQL(file, text string) []statement {
	masked := strings.ReplaceAll(text, "\x00", " ")
	parts, err := pg_query.SplitWithScanner(masked, false)
	if err != nil {
		return []statement{{file: file, index: 1, sql: strings.TrimSpace(text)}}
	}
	var out []statement
	from := 0
	for _, p := range parts {
		off := strings.Index(masked[from:], p)
		if off < 0 {
			// Not expected: the parts are substrings in order.
			return []statement{{file: file, index: 1, sql: strings.TrimSpace(text)}}
		}
		start := from + off
		from = start + len(p)
		sql := strings.TrimSpace(text[start:from])
		if sql == "" {
			continue
		}
		out = append(out, statement{file: file, index: len(out) + 1, sql: sql})
	}
	return out
}

// splitJSONL reads one {"sql": "..."} object per non-blank line; other
// fields are ignored.
func splitJSONL(file string, data []byte) ([]statement, error) {
	var out []statement
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var obj struct {
			SQL *string `json:"sql"`
		}
		if err := json.Unmarshal(line, &obj); err != nil {
			return nil, usagef("%s:%d: %v", displayName(file), n+1, err)
		}
		if obj.SQL == nil {
			return nil, usagef("%s:%d: object has no \"sql\" string", displayName(file), n+1)
		}
		out = append(out, statement{file: file, index: len(out) + 1, line: n + 1, sql: *obj.SQL})
	}
	return out, nil
}

// shorten cuts s to about maxSQLShown bytes at a rune boundary, marking
// the cut with "...".
func shorten(s string) string {
	if len(s) <= maxSQLShown {
		return s
	}
	cut := maxSQLShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
