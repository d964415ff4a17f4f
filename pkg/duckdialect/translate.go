// Translate: parse, rewrite, deparse.

package duckdialect

import (
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// Translate turns one PostgreSQL-dialect query into DuckDB SQL that gives
// the same answer on a connection prepared with SessionSQL. A statement
// that is not one read-only query, or uses a construct without a faithful
// translation, returns an *UnsupportedError; one PostgreSQL cannot parse
// returns a *SyntaxError. EXPLAIN [ANALYZE] of a query is translated to
// DuckDB's EXPLAIN of the translated query (DuckDB's plan, not
// PostgreSQL's). Results are cached by statement text, so repeating a
// statement costs a map lookup. It is safe for concurrent use.
func Translate(sql string) (string, error) { return cachedTranslate(sql) }

// translate is Translate without the cache.
func translate(sql string) (string, error) {
	tree, err := parse(sql)
	if err != nil {
		return "", err
	}
	if len(tree.Stmts) != 1 {
		return "", unsupported("%d statements in one query string (send one at a time)", len(tree.Stmts))
	}
	stmt := tree.Stmts[0].Stmt
	prefix := ""
	if ex := stmt.GetExplainStmt(); ex != nil {
		p, err := explainPrefix(ex)
		if err != nil {
			return "", err
		}
		prefix, stmt = p, ex.Query
	}
	sel := stmt.GetSelectStmt()
	if sel == nil {
		return "", unsupported("statement %s (only queries are served)", nodeName(stmt))
	}
	if err := (&rewriter{}).selectStmt(sel); err != nil {
		return "", err
	}
	tree.Stmts[0] = &pg_query.RawStmt{Stmt: stmt}
	out, err := pg_query.Deparse(tree)
	if err != nil {
		return "", fmt.Errorf("deparse translated query: %w", err)
	}
	return prefix + out, nil
}

// explainPrefix accepts EXPLAIN and EXPLAIN ANALYZE without other options.
func explainPrefix(ex *pg_query.ExplainStmt) (string, error) {
	prefix := "EXPLAIN "
	for _, o := range ex.Options {
		d := o.GetDefElem()
		if d == nil || d.Defname != "analyze" || (d.Arg != nil && !isTrueArg(d.Arg)) {
			return "", unsupported("EXPLAIN options other than ANALYZE")
		}
		prefix = "EXPLAIN ANALYZE "
	}
	return prefix, nil
}

func isTrueArg(n *pg_query.Node) bool {
	if s := n.GetString_(); s != nil {
		return s.Sval == "true" || s.Sval == "on"
	}
	if b := n.GetBoolean(); b != nil {
		return b.Boolval
	}
	return false
}
