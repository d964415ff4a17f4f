// Command perfrun times a query set over several paths (native pgx, mcpg's
// executor, run_select through real MCP clients) and streams the samples
// as JSON lines (docs/formats.md) for perfstat.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
