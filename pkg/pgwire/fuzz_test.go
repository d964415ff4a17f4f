// FuzzAccept: arbitrary bytes from a client over net.Pipe never panic Accept and always end it.

package pgwire

import (
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
