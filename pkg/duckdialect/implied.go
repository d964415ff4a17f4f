// Single-column filters implied by an OR, which DuckDB's planner does not
// derive and PostgreSQL's does (src/backend/optimizer/util/orclauses.c).

package duckdialect

import (
	"math/big"
	"sort"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
)

// addImplied returns where with conjuncts added that its ORs imply. For a
// conjunct (A1 AND ...) OR (A2 AND ...) OR ..., a column that every arm
// compares with constants is limited to their union: c IN (every arm's
// values), or c >= the least of the arms' lower bounds and c <= the
// greatest of their upper bounds. A row for which the OR is true makes
// one arm true, so it passes the new conjuncts too: the answer cannot
// change. DuckDB pushes such a conjunct into the table's scan, so a join
// whose condition sits inside the OR's arms gets smaller inputs, where the
// OR alone only filters the join's output (TPC-H Q19: the part side of
// the join falls from all 200,000 rows to about 2,000, and the query
// takes about a third less time). A set that is the same in every arm is
// left out: DuckDB already takes such common conjuncts out of an OR.
func addImplied(where *pg_query.Node) *pg_query.Node {
	if where == nil {
		return nil
	}
	var extra []*pg_query.Node
	for _, c := range conjuncts(where) {
		if b := c.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_OR_EXPR && len(b.Args) > 1 {
			extra = append(extra, impliedBy(b.Args)...)
		}
	}
	if len(extra) == 0 {
		return where
	}
	return pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, append([]*pg_query.Node{where}, extra...), -1)
}

// conjuncts flattens nested ANDs.
func conjuncts(n *pg_query.Node) []*pg_query.Node {
	if b := n.GetBoolExpr(); b != nil && b.Boolop == pg_query.BoolExprType_AND_EXPR {
		var out []*pg_query.Node
		for _, a := range b.Args {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []*pg_query.Node{n}
}

// limit is what one arm of an OR says about one column.
type limit struct {
	values []*pg_query.Node // c = v or c IN (...): c is one of these
	lo, hi *pg_query.Node   // numeric constants: lo <= c, c <= hi
	loV    *big.Rat
	hiV    *big.Rat
}

// impliedBy returns the conjuncts the arms of an OR imply.
func impliedBy(arms []*pg_query.Node) []*pg_query.Node {
	var order []string // columns in the first arm's order: a stable text
	cols := map[string]*pg_query.ColumnRef{}
	per := make([]map[string]*limit, len(arms))
	for i, arm := range arms {
		per[i] = map[string]*limit{}
		for _, c := range conjuncts(arm) {
			col, lim := columnLimit(c)
			if col == nil {
				continue
			}
			key := colKey(col)
			if i == 0 {
				if _, seen := cols[key]; !seen {
					order = append(order, key)
				}
				cols[key] = col
			}
			per[i][key] = merge(per[i][key], lim)
		}
	}
	var out []*pg_query.Node
	for _, key := range order {
		lims := make([]*limit, len(arms))
		for i := range arms {
			if lims[i] = per[i][key]; lims[i] == nil {
				break
			}
		}
		if lims[len(lims)-1] == nil {
			continue // an arm that says nothing about the column
		}
		out = append(out, union(cols[key], lims)...)
	}
	return out
}

// union turns the arms' limits on col into conjuncts: an IN list when every
// arm gives values, else bounds that every arm gives.
func union(col *pg_query.ColumnRef, lims []*limit) []*pg_query.Node {
	allValues, same := true, true
	first := valueSet(lims[0].values)
	for _, l := range lims {
		if l.values == nil {
			allValues = false
			break
		}
		if valueSet(l.values) != first {
			same = false
		}
	}
	if allValues {
		if same {
			return nil
		}
		var list []*pg_query.Node
		seen := map[string]bool{}
		for _, l := range lims {
			for _, v := range l.values {
				if k := constKey(v); !seen[k] {
					seen[k] = true
					list = append(list, clone(v))
				}
			}
		}
		return []*pg_query.Node{pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_IN,
			[]*pg_query.Node{pg_query.MakeStrNode("=")}, colNode(col), pg_query.MakeListNode(list), -1)}
	}
	var out []*pg_query.Node
	var lo, hi *limit
	loAll, hiAll := true, true
	for _, l := range lims {
		if l.lo == nil {
			loAll = false
		} else if lo == nil || l.loV.Cmp(lo.loV) < 0 {
			lo = l
		}
		if l.hi == nil {
			hiAll = false
		} else if hi == nil || l.hiV.Cmp(hi.hiV) > 0 {
			hi = l
		}
	}
	if loAll {
		out = append(out, compare(">=", col, lo.lo))
	}
	if hiAll {
		out = append(out, compare("<=", col, hi.hi))
	}
	return out
}

// merge adds what another conjunct of the same arm says about a column.
// Any one of an arm's limits is implied by the arm; the tighter bound is
// kept.
func merge(a, b *limit) *limit {
	if a == nil {
		return b
	}
	if a.values == nil {
		a.values = b.values
	}
	if b.lo != nil && (a.lo == nil || b.loV.Cmp(a.loV) > 0) {
		a.lo, a.loV = b.lo, b.loV
	}
	if b.hi != nil && (a.hi == nil || b.hiV.Cmp(a.hiV) < 0) {
		a.hi, a.hiV = b.hi, b.hiV
	}
	return a
}

// columnLimit reads c = k, c IN (k, ...), c BETWEEN k1 AND k2 and c <, <=,
// >, >= k (either way round), with k constants; nil for anything else.
func columnLimit(n *pg_query.Node) (*pg_query.ColumnRef, *limit) {
	e := n.GetAExpr()
	if e == nil || len(e.Name) != 1 || e.Name[0].GetString_() == nil {
		return nil, nil
	}
	op := e.Name[0].GetString_().Sval
	switch e.Kind {
	case pg_query.A_Expr_Kind_AEXPR_IN:
		col, list := plainColumn(e.Lexpr), e.Rexpr.GetList()
		if col == nil || op != "=" || list == nil || len(list.Items) == 0 {
			return nil, nil
		}
		l := &limit{}
		for _, v := range list.Items {
			if !isConst(v) {
				return nil, nil
			}
			l.values = append(l.values, v)
		}
		numericBounds(l, list.Items)
		return col, l
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN:
		col, list := plainColumn(e.Lexpr), e.Rexpr.GetList()
		if col == nil || list == nil || len(list.Items) != 2 {
			return nil, nil
		}
		lo, okLo := numericConst(list.Items[0])
		hi, okHi := numericConst(list.Items[1])
		if !okLo || !okHi {
			return nil, nil
		}
		return col, &limit{lo: list.Items[0], loV: lo, hi: list.Items[1], hiV: hi}
	case pg_query.A_Expr_Kind_AEXPR_OP:
	default:
		return nil, nil
	}
	col, k := plainColumn(e.Lexpr), e.Rexpr
	if col == nil {
		col, k, op = plainColumn(e.Rexpr), e.Lexpr, flip[op]
	}
	if col == nil || k == nil || !isConst(k) {
		return nil, nil
	}
	switch op {
	case "=":
		l := &limit{values: []*pg_query.Node{k}}
		numericBounds(l, l.values)
		return col, l
	case ">", ">=", "<", "<=":
		v, ok := numericConst(k)
		if !ok {
			return nil, nil
		}
		if op[0] == '>' {
			return col, &limit{lo: k, loV: v}
		}
		return col, &limit{hi: k, hiV: v}
	}
	return nil, nil
}

// flip is each comparison read the other way round ("" for the others).
var flip = map[string]string{"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

// numericBounds sets l's bounds to the least and greatest of values when
// they are all numeric constants.
func numericBounds(l *limit, values []*pg_query.Node) {
	for _, v := range values {
		r, ok := numericConst(v)
		if !ok {
			l.lo, l.hi, l.loV, l.hiV = nil, nil, nil, nil
			return
		}
		if l.lo == nil || r.Cmp(l.loV) < 0 {
			l.lo, l.loV = v, r
		}
		if l.hi == nil || r.Cmp(l.hiV) > 0 {
			l.hi, l.hiV = v, r
		}
	}
}

// plainColumn is n as a column reference by name, without a star.
func plainColumn(n *pg_query.Node) *pg_query.ColumnRef {
	c := n.GetColumnRef()
	if c == nil || len(c.Fields) == 0 {
		return nil
	}
	for _, f := range c.Fields {
		if f.GetString_() == nil {
			return nil
		}
	}
	return c
}

func colKey(c *pg_query.ColumnRef) string {
	parts := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		parts[i] = f.GetString_().Sval
	}
	return strings.Join(parts, ".")
}

// isConst: a literal other than NULL, a cast of one (date '1995-01-01'),
// or numeric constant arithmetic (1 + 10).
func isConst(n *pg_query.Node) bool {
	if c := n.GetAConst(); c != nil {
		return !c.Isnull
	}
	if tc := n.GetTypeCast(); tc != nil {
		if c := tc.Arg.GetAConst(); c != nil {
			return !c.Isnull
		}
		return false
	}
	_, ok := numericConst(n)
	return ok
}

// numericConst evaluates an integer or decimal literal, or +, - and * of
// them, exactly.
func numericConst(n *pg_query.Node) (*big.Rat, bool) {
	if c := n.GetAConst(); c != nil && !c.Isnull {
		switch v := c.Val.(type) {
		case *pg_query.A_Const_Ival:
			return new(big.Rat).SetInt64(int64(v.Ival.Ival)), true
		case *pg_query.A_Const_Fval:
			return new(big.Rat).SetString(v.Fval.Fval)
		}
		return nil, false
	}
	e := n.GetAExpr()
	if e == nil || e.Kind != pg_query.A_Expr_Kind_AEXPR_OP || len(e.Name) != 1 || e.Name[0].GetString_() == nil || e.Rexpr == nil {
		return nil, false
	}
	r, ok := numericConst(e.Rexpr)
	if !ok {
		return nil, false
	}
	op := e.Name[0].GetString_().Sval
	if e.Lexpr == nil {
		if op == "-" {
			return r.Neg(r), true
		}
		return nil, false
	}
	l, ok := numericConst(e.Lexpr)
	if !ok {
		return nil, false
	}
	switch op {
	case "+":
		return l.Add(l, r), true
	case "-":
		return l.Sub(l, r), true
	case "*":
		return l.Mul(l, r), true
	}
	return nil, false
}

// constKey tells constants apart for the IN list: equal keys, equal
// constants of the same type.
func constKey(n *pg_query.Node) string {
	if r, ok := numericConst(n); ok {
		return "n:" + r.RatString()
	}
	b, err := proto.Marshal(clearLocations(clone(n)))
	if err != nil {
		return n.String()
	}
	return "p:" + string(b)
}

// valueSet is a text for a set of constants, the same for equal sets.
func valueSet(vs []*pg_query.Node) string {
	keys := make([]string, 0, len(vs))
	seen := map[string]bool{}
	for _, v := range vs {
		if k := constKey(v); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return strings.Join(keys, "\x00")
}

// clearLocations zeroes the source positions in a constant, so that the
// same constant written twice gives the same bytes.
func clearLocations(n *pg_query.Node) *pg_query.Node {
	if c := n.GetAConst(); c != nil {
		c.Location = 0
	}
	if tc := n.GetTypeCast(); tc != nil {
		tc.Location = 0
		if c := tc.Arg.GetAConst(); c != nil {
			c.Location = 0
		}
		if tc.TypeName != nil {
			tc.TypeName.Location = 0
		}
	}
	return n
}

func clone(n *pg_query.Node) *pg_query.Node { return proto.Clone(n).(*pg_query.Node) }

func colNode(c *pg_query.ColumnRef) *pg_query.Node {
	return &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: proto.Clone(c).(*pg_query.ColumnRef)}}
}

func compare(op string, col *pg_query.ColumnRef, k *pg_query.Node) *pg_query.Node {
	return pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_OP, []*pg_query.Node{pg_query.MakeStrNode(op)}, colNode(col), clone(k), -1)
}
