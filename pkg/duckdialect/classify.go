// Classifying statements as read-only queries or not.

package duckdialect

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/qpkit/qpkit/pkg/safesql"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
)

// IsQuery reports whether sql is one read-only query: SELECT, VALUES or
// WITH (without data-modifying parts, SELECT INTO or FOR UPDATE), TABLE,
// SHOW, or EXPLAIN of such a query. Everything else (INSERT, UPDATE,
// DELETE, MERGE, DDL, COPY, SET, transaction control, several statements)
// is not. A parse error is returned as *SyntaxError.
func IsQuery(sql string) (bool, error) {
	tree, err := parse(sql)
	if err != nil {
		return false, err
	}
	if len(tree.Stmts) != 1 {
		return false, nil
	}
	return isQueryNode(tree.Stmts[0].Stmt), nil
}

func isQueryNode(n *pg_query.Node) bool {
	switch {
	case n.GetSelectStmt() != nil:
		return isReadSelect(n.GetSelectStmt())
	case n.GetExplainStmt() != nil:
		return isQueryNode(n.GetExplainStmt().Query)
	case n.GetVariableShowStmt() != nil:
		return true
	}
	return false
}

// isReadSelect refuses SELECT INTO, locking clauses and CTEs that modify.
func isReadSelect(s *pg_query.SelectStmt) bool {
	if s == nil {
		return true
	}
	if s.IntoClause != nil || len(s.LockingClause) > 0 {
		return false
	}
	if s.WithClause != nil {
		for _, c := range s.WithClause.Ctes {
			cte := c.GetCommonTableExpr()
			if cte == nil || cte.Ctequery.GetSelectStmt() == nil || !isReadSelect(cte.Ctequery.GetSelectStmt()) {
				return false
			}
		}
	}
	return isReadSelect(s.Larg) && isReadSelect(s.Rarg)
}

// parse runs PostgreSQL's parser, turning its errors into *SyntaxError.
func parse(sql string) (*pg_query.ParseResult, error) {
	// libpg_query's recursion must not meet a tree deep enough to
	// overflow the stack (see safesql.CheckNesting).
	if r := safesql.CheckParseDepth(sql, 500, 8000); r != nil {
		return nil, &SyntaxError{Message: "statement is too complex: " + r.Reason, Position: r.Position + 1}
	}
	tree, err := pg_query.Parse(sql)
	if err != nil {
		var pe *parser.Error
		if errors.As(err, &pe) {
			return nil, &SyntaxError{Message: pe.Message, Position: pe.Cursorpos}
		}
		return nil, &SyntaxError{Message: err.Error()}
	}
	if err := pg15Numbers(sql); err != nil {
		return nil, err
	}
	return tree, nil
}

// newNumber finds text that may hold a number PostgreSQL 16 added to the
// grammar: 0x1F, 0o17, 0b101, 1_000.
var newNumber = regexp.MustCompile(`0[xXoObB]|[0-9]_[0-9]`)

// pg15Numbers rejects the numbers that pg_query's PostgreSQL 17 grammar
// reads but PostgreSQL 15, which the clients expect, rejects with
// "trailing junk after numeric literal". The scan (another cgo call) runs
// only for text that may hold one.
func pg15Numbers(sql string) error {
	if !newNumber.MatchString(sql) {
		return nil
	}
	res, err := pg_query.Scan(sql)
	if err != nil {
		return nil // the parser accepted it; nothing to add
	}
	for _, t := range res.Tokens {
		if t.Token != pg_query.Token_ICONST && t.Token != pg_query.Token_FCONST {
			continue
		}
		text := sql[t.Start:t.End]
		if strings.Contains(text, "_") || len(text) > 1 && text[0] == '0' && strings.ContainsAny(text[1:2], "xXoObB") {
			return &SyntaxError{
				Message:  fmt.Sprintf("trailing junk after numeric literal at or near %q", text),
				Position: utf8.RuneCountInString(sql[:t.Start]) + 1,
			}
		}
	}
	return nil
}
