// Provenance for the run record: the tool, the host and the server.

package run

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/qpkit/qpkit/pkg/connstr"
	"github.com/qpkit/qpkit/pkg/perf"
)

// ToolInfo reads the binary's version and git revision from its build info.
func ToolInfo(name string) perf.Tool {
	t := perf.Tool{Name: name, Version: "devel", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			t.Version = v
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				t.GitSHA = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty && t.GitSHA != "" {
			t.GitSHA += "-dirty"
		}
	}
	return t
}

// HostInfo reads the CPU model and memory from /proc (Linux) and the
// kernel release from uname.
func HostInfo() perf.Host {
	h := perf.Host{Cores: runtime.NumCPU(), OS: runtime.GOOS}
	h.Hostname, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "MemTotal:" {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				h.MemBytes = kb * 1024
			}
		}
	}
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		var b strings.Builder
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			b.WriteByte(byte(c))
		}
		h.Kernel = b.String()
	}
	return h
}

// settingsOfNote are the server settings that change what a benchmark
// measures.
var settingsOfNote = []string{
	"max_connections", "shared_buffers", "work_mem", "effective_cache_size", "jit",
	"max_parallel_workers_per_gather", "max_worker_processes", "random_page_cost",
	"fsync", "synchronous_commit", "huge_pages", "default_transaction_read_only",
}

// PostgresInfo reads the server version and settings of note.
func PostgresInfo(ctx context.Context, conn *pgx.Conn) (perf.Postgres, error) {
	pg := perf.Postgres{Settings: map[string]string{}}
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&pg.Version); err != nil {
		return pg, err
	}
	rows, err := conn.Query(ctx, "SELECT name, setting || coalesce(unit, '') FROM pg_settings WHERE name = ANY($1)", settingsOfNote)
	if err != nil {
		return pg, err
	}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return pg, err
		}
		pg.Settings[k] = v
	}
	return pg, rows.Err()
}

// ScaleFactor guesses the TPC-H scale factor from the supplier table
// (10,000 rows per unit); nil when there is none.
func ScaleFactor(ctx context.Context, conn *pgx.Conn) *float64 {
	var n int64
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM supplier").Scan(&n); err != nil || n == 0 {
		return nil
	}
	sf := float64(n) / 10000
	return &sf
}

// runRecord is the study's provenance, read from the host and the server.
func (s *Study) runRecord(ctx context.Context, conn *pgx.Conn) *perf.Run {
	pg, err := PostgresInfo(ctx, conn)
	if err != nil {
		pg.Version = "unknown: " + err.Error()
	}
	qs := make([]perf.Query, len(s.Queries))
	for i, q := range s.Queries {
		qs[i] = perf.Query{ID: q.ID, Weight: q.Weight, Size: q.Size, SQL: q.SQL}
	}
	return &perf.Run{
		StartedAt: time.Now().UTC(), Tool: ToolInfo("perfrun"), Host: HostInfo(), Postgres: pg,
		ScaleFactor: ScaleFactor(ctx, conn), Iterations: s.Iterations, Warmup: s.Warmup, MinTimeNS: s.MinTime.Nanoseconds(),
		MCPProtocol: s.mcpProtocol(),
		TimeoutMS:   s.Timeout.Milliseconds(), Concurrency: s.Concurrency,
		SweepDurationNS: s.SweepDuration.Nanoseconds(), Paths: s.Paths, Queries: qs,
		Args: append([]string{"perfrun"}, redact(s.Args)...),
	}
}

// redact hides a password in a database URL or key/value string among
// args, also one given as --flag=URL.
func redact(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		out[i] = redactArg(a)
	}
	return out
}

// redactArg is redact for one argument, also a --flag=value one.
func redactArg(a string) string {
	if !strings.HasPrefix(a, "-") {
		return connstr.Redact(a)
	}
	flag, v, ok := strings.Cut(a, "=")
	if !ok {
		return a
	}
	return flag + "=" + connstr.Redact(v)
}

// NewRunID names a run by its UTC start and 4 random bytes.
func NewRunID(t time.Time) string {
	var b [4]byte
	rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}
