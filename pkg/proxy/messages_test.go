package proxy

import "testing"

func TestTagRows(t *testing.T) {
	for _, c := range []struct {
		tag  string
		cmd  string
		rows int64
	}{
		{"SELECT 5\x00", "SELECT", 5},
		{"INSERT 0 7\x00", "INSERT", 7},
		{"BEGIN\x00", "BEGIN", 0},
		{"ROLLBACK", "ROLLBACK", 0},
		{"COPY 9223372036854775807\x00", "COPY", 9223372036854775807},
		{"COPY 9223372036854775808\x00", "COPY", 0}, // out of range: no count
		{"UPDATE 12x\x00", "UPDATE", 0},
		{"FETCH \x00", "FETCH", 0},
		{"\x00", "", 0},
	} {
		cmd, rows := tagRows([]byte(c.tag))
		if string(cmd) != c.cmd || rows != c.rows {
			t.Errorf("tagRows(%q) = %q, %d; want %q, %d", c.tag, cmd, rows, c.cmd, c.rows)
		}
	}
}

// A session's answer queue is emptied at every ReadyForQuery; filling it
// again must reuse its array, or every statement allocates.
func TestQueueReusesItsArray(t *testing.T) {
	s := &session{}
	cycle := func() {
		for range 5 { // an extended-protocol statement: Parse, Bind, Describe, Execute, Sync
			s.push(entry{kind: kBind})
		}
		for len(s.queue) > 0 {
			s.pop()
		}
	}
	cycle()
	if n := testing.AllocsPerRun(100, cycle); n != 0 {
		t.Fatalf("push and pop allocate %v times per statement, want 0", n)
	}
	// A longer pipeline grows the array once, and the larger one stays.
	for range 40 {
		s.push(entry{kind: kBind})
	}
	for len(s.queue) > 0 {
		s.pop()
	}
	if n := testing.AllocsPerRun(100, func() {
		for range 40 {
			s.push(entry{kind: kBind})
		}
		for len(s.queue) > 0 {
			s.pop()
		}
	}); n != 0 {
		t.Fatalf("a 40-message pipeline allocates %v times after the first, want 0", n)
	}
	// What a popped entry held is let go.
	s.push(entry{kind: kQuery, sql: "SELECT 1"})
	s.pop()
	if q := s.qmem[:1]; q[0].sql != "" {
		t.Fatalf("a popped entry keeps its text %q", q[0].sql)
	}
}
