// The session information functions, answered from the session: found as
// PostgreSQL's scanner finds them (never inside a string or a comment) and
// replaced by literals named as PostgreSQL names the column.

package duckwire

import (
	"context"
	"database/sql/driver"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// tok is a scanned token: its text and kind.
type tok struct {
	start, end int
	kind       pg_query.Token
	text       string // lower case
}

// scanTokens is sql's tokens as PostgreSQL's scanner reads them, comments
// left out; false when the text does not scan.
func scanTokens(sql string) ([]tok, bool) {
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return nil, false
	}
	var toks []tok
	for _, t := range scan.GetTokens() {
		if k := t.GetToken(); k != pg_query.Token_SQL_COMMENT && k != pg_query.Token_C_COMMENT {
			a, z := int(t.GetStart()), int(t.GetEnd())
			toks = append(toks, tok{a, z, k, strings.ToLower(sql[a:z])})
		}
	}
	return toks, true
}

// rewriteSessionCalls replaces version(), current_database(),
// current_schema[()], current_setting('name'[, missing_ok]),
// pg_backend_pid(), pg_is_in_recovery(), current_user, session_user,
// current_role and current_catalog with the session's values. A call
// that is a whole item of a SELECT list gets its column name, as
// PostgreSQL gives it ("version", "current_database", ...).
func (ss *session) rewriteSessionCalls(sql string) string {
	toks, ok := scanTokens(sql)
	if !ok {
		return sql
	}
	text := func(i int) string {
		if i < 0 || i >= len(toks) {
			return ""
		}
		return toks[i].text
	}
	// lists are the SELECT lists open around the token: their bracket
	// depth, and whether their items are still being read (until FROM,
	// WHERE, ... at that depth).
	type list struct {
		depth  int
		active bool
	}
	var lists []list
	inList := func(depth int) bool {
		n := len(lists)
		return n > 0 && lists[n-1].depth == depth && lists[n-1].active
	}
	var b strings.Builder
	last, depth := 0, 0
	for i := 0; i < len(toks); i++ {
		switch text(i) {
		case "(":
			depth++
			continue
		case ")":
			depth--
			for len(lists) > 0 && lists[len(lists)-1].depth > depth {
				lists = lists[:len(lists)-1] // a subquery's list ended with it
			}
			continue
		case "select":
			lists = append(lists, list{depth, true})
			continue
		case "from", "where", "group", "having", "window", "order", "limit", "offset", "union", "intersect", "except", "fetch", "into", "for":
			if n := len(lists); n > 0 && lists[n-1].depth == depth {
				lists[n-1].active = false
			}
			continue
		}
		start, j := i, i
		if text(i) == "pg_catalog" && text(i+1) == "." {
			j = i + 2
		}
		if text(start-1) == "." || isLabelPosition(toks, start) {
			continue // a function of another schema, a column, or a column label
		}
		repl, end, ok := ss.sessionCall(toks, j)
		if !ok {
			continue
		}
		if inList(depth) {
			switch text(start - 1) {
			case "select", ",", "distinct", "all":
				switch text(end + 1) {
				case "", ",", ";", ")", "from", "union", "intersect", "except", "order", "limit", "offset", "into", "where":
					repl += ` AS "` + text(j) + `"`
				}
			}
		}
		b.WriteString(sql[last:toks[start].start])
		b.WriteString(repl)
		last, i = toks[end].end, end
	}
	if last == 0 {
		return sql
	}
	b.WriteString(sql[last:])
	return b.String()
}

// isLabelPosition tells whether toks[i] is where a column label stands:
// after AS, or right after a token that ends an expression (select 1
// current_user names the column current_user).
func isLabelPosition(toks []tok, i int) bool {
	if i == 0 {
		return false
	}
	p := toks[i-1]
	switch p.kind {
	case pg_query.Token_IDENT, pg_query.Token_ICONST, pg_query.Token_FCONST, pg_query.Token_SCONST:
		return true
	}
	return p.text == "as" || p.text == ")"
}

// sessionCall reads a session function call at toks[j]: its replacement
// and the index of its last token.
func (ss *session) sessionCall(toks []tok, j int) (string, int, bool) {
	text := func(i int) string {
		if i >= len(toks) {
			return ""
		}
		return toks[i].text
	}
	name := text(j)
	parens := text(j+1) == "(" && text(j+2) == ")"
	switch name {
	case "version", "current_database", "pg_backend_pid", "pg_is_in_recovery":
		if !parens {
			return "", 0, false
		}
		switch name {
		case "version":
			return quote(FullVersion), j + 2, true
		case "current_database":
			return quote(ss.settings.db), j + 2, true
		case "pg_backend_pid":
			return strconv.FormatUint(uint64(ss.key.PID), 10), j + 2, true
		}
		return "false", j + 2, true
	case "current_schema":
		end := j
		if parens {
			end = j + 2
		} else if toks[j].kind != pg_query.Token_CURRENT_SCHEMA || text(j+1) == "(" {
			return "", 0, false
		}
		return quote(ss.currentSchema()), end, true
	case "current_user", "session_user", "current_role":
		if text(j+1) == "(" {
			return "", 0, false
		}
		return quote(ss.settings.get("session_authorization")), j, true
	case "current_catalog":
		if text(j+1) == "(" {
			return "", 0, false
		}
		return quote(ss.settings.db), j, true
	case "current_setting":
		if text(j+1) != "(" || j+2 >= len(toks) || toks[j+2].kind != pg_query.Token_SCONST || !strings.HasPrefix(toks[j+2].text, "'") {
			return "", 0, false
		}
		setting := strings.ReplaceAll(strings.Trim(toks[j+2].text, "'"), "''", "'")
		end, missingOK := j+3, false
		if text(end) == "," && (text(end+1) == "true" || text(end+1) == "false") {
			missingOK = text(end+1) == "true"
			end += 2
		}
		if text(end) != ")" {
			return "", 0, false
		}
		switch {
		case ss.settings.known(setting):
			return quote(ss.settings.get(setting)), end, true
		case missingOK:
			return "CAST(NULL AS text)", end, true
		}
	}
	return "", 0, false
}

// currentSchema is the first schema of DuckDB's search path (public when
// the file has it, as PostgreSQL's default search_path gives).
func (ss *session) currentSchema() string {
	if ss.schema == "" {
		ss.schema = "main"
		if rows, err := ss.duck.QueryContext(context.Background(), "SELECT current_schema()", nil); err == nil {
			v := make([]driver.Value, 1)
			if rows.Next(v) == nil {
				if s, ok := v[0].(string); ok {
					ss.schema = s
				}
			}
			rows.Close()
		}
	}
	return ss.schema
}
