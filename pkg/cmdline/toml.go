package cmdline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/alecthomas/kong"
)

// TOMLResolver reads a config file for kong (kong.Configuration): TOML,
// turned into the JSON kong's resolver reads, so keys are flag names with
// underscores and durations are strings ("5s") or bare numbers of seconds.
// The command line and the environment still win over the file: a flag
// whose environment variable is set is not taken from it. A key that is no
// flag of the application is refused, naming it.
func TOMLResolver(r io.Reader) (kong.Resolver, error) {
	return TOMLResolverWithTables()(r)
}

// TOMLResolverWithTables is TOMLResolver for a file that may also hold the
// named tables, which the program reads itself (qprouter's [pools]).
func TOMLResolverWithTables(tables ...string) kong.ConfigurationLoader {
	return func(r io.Reader) (kong.Resolver, error) {
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
		return &tomlResolver{keys: m, json: jr, tables: tables}, nil
	}
}

type tomlResolver struct {
	keys   map[string]any
	json   kong.Resolver
	tables []string
}

// Validate refuses the keys no flag of app takes, so that a misspelt key
// is not silently left at its default.
func (t *tomlResolver) Validate(app *kong.Application) error {
	known := map[string]bool{}
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		for _, f := range n.Flags {
			known[strings.ReplaceAll(f.Name, "-", "_")] = true
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	walk(app.Node)
	var unknown []string
	for k, v := range t.keys {
		if slices.Contains(t.tables, k) {
			if _, ok := v.(map[string]any); !ok {
				return fmt.Errorf("config file: %s = %v: want a table ([%s])", k, v, k)
			}
			continue
		}
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("config file: unknown keys: %s (keys are the flags' names with underscores)", strings.Join(unknown, ", "))
}

var durationType = reflect.TypeFor[time.Duration]()

func (t *tomlResolver) Resolve(kctx *kong.Context, parent *kong.Path, flag *kong.Flag) (any, error) {
	if envSet(flag) {
		return nil, nil
	}
	v, err := t.json.Resolve(kctx, parent, flag)
	if err != nil || v == nil {
		return v, err
	}
	if n, ok := v.(float64); ok && flag.Target.Type() == durationType {
		// A bare number is seconds (pgbouncer.ini's unit); kong would
		// take nanoseconds.
		if n < 0 || n > math.MaxInt64/float64(time.Second) {
			return nil, fmt.Errorf("config file: %s = %v: want seconds from 0, or a duration such as \"5s\"", strings.ReplaceAll(flag.Name, "-", "_"), n)
		}
		return strconv.FormatFloat(n, 'f', -1, 64) + "s", nil
	}
	if n, ok := v.(float64); ok && n != math.Trunc(n) && integerKind(flag.Target.Type().Kind()) {
		// kong would round 1.5 to 2.
		return nil, fmt.Errorf("config file: %s = %v: want a whole number", strings.ReplaceAll(flag.Name, "-", "_"), n)
	}
	return v, nil
}

func integerKind(k reflect.Kind) bool {
	switch k {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
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
