package snapshot

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestAutoWorkers(t *testing.T) {
	cases := []struct {
		cpus  int
		local bool
		r, w  int
	}{
		{0, true, 2, 1}, {1, true, 2, 1}, {2, true, 4, 2}, {4, true, 8, 4}, {8, true, 16, 8}, {64, true, 16, 8},
		{2, false, 4, 2}, {16, false, 16, 8},
	}
	for _, c := range cases {
		r, w := AutoWorkers(c.cpus, c.local)
		if r != c.r || w != c.w {
			t.Errorf("AutoWorkers(%d, %v) = %d, %d; want %d, %d", c.cpus, c.local, r, w, c.r, c.w)
		}
	}
}

func TestSourceIsLocal(t *testing.T) {
	for host, want := range map[string]bool{"127.0.0.1": true, "::1": true, "localhost": true, "/var/run/postgresql": true,
		"db.example.com": false, "10.1.2.3": false} {
		if got := sourceIsLocal(&pgconn.Config{Host: host}); got != want {
			t.Errorf("sourceIsLocal(%q) = %v", host, got)
		}
	}
}
