// The fast path: a tools/call of one of mcpg's own tools, decoded once and
// answered by the tool directly, with the reply encoded in one pass; every
// other message goes to mcp-go's MCPServer.HandleMessage.

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Why it exists: mcp-go v1.2.1's HandleMessage decodes a 2026-07-28
// tools/call four times (envelope, protocol info, trace _meta, request;
// its HTTP transport twice more, its stdio transport five times more) and
// encodes the result through a map, whose output encoding/json then scans
// again; for SELECT 1 that is 79–84 µs of the server's 96–97 µs, for a
// 13 MB result ~0.32 s. The fast path decodes once and encodes once. It
// answers only what it can answer exactly as mcp-go would (the tests in
// fastpath_test.go compare the two byte for byte) and leaves everything
// else to mcp-go:
//
//   - the message is one JSON object with exactly the members jsonrpc
//     ("2.0"), id (a string or an integer of at most 15 digits), method
//     ("tools/call") and params, each once and spelled exactly so;
//   - params has exactly name, optionally arguments, and _meta, each once;
//     for a 2026-07-28 call _meta has only the protocol version (2026-07-28
//     or later, one mcp-go knows), the client capabilities (valid ones) and
//     the client info, and optionally a progressToken;
//   - a call of an earlier protocol version (the version the official
//     TypeScript SDK and most clients speak, negotiated by initialize) has
//     no _meta or one with only a progressToken, and is served only in a
//     session the fast path knows: stdio's, the in-process transport's, or
//     on HTTP one that mcp-go registered (kept by ID through the server's
//     hooks, newFastPath);
//   - the tool is registered on the server, not as a task tool, and its
//     handler is one of this package's (handler.tool), so it reads only its
//     arguments, the session ID, the principal and trace context, and never
//     asks for more input;
//   - the server is one New built (no hooks but the fast path's own, no
//     filters, schema validation or middleware: New adds none, and nobody
//     may add middleware to it with MCPServer.Use) and
//     Config.DisableFastPath is off.
//
// The tool itself runs the same code either way: rate limit, metrics, audit
// record and span are in handler.tool.

// fastPath is what the fast path keeps for one server. It holds no
// reference to the server, so the server can be collected (fastPaths).
type fastPath struct {
	// resultMeta is the result's _meta as mcp-go stamps it on a 2026-07-28
	// result: {"io.modelcontextprotocol/serverInfo":{...}}.
	resultMeta []byte
	info       mcp.Implementation
	// inflight holds the cancel functions of the calls in flight by
	// "session:id", as mcp-go's own map does, so that a
	// notifications/cancelled reaches them (cancelInflight).
	inflight sync.Map
	// served counts the calls the fast path answered, fromValues those of
	// them the in-process transport recognised from values (for tests).
	served, fromValues atomic.Uint64
	// paramHeaders caches, by schemaKey, whether a tool's input schema
	// binds parameters to HTTP headers (x-mcp-header); mcp-go finds out
	// by encoding and decoding the whole schema, ~40 µs a call.
	paramHeaders sync.Map
	// hooks are the server's: they keep sessions, the server's registered
	// sessions by ID (mcp-go has no way to look one up).
	hooks    *server.Hooks
	sessions sync.Map // string -> server.ClientSession
}

// schemaKey identifies a tool's input schema by the maps and bytes it is
// made of. The fast path serves only this package's tools, whose schemas
// are built once and never changed in place, so the same identity means
// the same schema.
type schemaKey struct {
	name        string
	props, defs uintptr
	raw         uintptr
	rawLen      int
}

// hasParamHeaders reports whether t has parameter headers to check.
func (f *fastPath) hasParamHeaders(t *mcp.Tool) bool {
	k := schemaKey{name: t.Name, props: reflect.ValueOf(t.InputSchema.Properties).Pointer(),
		defs: reflect.ValueOf(t.InputSchema.Defs).Pointer(),
		raw:  reflect.ValueOf(t.RawInputSchema).Pointer(), rawLen: len(t.RawInputSchema)}
	if v, ok := f.paramHeaders.Load(k); ok {
		return v.(bool)
	}
	has := len(mcp.ExtractParamHeaderBindings(t)) > 0
	f.paramHeaders.Store(k, has)
	return has
}

// fastPaths maps the servers New built to their fastPath, weakly: an entry
// goes when its server is collected.
var fastPaths sync.Map // weak.Pointer[server.MCPServer] -> *fastPath

// newFastPath returns the fast path of a server whose identity mcp-go
// reports as info, and the hooks the server must be built with
// (server.WithHooks), which keep its sessions by ID (session).
func newFastPath(info mcp.Implementation) (*fastPath, *server.Hooks, error) {
	meta, err := json.Marshal(&mcp.Meta{AdditionalFields: map[string]any{mcp.MetaKeyServerInfo: info}})
	if err != nil {
		return nil, nil, err
	}
	f := &fastPath{resultMeta: meta, info: info, hooks: &server.Hooks{}}
	f.hooks.AddOnRegisterSession(func(_ context.Context, cs server.ClientSession) {
		f.sessions.Store(cs.SessionID(), cs)
	})
	f.hooks.AddOnUnregisterSession(func(_ context.Context, cs server.ClientSession) {
		if reflect.TypeOf(cs).Comparable() {
			f.sessions.CompareAndDelete(cs.SessionID(), cs)
		} else {
			f.sessions.Delete(cs.SessionID()) // CompareAndDelete would panic
		}
	})
	return f, f.hooks, nil
}

// registerFastPath enables f for s, built with f's hooks.
func registerFastPath(s *server.MCPServer, f *fastPath) {
	k := weak.Make(s)
	fastPaths.Store(k, f)
	runtime.AddCleanup(s, func(k weak.Pointer[server.MCPServer]) { fastPaths.Delete(k) }, k)
}

// session returns the session registered with the server under id, as
// mcp-go finds it for a request naming it; nil when there is none.
func (f *fastPath) session(id string) server.ClientSession {
	v, _ := f.sessions.Load(id)
	cs, _ := v.(server.ClientSession)
	return cs
}

// ownHooks reports whether h is the fast path's hooks with nothing added:
// mcp-go then calls no hook on a call, and neither does the fast path.
func (f *fastPath) ownHooks(h *server.Hooks) bool {
	if h != f.hooks {
		return false
	}
	v := reflect.ValueOf(h).Elem()
	for i, want := range hookLens() {
		if want < 0 || v.Field(i).Len() != want {
			return false
		}
	}
	return true
}

// hookLens is, for each field of server.Hooks, how many hooks the fast
// path's own Hooks hold there (one session hook each way, no other), or
// -1 for a field that is not a list of hooks (which mcp-go v1.2.1's has
// none of).
var hookLens = sync.OnceValue(func() []int {
	t := reflect.TypeFor[server.Hooks]()
	lens := make([]int, t.NumField())
	for i := range lens {
		switch {
		case t.Field(i).Type.Kind() != reflect.Slice:
			lens[i] = -1
		case t.Field(i).Name == "OnRegisterSession", t.Field(i).Name == "OnUnregisterSession":
			lens[i] = 1
		}
	}
	return lens
})

// fastPathOf returns s's fastPath, or nil when s has none.
func fastPathOf(s *server.MCPServer) *fastPath {
	v, _ := fastPaths.Load(weak.Make(s))
	f, _ := v.(*fastPath)
	return f
}

// toolCode is the code of the closures handler.tool returns (which is why
// handler.tool must not be inlined: an inlined copy has other code).
var toolCode = reflect.ValueOf((*handler)(nil).tool("", nil)).Pointer()

// fastCall is a tools/call the fast path recognised.
type fastCall struct {
	id      any                // as mcp-go decodes it: a string or a float64
	idJSON  []byte             // as mcp-go encodes it back
	params  []byte             // the raw params, for the HTTP header checks
	version string             // the protocol version in _meta
	legacy  bool               // a call of a protocol version before 2026-07-28
	tool    *server.ServerTool // GetTool's copy
	req     mcp.CallToolRequest
	// From start to finish: the key the call is in flight under, its
	// cancel function, and (on stdio, where it may wait in a queue) its
	// context.
	key    string
	cancel context.CancelFunc
	ctx    context.Context
}

// recognise decodes msg into c when the fast path can answer it (see the
// conditions above) and reports whether it can. session is the session
// the call would run in, nil for HTTP's ephemeral ones; legacy says
// whether calls of protocol versions before 2026-07-28 may be answered.
func (f *fastPath) recognise(s *server.MCPServer, session server.ClientSession, msg []byte, c *fastCall, legacy bool) bool {
	if !bytes.Contains(msg, []byte(`"tools/call"`)) {
		return false
	}
	var jsonrpc, id, method, params []byte
	if !members(msg, func(k, v []byte) bool {
		switch string(k) {
		case "jsonrpc":
			return once(&jsonrpc, v)
		case "id":
			return once(&id, v)
		case "method":
			return once(&method, v)
		case "params":
			return once(&params, v)
		}
		return false
	}) {
		return false
	}
	if string(jsonrpc) != `"2.0"` || string(method) != `"tools/call"` || params == nil || !plainID(id) {
		return false
	}
	var name, meta, args []byte
	if !members(params, func(k, v []byte) bool {
		switch string(k) {
		case "name":
			return once(&name, v)
		case "_meta":
			return once(&meta, v)
		case "arguments":
			return once(&args, v)
		}
		return false
	}) || name == nil || (meta == nil && !legacy) {
		return false
	}
	// encoding/json decodes what follows, as it does in mcp-go.
	if !json.Valid(msg) || !decodeID(id, c) || json.Unmarshal(params, &c.req.Params) != nil {
		return false
	}
	p := &c.req.Params
	if p.Task != nil || len(p.InputResponses) > 0 || p.RequestState != "" {
		return false
	}
	if p.Meta == nil || len(p.Meta.AdditionalFields) == 0 {
		// mcp-go serves this call in the legacy era: it leaves the
		// session alone and the result undecorated.
		if !legacy || (meta != nil && p.Meta == nil) {
			return false // also "_meta":null, which mcp-go decodes alike
		}
		c.legacy = true
		return f.recogniseTool(s, session, params, c)
	}
	for k := range p.Meta.AdditionalFields {
		switch k {
		case mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientCapabilities, mcp.MetaKeyClientInfo:
		default:
			return false
		}
	}
	c.version = p.Meta.ProtocolVersion()
	if !mcp.IsModernProtocol(c.version) || !mcp.IsValidProtocolVersion(c.version) {
		return false
	}
	// mcp-go requires capabilities that decode; {} always does.
	if caps, ok := p.Meta.AdditionalFields[mcp.MetaKeyClientCapabilities].(map[string]any); !ok || len(caps) > 0 {
		if p.Meta.ClientCapabilities() == nil {
			return false
		}
	}
	return f.recogniseTool(s, session, params, c)
}

// recogniseTool finishes recognise: the tool must be one of this
// package's, registered on a server without hooks, and not the session's
// own.
func (f *fastPath) recogniseTool(s *server.MCPServer, session server.ClientSession, params []byte, c *fastCall) bool {
	p := &c.req.Params
	t := s.GetTool(p.Name)
	if t == nil || t.Tool.Execution != nil || t.Handler == nil ||
		reflect.ValueOf(t.Handler).Pointer() != toolCode || !f.ownHooks(s.GetHooks()) || sessionTool(session, p.Name) {
		return false
	}
	c.tool = t
	c.params = params
	c.req.Method = string(mcp.MethodToolsCall)
	return true
}

// sessionTool reports whether session has a tool of its own named name,
// which would win over the server's in mcp-go (no session of mcp-go
// v1.2.1's stdio or 2026-07-28 HTTP has any).
func sessionTool(session server.ClientSession, name string) bool {
	if st, ok := session.(server.SessionWithTools); ok {
		_, own := st.GetSessionTools()[name]
		return own
	}
	return false
}

// once keeps v in *dst unless a value is there already (a repeated member).
func once(dst *[]byte, v []byte) bool {
	if *dst != nil {
		return false
	}
	*dst = v
	return true
}

// plainID reports whether a raw id is a JSON string or an integer of at
// most 15 digits (which survives mcp-go's float64 unchanged); other ids
// go to mcp-go.
func plainID(id []byte) bool {
	if len(id) == 0 {
		return false
	}
	if id[0] == '"' {
		return true // json.Unmarshal checks the rest
	}
	d := id
	if d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 15 || (d[0] == '0' && len(id) > 1) {
		return false // also "-0", which mcp-go echoes as -0
	}
	for _, b := range d {
		if b < '0' || b > '9' {
			return false
		}
	}
	return true
}

// decodeID sets c.id to the plain id as encoding/json decodes it into an
// any, and c.idJSON to it as encoding/json encodes that back. An integer
// of at most 15 digits without a leading zero (plainID) is exact as a
// float64 and encodes back to its own digits, so it needs neither.
func decodeID(id []byte, c *fastCall) bool {
	if id[0] != '"' {
		f, err := strconv.ParseFloat(string(id), 64)
		c.id, c.idJSON = f, bytes.Clone(id)
		return err == nil
	}
	if json.Unmarshal(id, &c.id) != nil {
		return false
	}
	var err error
	c.idJSON, err = json.Marshal(c.id)
	return err == nil
}

// inflightKey is mcp-go's key of a request in its in-flight map.
func inflightKey(session server.ClientSession, id any) string {
	if session != nil {
		return idKey(session.SessionID(), id)
	}
	return idKey("", id)
}

// idKey is fmt.Sprintf("%s:%v", sessionID, id), without fmt for the ids
// JSON decodes most (strings and numbers): it is on every call's path.
func idKey(sessionID string, id any) string {
	switch v := id.(type) {
	case string:
		return sessionID + ":" + v
	case float64:
		return sessionID + ":" + strconv.FormatFloat(v, 'g', -1, 64)
	}
	return fmt.Sprintf("%s:%v", sessionID, id)
}

// call runs c's tool under ctx and returns the encoded JSON-RPC reply,
// without a newline, as mcp-go would encode it; nil when mcp-go could not
// have encoded it either (it would then write nothing). ctx carries the
// session mcp-go would give the call, if it has an ID (stdio's); HTTP's
// ephemeral sessions have none, and session is then nil.
func (f *fastPath) call(ctx context.Context, c *fastCall, session server.ClientSession) []byte {
	ctx = f.start(ctx, c, session)
	defer f.finish(c)
	return f.run(ctx, c)
}

// start puts c in flight under a context of its own, derived from ctx,
// and returns that context: from now on a notifications/cancelled naming
// c cancels it (cancelInflight). finish ends it.
func (f *fastPath) start(ctx context.Context, c *fastCall, session server.ClientSession) context.Context {
	ctx, c.cancel = context.WithCancel(ctx)
	c.key = inflightKey(session, c.id)
	f.inflight.Store(c.key, c.cancel)
	return ctx
}

// finish takes c, started, out of flight and releases its context.
func (f *fastPath) finish(c *fastCall) {
	c.cancel()
	f.inflight.Delete(c.key)
	c.cancel, c.ctx = nil, nil
}

// run runs c's tool under ctx, its context from start, and encodes the
// reply (call).
func (f *fastPath) run(ctx context.Context, c *fastCall) []byte {
	f.served.Add(1)
	res, err := c.tool.Handler(ctx, c.req)
	return f.reply(c, res, err)
}

// serve answers the recognised call c in session, as stdio and the
// in-process transport do: a tool that panics gets mcp-go's internal-error
// reply, and onPanic (when set) hears of it.
func (f *fastPath) serve(ctx context.Context, c *fastCall, session server.ClientSession, onPanic func(any)) []byte {
	return f.serveStarted(f.start(ctx, c, session), c, session, onPanic)
}

// serveStarted is serve for a call already started under ctx (start); it
// finishes c.
func (f *fastPath) serveStarted(ctx context.Context, c *fastCall, session server.ClientSession, onPanic func(any)) (out []byte) {
	defer f.finish(c)
	defer func() {
		if r := recover(); r != nil {
			if onPanic != nil {
				onPanic(r)
			}
			out = errorReply(c.id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", r))
		}
	}()
	c.req.Header = http.Header{}
	if !c.legacy {
		applyProtocolInfo(session, c.req.Params.Meta)
	}
	return f.run(ctx, c)
}

// cancelInflight cancels the call in flight under key, as mcp-go's
// handling of notifications/cancelled does for its own.
func (f *fastPath) cancelInflight(key string) {
	if v, ok := f.inflight.LoadAndDelete(key); ok {
		v.(context.CancelFunc)()
	}
}

// reply encodes the answer to c: the tool's result (decorated as mcp-go
// decorates a 2026-07-28 result), or the error mcp-go makes of a failed
// handler.
func (f *fastPath) reply(c *fastCall, res *mcp.CallToolResult, err error) []byte {
	switch {
	case err != nil:
		return errorReply(c.id, mcp.INTERNAL_ERROR, err.Error())
	case res == nil:
		return errorReply(c.id, mcp.INTERNAL_ERROR, fmt.Sprintf("tool '%s' handler returned no result", c.req.Params.Name))
	}
	if text, ok := plainText(res); ok {
		return f.textReply(c.idJSON, text, res.IsError, c.legacy)
	}
	if c.legacy {
		out, err := json.Marshal(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(c.id), res))
		if err != nil {
			return nil
		}
		return out
	}
	if res.GetResultType() == "" {
		res.SetResultType(mcp.ResultTypeComplete)
	}
	if m := res.EnsureResultMeta(); m != nil && m.ServerInfo() == nil {
		m.SetServerInfo(f.info)
	}
	out, err := json.Marshal(mcp.NewJSONRPCResultResponse(mcp.NewRequestId(c.id), res))
	if err != nil {
		return nil
	}
	return out
}

// errorReply is mcp-go's JSON-RPC error reply.
func errorReply(id any, code int, msg string) []byte {
	out, err := json.Marshal(mcp.JSONRPCError{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(id),
		Error:   mcp.NewJSONRPCErrorDetails(code, msg, nil),
	})
	if err != nil {
		return nil
	}
	return out
}

// plainText returns the text of a result that is one plain text content
// and nothing else, the shape textReply encodes.
func plainText(r *mcp.CallToolResult) (string, bool) {
	if r.Meta != nil || r.ResultType != "" || r.StructuredContent != nil || len(r.RawStructuredContent) > 0 ||
		len(r.InputRequests) > 0 || r.RequestState != "" || len(r.Content) != 1 {
		return "", false
	}
	tc, ok := r.Content[0].(mcp.TextContent)
	if !ok || tc.Annotations != nil || tc.Meta != nil || tc.Type != mcp.ContentTypeText {
		return "", false
	}
	return tc.Text, true
}

// textReply is the reply mcp-go encodes for a plain text result, written
// in one pass: the members of the result map in encoding/json's (sorted)
// order, the text escaped as encoding/json escapes it. A legacy result has
// no _meta and no resultType.
func (f *fastPath) textReply(id []byte, text string, isError, legacy bool) []byte {
	const (
		head       = `{"jsonrpc":"2.0","id":`
		meta       = `,"result":{"_meta":`
		body       = `,"content":[{"type":"text","text":`
		legacyBody = `,"result":{"content":[{"type":"text","text":`
		tail       = `,"resultType":"complete"}}`
	)
	out := make([]byte, 0, len(head)+len(id)+len(meta)+len(f.resultMeta)+len(body)+
		len(text)+len(text)/4+len(`"}],"isError":true`)+len(tail)+2)
	out = append(out, head...)
	out = append(out, id...)
	if legacy {
		out = append(out, legacyBody...)
	} else {
		out = append(out, meta...)
		out = append(out, f.resultMeta...)
		out = append(out, body...)
	}
	out = appendJSONString(out, text)
	out = append(out, "}]"...)
	if isError {
		out = append(out, `,"isError":true`...)
	}
	if legacy {
		return append(out, "}}"...)
	}
	return append(out, tail...)
}

// handle answers msg on the fast path when it can: the reply without a
// newline (nil if mcp-go would have written none) and true. ctx is the
// call's context as the transport made it (principal, trace context, and
// the session if it has an ID).
func (f *fastPath) handle(ctx context.Context, s *server.MCPServer, msg []byte) ([]byte, bool) {
	session := server.ClientSessionFromContext(ctx)
	var c fastCall
	if !f.recognise(s, session, msg, &c, true) {
		return nil, false
	}
	c.req.Header = http.Header{} // what mcp-go gives a request without headers
	if !c.legacy {
		applyProtocolInfo(session, c.req.Params.Meta)
	}
	return f.call(ctx, &c, session), true
}

// applyProtocolInfo gives a session what a 2026-07-28 request's _meta says
// about its client, and marks it initialized, as mcp-go does for every
// such request (the handshake that used to do it is gone).
func applyProtocolInfo(session server.ClientSession, meta *mcp.Meta) {
	if session == nil {
		return
	}
	if s, ok := session.(server.SessionWithClientInfo); ok {
		if info := meta.ClientInfo(); info != nil {
			s.SetClientInfo(*info)
		}
		if caps := meta.ClientCapabilities(); caps != nil {
			s.SetClientCapabilities(*caps)
		}
	}
	if !session.Initialized() {
		session.Initialize()
	}
}

// cancelledID returns the requestId of a notifications/cancelled that
// mcp-go's HandleMessage would act on.
func cancelledID(msg []byte) (any, bool) {
	if !bytes.Contains(msg, []byte(`notifications/cancelled`)) {
		return nil, false
	}
	var base struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id,omitempty"`
	}
	var n mcp.JSONRPCNotification
	if json.Unmarshal(msg, &base) != nil || base.JSONRPC != mcp.JSONRPC_VERSION || base.ID != nil ||
		json.Unmarshal(msg, &n) != nil || n.Method != string(mcp.MethodNotificationCancelled) {
		return nil, false
	}
	id, ok := n.Params.AdditionalFields["requestId"]
	return id, ok
}
