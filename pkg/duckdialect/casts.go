// Type casts: PostgreSQL type names to DuckDB's, and the casts whose
// results differ between the engines.

package duckdialect

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// sameTypes maps PostgreSQL type names (as the parser stores them) that
// need no typmod to the DuckDB type with the same values and casts.
var sameTypes = map[string]string{
	"int2": "smallint", "int4": "integer", "int8": "bigint",
	"float4": "real", "float8": "double",
	"bool": "boolean", "date": "date",
	"timestamp": "timestamp", "timestamptz": "timestamptz",
}

// typeCast rewrites x::type and CAST(x AS type).
func (r *rewriter) typeCast(tc *pg_query.TypeCast) (*pg_query.Node, error) {
	tn := tc.TypeName
	if tn.Setof || tn.PctType || len(tn.ArrayBounds) > 0 {
		return nil, unsupported("array, SETOF or %%TYPE casts")
	}
	parts, err := names(tn.Names)
	if err != nil {
		return nil, err
	}
	name := parts[len(parts)-1]
	if len(parts) > 2 || (len(parts) == 2 && parts[0] != "pg_catalog") {
		return nil, unsupported("type %s", strings.Join(parts, "."))
	}
	mods, err := typmods(tn)
	if err != nil {
		return nil, err
	}
	if name == "interval" {
		if s, ok := constString(tc.Arg); ok {
			return intervalLiteral(s, mods)
		}
		if len(mods) > 0 {
			return nil, unsupported("interval casts with fields or precision")
		}
	}
	arg, err := r.expr(tc.Arg)
	if err != nil {
		return nil, err
	}
	if duck, ok := sameTypes[name]; ok {
		if len(mods) > 0 {
			return nil, unsupported("type %s with a precision", name)
		}
		if strings.HasPrefix(name, "int") {
			if lit, ok := constString(tc.Arg); ok && !integerText(lit) {
				// DuckDB rounds '1.5' to 2; PostgreSQL refuses it.
				return nil, unsupported("'%s'::%s (not an integer's text)", lit, name)
			} else if tc.Arg.GetAConst() == nil && !isInteger(tc.Arg) {
				return integerCast(arg, duck), nil
			}
		}
		if strings.HasPrefix(name, "timestamp") && tc.Arg.GetAConst() == nil {
			// text with over 6 fractional digits: DuckDB truncates
			// what PostgreSQL rounds
			return textChecked(arg, duck, call("regexp_matches", cast(arg, "varchar"), strConst(longFractionRE)),
				"time text with more than 6 fractional digits is not supported"), nil
		}
		return cast(arg, duck), nil
	}
	switch name {
	case "interval":
		return cast(arg, "interval"), nil
	case "numeric":
		return numericCast(arg, tc.Arg, mods)
	case "text", "varchar":
		t := textCast(arg, tc.Arg)
		if len(mods) == 1 { // varchar(n) truncates an explicit cast
			return call("left", t, intConst(mods[0])), nil
		}
		return t, nil
	}
	return nil, unsupported("type %s", name)
}

// typmods reads a type's integer modifiers.
func typmods(tn *pg_query.TypeName) ([]int64, error) {
	var out []int64
	for _, m := range tn.Typmods {
		v, ok := constInt(m)
		if !ok {
			return nil, unsupported("type modifier %s", nodeName(m))
		}
		out = append(out, v)
	}
	return out, nil
}

// numericCast maps numeric(p,s) to DECIMAL(p,s). DuckDB's unqualified
// DECIMAL is DECIMAL(18,3), which would round, so a numeric without
// precision is only accepted where the exact type is known: integer
// expressions (DECIMAL(38,0)) and literals (their own digits).
func numericCast(arg, orig *pg_query.Node, mods []int64) (*pg_query.Node, error) {
	switch len(mods) {
	case 1, 2:
		p, s := mods[0], int64(0)
		if len(mods) == 2 {
			s = mods[1]
		}
		if p < 1 || p > 38 || s < 0 || s > p {
			return nil, unsupported("numeric(%d,%d) (DuckDB decimals hold 1 to 38 digits)", p, s)
		}
		if c := orig.GetAConst(); c != nil || isInteger(orig) {
			return cast(arg, "decimal", p, s), nil
		}
		return floatDecimal(arg, p, s), nil
	}
	if isInteger(orig) || bigintLiteral(orig) {
		return cast(arg, "decimal", 38, 0), nil
	}
	if c := orig.GetAConst(); c != nil && c.GetFval() != nil {
		return arg, nil // a numeric literal is already exact
	}
	if s, ok := constString(orig); ok {
		if p, sc, ok := decimalDigits(strings.TrimSpace(s)); ok {
			return cast(arg, "decimal", p, sc), nil
		}
	}
	return nil, unsupported("numeric without precision and scale on an expression of unknown type (write numeric(p,s))")
}

// floatDecimal casts to DECIMAL(p,s) as PostgreSQL converts floating
// point to numeric: through the value's text with 15 significant digits
// (6 for real), then rounding half away from zero. DuckDB scales the
// binary value: 1.005::float8 is 1.00499999... and would round to 1.00,
// where PostgreSQL gives 1.01. The type is known only at run time.
func floatDecimal(x *pg_query.Node, p, s int64) *pg_query.Node {
	viaText := func(typ, format string) (*pg_query.Node, *pg_query.Node) {
		return op("=", call("typeof", x), strConst(typ)), cast(call("printf", strConst(format), x), "decimal", p, s)
	}
	isDouble, double := viaText("DOUBLE", "%.15g")
	isReal, real := viaText("FLOAT", "%.6g")
	return caseWhen(isDouble, double, caseWhen(isReal, real, cast(x, "decimal", p, s)))
}

// textCast casts to VARCHAR. DuckDB writes floating-point values and
// intervals differently from PostgreSQL (1.0 vs 1, "3 months" vs
// "3 mons"), so for an argument whose type is unknown here the cast fails
// at run time for those types instead of answering differently.
func textCast(arg, orig *pg_query.Node) *pg_query.Node {
	if plainText(orig) {
		return cast(arg, "varchar")
	}
	return guardText(arg)
}

// guardText is CAST(x AS VARCHAR) that raises an error for the types
// whose text differs between the engines.
func guardText(x *pg_query.Node) *pg_query.Node {
	kinds := []*pg_query.Node{strConst("DOUBLE"), strConst("FLOAT"), strConst("INTERVAL")}
	in := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_IN, []*pg_query.Node{pg_query.MakeStrNode("=")},
		call("typeof", x), pg_query.MakeListNode(kinds), -1)
	return caseWhen(in, raise("text of floating-point and interval values is not supported; cast to numeric(p,s) first"), cast(x, "varchar"))
}

// outputText converts a concatenation operand to text the way
// PostgreSQL's output functions write it: booleans as t/f (DuckDB writes
// true/false); floating-point values and intervals raise an error, since
// DuckDB writes them differently. String literals pass as they are.
func outputText(x *pg_query.Node) *pg_query.Node {
	if plainText(x) {
		return x
	}
	isBool := op("=", call("typeof", x), strConst("BOOLEAN"))
	return caseWhen(isBool, call("left", cast(x, "varchar"), intConst(1)), guardText(x))
}

// concatText converts an operand of || to text as PostgreSQL's
// anynonarray || text does, with the text cast (true, not t): literals and
// integers as they are, other types through guardText.
func concatText(x *pg_query.Node) *pg_query.Node {
	if plainText(x) {
		return x
	}
	return guardText(x)
}

// plainText reports expressions whose text is the same in both engines
// whatever the context: string literals, NULL and integers.
func plainText(x *pg_query.Node) bool {
	if _, ok := constString(x); ok || isInteger(x) {
		return true
	}
	c := x.GetAConst()
	return c != nil && c.Isnull
}

// bigintLiteral reports an integer literal beyond int4: PostgreSQL's
// parser leaves it a Float node, but it is an int8 (DuckDB: BIGINT), and
// 3000000000::numeric must not divide as an integer.
func bigintLiteral(n *pg_query.Node) bool {
	if c := n.GetAConst(); c != nil && c.GetFval() != nil {
		_, err := strconv.ParseInt(c.GetFval().Fval, 10, 64)
		return err == nil
	}
	return false
}

// integerFuncs return integers in both engines.
var integerFuncs = map[string]bool{
	"count": true, "length": true, "char_length": true, "character_length": true,
	"octet_length": true, "strpos": true, "position": true, "ascii": true,
	"row_number": true, "rank": true, "dense_rank": true, "ntile": true,
}

// isInteger reports whether an expression is known to be an integer in
// PostgreSQL (and so in DuckDB) without a catalog.
func isInteger(n *pg_query.Node) bool {
	switch v := n.Node.(type) {
	case *pg_query.Node_AConst:
		return v.AConst.GetIval() != nil
	case *pg_query.Node_FuncCall:
		name, err := funcName(v.FuncCall.Funcname)
		if err != nil {
			return false
		}
		if integerFuncs[name] {
			return true
		}
		if (name == "sum" || name == "min" || name == "max") && len(v.FuncCall.Args) == 1 {
			return isInteger(v.FuncCall.Args[0])
		}
	case *pg_query.Node_TypeCast:
		last := v.TypeCast.TypeName.Names[len(v.TypeCast.TypeName.Names)-1].GetString_()
		return last != nil && (last.Sval == "int2" || last.Sval == "int4" || last.Sval == "int8")
	case *pg_query.Node_AExpr:
		e := v.AExpr
		if e.Kind != pg_query.A_Expr_Kind_AEXPR_OP {
			return false
		}
		switch opName(e) {
		case "+", "-", "*", "/", "%":
			return (e.Lexpr == nil || isInteger(e.Lexpr)) && isInteger(e.Rexpr)
		}
	}
	return false
}

// integerText reports text PostgreSQL 15 reads as an integer: optional
// spaces and sign, then decimal digits.
func integerText(s string) bool {
	s = strings.Trim(s, cSpace)
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return digits(s)
}

// cSpace is isspace() in the C locale, the blanks PostgreSQL's integer
// input skips.
const cSpace = " \t\n\v\f\r"

// integerCast casts to an integer type, failing for text that is not
// integerText: DuckDB's cast also reads '1.5' (as 2), '0x10', '1e3' and
// '1_000', which PostgreSQL 15 refuses. The type is known only at run
// time, so the check is chosen by typeof.
func integerCast(x *pg_query.Node, typ string) *pg_query.Node {
	digits := call("regexp_full_match", cast(x, "varchar"), strConst(`[ \t\n\v\f\r]*[+-]?[0-9]+[ \t\n\v\f\r]*`))
	return textChecked(x, typ, not(digits), "invalid input syntax for type "+typ)
}

// textChecked is CAST(x AS typ) that raises msg when x is text and bad
// holds.
func textChecked(x *pg_query.Node, typ string, bad *pg_query.Node, msg string) *pg_query.Node {
	isText := op("=", call("typeof", x), strConst("VARCHAR"))
	cond := pg_query.MakeBoolExprNode(pg_query.BoolExprType_AND_EXPR, []*pg_query.Node{isText, bad}, -1)
	return caseWhen(cond, raise(msg), cast(x, typ))
}
