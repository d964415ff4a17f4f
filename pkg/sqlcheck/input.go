// Input: files and stdin as statements, from SQL text or JSON lines.

package sqlcheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Statement is one input statement and where it came from.
type Statement struct {
	File  string // as named; "-" is stdin
	Index int    // 1-based within the file
	Line  int    // JSON-lines input only: 1-based line of the object
	SQL   string
}

// Read reads each file ("-" is stdin) and splits it into statements:
// JSON lines when jsonl (SplitJSONL), SQL text otherwise (Split). It
// reads everything before returning, so unreadable input fails before
// any record is written. Errors name the file ("stdin" for "-") and, for
// a bad JSON line, its number.
func Read(files []string, jsonl bool, stdin io.Reader) ([]Statement, error) {
	var stmts []Statement
	for _, f := range files {
		data, err := readInput(f, stdin)
		if err != nil {
			return nil, err
		}
		var s []Statement
		if jsonl {
			s, err = SplitJSONL(f, data)
		} else {
			s = Split(f, string(data))
		}
		if err != nil {
			return nil, err
		}
		stmts = append(stmts, s...)
	}
	return stmts, nil
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
		return nil, fmt.Errorf("cannot read %s: %v", displayName(name), err)
	}
	return data, nil
}

func displayName(name string) string {
	if name == "-" {
		return "stdin"
	}
	return name
}

// Split splits text at top-level semicolons with PostgreSQL's own
// scanner, so semicolons in literals, quoted identifiers, comments and
// dollar quotes do not split; empty statements are dropped. The scanner
// reads a C string, so NUL bytes are masked for splitting only; the
// statements keep them and the validator refuses them. Text the scanner
// cannot split (an unterminated literal) is one statement.
func Split(file, text string) []Statement {
	masked := strings.ReplaceAll(text, "\x00", " ")
	parts, err := pg_query.SplitWithScanner(masked, false)
	if err != nil {
		return []Statement{{File: file, Index: 1, SQL: strings.TrimSpace(text)}}
	}
	var out []Statement
	from := 0
	for _, p := range parts {
		off := strings.Index(masked[from:], p)
		if off < 0 {
			// Not expected: the parts are substrings in order.
			return []Statement{{File: file, Index: 1, SQL: strings.TrimSpace(text)}}
		}
		start := from + off
		from = start + len(p)
		sql := strings.TrimSpace(text[start:from])
		if sql == "" {
			continue
		}
		out = append(out, Statement{File: file, Index: len(out) + 1, SQL: sql})
	}
	return out
}

// SplitJSONL reads one {"sql": "..."} object per non-blank line; other
// fields are ignored. A line that is not such an object is an error
// naming file:line.
func SplitJSONL(file string, data []byte) ([]Statement, error) {
	var out []Statement
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var obj struct {
			SQL *string `json:"sql"`
		}
		if err := json.Unmarshal(line, &obj); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", displayName(file), n+1, err)
		}
		if obj.SQL == nil {
			return nil, fmt.Errorf("%s:%d: object has no \"sql\" string", displayName(file), n+1)
		}
		out = append(out, Statement{File: file, Index: len(out) + 1, Line: n + 1, SQL: *obj.SQL})
	}
	return out, nil
}
