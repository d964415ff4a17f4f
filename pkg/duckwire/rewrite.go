// Rewrites before translation: session functions become literals, catalog views lose the metadata schema.

package duckwire

import (
	"regexp"
	"strconv"
	"strings"
)

var (
	reVersion        = regexp.MustCompile(`(?i)\b(pg_catalog\.)?version\(\s*\)`)
	reCurrentSetting = regexp.MustCompile(`(?i)\b(pg_catalog\.)?current_setting\(\s*'([^']+)'\s*(,\s*(true|false)\s*)?\)`)
	reSessionFunc    = regexp.MustCompile(`(?i)\b(?:pg_catalog\.)?(current_database|current_schema|pg_backend_pid|pg_is_in_recovery|current_catalog)\(\s*\)|\b(current_user|session_user|current_role|current_catalog)\b`)
	reCatalogView    = regexp.MustCompile(`(?i)\b(information_schema\.(?:tables|columns|views|schemata)|(?:pg_catalog\.)?(?:pg_namespace|pg_class|pg_tables|pg_views))\b(\.)?(\s+(?:AS\s+)?([A-Za-z_]\w*))?`)
)

// FullVersion is what version() returns.
const FullVersion = "PostgreSQL " + ServerVersion + " on x86_64-pc-linux-gnu, served by qpanalytics from DuckDB"

// rewriteFunctions replaces version(), current_setting('known') and the
// session information functions with the session's values, as literals,
// and hides the metadata schema from the catalog views, before the dialect
// and DuckDB see the query.
func (ss *session) rewriteFunctions(sql string) string {
	lower := strings.ToLower(sql)
	if strings.Contains(lower, "version(") {
		sql = outsideQuotes(sql, reVersion, func(string) string { return quote(FullVersion) })
	}
	if strings.Contains(lower, "current_setting(") {
		sql = reCurrentSetting.ReplaceAllStringFunc(sql, func(m string) string {
			name := reCurrentSetting.FindStringSubmatch(m)[2]
			if !ss.settings.known(name) {
				return m
			}
			return quote(ss.settings.get(name))
		})
	}
	if strings.Contains(lower, "current_") || strings.Contains(lower, "session_user") || strings.Contains(lower, "pg_") {
		sql = outsideQuotes(sql, reSessionFunc, func(m string) string {
			switch strings.ToLower(strings.TrimPrefix(strings.ToLower(strings.SplitN(m, "(", 2)[0]), "pg_catalog.")) {
			case "current_database", "current_catalog":
				return quote(ss.settings.db)
			case "current_schema":
				return quote("main")
			case "pg_backend_pid":
				return strconv.FormatUint(uint64(ss.key.PID), 10)
			case "pg_is_in_recovery":
				return "false"
			}
			return quote(ss.settings.get("session_authorization"))
		})
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
// string literals and quoted identifiers.
func outsideQuotes(sql string, re *regexp.Regexp, repl func(string) string) string {
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
