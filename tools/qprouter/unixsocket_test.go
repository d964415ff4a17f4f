package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/qpkit/qpkit/pkg/pgtest"
)

// TestUnixSocket runs qprouter with --unix-socket-dir in both modes: psql
// and pgx reach it through DIR/.s.PGSQL.<port>, host-based rules see those
// clients as local (a local reject line refuses them while TCP clients get
// in; a peer line lets in the database user named as this process's
// operating-system user, and no other, and a peer line with map= the
// database users its ident map gives that user), and the socket file goes
// away when qprouter stops.
func TestUnixSocket(t *testing.T) {
	c := pgtest.Shared(t)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	admin, err := pgx.Connect(context.Background(), c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	var exists bool
	if err := admin.QueryRow(context.Background(), "SELECT count(*) > 0 FROM pg_roles WHERE rolname = $1", me.Username).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if !exists {
		if _, err := admin.Exec(context.Background(), "CREATE ROLE "+pgx.Identifier{me.Username}.Sanitize()+" LOGIN"); err != nil {
			t.Fatal(err)
		}
	}
	serverExec(t, c.URL(), "DROP ROLE IF EXISTS peer_mapped", "CREATE ROLE peer_mapped LOGIN")
	for _, mode := range []string{"session", "transaction"} {
		t.Run(mode, func(t *testing.T) {
			bg := context.Background()
			dir := t.TempDir()
			sock := filepath.Join(dir, "sock")
			if err := os.Mkdir(sock, 0o755); err != nil {
				t.Fatal(err)
			}
			rules := filepath.Join(dir, "pg_hba.conf")
			write(t, rules, "local all postgres trust\nlocal all nobody reject\nlocal all peer_mapped,peer_unmapped peer map=ops\nlocal all all peer\nhost all all 127.0.0.1/32 trust\n")
			idents := filepath.Join(dir, "pg_ident.conf")
			write(t, idents, "ops "+me.Username+" peer_mapped\n")
			url, stop := startRouter(t, c.URL(), "--pool-mode", mode, "--unix-socket-dir", sock, "--unix-socket-mode", "0700", "--auth-hba-file", rules, "--auth-ident-file", idents)
			stopped := false
			defer func() {
				if !stopped {
					stop()
				}
			}()
			port := strings.TrimSuffix(url[strings.LastIndex(url, ":")+1:], "/postgres?sslmode=disable")
			path := filepath.Join(sock, ".s.PGSQL."+port)
			fi, err := os.Stat(path)
			if err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("socket file: %v %v", fi, err)
			}

			out, err := exec.Command("psql", "-X", "-Atq", "-h", sock, "-p", port, "-U", "postgres", "-d", "postgres",
				"-c", "SELECT 'via ' || coalesce(inet_client_addr()::text, 'socket')").CombinedOutput()
			// The proxy reaches the server over TCP whatever the client used.
			if err != nil || strings.TrimSpace(string(out)) != "via 127.0.0.1/32" {
				t.Errorf("psql over the socket: %q %v", out, err)
			}
			cn, err := pgx.Connect(bg, fmt.Sprintf("host=%s port=%s user=postgres dbname=postgres", sock, port))
			if err != nil {
				t.Fatal(err)
			}
			for i := range 3 {
				var n int
				if err := cn.QueryRow(bg, "SELECT $1::int + 1", i).Scan(&n); err != nil || n != i+1 {
					t.Errorf("pgx over the socket, query %d: %d %v", i, n, err)
				}
			}
			cn.Close(bg)

			// The local reject line, for a user the server does not even know.
			_, err = pgx.Connect(bg, fmt.Sprintf("host=%s port=%s user=nobody dbname=postgres", sock, port))
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "28000" || pe.Message != `pg_hba.conf rejects connection for host "[local]", user "nobody", database "postgres", no encryption` {
				t.Errorf("a local client the rules reject: %v", err)
			}

			// peer: this process's user gets in, another does not.
			cn, err = pgx.Connect(bg, fmt.Sprintf("host=%s port=%s user=%s dbname=postgres", sock, port, me.Username))
			if err != nil {
				t.Errorf("peer as %s: %v", me.Username, err)
			} else {
				var who string
				if err := cn.QueryRow(bg, "SELECT current_user").Scan(&who); err != nil || who != me.Username {
					t.Errorf("peer as %s: the server runs as %q (%v)", me.Username, who, err)
				}
				cn.Close(bg)
			}
			_, err = pgx.Connect(bg, fmt.Sprintf("host=%s port=%s user=peer_someone_else dbname=postgres", sock, port))
			if !errors.As(err, &pe) || pe.Code != "28000" || pe.Message != `Peer authentication failed for user "peer_someone_else"` {
				t.Errorf("peer as another user: %v", err)
			}
			// peer with map=: the ident map lets this process's user be peer_mapped only.
			cn, err = pgx.Connect(bg, fmt.Sprintf("host=%s port=%s user=peer_mapped dbname=postgres", sock, port))
			if err != nil {
				t.Errorf("peer as peer_mapped through the map: %v", err)
			} else {
				cn.Close(bg)
			}
			_, err = pgx.Connect(bg, fmt.Sprintf("host=%s port=%s user=peer_unmapped dbname=postgres", sock, port))
			if !errors.As(err, &pe) || pe.Code != "28000" || pe.Message != `Peer authentication failed for user "peer_unmapped"` {
				t.Errorf("peer as a user the map does not give: %v", err)
			}

			stop()
			stopped = true
			if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("socket file after the stop: %v", err)
			}
		})
	}
}
