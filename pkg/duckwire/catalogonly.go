// Catalog-only queries: lookups that read nothing but system catalogs run on DuckDB's pg_catalog directly.

package duckwire

import (
	"github.com/qpkit/qpkit/pkg/safesql"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// catalogOnly reports whether every relation sql reads is a system catalog
// (pg_catalog.*, information_schema.*, or an unqualified pg_*). Drivers
// send such lookups (a type by OID, the tables of a schema); the dialect
// refuses catalogs in general because user queries mixing them with data
// would see DuckDB's contents, but for a lookup alone DuckDB's pg_catalog
// (PostgreSQL's built-in type OIDs, the copy's tables) is the right answer.
func catalogOnly(sql string) bool {
	lower := strings.ToLower(sql)
	if !strings.Contains(lower, "pg_") && !strings.Contains(lower, "information_schema") {
		return false
	}
	if safesql.CheckParseDepth(sql, maxParseDepth, maxParseChain) != nil {
		return false
	}
	tree, err := pg_query.Parse(sql)
	if err != nil || len(tree.Stmts) != 1 || tree.Stmts[0].Stmt.GetSelectStmt() == nil {
		return false
	}
	seen, ok := 0, true
	ctes := map[string]bool{}
	walk(tree.Stmts[0].Stmt.ProtoReflect(), func(m protoreflect.Message) {
		switch v := m.Interface().(type) {
		case *pg_query.CommonTableExpr:
			ctes[strings.ToLower(v.GetCtename())] = true
		case *pg_query.RangeVar:
			seen++
			schema, rel := strings.ToLower(v.GetSchemaname()), strings.ToLower(v.GetRelname())
			switch {
			case schema == "pg_catalog" || schema == "information_schema":
			case schema == "" && (strings.HasPrefix(rel, "pg_") || ctes[rel]):
			default:
				ok = false
			}
		case *pg_query.RangeFunction:
			ok = false // table functions could read anything
		}
	})
	return ok && seen > 0
}

// walk visits m and every message below it, parents first.
func walk(m protoreflect.Message, visit func(protoreflect.Message)) {
	visit(m)
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				walk(l.Get(i).Message(), visit)
			}
		case fd.Message() != nil && !fd.IsMap():
			walk(v.Message(), visit)
		}
		return true
	})
}
