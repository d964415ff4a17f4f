// Package progress redraws a one-line status on a terminal while work runs.
//
// A Meter only draws; what the line says is up to its status function, and
// whether to show one at all (usually: only when stderr is a terminal) is up
// to the caller.
package progress

import (
	"io"
	"sync"
	"time"
)

// Meter redraws a status line on a writer at a fixed interval. Its methods
// are safe to call from any goroutine.
type Meter struct {
	w      io.Writer
	start  time.Time
	status func(elapsed time.Duration) string
	done   chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
}

// Start draws status(time since Start) on w every interval until Stop, each
// time returning to the start of the line and clearing it ("\r\033[K")
// before writing. status is called from the meter's goroutine, so whatever
// it reads must be safe for concurrent use.
func Start(w io.Writer, interval time.Duration, status func(elapsed time.Duration) string) *Meter {
	m := &Meter{w: w, start: time.Now(), status: status, done: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				m.draw("")
			case <-m.done:
				m.draw("\n")
				return
			}
		}
	}()
	return m
}

// draw writes the line in one Write; errors are ignored, as a status line
// is not worth failing the work for.
func (m *Meter) draw(end string) {
	io.WriteString(m.w, "\r\033[K"+m.status(time.Since(m.start))+end)
}

// Stop draws the line a last time, ends it with a newline, and returns once
// the meter has stopped writing. Later calls do nothing.
func (m *Meter) Stop() {
	m.once.Do(func() {
		close(m.done)
		m.wg.Wait()
	})
}
