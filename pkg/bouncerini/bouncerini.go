// Package bouncerini reads a PgBouncer configuration file (pgbouncer.ini)
// and maps what qprouter can do the same way onto qprouter's settings, so
// that a PgBouncer installation can switch with one flag
// (qprouter --pgbouncer-ini). docs/qprouter.md has the table of keys:
// mapped, ignored (with a note) and refused.
//
// The file is parsed with gopkg.in/ini.v1 set to PgBouncer's grammar:
// `key = value` to the end of the line (no inline comments, quotes or line
// continuations), `;` and `#` comment lines, keys before any section
// refused. `%include FILE` lines are expanded first, as PgBouncer does:
// the path as written (relative to the working directory), the included
// text continuing the current section, at most 10 levels deep.
package bouncerini

import (
	"bufio"
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"gopkg.in/ini.v1"
)

// Settings are what a pgbouncer.ini means for qprouter.
type Settings struct {
	// Values are the qprouter settings the file sets, by config key (the
	// TOML keys of proxyserver.Config: "pool_size"), in flag syntax ("20",
	// "2m0s", "transaction"). Keys the file does not set are absent, so
	// qprouter's own defaults apply to them.
	Values map[string]string
	// Errors are the settings the file sets in a way qprouter refuses
	// (pool_mode = statement, two servers in [databases], ...), by the
	// same keys: each matters only when nothing above the file (a flag,
	// the environment, the --config file) sets that key instead.
	Errors map[string]error
	// Pools are the per-pool settings of [databases] and [users] entries
	// (pool_size, min_pool_size, pool_mode, server_lifetime,
	// query_wait_timeout), by qprouter's per-pool table names ("database",
	// "*/user") and then config keys ("pool_size", "min_idle",
	// "pool_mode", "max_lifetime", "acquire_timeout"), values in flag
	// syntax.
	Pools map[string]map[string]string
	// Databases are the servers of the [databases] entries other than *
	// (the server_url value), by database name, as postgres:// URLs: the
	// config key "databases" of proxyserver.Config.
	Databases map[string]string
	// PoolErrors are per-database and per-pool values qprouter cannot use
	// (a pool_mode of statement, a pool_size that is no number, an entry
	// with several hosts); unlike Errors nothing above the file replaces
	// them.
	PoolErrors []error
	// Notes are what the file sets that qprouter ignores or does
	// differently, to log once: warnings, and debug lines for keys that
	// only tune PgBouncer's sockets, buffers or logging.
	Notes []Note
}

// Note is one line for the log.
type Note struct {
	Level slog.Level
	Msg   string
}

// Load reads the pgbouncer.ini at path (and its %include files) and maps
// it. A file that cannot be read or parsed is an error; what the file
// says is never one here (see Settings.Errors).
func Load(path string) (*Settings, error) {
	f, err := read(path)
	if err != nil {
		return nil, err
	}
	return mapFile(path, f), nil
}

// maxInclude is PgBouncer's limit on nested %include files.
const maxInclude = 10

// read parses path with its %include files expanded in place.
func read(path string) (*ini.File, error) {
	var text bytes.Buffer
	if err := expand(&text, path, 0); err != nil {
		return nil, fmt.Errorf("pgbouncer.ini: %w", err)
	}
	f, err := ini.LoadSources(ini.LoadOptions{
		KeyValueDelimiters:      "=",
		IgnoreInlineComment:     true,
		IgnoreContinuation:      true,
		PreserveSurroundedQuote: true,
	}, text.Bytes())
	if err != nil {
		return nil, fmt.Errorf("pgbouncer.ini %s: %w", path, err)
	}
	if keys := f.Section(ini.DefaultSection).KeyStrings(); len(keys) > 0 {
		return nil, fmt.Errorf("pgbouncer.ini %s: %s = ... comes before any [section]", path, keys[0])
	}
	return f, nil
}

// expand copies the file at path to w, replacing each %include line by
// the file it names.
func expand(w *bytes.Buffer, path string, depth int) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if rest, ok := strings.CutPrefix(strings.TrimLeft(text, " \t\r\f\v"), "%include"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			inc := strings.TrimSpace(rest)
			if depth >= maxInclude {
				return fmt.Errorf("%s:%d: %%include %s: more than %d levels of %%include", path, line, inc, maxInclude)
			}
			if err := expand(w, inc, depth+1); err != nil {
				return fmt.Errorf("%s:%d: %%include: %w", path, line, err)
			}
			continue
		}
		w.WriteString(text)
		w.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
