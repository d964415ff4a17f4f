// The allowlisted walk over query structure: SELECT, FROM, WITH, ORDER BY.

package duckdialect

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// rewriter walks one statement, rewriting nodes in place. Anything it does
// not know is refused.
type rewriter struct{}

// selectStmt rewrites a SELECT, VALUES or set operation.
func (r *rewriter) selectStmt(s *pg_query.SelectStmt) error {
	if s.IntoClause != nil {
		return unsupported("SELECT INTO")
	}
	if len(s.LockingClause) > 0 {
		return unsupported("FOR UPDATE/SHARE")
	}
	if s.GroupDistinct {
		return unsupported("GROUP BY DISTINCT")
	}
	if s.LimitOption == pg_query.LimitOption_LIMIT_OPTION_WITH_TIES {
		return unsupported("FETCH ... WITH TIES")
	}
	if s.WithClause != nil {
		if err := r.with(s.WithClause); err != nil {
			return err
		}
	}
	if s.Op != pg_query.SetOperation_SETOP_NONE {
		if err := r.selectStmt(s.Larg); err != nil {
			return err
		}
		if err := r.selectStmt(s.Rarg); err != nil {
			return err
		}
	}
	for i, d := range s.DistinctClause {
		if d == nil || d.Node == nil { // plain DISTINCT
			continue
		}
		n, err := r.expr(d)
		if err != nil {
			return err
		}
		s.DistinctClause[i] = n
	}
	for _, t := range s.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			return unsupported("select list item %s", nodeName(t))
		}
		if err := r.resTarget(rt); err != nil {
			return err
		}
	}
	for _, f := range s.FromClause {
		if err := r.fromItem(f); err != nil {
			return err
		}
	}
	var err error
	if s.WhereClause, err = r.exprOrNil(addImplied(s.WhereClause)); err != nil {
		return err
	}
	if err := r.exprList(s.GroupClause); err != nil {
		return err
	}
	if s.HavingClause, err = r.exprOrNil(s.HavingClause); err != nil {
		return err
	}
	for _, w := range s.WindowClause {
		wd := w.GetWindowDef()
		if wd == nil {
			return unsupported("window clause item %s", nodeName(w))
		}
		if err := r.windowDef(wd); err != nil {
			return err
		}
	}
	if len(s.ValuesLists) > 0 {
		if err := r.values(s); err != nil {
			return err
		}
	}
	if err := r.sortList(s.SortClause); err != nil {
		return err
	}
	if s.LimitCount, err = r.exprOrNil(s.LimitCount); err != nil {
		return err
	}
	if s.LimitOffset, err = r.exprOrNil(s.LimitOffset); err != nil {
		return err
	}
	return nil
}

// values rewrites VALUES rows and names the columns column1, column2, ...
// as PostgreSQL does (DuckDB says col0, col1, ...): the statement becomes
// SELECT * FROM (VALUES ...) AS "*VALUES*"(column1, ...), keeping its
// ORDER BY and LIMIT outside.
func (r *rewriter) values(s *pg_query.SelectStmt) error {
	width := -1
	for _, row := range s.ValuesLists {
		l := row.GetList()
		if l == nil {
			return unsupported("VALUES row %s", nodeName(row))
		}
		if err := r.exprList(l.Items); err != nil {
			return err
		}
		if width == -1 {
			width = len(l.Items)
		}
	}
	alias := &pg_query.Alias{Aliasname: "*VALUES*"}
	for i := 1; i <= width; i++ {
		alias.Colnames = append(alias.Colnames, pg_query.MakeStrNode(fmt.Sprintf("column%d", i)))
	}
	inner := &pg_query.SelectStmt{ValuesLists: s.ValuesLists}
	s.ValuesLists = nil
	s.TargetList = []*pg_query.Node{pg_query.MakeResTargetNodeWithVal(pg_query.MakeColumnRefNode([]*pg_query.Node{pg_query.MakeAStarNode()}, -1), -1)}
	s.FromClause = []*pg_query.Node{{Node: &pg_query.Node_RangeSubselect{RangeSubselect: &pg_query.RangeSubselect{
		Subquery: &pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: inner}},
		Alias:    alias,
	}}}}
	return nil
}

// resTarget rewrites one select-list item and names it the way PostgreSQL
// does, since DuckDB names unnamed expressions by their text.
func (r *rewriter) resTarget(rt *pg_query.ResTarget) error {
	if len(rt.Indirection) > 0 {
		return unsupported("indirection in a select list")
	}
	if cr := rt.Val.GetColumnRef(); cr != nil {
		return r.columnRef(cr) // a column keeps its own name in both engines
	}
	if rt.Name == "" {
		rt.Name = colName(rt.Val)
	}
	n, err := r.expr(rt.Val)
	if err != nil {
		return err
	}
	rt.Val = n
	return nil
}

// with rewrites WITH [RECURSIVE] and its CTEs, which must be queries.
func (r *rewriter) with(w *pg_query.WithClause) error {
	for _, c := range w.Ctes {
		cte := c.GetCommonTableExpr()
		if cte == nil {
			return unsupported("WITH item %s", nodeName(c))
		}
		if cte.SearchClause != nil || cte.CycleClause != nil {
			return unsupported("SEARCH/CYCLE in WITH RECURSIVE")
		}
		sel := cte.Ctequery.GetSelectStmt()
		if sel == nil {
			return unsupported("data-modifying statement %s in WITH", nodeName(cte.Ctequery))
		}
		if err := r.selectStmt(sel); err != nil {
			return err
		}
	}
	return nil
}

// fromItem rewrites a table, subquery or join in FROM.
func (r *rewriter) fromItem(n *pg_query.Node) error {
	switch {
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		if !rv.Inh {
			return unsupported("ONLY")
		}
		if rv.Catalogname != "" {
			return unsupported("database-qualified table names")
		}
		// DuckDB has its own pg_catalog and information_schema with its own
		// contents; answering catalog queries from them would be wrong.
		if rv.Schemaname == "pg_catalog" || rv.Schemaname == "information_schema" || strings.HasPrefix(rv.Relname, "pg_") {
			return unsupported("system catalog %s (qpanalytics serves the copied tables only)", rv.Relname)
		}
		return nil
	case n.GetRangeSubselect() != nil:
		rs := n.GetRangeSubselect()
		sel := rs.Subquery.GetSelectStmt()
		if sel == nil {
			return unsupported("subquery %s in FROM", nodeName(rs.Subquery))
		}
		return r.selectStmt(sel)
	case n.GetJoinExpr() != nil:
		j := n.GetJoinExpr()
		switch j.Jointype {
		case pg_query.JoinType_JOIN_INNER, pg_query.JoinType_JOIN_LEFT, pg_query.JoinType_JOIN_FULL, pg_query.JoinType_JOIN_RIGHT:
		default:
			return unsupported("join type %s", j.Jointype)
		}
		if j.JoinUsingAlias != nil {
			return unsupported("JOIN USING ... AS alias")
		}
		if err := r.fromItem(j.Larg); err != nil {
			return err
		}
		if err := r.fromItem(j.Rarg); err != nil {
			return err
		}
		var err error
		j.Quals, err = r.exprOrNil(j.Quals)
		return err
	}
	return unsupported("%s in FROM", nodeName(n))
}

// sortList rewrites ORDER BY items; NULLS FIRST/LAST pass through and the
// default comes from SessionSQL's default_null_order.
func (r *rewriter) sortList(list []*pg_query.Node) error {
	for _, s := range list {
		sb := s.GetSortBy()
		if sb == nil {
			return unsupported("ORDER BY item %s", nodeName(s))
		}
		if sb.SortbyDir == pg_query.SortByDir_SORTBY_USING {
			return unsupported("ORDER BY ... USING")
		}
		n, err := r.expr(sb.Node)
		if err != nil {
			return err
		}
		sb.Node = n
	}
	return nil
}

// windowDef rewrites a window's partitioning, ordering and frame offsets.
func (r *rewriter) windowDef(w *pg_query.WindowDef) error {
	if err := r.exprList(w.PartitionClause); err != nil {
		return err
	}
	if err := r.sortList(w.OrderClause); err != nil {
		return err
	}
	var err error
	if w.StartOffset, err = r.exprOrNil(w.StartOffset); err != nil {
		return err
	}
	w.EndOffset, err = r.exprOrNil(w.EndOffset)
	return err
}

// exprList rewrites a list of expressions in place.
func (r *rewriter) exprList(list []*pg_query.Node) error {
	for i, n := range list {
		m, err := r.expr(n)
		if err != nil {
			return err
		}
		list[i] = m
	}
	return nil
}

func (r *rewriter) exprOrNil(n *pg_query.Node) (*pg_query.Node, error) {
	if n == nil {
		return nil, nil
	}
	return r.expr(n)
}
