// The audit log: one self-contained JSON line per tool call, written by one
// goroutine from a bounded queue so that a slow disk never blocks a call.

package mcpserver

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// AuditRecord is one line of the audit log (docs/formats.md, "audit").
type AuditRecord struct {
	Type      string    `json:"type"`    // "audit"
	Version   int       `json:"version"` // 1
	Time      time.Time `json:"time"`    // when the call started
	Session   string    `json:"session"` // MCP session id; "" when the transport has none
	Principal string    `json:"principal"`
	Tool      string    `json:"tool"`
	// SQLSHA256 is the hex SHA-256 of the whole statement; SQL is its
	// first maxAuditSQL bytes. Both are empty for the catalog tools.
	SQLSHA256 string `json:"sql_sha256,omitempty"`
	SQL       string `json:"sql,omitempty"`
	Verdict   string `json:"verdict"` // allow, refuse, error, rate_limited
	Rows      int    `json:"rows"`
	Bytes     int    `json:"bytes"` // size of the result text
	DurNS     int64  `json:"dur_ns"`
	Error     string `json:"error,omitempty"`
}

// Verdicts of AuditRecord.
const (
	VerdictAllow       = "allow"
	VerdictRefuse      = "refuse"
	VerdictError       = "error"
	VerdictRateLimited = "rate_limited"
)

// maxAuditSQL is how much of a statement a record repeats.
const maxAuditSQL = 4096

// auditBuffer is how many bytes of records are written at once at most
// (one record may be larger).
const auditBuffer = 32 << 10

// DefaultAuditQueue is the number of records NewAuditor buffers by default.
const DefaultAuditQueue = 1024

// Auditor writes audit records to a writer from a bounded queue. Log never
// blocks: when the queue is full the record is dropped and counted.
type Auditor struct {
	mu      sync.RWMutex // guards closed against Log racing Close
	closed  bool
	ch      chan AuditRecord
	done    chan struct{}
	dropped atomic.Uint64
	err     error // the first write error; read after done
}

// NewAuditor starts the writer goroutine; queue <= 0 means
// DefaultAuditQueue. Close it to flush.
func NewAuditor(w io.Writer, queue int) *Auditor {
	if queue <= 0 {
		queue = DefaultAuditQueue
	}
	a := &Auditor{ch: make(chan AuditRecord, queue), done: make(chan struct{})}
	go a.write(w)
	return a
}

func (a *Auditor) write(w io.Writer) {
	defer close(a.done)
	// Records are encoded into buf and written whole, so a shared stream
	// (stderr) never gets half a record between two of its other lines.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	flush := func() {
		if buf.Len() > 0 && a.err == nil {
			_, a.err = w.Write(buf.Bytes())
		}
		buf.Reset()
	}
	for r := range a.ch {
		if err := enc.Encode(r); err != nil && a.err == nil {
			a.err = err
		}
		// Write once the queue is empty or the buffer is large, so the
		// log is current without a write per record under load.
		if len(a.ch) == 0 || buf.Len() >= auditBuffer {
			flush()
		}
	}
	flush()
}

// Log queues r, or drops and counts it when the queue is full or the
// Auditor is closed.
func (a *Auditor) Log(r AuditRecord) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		a.dropped.Add(1)
		return
	}
	select {
	case a.ch <- r:
	default:
		a.dropped.Add(1)
	}
}

// Dropped is the number of records dropped so far.
func (a *Auditor) Dropped() uint64 { return a.dropped.Load() }

// Close writes the queued records, flushes, and returns the first write
// error. Calls after the first return the same error.
func (a *Auditor) Close() error {
	a.mu.Lock()
	if !a.closed {
		a.closed = true
		close(a.ch)
	}
	a.mu.Unlock()
	<-a.done
	return a.err
}
