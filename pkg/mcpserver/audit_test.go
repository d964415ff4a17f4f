package mcpserver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

// auditRecords closes a and decodes what it wrote to buf.
func auditRecords(t *testing.T, a *Auditor, buf *bytes.Buffer) []AuditRecord {
	t.Helper()
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	var recs []AuditRecord
	dec := json.NewDecoder(buf)
	dec.DisallowUnknownFields()
	for dec.More() {
		var r AuditRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("bad record: %v", err)
		}
		recs = append(recs, r)
	}
	return recs
}

func TestAuditRecords(t *testing.T) {
	var buf bytes.Buffer
	a := NewAuditor(&buf, 0)
	c := newClient(t, Config{Audit: a})
	before := time.Now()
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"run_select", map[string]any{"sql": "SELECT id FROM shop.customers ORDER BY id LIMIT 7"}},
		{"run_select", map[string]any{"sql": "DELETE FROM shop.orders"}},
		{"run_select", map[string]any{"sql": "SELECT * FROM nope"}},
		{"list_schemas", nil},
	}
	for _, cl := range calls {
		call(t, c, cl.tool, cl.args)
	}
	recs := auditRecords(t, a, &buf)
	if len(recs) != len(calls) {
		t.Fatalf("%d records, want %d", len(recs), len(calls))
	}
	for i, r := range recs {
		if r.Type != "audit" || r.Version != 1 || r.Principal != PrincipalStdio || r.Session == "" ||
			r.Tool != calls[i].tool || r.DurNS <= 0 || r.Time.Before(before.Add(-time.Second)) || r.Bytes <= 0 {
			t.Errorf("record %d: %+v", i, r)
		}
		if sql, _ := calls[i].args["sql"].(string); sql != "" {
			sum := sha256.Sum256([]byte(sql))
			if r.SQL != sql || r.SQLSHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("record %d: sql %q %s", i, r.SQL, r.SQLSHA256)
			}
		} else if r.SQL != "" || r.SQLSHA256 != "" {
			t.Errorf("record %d: catalog tool with sql %+v", i, r)
		}
	}
	if r := recs[0]; r.Verdict != VerdictAllow || r.Rows != 7 || r.Error != "" {
		t.Errorf("success: %+v", r)
	}
	if r := recs[1]; r.Verdict != VerdictRefuse || r.Rows != 0 || !strings.HasPrefix(r.Error, "refused at offset 0: ") {
		t.Errorf("refusal: %+v", r)
	}
	if r := recs[2]; r.Verdict != VerdictError || !strings.HasPrefix(r.Error, "ERROR 42P01: ") {
		t.Errorf("SQL error: %+v", r)
	}
	if r := recs[3]; r.Verdict != VerdictAllow || r.Rows < 2 {
		t.Errorf("list_schemas: %+v", r)
	}
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct{ release chan struct{} }

func (w blockingWriter) Write(p []byte) (int, error) { <-w.release; return len(p), nil }

func TestAuditorDropsWhenFull(t *testing.T) {
	w := blockingWriter{make(chan struct{})}
	a := NewAuditor(w, 2)
	start := time.Now()
	for range 100 {
		a.Log(AuditRecord{Type: "audit", Version: 1})
	}
	if time.Since(start) > time.Second {
		t.Errorf("Log blocked")
	}
	// The writer holds at most one record, the queue two.
	if d := a.Dropped(); d < 97 {
		t.Errorf("dropped %d, want at least 97", d)
	}
	close(w.release)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	a.Log(AuditRecord{}) // after Close: dropped, no panic
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestAuditorConcurrentAndError(t *testing.T) {
	var buf bytes.Buffer
	a := NewAuditor(&buf, 10000)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				a.Log(AuditRecord{Type: "audit", Version: 1, Tool: "x"})
			}
		})
	}
	wg.Wait()
	if recs := auditRecords(t, a, &buf); len(recs) != 800 || a.Dropped() != 0 {
		t.Errorf("%d records, %d dropped", len(recs), a.Dropped())
	}
	f := NewAuditor(failingWriter{}, 0)
	f.Log(AuditRecord{})
	if err := f.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close: %v", err)
	}
}

func TestTruncateUTF8(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{{"abc", 5, "abc"}, {"abc", 2, "ab"}, {"aé", 2, "a"}, {"éé", 3, "é"}, {"é", 0, ""}} {
		if got := truncateUTF8(c.s, c.n); got != c.want {
			t.Errorf("truncateUTF8(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}
