// Command qprouter is a PostgreSQL pooling proxy: it authenticates clients
// itself and pools server connections per (database, user) in session or
// transaction mode. See docs/qprouter.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, hup, nil)
	stop()
	os.Exit(code)
}
