package proxyserver

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/qpkit/qpkit/pkg/proxy"
)

func ptr[T any](v T) *T { return &v }

// TestPoolFor checks the layering: database, then */user, then
// database/user, field by field over the top-level settings.
func TestPoolFor(t *testing.T) {
	c := valid()
	c.PoolMode = "transaction"
	c.Pools = map[string]PoolSettings{
		"app":         {PoolSize: ptr(5), MinIdle: ptr(1), AcquireTimeout: ptr(3 * time.Second), MaxDBConnections: ptr(8), ReservePoolSize: ptr(2)},
		"*/migrator":  {PoolMode: ptr("session"), PoolSize: ptr(1), MaxUserConnections: ptr(3), ReservePoolTimeout: ptr(time.Second)},
		"app/batch":   {PoolSize: ptr(9), ResetQuery: ptr("RESET ALL")},
		"other/batch": {MaxPoolClients: ptr(7)},
	}
	for _, tc := range []struct {
		db, user string
		mode     proxy.Mode
		want     func() poolValues
	}{
		{"postgres", "alice", proxy.Transaction, func() poolValues { return c.poolFor("\x00", "\x00") }},
		{"app", "alice", proxy.Transaction, func() poolValues {
			v := c.poolFor("\x00", "\x00")
			v.size, v.minIdle, v.acquireTimeout, v.maxDB, v.reserve = 5, 1, 3*time.Second, 8, 2
			return v
		}},
		{"app", "migrator", proxy.Session, func() poolValues {
			v := c.poolFor("\x00", "\x00")
			v.mode, v.size, v.minIdle, v.acquireTimeout, v.maxDB, v.reserve = "session", 1, 1, 3*time.Second, 8, 2
			v.maxUser, v.reserveTimeout = 3, time.Second
			return v
		}},
		{"postgres", "migrator", proxy.Session, func() poolValues {
			v := c.poolFor("\x00", "\x00")
			v.mode, v.size, v.maxUser, v.reserveTimeout = "session", 1, 3, time.Second
			return v
		}},
		{"app", "batch", proxy.Transaction, func() poolValues {
			v := c.poolFor("\x00", "\x00")
			v.size, v.minIdle, v.acquireTimeout, v.resetQuery, v.maxDB, v.reserve = 9, 1, 3*time.Second, "RESET ALL", 8, 2
			return v
		}},
		{"other", "batch", proxy.Transaction, func() poolValues {
			v := c.poolFor("\x00", "\x00")
			v.maxClients = 7
			return v
		}},
	} {
		if got, want := c.poolFor(tc.db, tc.user), tc.want(); got != want {
			t.Errorf("%s/%s: %+v, want %+v", tc.db, tc.user, got, want)
		}
		if m := c.modeFor(tc.db, tc.user); m != tc.mode {
			t.Errorf("%s/%s: mode %v, want %v", tc.db, tc.user, m, tc.mode)
		}
	}
	if base := c.poolFor("postgres", "alice"); base.size != 2 || base.mode != "transaction" || base.resetQuery != "" {
		t.Errorf("top-level settings: %+v", base)
	}
	if err := c.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
}

// TestCheckPools checks that bad per-pool settings are refused with the
// keys that make them, also when only a combination of keys is bad.
func TestCheckPools(t *testing.T) {
	for _, tc := range []struct {
		pools map[string]PoolSettings
		want  string
	}{
		{map[string]PoolSettings{"": {}}, `pools."": want "database", "database/user" or "*/user"`},
		{map[string]PoolSettings{"*": {}}, `pools."*": want`},
		{map[string]PoolSettings{"app/": {}}, `pools."app/": want`},
		{map[string]PoolSettings{"app/*": {}}, `pools."app/*": want`},
		{map[string]PoolSettings{"app": {PoolMode: ptr("batch")}}, `pools."app": pool mode "batch"`},
		{map[string]PoolSettings{"app": {PoolSize: ptr(0)}}, `pools."app": pool_size 0: want at least 1`},
		{map[string]PoolSettings{"*/bob": {MinIdle: ptr(-1)}}, `pools."*/bob": min_idle -1: want 0 or more`},
		{map[string]PoolSettings{"app/bob": {MaxPoolClients: ptr(-1)}}, `pools."app/bob": max_pool_clients -1`},
		{map[string]PoolSettings{"app": {IdleTimeout: ptr(time.Duration(0))}}, `pools."app": idle_timeout 0s: want more than 0`},
		{map[string]PoolSettings{"app": {ReservePoolTimeout: ptr(time.Duration(0))}}, `pools."app": reserve_pool_timeout 0s: want more than 0`},
		{map[string]PoolSettings{"app": {ReservePoolSize: ptr(-1)}}, `pools."app": reserve_pool_size -1: want 0 or more`},
		{map[string]PoolSettings{"app": {MaxDBConnections: ptr(-2)}}, `pools."app": max_db_connections -2: want 0 or more`},
		{map[string]PoolSettings{"app/bob": {MaxDBConnections: ptr(2)}}, `pools."app/bob": max_db_connections caps a whole database: set it in a [pools."app"] table`},
		{map[string]PoolSettings{"*/bob": {MaxDBConnections: ptr(2)}}, `pools."*/bob": max_db_connections caps a whole database`},
		{map[string]PoolSettings{"app": {MaxUserConnections: ptr(2)}}, `pools."app": max_user_connections caps all of a user's pools: set it in a [pools."*/user"] table`},
		{map[string]PoolSettings{"app/bob": {MaxUserConnections: ptr(2)}}, `set it in a [pools."*/bob"] table`},
		{map[string]PoolSettings{"app/bob": {MaxDBClients: ptr(2)}}, `pools."app/bob": max_db_client_connections caps a whole database: set it in a [pools."app"] table`},
		{map[string]PoolSettings{"app": {MaxUserClients: ptr(2)}}, `pools."app": max_user_client_connections caps all of a user's pools`},
		{map[string]PoolSettings{"*/bob": {MaxUserClients: ptr(-1)}}, `pools."*/bob": max_user_client_connections -1: want 0 or more`},
	} {
		c := valid()
		c.Pools = tc.pools
		err := c.Check()
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a *ConfigError with %q", tc.pools, err, tc.want)
		}
	}
}

// TestReadPools reads [pools] tables, durations as strings, and refuses
// a setting it does not know, naming it.
func TestReadPools(t *testing.T) {
	pools, err := ReadPools(strings.NewReader(`pool_size = 3
[pools.app]
pool_mode = "session"
acquire_timeout = "250ms"
[pools."*/bob"]
pool_size = 2
`))
	if err != nil {
		t.Fatal(err)
	}
	app, bob := pools["app"], pools["*/bob"]
	if len(pools) != 2 || app.PoolMode == nil || *app.PoolMode != "session" || app.AcquireTimeout == nil ||
		*app.AcquireTimeout != 250*time.Millisecond || app.PoolSize != nil || bob.PoolSize == nil || *bob.PoolSize != 2 {
		t.Errorf("pools: %+v", pools)
	}
	if _, err := ReadPools(strings.NewReader("[pools.app]\npool_sise = 3\n")); err == nil ||
		!strings.Contains(err.Error(), `unknown per-pool settings: pools."app": pool_sise`) {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := ReadPools(strings.NewReader("[pools.app]\npool_size = \"x\"\n")); err == nil || !strings.HasPrefix(err.Error(), "config file: ") {
		t.Errorf("bad value: %v", err)
	}
}

// TestModesChanged: a reload that changes any pool mode is told apart
// from one that changes only other settings.
func TestModesChanged(t *testing.T) {
	a := valid()
	a.Pools = map[string]PoolSettings{"app": {PoolMode: ptr("transaction"), PoolSize: ptr(3)}}
	b := valid()
	b.Pools = map[string]PoolSettings{"app": {PoolMode: ptr("transaction"), PoolSize: ptr(4)}, "x": {PoolSize: ptr(1)}}
	if modesChanged(a, b) {
		t.Error("sizes only: reported as a mode change")
	}
	b.Pools["x"] = PoolSettings{PoolMode: ptr("session")}
	if !modesChanged(a, b) {
		t.Error("a new key with a mode: not reported")
	}
	delete(b.Pools, "x")
	b.PoolMode = "transaction"
	if !modesChanged(a, b) {
		t.Error("top-level mode: not reported")
	}
}

// TestPoolsFromValues: text values in flag syntax, and a refusal naming
// the table and key.
func TestPoolsFromValues(t *testing.T) {
	pools, err := PoolsFromValues(map[string]map[string]string{"app": {"pool_size": "3", "idle_timeout": "1m", "pool_mode": "session"}})
	app := pools["app"]
	if err != nil || *app.PoolSize != 3 || *app.IdleTimeout != time.Minute || *app.PoolMode != "session" || app.MinIdle != nil {
		t.Errorf("%+v %v", pools, err)
	}
	for vals, want := range map[string]string{
		"pool_size=x":    `pools."app": pool_size = x: want a whole number`,
		"max_lifetime=3": `pools."app": max_lifetime = 3: time: missing unit`,
		"colour=blue":    `pools."app": colour = blue: not a per-pool setting`,
	} {
		k, v, _ := strings.Cut(vals, "=")
		if _, err := PoolsFromValues(map[string]map[string]string{"app": {k: v}}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", vals, err, want)
		}
	}
}

// min_idle above a pool's size is capped at it, as PgBouncer caps
// min_pool_size: at the top level, in a table, and where a client meets
// one table's min_idle and another's smaller pool_size.
func TestMinIdleCappedAtPoolSize(t *testing.T) {
	c := valid()
	c.MinIdle = 5
	c.Pools = map[string]PoolSettings{"app": {MinIdle: ptr(2)}, "*/bob": {PoolSize: ptr(1)}, "big": {PoolSize: ptr(9)}}
	if err := c.Check(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		db, user string
		want     int
	}{{"other", "carol", 2}, {"app", "carol", 2}, {"app", "bob", 1}, {"big", "carol", 5}} {
		if got := c.poolFor(tc.db, tc.user).config().MinIdle; got != tc.want {
			t.Errorf("%s/%s: min_idle %d, want %d", tc.db, tc.user, got, tc.want)
		}
	}
}

// poolSettingsFile is PoolSettings field for field: same names and keys,
// durations as fileDuration.
func TestPoolSettingsFileFields(t *testing.T) {
	a, b := reflect.TypeFor[PoolSettings](), reflect.TypeFor[poolSettingsFile]()
	if a.NumField() != b.NumField() {
		t.Fatalf("%d fields against %d", a.NumField(), b.NumField())
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		same := fa.Type == fb.Type || fa.Type == reflect.TypeFor[*time.Duration]() && fb.Type == reflect.TypeFor[*fileDuration]()
		if fa.Name != fb.Name || fa.Tag != fb.Tag || !same {
			t.Errorf("field %d: %s %s %q against %s %s %q", i, fa.Name, fa.Type, fa.Tag, fb.Name, fb.Type, fb.Tag)
		}
	}
}
