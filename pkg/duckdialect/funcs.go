// Function calls: the allowlist of functions that behave the same, and
// the ones rewritten.

package duckdialect

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// sameFuncs behave the same in DuckDB under the same name, for the
// argument types both engines share. Each is exercised against PostgreSQL
// in the tests (TestFunctionParity).
var sameFuncs = wordSet(`
	count sum avg min max stddev stddev_samp stddev_pop variance var_samp var_pop
	bool_and bool_or string_agg covar_pop covar_samp
	row_number rank dense_rank percent_rank cume_dist ntile lag lead
	first_value last_value nth_value
	abs ceil ceiling floor sign sqrt cbrt ln log log10 pi
	degrees radians sin cos tan asin acos atan atan2
	lower upper length char_length character_length replace
	left right repeat strpos starts_with
	md5 ascii translate ltrim rtrim
	now make_timestamp
`)

// renamedFuncs have a DuckDB twin under another name.
var renamedFuncs = map[string]string{
	"btrim":    "trim",
	"position": "strpos", // PostgreSQL parses position(a IN b) as position(b, a)
	"every":    "bool_and",
}

// withinGroupFuncs are ordered-set aggregates DuckDB takes in the same
// WITHIN GROUP (ORDER BY ...) form.
var withinGroupFuncs = wordSet("percentile_cont percentile_disc mode")

// funcHandlers rewrite functions whose DuckDB twin differs.
var funcHandlers map[string]func(r *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error)

func init() {
	funcHandlers = map[string]func(r *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error){
		"extract":         extract,
		"date_part":       extract,
		"substring":       substring,
		"substr":          substring,
		"round":           round,
		"trunc":           trunc,
		"lpad":            pad,
		"rpad":            pad,
		"concat":          concat,
		"concat_ws":       concat,
		"percentile_cont": percentileCont,
		"to_char":         toChar,
		"to_date":         toDate,
		"to_timestamp":    toTimestamp,
		"date_trunc":      dateTrunc,
		"regexp_replace":  regexpReplace,
		"power":           finite,
		"pow":             finite,
		"exp":             finite,
		"split_part":      splitPart,
		"make_date":       makeDate,
		"chr":             chr,
		"mod":             mod,
		"reverse":         reverse,
		"corr":            corr,
	}
}

// funcCall rewrites a function call's arguments, aggregate clauses and
// window, then the call itself.
func (r *rewriter) funcCall(fc *pg_query.FuncCall) (*pg_query.Node, error) {
	name, err := funcName(fc.Funcname)
	if err != nil {
		return nil, err
	}
	name = strings.ToLower(name)
	if fc.FuncVariadic {
		return nil, unsupported("VARIADIC arguments")
	}
	if fc.AggWithinGroup && !withinGroupFuncs[name] {
		return nil, unsupported("WITHIN GROUP for %s", name)
	}
	if err := r.exprList(fc.Args); err != nil {
		return nil, err
	}
	if err := r.sortList(fc.AggOrder); err != nil {
		return nil, err
	}
	if fc.AggFilter, err = r.exprOrNil(fc.AggFilter); err != nil {
		return nil, err
	}
	if fc.Over != nil {
		if err := r.windowDef(fc.Over); err != nil {
			return nil, err
		}
	}
	if h := funcHandlers[name]; h != nil {
		if fc.Over != nil || fc.AggFilter != nil || fc.AggDistinct {
			return nil, unsupported("%s with OVER, FILTER or DISTINCT", name)
		}
		return h(r, fc)
	}
	duck := name
	if to, ok := renamedFuncs[name]; ok {
		duck = to
	} else if !sameFuncs[name] && !withinGroupFuncs[name] {
		return nil, unsupported("function %s", name)
	}
	fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode(duck)}
	fc.Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
	return &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: fc}}, nil
}

// extractFields are the fields whose date_part values agree; seconds and
// smaller are rebuilt from DuckDB's microseconds, which include the
// seconds, because DuckDB's "second" drops the fraction PostgreSQL keeps.
var extractFields = wordSet(`year month day quarter week dow isodow doy isoyear
	hour minute epoch decade century millennium`)

// extract rewrites extract(field FROM x) and date_part('field', x).
func extract(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.Args) != 2 {
		return nil, unsupported("extract with %d arguments", len(fc.Args))
	}
	field, ok := constString(fc.Args[0])
	if !ok {
		return nil, unsupported("extract with a non-literal field")
	}
	field = strings.ToLower(field)
	us := func() *pg_query.Node {
		return cast(call("date_part", strConst("microseconds"), fc.Args[1]), "decimal", 18, 0)
	}
	name, _ := funcName(fc.Funcname)
	switch {
	case extractFields[field] && field != "epoch":
		// DuckDB's BIGINT would divide as an integer: PostgreSQL's
		// extract is numeric and date_part double precision.
		part := call("date_part", strConst(field), fc.Args[1])
		if strings.EqualFold(name, "date_part") {
			return cast(part, "double"), nil
		}
		return cast(part, "decimal", 18, 0), nil
	case field == "epoch":
		return call("date_part", strConst(field), fc.Args[1]), nil
	case field == "second" || field == "seconds":
		return op("*", us(), numConst("0.000001")), nil
	case field == "milliseconds":
		return op("*", us(), numConst("0.001")), nil
	case field == "microseconds":
		return us(), nil
	}
	return nil, unsupported("extract field %s", field)
}

// substring rewrites substring(s FROM a [FOR n]) and substr(s, a [, n]).
// PostgreSQL counts a start below 1 as positions before the string, where
// DuckDB counts a negative start from the end, and a negative length is an
// error in PostgreSQL only. Literal positions and lengths in the common
// range pass as they are; anything else gets the explicit arithmetic.
func substring(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	args := fc.Args
	if len(args) != 2 && len(args) != 3 {
		return nil, unsupported("substring with %d arguments", len(args))
	}
	if _, ok := constString(args[1]); ok {
		return nil, unsupported("substring with a regular expression")
	}
	s, start := args[0], args[1]
	a, aConst := constInt(start)
	if len(args) == 2 {
		if aConst && a >= 1 {
			return call("substring", s, start), nil
		}
		return call("substring", s, atLeast(start, 1)), nil
	}
	n := args[2]
	if l, ok := constInt(n); ok && l >= 0 && aConst && a >= 1 {
		return call("substring", s, start, n), nil
	}
	// From max(a,1) up to a+n-1 inclusive; n < 0 raises like PostgreSQL.
	from := atLeast(start, 1)
	length := atLeast(op("-", op("+", start, n), from), 0)
	length = caseWhen(op("<", n, intConst(0)), raise("negative substring length not allowed"), length)
	return call("substring", s, from, length), nil
}

// atLeast is max(x, k), NULL when x is NULL as in PostgreSQL's strict
// substring (greatest would skip a NULL and answer k).
func atLeast(x *pg_query.Node, k int64) *pg_query.Node {
	return caseWhen(op("<", x, intConst(k)), intConst(k), x)
}

// round keeps PostgreSQL's ties: round(numeric) rounds half away from zero
// like DuckDB, but round(double precision) rounds half to even, and
// round(double precision, n) does not exist in PostgreSQL.
func round(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	return floatGuarded(fc, "round", "round_even")
}

// trunc is the same in both engines for numeric and double precision.
func trunc(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	return floatGuarded(fc, "trunc", "trunc")
}

// floatGuarded calls name(x[, n]) with floatOne(x) for one-argument
// double calls and an error for two-argument double calls, choosing by
// DuckDB's typeof (constant for a given query).
func floatGuarded(fc *pg_query.FuncCall, name, floatOne string) (*pg_query.Node, error) {
	args := fc.Args
	if len(args) != 1 && len(args) != 2 {
		return nil, unsupported("%s with %d arguments", name, len(args))
	}
	x := args[0]
	isFloat := pg_query.MakeAExprNode(pg_query.A_Expr_Kind_AEXPR_IN, []*pg_query.Node{pg_query.MakeStrNode("=")},
		call("typeof", x), pg_query.MakeListNode([]*pg_query.Node{strConst("DOUBLE"), strConst("FLOAT")}), -1)
	if len(args) == 1 {
		if floatOne == name {
			return call(name, x), nil
		}
		return caseWhen(isFloat, call(floatOne, x, intConst(0)), call(name, x)), nil
	}
	if isInteger(x) {
		return call(name, x, args[1]), nil
	}
	return caseWhen(isFloat, raise("function "+name+"(double precision, integer) does not exist"), call(name, x, args[1])), nil
}

// pad fills with a space by default in PostgreSQL; DuckDB needs the fill.
func pad(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	name, _ := funcName(fc.Funcname)
	switch len(fc.Args) {
	case 2:
		return call(name, fc.Args[0], fc.Args[1], strConst(" ")), nil
	case 3:
		return call(name, fc.Args...), nil
	}
	return nil, unsupported("%s with %d arguments", name, len(fc.Args))
}

// concat writes its arguments with PostgreSQL's output functions.
func concat(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	name, _ := funcName(fc.Funcname)
	args := make([]*pg_query.Node, len(fc.Args))
	for i, a := range fc.Args {
		args[i] = outputText(a)
	}
	return call(name, args...), nil
}

// percentileCont interpolates in double precision, as PostgreSQL's
// percentile_cont(double precision) does; DuckDB would keep a decimal
// column's scale and round.
func percentileCont(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.AggOrder) != 1 || !fc.AggWithinGroup {
		return nil, unsupported("percentile_cont without WITHIN GROUP (ORDER BY one value)")
	}
	sb := fc.AggOrder[0].GetSortBy()
	sb.Node = cast(sb.Node, "double")
	fc.Funcname = []*pg_query.Node{pg_query.MakeStrNode("percentile_cont")}
	fc.Funcformat = pg_query.CoercionForm_COERCE_EXPLICIT_CALL
	return &pg_query.Node{Node: &pg_query.Node_FuncCall{FuncCall: fc}}, nil
}

// finite fails where DuckDB returns an infinity or NaN: PostgreSQL raises
// "zero raised to a negative power is undefined", "a negative number
// raised to a non-integer power yields a complex result" and overflow
// errors there.
func finite(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	name, _ := funcName(fc.Funcname)
	r := call(name, fc.Args...)
	return caseWhen(not(call("isfinite", r)), raise(name+": result out of range or undefined"), r), nil
}

// corr is NULL in PostgreSQL where a variance is zero (one row, constant
// input); DuckDB returns NaN there.
func corr(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	r := call("corr", fc.Args...)
	return caseWhen(call("isnan", r), &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}}, r), nil
}

// splitPart refuses field 0, which PostgreSQL rejects and DuckDB answers
// with an empty string; negative fields count from the end in both.
func splitPart(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.Args) != 3 {
		return nil, unsupported("split_part with %d arguments", len(fc.Args))
	}
	str, delim, n := fc.Args[0], fc.Args[1], fc.Args[2]
	// An empty delimiter: PostgreSQL's whole string is the one field
	// (DuckDB splits it into characters); left(s, 0) is '' or NULL, as
	// the strict function's result.
	empty := caseWhen(op("=", n, intConst(1)), str,
		caseWhen(op("=", n, intConst(-1)), str, caseWhen(&pg_query.Node{Node: &pg_query.Node_NullTest{NullTest: &pg_query.NullTest{Arg: n, Nulltesttype: pg_query.NullTestType_IS_NOT_NULL, Location: -1}}}, call("left", str, intConst(0)), nil)))
	r := caseWhen(op("=", delim, strConst("")), empty, call("split_part", fc.Args...))
	if v, ok := constInt(n); ok && v != 0 {
		return r, nil
	}
	return caseWhen(op("=", n, intConst(0)), raise("field position must not be zero"), r), nil
}

// makeDate maps make_date(y, m, d): PostgreSQL's negative years are BC
// (-44 is 44 BC, DuckDB's -43) and it has no year 0.
func makeDate(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.Args) != 3 {
		return nil, unsupported("make_date with %d arguments", len(fc.Args))
	}
	y := fc.Args[0]
	year := caseWhen(op("<", y, intConst(0)), op("+", y, intConst(1)),
		caseWhen(op("=", y, intConst(0)), raise("date field value out of range"), y))
	return call("make_date", year, fc.Args[1], fc.Args[2]), nil
}

// chr maps chr(n): PostgreSQL refuses 0 (a NUL in text).
func chr(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.Args) != 1 {
		return nil, unsupported("chr with %d arguments", len(fc.Args))
	}
	n := fc.Args[0]
	return caseWhen(op("=", n, intConst(0)), raise("null character not permitted"), call("chr", n)), nil
}

// reverse reverses code points, as PostgreSQL does; DuckDB's reverse
// keeps a character's combining marks with it (grapheme clusters).
func reverse(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.Args) != 1 {
		return nil, unsupported("reverse with %d arguments", len(fc.Args))
	}
	return call("array_to_string", call("list_reverse", call("string_split", fc.Args[0], strConst(""))), strConst("")), nil
}

// mod maps mod(a, b) with PostgreSQL's division by zero error and its
// refusal of floating point, as "%".
func mod(_ *rewriter, fc *pg_query.FuncCall) (*pg_query.Node, error) {
	if len(fc.Args) != 2 {
		return nil, unsupported("mod with %d arguments", len(fc.Args))
	}
	x, d := fc.Args[0], fc.Args[1]
	g, err := noFloatMod(x, d, nonZero(x, d))
	if err != nil {
		return nil, err
	}
	return call("mod", x, g), nil
}

// wordSet makes a set from whitespace-separated words.
func wordSet(words string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(words) {
		m[w] = true
	}
	return m
}
