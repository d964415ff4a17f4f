// The paths a query can take, behind one interface so that later issues
// add router and analytics paths without touching the loops.

package run

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/qpkit/qpkit/pkg/pgexec"
)

// Result is what one call returned.
type Result struct {
	Rows   int
	Bytes  int            // size of the result as the caller got it
	Timing *pgexec.Timing // the executor's segments (server path only)
}

// Path runs statements one way. Open starts a fresh connection or MCP
// session, so the next Call is a cold one; Call is not safe for concurrent
// use unless the path says so.
type Path interface {
	Name() string
	Open(ctx context.Context) error
	Call(ctx context.Context, sql string) (Result, error)
	Close() error
}

// Settings are what every path shares, so each runs the identical query in
// the identical envelope.
type Settings struct {
	DatabaseURL string
	Timeout     time.Duration // per call, and the statement timeout
	MaxRows     int           // caps raised so the 100,000-row query is whole
	MaxBytes    int
	MCPG        string // the mcpg binary, for e2e-stdio
	// MCPProtocol is the MCP protocol version the e2e paths' client asks
	// for (DefaultMCPProtocol when empty).
	MCPProtocol string
}

// DefaultMCPProtocol is the protocol version the e2e paths ask for: the
// newest one the official TypeScript SDK speaks (1.32), which is what
// agents use. mcp-go's client also speaks 2026-07-28, where it adds
// _meta to every request at a cost of its own (docs/benchmarks.md).
const DefaultMCPProtocol = mcp.LATEST_LEGACY_PROTOCOL_VERSION

func (s Settings) mcpProtocol() string { return cmp.Or(s.MCPProtocol, DefaultMCPProtocol) }

// hasMCPPath reports whether paths has one of the e2e paths.
func hasMCPPath(paths []string) bool {
	for _, p := range paths {
		if strings.HasPrefix(p, "e2e-") {
			return true
		}
	}
	return false
}

// DefaultMaxRows and DefaultMaxBytes are the raised caps.
const (
	DefaultMaxRows  = 100_000 // the most mcpg allows
	DefaultMaxBytes = 256 << 20
)

// PathNames are the built-in paths in their display order.
var PathNames = []string{"native", "server", "e2e-inproc", "e2e-stdio", "e2e-http"}

// NewPath returns the named path.
func NewPath(name string, s Settings) (Path, error) {
	switch name {
	case "native":
		return &nativePath{s: s}, nil
	case "server":
		return &serverPath{s: s}, nil
	case "e2e-inproc", "e2e-stdio", "e2e-http":
		return &mcpPath{name: name, s: s}, nil
	}
	return nil, fmt.Errorf("unknown path %q (known: native, server, e2e-inproc, e2e-stdio, e2e-http)", name)
}

// ErrTimeout marks a call that hit the timeout; the loops record it as a
// timeout sample rather than an error.
var ErrTimeout = errors.New("timed out")

// classify turns a path's error into ErrTimeout when it is one.
func classify(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	var qe *pgexec.QueryError
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded ||
		(errors.As(err, &qe) && qe.TimedOut) {
		return fmt.Errorf("%w: %v", ErrTimeout, err)
	}
	return err
}
