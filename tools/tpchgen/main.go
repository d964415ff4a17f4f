// Command tpchgen writes TPC-H tables byte-identical to dbgen 2.14.0, plus
// the matching PostgreSQL schema and queries.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Let a closed stdout pipe surface as EPIPE from Write, which run
	// turns into a quiet exit, instead of killing the process.
	signal.Ignore(syscall.SIGPIPE)
	growPipe(os.Stdout)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
