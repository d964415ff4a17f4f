package route

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// Named entries give a server, a database there and a forced user; the
// default server serves other names under their own; without one they
// are refused with 3D000.
func TestTargets(t *testing.T) {
	tg, err := NewTargets("postgres://u:def@db0:5432/ignored", map[string]string{
		"alias":  "postgres://db1:6000/real",
		"forced": "postgres://app:secret@db2/?sslmode=disable",
		"plain":  "postgresql://db3",
	})
	if err != nil {
		t.Fatal(err)
	}
	pw := func(user string) string { return "file-" + user }
	for _, c := range []struct {
		db, user                   string
		host                       string
		port                       uint16
		wantDB, wantUser, password string
		poolUser                   string
	}{
		{"alias", "bob", "db1", 6000, "real", "bob", "file-bob", "bob"},
		{"forced", "bob", "db2", 5432, "forced", "app", "secret", "app"},
		{"plain", "bob", "db3", 5432, "plain", "bob", "file-bob", "bob"},
		{"other", "bob", "db0", 5432, "other", "bob", "file-bob", "bob"},
	} {
		user := tg.poolUser(c.db, c.user)
		cfg, err := tg.ConnConfig(c.db, user, pw)
		if err != nil {
			t.Fatalf("%s: %v", c.db, err)
		}
		if cfg.Host != c.host || cfg.Port != c.port || cfg.Database != c.wantDB || cfg.User != c.wantUser || cfg.Password != c.password || user != c.poolUser {
			t.Errorf("%s as %s: %s:%d db %q user %q password %q pool user %q", c.db, c.user, cfg.Host, cfg.Port, cfg.Database, cfg.User, cfg.Password, user)
		}
	}
	// Without a password from the auth file, the default URL's.
	if cfg, _ := tg.ConnConfig("other", "bob", func(string) string { return "" }); cfg.Password != "def" {
		t.Errorf("default server's password: %q", cfg.Password)
	}

	none, err := NewTargets("", map[string]string{"only": "postgres://db1/x"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = none.For("other")
	var nd *NoDatabaseError
	if !errors.As(err, &nd) || nd.SQLState() != "3D000" || !strings.Contains(err.Error(), `no such database: "other"`) {
		t.Errorf("unknown database: %v", err)
	}
	p := &Pools{Targets: none}
	if _, err := p.Route(t.Context(), Request{Database: "other", User: "bob"}); !errors.As(err, &nd) {
		t.Errorf("route to an unknown database: %v", err)
	}
	if pl, err := p.Route(t.Context(), Request{Database: "only", User: "bob"}); err != nil || pl.Database != "only" || pl.User != "bob" {
		t.Errorf("route: %v %v", pl, err)
	}
	forced := &Pools{Targets: tg}
	if pl, err := forced.Route(t.Context(), Request{Database: "forced", User: "bob"}); err != nil || pl.Database != "forced" || pl.User != "app" {
		t.Errorf("route to a forced user's database: %v %v", pl, err)
	}
	star, err := NewTargets("", map[string]string{"*": "postgres://db9/"})
	if err != nil {
		t.Fatal(err)
	}
	if tgt, err := star.For("anything"); err != nil || tgt.cfg.Host != "db9" {
		t.Errorf(`"*" as the default: %v %v`, tgt, err)
	}
}

// Bad entries are refused naming them.
func TestTargetsRefused(t *testing.T) {
	for _, c := range []struct {
		def   string
		named map[string]string
		msg   string
	}{
		{"", map[string]string{"a": "host=db1 dbname=x"}, `databases."a": want a postgres:// URL`},
		{"", map[string]string{"a": "postgres://db1:notaport/x"}, `databases."a": `},
		{"postgres://db0", map[string]string{"*": "postgres://db1"}, `databases."*" and server_url both name the default server`},
		{"postgres://db0:x", nil, "server url: "},
	} {
		if _, err := NewTargets(c.def, c.named); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q %v: %v, want %q", c.def, c.named, err, c.msg)
		}
	}
}

// Several hosts: each connection starts at the next host (the others
// after it, each with its TLS and plain attempts), or always at the first
// with load_balance_hosts=disable, which pgx never sees.
func TestTargetHosts(t *testing.T) {
	tg, err := NewTargets("postgres://a:1,b:2,c:3/?sslmode=prefer", map[string]string{
		"ordered": "postgres://a:1,b:2/x?sslmode=disable&load_balance_hosts=disable",
	})
	if err != nil {
		t.Fatal(err)
	}
	order := func(db string) string {
		cfg, err := tg.ConnConfig(db, "u", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := cfg.RuntimeParams["load_balance_hosts"]; ok {
			t.Errorf("load_balance_hosts reaches the server as a setting")
		}
		out := fmt.Sprintf("%s:%d", cfg.Host, cfg.Port)
		for _, f := range cfg.Fallbacks {
			out += fmt.Sprintf(" %s:%d", f.Host, f.Port)
			if f.TLSConfig == nil {
				out += "-plain"
			}
		}
		return out
	}
	for _, want := range []string{
		"a:1 a:1-plain b:2 b:2-plain c:3 c:3-plain",
		"b:2 b:2-plain c:3 c:3-plain a:1 a:1-plain",
		"c:3 c:3-plain a:1 a:1-plain b:2 b:2-plain",
		"a:1 a:1-plain b:2 b:2-plain c:3 c:3-plain",
	} {
		if got := order("any"); got != want {
			t.Errorf("round robin: %s, want %s", got, want)
		}
	}
	for range 3 {
		if got := order("ordered"); got != "a:1 b:2-plain" {
			t.Errorf("load_balance_hosts=disable: %s", got)
		}
	}
	if _, err := NewTargets("postgres://a/?load_balance_hosts=random", nil); err == nil || !strings.Contains(err.Error(), "load_balance_hosts=random: want round-robin or disable") {
		t.Errorf("a bad load_balance_hosts: %v", err)
	}
}

// qprouter's own URL parameters are taken out before pgx reads the URL
// (it would send them to the server as settings).
func TestTargetOwnParams(t *testing.T) {
	tg, err := NewTargets("", map[string]string{
		"a": "postgres://h/x?auth_user=au&auth_query=SELECT+1&auth_dbname=adb&connect_query=SELECT%201%2B1&load_balance_hosts=round-robin&timezone=UTC",
	})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := tg.For("a")
	if a.AuthUser != "au" || a.AuthQuery != "SELECT 1" || a.AuthDatabase != "adb" || a.ConnectQuery() != "SELECT 1+1" || !tg.AnyAuthUser() {
		t.Errorf("own parameters: %+v", a)
	}
	cfg, err := tg.ConnConfig("a", "u", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.RuntimeParams) != 1 || cfg.RuntimeParams["timezone"] != "UTC" || strings.Contains(a.Conn, "auth_") {
		t.Errorf("the server would get %v (conn %s)", cfg.RuntimeParams, a.Conn)
	}
}

// Update replaces the targets at a reload: an unchanged entry keeps its
// target (and its dial wrapper), a changed, added or removed one moves
// its database, and a bad one changes nothing.
func TestTargetsUpdate(t *testing.T) {
	tg, err := NewTargets("postgres://db0/", map[string]string{
		"same": "postgres://db1/same",
		"edit": "postgres://db2/edit",
		"gone": "postgres://db3/gone",
	})
	if err != nil {
		t.Fatal(err)
	}
	wrapped := 0
	tg.WrapDial(func(d pgconn.DialFunc) pgconn.DialFunc { wrapped++; return d })
	if wrapped != 4 {
		t.Fatalf("WrapDial wrapped %d targets, want 4", wrapped)
	}
	same, _ := tg.For("same")
	if _, err := tg.Update("", map[string]string{"same": "not a url"}); err == nil {
		t.Fatal("a bad entry was taken")
	}
	if got, _ := tg.For("gone"); got == nil || got.Database != "gone" {
		t.Fatal("a failed update changed the targets")
	}
	moved, err := tg.Update("postgres://db0/", map[string]string{
		"same":  "postgres://db1/same",
		"edit":  "postgres://db2:6000/edit",
		"added": "postgres://db4/added",
	})
	if err != nil {
		t.Fatal(err)
	}
	if wrapped != 6 {
		t.Errorf("the update wrapped %d new targets, want 2 (edit, added)", wrapped-4)
	}
	if now, _ := tg.For("same"); now != same {
		t.Error("an unchanged entry got a new target")
	}
	for db, want := range map[string]bool{"same": false, "edit": true, "added": true, "gone": true, "other": false} {
		if moved(db) != want {
			t.Errorf("moved(%q) = %v, want %v", db, !want, want)
		}
	}
	if got, _ := tg.For("gone"); got != tg.Default() {
		t.Error("a removed entry is not served by the default server")
	}
	if cfg, _ := tg.ConnConfig("edit", "bob", nil); cfg.Port != 6000 {
		t.Errorf("edited entry: port %d", cfg.Port)
	}
	if got := tg.Names(); strings.Join(got, ",") != "added,edit,same" {
		t.Errorf("names after the update: %v", got)
	}
	// Without the default server a removed name is refused.
	if _, err := tg.Update("", map[string]string{"same": "postgres://db1/same"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.For("edit"); err == nil {
		t.Error("a removed entry is still served without a default server")
	}
}
