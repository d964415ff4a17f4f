// Cluster settings and their test-friendly defaults.

package pgtest

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Options shape a cluster. The zero value is a sensible test cluster.
type Options struct {
	// MaxConnections sets max_connections (default 100).
	MaxConnections int
	// SharedBuffers sets shared_buffers, e.g. "256MB" (default 128MB).
	SharedBuffers string
	// WALLevel sets wal_level, e.g. "logical" (default replica).
	WALLevel string
	// Settings holds any other GUC; it wins over everything above.
	Settings map[string]string
	// Detached leaves the cluster running after this process exits; the
	// caller must Stop it (pg-sandbox uses this). Test clusters are never
	// detached.
	Detached bool
}

// defaultSettings trade durability for speed: a throwaway cluster's data is
// worthless after a crash anyway.
var defaultSettings = map[string]string{
	"fsync":                      "off",
	"synchronous_commit":         "off",
	"full_page_writes":           "off",
	"listen_addresses":           "127.0.0.1",
	"max_connections":            "100",
	"shared_buffers":             "128MB",
	"logging_collector":          "off",
	"log_min_messages":           "warning",
	"log_timezone":               "UTC",
	"timezone":                   "UTC",
	"datestyle":                  "iso, mdy",
	"max_wal_size":               "4GB",
	"checkpoint_timeout":         "30min",
	"dynamic_shared_memory_type": "posix",
}

// settings merges defaults, the named options and Settings, and adds what
// the harness itself decides (port and socket directory).
func (o Options) settings(port int, socketDir string) map[string]string {
	s := make(map[string]string, len(defaultSettings)+len(o.Settings)+2)
	for k, v := range defaultSettings {
		s[k] = v
	}
	if o.MaxConnections > 0 {
		s["max_connections"] = strconv.Itoa(o.MaxConnections)
	}
	if o.SharedBuffers != "" {
		s["shared_buffers"] = o.SharedBuffers
	}
	if o.WALLevel != "" {
		s["wal_level"] = o.WALLevel
	}
	for k, v := range o.Settings {
		s[strings.ToLower(k)] = v
	}
	s["port"] = strconv.Itoa(port)
	s["unix_socket_directories"] = socketDir
	return s
}

// confValue escapes a value for single quotes in postgresql.conf.
var confValue = strings.NewReplacer(`\`, `\\`, "'", "''", "\n", `\n`, "\r", `\r`)

// checkSettings refuses a setting name postgresql.conf cannot hold (the
// server would not start, and its log would be the only clue).
func (o Options) checkSettings() error {
	for k := range o.Settings {
		// guc-file.l reads a name as ID or ID.ID, an ID starting with a
		// letter or '_'.
		parts := strings.Split(k, ".")
		ok := len(parts) <= 2
		for _, part := range parts {
			for i, r := range part {
				switch {
				case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
				case i > 0 && r >= '0' && r <= '9':
				default:
					ok = false
				}
			}
			ok = ok && part != ""
		}
		if !ok {
			return fmt.Errorf("pgtest: setting name %q is not a PostgreSQL parameter name", k)
		}
	}
	return nil
}

// confText renders settings as postgresql.conf lines in a stable order.
func confText(s map[string]string) string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("\n# written by pgtest\n")
	for _, k := range keys {
		// In postgresql.conf a backslash inside quotes is an escape: doubled
		// so that the value arrives as given.
		// A line break cannot stand in a quoted value; PostgreSQL reads
		// the escapes \n and \r in its place.
		v := confValue.Replace(s[k])
		fmt.Fprintf(&b, "%s = '%s'\n", k, v)
	}
	return b.String()
}
