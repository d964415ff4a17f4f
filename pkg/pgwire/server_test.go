// Test server: Accept and Welcome on a loopback listener, then canned answers to simple queries.

package pgwire

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// result is what the test server saw for one connection.
type result struct {
	client  *Client
	startup *Startup
	err     error
}

// testServer accepts connections on loopback, runs Accept with cfg, and
// answers every simple Query with one row holding the text "hello". Each
// connection's outcome is sent on results.
type testServer struct {
	addr    string
	results chan result
}

func startServer(t *testing.T, cfg *ServerConfig) *testServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &testServer{addr: ln.Addr().String(), results: make(chan result, 16)}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				cl, st, err := Accept(ctx, conn, cfg)
				s.results <- result{cl, st, err}
				if cl == nil {
					return
				}
				if err := cl.Welcome(map[string]string{"server_version": "17.0", "client_encoding": "UTF8", "standard_conforming_strings": "on"}); err != nil {
					return
				}
				serve(cl)
			}()
		}
	}()
	return s
}

// serve answers simple queries with a canned one-row result until Terminate.
func serve(cl *Client) {
	cl.Conn.SetDeadline(time.Now().Add(5 * time.Second))
	f := NewFramer(cl.Conn, 0)
	for {
		typ, _, err := f.Next()
		if err != nil {
			return
		}
		switch typ {
		case 'Q':
			send(cl.Conn,
				&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{{Name: []byte("greeting"), DataTypeOID: 25, DataTypeSize: -1, TypeModifier: -1}}},
				&pgproto3.DataRow{Values: [][]byte{[]byte("hello")}},
				&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")},
				&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case 'X':
			return
		default:
			WriteError(cl.Conn, "ERROR", CodeFeatureNotSupported, "only simple queries")
			send(cl.Conn, &pgproto3.ReadyForQuery{TxStatus: 'I'})
		}
	}
}

// next waits for the server's outcome of one connection, skipping
// connections the client hung up on during startup (pgx's sslmode=prefer
// hangs up after an 'N' and dials again without TLS).
func (s *testServer) next(t *testing.T) result {
	t.Helper()
	for {
		select {
		case r := <-s.results:
			if errors.Is(r.err, io.EOF) && (r.startup == nil || r.startup.Params == nil) {
				continue
			}
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no connection reached the server")
			return result{}
		}
	}
}

func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
