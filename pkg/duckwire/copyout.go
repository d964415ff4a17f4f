// COPY (query) TO STDOUT and COPY table TO STDOUT: a query's rows as COPY text or CSV, written as PostgreSQL writes them.

package duckwire

import (
	"database/sql/driver"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
)

// copyOpts are the options of a COPY TO STDOUT.
type copyOpts struct {
	csv           bool
	header        bool
	delim         byte
	null          string
	quote, escape byte
}

// copyStatement classifies a COPY: only COPY (query) TO STDOUT and COPY
// table [(columns)] TO STDOUT, in text or CSV, run (the rows come from the
// query as any query's do); COPY FROM is a write, files and programs are
// the server's, binary is not offered.
func copyStatement(c *pg_query.CopyStmt) statement {
	if c.GetIsFrom() {
		return refused(codeReadOnly, "cannot execute COPY FROM in a read-only transaction")
	}
	if c.GetFilename() != "" || c.GetIsProgram() {
		return refused(codeNotSupported, "COPY to a file or a program is not supported by qpanalytics: use COPY ... TO STDOUT (psql's \\copy)")
	}
	opts, err := copyOptions(c.GetOptions())
	if err != nil {
		return statement{kind: kindRefused, err: err}
	}
	query, err := copySource(c)
	if err != nil {
		return statement{kind: kindRefused, err: err}
	}
	return statement{kind: kindCopyOut, tag: "COPY", query: query, copy: opts}
}

// copySource is the SELECT whose rows a COPY writes.
func copySource(c *pg_query.CopyStmt) (string, error) {
	if q := c.GetQuery(); q != nil {
		sql, err := pg_query.Deparse(&pg_query.ParseResult{Version: treeVersion(), Stmts: []*pg_query.RawStmt{{Stmt: q}}})
		if err != nil {
			return "", errorf(codeSyntax, "COPY query: "+err.Error())
		}
		return sql, nil
	}
	rel := c.GetRelation()
	name := quoteIdent(rel.GetRelname())
	if s := rel.GetSchemaname(); s != "" {
		name = quoteIdent(s) + "." + name
	}
	cols := "*"
	if list := c.GetAttlist(); len(list) > 0 {
		names := make([]string, len(list))
		for i, n := range list {
			names[i] = quoteIdent(n.GetString_().GetSval())
		}
		cols = strings.Join(names, ", ")
	}
	return "SELECT " + cols + " FROM " + name, nil
}

// treeVersion is the parse tree version Deparse wants, from the parser.
var treeVersion = sync.OnceValue(func() int32 {
	tree, err := pg_query.Parse("SELECT 1")
	if err != nil {
		return 0
	}
	return tree.GetVersion()
})

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// copyOptions reads FORMAT, HEADER, DELIMITER, NULL, QUOTE and ESCAPE
// (both syntaxes: WITH (FORMAT csv, HEADER) and WITH CSV HEADER), with
// PostgreSQL's defaults and checks; other options are refused by name.
func copyOptions(defs []*pg_query.Node) (*copyOpts, error) {
	o := &copyOpts{delim: '\t', null: `\N`}
	var delim, null, quote, escape *string
	seen := map[string]bool{}
	for _, n := range defs {
		d := n.GetDefElem()
		if d == nil {
			continue
		}
		if seen[d.GetDefname()] {
			return nil, errorf(codeSyntax, "conflicting or redundant options")
		}
		seen[d.GetDefname()] = true
		val, given := defValue(d.GetArg())
		switch d.GetDefname() {
		case "format":
			switch strings.ToLower(val) {
			case "text":
			case "csv":
				o.csv = true
			case "binary":
				return nil, errorf(codeNotSupported, "COPY format binary is not supported by qpanalytics: use text or csv")
			default:
				return nil, errorf(codeInvalidParam, fmt.Sprintf("COPY format %q not recognized", val))
			}
		case "header":
			if !given {
				o.header = true
				break
			}
			b, ok := boolValue(val)
			if !ok && strings.EqualFold(val, "match") {
				return nil, errorf(codeNotSupported, "cannot use \"match\" with HEADER in COPY TO")
			}
			if !ok {
				return nil, errorf(codeSyntax, "header requires a Boolean value or \"match\"")
			}
			o.header = b
		case "delimiter":
			delim = &val
		case "null":
			null = &val
		case "quote":
			quote = &val
		case "escape":
			escape = &val
		default:
			return nil, errorf(codeNotSupported, fmt.Sprintf("COPY option %q is not supported by qpanalytics (FORMAT, HEADER, DELIMITER, NULL, QUOTE and ESCAPE are)", d.GetDefname()))
		}
	}
	if o.csv {
		o.delim, o.null, o.quote = ',', "", '"'
	}
	if delim != nil {
		if len(*delim) != 1 {
			return nil, errorf(codeInvalidParam, "COPY delimiter must be a single one-byte character")
		}
		o.delim = (*delim)[0]
	}
	if o.delim == '\n' || o.delim == '\r' {
		return nil, errorf(codeInvalidParam, "COPY delimiter cannot be newline or carriage return")
	}
	if null != nil {
		if strings.ContainsAny(*null, "\r\n") {
			return nil, errorf(codeInvalidParam, "COPY null representation cannot use newline or carriage return")
		}
		o.null = *null
	}
	if !o.csv {
		if quote != nil || escape != nil {
			return nil, errorf(codeNotSupported, "COPY quote and escape are available only in CSV mode")
		}
		if o.delim == '\\' || (o.delim >= 'a' && o.delim <= 'z') || (o.delim >= '0' && o.delim <= '9') || o.delim == '.' {
			return nil, errorf(codeInvalidParam, fmt.Sprintf("COPY delimiter cannot be %q", string(o.delim)))
		}
		if err := nullChecks(o); err != nil {
			return nil, err
		}
		return o, nil
	}
	if quote != nil {
		if len(*quote) != 1 {
			return nil, errorf(codeInvalidParam, "COPY quote must be a single one-byte character")
		}
		o.quote = (*quote)[0]
	}
	o.escape = o.quote
	if escape != nil {
		if len(*escape) != 1 {
			return nil, errorf(codeInvalidParam, "COPY escape must be a single one-byte character")
		}
		o.escape = (*escape)[0]
	}
	if o.delim == o.quote {
		return nil, errorf(codeInvalidParam, "COPY delimiter and quote must be different")
	}
	if err := nullChecks(o); err != nil {
		return nil, err
	}
	return o, nil
}

// nullChecks are PostgreSQL's last checks of the options: a NULL string
// holding the delimiter (it would read back as several fields) or, in CSV,
// the quote character.
func nullChecks(o *copyOpts) error {
	if strings.IndexByte(o.null, o.delim) >= 0 {
		return errorf(codeNotSupported, "COPY delimiter must not appear in the NULL specification")
	}
	if o.csv && strings.IndexByte(o.null, o.quote) >= 0 {
		return errorf(codeNotSupported, "CSV quote character must not appear in the NULL specification")
	}
	return nil
}

// defValue is an option's argument as text; false when it has none.
func defValue(n *pg_query.Node) (string, bool) {
	switch {
	case n == nil:
		return "", false
	case n.GetString_() != nil:
		return n.GetString_().GetSval(), true
	case n.GetBoolean() != nil:
		return strconv.FormatBool(n.GetBoolean().GetBoolval()), true
	case n.GetInteger() != nil:
		return strconv.Itoa(int(n.GetInteger().GetIval())), true
	}
	return "", true
}

// boolValue reads a Boolean option as PostgreSQL's defGetBoolean: true,
// false, on, off, 1 or 0 (not yes or no).
func boolValue(s string) (bool, bool) {
	switch strings.ToLower(s) {
	case "true", "on", "1":
		return true, true
	case "false", "off", "0":
		return false, true
	}
	return false, false
}

// copyOut sends rs as CopyOutResponse, a CopyData per row (and one for the
// header), CopyDone and CommandComplete "COPY n"; false when it failed
// (the error has been sent).
func (ss *session) copyOut(rs resultSet, o *copyOpts, t0 time.Time) bool {
	cols := rs.columns()
	at := ss.begin('H')
	ss.out = append(ss.out, 0)
	ss.out = binary.BigEndian.AppendUint16(ss.out, uint16(len(cols)))
	for range cols {
		ss.out = binary.BigEndian.AppendUint16(ss.out, 0)
	}
	ss.end(at)
	single := len(cols) == 1
	if o.header {
		at := ss.begin('d')
		for i, c := range cols {
			if i > 0 {
				ss.out = append(ss.out, o.delim)
			}
			ss.out = o.appendField(ss.out, []byte(c.name), single)
		}
		ss.out = append(ss.out, '\n')
		ss.end(at)
	}
	loc := ss.settings.loc
	dst := make([]driver.Value, len(cols))
	var field []byte
	var n int64
	ss.setStreaming(true)
	defer ss.setStreaming(false)
	for ; ; n++ {
		if n&255 == 255 && ss.canceled.Load() {
			return ss.copyFailed(errorf(codeQueryCanceled, "canceling statement due to user request"), t0)
		}
		if err := rs.next(dst); err != nil {
			if err == io.EOF {
				break
			}
			return ss.copyFailed(err, t0)
		}
		at := ss.begin('d')
		for i, v := range dst[:len(cols)] {
			if i > 0 {
				ss.out = append(ss.out, o.delim)
			}
			if v == nil {
				ss.out = append(ss.out, o.null...)
				continue
			}
			field = appendText(field[:0], v, cols[i].typ, loc)
			ss.out = o.appendField(ss.out, field, single)
		}
		ss.out = append(ss.out, '\n')
		ss.end(at)
		if len(ss.out) >= flushAt {
			if err := ss.flush(); err != nil {
				return ss.copyFailed(err, t0)
			}
		}
	}
	ss.end(ss.begin('c'))
	ss.srv.metrics.query(outcomeOK, time.Since(t0))
	ss.commandComplete("COPY " + strconv.FormatInt(n, 10))
	return true
}

func (ss *session) copyFailed(err error, t0 time.Time) bool {
	ss.srv.metrics.query(outcomeError, time.Since(t0))
	ss.sendError(err)
	return false
}

// appendField writes one non-null value: COPY text's backslash escapes,
// or CSV's quoting when the value needs it (it holds the delimiter, the
// quote, a line break, equals the NULL string, or is \. alone on a line).
func (o *copyOpts) appendField(dst, v []byte, single bool) []byte {
	if !o.csv {
		for _, c := range v {
			switch e := strings.IndexByte("\b\f\n\r\t\v", c); {
			case e >= 0:
				dst = append(dst, '\\', "bfnrtv"[e])
			case c == '\\' || c == o.delim:
				dst = append(dst, '\\', c)
			default:
				dst = append(dst, c)
			}
		}
		return dst
	}
	quote := string(v) == o.null || (single && string(v) == `\.`)
	for _, c := range v {
		if quote {
			break
		}
		quote = c == o.delim || c == o.quote || c == '\n' || c == '\r'
	}
	if !quote {
		return append(dst, v...)
	}
	dst = append(dst, o.quote)
	for _, c := range v {
		if c == o.quote || c == o.escape {
			dst = append(dst, o.escape)
		}
		dst = append(dst, c)
	}
	return append(dst, o.quote)
}
