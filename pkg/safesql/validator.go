// Validator: decides whether one SQL statement is safe to run read-only.

// Package safesql decides whether a SQL text is one read-only statement
// that an MCP server may pass to PostgreSQL on behalf of an agent.
//
// It parses with libpg_query (PostgreSQL's own parser, via pg_query_go)
// and accepts only SELECT, EXPLAIN of a SELECT, and SHOW. The parse tree
// is walked in full against an allowlist of node types and an allowlist
// of side-effect-free built-in functions; anything not on a list is
// refused with a *Refusal that says what and where. See docs/safesql.md.
package safesql

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"github.com/pganalyze/pg_query_go/v6/parser"
)

// Options configures a Validator. The zero value is the safe default.
type Options struct {
	// AllowExplainAnalyze permits EXPLAIN ANALYZE, which executes the
	// statement it explains.
	AllowExplainAnalyze bool
	// AllowFunctions adds functions to the allowlist, as PostgreSQL stores
	// their names (lower case unless created quoted). A plain name allows
	// unqualified calls only; "schema.name" allows calls qualified with
	// that schema only.
	AllowFunctions []string
	// MaxLength is the longest accepted text in bytes; 0 means 65536.
	MaxLength int
	// MaxDepth is the deepest accepted bracket nesting; 0 means 64. At
	// most 1000, because libpg_query recurses on the C stack.
	MaxDepth int
	// CacheSize is the number of verdicts remembered by exact text; 0
	// means 4096 and a negative value disables the cache.
	CacheSize int
	// ServerVersion is the server's server_version_num (150018 for
	// 15.18); 0 means PostgreSQL 15, the oldest the validator knows.
	// libpg_query is PostgreSQL 17's parser: SQL/JSON syntax and functions
	// of a newer release than the server's are refused, because to the
	// server's own parser they are calls of functions found through its
	// search_path, which a user function of that name would answer.
	ServerVersion int
}

// Defaults and limits of Options.
const (
	DefaultMaxLength = 64 << 10
	DefaultMaxDepth  = 64
	DefaultCacheSize = 4096
	maxMaxDepth      = 1000
	maxMaxLength     = 16 << 20
)

// Kind is the kind of an accepted statement.
type Kind string

// Kinds of accepted statements.
const (
	KindSelect  Kind = "select"
	KindExplain Kind = "explain"
	KindShow    Kind = "show"
)

// Validator validates statements. It is safe for concurrent use.
type Validator struct {
	opts       Options
	version    int // Options.ServerVersion, 150000 when 0
	extraFuncs map[string]bool
	treeDepth  int
	cache      *cache
}

// New returns a Validator, or an error when opts is out of range.
func New(opts Options) (*Validator, error) {
	if opts.MaxLength == 0 {
		opts.MaxLength = DefaultMaxLength
	}
	if opts.MaxDepth == 0 {
		opts.MaxDepth = DefaultMaxDepth
	}
	if opts.CacheSize == 0 {
		opts.CacheSize = DefaultCacheSize
	}
	if opts.MaxLength < 0 || opts.MaxLength > maxMaxLength {
		return nil, errors.New("safesql: MaxLength must be between 1 and " + strconv.Itoa(maxMaxLength))
	}
	if opts.MaxDepth < 0 || opts.MaxDepth > maxMaxDepth {
		return nil, errors.New("safesql: MaxDepth must be between 1 and " + strconv.Itoa(maxMaxDepth))
	}
	v := &Validator{opts: opts, version: opts.ServerVersion, extraFuncs: make(map[string]bool)}
	if v.version == 0 {
		v.version = 150000
	}
	for _, f := range opts.AllowFunctions {
		parts := strings.Split(f, ".")
		if len(parts) > 2 || f == "" || parts[0] == "" || parts[len(parts)-1] == "" {
			return nil, errors.New("safesql: bad function name " + strconv.Quote(f) + " (want name or schema.name)")
		}
		v.extraFuncs[f] = true
	}
	// The tree-depth limit covers what the text checks allow: each bracket
	// level and each chained operator adds a few messages.
	v.treeDepth = 16*opts.MaxDepth + 4*maxChain
	c, err := newCache(opts.CacheSize)
	if err != nil {
		return nil, err
	}
	v.cache = c
	return v, nil
}

// Validate returns nil if sql is one allowed statement, or a *Refusal.
func (v *Validator) Validate(sql string) error {
	if _, r := v.Check(sql); r != nil {
		return r
	}
	return nil
}

// Check is Validate that also returns the kind of an accepted statement.
// The returned *Refusal is the caller's to keep.
func (v *Validator) Check(sql string) (Kind, *Refusal) {
	if c, ok := v.cache.get(sql); ok {
		if c.err != nil {
			r := *c.err
			return "", &r
		}
		return c.kind, nil
	}
	kind, r := v.check(sql)
	v.cache.put(sql, verdict{kind: kind, err: r})
	if r != nil {
		cp := *r
		return "", &cp
	}
	return kind, nil
}

// check validates without the cache.
func (v *Validator) check(sql string) (Kind, *Refusal) { return v.checkJSON(sql) }

// checkProto validates without the cache, through pg_query.Parse and the
// protobuf walk. It is the cross-check of checkJSON in the tests.
func (v *Validator) checkProto(sql string) (Kind, *Refusal) {
	if r := checkHygiene(sql, v.opts.MaxLength, v.opts.MaxDepth); r != nil {
		return "", r
	}
	tree, err := pg_query.Parse(sql)
	if err != nil {
		return "", parseRefusal(sql, err)
	}
	switch len(tree.Stmts) {
	case 0:
		return "", refuse(-1, "empty", "no statement: the text is empty or only comments")
	case 1:
	default:
		return "", refuse(skipSpace(sql, int(tree.Stmts[1].StmtLocation)), "multiple statements",
			"only one statement is allowed; send statements one at a time")
	}
	raw := tree.Stmts[0]
	pos := int(raw.StmtLocation)
	var kind Kind
	switch s := raw.Stmt.GetNode().(type) {
	case *pg_query.Node_SelectStmt:
		kind = KindSelect
	case *pg_query.Node_VariableShowStmt:
		kind = KindShow
	case *pg_query.Node_ExplainStmt:
		kind = KindExplain
		if _, ok := s.ExplainStmt.GetQuery().GetNode().(*pg_query.Node_SelectStmt); !ok {
			return "", refuse(pos, "EXPLAIN", "EXPLAIN is allowed only of a SELECT")
		}
	default:
		w := walker{v: v, maxDepth: v.treeDepth}
		if r := w.visit(raw.Stmt.ProtoReflect(), "", pos); r != nil {
			return "", r
		}
		return "", refuse(pos, "statement", "only SELECT, EXPLAIN and SHOW are allowed")
	}
	w := walker{v: v, maxDepth: v.treeDepth}
	if r := w.visit(raw.Stmt.ProtoReflect(), "", skipSpace(sql, pos)); r != nil {
		return "", r
	}
	return kind, nil
}

// parseRefusal turns a parser error into a refusal. libpg_query reports
// a 1-based character position; Refusal wants a 0-based byte offset.
func parseRefusal(sql string, err error) *Refusal {
	msg := err.Error()
	pos := -1
	var pe *parser.Error
	if errors.As(err, &pe) && pe.Cursorpos > 0 {
		pos = 0
		for i := 1; i < pe.Cursorpos && pos < len(sql); i++ {
			_, n := utf8.DecodeRuneInString(sql[pos:])
			pos += n
		}
		if pos >= len(sql) {
			pos = len(sql) - 1
		}
	}
	if strings.Contains(msg, "memory exhausted") || strings.Contains(msg, "recursion depth") {
		return refuse(pos, "nesting depth", "the statement is nested too deeply for the parser")
	}
	return refuse(pos, "syntax", "syntax error: "+msg)
}

// skipSpace moves i past white space so a position points at a token.
func skipSpace(sql string, i int) int {
	for i < len(sql) && strings.IndexByte(" \t\n\r\f\v", sql[i]) >= 0 {
		i++
	}
	if i >= len(sql) {
		return len(sql) - 1
	}
	return i
}
