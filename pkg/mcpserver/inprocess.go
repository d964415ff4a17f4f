// The in-process transport: an mcp-go client transport that hands each
// message to a server in the same process, with the fast path in front.

package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Why it exists: mcp-go's own InProcessTransport always calls
// HandleMessage, so an in-process client never reached the fast path and
// paid mcp-go's dispatch (~80 µs for SELECT 1) plus a marshal and an
// unmarshal of the reply it already had as a value. This transport gives
// the server the request's bytes exactly as mcp-go's does, lets the fast
// path answer what it answers on stdio and HTTP, and decodes its reply
// once; every other message goes to HandleMessage as before. The session
// is registered the same way, so notifications still reach the client.

// InProcessTransport implements mcp-go's transport.Interface for a server
// built by New in this process.
type InProcessTransport struct {
	srv     *server.MCPServer
	fast    *fastPath // nil with Config.DisableFastPath
	id      string
	session *server.InProcessSession

	mu             sync.Mutex
	started        bool
	closed         bool
	onNotification func(mcp.JSONRPCNotification)
	done           chan struct{}
	closeOnce      sync.Once
}

var _ transport.Interface = (*InProcessTransport)(nil)

// NewInProcessTransport returns a transport to s.
func NewInProcessTransport(s *server.MCPServer) *InProcessTransport {
	return &InProcessTransport{srv: s, fast: fastPathOf(s), id: s.GenerateInProcessSessionID(), done: make(chan struct{})}
}

// NewInProcessClient returns an mcp-go client of s over NewInProcessTransport;
// like client.NewInProcessClient, it still needs Start and Initialize.
func NewInProcessClient(s *server.MCPServer) *client.Client {
	return client.NewClient(NewInProcessTransport(s))
}

// Start registers the client's session with the server.
func (t *InProcessTransport) Start(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return transport.ErrTransportClosed
	}
	if t.started {
		return nil
	}
	session := server.NewInProcessSessionWithHandlers(t.id, nil, nil, nil)
	if err := t.srv.RegisterSession(ctx, session); err != nil {
		return fmt.Errorf("in-process transport: register session: %w", err)
	}
	t.session, t.started = session, true
	go t.forward(session.ClientNotifications())
	return nil
}

// forward hands the server's notifications to the client until Close.
func (t *InProcessTransport) forward(ch <-chan mcp.JSONRPCNotification) {
	for {
		select {
		case <-t.done:
			return
		case n, ok := <-ch:
			if !ok {
				return
			}
			t.mu.Lock()
			h := t.onNotification
			t.mu.Unlock()
			if h != nil {
				h(n)
			}
		}
	}
}

// SendRequest answers request on the fast path when it can, from its
// values or else from its encoding as mcp-go's transport makes it, and
// through HandleMessage otherwise.
func (t *InProcessTransport) SendRequest(ctx context.Context, request transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	if t.session != nil {
		ctx = t.srv.WithContext(ctx, t.session)
	}
	var c fastCall
	reply, fast := t.fastValueReply(ctx, &request, &c)
	if !fast {
		msg, err := json.Marshal(request)
		if err != nil {
			return nil, fmt.Errorf("in-process transport: encode request: %w", err)
		}
		c = fastCall{} // recogniseValue may have filled part of it
		if reply, fast = t.fastReply(ctx, msg, &c); !fast {
			if reply, err = json.Marshal(t.srv.HandleMessage(ctx, append(msg, '\n'))); err != nil {
				return nil, fmt.Errorf("in-process transport: encode reply: %w", err)
			}
		}
	}
	if fast {
		if resp, ok := resultResponse(reply, &c); ok {
			return resp, nil
		}
	}
	if reply == nil {
		reply = []byte("null") // no reply, as mcp-go's transport sees it
	}
	var resp transport.JSONRPCResponse
	if err := json.Unmarshal(reply, &resp); err != nil {
		return nil, fmt.Errorf("in-process transport: decode reply: %w", err)
	}
	return &resp, nil
}

// fastValueReply answers request on the fast path without encoding it,
// when recogniseValue can (inprocess_value.go).
func (t *InProcessTransport) fastValueReply(ctx context.Context, request *transport.JSONRPCRequest, c *fastCall) ([]byte, bool) {
	if t.fast == nil {
		return nil, false
	}
	session := t.clientSession()
	if !t.fast.recogniseValue(t.srv, session, request, c) {
		return nil, false
	}
	t.fast.fromValues.Add(1)
	return t.fast.serve(ctx, c, session, nil), true
}

// clientSession is the transport's session, nil before Start (not a nil
// pointer).
func (t *InProcessTransport) clientSession() server.ClientSession {
	if t.session != nil {
		return t.session
	}
	return nil
}

// fastReply answers msg on the fast path when it can, recognising it into
// c; a panicking tool gets mcp-go's internal-error reply, as on stdio.
func (t *InProcessTransport) fastReply(ctx context.Context, msg []byte, c *fastCall) ([]byte, bool) {
	if t.fast == nil {
		return nil, false
	}
	session := t.clientSession()
	if !t.fast.recognise(t.srv, session, msg, c, true) {
		return nil, false
	}
	return t.fast.serve(ctx, c, session, nil), true
}

// resultResponse is the response json.Unmarshal makes of the fast path's
// reply to c when that is a result, without decoding it: the id as
// mcp-go's RequestId decodes it and the result's bytes as they are.
func resultResponse(reply []byte, c *fastCall) (*transport.JSONRPCResponse, bool) {
	const head, mid = `{"jsonrpc":"2.0","id":`, `,"result":`
	rest, ok := bytes.CutPrefix(reply, []byte(head))
	if ok {
		rest, ok = bytes.CutPrefix(rest, c.idJSON)
	}
	if ok {
		rest, ok = bytes.CutPrefix(rest, []byte(mid))
	}
	if !ok || len(rest) < 2 || rest[len(rest)-1] != '}' {
		return nil, false
	}
	var id any
	switch v := c.id.(type) {
	case string:
		id = v
	case float64: // plainID let through integers of at most 15 digits
		id = int64(v)
	default:
		return nil, false
	}
	return &transport.JSONRPCResponse{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id),
		Result: json.RawMessage(rest[:len(rest)-1])}, true
}

// SendNotification delivers a notification to mcp-go; a cancellation also
// reaches a call in flight on the fast path.
func (t *InProcessTransport) SendNotification(ctx context.Context, n mcp.JSONRPCNotification) error {
	msg, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("in-process transport: encode notification: %w", err)
	}
	if t.session != nil {
		ctx = t.srv.WithContext(ctx, t.session)
	}
	t.srv.HandleMessage(ctx, append(msg, '\n'))
	if id, ok := cancelledID(msg); ok && t.fast != nil && t.session != nil {
		t.fast.cancelInflight(inflightKey(t.session, id))
	}
	return nil
}

// SetNotificationHandler sets where server notifications go.
func (t *InProcessTransport) SetNotificationHandler(h func(mcp.JSONRPCNotification)) {
	t.mu.Lock()
	t.onNotification = h
	t.mu.Unlock()
}

// Close unregisters the session.
func (t *InProcessTransport) Close() error {
	t.mu.Lock()
	t.closed = true
	session := t.session
	t.mu.Unlock()
	t.closeOnce.Do(func() { close(t.done) })
	if session != nil {
		t.srv.UnregisterSession(context.Background(), t.id)
	}
	return nil
}

// GetSessionId is empty, as for mcp-go's in-process transport.
func (t *InProcessTransport) GetSessionId() string { return "" }
