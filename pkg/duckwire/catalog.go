// Catalog answers: the pg_catalog queries psql sends for \dt and \d, which DuckDB's pg_catalog views cannot run.

package duckwire

import (
	"context"
	"database/sql/driver"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// MetaSchema is the DuckDB schema holding qpanalytics' own metadata; it is
// hidden from catalog listings.
const MetaSchema = "_qpanalytics"

var (
	reRelname = regexp.MustCompile(`c\.relname OPERATOR\(pg_catalog\.~\) '((?:[^']|'')*)'`)
	reNspname = regexp.MustCompile(`n\.nspname OPERATOR\(pg_catalog\.~\) '((?:[^']|'')*)'`)
	reViewdef = regexp.MustCompile(`^SELECT pg_catalog\.pg_get_viewdef\('(\d+)'::pg_catalog\.oid, true\);?\s*$`)
	reViewSQL = regexp.MustCompile(`(?is)^\s*CREATE\s+(?:OR\s+REPLACE\s+)?(?:TEMP(?:ORARY)?\s+)?VIEW\s+.*?\s+AS\s+(.*?);?\s*$`)
	reDatname = regexp.MustCompile(`d\.datname OPERATOR\(pg_catalog\.~\) '((?:[^']|'')*)'`)
	reRelOID  = regexp.MustCompile(`(?:c\.oid|a\.attrelid) = '(\d+)'`)
	reRelkind = regexp.MustCompile(`c\.relkind IN \(([^)]*)\)`)
)

// emptyCatalogs are catalogs that are always empty here (no policies,
// statistics objects, publications, inheritance, indexes, triggers, rules,
// constraints); psql's \d asks about them.
var emptyCatalogs = []string{
	"pg_catalog.pg_policy", "pg_catalog.pg_statistic_ext", "pg_catalog.pg_publication",
	"pg_catalog.pg_inherits", "pg_catalog.pg_index", "pg_catalog.pg_trigger",
	"pg_catalog.pg_rewrite", "pg_catalog.pg_constraint",
}

// intercept answers the psql catalog queries it recognizes; ok is false
// for every other statement (the common case costs one Contains).
func (ss *session) intercept(sql string) (resultSet, bool) {
	if !strings.Contains(sql, "pg_catalog.pg_") {
		return nil, false
	}
	switch {
	case strings.Contains(sql, `pg_catalog.pg_get_userbyid(c.relowner) as "Owner"`) && strings.Contains(sql, "FROM pg_catalog.pg_class c"):
		return ss.listRelations(sql), true
	case strings.Contains(sql, "SELECT c.oid,\n  n.nspname,\n  c.relname\nFROM pg_catalog.pg_class c"):
		return ss.findRelations(sql), true
	case strings.HasPrefix(sql, "SELECT c.relchecks, c.relkind,"):
		return ss.relationInfo(sql), true
	case strings.Contains(sql, "FROM pg_catalog.pg_attribute a\nWHERE a.attrelid = '"):
		return ss.relationColumns(sql), true
	case strings.Contains(sql, `pg_catalog.pg_get_userbyid(n.nspowner) AS "Owner"`) && strings.Contains(sql, "FROM pg_catalog.pg_namespace n"):
		return ss.listSchemas(sql), true
	case strings.Contains(sql, `pg_catalog.pg_get_userbyid(d.datdba) as "Owner"`) && strings.Contains(sql, "FROM pg_catalog.pg_database d"):
		return ss.listDatabases(sql), true
	case strings.HasPrefix(sql, "SELECT pg_catalog.pg_get_viewdef("):
		if m := reViewdef.FindStringSubmatch(sql); m != nil {
			return ss.viewDefinition(m[1]), true
		}
	}
	var toks []tok // scanned once, when a catalog's name is in the text
	for _, c := range emptyCatalogs {
		if !strings.Contains(sql, c) {
			continue
		}
		if toks == nil {
			var ok bool
			if toks, ok = scanTokens(sql); !ok {
				return nil, false
			}
		}
		if namesCatalog(toks, c[len("pg_catalog."):]) {
			return textRows([]string{"?column?"}), true
		}
	}
	return nil, false
}

// namesCatalog tells whether toks refer to pg_catalog.name as PostgreSQL's
// scanner reads them: not inside a string constant or a comment.
func namesCatalog(toks []tok, name string) bool {
	for i := 0; i+2 < len(toks); i++ {
		if toks[i].text == "pg_catalog" && toks[i+1].text == "." && toks[i+2].text == name {
			return true
		}
	}
	return false
}

// relation is a user table or view of the served database.
type relation struct {
	oid          int64
	schema, name string
	view         bool
}

// relations lists the tables and views, without the metadata schema.
func (ss *session) relations() []relation {
	rows, err := ss.rows(`SELECT table_oid, schema_name, table_name, false FROM duckdb_tables()
		WHERE NOT internal AND NOT temporary AND schema_name <> '` + MetaSchema + `' AND database_name = current_database()
		UNION ALL SELECT view_oid, schema_name, view_name, true FROM duckdb_views()
		WHERE NOT internal AND NOT temporary AND schema_name <> '` + MetaSchema + `' AND database_name = current_database()
		ORDER BY 2, 3`)
	if err != nil {
		ss.srv.cfg.Log.Warn("catalog lookup failed", "err", err)
		return nil
	}
	out := make([]relation, 0, len(rows))
	for _, r := range rows {
		oid, _ := r[0].(int64)
		s, _ := r[1].(string)
		n, _ := r[2].(string)
		v, _ := r[3].(bool)
		out = append(out, relation{oid: oid, schema: s, name: n, view: v})
	}
	return out
}

// matching keeps the relations psql's name patterns select.
func matching(sql string, rels []relation) []relation {
	var reName, reSchema *regexp.Regexp
	if m := reRelname.FindStringSubmatch(sql); m != nil {
		reName, _ = regexp.Compile(strings.ReplaceAll(m[1], "''", "'"))
	}
	if m := reNspname.FindStringSubmatch(sql); m != nil {
		reSchema, _ = regexp.Compile(strings.ReplaceAll(m[1], "''", "'"))
	}
	var out []relation
	for _, r := range rels {
		if reName != nil && !reName.MatchString(r.name) || reSchema != nil && !reSchema.MatchString(r.schema) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// listRelations answers \dt, \dv and \d without a name.
func (ss *session) listRelations(sql string) resultSet {
	kinds := "'r','v'"
	if m := reRelkind.FindStringSubmatch(sql); m != nil {
		kinds = m[1]
	}
	r := textRows([]string{"Schema", "Name", "Type", "Owner"})
	for _, rel := range matching(sql, ss.relations()) {
		kind, label := "'r'", "table"
		if rel.view {
			kind, label = "'v'", "view"
		}
		if strings.Contains(kinds, kind) {
			r.rows = append(r.rows, []driver.Value{rel.schema, rel.name, label, ss.settings.get("session_authorization")})
		}
	}
	return r
}

// findRelations answers \d name's first query: oid, schema, name.
func (ss *session) findRelations(sql string) resultSet {
	r := textRows([]string{"oid", "nspname", "relname"})
	for _, rel := range matching(sql, ss.relations()) {
		r.rows = append(r.rows, []driver.Value{strconv.FormatInt(rel.oid, 10), rel.schema, rel.name})
	}
	return r
}

func (ss *session) relationByOID(sql string) (relation, bool) {
	m := reRelOID.FindStringSubmatch(sql)
	if m == nil {
		return relation{}, false
	}
	oid, _ := strconv.ParseInt(m[1], 10, 64)
	for _, rel := range ss.relations() {
		if rel.oid == oid {
			return rel, true
		}
	}
	return relation{}, false
}

// relationInfo answers \d name's pg_class row (psql 15's 15 columns).
func (ss *session) relationInfo(sql string) resultSet {
	r := textRows([]string{"relchecks", "relkind", "relhasindex", "relhasrules", "relhastriggers",
		"relrowsecurity", "relforcerowsecurity", "relhasoids", "relispartition", "reloptions",
		"reltablespace", "reloftype", "relpersistence", "relreplident", "amname"})
	rel, ok := ss.relationByOID(sql)
	if !ok {
		return r
	}
	kind := "r"
	if rel.view {
		kind = "v"
	}
	r.rows = append(r.rows, []driver.Value{"0", kind, "f", "f", "f", "f", "f", "f", "f", "", "0", "", "p", "d", "duckdb"})
	return r
}

// relationColumns answers \d name's pg_attribute query.
func (ss *session) relationColumns(sql string) resultSet {
	names := []string{"attname", "format_type", "pg_get_expr", "attnotnull", "attcollation", "attidentity", "attgenerated"}
	var extra []driver.Value // \d+ columns: storage, compression (psql 14+), statistics target, comment
	if strings.Contains(sql, "a.attstorage") {
		names, extra = append(names, "attstorage"), append(extra, "p")
		if strings.Contains(sql, "a.attcompression") {
			names, extra = append(names, "attcompression"), append(extra, "")
		}
		names, extra = append(names, "attstattarget", "col_description"), append(extra, nil, nil)
	}
	r := textRows(names)
	rel, ok := ss.relationByOID(sql)
	if !ok {
		return r
	}
	rows, err := ss.rows(`SELECT column_name, data_type, is_nullable, column_default FROM duckdb_columns()
		WHERE table_oid = ` + strconv.FormatInt(rel.oid, 10) + ` ORDER BY column_index`)
	if err != nil {
		ss.srv.cfg.Log.Warn("catalog lookup failed", "err", err)
		return r
	}
	for _, c := range rows {
		name, _ := c[0].(string)
		typ, _ := c[1].(string)
		nullable, _ := c[2].(bool)
		notNull := "t"
		if nullable {
			notNull = "f"
		}
		row := []driver.Value{name, typeOfName(typ).name, c[3], notNull, nil, "", ""}
		r.rows = append(r.rows, append(row, extra...))
	}
	return r
}

// psqlPattern is the regular expression psql made of a \dn or \l
// pattern, or nil when the command had none (or Go cannot compile it).
func psqlPattern(re *regexp.Regexp, sql string) *regexp.Regexp {
	m := re.FindStringSubmatch(sql)
	if m == nil {
		return nil
	}
	p, _ := regexp.Compile(strings.ReplaceAll(m[1], "''", "'"))
	return p
}

// listSchemas answers \dn [pattern]: the served database's schemas.
func (ss *session) listSchemas(sql string) resultSet {
	pat := psqlPattern(reNspname, sql)
	r := textRows([]string{"Name", "Owner"})
	rows, err := ss.rows(`SELECT DISTINCT schema_name FROM duckdb_schemas() WHERE schema_name NOT IN ('` + MetaSchema +
		`', 'pg_catalog', 'information_schema') AND database_name = current_database() ORDER BY 1`)
	if err != nil {
		ss.srv.cfg.Log.Warn("catalog lookup failed", "err", err)
		return r
	}
	for _, row := range rows {
		if name, _ := row[0].(string); pat != nil && !pat.MatchString(name) {
			continue
		}
		r.rows = append(r.rows, []driver.Value{row[0], ss.settings.get("session_authorization")})
	}
	return r
}

// viewDefinition answers psql's pg_get_viewdef(oid, true) of \d+ view:
// the view's query as DuckDB keeps it.
func (ss *session) viewDefinition(oid string) resultSet {
	r := textRows([]string{"pg_get_viewdef"})
	rows, err := ss.rows(`SELECT sql FROM duckdb_views() WHERE view_oid = ` + oid + ` AND database_name = current_database()`)
	if err != nil || len(rows) == 0 {
		return r
	}
	def, _ := rows[0][0].(string)
	if m := reViewSQL.FindStringSubmatch(def); m != nil {
		def = " " + m[1] + ";"
	}
	r.rows = append(r.rows, []driver.Value{def})
	return r
}

// listDatabases answers \l [pattern]: the one database a session sees.
func (ss *session) listDatabases(sql string) resultSet {
	if pat := psqlPattern(reDatname, sql); pat != nil && !pat.MatchString(ss.settings.db) {
		return textRows([]string{"Name", "Owner", "Encoding", "Collate", "Ctype", "ICU Locale", "Locale Provider", "Access privileges"})
	}
	return textRows([]string{"Name", "Owner", "Encoding", "Collate", "Ctype", "ICU Locale", "Locale Provider", "Access privileges"},
		[]string{ss.settings.db, ss.settings.get("session_authorization"), "UTF8", "C", "C", "", "libc", ""})
}

// rows runs an internal catalog query on the session's DuckDB connection.
func (ss *session) rows(sql string) ([][]driver.Value, error) {
	rows, err := ss.duck.QueryContext(context.Background(), sql, nil)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]driver.Value
	for {
		dst := make([]driver.Value, len(rows.Columns()))
		if err := rows.Next(dst); err != nil {
			if err == io.EOF {
				return out, nil
			}
			return nil, err
		}
		out = append(out, dst)
	}
}
