// Command mcpg is the PostgreSQL MCP server's command line: "mcpg serve"
// serves the read-only tools of pkg/mcpserver on stdio or streamable HTTP
// (docs/mcpg.md), and "mcpg check"
// says whether SQL statements would be accepted by the server's read-only
// validator (pkg/safesql).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// A closed stdout pipe surfaces as EPIPE from Write, which run turns
	// into a quiet exit, instead of killing the process.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
