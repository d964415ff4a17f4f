// Tests with pgx as the client: trust, SSLRequest answered 'N', refusals.

package pgwire

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// users is a Credentials function over a fixed table.
func users(table map[string]Credential) func(user, db string) (Credential, error) {
	return func(user, db string) (Credential, error) {
		c, ok := table[user]
		if !ok {
			return Credential{}, ErrUnknownUser
		}
		return c, nil
	}
}

// connect dials the server with pgx and runs one query, returning its text.
func connect(t *testing.T, connString string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, connString)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	rr := conn.Exec(ctx, "select 'hello'")
	results, err := rr.ReadAll()
	if err != nil {
		return "", err
	}
	if len(results) != 1 || len(results[0].Rows) != 1 {
		return "", errors.New("unexpected result shape")
	}
	return string(results[0].Rows[0][0]), nil
}

func TestTrustWithoutTLS(t *testing.T) {
	s := startServer(t, &ServerConfig{Credentials: users(map[string]Credential{"alice": {Method: AuthTrust}})})
	got, err := connect(t, "postgres://alice@"+s.addr+"/shop?sslmode=prefer&application_name=t1")
	if err != nil {
		t.Fatal(err)
	}
	if got != "hello" {
		t.Fatalf("query returned %q", got)
	}
	r := s.next(t)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.client.Startup.TLS {
		t.Error("TLS reported without a TLS config")
	}
	p := r.client.Startup.Params
	if p["user"] != "alice" || p["database"] != "shop" || p["application_name"] != "t1" {
		t.Errorf("params %v", p)
	}
	if r.client.Key.PID == 0 || len(r.client.Key.Secret) != 4 {
		t.Errorf("cancel key %+v", r.client.Key)
	}
}

func TestNoCredentialsRefuses(t *testing.T) {
	s := startServer(t, &ServerConfig{})
	_, err := connect(t, "postgres://alice@"+s.addr+"/shop?sslmode=disable")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != CodeInvalidAuthorization {
		t.Fatalf("client got %v, want SQLSTATE 28000", err)
	}
	if e := asError(s.next(t).err); e == nil || e.Code != CodeInvalidAuthorization {
		t.Fatalf("server error %v", e)
	}
}
