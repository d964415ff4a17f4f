package main

import (
	"io"
	"testing"
)

// PgBouncer caps min_pool_size at the pool size wherever it comes from
// (janitor.c launches connections only while cur < pool_min_pool_size &&
// cur < pool_pool_size; loader.c checks neither against the other). The
// cap added in review (bouncerini map.go) applies only when the ini sets
// default_pool_size itself, and proxyserver caps only the top-level
// min_idle: a pgbouncer.ini PgBouncer runs with is still refused.
func TestDiff6ReviewBouncerMinPoolSizeStillRefused(t *testing.T) {
	for name, ini := range map[string]string{
		// PgBouncer's default_pool_size is 20, qprouter's --pool-size too.
		"global min_pool_size above the default pool size": "[databases]\n* = host=127.0.0.1\n[pgbouncer]\nauth_type = trust\nmin_pool_size = 25\n",
		"entry min_pool_size above its pool_size":          "[databases]\n* = host=127.0.0.1\napp = host=127.0.0.1 pool_size=2 min_pool_size=5\n[pgbouncer]\nauth_type = trust\n",
		"entry min_pool_size above default_pool_size":      "[databases]\n* = host=127.0.0.1\napp = host=127.0.0.1 min_pool_size=8\n[pgbouncer]\nauth_type = trust\ndefault_pool_size = 5\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := rvWrite(t, "pgbouncer.ini", ini)
			if _, _, _, _, err := parse([]string{"--pgbouncer-ini", p}, io.Discard, io.Discard); err != nil {
				t.Errorf("a pgbouncer.ini PgBouncer accepts (min_pool_size capped at the pool size) is refused: %v", err)
			}
		})
	}
}
