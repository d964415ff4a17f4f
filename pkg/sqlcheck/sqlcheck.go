// Checking: one record per statement, written as JSON lines.

// Package sqlcheck checks SQL files against the safesql validator, one
// record per statement: it reads SQL text (split at top-level semicolons
// by PostgreSQL's own scanner) or JSON lines of {"sql": "..."} objects,
// and writes one "check" record per statement saying whether the
// validator allows it and, if not, why and where. The record format is in
// docs/formats.md, "mcpg check".
package sqlcheck

import (
	"bufio"
	"encoding/json"
	"io"
	"unicode/utf8"

	"github.com/qpkit/qpkit/pkg/safesql"
)

// Record type and format version.
const (
	RecordType = "check"
	Version    = 1
)

// MaxSQLShown is about how many bytes of a statement a record repeats.
const MaxSQLShown = 200

// Record is one line of output; see docs/formats.md, "mcpg check".
type Record struct {
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

// Check checks s with v and returns its record.
func Check(v *safesql.Validator, s Statement) Record {
	rec := Record{Type: RecordType, Version: Version, File: s.File, Index: s.Index, Line: s.Line, SQL: shorten(s.SQL)}
	kind, r := v.Check(s.SQL)
	if r != nil {
		pos := r.Position
		rec.Verdict, rec.Reason, rec.Construct, rec.Position = "refuse", r.Reason, r.Construct, &pos
	} else {
		rec.Verdict, rec.Kind = "allow", string(kind)
	}
	return rec
}

// CheckAll checks stmts in order with v and writes their records to w,
// one JSON line each. It reports whether any statement was refused; err
// is w's write error.
func CheckAll(w io.Writer, v *safesql.Validator, stmts []Statement) (refused bool, err error) {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for _, s := range stmts {
		rec := Check(v, s)
		if rec.Verdict == "refuse" {
			refused = true
		}
		if err := enc.Encode(rec); err != nil {
			return refused, err
		}
	}
	return refused, bw.Flush()
}

// shorten cuts s to about MaxSQLShown bytes at a rune boundary, marking
// the cut with "...".
func shorten(s string) string {
	if len(s) <= MaxSQLShown {
		return s
	}
	cut := MaxSQLShown
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "..."
}
