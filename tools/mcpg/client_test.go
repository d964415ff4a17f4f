package main

import (
	"context"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// initialize opens an MCP session on the started client c.
func initialize(t *testing.T, ctx context.Context, c *client.Client) *mcp.InitializeResult {
	t.Helper()
	var init mcp.InitializeRequest
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	info, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// stdioClient runs the test binary as "mcpg serve" with env added to its
// environment and opens a session over its stdin and stdout; the client
// is closed at the end of the test.
func stdioClient(t *testing.T, ctx context.Context, env ...string) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	c, err := client.NewStdioMCPClient(os.Args[0], append([]string{"MCPG_TEST_AS_MAIN=1"}, env...), "serve")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, initialize(t, ctx, c)
}

// httpClient opens a session with "mcpg serve --http" on addr, sending
// headers with every request; the client is closed at the end of the
// test.
func httpClient(t *testing.T, ctx context.Context, addr string, headers map[string]string) *client.Client {
	t.Helper()
	c, err := client.NewStreamableHttpClient("http://"+addr+"/mcp", transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	initialize(t, ctx, c)
	return c
}
