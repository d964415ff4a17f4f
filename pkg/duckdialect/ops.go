// Operators: arithmetic with PostgreSQL's division errors, comparisons,
// LIKE with PostgreSQL's escape character and regular-expression matches.

package duckdialect

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// sameOps are binary or prefix operators whose DuckDB meaning matches
// PostgreSQL's on the types both engines share (integer "/" given
// SessionSQL's integer_division).
var sameOps = map[string]bool{
	"+": true, "-": true, "*": true,
	"=": true, "<>": true, "<": true, ">": true, "<=": true, ">=": true,
}

// likeOps maps PostgreSQL's LIKE operators to DuckDB's functions that take
// an explicit escape character.
var likeOps = map[string]string{
	"~~": "like_escape", "!~~": "not_like_escape",
	"~~*": "ilike_escape", "!~~*": "not_ilike_escape",
}

// aExpr rewrites an operator expression.
func (r *rewriter) aExpr(n *pg_query.Node, e *pg_query.A_Expr) (*pg_query.Node, error) {
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_SIMILAR:
		return nil, unsupported("SIMILAR TO")
	case pg_query.A_Expr_Kind_AEXPR_OP_ANY, pg_query.A_Expr_Kind_AEXPR_OP_ALL:
		return nil, unsupported("ANY/ALL over arrays")
	}
	var err error
	if e.Lexpr, err = r.exprOrNil(e.Lexpr); err != nil {
		return nil, err
	}
	if esc := likeEscape(e); esc != nil {
		// LIKE ... ESCAPE x arrives as like_escape(pattern, x).
		if err := r.exprList(esc.Args); err != nil {
			return nil, err
		}
	} else if e.Rexpr, err = r.exprOrNil(e.Rexpr); err != nil {
		return nil, err
	}
	name := opName(e)
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		if e.Lexpr == nil && name != "-" && name != "+" {
			return nil, unsupported("prefix operator %s", name)
		}
		switch {
		case name == "||":
			if numberConst(e.Lexpr) && numberConst(e.Rexpr) {
				return nil, unsupported("|| of two numbers (PostgreSQL has no such operator)")
			}
			e.Lexpr, e.Rexpr = concatText(e.Lexpr), concatText(e.Rexpr)
			return n, nil
		case comparison[name]:
			return n, paddedLiteral(e.Lexpr, e.Rexpr)
		case sameOps[name]:
			return n, nil
		case name == "^":
			// as power(): PostgreSQL errors where DuckDB returns an
			// infinity or NaN (0 ^ -1, (-8) ^ 0.5, 10 ^ 400)
			return finite(r, &pg_query.FuncCall{Funcname: []*pg_query.Node{pg_query.MakeStrNode("power")}, Args: []*pg_query.Node{e.Lexpr, e.Rexpr}})
		case name == "/":
			e.Rexpr = nonZero(e.Lexpr, e.Rexpr)
			return n, nil
		case name == "%":
			g, err := noFloatMod(e.Lexpr, e.Rexpr, nonZero(e.Lexpr, e.Rexpr))
			if err != nil {
				return nil, err
			}
			e.Rexpr = g
			return n, nil
		case likeOps[name] != "":
			return like(n, e, name)
		case regexOps[name]:
			return regexMatch(e, name)
		}
		return nil, unsupported("operator %s", name)
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT,
		pg_query.A_Expr_Kind_AEXPR_NULLIF, pg_query.A_Expr_Kind_AEXPR_IN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN:
		if err := paddedLiteral(e.Lexpr, e.Rexpr); err != nil {
			return nil, err
		}
		parenOperands(e)
		return n, nil
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		m, err := like(n, e, name)
		if m == n {
			parenOperands(e)
		}
		return m, err
	}
	return nil, unsupported("%s", e.Kind)
}

// parenOperands parenthesizes the operands (and BETWEEN's bounds) that
// the deparser writes bare; see paren.
func parenOperands(e *pg_query.A_Expr) {
	e.Lexpr = paren(e.Lexpr)
	if l := e.Rexpr.GetList(); l != nil {
		for i, x := range l.Items {
			l.Items[i] = paren(x)
		}
	} else if e.Rexpr.GetSubLink() == nil {
		e.Rexpr = paren(e.Rexpr)
	}
}

// paddedLiteral refuses comparisons with a string literal that ends in a
// space: against a char(n) column PostgreSQL ignores trailing spaces, and
// the copy stores char(n) as varchar, where they count. Without the
// column's type the two cannot be told apart.
func paddedLiteral(operands ...*pg_query.Node) error {
	for _, o := range operands {
		if l := o.GetList(); l != nil {
			if err := paddedLiteral(l.Items...); err != nil {
				return err
			}
			continue
		}
		if s, ok := constString(o); ok && strings.HasSuffix(s, " ") {
			return unsupported("comparing with a string literal that ends in spaces ('%s')", s)
		}
	}
	return nil
}

// nonZero guards the divisor d of x: PostgreSQL fails on division by
// zero where DuckDB returns NULL, but only for a dividend that is not
// NULL (NULL / 0 is NULL: the operators are strict). Nonzero literals
// need no guard. The NULL test repeats x, so a chain of divisions would
// double at each step; a dividend over maxRepeated bytes keeps the
// plain guard, which also raises the error for NULL / 0 (an error, not
// a wrong answer).
func nonZero(x, d *pg_query.Node) *pg_query.Node {
	if c := d.GetAConst(); c != nil && !c.Isnull {
		if i := c.GetIval(); i != nil && i.Ival != 0 {
			return d
		}
		if f := c.GetFval(); f != nil && strings.ContainsAny(f.Fval, "123456789") {
			return d
		}
	}
	zero := op("=", d, intConst(0))
	if c := x.GetAConst(); (c == nil || c.Isnull) && proto.Size(x) <= maxRepeated {
		notNull := &pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{Arg: paren(x), Nulltesttype: pg_query.NullTestType_IS_NOT_NULL, Location: -1}}}
		zero = pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, []*pg_query.Node{zero, notNull}, -1)
	}
	return caseWhen(zero, raise("division by zero"), d)
}

// maxRepeated bounds the size (protobuf bytes) of an expression that
// nonZero repeats.
const maxRepeated = 1024

// noFloatMod returns the guarded divisor g of x % d (or mod(x, d)), or
// a refusal when x or d is a cast to double precision or real:
// PostgreSQL has % and mod() for integers and numeric only, DuckDB also
// for doubles. Nothing else is tested: DuckDB computes some of
// PostgreSQL's numeric results as doubles (division of decimals, avg of
// integers, extract), also as a subquery's or CTE's columns, so a test
// of the type at run time would refuse valid queries; the % of a double
// precision column is answered (docs: known differences).
func noFloatMod(x, d, g *pg_query.Node) (*pg_query.Node, error) {
	if castToFloat(x) || castToFloat(d) {
		return nil, unsupported("%% and mod() of double precision or real (they do not exist in PostgreSQL)")
	}
	return g, nil
}

// castToFloat: x is a cast to double precision or real.
func castToFloat(x *pg_query.Node) bool {
	tc := x.GetTypeCast()
	if tc == nil || tc.TypeName == nil || len(tc.TypeName.Names) == 0 {
		return false
	}
	switch tc.TypeName.Names[len(tc.TypeName.Names)-1].GetString_().GetSval() {
	case "float4", "float8", "real", "double", "float":
		return true
	}
	return false
}

// like rewrites LIKE and ILIKE. PostgreSQL's default escape character is
// the backslash; DuckDB has none, so a pattern that may hold a backslash
// goes through DuckDB's *_escape functions with an explicit '\'.
func like(n *pg_query.Node, e *pg_query.A_Expr, name string) (*pg_query.Node, error) {
	fn := likeOps[name]
	if fn == "" {
		return nil, unsupported("operator %s", name)
	}
	if fc := likeEscape(e); fc != nil {
		return call(fn, e.Lexpr, fc.Args[0], fc.Args[1]), nil
	}
	if p, ok := constString(e.Rexpr); ok && !strings.Contains(p, `\`) {
		return n, nil // no escape character: plain LIKE, which DuckDB optimizes
	}
	return call(fn, e.Lexpr, e.Rexpr, strConst(`\`)), nil
}

// likeEscape returns the like_escape(pattern, escape) call PostgreSQL's
// parser makes of LIKE ... ESCAPE, or nil.
func likeEscape(e *pg_query.A_Expr) *pg_query.FuncCall {
	if e.Kind != pg_query.A_Expr_Kind_AEXPR_LIKE && e.Kind != pg_query.A_Expr_Kind_AEXPR_ILIKE {
		return nil
	}
	fc := e.Rexpr.GetFuncCall()
	if fc == nil || len(fc.Args) != 2 {
		return nil
	}
	if name, _ := funcName(fc.Funcname); name != "like_escape" {
		return nil
	}
	return fc
}

// numberConst reports a numeric literal (after the rewrite: a constant,
// or a cast of one to DECIMAL).
func numberConst(n *pg_query.Node) bool {
	if tc := n.GetTypeCast(); tc != nil {
		n = tc.Arg
	}
	c := n.GetAConst()
	return c != nil && (c.GetIval() != nil || c.GetFval() != nil)
}
