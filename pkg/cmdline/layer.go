// Settings beneath the command line, the environment and the config file.

package cmdline

import (
	"errors"
	"slices"
	"strings"

	"github.com/alecthomas/kong"
)

// Layer is a kong resolver for settings with a lower precedence than
// everything kong reads itself: it answers only for the flags that a first
// parse (Beneath's kctx) left at their defaults, so parsing again with
// kong.Resolvers(layer) gives command line > environment > config file >
// layer > defaults. Values and Errors are keyed by flag name with
// underscores (as config-file keys); values are in flag syntax ("20",
// "5s"). An error is kept (see Err) only for a flag the layer was asked
// for, so a refused value that something above replaces is no error.
type Layer struct {
	values map[string]string
	errs   map[string]error
	set    map[string]bool // flags the first parse took from the command line or a resolver
	failed []error
}

// Beneath returns the layer under what kctx (the first parse) read.
func Beneath(kctx *kong.Context, values map[string]string, errs map[string]error) *Layer {
	l := &Layer{values: values, errs: errs, set: map[string]bool{}}
	for _, p := range kctx.Path {
		if p.Flag != nil {
			l.set[p.Flag.Name] = true
		}
	}
	return l
}

// Validate is part of kong.Resolver.
func (l *Layer) Validate(*kong.Application) error { return nil }

// Resolve is part of kong.Resolver.
func (l *Layer) Resolve(_ *kong.Context, _ *kong.Path, flag *kong.Flag) (any, error) {
	if l.set[flag.Name] || envSet(flag) {
		return nil, nil
	}
	key := strings.ReplaceAll(flag.Name, "-", "_")
	if err, ok := l.errs[key]; ok {
		if !slices.Contains(l.failed, err) {
			l.failed = append(l.failed, err)
		}
		return nil, nil
	}
	if v, ok := l.values[key]; ok {
		return v, nil
	}
	return nil, nil
}

// Err is the refusals of the flags the layer was asked for, in flag
// order, joined into one line; nil when there are none.
func (l *Layer) Err() error {
	if len(l.failed) == 0 {
		return nil
	}
	msgs := make([]string, len(l.failed))
	for i, err := range l.failed {
		msgs[i] = err.Error()
	}
	return errors.New(strings.Join(msgs, "; "))
}
