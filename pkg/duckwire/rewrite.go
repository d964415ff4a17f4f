// Rewrites before translation: session functions become literals, catalog views lose the metadata schema.

package duckwire

import (
	"regexp"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

var reCatalogView = regexp.MustCompile(`(?i)\b(information_schema\.(?:tables|columns|views|schemata)|(?:pg_catalog\.)?(?:pg_namespace|pg_class|pg_tables|pg_views))\b(\.)?(\s+(?:AS\s+)?([A-Za-z_]\w*))?`)

// FullVersion is what version() returns.
const FullVersion = "PostgreSQL " + ServerVersion + " on x86_64-pc-linux-gnu, served by qpanalytics from DuckDB"

// rewriteFunctions replaces version(), current_setting('known') and the
// session information functions with the session's values, as literals,
// and hides the metadata schema from the catalog views, before the dialect
// and DuckDB see the query.
func (ss *session) rewriteFunctions(sql string) string {
	lower := strings.ToLower(sql)
	if strings.Contains(lower, "version") || strings.Contains(lower, "current_") ||
		strings.Contains(lower, "session_user") || strings.Contains(lower, "pg_backend_pid") || strings.Contains(lower, "pg_is_in_recovery") {
		sql = ss.rewriteSessionCalls(sql)
	}
	if strings.Contains(lower, "information_schema.") || strings.Contains(lower, "pg_") {
		sql = outsideQuotes(sql, reCatalogView, hideMetaSchema)
	}
	return sql
}

// filters keep the metadata schema out of each catalog view.
var metaFilters = map[string]string{
	"tables": "table_schema", "columns": "table_schema", "views": "table_schema", "schemata": "schema_name",
	"pg_namespace": "nspname", "pg_tables": "schemaname", "pg_views": "schemaname",
}

// hideMetaSchema turns a catalog view reference into a filtered subquery
// under the same name or alias.
func hideMetaSchema(m string) string {
	sub := reCatalogView.FindStringSubmatch(m)
	if sub[2] != "" { // a qualified column: pg_namespace.oid
		return m
	}
	view, alias, rest := sub[1], sub[4], ""
	if alias != "" && isKeyword(alias) {
		rest, alias = sub[3], ""
	}
	base := strings.ToLower(view[strings.LastIndexByte(view, '.')+1:])
	if alias == "" {
		alias = base
	}
	var cond string
	if col, ok := metaFilters[base]; ok {
		cond = col + " <> '" + MetaSchema + "'"
	} else { // pg_class
		cond = "relnamespace NOT IN (SELECT oid FROM pg_catalog.pg_namespace WHERE nspname = '" + MetaSchema + "')"
	}
	return "(SELECT * FROM " + view + " WHERE " + cond + ") AS " + alias + rest
}

func isKeyword(w string) bool {
	switch strings.ToLower(w) {
	case "where", "join", "left", "right", "inner", "outer", "full", "cross", "natural", "on", "using", "order",
		"group", "having", "limit", "offset", "fetch", "union", "except", "intersect", "window", "as", "for", "lateral":
		return true
	}
	return false
}

// outsideQuotes applies re's replacement only to the parts of sql outside
// string constants (dollar-quoted and E” ones too), quoted identifiers and
// comments, as PostgreSQL's scanner finds them; when the text does not
// scan, outside '...' and "..." only.
func outsideQuotes(sql string, re *regexp.Regexp, repl func(string) string) string {
	spans, ok := protectedSpans(sql)
	if !ok {
		return outsideSimpleQuotes(sql, re, repl)
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(re.ReplaceAllStringFunc(sql[last:sp[0]], repl))
		b.WriteString(sql[sp[0]:sp[1]])
		last = sp[1]
	}
	b.WriteString(re.ReplaceAllStringFunc(sql[last:], repl))
	return b.String()
}

// protectedSpans lists the byte ranges of sql's string constants, quoted
// identifiers and comments.
func protectedSpans(sql string) ([][2]int, bool) {
	scan, err := pg_query.Scan(sql)
	if err != nil {
		return nil, false
	}
	var spans [][2]int
	for _, t := range scan.GetTokens() {
		a, z := int(t.GetStart()), int(t.GetEnd())
		switch t.GetToken() {
		case pg_query.Token_SCONST, pg_query.Token_USCONST, pg_query.Token_BCONST, pg_query.Token_XCONST,
			pg_query.Token_SQL_COMMENT, pg_query.Token_C_COMMENT:
		case pg_query.Token_UIDENT: // U&"..."
		case pg_query.Token_IDENT:
			if a >= len(sql) || sql[a] != '"' {
				continue // an unquoted name (u, users) is not protected
			}
		default:
			continue
		}
		spans = append(spans, [2]int{a, z})
	}
	return spans, true
}

// outsideSimpleQuotes is outsideQuotes for text the scanner refuses.
func outsideSimpleQuotes(sql string, re *regexp.Regexp, repl func(string) string) string {
	var b strings.Builder
	start := 0
	for i := 0; i < len(sql); i++ {
		q := sql[i]
		if q != '\'' && q != '"' {
			continue
		}
		b.WriteString(re.ReplaceAllStringFunc(sql[start:i], repl))
		j := i + 1
		for j < len(sql) {
			if sql[j] == q {
				if j+1 < len(sql) && sql[j+1] == q {
					j += 2
					continue
				}
				break
			}
			j++
		}
		if j >= len(sql) {
			j = len(sql) - 1
		}
		b.WriteString(sql[i : j+1])
		start, i = j+1, j
	}
	b.WriteString(re.ReplaceAllStringFunc(sql[start:], repl))
	return b.String()
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
