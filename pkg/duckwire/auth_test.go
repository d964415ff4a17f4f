package duckwire

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/qpkit/qpkit/pkg/pgwire"
)

func TestSCRAMAuthAndMaxClients(t *testing.T) {
	s := startServer(t, func(c *Config) {
		c.MaxClients = 1
		c.Auth = &pgwire.ServerConfig{Credentials: func(user, _ string) (pgwire.Credential, error) {
			if user != "analyst" {
				return pgwire.Credential{}, pgwire.ErrUnknownUser
			}
			return pgwire.Credential{Method: pgwire.AuthSCRAM, Password: "s3cret"}, nil
		}}
	})
	ctx := context.Background()
	base := strings.Replace(s.url, "analyst@", "analyst:s3cret@", 1)
	c := connect(t, base, false)
	var n int
	if err := c.QueryRow(ctx, "select count(*) from lineitem").Scan(&n); err != nil || n != 1000 {
		t.Fatalf("%d %v", n, err)
	}
	if _, err := pgx.Connect(ctx, base); sqlCode(err) != "53300" {
		t.Fatalf("second client: %v, want 53300", err)
	}
	c.Close(ctx)
	bad := strings.Replace(s.url, "analyst@", "analyst:wrong@", 1)
	if _, err := pgx.Connect(ctx, bad); sqlCode(err) != "28P01" {
		t.Fatalf("wrong password: %v, want 28P01", err)
	}
}
