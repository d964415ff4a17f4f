package pgwire

import (
	"context"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

// readCounter counts the Read calls that reach the connection.
type readCounter struct {
	net.Conn
	reads atomic.Int32
}

func (c *readCounter) Read(p []byte) (int, error) {
	c.reads.Add(1)
	return c.Conn.Read(p)
}

// A startup packet and a password message, each sent in one write, are
// read with one read call each, not header then body.
func TestHandshakeOneReadPerMessage(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg := &ServerConfig{Credentials: users(map[string]Credential{"bob": {Method: AuthMD5, Password: "pw"}})}
	type out struct {
		reads int32
		err   error
	}
	done := make(chan out, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			done <- out{err: err}
			return
		}
		defer conn.Close()
		rc := &readCounter{Conn: conn}
		_, _, err = Accept(context.Background(), rc, cfg)
		done <- out{rc.reads.Load(), err}
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(packet(protocol30, params("user", "bob", "application_name", "handshake-test")...)); err != nil {
		t.Fatal(err)
	}
	fe := pgproto3.NewFrontend(c, c)
	msg, err := fe.Receive()
	if err != nil {
		t.Fatal(err)
	}
	salt := msg.(*pgproto3.AuthenticationMD5Password).Salt
	pw := "md5" + md5hex(md5hex("pw"+"bob")+string(salt[:]))
	buf, _ := (&pgproto3.PasswordMessage{Password: pw}).Encode(nil)
	if _, err := c.Write(buf); err != nil {
		t.Fatal(err)
	}
	if msg, err := fe.Receive(); err != nil {
		t.Fatal(err)
	} else if _, ok := msg.(*pgproto3.AuthenticationOk); !ok {
		t.Fatalf("got %T, want AuthenticationOk", msg)
	}
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if res.reads != 2 {
		t.Errorf("%d reads for a startup packet and a password message, want 2", res.reads)
	}
}

// Bytes a client sends right behind its startup packet are not lost: the
// authenticated client's connection serves them first.
func TestHandshakeKeepsPipelinedBytes(t *testing.T) {
	r := dialRaw(t, context.Background(), trustAll)
	query, _ := (&pgproto3.Query{String: "select 1"}).Encode(nil)
	r.write(append(packet(protocol30, params("user", "bob")...), query...))
	res := r.result()
	if res.err != nil {
		t.Fatal(res.err)
	}
	got := make([]byte, len(query))
	if _, err := io.ReadFull(res.client.Conn, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(query) {
		t.Errorf("client connection served %q, want the pipelined query %q", got, query)
	}
}
