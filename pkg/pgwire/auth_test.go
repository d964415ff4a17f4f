// Tests with pgx as the client: md5 and SCRAM-SHA-256, right and wrong passwords, unknown users, TLS.

package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// wantRefused checks that the client got SQLSTATE code with message.
func wantRefused(t *testing.T, err error, code, message string) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		t.Fatalf("client got %v, want SQLSTATE %s", err, code)
	}
	if pe.Code != code || pe.Message != message || pe.Severity != "FATAL" {
		t.Fatalf("client got %s %s %q, want FATAL %s %q", pe.Severity, pe.Code, pe.Message, code, message)
	}
}

func TestPasswordMethods(t *testing.T) {
	tlsCfg, caFile := testTLS(t)
	table := map[string]Credential{
		"md5plain":   {Method: AuthMD5, Password: "s3cret"},
		"md5hash":    {Method: AuthMD5, Password: MD5Secret("md5hash", "s3cret")},
		"md5scram":   {Method: AuthMD5, Password: SCRAMVerifier("s3cret")}, // md5 with a SCRAM secret runs SCRAM
		"scramplain": {Method: AuthSCRAM, Password: "s3cret"},
		"scramver":   {Method: AuthSCRAM, Password: SCRAMVerifier("s3cret")},
		"scrammd5":   {Method: AuthSCRAM, Password: MD5Secret("scrammd5", "s3cret")}, // cannot serve SCRAM
		"unicode":    {Method: AuthSCRAM, Password: "pässwörd"},
		"rejected":   {Method: AuthReject},
		"unset":      {},
	}
	s := startServer(t, &ServerConfig{TLS: tlsCfg, Credentials: users(table)})
	base := "host=127.0.0.1 port=" + s.addr[strings.LastIndex(s.addr, ":")+1:] + " dbname=shop "
	tests := []struct {
		name, conn string
		code       string // "" for success
		message    string
	}{
		{"md5 plaintext", "user=md5plain password=s3cret sslmode=disable", "", ""},
		{"md5 plaintext wrong", "user=md5plain password=nope sslmode=disable", CodeInvalidPassword, `password authentication failed for user "md5plain"`},
		{"md5 stored hash", "user=md5hash password=s3cret sslmode=disable", "", ""},
		{"md5 stored hash wrong", "user=md5hash password=S3cret sslmode=disable", CodeInvalidPassword, `password authentication failed for user "md5hash"`},
		{"md5 with SCRAM secret", "user=md5scram password=s3cret sslmode=disable", "", ""},
		{"scram plaintext", "user=scramplain password=s3cret sslmode=disable", "", ""},
		{"scram plaintext again (cached)", "user=scramplain password=s3cret sslmode=disable", "", ""},
		{"scram plaintext wrong", "user=scramplain password=s3cre sslmode=disable", CodeInvalidPassword, `password authentication failed for user "scramplain"`},
		{"scram verifier", "user=scramver password=s3cret sslmode=disable", "", ""},
		{"scram verifier wrong", "user=scramver password=x sslmode=disable", CodeInvalidPassword, `password authentication failed for user "scramver"`},
		{"scram verifier over TLS", "user=scramver password=s3cret sslmode=require", "", ""},
		{"scram over TLS without channel binding", "user=scramver password=s3cret sslmode=require channel_binding=disable", "", ""},
		{"scram verifier, channel binding required", "user=scramver password=s3cret sslmode=require channel_binding=require", "", ""},
		{"scram plaintext, channel binding required", "user=scramplain password=s3cret sslmode=require channel_binding=require", "", ""},
		{"channel binding, wrong password", "user=scramver password=x sslmode=require channel_binding=require", CodeInvalidPassword, `password authentication failed for user "scramver"`},
		{"channel binding over direct TLS", "user=scramver password=s3cret sslmode=verify-full sslnegotiation=direct channel_binding=require sslrootcert=" + caFile, "", ""},
		{"scram verifier TLS verify-full", "user=scramver password=s3cret sslmode=verify-full sslrootcert=" + caFile, "", ""},
		{"scram over direct TLS", "user=scramver password=s3cret sslmode=verify-full sslnegotiation=direct sslrootcert=" + caFile, "", ""},
		{"scram unicode password", "user=unicode password=pässwörd sslmode=disable", "", ""},
		{"scram with md5 secret", "user=scrammd5 password=s3cret sslmode=disable", CodeInvalidPassword, `password authentication failed for user "scrammd5"`},
		{"unknown user", "user=nobody password=s3cret sslmode=disable", CodeInvalidPassword, `password authentication failed for user "nobody"`},
		{"reject", "user=rejected password=s3cret sslmode=disable", CodeInvalidAuthorization, `connection rejected for user "rejected", database "shop"`},
		{"method unset", "user=unset sslmode=disable", CodeInvalidAuthorization, `no valid authentication method for user "unset"`},
		{"protocol 3.2 asked, 3.0 negotiated", "user=scramver password=s3cret sslmode=disable max_protocol_version=3.2", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := connect(t, base+tt.conn)
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				if got != "hello" {
					t.Fatalf("query returned %q", got)
				}
				if r := s.next(t); r.err != nil || r.client == nil {
					t.Fatalf("server: %v", r.err)
				}
				return
			}
			wantRefused(t, err, tt.code, tt.message)
			if e := asError(s.next(t).err); e == nil || e.Code != tt.code {
				t.Fatalf("server returned %v, want an *Error with %s", e, tt.code)
			}
		})
	}
}

func TestTLSReported(t *testing.T) {
	tlsCfg, caFile := testTLS(t)
	s := startServer(t, &ServerConfig{TLS: tlsCfg, RequireTLS: true, Credentials: users(map[string]Credential{"alice": {Method: AuthTrust}})})
	if _, err := connect(t, "postgres://alice@"+s.addr+"/shop?sslmode=verify-full&sslrootcert="+caFile); err != nil {
		t.Fatal(err)
	}
	r := s.next(t)
	if r.err != nil || !r.client.Startup.TLS {
		t.Fatalf("server: err %v, TLS %v", r.err, r.startup.TLS)
	}
	if _, ok := r.client.Conn.(interface{ ConnectionState() tls.ConnectionState }); !ok {
		t.Errorf("Client.Conn is a %T, want a *tls.Conn", r.client.Conn)
	}
}

func TestRequireTLSRefusesPlaintext(t *testing.T) {
	tlsCfg, _ := testTLS(t)
	s := startServer(t, &ServerConfig{TLS: tlsCfg, RequireTLS: true, Credentials: users(map[string]Credential{"alice": {Method: AuthTrust}})})
	_, err := connect(t, "postgres://alice@"+s.addr+"/shop?sslmode=disable")
	wantRefused(t, err, CodeInvalidAuthorization, "SSL required")
	if e := asError(s.next(t).err); e == nil || e.Code != CodeInvalidAuthorization {
		t.Fatalf("server returned %v", e)
	}
}

func TestVerifyFullRejectsWrongCA(t *testing.T) {
	tlsCfg, _ := testTLS(t)
	_, otherCA := testTLS(t)
	s := startServer(t, &ServerConfig{TLS: tlsCfg, Credentials: users(map[string]Credential{"alice": {Method: AuthTrust}})})
	if _, err := connect(t, "postgres://alice@"+s.addr+"/shop?sslmode=verify-full&sslrootcert="+otherCA); err == nil {
		t.Fatal("connected although the server's certificate is not from the client's CA")
	}
}

func TestCancelRequest(t *testing.T) {
	s := startServer(t, &ServerConfig{Credentials: users(map[string]Credential{"alice": {Method: AuthTrust}})})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, "postgres://alice@"+s.addr+"/shop?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	r := s.next(t)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if conn.PID() != r.client.Key.PID || string(conn.SecretKey()) != string(r.client.Key.Secret) {
		t.Fatalf("client holds key %d/%x, server gave %d/%x", conn.PID(), conn.SecretKey(), r.client.Key.PID, r.client.Key.Secret)
	}
	if err := conn.CancelRequest(ctx); err != nil {
		t.Fatal(err)
	}
	c := s.next(t)
	if c.err != nil || c.client != nil || c.startup == nil || c.startup.Cancel == nil {
		t.Fatalf("cancel: err %v, client %v, startup %+v", c.err, c.client, c.startup)
	}
	if !c.startup.Cancel.Equal(r.client.Key) {
		t.Fatalf("cancel key %+v, want %+v", *c.startup.Cancel, r.client.Key)
	}
}
