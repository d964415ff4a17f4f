// Command perfstat summarizes perfrun's benchmark samples: percentiles with
// bootstrap intervals per (path, query, phase, concurrency), each path's
// overhead against native, and whether the server's t_db agrees with native.
// With --compare it tests two runs against each other. The records it
// writes are documented in docs/formats.md, "Benchmark records".
//
//	perfstat samples.jsonl > summary.jsonl
//	perfstat --format text samples.jsonl
//	perfstat --compare --format text old.jsonl new.jsonl
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// A closed stdout pipe surfaces as EPIPE from Write, which run turns
	// into a quiet exit, instead of killing the process.
	signal.Ignore(syscall.SIGPIPE)
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
