package bouncerini

import (
	"strings"
	"testing"
)

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
	for _, key := range []string{"nosuch", "server_tls_sslmode"} {
		if to, _, known, err := Setting(key, "require"); known || err != nil {
			t.Errorf("%s: %q %v %v, want not known", key, to, known, err)
		}
	}
	// PgBouncer keys whose value qprouter has no use for say why.
	for _, c := range [][3]string{
		{"pkt_buf", "4096", "pkt_buf = '4096' changes nothing: pkt_buf = 4096 ignored: buffers grow as needed"},
		{"server_reset_query", "", "server_reset_query = '' changes nothing: server_reset_query is empty: qprouter resets with DISCARD ALL"},
		{"max_prepared_statements", "0", "max_prepared_statements = '0' changes nothing: max_prepared_statements = 0 (off in PgBouncer)"},
	} {
		if _, _, known, err := Setting(c[0], c[1]); known || err == nil || !strings.HasPrefix(err.Error(), c[2]) {
			t.Errorf("%s = %s: %v %v, want an error starting %q", c[0], c[1], known, err, c[2])
		}
	}
	if to, _, known, err := Setting("default_pool_size", "many"); !known || to != "pool_size" || err == nil || err.Error() != "default_pool_size = many: want a whole number from 1" {
		t.Errorf("a bad value: %q %v %v", to, known, err)
	}
}
