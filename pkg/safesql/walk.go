// Tree walk: visits every message of a parse tree and applies the allowlists.

package safesql

import (
	"fmt"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// nodeInfo is what the walker knows about one message type.
type nodeInfo struct {
	name    string // short name, e.g. "SelectStmt"
	allowed bool
	// since is the server_version_num of the release whose parser first
	// made this node (0: older than any the validator knows)
	since int
	loc   protoreflect.FieldDescriptor // the "location" field, or nil
	// oneof is set for a message that is a single oneof whose members
	// are all messages (Node): only the set member needs a look.
	oneof protoreflect.OneofDescriptor
	// msgFields are the message-typed fields (single, repeated or map);
	// scalar fields hold no nodes and need no visit.
	msgFields []protoreflect.FieldDescriptor
	// checked marks the types that check has rules for; the others skip
	// its type switch.
	checked bool
}

// checkedNodes are the message types with rules in (*walker).check.
var checkedNodes = map[string]bool{
	"FuncCall": true, "A_Expr": true, "TypeName": true, "DefElem": true, "ExplainStmt": true, "RangeTableSample": true,
	"SubLink": true, "SortBy": true, "ColumnRef": true, "A_Indirection": true, "RangeVar": true,
}

// nodeInfoByIndex is nodeInfos by the message's index in pg_query's proto
// file: a slice lookup instead of hashing an interface key on every node.
var nodeInfoByIndex = func() []*nodeInfo {
	msgs := pg_query.File_pg_query_proto.Messages()
	out := make([]*nodeInfo, msgs.Len())
	for i := range out {
		out[i] = nodeInfos[msgs.Get(i)]
	}
	return out
}()

// lookupNode finds what the walker knows about a message type, or nil.
func lookupNode(md protoreflect.MessageDescriptor) *nodeInfo {
	if md.ParentFile() == pg_query.File_pg_query_proto && md.Parent() == md.ParentFile() {
		if i := md.Index(); i < len(nodeInfoByIndex) {
			return nodeInfoByIndex[i]
		}
	}
	return nodeInfos[md]
}

// nodeInfos covers every message type of pg_query's protobuf file, keyed
// by descriptor. A descriptor missing from it (impossible with one
// generated file, but cheap to guard) is refused like a disallowed type.
var nodeInfos = func() map[protoreflect.MessageDescriptor]*nodeInfo {
	m := make(map[protoreflect.MessageDescriptor]*nodeInfo)
	msgs := pg_query.File_pg_query_proto.Messages()
	for i := 0; i < msgs.Len(); i++ {
		md := msgs.Get(i)
		name := string(md.Name())
		info := &nodeInfo{name: name, allowed: allowedNodes[name], checked: checkedNodes[name], since: nodeSince[name]}
		if fd := md.Fields().ByName("location"); fd != nil && fd.Kind() == protoreflect.Int32Kind {
			info.loc = fd
		}
		fields := md.Fields()
		for j := 0; j < fields.Len(); j++ {
			if fd := fields.Get(j); fd.Message() != nil {
				info.msgFields = append(info.msgFields, fd)
			}
		}
		if md.Oneofs().Len() == 1 && md.Oneofs().Get(0).Fields().Len() == fields.Len() &&
			len(info.msgFields) == fields.Len() {
			info.oneof = md.Oneofs().Get(0)
		}
		m[md] = info
	}
	return m
}()

// walker carries the state of one walk. The walk is generic over
// protobuf reflection: it visits every populated field, every element of
// every repeated field, and the set member of every oneof, so no nested
// list can be skipped. Type-specific checks run on top of that.
type walker struct {
	v        *Validator
	depth    int
	maxDepth int
	err      *Refusal
}

// visit checks m and everything below it. ctx is the nearest enclosing
// message type other than the Node and List wrappers; pos is the nearest
// known byte offset.
func (w *walker) visit(m protoreflect.Message, ctx string, pos int) *Refusal {
	info := lookupNode(m.Descriptor())
	if info == nil {
		return refuse(pos, string(m.Descriptor().Name()), string(m.Descriptor().Name())+" is not allowed")
	}
	if info.loc != nil {
		if l := int(m.Get(info.loc).Int()); l >= 0 {
			pos = l
		}
	}
	if !info.allowed {
		reason, ok := refusedReasons[info.name]
		if !ok {
			reason = info.name + " is not allowed"
		}
		return refuse(pos, info.name, reason)
	}
	if info.since > w.v.version {
		return w.v.tooNew(info, pos)
	}
	w.depth++
	if w.depth > w.maxDepth {
		return refuse(pos, "nesting depth", "the statement's parse tree is nested deeper than the limit")
	}
	if info.checked {
		if r := w.check(m, ctx, pos); r != nil {
			return r
		}
	}
	if info.name != "Node" && info.name != "List" {
		ctx = info.name
	}
	r := w.visitFields(m, info, ctx, pos)
	w.depth--
	return r
}

// visitFields visits every populated message-typed field of m. A Node
// is a oneof wrapper, so only its set member is looked at; other messages
// have their fields tried in turn (cheaper than Range, which allocates a
// closure per message).
func (w *walker) visitFields(m protoreflect.Message, info *nodeInfo, ctx string, pos int) *Refusal {
	if info.oneof != nil {
		if fd := m.WhichOneof(info.oneof); fd != nil {
			return w.visitField(m, fd, ctx, pos)
		}
		return nil
	}
	for _, fd := range info.msgFields {
		if !m.Has(fd) {
			continue
		}
		if r := w.visitField(m, fd, ctx, pos); r != nil {
			return r
		}
	}
	return nil
}

func (w *walker) visitField(m protoreflect.Message, fd protoreflect.FieldDescriptor, ctx string, pos int) *Refusal {
	switch {
	case fd.IsMap():
		return refuse(pos, string(fd.Name()), "map field "+string(fd.Name())+" is not known to the walker")
	case fd.IsList():
		l := m.Get(fd).List()
		for i := 0; i < l.Len(); i++ {
			if r := w.visit(l.Get(i).Message(), ctx, pos); r != nil {
				return r
			}
		}
		return nil
	default:
		return w.visit(m.Get(fd).Message(), ctx, pos)
	}
}

// check applies the type-specific rules to an allowed message.
func (w *walker) check(m protoreflect.Message, ctx string, pos int) *Refusal {
	switch n := m.Interface().(type) {
	case *pg_query.FuncCall:
		return w.v.checkFunc(n.Funcname, pos)
	case *pg_query.A_Expr:
		return checkOperator(names(n.Name), pos)
	case *pg_query.SubLink: // x op ANY (SELECT ...)
		return checkOperator(names(n.OperName), pos)
	case *pg_query.SortBy: // ORDER BY x USING op
		return checkOperator(names(n.UseOp), pos)
	case *pg_query.ColumnRef: // rel.f: f(rel) when rel has no column f
		if len(n.Fields) > 1 {
			return w.v.checkAttrCalls(names(n.Fields[1:]), pos)
		}
	case *pg_query.A_Indirection: // (expr).f: f(expr)
		return w.v.checkAttrCalls(names(n.Indirection), pos)
	case *pg_query.TypeName:
		if len(n.Names) > 1 && n.Names[0].GetString_().GetSval() != "pg_catalog" {
			return refuse(pos, qualified(n.Names), "type "+qualified(n.Names)+
				" is not allowed (a schema-qualified type outside pg_catalog may run user code in its input function)")
		}
		if n.PctType {
			return refuse(pos, "%TYPE", "%TYPE type references are not allowed")
		}
	case *pg_query.DefElem:
		if ctx != "ExplainStmt" {
			return refuse(pos, "DefElem", "option "+n.Defname+" is not allowed here")
		}
	case *pg_query.ExplainStmt:
		return w.v.checkExplain(n)
	case *pg_query.RangeVar:
		return checkRelation(n.Schemaname, n.Relname, pos)
	case *pg_query.RangeTableSample:
		if len(n.Method) > 2 || (len(n.Method) == 2 && n.Method[0].GetString_().GetSval() != "pg_catalog") ||
			!tablesampleMethods[n.Method[len(n.Method)-1].GetString_().GetSval()] {
			return refuse(pos, "TABLESAMPLE "+qualified(n.Method),
				"TABLESAMPLE method "+qualified(n.Method)+" is not allowed (only bernoulli and system)")
		}
	}
	return nil
}

// checkFunc refuses a call unless its name, as the parser resolved it
// (case-folded, quotes and Unicode escapes removed), is allowed.
func (v *Validator) checkFunc(name []*pg_query.Node, pos int) *Refusal {
	parts := make([]string, len(name))
	for i, n := range name {
		parts[i] = n.GetString_().GetSval()
	}
	return v.checkFuncName(parts, pos)
}

// checkFuncName is checkFunc on the name parts as strings; both walks use it.
func (v *Validator) checkFuncName(name []string, pos int) *Refusal {
	allowed := false
	switch len(name) {
	case 1:
		fn := name[0]
		allowed = v.builtin(fn) || v.extraFuncs[fn]
	case 2:
		schema, fn := name[0], name[1]
		if schema == "pg_catalog" {
			allowed = v.builtin(fn) || v.extraFuncs[schema+"."+fn]
		} else {
			allowed = v.extraFuncs[schema+"."+fn]
		}
	}
	if !allowed {
		q := strings.Join(name, ".")
		return refuse(pos, q, "function "+q+" is not allowed (not on the allowlist of side-effect-free functions)")
	}
	return nil
}

// checkExplain enforces the EXPLAIN options: known names only, and
// ANALYZE (which executes the statement) only when the operator allows it.
func (v *Validator) checkExplain(n *pg_query.ExplainStmt) *Refusal {
	for _, o := range n.Options {
		d := o.GetDefElem()
		if d == nil {
			continue // the walk refuses the non-DefElem node
		}
		if !explainOptions[d.Defname] {
			return refuse(int(d.Location), "EXPLAIN "+d.Defname, "EXPLAIN option "+d.Defname+" is not allowed")
		}
		if d.Defname == "analyze" && !v.opts.AllowExplainAnalyze && !isFalse(d.Arg) {
			return refuse(int(d.Location), "EXPLAIN ANALYZE",
				"EXPLAIN ANALYZE executes the statement and is not enabled on this server; use EXPLAIN without ANALYZE")
		}
	}
	return nil
}

// isFalse reports whether an option argument is an explicit false, as
// PostgreSQL's defGetBoolean reads it. A missing argument means true.
func isFalse(arg *pg_query.Node) bool {
	if arg == nil {
		return false
	}
	switch a := arg.Node.(type) {
	case *pg_query.Node_Boolean:
		return !a.Boolean.Boolval
	case *pg_query.Node_Integer:
		return a.Integer.Ival == 0
	case *pg_query.Node_String_:
		return isFalseWord(a.String_.Sval)
	}
	return false
}

// isFalseWord reports whether a string option argument means false.
func isFalseWord(s string) bool {
	switch strings.ToLower(s) {
	case "false", "off", "f", "fa", "fal", "fals", "of", "n", "no", "0":
		return true
	}
	return false
}

// builtin tells whether fn is on the allowlist and in the server's
// release: an allowlisted function of a newer release would be a user
// function of that name to the server.
func (v *Validator) builtin(fn string) bool {
	return builtinFunctions[fn] && functionSince[fn] <= v.version
}

// tooNew refuses a node of SQL/JSON syntax newer than the server.
func (v *Validator) tooNew(info *nodeInfo, pos int) *Refusal {
	return refuse(pos, info.name, fmt.Sprintf("%s is PostgreSQL %d syntax and the server is %d: "+
		"to its parser this is a call of a function found through the search_path", info.name, info.since/10000, v.version/10000))
}

// names is a name list's strings.
func names(list []*pg_query.Node) []string {
	out := make([]string, len(list))
	for i, n := range list {
		out[i] = n.GetString_().GetSval()
	}
	return out
}

// checkOperator allows an operator that is PostgreSQL's own: by a name
// pg_catalog has (builtinOperators), unqualified or in pg_catalog. Any
// other name can only be a user-defined operator, which runs its
// function.
func checkOperator(name []string, pos int) *Refusal {
	if len(name) == 0 {
		return nil
	}
	q := strings.Join(name, ".")
	if len(name) > 1 && name[0] != "pg_catalog" {
		return refuse(pos, "OPERATOR("+q+")",
			"operator "+q+" is not allowed (only built-in operators, unqualified or in pg_catalog)")
	}
	if op := name[len(name)-1]; !builtinOperators[op] {
		return refuse(pos, op, "operator "+op+" is not allowed (not one of PostgreSQL's built-in operators: a user-defined operator runs its function)")
	}
	return nil
}

// qualified joins a name list with dots: ["pg_catalog", "pg_sleep"]
// becomes "pg_catalog.pg_sleep".
func qualified(names []*pg_query.Node) string {
	if len(names) == 1 {
		return names[0].GetString_().GetSval()
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n.GetString_().GetSval()
	}
	return strings.Join(parts, ".")
}
