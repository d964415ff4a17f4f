// FuzzAccept: arbitrary bytes from a client over net.Pipe never panic Accept and always end it.

package pgwire

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
)

func encode(msgs ...pgproto3.FrontendMessage) []byte {
	var b []byte
	for _, m := range msgs {
		b, _ = m.Encode(b)
	}
	return b
}

func FuzzAccept(f *testing.F) {
	startup := func(user string) []byte { return packet(protocol30, params("user", user, "database", "db")...) }
	f.Add(startup("trusty"))
	f.Add(append(packet(codeGSSENCRequest), append(packet(codeSSLRequest), startup("trusty")...)...))
	f.Add(packet(codeSSLRequest))
	f.Add(append(packet(codeCancelRequest), 0, 0, 0, 1, 1, 2, 3, 4))
	f.Add(append(startup("md5"), encode(&pgproto3.PasswordMessage{Password: "md5" + "0123456789abcdef0123456789abcdef"})...))
	f.Add(append(startup("scram"), encode(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("n,,n=,r=abc")},
		&pgproto3.SASLResponse{Data: []byte("c=biws,r=abcdef,p=AAAA")})...))
	f.Add(append(startup("nobody"), encode(&pgproto3.SASLInitialResponse{AuthMechanism: "SCRAM-SHA-256", Data: []byte("y,,n=,r=x,ext=1")})...))
	f.Add(packet(3<<16|2, params("user", "trusty", "_pq_.x", "1")...))
	f.Add([]byte{tlsRecordHandshake, 3, 1, 0, 5})

	table := map[string]Credential{
		"trusty": {Method: AuthTrust},
		"md5":    {Method: AuthMD5, Password: "pw"},
		"scram":  {Method: AuthSCRAM, Password: SCRAMVerifier("pw")},
		"plain":  {Method: AuthSCRAM, Password: "pw"},
	}
	tlsCfg, _ := testTLS(f)
	cfg := &ServerConfig{TLS: tlsCfg, Credentials: users(table), StartupTimeout: 2 * time.Second}
	f.Fuzz(func(t *testing.T, data []byte) {
		srv, cli := net.Pipe()
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); io.Copy(io.Discard, cli) }()
		go func() { defer wg.Done(); cli.Write(data); cli.Close() }()
		done := make(chan struct{})
		go func() {
			defer close(done)
			cl, st, err := Accept(context.Background(), srv, cfg)
			if err == nil && cl == nil && (st == nil || st.Cancel == nil) {
				t.Error("no error, no client and no cancel")
			}
			if cl != nil {
				if _, isTLS := cl.Conn.(*tls.Conn); isTLS != cl.Startup.TLS {
					t.Errorf("Startup.TLS %v on a %T", cl.Startup.TLS, cl.Conn)
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatal("Accept did not return")
		}
		srv.Close()
		wg.Wait()
	})
}

// FuzzHandshake feeds arbitrary bytes, in arbitrary pieces, to the
// loop's handshake: it never panics, stops at its first decision, and a
// hand-over to Accept replays a suffix of what the client sent.
func FuzzHandshake(f *testing.F) {
	f.Add(packet(protocol30, params("user", "mia")...), uint8(3))
	f.Add(append(packet(codeSSLRequest), packet(protocol30, params("user", "tina")...)...), uint8(8))
	f.Add(packet(codeCancelRequest, 0, 0, 0, 1, 2, 3, 4, 5), uint8(1))
	f.Add([]byte{0, 0, 0, 9, 0, 3, 0, 0, 'u', 0, 0, 'p', 0, 0, 0, 4}, uint8(5))
	f.Fuzz(func(t *testing.T, in []byte, piece uint8) {
		size := int(piece%16) + 1
		h := NewHandshake(quick(hsUsers))
		for i := 0; i < len(in); i += size {
			_, step := h.Feed(in[i:min(i+size, len(in))])
			if step == StepMore {
				continue
			}
			if step == StepAccept && !bytes.HasSuffix(in[:min(i+size, len(in))], h.Replay()) {
				t.Fatalf("replay %q is not a suffix of %q", h.Replay(), in)
			}
			if step == StepFail && h.Err() == nil {
				t.Fatal("StepFail without an error")
			}
			return
		}
	})
}
