// Command tpchgen writes TPC-H tables byte-identical to dbgen 2.14.0, plus
// the matching PostgreSQL schema and queries.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/qpkit/qpkit/pkg/pipe"
)

func main() {
	// Let a closed stdout pipe surface as EPIPE from Write, which run
	// turns into a quiet exit, instead of killing the process.
	signal.Ignore(syscall.SIGPIPE)
	// A 1 MiB pipe spares the reader (psql) two dozen wake-ups per 1.5 MB
	// block, a measurable share of a streaming load's CPU. Failure is harmless.
	_ = pipe.Grow(os.Stdout, 1<<20)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
