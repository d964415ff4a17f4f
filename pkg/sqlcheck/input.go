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
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
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

// Split splits text into statements as psql does, over PostgreSQL's own
// scanner: a semicolon ends a statement outside parentheses (a stray ')'
// does not take the depth below zero) and outside the BEGIN ... END body
// of CREATE FUNCTION or PROCEDURE (BEGIN ATOMIC); semicolons in
// literals, quoted identifiers, comments and dollar quotes do not count.
// A leading UTF-8 byte order mark is skipped, as psql skips it. A
// statement of comments and white space only is dropped; any other,
// however short ("selec 1"), is kept for the validator to refuse. The
// scanner reads a C string, so NUL bytes are masked for splitting only;
// the statements keep them and the validator refuses them. A token the
// server's scanner refuses but psql's reads ("123abc", a zero-length
// quoted identifier) is masked for splitting too, and from an
// unterminated literal or comment to the end is one statement, as psql
// sends it.
func Split(file, text string) []Statement {
	text = strings.TrimPrefix(text, "\ufeff")
	masked := strings.ReplaceAll(text, "\x00", " ")
	cut := len(masked) // from the statement holding cut on: one statement
	var res *pg_query.ScanResult
	for tries := 0; res == nil; tries++ {
		r, err := pg_query.Scan(masked[:cut])
		if err == nil {
			res = r
			break
		}
		var pe *parser.Error
		at := scanErrorAt(err, masked[:cut])
		if at < 0 || tries == 1000 || !errors.As(err, &pe) {
			if sql := trimSpace(text); sql != "" {
				return []Statement{{File: file, Index: 1, SQL: sql}}
			}
			return nil
		}
		if strings.HasPrefix(pe.Message, "unterminated") {
			cut = at
			continue
		}
		_, size := utf8.DecodeRuneInString(masked[at:])
		if strings.HasPrefix(pe.Message, "zero-length delimited identifier") {
			size = min(2, len(masked)-at) // the whole ""
		}
		masked = masked[:at] + strings.Repeat(" ", size) + masked[at+size:]
	}
	broken := cut < len(masked)
	var out []Statement
	var st splitState
	from, content := 0, false
	end := func(to int) {
		if sql := trimSpace(text[from:to]); content && sql != "" {
			out = append(out, Statement{File: file, Index: len(out) + 1, SQL: sql})
		}
		st, content = splitState{}, false
	}
	for _, tok := range res.Tokens {
		switch tok.Token {
		case pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
			continue
		case pg_query.Token_ASCII_59:
			if st.parens == 0 && st.begins == 0 {
				end(int(tok.Start))
				from = int(tok.End)
				continue
			}
		}
		content = true
		st.token(tok, masked[tok.Start:tok.End])
	}
	content = content || broken
	end(len(text))
	return out
}

// scanErrorAt is the byte offset in text of the scanner's error, or -1
// when the error has none: the scanner reports characters, from 1.
func scanErrorAt(err error, text string) int {
	var pe *parser.Error
	if !errors.As(err, &pe) || pe.Cursorpos < 1 {
		return -1
	}
	n := 0
	for i := range text {
		if n == pe.Cursorpos-1 {
			return i
		}
		n++
	}
	return -1
}

// splitState is what psql's lexer tracks to tell a statement's end:
// parenthesis depth and, in CREATE [OR REPLACE] FUNCTION|PROCEDURE, the
// depth of BEGIN ... END (and of CASE ... END inside it).
type splitState struct {
	parens, begins int
	words          []string // the statement's first words, up to 4
}

func (st *splitState) token(tok *pg_query.ScanToken, text string) {
	switch tok.Token {
	case pg_query.Token_ASCII_40:
		st.parens++
		return
	case pg_query.Token_ASCII_41:
		if st.parens > 0 {
			st.parens--
		}
		return
	}
	if tok.KeywordKind == pg_query.KeywordKind_NO_KEYWORD && (tok.Token != pg_query.Token_IDENT || strings.HasPrefix(text, `"`)) {
		return // only bare words are psql's identifiers
	}
	w := strings.ToLower(text)
	if len(st.words) < 4 {
		st.words = append(st.words, w)
	}
	if st.parens != 0 || !st.routine() {
		return
	}
	switch {
	case w == "begin":
		st.begins++
	case w == "case" && st.begins > 0:
		st.begins++
	case w == "end" && st.begins > 0:
		st.begins--
	}
}

// routine reports whether the statement began CREATE [OR REPLACE]
// FUNCTION or PROCEDURE.
func (st *splitState) routine() bool {
	w := st.words
	kind := func(i int) bool { return len(w) > i && (w[i] == "function" || w[i] == "procedure") }
	return len(w) > 1 && w[0] == "create" && (kind(1) || len(w) > 3 && w[1] == "or" && w[2] == "replace" && kind(3))
}

// trimSpace trims what PostgreSQL's scanner takes for white space (space,
// tab, newline, carriage return, form feed, vertical tab) and nothing
// else: a no-break space is not white space to PostgreSQL, so trimming it
// would let check pass what the server refuses.
func trimSpace(s string) string {
	return strings.Trim(s, " \t\n\r\f\v")
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
		// A map, not a struct: encoding/json matches a struct's field
		// names without regard to case, and "SQL" is not "sql".
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(line, &obj); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", displayName(file), n+1, err)
		}
		var sql string
		if raw, ok := obj["sql"]; !ok || string(raw) == "null" || json.Unmarshal(raw, &sql) != nil {
			return nil, fmt.Errorf("%s:%d: object has no \"sql\" string", displayName(file), n+1)
		}
		out = append(out, Statement{File: file, Index: len(out) + 1, Line: n + 1, SQL: sql})
	}
	return out, nil
}
