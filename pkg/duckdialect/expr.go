// The allowlisted walk over expressions.

package duckdialect

import (
	"regexp"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// expr rewrites one expression and returns it or its replacement.
func (r *rewriter) expr(n *pg_query.Node) (*pg_query.Node, error) {
	if n == nil {
		return nil, nil
	}
	switch v := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		return n, r.columnRef(v.ColumnRef)
	case *pg_query.Node_AConst:
		return constant(n, v.AConst)
	case *pg_query.Node_ParamRef:
		return n, nil
	case *pg_query.Node_AExpr:
		return r.aExpr(n, v.AExpr)
	case *pg_query.Node_BoolExpr:
		return n, r.exprList(v.BoolExpr.Args)
	case *pg_query.Node_NullTest:
		arg, err := r.expr(v.NullTest.Arg)
		v.NullTest.Arg = paren(arg)
		return n, err
	case *pg_query.Node_BooleanTest:
		return r.booleanTest(v.BooleanTest)
	case *pg_query.Node_CaseExpr:
		return n, r.caseExpr(v.CaseExpr)
	case *pg_query.Node_CoalesceExpr:
		return n, r.exprList(v.CoalesceExpr.Args)
	case *pg_query.Node_MinMaxExpr:
		// GREATEST and LEAST ignore NULL arguments in both engines.
		return n, r.exprList(v.MinMaxExpr.Args)
	case *pg_query.Node_SubLink:
		return n, r.subLink(v.SubLink)
	case *pg_query.Node_TypeCast:
		return r.typeCast(v.TypeCast)
	case *pg_query.Node_FuncCall:
		return r.funcCall(v.FuncCall)
	case *pg_query.Node_SqlvalueFunction:
		return sqlValue(n, v.SqlvalueFunction)
	case *pg_query.Node_GroupingSet:
		return n, r.exprList(v.GroupingSet.Content)
	case *pg_query.Node_List: // a row of IN (...) values
		return n, r.exprList(v.List.Items)
	}
	return nil, unsupported("expression %s", nodeName(n))
}

// columnRef accepts column and star references.
func (r *rewriter) columnRef(c *pg_query.ColumnRef) error {
	for _, f := range c.Fields {
		if f.GetString_() == nil && f.GetAStar() == nil {
			return unsupported("column reference part %s", nodeName(f))
		}
	}
	return nil
}

// constant accepts literals whose DuckDB reading matches PostgreSQL's.
func constant(n *pg_query.Node, c *pg_query.A_Const) (*pg_query.Node, error) {
	if c.Isnull {
		return n, nil
	}
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Sval:
		if longFraction.MatchString(v.Sval.Sval) {
			// PostgreSQL rounds a time's seventh fractional digit, DuckDB
			// truncates it; the literal's type is unknown here.
			return nil, unsupported("time text with more than 6 fractional digits ('%s')", v.Sval.Sval)
		}
		return n, nil
	case *pg_query.A_Const_Ival, *pg_query.A_Const_Boolval:
		return n, nil
	case *pg_query.A_Const_Fval:
		return numericLiteral(v.Fval.Fval)
	}
	return nil, unsupported("bit-string literals")
}

// longFraction finds a time of day with more than 6 fractional digits
// (a RE2 pattern, also run by DuckDB on text cast to timestamp).
var longFraction = regexp.MustCompile(longFractionRE)

const longFractionRE = `[0-9]:[0-9]+[.][0-9]{7}`

// booleanTest keeps IS [NOT] TRUE/FALSE and spells IS [NOT] UNKNOWN as
// IS [NOT] NULL, which DuckDB's parser lacks.
func (r *rewriter) booleanTest(b *pg_query.BooleanTest) (*pg_query.Node, error) {
	arg, err := r.expr(b.Arg)
	if err != nil {
		return nil, err
	}
	arg = paren(arg)
	b.Arg = arg
	switch b.Booltesttype {
	case pg_query.BoolTestType_IS_UNKNOWN, pg_query.BoolTestType_IS_NOT_UNKNOWN:
		t := pg_query.NullTestType_IS_NULL
		if b.Booltesttype == pg_query.BoolTestType_IS_NOT_UNKNOWN {
			t = pg_query.NullTestType_IS_NOT_NULL
		}
		return &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{Arg: arg, Nulltesttype: t, Location: -1}}}, nil
	}
	return &pg_query.Node{Node: &pg_query.Node_BooleanTest{BooleanTest: b}}, nil
}

// caseExpr rewrites both CASE forms.
func (r *rewriter) caseExpr(c *pg_query.CaseExpr) error {
	var err error
	if c.Arg, err = r.exprOrNil(c.Arg); err != nil {
		return err
	}
	for _, w := range c.Args {
		cw := w.GetCaseWhen()
		if cw == nil {
			return unsupported("CASE item %s", nodeName(w))
		}
		if cw.Expr, err = r.expr(cw.Expr); err != nil {
			return err
		}
		if cw.Result, err = r.expr(cw.Result); err != nil {
			return err
		}
	}
	c.Defresult, err = r.exprOrNil(c.Defresult)
	return err
}

// subLink rewrites EXISTS, IN/ANY/ALL and scalar subqueries.
func (r *rewriter) subLink(s *pg_query.SubLink) error {
	switch s.SubLinkType {
	case pg_query.SubLinkType_EXISTS_SUBLINK, pg_query.SubLinkType_EXPR_SUBLINK:
	case pg_query.SubLinkType_ANY_SUBLINK, pg_query.SubLinkType_ALL_SUBLINK:
		if len(s.OperName) > 0 {
			name, err := names(s.OperName)
			if err != nil {
				return err
			}
			if len(name) != 1 || !comparison[name[0]] {
				return unsupported("operator %v with ANY/ALL", name)
			}
		}
		if s.Testexpr.GetRowExpr() != nil {
			return unsupported("row constructors with IN/ANY/ALL")
		}
		var err error
		if s.Testexpr, err = r.expr(s.Testexpr); err != nil {
			return err
		}
	default:
		return unsupported("%s subqueries", s.SubLinkType)
	}
	sel := s.Subselect.GetSelectStmt()
	if sel == nil {
		return unsupported("subquery %s", nodeName(s.Subselect))
	}
	return r.selectStmt(sel)
}

// comparison lists the operators that compare alike in both engines.
var comparison = map[string]bool{"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true}

// sqlValue accepts CURRENT_DATE and CURRENT_TIMESTAMP without precision.
func sqlValue(n *pg_query.Node, f *pg_query.SQLValueFunction) (*pg_query.Node, error) {
	switch f.Op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:
		return n, nil
	}
	return nil, unsupported("%s", f.Op)
}
