// Choosing how many readers and writers run when the caller does not say.

package snapshot

import (
	"net"
	"os"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// AutoWorkers chooses the number of readers and writers for cpus CPUs so
// that the busy threads never outnumber the CPUs:
//
//	readers*(1+local) + writers <= cpus, readers >= 1, writers >= 1
//
// Each reader is a Go goroutine decoding COPY BINARY and, when the source
// runs on this machine (local), also a PostgreSQL backend scanning and
// encoding; each writer is one goroutine appending into DuckDB or encoding
// Parquet. A third of the budget goes to readers when local (each costs
// two), half when remote; writers get the rest. Below 3 CPUs (local) or 2
// (remote) the minimum of one reader and one writer oversubscribes; no
// smaller choice exists.
func AutoWorkers(cpus int, local bool) (readers, writers int) {
	if cpus < 1 {
		cpus = 1
	}
	perReader := 1
	if local {
		perReader = 2
	}
	readers = max(1, cpus/(perReader+1))
	writers = max(1, cpus-readers*perReader)
	return readers, writers
}

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
