// Choosing how many readers and writers run when the caller does not say.

package snapshot

import (
	"net"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// AutoWorkers chooses the number of readers and writers for cpus CPUs:
//
//	readers = min(2*cpus, maxAutoReaders), writers = min(cpus, maxAutoWriters)
//
// The first rule tried, never more busy threads than CPUs (readers*(1+local)
// + writers <= cpus), measured badly: on 2 vCPUs with PostgreSQL local it
// gives 1 reader and 1 writer, which copied the 1,000,000 x 68 benchmark
// table at 0.66 of the best setting of the readers x writers grid and TPC-H
// SF 1 lineitem at 1.3 times a single-connection COPY drain, while 4
// readers and 2 writers reached 0.93 of the grid's best and copied lineitem
// faster than that drain (docs/benchmarks.md). A COPY backend spends much
// of its time waiting (on its socket's flow control and on reads), so two
// per CPU keep the CPUs busy; DuckDB's appenders block at their flushes, so
// one writer per CPU overlaps them. The caps keep large machines within
// typical max_connections and memory. local is kept for the caller's log
// and for a future remote rule; the measurements were all local.
func AutoWorkers(cpus int, local bool) (readers, writers int) {
	_ = local
	cpus = max(1, cpus)
	return min(2*cpus, maxAutoReaders), min(cpus, maxAutoWriters)
}

// Caps of AutoWorkers.
const (
	maxAutoReaders = 16
	maxAutoWriters = 8
)

// sourceIsLocal reports whether the PostgreSQL server of cfg runs on this
// machine: a unix socket, a loopback address or this host's name.
func sourceIsLocal(cfg *pgconn.Config) bool {
	host := cfg.Host
	if strings.HasPrefix(host, "/") || host == "localhost" {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.IsLoopback()
	}
	name, err := os.Hostname()
	return err == nil && strings.EqualFold(name, host)
}
