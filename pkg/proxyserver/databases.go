// Where each client database's server comes from: the config file's [databases] table over pgbouncer.ini's entries.

package proxyserver

import (
	"fmt"
	"io"
	"maps"

	"github.com/BurntSushi/toml"
)

// ReadDatabases reads the [databases] table of a TOML config file: client
// database name = server URL (see route.NewTargets).
func ReadDatabases(r io.Reader) (map[string]string, error) {
	var f struct {
		Databases map[string]string `toml:"databases"`
	}
	if _, err := toml.NewDecoder(r).Decode(&f); err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	return f.Databases, nil
}

// MergeDatabases puts over's entries over under's, name by name.
func MergeDatabases(over, under map[string]string) map[string]string {
	if len(under) == 0 {
		return over
	}
	out := maps.Clone(under)
	maps.Copy(out, over)
	return out
}
