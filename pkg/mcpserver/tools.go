// The tools' schemas, run_select, and how errors become tool results.

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

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
			"Returns compact JSON: columns once, rows as arrays, row_count, truncated."),
		mcp.WithString("sql", mcp.Required(), mcp.Description("One statement; use $1, $2... for params.")),
		mcp.WithArray("params", mcp.Description("Values for $1, $2...")),
		mcp.WithInteger("max_rows", mcp.Min(1), mcp.Description("Row limit, at most the server's "+strconv.Itoa(h.cfg.MaxRows)+".")),
	)...), h.logged("run_select", h.runSelect))
	s.AddTool(mcp.NewTool("list_schemas", append(readOnly("List schemas"),
		mcp.WithDescription("List non-system schemas, one per line, with comments."),
	)...), h.logged("list_schemas", h.listSchemas))
	s.AddTool(mcp.NewTool("list_tables", append(readOnly("List tables"),
		mcp.WithDescription("List tables, views and materialized views: name, kind, estimated rows, comment."),
		mcp.WithString("schema", mcp.Description("Only this schema; default all non-system schemas.")),
		mcp.WithString("pattern", mcp.Description("ILIKE pattern on the name, e.g. 'order%'.")),
	)...), h.logged("list_tables", h.listTables))
	s.AddTool(mcp.NewTool("describe_table", append(readOnly("Describe a table"),
		mcp.WithDescription("Columns, types, nullability, defaults, keys, foreign keys and indexes as DDL-like text."),
		mcp.WithString("name", mcp.Required(), mcp.Description("Table or view name, optionally schema-qualified.")),
	)...), h.logged("describe_table", h.describeTable))
}

// logged wraps a tool handler with one log record per call.
func (h *handler) logged(name string, fn server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		res, err := fn(ctx, req)
		isErr := res != nil && res.IsError
		h.log.Info("tool call", "tool", name, "dur_ms", time.Since(start).Milliseconds(), "is_error", isErr)
		return res, err
	}
}

func (h *handler) runSelect(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	sql, err := req.RequireString("sql")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	args := req.GetArguments()
	var params []any
	if p, ok := args["params"]; ok && p != nil {
		params, ok = p.([]any)
		if !ok {
			return mcp.NewToolResultError("params must be an array"), nil
		}
	}
	maxRows := h.cfg.MaxRows
	if _, ok := args["max_rows"]; ok {
		n, err := req.RequireInt("max_rows")
		if err != nil || n < 1 {
			return mcp.NewToolResultError("max_rows must be a positive integer"), nil
		}
		maxRows = min(n, h.cfg.MaxRows)
	}
	ex, err := h.executor(maxRows)
	if err != nil {
		return nil, err
	}
	res, err := ex.Run(ctx, sql, params, nil)
	if err != nil {
		return errorResult(err), nil
	}
	return mcp.NewToolResultText(string(res.JSON)), nil
}

// errorResult turns a validator refusal or a query error into a tool
// result with isError set and one short line.
func errorResult(err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(errorText(err))
}

func errorText(err error) string {
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
