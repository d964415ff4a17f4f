// Small constructors and inspectors for parse-tree nodes.

package duckdialect

import (
	"fmt"
	"reflect"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// nodeName is a node's type name for error messages, e.g. "InsertStmt".
func nodeName(n *pg_query.Node) string {
	if n == nil || n.Node == nil {
		return "empty"
	}
	t := reflect.TypeOf(n.Node).Elem().Name() // e.g. Node_InsertStmt
	return strings.TrimPrefix(t, "Node_")
}

// call builds a plain function call name(args...).
func call(name string, args ...*pg_query.Node) *pg_query.Node {
	n := pg_query.MakeFuncCallNode([]*pg_query.Node{pg_query.MakeStrNode(name)}, args, -1)
	n.GetFuncCall().Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
	return n
}

// strConst builds a string literal.
func strConst(s string) *pg_query.Node { return pg_query.MakeAConstStrNode(s, -1) }

// intConst builds an integer literal.
func intConst(v int64) *pg_query.Node { return pg_query.MakeAConstIntNode(v, -1) }

// numConst builds a numeric literal from its text, e.g. "0.000001".
func numConst(s string) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{
		Val: &pg_query.A_Const_Fval{Fval: &pg_query.Float{Fval: s}}, Location: -1}}}
}

// op builds a binary operator expression.
func op(name string, l, r *pg_query.Node) *pg_query.Node {
	return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(name)}, l, r, -1)
}

// not negates a boolean expression.
func not(n *pg_query.Node) *pg_query.Node {
	return pg_query.MakeBoolExprNode(pg_query.BoolExprType_NOT_EXPR, []*pg_query.Node{n}, -1)
}

// cast builds CAST(n AS typ) with a DuckDB type name and optional typmods.
func cast(n *pg_query.Node, typ string, mods ...int64) *pg_query.Node {
	tn := &pg_query.TypeName{Names: []*pg_query.Node{pg_query.MakeStrNode(typ)}, Typemod: -1, Location: -1}
	for _, m := range mods {
		tn.Typmods = append(tn.Typmods, intConst(m))
	}
	return &pg_query.Node{Node: &pg_query.Node_TypeCast{TypeCast: &pg_query.TypeCast{Arg: n, TypeName: tn, Location: -1}}}
}

// caseWhen builds CASE WHEN cond THEN then ELSE els END.
func caseWhen(cond, then, els *pg_query.Node) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_CaseExpr{CaseExpr: &pg_query.CaseExpr{
		Args:      []*pg_query.Node{pg_query.MakeCaseWhenNode(cond, then, -1)},
		Defresult: els,
		Location:  -1,
	}}}
}

// raise builds a DuckDB error(msg) call, which fails the query when it is
// evaluated.
func raise(msg string) *pg_query.Node { return call("error", strConst(msg)) }

// names returns a qualified name list as strings.
func names(list []*pg_query.Node) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, n := range list {
		s := n.GetString_()
		if s == nil {
			return nil, unsupported("name part %s", nodeName(n))
		}
		out = append(out, s.Sval)
	}
	return out, nil
}

// funcName returns a function's name without a pg_catalog qualifier;
// other schemas are refused.
func funcName(list []*pg_query.Node) (string, error) {
	parts, err := names(list)
	if err != nil {
		return "", err
	}
	switch {
	case len(parts) == 1:
		return parts[0], nil
	case len(parts) == 2 && parts[0] == "pg_catalog":
		return parts[1], nil
	}
	return "", unsupported("function %s", strings.Join(parts, "."))
}

// constString returns the value of a string literal.
func constString(n *pg_query.Node) (string, bool) {
	if c := n.GetAConst(); c != nil && !c.Isnull {
		if s := c.GetSval(); s != nil {
			return s.Sval, true
		}
	}
	return "", false
}

// constInt returns the value of an integer literal, including a negated one.
func constInt(n *pg_query.Node) (int64, bool) {
	if c := n.GetAConst(); c != nil && !c.Isnull {
		if i := c.GetIval(); i != nil {
			return int64(i.Ival), true
		}
		return 0, false
	}
	if e := n.GetAExpr(); e != nil && e.Lexpr == nil && e.Kind == pg_query.A_Expr_Kind_AEXPR_OP && opName(e) == "-" {
		if v, ok := constInt(e.Rexpr); ok {
			return -v, true
		}
	}
	return 0, false
}

// opName is an operator's unqualified name.
func opName(e *pg_query.A_Expr) string {
	if len(e.Name) == 0 {
		return ""
	}
	if s := e.Name[len(e.Name)-1].GetString_(); s != nil {
		if len(e.Name) == 1 {
			return s.Sval
		}
		return fmt.Sprintf("OPERATOR(%d parts)", len(e.Name))
	}
	return ""
}

// paren puts an operand that is itself an operator expression (AND, OR,
// NOT, IS tests, A_Expr) in parentheses. pg_query's deparser leaves them
// out under IS [NOT] NULL, IS NOT DISTINCT FROM, IN, BETWEEN and LIKE,
// where the operand can bind looser than its parent: "(a OR b) IS NULL"
// would come out as "a OR b IS NULL", a OR (b IS NULL). A one-element
// implicit row is deparsed as "(x)", which both engines read as x.
func paren(n *pg_query.Node) *pg_query.Node {
	switch n.GetNode().(type) {
	case *pg_query.Node_BoolExpr, *pg_query.Node_NullTest, *pg_query.Node_BooleanTest, *pg_query.Node_AExpr:
		return &pg_query.Node{Node: &pg_query.Node_RowExpr{RowExpr: &pg_query.RowExpr{
			Args: []*pg_query.Node{n}, RowFormat: pg_query.CoercionForm_COERCE_IMPLICIT_CAST, Location: -1}}}
	}
	return n
}
