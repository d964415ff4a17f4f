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
		{1, true, 1, 1}, {2, true, 1, 1}, {3, true, 1, 1}, {4, true, 1, 2}, {6, true, 2, 2}, {8, true, 2, 4}, {16, true, 5, 6},
		{1, false, 1, 1}, {2, false, 1, 1}, {4, false, 2, 2}, {8, false, 4, 4}, {9, false, 4, 5},
	}
	for _, c := range cases {
		r, w := AutoWorkers(c.cpus, c.local)
		if r != c.r || w != c.w {
			t.Errorf("AutoWorkers(%d, %v) = %d, %d; want %d, %d", c.cpus, c.local, r, w, c.r, c.w)
		}
	}
	// The rule: never more busy threads than CPUs once the minimum fits.
	for cpus := 1; cpus <= 128; cpus++ {
		for _, local := range []bool{false, true} {
			r, w := AutoWorkers(cpus, local)
			per := 1
			if local {
				per = 2
			}
			if r < 1 || w < 1 || (r*per+w > cpus && r+w > 2) {
				t.Errorf("AutoWorkers(%d, %v) = %d, %d oversubscribes", cpus, local, r, w)
			}
			if r*per+w < cpus-per { // and does not leave a reader's worth idle
				t.Errorf("AutoWorkers(%d, %v) = %d, %d leaves CPUs idle", cpus, local, r, w)
			}
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
