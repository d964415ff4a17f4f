// The tools' schemas, run_select, and how errors become tool results.

package mcpserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/qpkit/qpkit/pkg/pgexec"
	"github.com/qpkit/qpkit/pkg/safesql"
)

// readOnly are the annotations every tool carries: it reads the one
// configured database and changes nothing.
func readOnly(title string) []mcp.ToolOption {
	return []mcp.ToolOption{
		mcp.WithTitleAnnotation(title),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	}
}

func (h *handler) register(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("run_select", append(readOnly("Run a read-only query"),
		mcp.WithDescription("Run one read-only SQL statement (SELECT, WITH, VALUES, TABLE, SHOW, EXPLAIN). "+
			`Returns TSV: a name:type header line, rows in PostgreSQL text form (COPY escapes, \N = NULL), `+
			"then (N rows[, truncated by rows|bytes][; cursor: C])."),
		mcp.WithString("sql", mcp.Required(), mcp.Description("One statement; use $1, $2... for params.")),
		// items: strict clients (VS Code, OpenAI) reject an array without;
		// a value of any JSON type binds (arrays and objects as JSON text).
		mcp.WithArray("params", mcp.Description("Values for $1, $2..."),
			mcp.Items(map[string]any{"type": []string{"string", "number", "boolean", "null", "array", "object"}})),
		mcp.WithInteger("max_rows", mcp.Min(1), mcp.Description("Row limit, at most the server's "+strconv.Itoa(h.cfg.MaxRows)+".")),
		mcp.WithString("cursor", mcp.Description("The cursor of a truncated result: returns the next page of the same sql and params "+
			"(the statement runs again; use an ORDER BY over a unique key for stable pages).")),
		mcp.WithString("format", mcp.Enum("tsv", "json"), mcp.Description("Output format, default tsv.")),
	)...), h.tool("run_select", h.runSelect))
	s.AddTool(mcp.NewTool("explain_query", append(readOnly("Explain a query"),
		mcp.WithDescription("Show PostgreSQL's plan for one read-only statement (EXPLAIN, text format). "+
			"analyze=true runs it for actual timings, if the server allows."),
		mcp.WithString("sql", mcp.Required(), mcp.Description("One statement as for run_select, without EXPLAIN; no $n params.")),
		mcp.WithBoolean("analyze", mcp.Description("EXPLAIN ANALYZE: execute it; off unless the server allows it.")),
	)...), h.tool("explain_query", h.explainQuery))
	s.AddTool(mcp.NewTool("list_schemas", append(readOnly("List schemas"),
		mcp.WithDescription("List non-system schemas, one per line, with comments."),
	)...), h.tool("list_schemas", h.listSchemas))
	s.AddTool(mcp.NewTool("list_tables", append(readOnly("List tables"),
		mcp.WithDescription("List tables, views and materialized views: name, kind, estimated rows, comment."),
		mcp.WithString("schema", mcp.Description("Only this schema; default all non-system schemas.")),
		mcp.WithString("pattern", mcp.Description("ILIKE pattern on the name, e.g. 'order%'.")),
	)...), h.tool("list_tables", h.listTables))
	s.AddTool(mcp.NewTool("describe_table", append(readOnly("Describe a table"),
		mcp.WithDescription("Columns, types, nullability, defaults, keys, foreign keys and indexes as DDL-like text."),
		mcp.WithString("name", mcp.Required(), mcp.Description("Table or view name, optionally schema-qualified.")),
	)...), h.tool("describe_table", h.describeTable))
}

// outcome is what a tool tells its wrapper about a call, for the log, the
// audit record and the metrics.
type outcome struct {
	rows    int
	timing  pgexec.Timing // the executor's segments, when timed
	timed   bool
	err     error  // why the call failed: a refusal, a query error, a bad argument
	verdict string // set only when err does not decide it
}

// fail records err and returns it as an isError result.
func (o *outcome) fail(err error) *mcp.CallToolResult {
	o.err = err
	return errorResult(err)
}

// bad records a bad argument and returns it as an isError result.
func (o *outcome) bad(msg string) *mcp.CallToolResult {
	return o.fail(errors.New(msg))
}

// toolFunc is a tool's handler; it fills in o.
type toolFunc func(ctx context.Context, req mcp.CallToolRequest, o *outcome) (*mcp.CallToolResult, error)

// tool wraps a tool handler with the rate limit, one log record, one
// audit record and the metrics of each call. The fast path recognises its
// closures by their code (toolCode), so it must not be inlined.
//
//go:noinline
func (h *handler) tool(name string, fn toolFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		ctx, span := h.startSpan(ctx, name)
		session := ""
		if cs := server.ClientSessionFromContext(ctx); cs != nil {
			session = cs.SessionID()
		}
		var o outcome
		var res *mcp.CallToolResult
		var err error
		if d := h.limits.wait(session, principal(ctx), start); d > 0 {
			o.verdict = VerdictRateLimited
			o.err = errors.New(rateLimitText(d))
			res = mcp.NewToolResultError(o.err.Error())
		} else {
			res, err = fn(ctx, req, &o)
		}
		dur := time.Since(start)
		verdict := o.verdict
		switch {
		case verdict != "":
		case o.err != nil && isRefusal(o.err):
			verdict = VerdictRefuse
		case o.err != nil || err != nil || res == nil || res.IsError:
			verdict = VerdictError
		default:
			verdict = VerdictAllow
		}
		size := 0
		if res != nil {
			for _, c := range res.Content {
				if tc, ok := c.(mcp.TextContent); ok {
					size += len(tc.Text)
				}
			}
		}
		h.cfg.Metrics.observe(name, verdict, dur)
		if h.log.Enabled(ctx, slog.LevelDebug) {
			h.log.Debug("tool call", "tool", name, "dur_ms", dur.Milliseconds(), "verdict", verdict)
		}
		if h.cfg.Audit == nil && span == nil {
			return res, err
		}
		r := AuditRecord{
			Type: "audit", Version: 1, Time: start.UTC(), Session: session, Principal: principal(ctx),
			Tool: name, Verdict: verdict, Rows: o.rows, Bytes: size, DurNS: dur.Nanoseconds(),
		}
		if sql := req.GetString("sql", ""); sql != "" {
			sum := sha256.Sum256([]byte(sql))
			r.SQLSHA256 = hex.EncodeToString(sum[:])
			r.SQL = truncateUTF8(sql, maxAuditSQL)
		}
		switch {
		case o.err != nil:
			r.Error = errorText(o.err)
		case err != nil:
			r.Error = err.Error()
		}
		endSpan(span, &r, &o)
		if h.cfg.Audit != nil {
			h.cfg.Audit.Log(r)
		}
		return res, err
	}
}

// truncateUTF8 cuts s to at most n bytes on a rune boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func isRefusal(err error) bool {
	var r *safesql.Refusal
	return errors.As(err, &r)
}

func (h *handler) runSelect(ctx context.Context, req mcp.CallToolRequest, o *outcome) (*mcp.CallToolResult, error) {
	sql, err := req.RequireString("sql")
	if err != nil {
		return o.bad(err.Error()), nil
	}
	args := arguments(req)
	var params []any
	if p, ok := args["params"]; ok && p != nil {
		params, ok = p.([]any)
		if !ok {
			return o.bad("params must be an array"), nil
		}
		params = wholeParams(params)
	}
	format := pgexec.FormatTSV
	f, _, err := optString(args, "format")
	if err != nil {
		return o.bad(`format must be "tsv" or "json"`), nil
	}
	switch f {
	case "", "tsv":
	case "json":
		format = pgexec.FormatJSON
	default:
		return o.bad(`format must be "tsv" or "json"`), nil
	}
	maxRows := h.cfg.MaxRows
	if n, ok, err := optInt(args, "max_rows"); err != nil || ok && n < 1 {
		return o.bad("max_rows must be a positive integer"), nil
	} else if ok {
		maxRows = min(n, h.cfg.MaxRows)
	}
	cur, _, err := optString(args, "cursor")
	if err != nil {
		return o.bad(err.Error()), nil
	}
	ex, err := h.executor(maxRows)
	if err != nil {
		return nil, err
	}
	ex = ex.WithFormat(format)
	offset := 0
	if cur != "" {
		if offset, err = h.cursors.offset(cur, sql, params); err != nil {
			return o.fail(err), nil
		}
	}
	res, err := runResilient(ctx, func() (pgexec.Result, error) { return ex.RunSkip(ctx, sql, params, offset, nil) })
	o.timing, o.timed = res.Timing, true
	if err != nil {
		return o.fail(err), nil
	}
	o.rows = res.Rows
	doc := res.Doc
	// A page that returned nothing (one row above max_bytes) has no next
	// page: its cursor would repeat it.
	if res.Truncated && res.Rows > 0 && offset+res.Rows <= pgexec.MaxSkip {
		doc = withCursor(doc, h.cursors.issue(sql, params, offset+res.Rows), format)
	}
	if h.cfg.FenceResults {
		return mcp.NewToolResultText(fence(string(doc))), nil
	}
	return mcp.NewToolResultText(string(doc)), nil
}

// explainOff is the isError text of analyze=true when it is disabled.
const explainOff = "EXPLAIN ANALYZE is disabled on this server (it executes the statement); " +
	"ask without analyze, or start mcpg with --allow-explain-analyze"

func (h *handler) explainQuery(ctx context.Context, req mcp.CallToolRequest, o *outcome) (*mcp.CallToolResult, error) {
	sql, err := req.RequireString("sql")
	if err != nil {
		return o.bad(err.Error()), nil
	}
	analyze, err := optBool(arguments(req), "analyze")
	if err != nil {
		return o.bad(err.Error()), nil
	}
	if analyze && !h.cfg.AllowExplainAnalyze {
		return o.bad(explainOff), nil
	}
	// Check the statement alone first, so a refusal's offset is in the
	// caller's text.
	kind, r := h.validator.Check(sql)
	if r != nil {
		return o.fail(r), nil
	}
	if kind != safesql.KindSelect {
		return o.bad("explain_query takes a SELECT-like statement without EXPLAIN; got " + string(kind)), nil
	}
	// The EXPLAIN statement goes through the validator again in Run.
	prefix := "EXPLAIN (FORMAT TEXT) "
	if analyze {
		prefix = "EXPLAIN (ANALYZE, FORMAT TEXT) "
	}
	rows, truncated, err := h.query(ctx, prefix+sql)
	if err != nil {
		return o.fail(withoutPrefix(err, prefix)), nil
	}
	o.rows = len(rows)
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(str(r[0]) + "\n")
	}
	if truncated {
		b.WriteString("(plan truncated)\n")
	}
	return mcp.NewToolResultText(b.String()), nil
}

// withoutPrefix returns err with its position counted in the text after
// prefix, the caller's, instead of in prefix+text; a position inside
// prefix is dropped. Other errors (one wrapped as unavailable has no
// position) are returned as they are.
func withoutPrefix(err error, prefix string) error {
	switch e := err.(type) {
	case *pgexec.QueryError:
		if e.Position > 0 {
			c := *e // PostgreSQL counts characters from 1
			c.Position = max(c.Position-int32(utf8.RuneCountInString(prefix)), 0)
			return &c
		}
	case *safesql.Refusal:
		if e.Position >= 0 {
			c := *e // a byte offset from 0
			c.Position -= len(prefix)
			if c.Position < 0 {
				c.Position = -1
			}
			return &c
		}
	}
	return err
}

// errorResult turns a validator refusal or a query error into a tool
// result with isError set and one short line.
func errorResult(err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(errorText(err))
}

// errorText is errorLine's text on one line: a line break in a message,
// detail or hint (a value quoted in it, a function's RAISE) becomes a
// space.
func errorText(err error) string {
	return lineBreaks.Replace(errorLine(err))
}

var lineBreaks = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

func errorLine(err error) string {
	var r *safesql.Refusal
	if errors.As(err, &r) {
		return r.Error() // "refused at offset N: reason"
	}
	var qe *pgexec.QueryError
	if !errors.As(err, &qe) {
		return err.Error()
	}
	if qe.TimedOut || qe.Canceled {
		return qe.Message
	}
	var b strings.Builder
	b.WriteString("ERROR")
	if qe.SQLState != "" {
		b.WriteString(" " + qe.SQLState)
	}
	b.WriteString(": ")
	if qe.Stage == pgexec.StageEnvelope {
		b.WriteString("read-only transaction setup failed, statement not run: ")
	}
	b.WriteString(qe.Message)
	if qe.Position > 0 {
		fmt.Fprintf(&b, " (at character %d)", qe.Position)
	}
	if qe.Detail != "" {
		b.WriteString(" DETAIL: " + qe.Detail)
	}
	if qe.Hint != "" {
		b.WriteString(" HINT: " + qe.Hint)
	}
	return b.String()
}
