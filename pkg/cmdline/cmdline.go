// Package cmdline holds what every tool's kong command line does the same
// way: parse without letting kong call os.Exit, and print errors as one line.
package cmdline

import (
	"io"
	"strings"

	"github.com/alecthomas/kong"
)

// exitRequest carries kong's exit request (after --help) out of Parse.
type exitRequest struct{ code int }

// Parse builds a parser named name for grammar and parses args; opts add
// kong options (a configuration-file resolver, say). Kong exits after
// --help; here that returns exited true with its code instead, so tests
// can call a tool's run function without the process ending.
func Parse(grammar any, name, description string, args []string, stdout, stderr io.Writer, opts ...kong.Option) (kctx *kong.Context, exited bool, code int, err error) {
	parser, err := kong.New(grammar, append([]kong.Option{
		kong.Name(name),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitRequest{code}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true}),
	}, opts...)...)
	if err != nil {
		return nil, false, 0, err
	}
	defer func() {
		if r := recover(); r != nil {
			er, ok := r.(exitRequest)
			if !ok {
				panic(r)
			}
			kctx, exited, code, err = nil, true, er.code, nil
		}
	}()
	kctx, err = parser.Parse(args)
	return kctx, false, 0, err
}

// OneLine keeps the first line of an error text, trimmed, so a tool's
// error output is one line naming the problem.
func OneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
