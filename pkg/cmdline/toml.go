package cmdline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/BurntSushi/toml"
	"github.com/alecthomas/kong"
)

// TOMLResolver reads a config file for kong (kong.Configuration): TOML,
// turned into the JSON kong's resolver reads, so keys are flag names with
// underscores and durations are strings ("5s"). The command line and the
// environment still win over the file.
func TOMLResolver(r io.Reader) (kong.Resolver, error) {
	var m map[string]any
	if _, err := toml.NewDecoder(r).Decode(&m); err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return kong.JSON(bytes.NewReader(b))
}
