// Command perfhtml renders a perfstat summary (summary.jsonl) as one
// self-contained HTML page: perfhtml < summary.jsonl > perf.html.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// Let a closed stdout pipe surface as EPIPE from Write, which run
	// turns into a quiet exit, instead of killing the process.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
