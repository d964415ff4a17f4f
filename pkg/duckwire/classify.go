// Classification: splitting a Query message into statements and telling queries from session chatter and writes.

package duckwire

import (
	"fmt"
	"github.com/qpkit/qpkit/pkg/safesql"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// kind is what a statement asks of the server.
type kind int

const (
	kindQuery      kind = iota // runs on DuckDB
	kindEmpty                  // nothing but whitespace and comments
	kindSet                    // SET / RESET
	kindShow                   // SHOW
	kindBegin                  // BEGIN / START TRANSACTION
	kindCommit                 // COMMIT / END
	kindRollback               // ROLLBACK / ABORT
	kindNoop                   // accepted and ignored, answered with tag
	kindRefused                // a write or an unsupported command: err
	kindCopyOut                // COPY ... TO STDOUT: query's rows in copy's format
	kindSavepoint              // SAVEPOINT name
	kindRelease                // RELEASE [SAVEPOINT] name
	kindRollbackTo             // ROLLBACK TO [SAVEPOINT] name
	kindDeallocate             // DEALLOCATE name | ALL
	kindDiscardAll             // DISCARD ALL
	kindSetConfig              // SELECT set_config('name', 'value', bool), ...: sets
)

// statement is one SQL statement and what to do with it.
type statement struct {
	sql   string
	kind  kind
	tag   string      // command tag of local statements
	name  string      // setting of SET/SHOW; "" for RESET ALL
	value string      // SET's value; "" with reset
	reset bool        // SET ... TO DEFAULT / RESET
	local bool        // SET LOCAL
	err   error       // why kindRefused
	query string      // kindCopyOut: the SELECT whose rows it writes
	copy  *copyOpts   // kindCopyOut: the format
	sets  []statement // kindSetConfig: one SET (or SET LOCAL) per call
	cols  []string    // kindSetConfig: the column names
}

// maxParseDepth and maxParseChain bound what reaches libpg_query, whose C
// code recurses once per level of the tree: 50,000 terms of 1+1+... (200
// KB, under the message limit) overflowed the thread's stack and killed
// the server with every client's session (about 23,500 levels do on an 8
// MiB stack). Far above what analytical SQL needs, far below the crash;
// PostgreSQL itself answers such text with 54001 too.
const (
	maxParseDepth = 500
	maxParseChain = 8000
)

// split parses sql (PostgreSQL syntax) into classified statements. Text
// pg_query cannot parse is kept as one query, for DuckDB to accept (its own
// syntax) or reject.
func split(sql string) []statement {
	if r := safesql.CheckParseDepth(sql, maxParseDepth, maxParseChain); r != nil {
		return []statement{{sql: sql, kind: kindRefused, err: errorf("54001", "statement is too complex: "+r.Reason)}}
	}
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return []statement{{sql: sql, kind: kindQuery}}
	}
	if len(tree.Stmts) == 0 {
		return []statement{{sql: sql, kind: kindEmpty}}
	}
	out := make([]statement, 0, len(tree.Stmts))
	for _, raw := range tree.Stmts {
		start := int(raw.StmtLocation)
		end := len(sql)
		if raw.StmtLen > 0 {
			end = start + int(raw.StmtLen)
		}
		st := classify(raw.Stmt)
		st.sql = strings.TrimSpace(sql[start:end])
		out = append(out, st)
	}
	return out
}

// readOnlyTags names the write statements refused with 25006.
var readOnlyTags = map[string]string{
	"InsertStmt": "INSERT", "UpdateStmt": "UPDATE", "DeleteStmt": "DELETE", "MergeStmt": "MERGE",
	"CreateStmt": "CREATE TABLE", "CreateTableAsStmt": "CREATE TABLE AS", "DropStmt": "DROP",
	"AlterTableStmt": "ALTER TABLE", "TruncateStmt": "TRUNCATE", "IndexStmt": "CREATE INDEX",
	"ViewStmt": "CREATE VIEW", "CreateSchemaStmt": "CREATE SCHEMA", "CreateSeqStmt": "CREATE SEQUENCE",
	"CreateFunctionStmt": "CREATE FUNCTION", "GrantStmt": "GRANT", "RenameStmt": "ALTER",
	"CommentStmt": "COMMENT", "CreatedbStmt": "CREATE DATABASE", "CreateRoleStmt": "CREATE ROLE",
	"AlterRoleStmt": "ALTER ROLE", "RefreshMatViewStmt": "REFRESH MATERIALIZED VIEW",
	"CreateExtensionStmt": "CREATE EXTENSION", "CompositeTypeStmt": "CREATE TYPE", "CreateEnumStmt": "CREATE TYPE",
}

func classify(n *pg_query.Node) statement {
	switch {
	case n.GetSelectStmt() != nil:
		if n.GetSelectStmt().GetIntoClause() != nil {
			return refused(codeReadOnly, "cannot execute SELECT INTO in a read-only transaction")
		}
		if st, ok := setConfigStatement(n.GetSelectStmt()); ok {
			return st
		}
		return statement{kind: kindQuery}
	case n.GetExplainStmt() != nil:
		return statement{kind: kindQuery, tag: "EXPLAIN"}
	case n.GetVariableSetStmt() != nil:
		return setStatement(n.GetVariableSetStmt())
	case n.GetVariableShowStmt() != nil:
		return statement{kind: kindShow, tag: "SHOW", name: n.GetVariableShowStmt().GetName()}
	case n.GetTransactionStmt() != nil:
		switch n.GetTransactionStmt().GetKind() {
		case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN:
			return statement{kind: kindBegin, tag: "BEGIN"}
		case pg_query.TransactionStmtKind_TRANS_STMT_START:
			return statement{kind: kindBegin, tag: "START TRANSACTION"}
		case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
			return statement{kind: kindCommit, tag: "COMMIT"}
		case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
			return statement{kind: kindRollback, tag: "ROLLBACK"}
		case pg_query.TransactionStmtKind_TRANS_STMT_SAVEPOINT:
			return statement{kind: kindSavepoint, tag: "SAVEPOINT", name: n.GetTransactionStmt().GetSavepointName()}
		case pg_query.TransactionStmtKind_TRANS_STMT_RELEASE:
			return statement{kind: kindRelease, tag: "RELEASE", name: n.GetTransactionStmt().GetSavepointName()}
		case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK_TO:
			return statement{kind: kindRollbackTo, tag: "ROLLBACK", name: n.GetTransactionStmt().GetSavepointName()}
		}
		return refused(codeNotSupported, "two-phase commit is not supported by qpanalytics")
	case n.GetDiscardStmt() != nil:
		switch n.GetDiscardStmt().GetTarget() {
		case pg_query.DiscardMode_DISCARD_PLANS:
			return statement{kind: kindNoop, tag: "DISCARD PLANS"}
		case pg_query.DiscardMode_DISCARD_SEQUENCES:
			return statement{kind: kindNoop, tag: "DISCARD SEQUENCES"}
		case pg_query.DiscardMode_DISCARD_TEMP:
			return statement{kind: kindNoop, tag: "DISCARD TEMP"}
		}
		return statement{kind: kindDiscardAll, tag: "DISCARD ALL"}
	case n.GetDeallocateStmt() != nil:
		if n.GetDeallocateStmt().GetName() == "" {
			return statement{kind: kindDeallocate, tag: "DEALLOCATE ALL"}
		}
		return statement{kind: kindDeallocate, tag: "DEALLOCATE", name: n.GetDeallocateStmt().GetName()}
	case n.GetUnlistenStmt() != nil:
		return statement{kind: kindNoop, tag: "UNLISTEN"}
	case n.GetCopyStmt() != nil:
		return copyStatement(n.GetCopyStmt())
	}
	name := nodeName(n)
	if tag, ok := readOnlyTags[name]; ok {
		return refused(codeReadOnly, "cannot execute "+tag+" in a read-only transaction")
	}
	if strings.HasPrefix(name, "Create") || strings.HasPrefix(name, "Alter") || strings.HasPrefix(name, "Drop") {
		return refused(codeReadOnly, "cannot execute "+strings.TrimSuffix(name, "Stmt")+" in a read-only transaction")
	}
	return refused(codeNotSupported, strings.TrimSuffix(name, "Stmt")+" is not supported by qpanalytics: only queries run on the analytics copy")
}

// nodeName is the node's type name, e.g. "InsertStmt".
func nodeName(n *pg_query.Node) string {
	s := strings.TrimPrefix(typeName(n.GetNode()), "*pg_query.Node_")
	return s
}

func refused(code, msg string) statement {
	return statement{kind: kindRefused, err: errorf(code, msg)}
}

func setStatement(v *pg_query.VariableSetStmt) statement {
	switch v.GetKind() {
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		return statement{kind: kindSet, tag: "SET", name: v.GetName(), value: setValue(v.GetArgs()), local: v.GetIsLocal()}
	case pg_query.VariableSetKind_VAR_SET_DEFAULT:
		return statement{kind: kindSet, tag: "SET", name: v.GetName(), reset: true, local: v.GetIsLocal()}
	case pg_query.VariableSetKind_VAR_RESET:
		return statement{kind: kindSet, tag: "RESET", name: v.GetName(), reset: true}
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		return statement{kind: kindSet, tag: "RESET", reset: true}
	}
	return statement{kind: kindNoop, tag: "SET"} // SET TRANSACTION ..., SET ... FROM CURRENT
}

// setConfigStatement reads SELECT [pg_catalog.]set_config('name',
// 'value', is_local), ... with nothing else (what qprouter replays): each
// call is a SET, or SET LOCAL when is_local is true. A select list of
// set_config calls with an argument that is not such a literal is
// refused; any other SELECT is not one (false).
func setConfigStatement(sel *pg_query.SelectStmt) (statement, bool) {
	if len(sel.GetTargetList()) == 0 || len(sel.GetFromClause()) > 0 || sel.GetWhereClause() != nil ||
		len(sel.GetGroupClause()) > 0 || sel.GetHavingClause() != nil || len(sel.GetSortClause()) > 0 ||
		sel.GetLimitCount() != nil || sel.GetLimitOffset() != nil || sel.GetWithClause() != nil ||
		len(sel.GetDistinctClause()) > 0 || len(sel.GetWindowClause()) > 0 || len(sel.GetLockingClause()) > 0 ||
		sel.GetOp() != pg_query.SetOperation_SETOP_NONE {
		return statement{}, false
	}
	st := statement{kind: kindSetConfig, tag: "SELECT"}
	for _, t := range sel.GetTargetList() {
		rt := t.GetResTarget()
		call := rt.GetVal().GetFuncCall()
		if call == nil || !isSetConfig(call.GetFuncname()) {
			return statement{}, false
		}
		args := call.GetArgs()
		if len(args) != 3 || call.GetAggStar() || call.GetAggDistinct() || call.GetFuncVariadic() ||
			call.GetOver() != nil || call.GetAggFilter() != nil || len(call.GetAggOrder()) > 0 {
			return refused(codeNotSupported, setConfigLiterals), true
		}
		name, value, local := args[0].GetAConst().GetSval(), args[1].GetAConst().GetSval(), args[2].GetAConst().GetBoolval()
		if name == nil || value == nil || local == nil {
			return refused(codeNotSupported, setConfigLiterals), true
		}
		st.sets = append(st.sets, statement{kind: kindSet, tag: "SET", name: name.GetSval(), value: value.GetSval(), local: local.GetBoolval()})
		col := rt.GetName()
		if col == "" {
			col = "set_config"
		}
		st.cols = append(st.cols, col)
	}
	return st, true
}

const setConfigLiterals = "qpanalytics supports set_config('name', 'value', true|false) with literal arguments only"

// isSetConfig tells whether a function name is set_config or
// pg_catalog.set_config.
func isSetConfig(name []*pg_query.Node) bool {
	switch len(name) {
	case 1:
		return name[0].GetString_().GetSval() == "set_config"
	case 2:
		return name[0].GetString_().GetSval() == "pg_catalog" && name[1].GetString_().GetSval() == "set_config"
	}
	return false
}

// setValue renders SET's arguments as PostgreSQL's SHOW would: strings
// unquoted, lists joined with ", ".
func setValue(args []*pg_query.Node) string {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		c := a.GetAConst()
		if c == nil && a.GetTypeCast() != nil {
			c = a.GetTypeCast().GetArg().GetAConst()
		}
		switch {
		case c == nil:
			parts = append(parts, "")
		case c.GetSval() != nil:
			parts = append(parts, c.GetSval().GetSval())
		case c.GetIval() != nil:
			parts = append(parts, strconv.Itoa(int(c.GetIval().GetIval())))
		case c.GetFval() != nil:
			parts = append(parts, c.GetFval().GetFval())
		case c.GetBoolval() != nil:
			parts = append(parts, map[bool]string{true: "on", false: "off"}[c.GetBoolval().GetBoolval()])
		}
	}
	return strings.Join(parts, ", ")
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }
