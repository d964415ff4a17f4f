// The streamable HTTP transport: bearer-token authentication, the Origin
// check against DNS rebinding, and the principal every call is audited as.

package mcpserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"github.com/qpkit/qpkit/pkg/tracing"
	"go.opentelemetry.io/otel/propagation"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/mark3labs/mcp-go/server"
)

// Principals a call is attributed to in the audit log.
const (
	PrincipalStdio     = "stdio"     // the stdio transport: whoever started the process
	PrincipalToken     = "token"     // HTTP, authenticated with the bearer token
	PrincipalAnonymous = "anonymous" // HTTP on loopback without a token configured
)

type principalKey struct{}

// WithPrincipal returns ctx carrying the principal calls made under it are
// attributed to; without one a call is attributed to PrincipalStdio.
func WithPrincipal(ctx context.Context, p string) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

func principal(ctx context.Context) string {
	if p, ok := ctx.Value(principalKey{}).(string); ok {
		return p
	}
	return PrincipalStdio
}

// HTTPOptions are the settings of HTTPHandler.
type HTTPOptions struct {
	// Token, when set, is required as "Authorization: Bearer <token>" on
	// every request; others get 401 with a WWW-Authenticate header.
	Token string
	// AllowOrigins are origins ("https://app.example.com") accepted besides
	// loopback ones; a request with any other Origin header gets 403.
	AllowOrigins []string
	// Metrics, when non-nil, is served on /metrics (behind the token).
	Metrics http.Handler
}

// EndpointPath is where HTTPHandler serves MCP.
const EndpointPath = "/mcp"

// HTTPHandler serves an MCP server over MCP's streamable HTTP transport on
// EndpointPath, behind the token and Origin checks.
type HTTPHandler struct {
	http.Handler
	mcp *server.StreamableHTTPServer
}

// CloseSessions ends the clients' long-lived event streams, so that
// http.Server.Shutdown only waits for calls in flight.
func (h *HTTPHandler) CloseSessions(ctx context.Context) { h.mcp.CloseSessions(ctx) }

// NewHTTPHandler returns the HTTP handler of s, with the fast path
// (fastpath_http.go) when New built s.
func NewHTTPHandler(s *server.MCPServer, opts HTTPOptions) *HTTPHandler {
	return newHTTPHandler(s, opts, fastPathOf(s))
}

// newHTTPHandler is NewHTTPHandler with fast as the fast path (nil: none).
func newHTTPHandler(s *server.MCPServer, opts HTTPOptions, fast *fastPath) *HTTPHandler {
	mux := http.NewServeMux()
	// Session IDs that end (sessions.go), shared with the fast path so
	// that it checks an ID with the same manager.
	ids := sessionIDsOf(s)
	streamable := server.NewStreamableHTTPServer(s,
		server.WithEndpointPath(EndpointPath),
		server.WithHTTPContextFunc(httpContext),
		server.WithSessionIdManager(ids),
	)
	ids.addTransport(streamable)
	checked := envelopeCheck{next: streamable}
	if fast != nil {
		mux.Handle(EndpointPath, &fastHTTP{s: s, f: fast, next: streamable, checked: checked, ids: ids})
	} else {
		mux.Handle(EndpointPath, checked)
	}
	if opts.Metrics != nil {
		mux.Handle("/metrics", opts.Metrics)
	}
	allowed := map[string]bool{}
	for _, o := range opts.AllowOrigins {
		allowed[strings.TrimSuffix(strings.ToLower(o), "/")] = true
	}
	var want [32]byte
	if opts.Token != "" {
		want = sha256.Sum256([]byte(opts.Token))
	}
	return &HTTPHandler{mcp: streamable, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" {
			if !loopbackOrigin(o) && !allowed[strings.ToLower(o)] {
				http.Error(w, "Forbidden: origin "+o+" is not allowed (see --allow-origin)", http.StatusForbidden)
				return
			}
			if cors(w, r, o) {
				return
			}
		}
		p := PrincipalAnonymous
		if opts.Token != "" {
			// Hashing both sides makes the comparison constant-time in
			// the token's length too.
			tok, ok := bearer(r.Header.Get("Authorization"))
			got := sha256.Sum256([]byte(tok))
			if !ok || subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcpg"`)
				http.Error(w, "Unauthorized: a bearer token is required", http.StatusUnauthorized)
				return
			}
			p = PrincipalToken
		}
		if r.Body != nil {
			if r.ContentLength > MaxRequestBytes {
				tooLarge(w)
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
		}
		mux.ServeHTTP(w, r.WithContext(WithPrincipal(r.Context(), p)))
	})}
}

// CORS headers for origins that pass the Origin check: a browser lets a
// page of another origin call mcpg only through them.
const (
	corsMethods = "GET, POST, DELETE, OPTIONS"
	corsHeaders = "authorization, content-type, mcp-session-id, mcp-protocol-version, last-event-id, " +
		"mcp-method, mcp-name, traceparent, tracestate"
	corsExpose = "mcp-session-id, www-authenticate"
)

// cors lets origin, one the Origin check admits, read the response, and
// answers its preflight (an OPTIONS with Access-Control-Request-Method,
// which a browser sends without credentials, so it comes before the token
// check); it reports whether it answered. The preflight reveals nothing
// and runs nothing: every other request still needs the token.
func cors(w http.ResponseWriter, r *http.Request, origin string) bool {
	h := w.Header()
	h.Add("Vary", "Origin")
	h.Set("Access-Control-Allow-Origin", origin)
	if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
		h.Set("Access-Control-Allow-Methods", corsMethods)
		h.Set("Access-Control-Allow-Headers", corsHeaders)
		h.Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return true
	}
	h.Set("Access-Control-Expose-Headers", corsExpose)
	return false
}

// MaxRequestBytes bounds an HTTP request's body: a statement is at most
// 64 KiB (safesql), so 4 MiB leaves room for its params without letting a
// client make the server buffer any amount.
const MaxRequestBytes = 4 << 20

// tooLarge refuses a request body over MaxRequestBytes.
func tooLarge(w http.ResponseWriter) {
	http.Error(w, fmt.Sprintf("Request Entity Too Large: a request body is at most %d bytes", MaxRequestBytes), http.StatusRequestEntityTooLarge)
}

// httpContext is a call's context on HTTP: the principal NewHTTPHandler
// authenticated, and the caller's W3C trace context.
func httpContext(ctx context.Context, r *http.Request) context.Context {
	ctx = WithPrincipal(ctx, principal(r.Context()))
	if r.Header.Get("traceparent") != "" {
		ctx = tracing.Propagator.Extract(ctx, propagation.HeaderCarrier(r.Header))
	}
	return ctx
}

// bearer returns the token of an "Authorization: Bearer <token>" value.
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// loopbackOrigin reports whether an Origin header names a loopback host.
func loopbackOrigin(o string) bool {
	u, err := url.Parse(o)
	if err != nil || u.Host == "" {
		return false
	}
	return IsLoopbackHost(u.Hostname())
}

// IsLoopbackHost reports whether host (a name or IP, without port) is
// localhost or a loopback address.
func IsLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// IsLoopbackAddr reports whether a listen address (host:port) binds only
// loopback; ":8080" and "0.0.0.0:8080" bind every interface.
func IsLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	return err == nil && host != "" && IsLoopbackHost(host)
}
