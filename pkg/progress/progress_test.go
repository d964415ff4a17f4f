package progress

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a strings.Builder safe for the meter's goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func TestMeter(t *testing.T) {
	var out lockedBuffer
	var mu sync.Mutex
	n := 0
	m := Start(&out, time.Millisecond, func(elapsed time.Duration) string {
		mu.Lock()
		defer mu.Unlock()
		if elapsed < 0 {
			t.Errorf("elapsed %v", elapsed)
		}
		n++
		return "line"
	})
	time.Sleep(20 * time.Millisecond)
	m.Stop()
	m.Stop() // a second Stop does nothing
	got := out.b.String()
	draws := strings.Count(got, "\r\033[Kline")
	if draws < 2 || draws != n || !strings.HasSuffix(got, "\r\033[Kline\n") || strings.Count(got, "\n") != 1 {
		t.Errorf("%d draws, %d status calls, output %q", draws, n, got)
	}
	if got != strings.Repeat("\r\033[Kline", draws)+"\n" {
		t.Errorf("output %q has something besides status lines", got)
	}
}

// A meter stopped at once still draws its final line.
func TestStopAtOnce(t *testing.T) {
	var out lockedBuffer
	Start(&out, time.Hour, func(time.Duration) string { return "x" }).Stop()
	if got := out.b.String(); got != "\r\033[Kx\n" {
		t.Errorf("output %q", got)
	}
}
