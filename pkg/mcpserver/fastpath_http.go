// The fast path on streamable HTTP: a POST that mcp-go's
// StreamableHTTPServer would accept and hand to HandleMessage as a
// 2026-07-28 tools/call of one of mcpg's tools is answered here; every
// other request goes to mcp-go untouched.

package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// fastHTTP serves EndpointPath in front of mcp-go's streamable server.
type fastHTTP struct {
	s    *server.MCPServer
	f    *fastPath
	next *server.StreamableHTTPServer
}

func (h *fastHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		h.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		// mcp-go reads the same bytes and the same error.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		h.next.ServeHTTP(w, r)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var c fastCall
	if !h.accepts(r) || !h.f.recognise(h.s, nil, body, &c, false) || !h.headersMatch(r, &c) {
		h.forward(w, r, body)
		return
	}
	out := h.f.call(httpContext(r.Context(), r), &c, nil)
	// As mcp-go: nothing is written to a client that has gone.
	if r.Context().Err() != nil {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if out != nil {
		w.Write(append(out, '\n')) // one write, as json.Encoder's
	}
}

// forward hands the request to mcp-go; a notifications/cancelled that
// mcp-go accepted also cancels the fast path's call it names, which mcp-go
// would have cancelled had it served that call.
func (h *fastHTTP) forward(w http.ResponseWriter, r *http.Request, body []byte) {
	id, ok := cancelledID(body)
	if !ok {
		h.next.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	h.next.ServeHTTP(sw, r)
	if sw.status != http.StatusAccepted {
		return
	}
	// mcp-go's session for the notification: an ephemeral one without an
	// ID for a 2026-07-28 request, else the one the header names.
	sessionID := r.Header.Get(server.HeaderKeySessionID)
	var env struct {
		Params struct {
			Meta *mcp.Meta `json:"_meta"`
		} `json:"params"`
	}
	version := ""
	if json.Unmarshal(body, &env) == nil {
		version = env.Params.Meta.ProtocolVersion()
	}
	if mcp.IsModernProtocol(version) || mcp.IsModernProtocol(r.Header.Get(mcp.HeaderProtocolVersion)) {
		sessionID = ""
	}
	h.f.cancelInflight(idKey(sessionID, id))
}

// accepts reports whether mcp-go's transport would pass the request on to
// its POST handling and that would take it as JSON: the DNS-rebinding
// check and the content type.
func (h *fastHTTP) accepts(r *http.Request) bool {
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && la != nil &&
		mcpgoLoopbackHost(la.String()) && !mcpgoLoopbackHost(r.Host) {
		return false
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mediaType == "application/json"
}

// headersMatch reports whether the headers pass mcp-go's checks of a
// 2026-07-28 request: the protocol version in the header and in _meta,
// one this transport serves, no Last-Event-ID, and the Mcp-Method,
// Mcp-Name and parameter headers agreeing with the body.
func (h *fastHTTP) headersMatch(r *http.Request, c *fastCall) bool {
	hv := r.Header.Get(mcp.HeaderProtocolVersion)
	if hv == "" || hv != c.version || r.Header.Get(mcp.HeaderLastEventID) != "" || !h.next.SupportsProtocolVersion(c.version) {
		return false
	}
	if mcp.ValidateStandardHeaders(r.Header.Get, c.version, mcp.MethodToolsCall, c.params) != nil {
		return false
	}
	lookup := func(name string) (string, bool) {
		v := r.Header.Values(name)
		if len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	if h.f.hasParamHeaders(&c.tool.Tool) && mcp.ValidateParamHeadersLookup(lookup, &c.tool.Tool, c.params) != nil {
		return false
	}
	c.req.Header = r.Header
	return true
}

// mcpgoLoopbackHost is mcp-go's test of a loopback host (with or without
// port) for its DNS-rebinding check.
func mcpgoLoopbackHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// errReader returns err.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// statusWriter remembers the status written through it; it flushes (so
// mcp-go still sees a streaming-capable writer) and unwraps.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
