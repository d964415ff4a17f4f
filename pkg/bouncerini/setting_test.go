package bouncerini

import "testing"

// PgBouncer's names and units map to qprouter's; a key with no setting
// of its own is not known; a bad value is refused naming the key.
func TestSetting(t *testing.T) {
	for _, c := range []struct{ key, value, to, v string }{
		{"default_pool_size", "30", "pool_size", "30"},
		{"max_client_conn", "0x10", "max_clients", "16"},
		{"server_idle_timeout", "90", "idle_timeout", "1m30s"},
		{"query_wait_timeout", "0", "acquire_timeout", forever.String()},
		{"query_timeout", "2.5", "query_timeout", "2.5s"},
		{"server_reset_query", "DISCARD ALL; SELECT 1", "reset_query", "DISCARD ALL; SELECT 1"},
		{"pool_mode", "Transaction", "pool_mode", "transaction"},
		{"stats_users", "a, b", "stats_users", "a,b"},
	} {
		to, v, known, err := Setting(c.key, c.value)
		if to != c.to || v != c.v || !known || err != nil {
			t.Errorf("%s = %s: %q %q %v %v, want %q %q", c.key, c.value, to, v, known, err, c.to, c.v)
		}
	}
	for _, key := range []string{"nosuch", "server_tls_sslmode", "pkt_buf"} {
		if to, _, known, err := Setting(key, "require"); known || err != nil {
			t.Errorf("%s: %q %v %v, want not known", key, to, known, err)
		}
	}
	if to, _, known, err := Setting("default_pool_size", "many"); !known || to != "pool_size" || err == nil || err.Error() != "default_pool_size = many: want a whole number from 1" {
		t.Errorf("a bad value: %q %v %v", to, known, err)
	}
}
