// The end-to-end paths: run_select through a real MCP client session, in
// process, over stdio to an mcpg subprocess, and over streamable HTTP on a
// loopback listener.

package run

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/qpkit/qpkit/pkg/mcpserver"
	"github.com/qpkit/qpkit/pkg/pgexec"
)

type mcpPath struct {
	name string
	s    Settings
	c    *client.Client
	pool *pgxpool.Pool
	hs   *http.Server
	req  mcp.CallToolRequest
}

func (p *mcpPath) Name() string { return p.name }

// server builds mcpg's MCP server in this process on a new pool of one.
func (p *mcpPath) server(ctx context.Context) (*server.MCPServer, error) {
	pool, err := pgexec.NewPool(ctx, p.s.DatabaseURL, 1)
	if err != nil {
		return nil, err
	}
	srv, err := mcpserver.New(mcpserver.Config{Pool: pool, MaxRows: p.s.MaxRows, MaxBytes: p.s.MaxBytes, StatementTimeout: p.s.Timeout})
	if err != nil {
		pool.Close()
		return nil, err
	}
	p.pool = pool
	return srv, nil
}

func (p *mcpPath) Open(ctx context.Context) error {
	p.Close()
	var err error
	switch p.name {
	case "e2e-inproc":
		var srv *server.MCPServer
		if srv, err = p.server(ctx); err == nil {
			p.c = mcpserver.NewInProcessClient(srv) // with mcpg's fast path, as on stdio and HTTP
		}
	case "e2e-http":
		var srv *server.MCPServer
		if srv, err = p.server(ctx); err != nil {
			break
		}
		var ln net.Listener
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			break
		}
		p.hs = &http.Server{Handler: mcpserver.NewHTTPHandler(srv, mcpserver.HTTPOptions{})}
		go p.hs.Serve(ln)
		p.c, err = client.NewStreamableHttpClient("http://" + ln.Addr().String() + mcpserver.EndpointPath)
	case "e2e-stdio":
		if p.s.MCPG == "" {
			return errors.New("e2e-stdio: no mcpg binary (set --mcpg)")
		}
		p.c, err = client.NewStdioMCPClient(p.s.MCPG, nil, "serve",
			"--database-url", p.s.DatabaseURL, "--pool-size", "1",
			"--max-rows", strconv.Itoa(p.s.MaxRows), "--max-bytes", strconv.Itoa(p.s.MaxBytes),
			"--statement-timeout-ms", strconv.FormatInt(p.s.Timeout.Milliseconds(), 10))
	}
	if err != nil {
		p.Close()
		return fmt.Errorf("%s: %w", p.name, err)
	}
	if err := p.c.Start(ctx); err != nil {
		p.Close()
		return fmt.Errorf("%s: start: %w", p.name, err)
	}
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = p.s.mcpProtocol()
	init.Params.ClientInfo = mcp.Implementation{Name: "perfrun", Version: "1"}
	if _, err := p.c.Initialize(ctx, init); err != nil {
		p.Close()
		return fmt.Errorf("%s: initialize: %w", p.name, err)
	}
	if got := p.c.ProtocolVersion(); got != init.Params.ProtocolVersion {
		p.Close()
		return fmt.Errorf("%s: the server chose MCP protocol version %s, not %s", p.name, got, init.Params.ProtocolVersion)
	}
	p.req.Params.Name = "run_select"
	return nil
}

func (p *mcpPath) Call(ctx context.Context, sql string) (Result, error) {
	p.req.Params.Arguments = map[string]any{"sql": sql, "max_rows": p.s.MaxRows}
	res, err := p.c.CallTool(ctx, p.req)
	if err != nil {
		return Result{}, classify(ctx, err)
	}
	var r Result
	var text string
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			text += tc.Text
		}
	}
	r.Bytes = len(text)
	if res.IsError {
		if strings.Contains(text, "timed out") || strings.Contains(text, "deadline exceeded") {
			return r, fmt.Errorf("%w: %s", ErrTimeout, text)
		}
		return r, errors.New(text)
	}
	r.Rows = rowCount(text)
	return r, nil
}

// rowCount reads the row count from a run_select result's TSV footer,
// "(N rows...)", its last line.
func rowCount(text string) int {
	s := text[strings.LastIndexByte(text, '\n')+1:]
	if n, ok := strings.CutPrefix(s, "("); ok {
		if i := strings.IndexByte(n, ' '); i > 0 {
			if v, err := strconv.Atoi(n[:i]); err == nil {
				return v
			}
		}
	}
	return -1
}

func (p *mcpPath) Close() error {
	if p.c != nil {
		p.c.Close()
		p.c = nil
	}
	if p.hs != nil {
		p.hs.Close()
		p.hs = nil
	}
	if p.pool != nil {
		p.pool.Close()
		p.pool = nil
	}
	return nil
}
