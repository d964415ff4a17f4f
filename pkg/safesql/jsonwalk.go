// JSON walk: the same allowlist checks as walk.go, over libpg_query's JSON output.

package safesql

import (
	"math"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// pg_query.ParseToJSON is much cheaper than pg_query.Parse (no protobuf
// serialization in C, no proto.Unmarshal in Go). The JSON has the shape of
// the protobuf tree: an object per message whose keys are the fields' JSON
// names, a Node as {"<Type>": {...}} (or {} when empty), lists as arrays,
// enums as strings, and default values omitted. The walk below is guided
// by the protobuf descriptors: every key must be a known field of the
// current message type, or the statement is refused.

// Field kinds of the JSON walk.
const (
	jScalar = iota // holds no nodes
	jLoc           // the int32 "location" field
	jMsg           // a single message
	jList          // a repeated message
	jMap           // a map: not expected, refused
	jBad           // a message type outside the proto file: refused
)

type jfield struct {
	name  string
	num   int32
	kind  uint8
	oneof bool
	msg   *jmsg
}

type jmsg struct {
	node     *nodeInfo
	fields   map[string]*jfield
	hasLoc   bool
	inputMax int32 // for checked types: the highest field number the check reads
}

// checkInputs are the fields each checked type's rule reads.
var checkInputs = map[string][]string{
	"FuncCall":         {"funcname"},
	"A_Expr":           {"name"},
	"TypeName":         {"names", "pct_type"},
	"DefElem":          {"defname"},
	"ExplainStmt":      {"options"},
	"RangeTableSample": {"method"},
	"SubLink":          {"oper_name"},
	"SortBy":           {"use_op"},
	"ColumnRef":        {"fields"},
	"A_Indirection":    {"indirection"},
	"RangeVar":         {"schemaname", "relname"},
}

var jmsgs = func() map[protoreflect.MessageDescriptor]*jmsg {
	m := make(map[protoreflect.MessageDescriptor]*jmsg)
	msgs := pg_query.File_pg_query_proto.Messages()
	for i := 0; i < msgs.Len(); i++ {
		md := msgs.Get(i)
		info := nodeInfos[md]
		m[md] = &jmsg{node: info, hasLoc: info.loc != nil, fields: make(map[string]*jfield)}
	}
	for md, jm := range m {
		fields := md.Fields()
		for j := 0; j < fields.Len(); j++ {
			fd := fields.Get(j)
			f := &jfield{name: string(fd.Name()), num: int32(fd.Number()), oneof: fd.ContainingOneof() != nil}
			switch {
			case fd.IsMap():
				f.kind = jMap
			case fd.Message() != nil:
				f.kind = jMsg
				if fd.IsList() {
					f.kind = jList
				}
				if f.msg = m[fd.Message()]; f.msg == nil {
					f.kind = jBad
				}
			case jm.node.loc == fd:
				f.kind = jLoc
			default:
				f.kind = jScalar
			}
			jm.fields[fd.JSONName()] = f
			for _, in := range checkInputs[jm.node.name] {
				if in == f.name && f.num > jm.inputMax {
					jm.inputMax = f.num
				}
			}
		}
		if md.Oneofs().Len() > 1 {
			panic("safesql: " + string(md.Name()) + " has more than one oneof")
		}
	}
	return m
}()

var (
	jParseResult = jmsgs[(&pg_query.ParseResult{}).ProtoReflect().Descriptor()]
	jNode        = jmsgs[(&pg_query.Node{}).ProtoReflect().Descriptor()]
)

// posPending is the position of a refusal below a message whose location
// field has not been read yet (libpg_query writes it last); the message
// fills it in on the way out.
const posPending = math.MinInt32

type jwalker struct {
	v        *Validator
	s        string
	i        int
	depth    int
	maxDepth int
	// Inputs of the current checked message.
	names   []string
	pct     bool
	defnm   string
	schema  string // RangeVar
	rel     string
	explErr *Refusal
}

func shapeRefusal(pos int) *Refusal {
	return refuse(pos, "parse tree", "the parse tree has an unexpected shape (internal error)")
}

// checkJSON validates without the cache, through ParseToJSON.
func (v *Validator) checkJSON(sql string) (Kind, *Refusal) {
	if r := checkHygiene(sql, v.opts.MaxLength, v.opts.MaxDepth); r != nil {
		return "", r
	}
	js, err := pg_query.ParseToJSON(sql)
	if err != nil {
		return "", parseRefusal(sql, err)
	}
	w := jwalker{v: v, s: js, maxDepth: v.treeDepth}
	n, stmt0, loc0, loc1, ok := w.stmts()
	if !ok {
		return "", shapeRefusal(-1)
	}
	switch n {
	case 0:
		return "", refuse(-1, "empty", "no statement: the text is empty or only comments")
	case 1:
	default:
		return "", refuse(skipSpace(sql, loc1), "multiple statements",
			"only one statement is allowed; send statements one at a time")
	}
	if stmt0 < 0 {
		return "", shapeRefusal(-1)
	}
	pos := loc0
	var kind Kind
	w.i = stmt0
	switch w.nodeType() {
	case "SelectStmt":
		kind = KindSelect
	case "VariableShowStmt":
		kind = KindShow
	case "ExplainStmt":
		kind = KindExplain
		if !w.explainOfSelect() {
			return "", refuse(pos, "EXPLAIN", "EXPLAIN is allowed only of a SELECT")
		}
	default:
		w.i = stmt0
		if r := w.msg(jNode, "", pos); r != nil {
			return "", r
		}
		return "", refuse(pos, "statement", "only SELECT, EXPLAIN and SHOW are allowed")
	}
	w.i = stmt0
	if r := w.msg(jNode, "", skipSpace(sql, pos)); r != nil {
		return "", r
	}
	return kind, nil
}

// stmts reads the ParseResult: the number of statements, the offset of the
// first statement's node and the locations of the first two statements.
func (w *jwalker) stmts() (n, stmt0, loc0, loc1 int, ok bool) {
	stmt0 = -1
	if !w.open('{') {
		return
	}
	for more := !w.close('}'); more; {
		key, kok := w.key()
		if !kok {
			return
		}
		switch key {
		case "version":
			if !w.skip() {
				return
			}
		case "stmts":
			if !w.open('[') {
				return
			}
			for more := !w.close(']'); more; {
				if !w.open('{') {
					return
				}
				loc := 0
				for more := !w.close('}'); more; {
					k, kok := w.key()
					if !kok {
						return
					}
					switch k {
					case "stmt":
						if n == 0 {
							stmt0 = w.i
						}
						if !w.skip() {
							return
						}
					case "stmt_location":
						l, iok := w.int()
						if !iok {
							return
						}
						loc = l
					case "stmt_len":
						if !w.skip() {
							return
						}
					default:
						return
					}
					if more, kok = w.next('}'); !kok {
						return
					}
				}
				switch n {
				case 0:
					loc0 = loc
				case 1:
					loc1 = loc
				}
				n++
				var kok bool
				if more, kok = w.next(']'); !kok {
					return
				}
			}
		default:
			return
		}
		if more, kok = w.next('}'); !kok {
			return
		}
	}
	return n, stmt0, loc0, loc1, true
}

// nodeType returns the type key of the Node object at w.i, or "".
func (w *jwalker) nodeType() string {
	if !w.open('{') || w.close('}') {
		return ""
	}
	k, _ := w.key()
	return k
}

// explainOfSelect reads {"query":{"SelectStmt": ...}} right after the
// ExplainStmt key: query is the first field of ExplainStmt.
func (w *jwalker) explainOfSelect() bool {
	if !w.open('{') || w.close('}') {
		return false
	}
	if k, _ := w.key(); k != "query" {
		return false
	}
	return w.nodeType() == "SelectStmt"
}

// findLoc returns the location field of the message object at start, 0
// when absent (as protobuf reads a missing int32).
func (w *jwalker) findLoc(start int) int {
	save := w.i
	defer func() { w.i = save }()
	w.i = start
	if !w.open('{') {
		return 0
	}
	for more := !w.close('}'); more; {
		k, ok := w.key()
		if !ok {
			return 0
		}
		if k == "location" {
			l, _ := w.int()
			return l
		}
		if !w.skip() {
			return 0
		}
		if more, ok = w.next('}'); !ok {
			return 0
		}
	}
	return 0
}

// msg checks the message object at w.i, of type m, and everything below.
// ctx and pos are as in (*walker).visit.
func (w *jwalker) msg(m *jmsg, ctx string, pos int) (r *Refusal) {
	start := w.i
	info := m.node
	defer func() {
		if r != nil && r.Position == posPending && m.hasLoc {
			if l := w.findLoc(start); l >= 0 {
				r.Position = l
			} else {
				r.Position = pos
			}
		}
	}()
	cur := pos
	if m.hasLoc {
		cur = posPending
	}
	if !w.open('{') {
		return shapeRefusal(cur)
	}
	if !info.allowed {
		reason, ok := refusedReasons[info.name]
		if !ok {
			reason = info.name + " is not allowed"
		}
		return refuse(cur, info.name, reason)
	}
	if info.since > w.v.version {
		return w.v.tooNew(info, cur)
	}
	w.depth++
	if w.depth > w.maxDepth {
		return refuse(cur, "nesting depth", "the statement's parse tree is nested deeper than the limit")
	}
	childCtx := ctx
	if info.name != "Node" && info.name != "List" {
		childCtx = info.name
	}
	checkPending := info.checked
	if checkPending {
		w.names, w.pct, w.defnm, w.explErr, w.schema, w.rel = w.names[:0], false, "", nil, "", ""
	}
	var deferred [4]struct {
		f   *jfield
		off int
	}
	nd := 0
	runCheck := func() *Refusal {
		checkPending = false
		if r := w.check(info.name, ctx, cur); r != nil {
			return r
		}
		save := w.i
		for _, d := range deferred[:nd] {
			w.i = d.off
			if r := w.field(d.f, childCtx, cur); r != nil {
				return r
			}
		}
		w.i = save
		return nil
	}
	var last int32
	oneof := false
	for more := !w.close('}'); more; {
		key, ok := w.key()
		if !ok {
			return shapeRefusal(cur)
		}
		f := m.fields[key]
		if f == nil {
			return refuse(cur, "parse tree", "the parse tree has a field "+key+" unknown to the validator")
		}
		if f.num <= last || (f.oneof && oneof) {
			return shapeRefusal(cur)
		}
		last = f.num
		oneof = oneof || f.oneof
		if checkPending && f.num > m.inputMax {
			if r := runCheck(); r != nil {
				return r
			}
		}
		switch {
		case f.kind == jLoc:
			l, ok := w.int()
			if !ok {
				return shapeRefusal(cur)
			}
			if l >= 0 {
				cur = l
			} else {
				cur = pos
			}
		case checkPending:
			if f.kind == jMsg || f.kind == jList {
				if nd == len(deferred) {
					return shapeRefusal(cur)
				}
				deferred[nd].f, deferred[nd].off = f, w.i
				nd++
			}
			if !w.input(info.name, f) {
				return shapeRefusal(cur)
			}
		default:
			if r := w.field(f, childCtx, cur); r != nil {
				return r
			}
		}
		if more, ok = w.next('}'); !ok {
			return shapeRefusal(cur)
		}
	}
	if checkPending {
		if r := runCheck(); r != nil {
			return r
		}
	}
	w.depth--
	return nil
}

// field walks the value at w.i of field f.
func (w *jwalker) field(f *jfield, ctx string, pos int) *Refusal {
	switch f.kind {
	case jScalar:
		if !w.skipScalar() {
			return shapeRefusal(pos)
		}
	case jMsg:
		return w.msg(f.msg, ctx, pos)
	case jList:
		if !w.open('[') {
			return shapeRefusal(pos)
		}
		for more := !w.close(']'); more; {
			if r := w.msg(f.msg, ctx, pos); r != nil {
				return r
			}
			var ok bool
			if more, ok = w.next(']'); !ok {
				return shapeRefusal(pos)
			}
		}
	case jMap:
		return refuse(pos, f.name, "map field "+f.name+" is not known to the walker")
	default:
		return shapeRefusal(pos)
	}
	return nil
}

// input reads the value at w.i of field f of a checked message of type
// typ, keeping what the check needs; other values are skipped. Message
// values are walked after the check, as (*walker).check runs first.
func (w *jwalker) input(typ string, f *jfield) bool {
	switch {
	case f.name == "funcname" && typ == "FuncCall", f.name == "name" && typ == "A_Expr",
		f.name == "names" && typ == "TypeName", f.name == "method" && typ == "RangeTableSample",
		f.name == "oper_name" && typ == "SubLink", f.name == "use_op" && typ == "SortBy",
		f.name == "fields" && typ == "ColumnRef", f.name == "indirection" && typ == "A_Indirection":
		return w.readNames()
	case f.name == "pct_type" && typ == "TypeName":
		b, ok := w.bool()
		w.pct = b
		return ok
	case f.name == "defname" && typ == "DefElem":
		s, ok := w.str()
		w.defnm = s
		return ok
	case f.name == "options" && typ == "ExplainStmt":
		return w.readExplainOptions()
	case f.name == "schemaname" && typ == "RangeVar":
		s, ok := w.str()
		w.schema = s
		return ok
	case f.name == "relname" && typ == "RangeVar":
		s, ok := w.str()
		w.rel = s
		return ok
	}
	return w.skip()
}

// check is (*walker).check on the inputs read by input.
func (w *jwalker) check(typ, ctx string, pos int) *Refusal {
	n := w.names
	switch typ {
	case "FuncCall":
		return w.v.checkFuncName(n, pos)
	case "A_Expr", "SubLink", "SortBy":
		return checkOperator(n, pos)
	case "ColumnRef":
		if len(n) > 1 {
			return w.v.checkAttrCalls(n[1:], pos)
		}
	case "A_Indirection":
		return w.v.checkAttrCalls(n, pos)
	case "TypeName":
		if len(n) > 1 && n[0] != "pg_catalog" {
			q := strings.Join(n, ".")
			return refuse(pos, q, "type "+q+
				" is not allowed (a schema-qualified type outside pg_catalog may run user code in its input function)")
		}
		if w.pct {
			return refuse(pos, "%TYPE", "%TYPE type references are not allowed")
		}
	case "DefElem":
		if ctx != "ExplainStmt" {
			return refuse(pos, "DefElem", "option "+w.defnm+" is not allowed here")
		}
	case "ExplainStmt":
		return w.explErr
	case "RangeVar":
		return checkRelation(w.schema, w.rel, pos)
	case "RangeTableSample":
		if len(n) == 0 || len(n) > 2 || (len(n) == 2 && n[0] != "pg_catalog") || !tablesampleMethods[n[len(n)-1]] {
			q := strings.Join(n, ".")
			return refuse(pos, "TABLESAMPLE "+q,
				"TABLESAMPLE method "+q+" is not allowed (only bernoulli and system)")
		}
	}
	return nil
}

// readNames reads a list of Nodes into w.names: the sval of a String
// node, "" for anything else (as GetString_().GetSval() does).
func (w *jwalker) readNames() bool {
	if !w.open('[') {
		return false
	}
	for more := !w.close(']'); more; {
		name := ""
		start := w.i
		if w.open('{') && !w.close('}') {
			if k, ok := w.key(); ok && k == "String" && w.open('{') {
				for more := !w.close('}'); more; {
					k, ok := w.key()
					if !ok {
						return false
					}
					if k == "sval" {
						if name, ok = w.str(); !ok {
							return false
						}
					} else if !w.skip() {
						return false
					}
					if more, ok = w.next('}'); !ok {
						return false
					}
				}
			}
		}
		w.i = start
		if !w.skip() {
			return false
		}
		w.names = append(w.names, name)
		var ok bool
		if more, ok = w.next(']'); !ok {
			return false
		}
	}
	return true
}

// readExplainOptions applies checkExplain's rules to the options list
// and keeps the first refusal in w.explErr.
func (w *jwalker) readExplainOptions() bool {
	if !w.open('[') {
		return false
	}
	for more := !w.close(']'); more; {
		start := w.i
		if w.explErr == nil && w.open('{') && !w.close('}') {
			if k, ok := w.key(); ok && k == "DefElem" && w.open('{') {
				var defname string
				loc, argFalse := 0, false
				for more := !w.close('}'); more; {
					k, ok := w.key()
					if !ok {
						return false
					}
					switch k {
					case "defname":
						if defname, ok = w.str(); !ok {
							return false
						}
					case "location":
						if loc, ok = w.int(); !ok {
							return false
						}
					case "arg":
						argFalse = w.argIsFalse()
					default:
						if !w.skip() {
							return false
						}
					}
					if more, ok = w.next('}'); !ok {
						return false
					}
				}
				if !explainOptions[defname] {
					w.explErr = refuse(loc, "EXPLAIN "+defname, "EXPLAIN option "+defname+" is not allowed")
				} else if defname == "analyze" && !w.v.opts.AllowExplainAnalyze && !argFalse {
					w.explErr = refuse(loc, "EXPLAIN ANALYZE",
						"EXPLAIN ANALYZE executes the statement and is not enabled on this server; use EXPLAIN without ANALYZE")
				}
			}
		}
		w.i = start
		if !w.skip() {
			return false
		}
		var ok bool
		if more, ok = w.next(']'); !ok {
			return false
		}
	}
	return true
}

// argIsFalse is isFalse on the Node at w.i; it leaves w.i after it.
func (w *jwalker) argIsFalse() bool {
	start := w.i
	res := false
	if w.open('{') && !w.close('}') {
		typ, _ := w.key()
		if w.open('{') {
			switch typ {
			case "Boolean", "Integer":
				res = true // boolval false / ival 0 when absent
			}
			for more := !w.close('}'); more; {
				k, ok := w.key()
				if !ok {
					break
				}
				switch {
				case typ == "Boolean" && k == "boolval":
					b, _ := w.bool()
					res = !b
				case typ == "Integer" && k == "ival":
					n, _ := w.int()
					res = n == 0
				case typ == "String" && k == "sval":
					s, _ := w.str()
					res = isFalseWord(s)
				default:
					w.skip()
				}
				if more, ok = w.next('}'); !ok {
					break
				}
			}
		}
	}
	w.i = start
	w.skip()
	return res
}

// Scanner primitives. libpg_query writes no white space, but it is skipped.

func (w *jwalker) ws() {
	for w.i < len(w.s) {
		switch w.s[w.i] {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return
		}
	}
}

// open consumes c (after white space) and reports whether it was there.
func (w *jwalker) open(c byte) bool {
	w.ws()
	if w.i < len(w.s) && w.s[w.i] == c {
		w.i++
		return true
	}
	return false
}

// close consumes c if it is next.
func (w *jwalker) close(c byte) bool { return w.open(c) }

// next reads ',' (more elements) or the closing c (no more).
func (w *jwalker) next(c byte) (more, ok bool) {
	w.ws()
	if w.i < len(w.s) {
		switch w.s[w.i] {
		case ',':
			w.i++
			return true, true
		case c:
			w.i++
			return false, true
		}
	}
	return false, false
}

// key reads "key": .
func (w *jwalker) key() (string, bool) {
	k, ok := w.str()
	if !ok || !w.open(':') {
		return "", false
	}
	return k, true
}

// str reads a JSON string; without escapes it is a substring of the input.
func (w *jwalker) str() (string, bool) {
	w.ws()
	if w.i >= len(w.s) || w.s[w.i] != '"' {
		return "", false
	}
	start := w.i + 1
	for j := start; j < len(w.s); j++ {
		switch w.s[j] {
		case '"':
			w.i = j + 1
			return w.s[start:j], true
		case '\\':
			return w.strEscaped(start)
		}
	}
	return "", false
}

func (w *jwalker) strEscaped(start int) (string, bool) {
	var b strings.Builder
	s := w.s
	for j := start; j < len(s); {
		c := s[j]
		switch {
		case c == '"':
			w.i = j + 1
			return b.String(), true
		case c != '\\':
			b.WriteByte(c)
			j++
			continue
		}
		if j+1 >= len(s) {
			return "", false
		}
		switch s[j+1] {
		case '"', '\\', '/':
			b.WriteByte(s[j+1])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'u':
			r, ok := hex4(s, j+2)
			if !ok {
				return "", false
			}
			j += 6
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(s, j+2); ok && j+1 < len(s) && s[j] == '\\' && s[j+1] == 'u' {
					r = utf16.DecodeRune(r, r2)
					j += 6
				} else {
					r = utf8.RuneError
				}
			}
			b.WriteRune(r)
			continue
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// int reads an integer.
func (w *jwalker) int() (int, bool) {
	w.ws()
	neg := false
	if w.i < len(w.s) && w.s[w.i] == '-' {
		neg = true
		w.i++
	}
	start := w.i
	n := 0
	for w.i < len(w.s) && w.s[w.i] >= '0' && w.s[w.i] <= '9' {
		if n > math.MaxInt32 {
			return 0, false
		}
		n = n*10 + int(w.s[w.i]-'0')
		w.i++
	}
	if w.i == start {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}

func (w *jwalker) bool() (bool, bool) {
	w.ws()
	switch {
	case strings.HasPrefix(w.s[w.i:], "true"):
		w.i += 4
		return true, true
	case strings.HasPrefix(w.s[w.i:], "false"):
		w.i += 5
		return false, true
	}
	return false, false
}

// skipScalar skips a string, number, true, false or null.
func (w *jwalker) skipScalar() bool {
	w.ws()
	if w.i >= len(w.s) {
		return false
	}
	switch w.s[w.i] {
	case '{', '[':
		return false
	}
	return w.skip()
}

// skip skips one value of any kind, without recursion.
func (w *jwalker) skip() bool {
	w.ws()
	s := w.s
	depth := 0
	for w.i < len(s) {
		switch c := s[w.i]; c {
		case '"':
			j := w.i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return false
			}
			w.i = j + 1
		case '{', '[':
			depth++
			w.i++
			continue
		case '}', ']':
			if depth == 0 {
				return false
			}
			depth--
			w.i++
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return false
			}
			w.i++
			continue
		default:
			start := w.i
			for w.i < len(s) && strings.IndexByte(",:}] \t\n\r\"{[", s[w.i]) < 0 {
				w.i++
			}
			if w.i == start {
				return false
			}
		}
		if depth == 0 {
			return true
		}
	}
	return false
}
