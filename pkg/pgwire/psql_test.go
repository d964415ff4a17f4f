// Tests with psql (libpq) as the client: SCRAM over TLS with and without channel binding, and md5.

package pgwire

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not on PATH")
	}
	tlsCfg, caFile := testTLS(t)
	s := startServer(t, &ServerConfig{TLS: tlsCfg, Credentials: users(map[string]Credential{
		"scram": {Method: AuthSCRAM, Password: SCRAMVerifier("s3cret")},
		"md5":   {Method: AuthMD5, Password: "s3cret"},
	})})
	host, port, _ := strings.Cut(s.addr, ":")
	run := func(t *testing.T, conninfo, password string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, psql, "-X", "-A", "-t", "-c", "select 'hello'", "host="+host+" port="+port+" dbname=shop "+conninfo)
		cmd.Env = append(os.Environ(), "PGPASSWORD="+password, "HOME="+t.TempDir(), "PGCONNECT_TIMEOUT=5")
		out, err := cmd.CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	for _, tc := range []struct{ name, conninfo string }{
		{"scram over TLS verify-full", "user=scram sslmode=verify-full sslrootcert=" + caFile},
		{"scram over TLS, channel_binding=prefer", "user=scram sslmode=require channel_binding=prefer"},
		{"scram over TLS, channel_binding=require", "user=scram sslmode=verify-full channel_binding=require sslrootcert=" + caFile},
		{"scram over TLS, channel_binding=disable", "user=scram sslmode=require channel_binding=disable"},
		{"md5 without TLS", "user=md5 sslmode=disable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := run(t, tc.conninfo, "s3cret")
			if err != nil || out != "hello" {
				t.Fatalf("psql: %v\n%s", err, out)
			}
			if r := s.next(t); r.err != nil {
				t.Fatal(r.err)
			}
		})
	}
	t.Run("wrong password", func(t *testing.T) {
		out, err := run(t, "user=scram sslmode=require", "nope")
		if err == nil || !strings.Contains(out, `password authentication failed for user "scram"`) {
			t.Fatalf("psql: %v\n%s", err, out)
		}
		if r := s.next(t); !IsAuthFailure(r.err) {
			t.Fatalf("server: %v", r.err)
		}
	})
	t.Run("channel_binding=require, wrong password", func(t *testing.T) {
		out, err := run(t, "user=scram sslmode=require channel_binding=require", "nope")
		if err == nil || !strings.Contains(out, `password authentication failed for user "scram"`) {
			t.Fatalf("psql: %v\n%s", err, out)
		}
		if r := s.next(t); !IsAuthFailure(r.err) {
			t.Fatalf("server: %v", r.err)
		}
	})
}
