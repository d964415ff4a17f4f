// Node allowlist: the parse-tree message types a validated statement may contain.

package safesql

import "strings"

// allowedNodes lists every pg_query parse-tree message type that may
// appear in an accepted statement. The walker refuses any message whose
// type is not here, so a node type added by a newer parser, or one this
// list forgot, is refused rather than silently passed. Entries marked
// "checked" are allowed only after the extra checks in walk.go.
var allowedNodes = wordSet(`
Node List String Integer Float Boolean BitString A_Const
SelectStmt ExplainStmt VariableShowStmt
ResTarget ColumnRef A_Star A_Expr A_Indices A_Indirection A_ArrayExpr
ParamRef TypeCast TypeName CollateClause
FuncCall NamedArgExpr
RangeVar RangeSubselect RangeFunction JoinExpr Alias
RangeTableSample ColumnDef
SubLink CommonTableExpr WithClause CTESearchClause CTECycleClause
SortBy WindowDef GroupingSet GroupingFunc
CaseExpr CaseWhen BoolExpr NullTest BooleanTest CoalesceExpr MinMaxExpr
RowExpr SQLValueFunction XmlExpr XmlSerialize
DefElem
JsonFormat JsonReturning JsonValueExpr JsonIsPredicate JsonBehavior
JsonOutput JsonArgument JsonFuncExpr JsonTablePathSpec JsonTable
JsonTableColumn JsonKeyValue JsonParseExpr JsonScalarExpr
JsonSerializeExpr JsonObjectConstructor JsonArrayConstructor
JsonArrayQueryConstructor JsonAggConstructor JsonObjectAgg JsonArrayAgg
`)

// Notes on the choices above:
//   - FuncCall: checked, the function must be on the function allowlist.
//   - A_Expr: checked, OPERATOR(schema.op) needs schema pg_catalog.
//   - TypeName: checked, a schema-qualified type needs schema pg_catalog,
//     because a cast runs the type's input function.
//   - DefElem: checked, only as an EXPLAIN option from explainOptions.
//   - ColumnDef: appears in column definition lists of FROM f() AS t(a int)
//     and XMLTABLE/JSON_TABLE columns; its children are walked like any other.
//   - RangeTableSample: TABLESAMPLE with the built-in methods only.
//   - XML and SQL/JSON constructs compute values and run no SQL; the
//     *_to_xml functions that do run SQL are functions, refused by name.

// explainOptions are the EXPLAIN options accepted in EXPLAIN (...).
var explainOptions = wordSet(`analyze verbose costs settings generic_plan
buffers serialize wal timing summary memory format`)

// tablesampleMethods are the built-in TABLESAMPLE methods; an extension's
// method is a function and is refused like one.
var tablesampleMethods = wordSet(`bernoulli system`)

// refusedReasons gives a clearer reason for node types that agents reach
// for most often; any other refused type gets "<Type> is not allowed".
var refusedReasons = map[string]string{
	"RangeTableFunc":    "XMLTABLE is not allowed: libxml2 evaluates its XPath without checking for interrupts, so statement_timeout could not stop it",
	"LockingClause":     "locking clauses (FOR UPDATE, FOR NO KEY UPDATE, FOR SHARE, FOR KEY SHARE) are not allowed",
	"IntoClause":        "SELECT INTO creates a table and is not allowed",
	"InsertStmt":        "INSERT is not allowed (only SELECT, EXPLAIN and SHOW)",
	"UpdateStmt":        "UPDATE is not allowed (only SELECT, EXPLAIN and SHOW)",
	"DeleteStmt":        "DELETE is not allowed (only SELECT, EXPLAIN and SHOW)",
	"MergeStmt":         "MERGE is not allowed (only SELECT, EXPLAIN and SHOW)",
	"VariableSetStmt":   "SET and RESET change session state and are not allowed",
	"TransactionStmt":   "transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT) is not allowed",
	"CopyStmt":          "COPY is not allowed",
	"DoStmt":            "DO runs procedural code and is not allowed",
	"CallStmt":          "CALL runs a procedure and is not allowed",
	"LockStmt":          "LOCK is not allowed",
	"PrepareStmt":       "PREPARE is not allowed",
	"ExecuteStmt":       "EXECUTE is not allowed",
	"DeallocateStmt":    "DEALLOCATE is not allowed",
	"DeclareCursorStmt": "cursors (DECLARE) are not allowed",
	"FetchStmt":         "cursors (FETCH, MOVE) are not allowed",
	"ClosePortalStmt":   "cursors (CLOSE) are not allowed",
	"ListenStmt":        "LISTEN is not allowed",
	"UnlistenStmt":      "UNLISTEN is not allowed",
	"NotifyStmt":        "NOTIFY is not allowed",
	"VacuumStmt":        "VACUUM and ANALYZE are not allowed",
	"LoadStmt":          "LOAD is not allowed",
	"CreateTableAsStmt": "CREATE TABLE AS is not allowed",
	"SetToDefault":      "DEFAULT is only valid in INSERT and UPDATE",
	"MergeSupportFunc":  "merge_action() is only valid in MERGE",
	"MultiAssignRef":    "multiple-column assignment is only valid in UPDATE",
	"CurrentOfExpr":     "WHERE CURRENT OF needs a cursor and is not allowed",
}

// nodeSince are the SQL/JSON nodes of libpg_query's parser that older
// servers' parsers do not make, by the server_version_num of the release
// that brought them. To an older server, JSON_VALUE(...) or
// JSON_OBJECT(...) is a call of a function named so.
var nodeSince = func() map[string]int {
	m := map[string]int{}
	for _, n := range strings.Fields(`JsonFormat JsonReturning JsonValueExpr JsonIsPredicate JsonOutput
		JsonKeyValue JsonObjectConstructor JsonArrayConstructor JsonArrayQueryConstructor
		JsonAggConstructor JsonObjectAgg JsonArrayAgg`) {
		m[n] = 160000
	}
	for _, n := range strings.Fields(`JsonBehavior JsonArgument JsonFuncExpr JsonTablePathSpec JsonTable
		JsonTableColumn JsonParseExpr JsonScalarExpr JsonSerializeExpr`) {
		m[n] = 170000
	}
	return m
}()
