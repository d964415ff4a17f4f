// The fast path on streamable HTTP: a POST that mcp-go's
// StreamableHTTPServer would accept and hand to HandleMessage as a
// tools/call of one of mcpg's tools (of 2026-07-28, or of an earlier
// version in a session mcp-go registered) is answered here; every other
// request goes to mcp-go untouched.

package mcpserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// fastHTTP serves EndpointPath in front of mcp-go's streamable server.
type fastHTTP struct {
	s    *server.MCPServer
	f    *fastPath
	next *server.StreamableHTTPServer
	// checked is next behind the envelope check, for what the fast path
	// does not take.
	checked http.Handler
	// ids is the session ID manager next was built with.
	ids server.SessionIdManager
}

func (h *fastHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		h.checked.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		tooLarge(w)
		return
	}
	if err != nil {
		// mcp-go reads the same bytes and the same error.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
		h.checked.ServeHTTP(w, r)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var c fastCall
	if !h.accepts(r) || !h.f.recognise(h.s, nil, body, &c, true) {
		h.forward(w, r, body)
		return
	}
	var session server.ClientSession
	if c.legacy {
		session = h.legacySession(r, &c)
	} else if h.headersMatch(r, &c) {
		// As mcp-go: an ephemeral session, told about its client by _meta.
		session = &ephemeralSession{}
		applyProtocolInfo(session, c.req.Params.Meta)
	}
	if session == nil {
		h.forward(w, r, body)
		return
	}
	out := h.f.call(httpContext(h.s.WithContext(r.Context(), session), r), &c, session)
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
		h.checked.ServeHTTP(w, r)
		return
	}
	sw := &statusWriter{ResponseWriter: w}
	h.checked.ServeHTTP(sw, r)
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

// legacySession returns the session mcp-go would serve a call of a
// protocol version before 2026-07-28 in, when the fast path can serve it
// there too: the protocol version header is absent or one mcp-go knows
// from before 2026-07-28, there is no Last-Event-ID, and Mcp-Session-Id
// passes the transport's session ID manager and names a session
// registered with the server (an initialized client's). Otherwise nil:
// mcp-go answers with its error, or serves the call in an ephemeral
// session the fast path does not reproduce.
//
// mcp-go would also stream to the client, as SSE in this response, any
// notification or request the server sent the session during the call;
// mcpg sends none (no logging, progress, sampling, elicitation or list
// changes), so its reply is this one JSON response.
func (h *fastHTTP) legacySession(r *http.Request, c *fastCall) server.ClientSession {
	hv := r.Header.Get(mcp.HeaderProtocolVersion)
	if hv != "" && (!mcp.IsValidProtocolVersion(hv) || mcp.IsModernProtocol(hv)) || r.Header.Get(mcp.HeaderLastEventID) != "" {
		return nil
	}
	id := r.Header.Get(server.HeaderKeySessionID)
	if terminated, err := h.ids.Validate(id); err != nil || terminated {
		return nil
	}
	session := h.f.session(id)
	if session == nil || sessionTool(session, c.req.Params.Name) {
		return nil
	}
	c.req.Header = r.Header
	return session
}

// ephemeralSession stands for the session mcp-go makes for one 2026-07-28
// request: no ID, registered nowhere, knowing its client from the
// request's _meta. mcp-go would stream a notification sent to it during
// the call as SSE; mcpg's tools send none, and a send to its nil channel
// fails as to a full one.
type ephemeralSession struct {
	mu          sync.Mutex
	info        mcp.Implementation
	caps        mcp.ClientCapabilities
	initialized bool
}

var _ server.SessionWithClientInfo = (*ephemeralSession)(nil)

func (e *ephemeralSession) Initialize() {
	e.mu.Lock()
	e.initialized = true
	e.mu.Unlock()
}

func (e *ephemeralSession) Initialized() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.initialized
}

func (e *ephemeralSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (e *ephemeralSession) SessionID() string                                   { return "" }

func (e *ephemeralSession) GetClientInfo() mcp.Implementation {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.info
}

func (e *ephemeralSession) SetClientInfo(info mcp.Implementation) {
	e.mu.Lock()
	e.info = info
	e.mu.Unlock()
}

func (e *ephemeralSession) GetClientCapabilities() mcp.ClientCapabilities {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.caps
}

func (e *ephemeralSession) SetClientCapabilities(caps mcp.ClientCapabilities) {
	e.mu.Lock()
	e.caps = caps
	e.mu.Unlock()
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

// envelopeCheck answers the messages invalidRequest refuses, before
// mcp-go (next) sees them.
type envelopeCheck struct{ next http.Handler }

func (h envelopeCheck) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.Body == nil {
		h.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(r.Body)
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		tooLarge(w)
		return
	}
	if err == nil {
		if why := invalidRequest(body); why != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write(errorReply(nil, mcp.INVALID_REQUEST, "Invalid Request: "+why))
			return
		}
	}
	if err != nil {
		// mcp-go reads the same bytes and the same error.
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	} else {
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	h.next.ServeHTTP(w, r)
}

// invalidRequest says why body is no MCP message, for what mcp-go would
// take or answer wrongly: a batch (MCP has none since 2025-06-18), and a
// request whose id is not a string or a number (MCP: never null; JSON-RPC
// 2.0: a string or a number). "" for anything else, mcp-go's to judge.
func invalidRequest(body []byte) string {
	b := bytes.TrimLeft(body, " \t\r\n")
	if len(b) == 0 {
		return ""
	}
	if b[0] == '[' {
		if json.Valid(b) {
			return "batches are not supported"
		}
		return ""
	}
	var env struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if b[0] != '{' || json.Unmarshal(b, &env) != nil || env.Method == nil || env.ID == nil {
		return "" // not JSON, a response or a notification
	}
	switch c := env.ID[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return ""
	}
	return "a request id must be a string or a number, not null, an object, an array or a boolean"
}
