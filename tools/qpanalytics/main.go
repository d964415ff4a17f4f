// Command qpanalytics keeps a DuckDB columnar copy of chosen PostgreSQL
// tables and answers analytical SQL on it over the PostgreSQL wire
// protocol. See docs/qpanalytics.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
