package cmdline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/BurntSushi/toml"
	"github.com/alecthomas/kong"
)

// TOMLResolver reads a config file for kong (kong.Configuration): TOML,
// turned into the JSON kong's resolver reads, so keys are flag names with
// underscores and durations are strings ("5s"). The command line and the
// environment still win over the file: a flag whose environment variable
// is set is not taken from it.
func TOMLResolver(r io.Reader) (kong.Resolver, error) {
	var m map[string]any
	if _, err := toml.NewDecoder(r).Decode(&m); err != nil {
		return nil, fmt.Errorf("config file: %w", err)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	jr, err := kong.JSON(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return kong.ResolverFunc(func(kctx *kong.Context, parent *kong.Path, flag *kong.Flag) (any, error) {
		if envSet(flag) {
			return nil, nil
		}
		return jr.Resolve(kctx, parent, flag)
	}), nil
}

// envSet reports whether one of flag's environment variables is set (kong
// has already taken the flag's value from it).
func envSet(flag *kong.Flag) bool {
	for _, env := range flag.Envs {
		if _, ok := os.LookupEnv(env); ok {
			return true
		}
	}
	return false
}
