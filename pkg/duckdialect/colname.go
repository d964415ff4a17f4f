// PostgreSQL's names for unnamed select-list expressions.

package duckdialect

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// colName is the name PostgreSQL gives an unaliased select-list
// expression (its FigureColname rules); DuckDB would name it by its text,
// e.g. "sum(l_quantity)" where PostgreSQL says "sum".
func colName(n *pg_query.Node) string {
	name, _ := figure(n)
	return name
}

// figure returns a name and its strength: 2 for a real name, 1 for a
// weak one ("case"), 0 for none ("?column?").
func figure(n *pg_query.Node) (string, int) {
	if n == nil {
		return "?column?", 0
	}
	switch v := n.Node.(type) {
	case *pg_query.Node_ColumnRef:
		f := v.ColumnRef.Fields
		if s := f[len(f)-1].GetString_(); s != nil {
			return s.Sval, 2
		}
	case *pg_query.Node_FuncCall:
		f := v.FuncCall.Funcname
		if s := f[len(f)-1].GetString_(); s != nil {
			return s.Sval, 2
		}
	case *pg_query.Node_TypeCast:
		if name, s := figure(v.TypeCast.Arg); s == 2 {
			return name, 2
		}
		f := v.TypeCast.TypeName.Names
		if s := f[len(f)-1].GetString_(); s != nil {
			return s.Sval, 1
		}
	case *pg_query.Node_AExpr:
		if v.AExpr.Kind == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			return "nullif", 2
		}
	case *pg_query.Node_CaseExpr:
		if name, s := figure(v.CaseExpr.Defresult); s == 2 {
			return name, 2
		}
		return "case", 1
	case *pg_query.Node_CoalesceExpr:
		return "coalesce", 2
	case *pg_query.Node_MinMaxExpr:
		if v.MinMaxExpr.Op == pg_query.MinMaxOp_IS_LEAST {
			return "least", 2
		}
		return "greatest", 2
	case *pg_query.Node_SqlvalueFunction:
		switch v.SqlvalueFunction.Op {
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
			return "current_date", 2
		case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP:
			return "current_timestamp", 2
		}
	case *pg_query.Node_SubLink:
		switch v.SubLink.SubLinkType {
		case pg_query.SubLinkType_EXISTS_SUBLINK:
			return "exists", 2
		case pg_query.SubLinkType_ARRAY_SUBLINK:
			return "array", 2
		case pg_query.SubLinkType_EXPR_SUBLINK:
			sel := v.SubLink.Subselect.GetSelectStmt()
			for sel != nil && sel.Op != pg_query.SetOperation_SETOP_NONE {
				sel = sel.Larg
			}
			if sel != nil && len(sel.TargetList) > 0 {
				if rt := sel.TargetList[0].GetResTarget(); rt != nil {
					if rt.Name != "" {
						return rt.Name, 2
					}
					if name, s := figure(rt.Val); s > 0 {
						return name, 2
					}
				}
			}
		}
	}
	return "?column?", 0
}
