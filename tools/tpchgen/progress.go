// Progress display on stderr while generating, only for terminals.

package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/qpkit/qpkit/pkg/tpch"
	"golang.org/x/term"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// progress redraws one status line a few times a second.
type progress struct {
	w     io.Writer
	start time.Time
	rows  atomic.Int64
	bytes atomic.Int64
	table atomic.Int64
	done  chan struct{}
	wg    sync.WaitGroup
}

func startProgress(w io.Writer) *progress {
	p := &progress{w: w, start: time.Now(), done: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				p.draw("")
			case <-p.done:
				p.draw("\n")
				return
			}
		}
	}()
	return p
}

// add is the generator's progress callback.
func (p *progress) add(t tpch.Table, rows, bytes int64) {
	p.table.Store(int64(t))
	p.rows.Add(rows)
	p.bytes.Add(bytes)
}

func (p *progress) draw(end string) {
	el := time.Since(p.start).Seconds()
	mb := float64(p.bytes.Load()) / 1e6
	rate := 0.0
	if el > 0 {
		rate = mb / el
	}
	fmt.Fprintf(p.w, "\r\033[K%-8s %12d rows %10.1f MB %8.1f MB/s %7.1fs%s",
		tpch.Table(p.table.Load()), p.rows.Load(), mb, rate, el, end)
}

func (p *progress) stop() {
	close(p.done)
	p.wg.Wait()
}
